"""Start the test servers by hand, loaded with a scenario, until Ctrl-C.

    python -m tests.services                       # all four, scenario checkout-oom
    python -m tests.services --scenario orders-bad-release prometheus kube

Prints on stdout `export NAME=value` lines that tell a shell or a live tool where the
servers are. For developing live tools against real servers without pytest. Runs
until Ctrl-C or SIGTERM, or for --seconds if given.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from pathlib import Path

from . import elasticsearch as es
from . import kube_loader
from . import prometheus as prom
from ._process import Server, ServiceError, progress
from .elasticsearch import ElasticsearchServer
from .kube import KubeApiServer
from .postgres import PostgresServer
from .prometheus import PrometheusServer

NAMES = ("prometheus", "elasticsearch", "kube", "postgres")


def _start(name: str, scenario: Path) -> tuple[Server, dict[str, str]]:
    """Start one server loaded with `scenario`; return it and its environment variables."""
    if name == "prometheus":
        p = PrometheusServer()
        prom.load_scenario(p, scenario)
        p.start()
        return p, {"TRIAGE_PROMETHEUS_URL": p.url}
    if name == "elasticsearch":
        e = ElasticsearchServer()
        e.start()
        es.load_scenario(e, scenario)
        return e, {"TRIAGE_ELASTICSEARCH_URL": e.url, "TRIAGE_LOG_INDEX": "logs-*"}
    if name == "kube":
        k = KubeApiServer(service_cidr=kube_loader.service_cidr_for(scenario))
        k.start()
        kube_loader.load_scenario(k, scenario)
        return k, {
            "KUBECONFIG": str(k.kubeconfig),
            "TRIAGE_VIEWER_KUBECONFIG": str(k.viewer_kubeconfig),
        }
    pg = PostgresServer()
    pg.start()
    return pg, {"TRIAGE_DATABASE_URL": pg.dsn}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.services", description=__doc__)
    parser.add_argument("--scenario", default="checkout-oom", help="bundled id or directory")
    parser.add_argument("--seconds", type=float, default=None, help="stop after this long")
    parser.add_argument("servers", nargs="*", help=f"any of {', '.join(NAMES)} (default: all)")
    args = parser.parse_args(argv)
    unknown = set(args.servers) - set(NAMES)
    if unknown:
        parser.error(f"unknown server(s): {', '.join(sorted(unknown))}")
    scenario = Path(args.scenario)
    if not scenario.is_dir():
        scenario = Path(__file__).resolve().parents[2] / "tools" / "scenarios" / args.scenario
    started: list[Server] = []
    try:
        for name in args.servers or NAMES:
            server, env = _start(name, scenario)
            started.append(server)
            for key, value in env.items():
                print(f"export {key}={value}", flush=True)
        progress("all up; Ctrl-C stops them")
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        with contextlib.suppress(KeyboardInterrupt):
            stop.wait(args.seconds)
    except ServiceError as exc:
        progress(f"failed: {exc}")
        return 1
    finally:
        for server in reversed(started):
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
