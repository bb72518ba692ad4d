"""Helpers of the live-source tests: sources over the test servers, and scenario switching.

The session servers (conftest.py) hold one scenario. The live evaluation needs every
bundled scenario, one after another, each alone in its servers (a NotReady node or an
event of one scenario must not show in another's answers):

- Elasticsearch holds every scenario at once, one index each (`logs-<id>`), and each
  scenario's log source reads only its own index: the index pattern is configurable.
- Prometheus is started fresh for each scenario: blocks are backfilled before start.
- Kubernetes: one API server for the whole evaluation; between scenarios every object
  the previous scenario created is deleted (pods with no grace period, namespaces
  finalized by hand, since no namespace controller runs), then the next one is loaded.
  Restarting etcd and the API server for each scenario would cost several times more.
"""

from __future__ import annotations

import http.client
import json
import ssl
import threading
import urllib.error
import urllib.parse
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from tests._ci import skip_or_fail
from tests.live._backdate import restore_creation_times
from tests.services import kube_loader
from tests.services._process import NotProvisionedError, ServiceError
from tests.services.elasticsearch import ElasticsearchServer, index_name
from tests.services.elasticsearch import load_scenario as load_logs
from tests.services.kube import KubeApiServer
from tests.services.prometheus import PrometheusServer
from tests.services.prometheus import load_scenario as load_metrics
from tools.sources.kube_api import resource_for
from tools.sources.live_elasticsearch import ElasticsearchLogs
from tools.sources.live_kubernetes import KubernetesCluster
from tools.sources.live_prometheus import PrometheusMetrics

SYSTEM_NAMESPACES = kube_loader.SYSTEM_NAMESPACES


def provisioned(make: Any) -> Any:
    """Create a server, skipping (or failing in CI) when its binaries are missing, like
    the session fixtures do."""
    try:
        return make()
    except NotProvisionedError as exc:
        skip_or_fail(str(exc))


def cluster_of(server: KubeApiServer, *, viewer: bool = True) -> KubernetesCluster:
    """The live cluster source as the bot would use it: read-only viewer by default."""
    path = server.viewer_kubeconfig if viewer else server.kubeconfig
    return KubernetesCluster.from_kubeconfig(str(path), timeout=20)


def logs_of(server: ElasticsearchServer, scenario_id: str) -> ElasticsearchLogs:
    """A log source over one scenario's index only."""
    return ElasticsearchLogs.connect(server.url, index=index_name(scenario_id), timeout=30)


def metrics_of(server: PrometheusServer) -> PrometheusMetrics:
    return PrometheusMetrics.connect(server.url, timeout=30)


def ensure_logs(server: ElasticsearchServer, scenario_dir: Path) -> None:
    """Index a scenario's logs into logs-<id> unless that index exists already."""
    index = index_name(scenario_dir.name)
    try:
        server.request("HEAD", f"/{index}")
    except ServiceError:  # 404: not loaded yet
        load_logs(server, scenario_dir)


@contextmanager
def prometheus_for(scenario_dir: Path) -> Iterator[PrometheusServer]:
    """A Prometheus holding one scenario's metrics, stopped on exit."""
    server: PrometheusServer = provisioned(PrometheusServer)
    try:
        load_metrics(server, scenario_dir)
        server.start()
        yield server
    finally:
        server.stop()


class _KeepAlive:
    """Admin requests over one kept-alive TLS connection per thread: an unload is many
    small requests, and a TLS handshake each would cost more than the requests."""

    def __init__(self, server: KubeApiServer) -> None:
        self._host = urllib.parse.urlsplit(server.url)
        self._token = server.admin_token
        self._tls = ssl.create_default_context(cafile=str(server.ca_file))
        self._local = threading.local()

    def request(self, method: str, path: str, body: Any = None,
                content_type: str = "application/json") -> int:
        """Send; return the HTTP status (the body is read and dropped)."""
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = http.client.HTTPSConnection(
                self._host.hostname or "127.0.0.1", self._host.port, context=self._tls,
                timeout=30)
            self._local.connection = connection
        headers = {"Authorization": f"Bearer {self._token}", "Accept": "application/json"}
        payload = None
        if body is not None:
            payload, headers["Content-Type"] = json.dumps(body).encode(), content_type
        connection.request(method, path, body=payload, headers=headers)
        response = connection.getresponse()
        response.read()
        if response.status >= 400 and response.status != 404:
            raise AssertionError(f"{method} {path}: HTTP {response.status}")
        return int(response.status)


def unload_scenario(server: KubeApiServer, scenario_dir: Path) -> None:
    """Delete every object a scenario's cluster.yaml created, and check it is gone.

    Objects are deleted with no grace period (no kubelet confirms), their recorded
    finalizers first removed (no controller would), namespaces finalized by hand (no
    namespace controller runs); a few threads share the work.
    """
    cluster = scenario_dir / "cluster.yaml"
    if not cluster.is_file():
        return
    api = _KeepAlive(server)
    objects = kube_loader.read_objects(cluster)
    namespaces = [o["metadata"]["name"] for o in objects if o.get("kind") == "Namespace"
                  and o["metadata"]["name"] not in SYSTEM_NAMESPACES]
    paths: list[tuple[str, bool]] = []  # (path, recorded with finalizers)
    for obj in objects:
        if obj.get("kind") == "Namespace":
            continue
        meta = obj.get("metadata") or {}
        resource = resource_for(str(obj.get("kind")))
        path = resource.path(meta.get("namespace") or "default", meta["name"])
        # The loader keeps a recorded terminating object terminating with a finalizer.
        paths.append((path, bool(meta.get("finalizers") or meta.get("deletionTimestamp"))))

    def delete(item: tuple[str, bool]) -> None:
        path, finalizers = item
        if finalizers:
            api.request("PATCH", path, {"metadata": {"finalizers": None}},
                        "application/merge-patch+json")
        api.request("DELETE", path + "?gracePeriodSeconds=0&propagationPolicy=Background")

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(delete, paths))
        for name in namespaces:
            api.request("DELETE", f"/api/v1/namespaces/{name}")
            api.request("PUT", f"/api/v1/namespaces/{name}/finalize", {
                "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name},
                "spec": {"finalizers": []}})
        remaining = [p for p, _ in paths] + [f"/api/v1/namespaces/{n}" for n in namespaces]
        statuses = list(pool.map(lambda path: api.request("GET", path), remaining))
    survivors = [p for p, status in zip(remaining, statuses, strict=True) if status != 404]
    if survivors:
        raise AssertionError(f"objects survived the unload: {survivors[:5]}")


def service_account_kubeconfig(
    server: KubeApiServer, name: str, folder: Path, *, list_pods_in: str | None = None
) -> Path:
    """A kubeconfig for service account default/<name> (a TokenRequest token), allowed
    nothing, or only to list pods in one namespace. The caller deletes it with
    `delete_service_account`."""
    admin = server.client()
    admin.create("/api/v1/namespaces/default/serviceaccounts", {"metadata": {"name": name}})
    if list_pods_in:
        rbac = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{list_pods_in}"
        admin.create(f"{rbac}/roles", {
            "metadata": {"name": name},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}]})
        admin.create(f"{rbac}/rolebindings", {
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": "default"}]})
    token = admin.create(f"/api/v1/namespaces/default/serviceaccounts/{name}/token", {
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
        "spec": {"expirationSeconds": 3600}})["status"]["token"]
    path = folder / f"kubeconfig-{name}"
    path.write_text(kubeconfig(server, token))
    return path


def delete_service_account(server: KubeApiServer, name: str, namespace: str | None = None
                           ) -> None:
    admin = server.client()
    paths = [f"/api/v1/namespaces/default/serviceaccounts/{name}"]
    if namespace:
        rbac = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}"
        paths += [f"{rbac}/rolebindings/{name}", f"{rbac}/roles/{name}"]
    for path in paths:
        with suppress(urllib.error.HTTPError):
            admin.request("DELETE", path)


def kubeconfig(server: KubeApiServer, token: str, url: str | None = None) -> str:
    """A kubeconfig (JSON is YAML) for the test server with a bearer token."""
    return json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "t",
        "clusters": [{"name": "t", "cluster": {"server": url or server.url,
                                                "certificate-authority": str(server.ca_file)}}],
        "users": [{"name": "u", "user": {"token": token}}],
        "contexts": [{"name": "t", "context": {"cluster": "t", "user": "u"}}]})


class ScenarioSwitcher:
    """Loads bundled scenarios one after another into one API server (module docstring)."""

    def __init__(self, kube: KubeApiServer, elasticsearch: ElasticsearchServer) -> None:
        self.kube = kube
        self.elasticsearch = elasticsearch
        self.current: Path | None = None

    def load(self, scenario_dir: Path) -> None:
        if self.current is not None:
            unload_scenario(self.kube, self.current)
            self.current = None
        kube_loader.load_scenario(self.kube, scenario_dir)
        self.current = scenario_dir
        restore_creation_times(self.kube, scenario_dir)
        ensure_logs(self.elasticsearch, scenario_dir)

