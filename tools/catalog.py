"""Which tools an investigation is offered: only those whose source is configured; and
which of them a small model is offered first.

A model shown a tool it cannot use wastes steps on it and reads the failure as evidence,
so a toolset is offered only when its source exists. Health checks of live sources (is
the cluster reachable, is Elasticsearch up) come later and will narrow this further.

`TOOL_USE` is the one record of how useful each tool is, measured: over the bundled and
held-out scenarios (153), how many diagnoses quoted it as evidence and how many
investigations called it, with the full catalog (`python -m tests.bench tools` measures it
again). `RANKED_TOOLS` sorts it, evidence first; the first `CORE_SIZE` are the short
catalog of engines.short_catalog, and the rest are listed by `list_tools`.
"""

from __future__ import annotations

from tools.kubernetes import KUBERNETES_TOOLS
from tools.logs import LOG_TOOLS
from tools.metrics import METRIC_TOOLS
from tools.promql import live_metric_tools
from tools.registry import Tool
from tools.sources.base import Sources

ALL_TOOLS: tuple[Tool, ...] = KUBERNETES_TOOLS + LOG_TOOLS + METRIC_TOOLS

TOOL_USE: dict[str, tuple[int, int]] = {  # name: (diagnoses quoting it, investigations calling it)
    "k8s_describe_pod": (67, 153),
    "k8s_events": (62, 153),
    "metrics_workload_signals": (62, 152),
    "k8s_list_workloads": (54, 153),
    "logs_error_patterns": (49, 153),
    "k8s_rollout_history": (22, 151),
    "k8s_pod_logs": (17, 97),
    "k8s_list_nodes": (12, 153),
    "k8s_list_autoscalers": (8, 152),
    "k8s_list_network_policies": (8, 83),
    "k8s_list_services": (7, 152),
    "logs_search": (6, 21),
    "k8s_list_pods": (5, 19),
    "metrics_query": (1, 69),
    "k8s_list_quotas": (1, 61),
    "k8s_list_ingresses": (0, 1),
    "k8s_get_object": (0, 0),
    "logs_count_over_time": (0, 0),
    "metrics_promql": (0, 0),  # live Prometheus only: no scenario can call it
}


def rank(use: dict[str, tuple[int, int]]) -> tuple[str, ...]:
    """Most often quoted as evidence first, then most often called, then by name."""
    return tuple(sorted(use, key=lambda name: (-use[name][0], -use[name][1], name)))


RANKED_TOOLS = rank(TOOL_USE)
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
