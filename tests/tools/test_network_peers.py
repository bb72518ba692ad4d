"""Finding who is behind an address and what a NetworkPolicy covers: k8s_list_pods by IP (a
peer a log line names), and k8s_list_network_policies with the workloads it selects and its
creation and change times."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from tests.tools._tooling import call, context

NOW = datetime(2027, 4, 2, 9, 0, tzinfo=UTC)


def _ago(minutes: float) -> str:
    return (NOW - timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pod(name: str, ip: str, node: str = "node-a", **labels: str) -> dict[str, Any]:
    owner = name.rsplit("-", 1)[0]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "lab", "creationTimestamp": _ago(900),
                         "labels": {"app": name.rsplit("-", 2)[0], **labels},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                              "name": owner, "controller": True, "uid": owner}]},
            "spec": {"nodeName": node, "containers": [{"name": "app", "image": "reg.io/a:1"}]},
            "status": {"phase": "Running", "podIP": ip,
                       "containerStatuses": [{"name": "app", "ready": True, "restartCount": 0,
                                              "state": {"running": {"startedAt": _ago(900)}}}]}}


def _replicaset(name: str) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": name, "namespace": "lab", "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "Deployment", "name": name.rsplit("-", 1)[0],
                 "controller": True, "uid": name}]}, "spec": {}, "status": {}}


def _policy(name: str, created: float, writes: list[tuple[str, float]],
            selector: dict[str, Any] | None = None) -> dict[str, Any]:
    fields = [{"manager": manager, "operation": "Update", "time": _ago(minutes),
               "apiVersion": "networking.k8s.io/v1"} for manager, minutes in writes]
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": name, "namespace": "lab", "creationTimestamp": _ago(created),
                         "managedFields": fields},
            "spec": {"podSelector": selector or {}, "policyTypes": ["Egress"], "egress": [
                {"to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8"]}}],
                 "ports": [{"port": 443, "protocol": "TCP"}]}]}}


def _scenario(root: Path) -> Path:
    objects = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "lab"}},
               _pod("results-7d9f8c6b5-a1b2c", "10.42.1.17", tier="backend"),
               _pod("exporter-6c9d7f5b8-q2w3e", "10.42.2.30"),
               _replicaset("results-7d9f8c6b5"), _replicaset("exporter-6c9d7f5b8"),
               _policy("egress-baseline", 30, []),
               _policy("backend-egress", 60, [], {"matchLabels": {"tier": "backend"}}),
               _policy("egress-old", 200 * 1440, [("kubectl-client-side-apply", 200 * 1440),
                                                  ("argocd-controller", 12)])]
    folder = root / "peers"
    folder.mkdir()
    header = {"id": "peers", "title": "peers", "now": NOW.strftime("%Y-%m-%dT%H:%M:%SZ"),
              "report": "results fail",
              "truth": {"category": "network", "culprit": {
                  "kind": "NetworkPolicy", "namespace": "lab", "name": "egress-baseline"}}}
    (folder / "scenario.yaml").write_text(yaml.safe_dump(header))
    (folder / "cluster.yaml").write_text(yaml.safe_dump_all(objects))
    return folder


async def test_list_pods_by_ip_finds_the_peer_a_log_line_names(tmp_path: Path) -> None:
    ctx = context(_scenario(tmp_path))
    data = await call(ctx, "k8s_list_pods", ip="10.42.1.17")
    assert data["total"] == 1
    (row,) = data["pods"]
    assert (row["name"], row["namespace"], row["ip"]) == (
        "results-7d9f8c6b5-a1b2c", "lab", "10.42.1.17")
    assert (await call(ctx, "k8s_list_pods", ip="10.9.9.9"))["total"] == 0
    assert all("ip" not in p for p in (await call(ctx, "k8s_list_pods"))["pods"])


async def test_network_policies_say_when_they_were_created_and_last_changed(
        tmp_path: Path) -> None:
    data = await call(context(_scenario(tmp_path)), "k8s_list_network_policies",
                      namespace="lab")
    rows = {row["name"]: row for row in data["policies"]}
    assert rows["egress-baseline"]["created"] == f"{_ago(30)} (30m ago)"
    assert "changed" not in rows["egress-baseline"]
    assert rows["egress-old"]["created"].startswith(_ago(200 * 1440))
    assert rows["egress-old"]["changed"] == f"{_ago(12)} (12m ago) by argocd-controller"
    assert rows["egress-old"]["egress"] == [
        "to ip 0.0.0.0/0 except 10.0.0.0/8 on TCP/443"]
    assert rows["backend-egress"]["selected_workloads"] == ["Deployment/results"]
    assert "selected_workloads" not in rows["egress-baseline"]  # all pods: no list


async def test_a_namespace_selector_that_no_namespace_matches_is_flagged(tmp_path: Path) -> None:
    folder = _scenario(tmp_path)
    objects = list(yaml.safe_load_all((folder / "cluster.yaml").read_text()))
    objects.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": "edge", "labels": {"kubernetes.io/metadata.name": "edge", "zone": "public"}}})
    for zone in ("dmz", "public"):
        objects.append({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                        "metadata": {"name": f"from-{zone}", "namespace": "lab",
                                     "creationTimestamp": _ago(900)},
                        "spec": {"podSelector": {}, "policyTypes": ["Ingress"], "ingress": [
                            {"from": [{"namespaceSelector": {"matchLabels": {"zone": zone}}}],
                             "ports": [{"port": 3000}]}]}})
    (folder / "cluster.yaml").write_text(yaml.safe_dump_all(objects))
    data = await call(context(folder), "k8s_list_network_policies", namespace="lab")
    rows = {row["name"]: row for row in data["policies"]}
    assert rows["from-dmz"]["ingress"] == [
        "from namespaces zone=dmz (matches no namespace) on TCP/3000"]
    assert any("matches no namespace" in w for w in rows["from-dmz"]["warnings"])
    assert rows["from-public"]["ingress"] == ["from namespaces zone=public on TCP/3000"]
    assert "warnings" not in rows["from-public"]


async def test_egress_open_only_to_the_namespaces_own_pods_is_said_to_cut_dns(
        tmp_path: Path) -> None:
    """`to: [{podSelector: {}}]` on every port admits the policy's own namespace only: the
    resolver in kube-system is cut off, and the listing says so; a rule to a namespace
    selector on port 53 lets DNS out."""
    folder = _scenario(tmp_path)
    objects = list(yaml.safe_load_all((folder / "cluster.yaml").read_text()))
    own = _policy("own-namespace-only", 30, [])
    own["spec"]["egress"] = [{"to": [{"podSelector": {}}]}]
    dns = _policy("with-dns", 30, [])
    dns["spec"]["egress"] = [{"to": [{"namespaceSelector": {"matchLabels": {
        "kubernetes.io/metadata.name": "kube-system"}}}], "ports": [{"port": 53,
                                                                   "protocol": "UDP"}]}]
    (folder / "cluster.yaml").write_text(yaml.safe_dump_all([*objects, own, dns]))
    rows = {p["name"]: p for p in (await call(context(folder),
                                              "k8s_list_network_policies"))["policies"]}
    cut = "egress is restricted and no rule allows DNS (port 53)"
    assert cut in rows["own-namespace-only"]["warnings"]
    assert cut not in rows["with-dns"].get("warnings", [])


def _node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}}


async def test_a_node_local_service_says_which_nodes_reach_no_endpoint(tmp_path: Path) -> None:
    """internalTrafficPolicy Local with its ready pods on one of two nodes: callers on the
    other reach nothing, and the listing says so (with the cluster IP that callers' errors
    name); externalTrafficPolicy Local is shown."""
    folder = _scenario(tmp_path)
    objects = list(yaml.safe_load_all((folder / "cluster.yaml").read_text()))
    local = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "results",
                                                                 "namespace": "lab"},
             "spec": {"selector": {"app": "results"}, "internalTrafficPolicy": "Local",
                      "clusterIP": "10.0.148.23", "ports": [{"port": 80, "targetPort": 8080}]}}
    edge = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "exporter",
                                                                "namespace": "lab"},
            "spec": {"selector": {"app": "exporter"}, "type": "NodePort",
                     "externalTrafficPolicy": "Local", "ports": [{"port": 80}]}}
    (folder / "cluster.yaml").write_text(yaml.safe_dump_all(
        [*objects, _node("node-a"), _node("node-b"), local, edge]))
    rows = {s["name"]: s for s in (await call(context(folder), "k8s_list_services",
                                              namespace="lab"))["services"]}
    assert rows["results"]["traffic_policy"] == "internal: Local"
    assert rows["results"]["cluster_ip"] == "10.0.148.23"  # what callers' errors name
    assert any("run on 1 of 2 nodes (node-a)" in p for p in rows["results"]["problems"])
    assert rows["exporter"]["traffic_policy"] == "external: Local"
    assert not any("internalTrafficPolicy" in p for p in rows["exporter"].get("problems", []))


def _zoned(name: str, zone: str) -> dict[str, Any]:
    node = _node(name)
    node["metadata"]["labels"] = {"topology.kubernetes.io/zone": zone}
    return node


def _pod_on(name: str, node: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "lab", "labels": {"app": "intake"}},
            "spec": {"nodeName": node,
                     "containers": [{"name": "intake", "ports": [{"containerPort": 443}]}]},
            "status": {"phase": "Running",
                       "containerStatuses": [{"name": "intake", "ready": True}]}}


async def test_an_external_local_service_names_the_zone_it_leaves_empty(tmp_path: Path) -> None:
    """externalTrafficPolicy Local on a LoadBalancer whose ready pods sit in two of three
    zones: a problem naming the empty zone, unless cross-zone load balancing is on."""
    folder = _scenario(tmp_path)
    objects = list(yaml.safe_load_all((folder / "cluster.yaml").read_text()))

    def balanced(name: str, annotations: dict[str, str]) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": name, "namespace": "lab", "annotations": annotations},
                "spec": {"selector": {"app": "intake"}, "type": "LoadBalancer",
                         "externalTrafficPolicy": "Local", "ports": [{"port": 443}]},
                "status": {"loadBalancer": {"ingress": [{"hostname": "lb.example.com"}]}}}

    nodes = [_zoned(f"n{i}", f"zone-{'abc'[i % 3]}") for i in range(6)]
    pods = [_pod_on("intake-1", "n0"), _pod_on("intake-2", "n1"), _pod_on("intake-3", "n3")]
    crossing = {"service.beta.kubernetes.io/aws-load-balancer-cross-zone-load-balancing-"
                "enabled": "true"}
    (folder / "cluster.yaml").write_text(yaml.safe_dump_all(
        [*objects, *nodes, *pods, balanced("intake-public", {}),
         balanced("intake-crossing", crossing)]))
    rows = {s["name"]: s for s in (await call(context(folder), "k8s_list_services",
                                              namespace="lab"))["services"]}
    problems = rows["intake-public"]["problems"]
    assert any("run on 3 of 6 nodes, none in zone-c (zones with pods: zone-a, zone-b)" in p
               for p in problems), problems
    assert not any("externalTrafficPolicy" in p for p in rows["intake-crossing"]["problems"]), \
        "cross-zone balancing reaches zone-c"


async def test_a_node_problem_detector_condition_is_a_node_problem(tmp_path: Path) -> None:
    """A Ready node whose ReadonlyFilesystem condition is True is a problem node (listed by
    problems_only); a condition that is False is not."""
    folder = _scenario(tmp_path)
    objects = list(yaml.safe_load_all((folder / "cluster.yaml").read_text()))
    failing, fine = _node("node-a"), _node("node-b")
    failing["status"]["conditions"].append(
        {"type": "ReadonlyFilesystem", "status": "True", "reason": "FilesystemIsReadOnly",
         "message": "Filesystem is read-only", "lastTransitionTime": "2026-11-30T09:40:00Z"})
    fine["status"]["conditions"].append({"type": "KernelDeadlock", "status": "False"})
    (folder / "cluster.yaml").write_text(yaml.safe_dump_all([*objects, failing, fine]))
    data = await call(context(folder), "k8s_list_nodes", problems_only=True)
    assert [n["name"] for n in data["nodes"]] == ["node-a"]
    assert data["nodes"][0]["problems"][0].startswith(
        "ReadonlyFilesystem: Filesystem is read-only")


def _serving(name: str, ip: str, port: int | None) -> dict[str, Any]:
    pod = _pod(name, ip, app="api")
    if port is not None:
        pod["spec"]["containers"][0]["ports"] = [{"containerPort": port}]
    return pod


async def test_a_selector_that_takes_in_another_workloads_portless_pods_is_flagged(
        tmp_path: Path) -> None:
    """A Service whose selector also matches a worker's pods that open no port: the share of
    connections sent there is refused, in the listing and in k8s_service_endpoints; a
    canary that serves the same port is not a stray."""
    folder = _scenario(tmp_path)
    objects = list(yaml.safe_load_all((folder / "cluster.yaml").read_text()))
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "api",
                                                                   "namespace": "lab"},
               "spec": {"selector": {"app": "api"}, "ports": [{"port": 80, "targetPort": 8080}]}}
    pods = [_serving("api-5f6d7c8b9-aaaaa", "10.42.3.1", 8080),
            _serving("api-5f6d7c8b9-bbbbb", "10.42.3.2", 8080),
            _serving("api-canary-7b8c9d6f5-ccccc", "10.42.3.3", 8080),
            _serving("api-worker-6d7e8f9a5-ddddd", "10.42.3.4", None)]
    sets = [_replicaset("api-5f6d7c8b9"), _replicaset("api-canary-7b8c9d6f5"),
            _replicaset("api-worker-6d7e8f9a5")]
    (folder / "cluster.yaml").write_text(yaml.safe_dump_all([*objects, service, *pods, *sets]))
    ctx = context(folder)
    rows = {s["name"]: s for s in (await call(ctx, "k8s_list_services",
                                              namespace="lab"))["services"]}
    stray = ("selector also matches api-worker (1 of 4 pods), which do not open port 8080: "
             "connections sent there are refused")
    assert stray in rows["api"]["problems"]
    assert not any("api-canary" in p for p in rows["api"]["problems"])
    endpoints = await call(ctx, "k8s_service_endpoints", namespace="lab", service="api")
    assert stray in endpoints["problems"]


async def test_ingress_admitted_from_pods_only_is_said_to_shut_out_the_api_server(
        tmp_path: Path) -> None:
    """A default-deny policy beside one that admits the namespace's pods: the endpoints say
    the pods admit pods only (a webhook there cannot be called by the API server); an
    ipBlock rule admits callers outside the pod network, and the note goes."""
    folder = _scenario(tmp_path)
    objects = list(yaml.safe_load_all((folder / "cluster.yaml").read_text()))
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "results",
                                                                   "namespace": "lab"},
               "spec": {"selector": {"app": "results"}, "ports": [{"port": 443}]}}

    def ingress(name: str, rules: list[dict[str, Any]]) -> dict[str, Any]:
        return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                "metadata": {"name": name, "namespace": "lab"},
                "spec": {"podSelector": {}, "policyTypes": ["Ingress"], "ingress": rules}}

    base = [ingress("deny-all", []), ingress("same-namespace", [{"from": [{"podSelector": {}}]}])]
    (folder / "cluster.yaml").write_text(yaml.safe_dump_all([*objects, service, *base]))
    data = await call(context(folder), "k8s_service_endpoints", namespace="lab",
                      service="results")
    assert data["ingress_from"].startswith("pods only (by pod or namespace selector)")
    assert "deny-all: denies all ingress" in data["ingress_policies"]
    control = ingress("control-plane", [{"from": [{"ipBlock": {"cidr": "10.0.0.0/16"}}]}])
    (tmp_path / "open").mkdir()
    opened = _scenario(tmp_path / "open")
    (opened / "cluster.yaml").write_text(yaml.safe_dump_all([*objects, service, *base, control]))
    data = await call(context(opened), "k8s_service_endpoints", namespace="lab",
                      service="results")
    assert "ingress_from" not in data


def _with(folder: Path, *extra: dict[str, Any]) -> Path:
    objects = list(yaml.safe_load_all((folder / "cluster.yaml").read_text()))
    (folder / "cluster.yaml").write_text(yaml.safe_dump_all([*objects, *extra]))
    return folder


def _named_port_pods() -> list[dict[str, Any]]:
    """Two api pods that declare 53 for UDP and for TCP (as a DNS server does) and 8080/TCP."""
    pods = [_serving("api-5f6d7c8b9-aaaaa", "10.42.3.1", 8080),
            _serving("api-5f6d7c8b9-bbbbb", "10.42.3.2", 8080)]
    for pod in pods:
        pod["spec"]["containers"][0]["ports"] = [
            {"name": "http", "containerPort": 8080, "protocol": "TCP"},
            {"name": "dns", "containerPort": 53, "protocol": "UDP"},
            {"name": "dns-tcp", "containerPort": 53, "protocol": "TCP"}]
    return pods


async def test_a_service_port_typed_udp_in_front_of_a_tcp_server_is_flagged(
        tmp_path: Path) -> None:
    """A Service port whose protocol is not the one the pods open the targeted port with:
    TCP clients reach nothing; a port number opened for both protocols is fine either way."""
    ports = [{"name": "http", "port": 9000, "targetPort": "http", "protocol": "UDP"},
             {"name": "dns", "port": 53, "targetPort": 53, "protocol": "UDP"},
             {"name": "dns-tcp", "port": 53, "targetPort": 53, "protocol": "TCP"}]
    service = {"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": "api", "namespace": "lab"},
               "spec": {"selector": {"app": "api"}, "ports": ports}}
    folder = _with(_scenario(tmp_path), service, *_named_port_pods(),
                   _replicaset("api-5f6d7c8b9"))
    ctx = context(folder)
    (row,) = [s for s in (await call(ctx, "k8s_list_services", namespace="lab"))["services"]
              if s["name"] == "api"]
    wrong = "port 9000 is UDP but the pods' port http is TCP: its clients reach nothing"
    assert row["problems"] == [wrong]
    endpoints = await call(ctx, "k8s_service_endpoints", namespace="lab", service="api")
    assert wrong in endpoints["problems"]


async def test_not_ready_pods_published_behind_a_cluster_ip_are_flagged(tmp_path: Path) -> None:
    """publishNotReadyAddresses on a ClusterIP Service keeps starting and terminating pods in
    its endpoints; on a headless Service (peer discovery) it is what it is for."""
    def service(name: str, cluster_ip: str | None) -> dict[str, Any]:
        spec: dict[str, Any] = {"selector": {"app": "api"}, "publishNotReadyAddresses": True,
                                "ports": [{"port": 80, "targetPort": 8080}]}
        if cluster_ip:
            spec["clusterIP"] = cluster_ip
        return {"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": name, "namespace": "lab"}, "spec": spec}

    folder = _with(_scenario(tmp_path), service("api", "10.96.7.7"), service("api-peers", "None"),
                   *_named_port_pods(), _replicaset("api-5f6d7c8b9"))
    ctx = context(folder)
    rows = {s["name"]: s for s in (await call(ctx, "k8s_list_services",
                                              namespace="lab"))["services"]}
    published = ("publishNotReadyAddresses: true on a ClusterIP Service: pods still starting or "
                 "already terminating stay in its endpoints and refuse connections")
    assert rows["api"]["problems"] == [published]
    assert published not in rows["api-peers"].get("problems", [])
    endpoints = await call(ctx, "k8s_service_endpoints", namespace="lab", service="api")
    assert published in endpoints["problems"]
    headless = await call(ctx, "k8s_service_endpoints", namespace="lab", service="api-peers")
    assert published not in headless.get("problems", [])


async def test_a_directory_matched_exact_by_an_ingress_is_flagged(tmp_path: Path) -> None:
    """pathType Exact on "/" routes that one URL only: everything below it falls to the
    default backend. An Exact match of a file-like path, and a Prefix "/", are fine."""
    def ingress(name: str, paths: list[tuple[str, str]]) -> dict[str, Any]:
        return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                "metadata": {"name": name, "namespace": "lab"},
                "spec": {"rules": [{"host": f"{name}.example.com", "http": {"paths": [
                    {"path": path, "pathType": kind, "backend": {"service": {
                        "name": "results", "port": {"number": 80}}}} for path, kind in paths]}}]}}

    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "results",
                                                                   "namespace": "lab"},
               "spec": {"selector": {"app": "results"}, "ports": [{"port": 80}]}}
    folder = _with(_scenario(tmp_path), service,
                   ingress("public", [("/", "Exact"), ("/healthz", "Exact")]),
                   ingress("partners", [("/", "Prefix")]))
    rows = {r["name"]: r for r in (await call(context(folder), "k8s_list_ingresses",
                                              namespace="lab"))["ingresses"]}
    assert rows["public"]["problems"] == [
        "path / of public.example.com has pathType: Exact: only / itself reaches Service "
        "results; every path below it gets the default backend's 404"]
    assert "problems" not in rows["partners"]
