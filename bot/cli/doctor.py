"""`triage doctor`: check every configured backend and say how to fix what is wrong.

One line per check: reachable, authorised, holding the data the tools read (log
documents with a timestamp and the fields the tools filter on; the cAdvisor and
kube-state-metrics series the workload signals need; the RBAC verbs the cluster tools
use, asked through SelfSubjectAccessReview). Each failure names its fix. Exit 1 when any
check failed, so a deployment's readiness script or CI can run it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from bot.cli.investigate import add_live_options
from engines.errors import BackendError
from tools.redact import redact

State = Literal["ok", "warn", "fail", "skip"]
_MARK = {"ok": "[ok]  ", "warn": "[warn]", "fail": "[FAIL]", "skip": "[skip]"}
CHECK_SECONDS = 20.0
REQUIRED_METRICS = ("container_memory_working_set_bytes",
                    "kube_pod_container_status_restarts_total")
USEFUL_METRICS = ("container_cpu_usage_seconds_total", "container_cpu_cfs_throttled_periods_total",
                  "kube_pod_container_resource_limits")
_KEY_ACCESS = (("list", "pods"), ("list", "events"), ("list", "nodes"))


@dataclass(frozen=True, slots=True)
class Check:
    backend: str
    state: State
    message: str
    fix: str = ""

    def line(self) -> str:
        text = f"{_MARK[self.state]} {self.backend}: {self.message}"
        return redact(text + (f" — fix: {self.fix}" if self.fix else ""))


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="check the live backends and say how to fix what is wrong",
        description="Check each configured backend (Kubernetes, Elasticsearch, Prometheus): "
        "reachable, authorised, holding the expected data. Exit 1 if any check fails.",
    )
    add_live_options(parser)
    parser.set_defaults(handler=run)


async def run(args: argparse.Namespace) -> int:
    from bot import config as live_config

    config = live_config.load_config(args.config, context=args.context)
    for line in live_config.describe(config):
        print(f"       {line}")
    checks = await diagnose(config)
    for check in checks:
        print(check.line())
    failed = sum(c.state == "fail" for c in checks)
    print(f"{failed} check(s) failed" if failed else "all checks passed",
          file=sys.stderr if failed else sys.stdout)
    return 1 if failed else 0


async def diagnose(config: Any) -> list[Check]:
    """Every check of every backend, backends concurrently, in a stable order."""
    groups = await asyncio.gather(_kubernetes(config), _elasticsearch(config),
                                  _prometheus(config))
    checks = [c for group in groups for c in group]
    if all(c.state == "skip" for c in checks):
        checks.append(Check("config", "fail", "no backend is configured",
                            "set KUBECONFIG, ELASTICSEARCH_URL and PROMETHEUS_URL, or write "
                            "~/.config/triage/config.yaml (see bot/README-config.md)"))
    return checks


# How to fix a failure, by backend and by what the error says (first match wins).
_FIXES: dict[str, tuple[tuple[str, str], ...]] = {
    "kubernetes": (
        ("kubeconfig", "point KUBECONFIG at a readable kubeconfig; list contexts with "
                       "`kubectl config get-contexts` and pick one with --context"),
        ("cannot reach", "check the kubeconfig cluster's server address and that the API "
                         "server is up (and reachable from here)"),
        ("TLS", "set the cluster's certificate-authority in the kubeconfig"),
        ("unauthorized", "refresh the credentials (`kubectl get pods` must work)"),
        ("forbidden", "apply the Helm chart's ClusterRole (helm/triage, rbac.yaml)"),
    ),
    "elasticsearch": (
        ("cannot reach", "check ELASTICSEARCH_URL and that Elasticsearch is up"),
        ("timed out", "check ELASTICSEARCH_URL and the cluster's health"),
        ("TLS", "set ELASTICSEARCH_CA_CERTS to the CA bundle that signed the server"),
        ("credentials", "set ELASTICSEARCH_API_KEY or ELASTICSEARCH_USERNAME/PASSWORD"),
        ("forbidden", "grant the user 'read' and 'view_index_metadata' on the index pattern"),
        ("not found", "check ELASTICSEARCH_URL's path and TRIAGE_LOG_INDEX"),
        ("no document", "set TRIAGE_LOG_INDEX to the pattern the log shipper writes"),
    ),
    "prometheus": (
        ("cannot reach", "check PROMETHEUS_URL and that Prometheus is up"),
        ("timed out", "check PROMETHEUS_URL and Prometheus' load"),
        ("credentials", "set PROMETHEUS_TOKEN or PROMETHEUS_USERNAME/PASSWORD"),
        ("forbidden", "give the credentials read access to /api/v1"),
        ("not found", "PROMETHEUS_URL must be the server's root, e.g. http://prometheus:9090"),
    ),
}


def fix_for(backend: str, message: str) -> str:
    """The remedy for a failed check, chosen by what its message says."""
    for words, fix in _FIXES.get(backend, ()):
        if words.lower() in message.lower():
            return fix
    return "see the message; `triage doctor` again after the change"


async def _guard(backend: str, body: Callable[[], Awaitable[list[Check]]]) -> list[Check]:
    """Run one backend's checks; a BackendError or a timeout ends them with a red line."""
    try:
        async with asyncio.timeout(CHECK_SECONDS):
            return await body()
    except BackendError as exc:
        return [Check(backend, "fail", str(exc), fix_for(backend, str(exc)))]
    except TimeoutError:
        message = f"no answer within {CHECK_SECONDS:g}s"
        return [Check(backend, "fail", message, fix_for(backend, "cannot reach"))]


async def _kubernetes(config: Any) -> list[Check]:
    from bot.config import build_cluster, close_source, kube_mode
    from tools.sources.kube_api import CALL_VERBS, RESOURCES, SUBRESOURCES

    if kube_mode(config) is None:
        return [Check("kubernetes", "skip", "not configured (no kubeconfig, not in a cluster)")]
    async def body() -> list[Check]:
        cluster = await build_cluster(config)
        assert cluster is not None
        try:
            version = await cluster.version()
            user = await cluster.whoami()
            who = user or "the configured identity"
            checks = [Check("kubernetes", "ok", f"reachable at {cluster.server} "
                            f"({version.get('gitVersion', '?')}), authenticated as {who}")]
            verbs = sorted(set(CALL_VERBS.values()))  # what the source's calls need
            wanted = [(verb, r.plural, r.group) for r in RESOURCES for verb in verbs]
            wanted += [(v, s.resource, s.parent.group) for s in SUBRESOURCES for v in s.verbs]
            answers = await asyncio.gather(*(cluster.can_i(v, r, g) for v, r, g in wanted))
            key = [f"{v} {r}" for v, r in _KEY_ACCESS]
            missing = sorted((f"{a.verb} {a.resource}" for a in answers if not a.allowed),
                             key=lambda m: (m not in key, key.index(m) if m in key else 0))
            if missing:
                shown = ", ".join(missing[:6])
                more = f" and {len(missing) - 6} more" if len(missing) > 6 else ""
                checks.append(Check(
                    "kubernetes", "fail", f"{who} may not {shown}{more}",
                    fix_for("kubernetes", "forbidden") + " or grant these verbs to it"))
            else:
                checks.append(Check("kubernetes", "ok", f"RBAC allows {', '.join(key)} and "
                                    f"every other read the tools make ({len(answers)} checked)"))
            return checks
        finally:
            await close_source(cluster)

    return await _guard("kubernetes", body)


async def _elasticsearch(config: Any) -> list[Check]:
    from bot.config import build_logs

    logs = build_logs(config)
    if logs is None:
        return [Check("elasticsearch", "skip", "not configured (ELASTICSEARCH_URL unset)")]
    async def body() -> list[Check]:
        try:
            notes = await logs.check()
            checks = [Check("elasticsearch", "ok", note) for note in notes]
            f = logs.fields
            caps = await logs.field_names_present([f.level, f.service, f.namespace, f.pod])
            absent = [name for name, present in caps.items() if not present]
            if absent:
                checks.append(Check(
                    "elasticsearch", "fail", f"{logs.index} has no field {', '.join(absent)}",
                    "map the shipper's field names under elasticsearch.fields in the config"))
            else:
                checks.append(Check("elasticsearch", "ok",
                                    f"fields {', '.join(caps)} are mapped and filterable"))
            return checks
        finally:
            await logs.close()

    return await _guard("elasticsearch", body)


async def _prometheus(config: Any) -> list[Check]:
    from bot.config import build_metrics

    metrics = build_metrics(config)
    if metrics is None:
        return [Check("prometheus", "skip", "not configured (PROMETHEUS_URL unset)")]
    async def body() -> list[Check]:
        try:
            notes = await metrics.check()
            names = set(metrics.metric_names())
            checks = [Check("prometheus", "ok", notes[0])]
            missing = [m for m in REQUIRED_METRICS if m not in names]
            if missing:
                checks.append(Check(
                    "prometheus", "fail", f"missing metrics: {', '.join(missing)}",
                    "scrape the kubelet's cAdvisor endpoint and kube-state-metrics"))
            else:
                checks.append(Check("prometheus", "ok",
                                    f"has {', '.join(REQUIRED_METRICS)}"))
            if useful := [m for m in USEFUL_METRICS if m not in names]:
                checks.append(Check("prometheus", "warn", f"no {', '.join(useful)}: the CPU "
                                    "signals will be missing"))
            return checks
        finally:
            await metrics.close()

    return await _guard("prometheus", body)
