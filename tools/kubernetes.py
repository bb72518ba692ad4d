"""The Kubernetes toolset: read-only tools over a ClusterSource.

The tools live in private modules by topic (`_k8s_workloads`, `_k8s_pod`, `_k8s_rollout`,
`_k8s_logs`, `_k8s_events`, `_k8s_cluster`, `_k8s_network`, `_k8s_capacity`, and the evidence tools
`_k8s_admission`, `_k8s_storage`, `_k8s_config`, `_k8s_endpoints`); this module is the
toolset's one public name. Every tool returns compact, summarised, redacted data, drops
objects of excluded namespaces from cross-namespace answers, and never reads a Secret.
"""

from __future__ import annotations

from tools._k8s_admission import k8s_pod_limit_ranges
from tools._k8s_capacity import k8s_list_autoscalers, k8s_list_quotas
from tools._k8s_cluster import k8s_get_object, k8s_list_nodes
from tools._k8s_config import k8s_mounted_config
from tools._k8s_endpoints import k8s_service_endpoints
from tools._k8s_events import k8s_events
from tools._k8s_logs import k8s_pod_logs
from tools._k8s_network import k8s_list_ingresses, k8s_list_network_policies, k8s_list_services
from tools._k8s_pod import k8s_describe_pod
from tools._k8s_rollout import k8s_rollout_history
from tools._k8s_storage import k8s_list_volume_claims
from tools._k8s_workloads import k8s_list_pods, k8s_list_workloads
from tools.registry import Tool

KUBERNETES_TOOLS: tuple[Tool, ...] = (
    k8s_list_workloads,
    k8s_list_pods,
    k8s_describe_pod,
    k8s_pod_logs,
    k8s_events,
    k8s_rollout_history,
    k8s_list_nodes,
    k8s_list_services,
    k8s_list_autoscalers,
    k8s_list_quotas,
    k8s_list_network_policies,
    k8s_list_ingresses,
    k8s_pod_limit_ranges,
    k8s_list_volume_claims,
    k8s_mounted_config,
    k8s_service_endpoints,
    k8s_get_object,
)

__all__ = ["KUBERNETES_TOOLS"]
