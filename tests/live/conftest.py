"""Session fixtures: the real servers, each started once per test run and loaded once.

Every server starts on first use and stops when the run ends. When a server's
binaries are missing the tests that need it are skipped with one line saying how to
get them, unless CI=true: in CI a missing or failing server fails the run. A server
that is installed but fails to start always fails: that is a bug, not a missing tool.

The scenario loaded is TRIAGE_LIVE_SCENARIO (a bundled scenario id or a directory),
by default checkout-oom. Start-up time and resident memory of each server are
printed at the end of the run.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from tests._ci import in_ci, skip_or_fail
from tests.services import elasticsearch as es
from tests.services import kube_loader
from tests.services import prometheus as prom
from tests.services._process import NotProvisionedError, Server
from tests.services.elasticsearch import ElasticsearchServer
from tests.services.kube import KubeApiServer
from tests.services.postgres import PostgresServer
from tests.services.prometheus import PrometheusServer

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "tools" / "scenarios"
DEFAULT_SCENARIO = "checkout-oom"

S = TypeVar("S", bound=Server)

# name -> (startup seconds, load seconds, RSS bytes at the end), for the summary.
_FIGURES: dict[str, tuple[float, float, int]] = {}


SERVERS: dict[str, tuple[str, type[Server]]] = {
    "prometheus_server": ("prometheus", PrometheusServer),
    "elasticsearch_server": ("elasticsearch", ElasticsearchServer),
    "kube_server": ("kube", KubeApiServer),
    "postgres_server": ("postgres", PostgresServer),
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Skip, before any setup, the tests whose server is not installed (outside CI).

    A skip mark (rather than pytest.skip() in the fixture) makes pytest fold the
    skips of one reason into one summary line per file.
    """
    if in_ci():
        return  # the fixtures fail instead
    missing: dict[str, str | None] = {}
    for fixture, (name, cls) in SERVERS.items():
        try:
            cls.check_installed()
            missing[fixture] = None
        except NotProvisionedError as exc:
            missing[fixture] = f"{name}: {exc}"
    for item in items:
        for fixture in getattr(item, "fixturenames", ()):
            reason = missing.get(fixture)
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))
                break


def _scenario_dir() -> Path:
    chosen = os.environ.get("TRIAGE_LIVE_SCENARIO", DEFAULT_SCENARIO)
    path = Path(chosen) if "/" in chosen else SCENARIOS / chosen
    if not (path / "scenario.yaml").is_file():
        pytest.fail(f"TRIAGE_LIVE_SCENARIO={chosen}: no scenario.yaml in {path}")
    return path


@pytest.fixture(scope="session")
def live_scenario() -> Path:
    """The scenario directory whose data the servers hold."""
    return _scenario_dir()


def _serve(
    name: str, make: Callable[[], S], load: Callable[[S], object] | None = None
) -> Iterator[S]:
    """Create, (pre-)load, start and finally stop one server; see the module docstring."""
    try:
        server = make()
    except NotProvisionedError as exc:
        skip_or_fail(f"{name}: {exc}")
    server.start()  # raises ServiceError naming the log: fails the tests that need it
    startup = server.startup_seconds
    try:
        loaded = time.monotonic()
        if load is not None:
            load(server)
        load_seconds = time.monotonic() - loaded if load is not None else 0.0
        yield server
        _FIGURES[name] = (startup, load_seconds, server.rss_bytes())
    finally:
        server.stop()


@pytest.fixture(scope="session")
def prometheus_server(live_scenario: Path) -> Iterator[PrometheusServer]:
    """Prometheus holding the scenario's metrics.om (backfilled before it starts)."""

    def make() -> PrometheusServer:
        server = PrometheusServer()
        prom.load_scenario(server, live_scenario)
        return server

    yield from _serve("prometheus", make)


@pytest.fixture(scope="session")
def elasticsearch_server(live_scenario: Path) -> Iterator[ElasticsearchServer]:
    """Elasticsearch holding the scenario's logs.ndjson in logs-<scenario id>."""
    yield from _serve(
        "elasticsearch", ElasticsearchServer, lambda s: es.load_scenario(s, live_scenario)
    )


@pytest.fixture(scope="session")
def kube_server(live_scenario: Path) -> Iterator[KubeApiServer]:
    """etcd + kube-apiserver holding the scenario's cluster.yaml, pod logs via the stand-in."""

    def make() -> KubeApiServer:
        return KubeApiServer(service_cidr=kube_loader.service_cidr_for(live_scenario))

    yield from _serve("kube", make, lambda s: kube_loader.load_scenario(s, live_scenario))


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """An empty PostgreSQL with database and superuser `triage` (see .dsn)."""
    yield from _serve("postgres", PostgresServer)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line per server started: start-up time, load time and memory at the end."""
    if not _FIGURES:
        return
    terminalreporter.section("live servers")
    for name, (startup, load, rss) in sorted(_FIGURES.items()):
        mib = rss / 2**20
        terminalreporter.write_line(
            f"{name:<14} started in {startup:5.1f}s, loaded in {load:5.1f}s, RSS {mib:6.0f} MiB"
        )
