"""Which tools an investigation is offered: only those whose source is configured.

A model shown a tool it cannot use wastes steps on it and reads the failure as evidence,
so a toolset is offered only when its source exists. Health checks of live sources (is
the cluster reachable, is Elasticsearch up) come later and will narrow this further.
"""

from __future__ import annotations

from tools.kubernetes import KUBERNETES_TOOLS
from tools.logs import LOG_TOOLS
from tools.metrics import METRIC_TOOLS
from tools.promql import live_metric_tools
from tools.registry import Tool
from tools.sources.base import Sources

ALL_TOOLS: tuple[Tool, ...] = KUBERNETES_TOOLS + LOG_TOOLS + METRIC_TOOLS


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
