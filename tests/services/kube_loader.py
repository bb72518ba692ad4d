"""Write a scenario's `cluster.yaml` into a real API server, as the incident left it.

Objects are created through the API in an order that satisfies references
(Namespaces, Nodes, then workloads, their ReplicaSets and Jobs, Pods, the rest, and
Events last), then their recorded `status` is written through the status subresource,
since a create ignores most of it. What the API server owns is dropped or remapped:
uid, resourceVersion, creationTimestamp and managedFields are set anew (a real API
server has no way to backdate creationTimestamp); ownerReferences and involvedObject
uids are rewritten to the new uids of the objects they name; observedGeneration is
shifted so that "observed == generation" still holds where it held in the recording.
An object recorded while terminating is deleted again after loading, so that it is
terminating again (see _start_deletion).

Every Node gets one extra address, `InternalDNS: 127.0.0.1`, and the kubelet stand-in's
port as its kubelet endpoint, so that pod logs reach the stand-in through the API
server's log proxy. Recorded addresses stay as they were.
"""

from __future__ import annotations

import copy
import ipaddress
import urllib.error
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ._process import ServiceError, progress
from .kube import KubeApiServer, KubeClient, http_error_text

KIND_ORDER = [
    "Namespace",
    "Node",
    "StorageClass",
    "PersistentVolume",
    "PriorityClass",
    "ConfigMap",
    "LimitRange",
    "ResourceQuota",
    "PersistentVolumeClaim",
    "Service",
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "CronJob",
    "ReplicaSet",
    "Job",
    "Pod",
]
LAST = ["Event"]
SYSTEM_NAMESPACES = {"default", "kube-system", "kube-public", "kube-node-lease"}
# Holds a recorded terminating object that has no finalizer of its own (see _start_deletion).
KEEP_FINALIZER = "triage.local/keep-terminating"
DROPPED_METADATA = ("uid", "resourceVersion", "creationTimestamp", "managedFields", "selfLink",
                    "generation", "deletionTimestamp", "deletionGracePeriodSeconds")  # fmt: skip


@dataclass
class _Resource:
    path: str  # /api/v1 or /apis/group/version
    plural: str
    namespaced: bool
    has_status: bool


@dataclass
class LoadReport:
    """What was loaded, for assertions and for the progress line."""

    created: dict[str, int] = field(default_factory=dict)
    uids: dict[tuple[str, str, str], str] = field(default_factory=dict)  # (kind, ns, name) -> uid
    notes: list[str] = field(default_factory=list)


class _Discovery:
    """Kind -> REST path, from the API server's own discovery documents."""

    def __init__(self, client: KubeClient) -> None:
        self._client = client
        self._cache: dict[str, dict[str, _Resource]] = {}

    def resource(self, api_version: str, kind: str) -> _Resource:
        if api_version not in self._cache:
            base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
            listing = self._client.get(base)
            names = {r["name"] for r in listing["resources"]}
            self._cache[api_version] = {
                r["kind"]: _Resource(
                    base, r["name"], r["namespaced"], f"{r['name']}/status" in names
                )
                for r in listing["resources"]
                if "/" not in r["name"]
            }
        try:
            return self._cache[api_version][kind]
        except KeyError:
            raise ServiceError(f"the API server serves no {kind} in {api_version}") from None


def read_objects(cluster_yaml: Path) -> list[dict[str, Any]]:
    """The objects of a multi-document YAML file, empty documents and Lists flattened."""
    objects: list[dict[str, Any]] = []
    for doc in yaml.safe_load_all(cluster_yaml.read_text()):
        if not doc:
            continue
        objects.extend(doc.get("items", []) if str(doc.get("kind", "")).endswith("List") else [doc])
    for obj in objects:
        if obj.get("kind") == "Secret":
            raise ServiceError(f"{cluster_yaml}: Secret objects are not allowed in a scenario")
    return objects


def _rank(obj: dict[str, Any]) -> int:
    kind = obj.get("kind", "")
    if kind in LAST:
        return len(KIND_ORDER) + 2
    return KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER)


def _key(kind: str, namespace: str | None, name: str) -> tuple[str, str, str]:
    return (kind, namespace or "", name)


def _prepare(obj: dict[str, Any], report: LoadReport, kubelet_port: int) -> dict[str, Any]:
    """The create body: server-owned fields dropped, references remapped."""
    body = copy.deepcopy(obj)
    meta = body.setdefault("metadata", {})
    for key in DROPPED_METADATA:
        meta.pop(key, None)
    namespace = meta.get("namespace")
    for ref in meta.get("ownerReferences", []):
        uid = report.uids.get(_key(ref.get("kind", ""), namespace, ref.get("name", "")))
        if uid:
            ref["uid"] = uid
    involved = body.get("involvedObject")
    if isinstance(involved, dict):
        uid = report.uids.get(
            _key(involved.get("kind", ""), involved.get("namespace"), involved.get("name", ""))
        )
        if uid:
            involved["uid"] = uid
        involved.pop("resourceVersion", None)
    if body.get("kind") == "Node":
        status = body.setdefault("status", {})
        status["addresses"] = [
            {"type": "InternalDNS", "address": "127.0.0.1"},
            *status.get("addresses", []),
        ]
        status.setdefault("daemonEndpoints", {})["kubeletEndpoint"] = {"Port": kubelet_port}
    return body


def _status_patch(
    original: dict[str, Any], created: dict[str, Any], status: dict[str, Any]
) -> dict[str, Any]:
    """Recorded status, with observedGeneration shifted to the new object's generation."""
    status = copy.deepcopy(status)
    recorded_gen = original.get("metadata", {}).get("generation")
    observed = status.get("observedGeneration")
    new_gen = created.get("metadata", {}).get("generation")
    if isinstance(recorded_gen, int) and isinstance(observed, int) and isinstance(new_gen, int):
        status["observedGeneration"] = max(0, new_gen - (recorded_gen - observed))
    return {"status": status}


def _create(
    client: KubeClient, url: str, body: dict[str, Any], report: LoadReport
) -> dict[str, Any]:
    try:
        return dict(client.create(url, body))
    except urllib.error.HTTPError as exc:
        message = http_error_text(exc)
        spec = body.get("spec", {})
        if exc.code == 422 and body.get("kind") == "Service" and "clusterIP" in message:
            # A recorded clusterIP outside this API server's service range: let it pick one.
            for key in ("clusterIP", "clusterIPs"):
                spec.pop(key, None)
            report.notes.append(f"Service {body['metadata'].get('name')}: clusterIP reassigned")
            return dict(client.create(url, body))
        if exc.code == 409:
            # Made by the API server itself (the `kubernetes` Service, say): keep its copy.
            report.notes.append(
                f"{body.get('kind')} {body['metadata'].get('name')} already existed"
            )
            return dict(client.get(f"{url}/{body['metadata']['name']}"))
        raise ServiceError(
            f"creating {body.get('kind')} {body['metadata'].get('name')}: {message}"
        ) from exc


def load_objects(server: KubeApiServer, objects: list[dict[str, Any]]) -> LoadReport:
    """Create `objects` through the API (see the module docstring) and return a report."""
    if server.kubelet is None:
        raise ServiceError("load_objects() needs a started KubeApiServer")
    client = server.client()
    discovery = _Discovery(client)
    report = LoadReport()
    for obj in sorted(objects, key=_rank):
        kind, api_version = obj.get("kind", ""), obj.get("apiVersion", "")
        meta = obj.get("metadata", {})
        name, namespace = meta.get("name", ""), meta.get("namespace")
        res = discovery.resource(api_version, kind)
        if res.namespaced:
            namespace = namespace or "default"
            collection = f"{res.path}/namespaces/{namespace}/{res.plural}"
        else:
            namespace, collection = None, f"{res.path}/{res.plural}"
        body = _prepare(obj, report, server.kubelet.port)
        if kind == "Namespace" and name in SYSTEM_NAMESPACES:
            created = client.merge_patch(
                f"{collection}/{name}",
                {
                    "metadata": {
                        k: body["metadata"][k]
                        for k in ("labels", "annotations")
                        if k in body["metadata"]
                    }
                },
            )
        else:
            created = _create(client, collection, body, report)
        report.uids[_key(kind, namespace, name)] = created["metadata"]["uid"]
        status = obj.get("status")
        if status and res.has_status and kind != "Namespace":
            try:
                client.merge_patch(
                    f"{collection}/{name}/status", _status_patch(obj, created, body["status"])
                )
            except urllib.error.HTTPError as exc:
                raise ServiceError(
                    f"status of {kind} {namespace}/{name}: {http_error_text(exc)}"
                ) from exc
        if meta.get("deletionTimestamp"):
            _start_deletion(client, f"{collection}/{name}", obj, report)
        report.created[kind] = report.created.get(kind, 0) + 1
    return report


def _start_deletion(client: KubeClient, url: str, obj: dict[str, Any], report: LoadReport) -> None:
    """Make a recorded terminating object terminating again, with the same grace period.

    The API server never takes a deletionTimestamp on create, but a DELETE sets one:
    a Pod bound to a node then waits for its kubelet (none here: it stays Terminating),
    anything else waits for its finalizers, so one that has none gets ours first. The
    new deletionTimestamp is the load time plus the grace period, not the recorded one.
    """
    meta = obj["metadata"]
    grace = int(meta.get("deletionGracePeriodSeconds") or 30)
    bound_pod = obj.get("kind") == "Pod" and obj.get("spec", {}).get("nodeName")
    if not bound_pod and not meta.get("finalizers"):
        client.merge_patch(url, {"metadata": {"finalizers": [KEEP_FINALIZER]}})
        report.notes.append(f"{obj.get('kind')} {meta.get('name')}: finalizer {KEEP_FINALIZER}")
    client.request("DELETE", url, {"kind": "DeleteOptions", "apiVersion": "v1",
                                   "gracePeriodSeconds": grace})  # fmt: skip


def service_cidr_for(scenario_dir: Path, default: str = "10.96.0.0/12") -> str:
    """A service range that holds every recorded IPv4 clusterIP, so they load unchanged.

    The smallest of /16../12 that holds them all (EKS records 172.20.0.0/16, kubeadm
    10.96.0.0/12); `default` if there are none or they are too far apart. The range is
    only the API server's bookkeeping: nothing routes to these addresses.
    """
    cluster = scenario_dir / "cluster.yaml"
    if not cluster.is_file():
        return default
    ips = []
    for obj in read_objects(cluster):
        ip = obj.get("spec", {}).get("clusterIP") if obj.get("kind") == "Service" else None
        if ip and ip != "None":
            address = ipaddress.ip_address(ip)
            if address.version == 4:
                ips.append(address)
    if not ips:
        return default
    for prefix in range(16, 11, -1):
        network = ipaddress.ip_network(f"{ips[0]}/{prefix}", strict=False)
        if all(ip in network for ip in ips):
            return str(network)
    return default


def load_scenario(server: KubeApiServer, scenario_dir: Path) -> LoadReport:
    """Load `<scenario>/cluster.yaml` and serve `<scenario>/pod-logs` from the kubelet stand-in."""
    if server.kubelet is None:
        raise ServiceError("load_scenario() needs a started KubeApiServer")
    server.kubelet.logs_root = scenario_dir / "pod-logs"
    cluster = scenario_dir / "cluster.yaml"
    if not cluster.is_file():
        return LoadReport()
    report = load_objects(server, read_objects(cluster))
    summary = ", ".join(f"{n} {k}" for k, n in sorted(report.created.items()))
    progress(f"kube: loaded {scenario_dir.name}: {summary}")
    for note in report.notes:
        progress(f"kube: note: {note}")
    return report
