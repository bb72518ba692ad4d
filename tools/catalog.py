"""Which tools an investigation is offered (only those whose source is configured), which
of them a small model is offered first, what each one reads, and how to read a source
another way when it is down.

A model shown a tool it cannot use wastes steps on it and reads the failure as evidence,
so a toolset is offered only when its source exists. Health checks of live sources (is
the cluster reachable, is Elasticsearch up) come later and will narrow this further.

`TOOL_USE` is the one record of how useful each tool is, measured: over the bundled and
held-out scenarios (185), how many diagnoses quoted it as evidence and how many
investigations called it, with the full catalog (`python -m tests.bench tools` measures it
again). `RANKED_TOOLS` sorts it, evidence first; the first `CORE_SIZE` are the short
catalog of engines.short_catalog, and the rest are listed by `list_tools`.

`READS` and `FALLBACKS` are the one declaration of the third level of a tool's fallbacks
(tools.fallback): when a source stays down after the retries, the observation names the
tools that fail alike and those that read the same thing another way: the pods' own logs
when the log store is down, the API's view of restarts, last states and limits when the
metric store is, and for the cluster itself, to call again later while logs and metrics
still answer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from tools.fallback import Alternative, Fallback
from tools.kubernetes import (
    KUBERNETES_TOOLS,
    k8s_describe_pod,
    k8s_events,
    k8s_list_pods,
    k8s_pod_logs,
)
from tools.logs import LOG_TOOLS
from tools.metrics import METRIC_TOOLS, metrics_workload_signals
from tools.promql import PROMQL_TOOLS, live_metric_tools
from tools.registry import Tool
from tools.sources.base import Sources

ALL_TOOLS: tuple[Tool, ...] = KUBERNETES_TOOLS + LOG_TOOLS + METRIC_TOOLS

TOOL_USE: dict[str, tuple[int, int]] = {  # name: (diagnoses quoting it, investigations calling it)
    "k8s_describe_pod": (82, 185),
    "k8s_events": (74, 185),
    "metrics_workload_signals": (71, 183),
    "k8s_list_workloads": (67, 185),
    "logs_error_patterns": (60, 185),
    "k8s_rollout_history": (26, 181),
    "k8s_pod_logs": (19, 124),
    "k8s_list_nodes": (14, 185),
    "k8s_list_services": (10, 184),
    "k8s_list_network_policies": (9, 104),
    "k8s_list_autoscalers": (8, 184),
    "k8s_service_endpoints": (8, 79),  # the evidence tools (issue 16): detectors/evidence.py
    "logs_search": (7, 28),
    "k8s_list_pods": (5, 21),
    "k8s_pod_limit_ranges": (3, 45),
    "k8s_list_quotas": (2, 72),
    "k8s_list_volume_claims": (2, 3),
    "metrics_query": (1, 80),
    "k8s_list_ingresses": (0, 10),
    "k8s_mounted_config": (0, 10),
    "k8s_get_object": (0, 0),
    "logs_count_over_time": (0, 0),
    "metrics_promql": (0, 0),  # live Prometheus only: no scenario can call it
}


def rank(use: dict[str, tuple[int, int]]) -> tuple[str, ...]:
    """Most often quoted as evidence first, then most often called, then by name."""
    return tuple(sorted(use, key=lambda name: (-use[name][0], -use[name][1], name)))


RANKED_TOOLS = rank(TOOL_USE)

CACHE_TTL: Mapping[str, float] = {  # seconds an answer is shared across investigations
    # what changes by the second in an incident: pods come and go, events arrive
    "k8s_events": 10, "k8s_list_pods": 10, "k8s_describe_pod": 10, "k8s_pod_logs": 10,
    "k8s_get_object": 15, "k8s_list_workloads": 15, "k8s_list_autoscalers": 30,
    "k8s_list_nodes": 30,
    # recent windows of logs and metrics: a new minute of samples changes them
    "logs_error_patterns": 15, "logs_search": 15, "logs_count_over_time": 15,
    "metrics_workload_signals": 15, "metrics_query": 15, "metrics_promql": 15,
    # what changes only when someone deploys or edits the object
    "k8s_rollout_history": 300, "k8s_list_services": 120, "k8s_list_ingresses": 120,
    "k8s_list_network_policies": 120, "k8s_list_quotas": 60,
}
"""How long the shared tool cache (tools.cache) keeps each tool's answers; a tool absent
here is never shared. Kept short: an answer may be this stale for a second investigation."""
CORE_SIZE = 8  # all that quoted evidence in 12+ diagnoses: every tool of the analyzer's survey
CORE_TOOLS = RANKED_TOOLS[:CORE_SIZE]


def available_tools(sources: Sources) -> tuple[Tool, ...]:
    """The toolsets whose source is configured, Kubernetes first, then logs, then metrics."""
    offered: tuple[Tool, ...] = ()
    if sources.cluster is not None:
        offered += KUBERNETES_TOOLS
    if sources.logs is not None:
        offered += LOG_TOOLS
    if sources.metrics is not None:
        offered += METRIC_TOOLS + live_metric_tools(sources.metrics)  # PromQL: live only
    return offered


def _reads() -> dict[str, frozenset[str]]:
    reads = {t.name: frozenset({"cluster"}) for t in KUBERNETES_TOOLS}
    reads |= {t.name: frozenset({"logs"}) for t in LOG_TOOLS}
    reads |= {t.name: frozenset({"metrics"}) for t in METRIC_TOOLS + PROMQL_TOOLS}
    # It finds the workload's pods and their limits in the cluster before the metrics.
    reads[metrics_workload_signals.name] |= {"cluster"}
    return reads


READS: Mapping[str, frozenset[str]] = _reads()
"""The sources (`Sources` field names) each tool reads."""

_NAME = re.compile(r"[a-z0-9]([a-z0-9.-]*[a-z0-9])?")
_PREFIX_MATCH = re.compile(r"~(?P<name>[a-z0-9]([a-z0-9.-]*?[a-z0-9])?)-?\.[*+]")


def _literal(value: Any) -> str | None:
    """A name from an argument or a label matcher: `checkout` as is, `~checkout-.*` as the
    prefix it matches; any other regular expression names nothing."""
    if not isinstance(value, str):
        return None
    if _NAME.fullmatch(value):
        return value
    prefix = _PREFIX_MATCH.fullmatch(value)
    return prefix.group("name") if prefix else None


def _workload(arguments: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The namespace and workload (or pod) a log or metric call was about, if any."""
    given = arguments.get("labels")
    labels: Mapping[str, Any] = given if isinstance(given, dict) else {}
    namespace = _literal(arguments.get("namespace") or labels.get("namespace"))
    name = next((n for n in (_literal(arguments.get(k)) for k in ("workload", "pod", "service"))
                 if n), None) or _literal(labels.get("pod") or labels.get("deployment"))
    return namespace, name


def _pod(arguments: Mapping[str, Any]) -> dict[str, Any]:
    namespace, name = _workload(arguments)
    return {"namespace": namespace, "pod": name}


def _pods(arguments: Mapping[str, Any]) -> dict[str, Any]:
    return {"namespace": _workload(arguments)[0]}


def _events(arguments: Mapping[str, Any]) -> dict[str, Any]:
    namespace, name = _workload(arguments)
    return {"namespace": namespace, "object_name": name}


FALLBACKS: Mapping[str, Fallback] = {
    "logs": Fallback("logs", "the log store", (
        Alternative(k8s_pod_logs, "a container's own log (patterns, first error, last lines) "
                    "from the Kubernetes API; previous=true for the instance before a restart; "
                    "pod may be a workload name", _pod),
    )),
    "metrics": Fallback("metrics", "the metric store", (
        Alternative(k8s_describe_pod, "each container's restarts, last state (OOMKilled, exit "
                    "code) and requests and limits, from the Kubernetes API; pod may be a "
                    "workload name", _pod),
        Alternative(k8s_list_pods, "every pod's status, restarts and last termination reason",
                    _pods),
        Alternative(k8s_events, "OOM kills, failed probes, evictions and back-offs as the "
                    "cluster reported them", _events),
    )),
    "cluster": Fallback("cluster", "the Kubernetes API",
                        advice="Call them again in a minute or two"),
}
"""What to say when a source stays down, by the `Sources` field its errors name."""
