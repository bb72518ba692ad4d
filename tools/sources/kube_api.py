"""The Kubernetes API behind the cluster tools: every kind they may read, in one place.

Each kind maps to its API group, version, plural resource and scope; the one subresource
the tools read is `pods/log`. Two things are derived from this declaration and nothing else:

- the endpoints the live cluster source calls (`resource_for(kind).path(...)`);
- the RBAC a deployment needs (`required_rules()`), which the Helm chart's ClusterRole must
  equal, no more and no less (`tests/helm/test_rbac.py` checks both ways, and checks that
  every call the tools make over the bundled scenarios is covered).

The kinds mirror `KINDS` and `CLUSTER_SCOPED` of `tools.sources.sandbox` (scenario-format.md's
list); a test keeps the two in step. Secrets are not declared, so they are never granted and
never requested: `resource_for("Secret")` refuses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from engines.errors import BackendError

READ_VERBS: tuple[str, ...] = ("get", "list", "watch")
LOG_VERBS: tuple[str, ...] = ("get",)

# Which RBAC verb each ClusterSource method needs.
CALL_VERBS: Mapping[str, str] = {"list_objects": "list", "get_object": "get", "pod_logs": "get"}

Scope = Literal["all", "namespaced", "cluster"]
Permission = tuple[str, str, str]  # (API group, resource or resource/subresource, verb)


@dataclass(frozen=True, slots=True)
class KubeResource:
    """One readable kind: where it lives in the API and whether it belongs to a namespace."""

    kind: str
    group: str  # "" is the core group
    version: str
    plural: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        """As objects write it: `v1`, `apps/v1`."""
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        """The REST path: a collection (in a namespace or across all) or one object."""
        if name and self.namespaced and not namespace:
            raise BackendError(f"a {self.kind} is named within a namespace: give the namespace")
        path = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            path += f"/namespaces/{namespace}"
        path += f"/{self.plural}"
        return f"{path}/{name}" if name else path


@dataclass(frozen=True, slots=True)
class KubeSubresource:
    """A subresource read through its parent, such as a pod's log."""

    parent: KubeResource
    name: str
    verbs: tuple[str, ...]

    @property
    def resource(self) -> str:
        """The RBAC resource name: `pods/log`."""
        return f"{self.parent.plural}/{self.name}"

    def path(self, namespace: str, name: str) -> str:
        return f"{self.parent.path(namespace, name)}/{self.name}"


def _core(kind: str, plural: str, *, namespaced: bool = True) -> KubeResource:
    return KubeResource(kind, "", "v1", plural, namespaced)


RESOURCES: tuple[KubeResource, ...] = (
    _core("Namespace", "namespaces", namespaced=False),
    _core("Node", "nodes", namespaced=False),
    _core("Pod", "pods"),
    KubeResource("Deployment", "apps", "v1", "deployments", True),
    KubeResource("ReplicaSet", "apps", "v1", "replicasets", True),
    KubeResource("StatefulSet", "apps", "v1", "statefulsets", True),
    KubeResource("DaemonSet", "apps", "v1", "daemonsets", True),
    KubeResource("Job", "batch", "v1", "jobs", True),
    KubeResource("CronJob", "batch", "v1", "cronjobs", True),
    _core("Service", "services"),
    _core("Endpoints", "endpoints"),
    KubeResource("Ingress", "networking.k8s.io", "v1", "ingresses", True),
    _core("ConfigMap", "configmaps"),
    _core("PersistentVolumeClaim", "persistentvolumeclaims"),
    KubeResource("StorageClass", "storage.k8s.io", "v1", "storageclasses", False),
    KubeResource("HorizontalPodAutoscaler", "autoscaling", "v2", "horizontalpodautoscalers", True),
    _core("ResourceQuota", "resourcequotas"),
    _core("LimitRange", "limitranges"),
    KubeResource("NetworkPolicy", "networking.k8s.io", "v1", "networkpolicies", True),
    _core("Event", "events"),
)
BY_KIND: Mapping[str, KubeResource] = {r.kind: r for r in RESOURCES}
POD_LOG = KubeSubresource(BY_KIND["Pod"], "log", LOG_VERBS)
SUBRESOURCES: tuple[KubeSubresource, ...] = (POD_LOG,)

_LOOKUP: Mapping[str, KubeResource] = (
    {r.kind.lower(): r for r in RESOURCES} | {r.plural: r for r in RESOURCES}
)


def resource_for(kind: str) -> KubeResource:
    """`Pod`, `pod` or `pods` to its declaration; Secrets and unknown kinds are refused."""
    key = kind.strip().lower()
    if key in ("secret", "secrets"):
        raise BackendError("Secrets are never read: Triage has no access to them by design")
    try:
        return _LOOKUP[key]
    except KeyError:
        known = ", ".join(r.kind for r in RESOURCES)
        raise BackendError(f"unknown kind {kind!r}; known kinds: {known}") from None


def permission_for(call: str, kind: str) -> Permission:
    """The (group, resource, verb) a ClusterSource call needs: `pod_logs` reads `pods/log`."""
    verb = CALL_VERBS[call]
    if call == "pod_logs":
        return (POD_LOG.parent.group, POD_LOG.resource, verb)
    found = resource_for(kind)
    return (found.group, found.plural, verb)


def required_permissions(scope: Scope = "all") -> frozenset[Permission]:
    """Every (group, resource, verb) the tools need, optionally only one scope's share."""
    wanted: set[Permission] = set()
    for res in RESOURCES:
        if _in_scope(res, scope):
            wanted.update((res.group, res.plural, verb) for verb in READ_VERBS)
    for sub in SUBRESOURCES:
        if _in_scope(sub.parent, scope):
            wanted.update((sub.parent.group, sub.resource, verb) for verb in sub.verbs)
    return frozenset(wanted)


def required_rules(scope: Scope = "all") -> list[dict[str, list[str]]]:
    """RBAC policy rules granting exactly `required_permissions(scope)`.

    One rule per API group and verb set, groups and resources sorted, as a ClusterRole
    (scope "all"), a namespaced Role ("namespaced") or the cluster-scoped remainder
    ("cluster") would list them.
    """
    grouped: dict[tuple[str, tuple[str, ...]], set[str]] = {}
    for group, resource, _verb in required_permissions(scope):
        grouped.setdefault((group, _verbs_of(resource)), set()).add(resource)
    return [
        {"apiGroups": [group], "resources": sorted(resources), "verbs": list(verbs)}
        for (group, verbs), resources in sorted(grouped.items())
    ]


def permissions_of(rules: Iterable[Mapping[str, Any]]) -> frozenset[Permission]:
    """Flatten RBAC rules (as a rendered Role lists them) to (group, resource, verb) triples.

    Wildcards stay as `*`, so a comparison with `required_permissions()` exposes them.
    """
    found: set[Permission] = set()
    for rule in rules:
        for group in rule.get("apiGroups") or []:
            for resource in rule.get("resources") or []:
                for verb in rule.get("verbs") or []:
                    found.add((str(group), str(resource), str(verb)))
    return frozenset(found)


def _in_scope(resource: KubeResource, scope: Scope) -> bool:
    return scope == "all" or resource.namespaced == (scope == "namespaced")


def _verbs_of(resource: str) -> tuple[str, ...]:
    for sub in SUBRESOURCES:
        if sub.resource == resource:
            return sub.verbs
    return READ_VERBS
