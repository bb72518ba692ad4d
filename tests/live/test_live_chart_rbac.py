"""The Helm chart's RBAC on a real API server, used with the service account's own token.

The chart's ClusterRole is rendered, applied and bound to a fresh service account; then
every Kubernetes tool runs through the live source with that account's token over the
session scenario. Not one call may be forbidden, and reading a Secret must be.
"""

from __future__ import annotations

import contextlib
import ssl
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from engines.errors import BackendError, TriageError
from tests.helm._recording import argument_sets, index
from tests.helm.conftest import Helm, helm, one
from tests.live._backdate import restore_creation_times
from tests.live._live import kubeconfig
from tests.services.kube import KubeApiServer
from tools.context import ToolContext
from tools.kubernetes import KUBERNETES_TOOLS
from tools.scenarios import load_scenario
from tools.sources.base import Sources
from tools.sources.live_kubernetes import KubernetesCluster

pytestmark = pytest.mark.live
__all__ = ["helm"]  # the session fixture that finds the helm binary

ACCOUNT = "triage-chart"
RBAC = "/apis/rbac.authorization.k8s.io/v1"


@pytest.fixture(scope="module")
def chart_token(helm: Helm, kube_server: KubeApiServer, live_scenario: Path) -> Iterator[str]:
    """A token of a service account bound to exactly the chart's ClusterRole."""
    restore_creation_times(kube_server, live_scenario)
    role = one(helm.render(), "ClusterRole")
    admin = kube_server.client()
    admin.create(f"{RBAC}/clusterroles", {"metadata": {"name": ACCOUNT}, "rules": role["rules"]})
    admin.create("/api/v1/namespaces/default/serviceaccounts", {"metadata": {"name": ACCOUNT}})
    admin.create(f"{RBAC}/clusterrolebindings", {
        "metadata": {"name": ACCOUNT},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": ACCOUNT},
        "subjects": [{"kind": "ServiceAccount", "name": ACCOUNT, "namespace": "default"}],
    })
    try:
        token = admin.create(
            f"/api/v1/namespaces/default/serviceaccounts/{ACCOUNT}/token",
            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
             "spec": {"expirationSeconds": 3600}},
        )["status"]["token"]
        yield str(token)
    finally:
        for path in (f"{RBAC}/clusterrolebindings/{ACCOUNT}", f"{RBAC}/clusterroles/{ACCOUNT}",
                     f"/api/v1/namespaces/default/serviceaccounts/{ACCOUNT}"):
            with contextlib.suppress(urllib.error.HTTPError):
                admin.request("DELETE", path)


async def test_every_kubernetes_tool_works_with_the_charts_service_account(
    chart_token: str, kube_server: KubeApiServer, live_scenario: Path, tmp_path: Path
) -> None:
    scenario = load_scenario(live_scenario)
    config = tmp_path / "kubeconfig"
    config.write_text(kubeconfig(kube_server, chart_token))
    cluster = KubernetesCluster.from_kubeconfig(str(config))
    try:
        assert await cluster.whoami() == f"system:serviceaccount:default:{ACCOUNT}"
        context = ToolContext(now=scenario.now, sources=Sources(cluster=cluster))
        objects = index(scenario.cluster_objects)
        forbidden: list[str] = []
        succeeded: set[str] = set()
        for tool in KUBERNETES_TOOLS:
            for arguments in argument_sets(tool, objects)[:4]:
                try:
                    await tool.function(context, **tool.validate(arguments))
                except BackendError as exc:
                    if "forbidden" in str(exc).lower():
                        forbidden.append(f"{tool.name}({arguments}): {exc}")
                except TriageError:
                    pass  # a wrong guess at arguments (a pod with no previous log): still read
                else:
                    succeeded.add(tool.name)
        assert not forbidden, "the chart's role lacks what a tool needs:\n" + "\n".join(forbidden)
        assert succeeded == {t.name for t in KUBERNETES_TOOLS}
    finally:
        cluster.close()


def _get(server: KubeApiServer, token: str, path: str) -> int:
    request = urllib.request.Request(server.url + path,
                                     headers={"Authorization": f"Bearer {token}"})
    tls = ssl.create_default_context(cafile=str(server.ca_file))
    try:
        with urllib.request.urlopen(request, context=tls, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


@pytest.mark.parametrize("path", ["/api/v1/secrets", "/api/v1/namespaces/default/secrets"])
def test_the_charts_service_account_cannot_read_secrets(
    chart_token: str, kube_server: KubeApiServer, path: str
) -> None:
    assert _get(kube_server, chart_token, "/api/v1/pods") == 200  # the token itself works
    assert _get(kube_server, chart_token, path) == 403


def test_nor_write_anything(chart_token: str, kube_server: KubeApiServer) -> None:
    request = urllib.request.Request(
        kube_server.url + "/api/v1/namespaces/default/configmaps", method="POST",
        data=b'{"metadata": {"name": "x"}}',
        headers={"Authorization": f"Bearer {chart_token}", "Content-Type": "application/json"},
    )
    tls = ssl.create_default_context(cafile=str(kube_server.ca_file))
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, context=tls, timeout=10)
    assert refused.value.code == 403
