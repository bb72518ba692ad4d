"""The live cluster source against a real API server, compared with the sandbox.

The server holds the session scenario (conftest.py); the sandbox serves the same files.
Both must list the same objects with the same recorded content, select the same ones by
label and field, and return the same pod logs and the same log errors. Then the errors
only a real server produces: 403 naming the RBAC verb, 404, 401, unreachable.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from engines.errors import BackendError
from engines.steering import read_reply
from tests.live._backdate import restore_creation_times
from tests.live._live import (
    SYSTEM_NAMESPACES,
    cluster_of,
    delete_service_account,
    kubeconfig,
    service_account_kubeconfig,
)
from tests.services._process import free_port
from tests.services.kube import KubeApiServer
from tests.services.kube_loader import KEEP_FINALIZER
from tools._k8s_common import quantity
from tools.scenarios import Scenario, load_scenario, parse_time
from tools.sources.base import ClusterSource, Sources
from tools.sources.live_kubernetes import KubernetesCluster
from tools.sources.sandbox import KINDS, SandboxCluster
from tools.vocabulary import cluster_vocabulary

pytestmark = pytest.mark.live

Key = tuple[str, str, str]
# Objects a real API server makes for itself, which no scenario records.
SERVER_MADE: set[Key] = {("Namespace", "", n) for n in SYSTEM_NAMESPACES} | {
    ("Service", "default", "kubernetes"), ("Endpoints", "default", "kubernetes")}
# Namespaces where the API server keeps its own ConfigMaps, Leases... (never recorded).
_SERVER_NAMESPACES = {"kube-system", "kube-public", "kube-node-lease"}
# Fields the API server owns or the loader remaps (see tests/services/kube_loader.py).
SERVER_OWNED_META = {"uid", "resourceVersion", "generation", "managedFields", "selfLink"}


@pytest.fixture(scope="module")
def scenario(live_scenario: Path) -> Scenario:
    return load_scenario(live_scenario)


@pytest.fixture(scope="module")
def backdated(kube_server: KubeApiServer, live_scenario: Path) -> KubeApiServer:
    """The session server with the recorded creationTimestamps restored (idempotent)."""
    restore_creation_times(kube_server, live_scenario)
    return kube_server


@pytest.fixture
async def cluster(backdated: KubeApiServer) -> AsyncIterator[KubernetesCluster]:
    source = cluster_of(backdated)
    yield source
    source.close()


@pytest.fixture
def sandbox(scenario: Scenario) -> SandboxCluster:
    return SandboxCluster(scenario)


@pytest.fixture(scope="module")
def namespace(scenario: Scenario) -> str:
    """The scenario's first namespace that holds pods (shop for checkout-oom)."""
    return next(str(o["metadata"]["namespace"]) for o in scenario.cluster_objects
                if o.get("kind") == "Pod")


def _key(obj: dict[str, Any]) -> Key:
    meta = obj.get("metadata") or {}
    return str(obj.get("kind")), str(meta.get("namespace") or ""), str(meta.get("name"))


def _same(recorded: Any, live: Any, where: str = "") -> list[str]:
    """Where `recorded` is not contained in `live` (extra live keys are defaults)."""
    if isinstance(recorded, dict) and isinstance(live, dict):
        problems = []
        for key, value in recorded.items():
            if key not in live:
                problems.append(f"{where}.{key} missing")
            else:
                problems += _same(value, live[key], f"{where}.{key}")
        return problems
    if isinstance(recorded, list) and isinstance(live, list):
        if len(recorded) != len(live):
            return [f"{where}: {len(recorded)} items recorded, {len(live)} live"]
        return [p for i, (a, b) in enumerate(zip(recorded, live, strict=True))
                for p in _same(a, b, f"{where}[{i}]")]
    if recorded == live or (isinstance(recorded, str) and isinstance(live, str) and (
            _same_quantity(recorded, live) or _same_time(recorded, live))):
        return []
    return [f"{where}: recorded {recorded!r}, live {live!r}"]


def _same_quantity(a: str, b: str) -> bool:
    qa, qb = quantity(a), quantity(b)
    return qa is not None and qb is not None and abs(qa - qb) < 1e-9 * max(1.0, abs(qa))


def _same_time(a: str, b: str) -> bool:
    try:
        return parse_time(a).replace(microsecond=0) == parse_time(b).replace(microsecond=0)
    except ValueError:
        return False


def _comparable(obj: dict[str, Any]) -> dict[str, Any]:
    """An object without what the server owns or the loader remaps."""
    copy = json.loads(json.dumps(obj))
    meta = copy.get("metadata") or {}
    for key in SERVER_OWNED_META:
        meta.pop(key, None)
    if meta.get("finalizers"):  # the loader keeps a terminating object terminating
        meta["finalizers"] = [f for f in meta["finalizers"] if f != KEEP_FINALIZER]
        if not meta["finalizers"]:
            meta.pop("finalizers")
    for ref in meta.get("ownerReferences") or []:
        ref.pop("uid", None)
    for ref in (copy.get("involvedObject"),):
        if isinstance(ref, dict):
            ref.pop("uid", None)
            ref.pop("resourceVersion", None)
    status = copy.get("status") or {}
    status.pop("observedGeneration", None)
    if copy.get("kind") == "Node":
        status["addresses"] = [a for a in status.get("addresses") or []
                               if a != {"type": "InternalDNS", "address": "127.0.0.1"}]
        status.pop("daemonEndpoints", None)
    if copy.get("kind") == "Service":
        for key in ("clusterIP", "clusterIPs"):
            (copy.get("spec") or {}).pop(key, None)
    return copy


async def test_every_kind_lists_the_recorded_objects_with_their_content(
    cluster: KubernetesCluster, sandbox: SandboxCluster
) -> None:
    assert isinstance(cluster, ClusterSource)
    for kind in KINDS:
        live = {_key(o): o for o in await cluster.list_objects(kind)}
        recorded = {_key(o): o for o in await sandbox.list_objects(kind)}
        extra = {k for k in set(live) - set(recorded) if k[1] not in _SERVER_NAMESPACES}
        assert extra <= SERVER_MADE, kind
        assert set(recorded) <= set(live), kind
        for key, obj in recorded.items():
            assert live[key]["kind"] == kind and live[key]["apiVersion"] == obj["apiVersion"]
            assert "managedFields" not in live[key]["metadata"]
            problems = _same(_comparable(obj), _comparable(live[key]))
            assert not problems, f"{key}: {problems[:5]}"


async def test_namespace_label_and_field_selectors_select_the_same_objects(
    cluster: KubernetesCluster, sandbox: SandboxCluster, scenario: Scenario
) -> None:
    pods = await sandbox.list_objects("Pod")
    events = await sandbox.list_objects("Event")
    namespaces = sorted({_key(p)[1] for p in pods})
    queries: list[tuple[str, str | None, dict[str, str] | None, dict[str, str] | None]] = []
    for namespace in namespaces:
        queries += [("Pod", namespace, None, None), ("Event", namespace, None, None),
                    ("Deployment", namespace, None, None)]
    for pod in pods[:6]:
        for label, value in sorted((pod["metadata"].get("labels") or {}).items())[:2]:
            queries.append(("Pod", None, {label: value}, None))
        queries.append(("Event", None, None, {"involvedObject.name": _key(pod)[2],
                                              "involvedObject.kind": "Pod"}))
    for phase in ("Running", "Pending", "Failed"):
        queries.append(("Pod", None, None, {"status.phase": phase}))
    for node in await sandbox.list_objects("Node"):
        queries.append(("Pod", None, None, {"spec.nodeName": _key(node)[2]}))
    for reason in sorted({str(e.get("reason")) for e in events})[:5]:
        queries.append(("Event", None, None, {"reason": reason, "type": "Warning"}))
    for kind, scope, labels, fields in queries:
        live = {k for o in await cluster.list_objects(
            kind, scope, label_selector=labels, field_selector=fields)
            if (k := _key(o)) not in SERVER_MADE and k[1] not in _SERVER_NAMESPACES}
        recorded = {k for o in await sandbox.list_objects(
            kind, scope, label_selector=labels, field_selector=fields)
            if (k := _key(o))[1] not in _SERVER_NAMESPACES}
        assert live == recorded, (kind, scope, labels, fields)


async def test_get_object_finds_each_object_and_none_for_a_missing_one(
    cluster: KubernetesCluster, sandbox: SandboxCluster
) -> None:
    for kind in ("Pod", "Deployment", "Node", "Namespace", "Service"):
        for obj in (await sandbox.list_objects(kind))[:4]:
            _, namespace, name = _key(obj)
            found = await cluster.get_object(kind, namespace, name)
            assert found is not None and _key(found) == _key(obj)
    assert await cluster.get_object("Deployment", "default", "no-such-deployment") is None
    assert await cluster.get_object("Node", "", "no-such-node") is None


async def _logs(source: ClusterSource, *args: Any, **kwargs: Any) -> str:
    try:
        return await source.pod_logs(*args, **kwargs)
    except BackendError as exc:
        return f"ERROR {exc}"


async def test_pod_logs_are_the_same_current_previous_and_tailed(
    cluster: KubernetesCluster, sandbox: SandboxCluster
) -> None:
    compared = 0
    for pod in await sandbox.list_objects("Pod"):
        _, namespace, name = _key(pod)
        containers = [c["name"] for c in (pod.get("spec") or {}).get("containers") or []]
        for container in containers:
            for options in ({}, {"previous": True}, {"tail_lines": 3},
                            {"previous": True, "tail_lines": 1}):
                live = await _logs(cluster, namespace, name, container, **options)
                recorded = await _logs(sandbox, namespace, name, container, **options)
                assert live == recorded, (name, container, options)
                compared += 1
    assert compared


async def test_pod_log_errors_say_what_is_wrong(
    cluster: KubernetesCluster, sandbox: SandboxCluster
) -> None:
    pod = next(p for p in await sandbox.list_objects("Pod") if p["spec"].get("nodeName"))
    _, namespace, name = _key(pod)
    invalid = await _logs(cluster, namespace, name, "no-such-container")
    assert invalid == await _logs(sandbox, namespace, name, "no-such-container")
    assert "is not valid for pod" in invalid
    missing = await _logs(cluster, namespace, "no-such-pod")
    assert missing == f'ERROR pods "no-such-pod" not found in namespace "{namespace}"'


async def test_secrets_are_refused_before_any_request(cluster: KubernetesCluster) -> None:
    for call in (cluster.list_objects("Secret"), cluster.get_object("secrets", "shop", "x")):
        with pytest.raises(BackendError, match="Secrets are never read"):
            await call


# ---------------------------------------------------------------------- errors


@pytest.fixture(scope="module")
def service_account(backdated: KubeApiServer, namespace: str,
                    tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A kubeconfig for default/triage-limited, allowed only to list pods in one namespace."""
    folder = tmp_path_factory.mktemp("sa")
    yield service_account_kubeconfig(backdated, "triage-limited", folder, list_pods_in=namespace)
    delete_service_account(backdated, "triage-limited", namespace)


async def test_forbidden_names_the_missing_rbac_verb_and_resource(
    service_account: Path, namespace: str
) -> None:
    limited = KubernetesCluster.from_kubeconfig(str(service_account))
    shop = namespace
    try:
        assert await limited.list_objects("Pod", shop) is not None  # granted
        with pytest.raises(BackendError) as events:
            await limited.list_objects("Event", shop)
        assert str(events.value) == (
            "forbidden: the service account default/triage-limited cannot list events in "
            f"namespace {shop} (needs RBAC verb 'list' on 'events')")
        with pytest.raises(BackendError, match=r"cannot list pods in any namespace \(needs RBAC "
                                               r"verb 'list' on 'pods'\)"):
            await limited.list_objects("Pod")
        with pytest.raises(BackendError, match=rf"cannot list deployments in namespace {shop} "
                                               r"\(needs RBAC verb 'list' on 'deployments' in "
                                               r"API group 'apps'\)"):
            await limited.list_objects("Deployment", shop)
        with pytest.raises(BackendError, match=rf"cannot get the log of pod x in namespace {shop} "
                                               r"\(needs RBAC verb 'get' on 'pods/log'\)"):
            await limited.pod_logs(shop, "x")
        with pytest.raises(BackendError, match=r"cannot list nodes \(needs RBAC verb 'list' on "
                                               r"'nodes'\)"):
            await limited.list_objects("Node")
        assert (await limited.can_i("list", "pods", namespace=shop)).allowed
        assert not (await limited.can_i("list", "pods")).allowed
        assert await limited.whoami() == "system:serviceaccount:default:triage-limited"
        notes = await limited.check()  # usable, with a note: a namespaced Role is enough
        assert any("cannot list pods in all namespaces" in note for note in notes)
    finally:
        limited.close()


async def test_unauthorized_and_unreachable_servers_are_reported(
    backdated: KubeApiServer, tmp_path: Path
) -> None:
    bad_token = tmp_path / "bad-token"
    bad_token.write_text(kubeconfig(backdated, "not-a-valid-token"))
    with pytest.raises(BackendError, match=r"unauthorized: the Kubernetes API server at .* "
                                           r"rejected the credentials"):
        await KubernetesCluster.from_kubeconfig(str(bad_token)).list_objects("Pod")
    dead_url = f"https://127.0.0.1:{free_port()}"
    dead = tmp_path / "dead"
    dead.write_text(kubeconfig(backdated, backdated.viewer_token, dead_url))
    with pytest.raises(BackendError) as unreachable:
        await KubernetesCluster.from_kubeconfig(str(dead)).list_objects("Pod", "default")
    assert str(unreachable.value) == (
        f"cannot reach the Kubernetes API server at {dead_url}: connection refused")
    with pytest.raises(BackendError, match=r"cannot load the kubeconfig .* \(context nope\)"):
        KubernetesCluster.from_kubeconfig(str(dead), "nope")


async def test_viewer_identity_passes_the_start_up_check(
    cluster: KubernetesCluster, namespace: str
) -> None:
    notes = await cluster.check()
    assert len(notes) == 1 and notes[0].endswith(" as triage-viewer")
    assert (await cluster.can_i("get", "pods/log", namespace=namespace)).allowed
    assert not (await cluster.can_i("list", "secrets")).allowed
    assert urllib.parse.urlsplit(cluster.server).hostname == "127.0.0.1"


async def test_replies_are_read_with_the_live_clusters_names(
        cluster: KubernetesCluster, sandbox: SandboxCluster, namespace: str) -> None:
    """The names a reply is read with come from the API server as they do from a scenario:
    a namespace the live cluster has is excluded by name alone."""
    live = await cluster_vocabulary(Sources(cluster=cluster))
    recorded = await cluster_vocabulary(Sources(cluster=sandbox))
    assert recorded.namespaces <= live.namespaces
    assert recorded.workloads == live.workloads
    reading = read_reply(f"stay out of {namespace} for now", live)
    assert [(c.kind, c.value) for c in reading.constraints] == [("exclude_namespace", namespace)]
