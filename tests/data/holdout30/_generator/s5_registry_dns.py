"""Shape 5: the HPA adds query-api pods; the cluster autoscaler brings up nodes of a new
pool whose resolver does not know the private zone, so the private registry's name does
not resolve there ("no such host"). The old pods run on nodes that hold the image."""

from __future__ import annotations

from datetime import timedelta

from .k8s import (
    GiB,
    PodState,
    Revision,
    backends,
    container,
    cpu_hpa_current,
    cpu_hpa_metric,
    deployment,
    hpa,
    http_probe,
    namespace,
    node,
    service,
)
from .kit import World, iso_ms, parse
from .signals import Http, bystander, daily, ramp, revision_metrics, timeline

IMAGE = "registry.platform.internal/search/query-api:2.14.1"
PUBLIC = ["public.ecr.aws/eks-distro/kubernetes/pause:3.9",
          "602401143452.dkr.ecr.eu-west-1.amazonaws.com/amazon-k8s-cni:v1.18.5",
          "602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/kube-proxy:v1.30.6-eksbuild.3",
          "docker.io/library/nginx:1.27.3-alpine"]


def build() -> World:
    now = parse("2026-11-25T13:20:00Z")
    surge = now - timedelta(minutes=41)
    w = World(
        "search-slow-new-pods-stuck",
        "Search slow, autoscaled query-api pods never start",
        now,
        "search has been slow since lunch, query-api p99 roughly doubled. the HPA scaled it up "
        "but the new pods never come up. we rotated the harbor robot account last week, "
        "maybe the pull secret expired?",
        {"category": "image_pull",
         "culprit": {"kind": "Deployment", "namespace": "search", "name": "query-api"},
         "evidence": ["lookup registry.platform.internal on 10.60.0.2:53: no such host",
                      "ImagePullBackOff", "pool-c"],
         "fix": "Associate the platform.internal private DNS zone with the new pool-c subnets' "
                "resolver (or cordon pool-c until it does) so nodes can resolve "
                "registry.platform.internal; the pull secret is fine, the pull fails on the "
                "DNS lookup before any authentication."},
        seed=3005,
    )
    long_ago = parse("2025-01-20T10:00:00Z")
    namespace(w, "search", long_ago)
    namespace(w, "default", long_ago)
    old_nodes = [f"ip-10-60-{n}.eu-west-1.compute.internal" for n in ("17-9", "33-140",
                                                                      "50-61")]
    new_nodes = [f"ip-10-61-{n}.eu-west-1.compute.internal" for n in ("4-77", "19-203")]
    for i, name in enumerate(old_nodes):
        node(w, name, now - timedelta(days=5, hours=2 * i), pool="pool-b",
             zone=f"eu-west-1{'abc'[i]}", cpu="8", memory="32Gi", allocatable_memory="30700Mi",
             images=[IMAGE, "registry.platform.internal/search/indexer:5.2.0",
                     "registry.platform.internal/search/query-api:2.13.4", *PUBLIC])
    for i, name in enumerate(new_nodes):
        joined = surge + timedelta(minutes=3, seconds=40 + 25 * i)
        node(w, name, joined - timedelta(minutes=1), pool="pool-c", zone=f"eu-west-1{'ab'[i]}",
             cpu="8", memory="32Gi", allocatable_memory="30700Mi", ready_since=joined,
             images=PUBLIC)
        w.event("default", "Node", name, "RegisteredNode",
                f"Node {name} event: Registered Node {name} in Controller", first=joined,
                component="node-controller")
        w.event("default", "Node", name, "NodeReady",
                f"Node {name} status is now: NodeReady", first=joined + timedelta(seconds=20),
                host=name)

    started = now - timedelta(days=2, hours=7)
    def api() -> dict[str, object]:
        return container("query-api", IMAGE, cpu="1", cpu_limit="2", memory="2Gi",
                         env=[{"name": "OPENSEARCH_URL",
                               "value": "https://search-prod.es.platform.internal:9200"}],
                         liveness=http_probe("/healthz", 8080, delay=15),
                         readiness=http_probe("/readyz", 8080, delay=10))
    pods = [PodState(node=old_nodes[i % 3], created=started + timedelta(seconds=30 * i))
            for i in range(4)]
    created_new = [surge + timedelta(seconds=15), surge + timedelta(seconds=15),
                   surge + timedelta(minutes=6, seconds=15)]
    for k, created in enumerate(created_new):
        pods.append(PodState(
            node=new_nodes[k % 2], created=created, ready=False, phase="Pending",
            waiting=("ImagePullBackOff", f'Back-off pulling image "{IMAGE}"')))
    rev = Revision(23, started, [api()], pods=pods)
    rev.containers[0]["env"].append({"name": "QUERY_CACHE_MB", "value": "512"})
    w.add({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "query-api-synonyms", "namespace": "search",
        "creationTimestamp": "2026-09-01T08:00:00Z"}, "data": {"synonyms.txt": "tv, television"}})
    deployment(w, "search", "query-api", long_ago, [rev], replicas=7, team="search")
    for obj in w.objects:
        if obj["kind"] == "Pod" and obj["status"]["phase"] == "Pending":
            obj["spec"]["imagePullSecrets"] = [{"name": "harbor-robot-search"}]
            obj["status"].pop("podIP")
            obj["status"].pop("podIPs")
        if obj["kind"] in ("Pod", "ReplicaSet", "Deployment") and "query-api" in str(
                obj["metadata"]["name"]):
            spec = obj["spec"] if obj["kind"] == "Pod" else obj["spec"]["template"]["spec"]
            spec["imagePullSecrets"] = [{"name": "harbor-robot-search"}]
    service(w, "search", "query-api", long_ago, target=8080,
            backends=backends(w, "search", [rev]))
    hpa(w, "search", "query-api", long_ago, target="query-api", minimum=4, maximum=12,
        current=7, desired=7, metrics=[cpu_hpa_metric(60)],
        current_metrics=[cpu_hpa_current(148, 1480)], last_scale=surge + timedelta(minutes=6),
        conditions=[("AbleToScale", "True", "ReadyForNewScale",
                     "recommended size matches current size"),
                    ("ScalingActive", "True", "ValidMetricFound",
                     "the HPA was able to successfully calculate a replica count from cpu "
                     "resource utilization (percentage of request)"),
                    ("ScalingLimited", "False", "DesiredWithinRange",
                     "the desired count is within the acceptable range")])
    w.event("search", "HorizontalPodAutoscaler", "query-api", "SuccessfulRescale",
            "New size: 6; reason: cpu resource utilization (percentage of request) above target",
            first=surge, component="horizontal-pod-autoscaler")
    w.event("search", "HorizontalPodAutoscaler", "query-api", "SuccessfulRescale",
            "New size: 7; reason: cpu resource utilization (percentage of request) above target",
            first=surge + timedelta(minutes=6), component="horizontal-pod-autoscaler")
    for pod_name, state in zip(rev.pod_names[4:], rev.pods[4:], strict=True):
        first_wave = state.created < surge + timedelta(minutes=1)
        if first_wave:
            w.event("search", "Pod", pod_name, "FailedScheduling",
                    "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are "
                    "available: 3 No preemption victims found for incoming pod.",
                    first=state.created, component="default-scheduler", type_="Warning")
            w.event("search", "Pod", pod_name, "TriggeredScaleUp",
                    "pod triggered scale-up: [{eks-pool-c-20261125-4ac9f1e2 0->2 (max: 10)}]",
                    first=state.created + timedelta(seconds=12), component="cluster-autoscaler")
        bound = max(state.created + timedelta(minutes=4, seconds=30), now -
                    timedelta(minutes=59)) if first_wave else state.created + timedelta(seconds=5)
        w.event("search", "Pod", pod_name, "Scheduled",
                f"Successfully assigned search/{pod_name} to {state.node}", first=bound,
                component="default-scheduler")
        tries = int((now - bound).total_seconds() // 300) + 2
        w.event("search", "Pod", pod_name, "Pulling", f'Pulling image "{IMAGE}"',
                first=bound + timedelta(seconds=2), last=now - timedelta(minutes=2), count=tries,
                host=state.node, field_path="spec.containers{query-api}")
        w.event("search", "Pod", pod_name, "Failed",
                f'Failed to pull image "{IMAGE}": failed to pull and unpack image "{IMAGE}": '
                f'failed to resolve reference "{IMAGE}": failed to do request: Head '
                '"https://registry.platform.internal/v2/search/query-api/manifests/2.14.1": '
                "dial tcp: lookup registry.platform.internal on 10.60.0.2:53: no such host",
                first=bound + timedelta(seconds=3), last=now - timedelta(minutes=2),
                count=tries, type_="Warning", host=state.node,
                field_path="spec.containers{query-api}")
        w.event("search", "Pod", pod_name, "Failed", "Error: ErrImagePull",
                first=bound + timedelta(seconds=3), last=now - timedelta(minutes=2),
                count=tries, type_="Warning", host=state.node,
                field_path="spec.containers{query-api}")
        w.event("search", "Pod", pod_name, "BackOff", f'Back-off pulling image "{IMAGE}"',
                first=bound + timedelta(seconds=20), last=now - timedelta(seconds=30),
                count=tries * 6, type_="Normal", host=state.node,
                field_path="spec.containers{query-api}")
        w.event("search", "Pod", pod_name, "Failed", "Error: ImagePullBackOff",
                first=bound + timedelta(seconds=20), last=now - timedelta(seconds=30),
                count=tries * 6, type_="Warning", host=state.node,
                field_path="spec.containers{query-api}")

    busy = ramp(surge - timedelta(minutes=10), 20)
    revision_metrics(w, "search", "query-api", [rev], memory=lambda t: 1.2 * GiB,
                     cpu=lambda t: 0.7 + 0.8 * busy(t), memory_limit=2 * GiB, cpu_limit=2.0,
                     throttle=lambda t: 0.01 + 0.07 * busy(t),
                     http=Http(rate=lambda t: 60 * daily(t) * (1 + 0.9 * busy(t)),
                               errors=lambda t: 0.001 + 0.004 * busy(t),
                               latency=lambda t: 0.045 + 0.06 * busy(t), handler="/v2/search"))
    for moment in timeline(w, now - timedelta(hours=3), 20):
        pod = w.rng.choice(rev.pod_names[:4])
        took = w.rng.randint(25, 70) + int(90 * busy(moment) * w.rng.random())
        w.log(moment, "search", pod, "query-api", "query-api", "info",
              f"GET /v2/search q_len={w.rng.randint(3, 40)} hits={w.rng.randint(0, 5000)} "
              f"took={took}ms")
        if busy(moment) > 0.5 and w.rng.random() < 0.1:
            w.log(moment, "search", pod, "query-api", "query-api", "warn",
                  f"slow query took={w.rng.randint(800, 2400)}ms shard=products-7 "
                  "(opensearch queue 180/200)")
    for pod_name in rev.pod_names[:4]:
        w.pod_log("search", pod_name, "query-api", [
            f"{iso_ms(m)} INFO  GET /v2/search took={w.rng.randint(30, 180)}ms"
            for m in timeline(w, now - timedelta(minutes=30), 12)])

    # Neighbours: the indexer (same registry, old nodes) and the UI (public image, new node).
    bystander(w, "search", "indexer", replicas=2, nodes=old_nodes[1:],
              image="registry.platform.internal/search/indexer:5.2.0", created=long_ago,
              rev_created=now - timedelta(days=4, hours=11), memory_mib=900,
              memory_limit="2Gi", cpu_cores=0.35, rps=0, median_s=0.1, team="search",
              messages=[("indexed batch of {n} documents into products-v41", "info")])
    ui = bystander(w, "search", "search-ui", replicas=2, nodes=[old_nodes[0], new_nodes[1]],
                   image="docker.io/library/nginx:1.27.3-alpine", created=long_ago,
                   rev_created=now - timedelta(days=3), memory_mib=20, memory_limit="128Mi",
                   cpu_cores=0.01, rps=12, median_s=0.002, team="search", port=80)
    for obj in w.objects:
        if obj["kind"] == "Pod" and obj["metadata"]["name"] == ui.pod_names[1]:
            created = surge + timedelta(minutes=5)
            obj["metadata"]["creationTimestamp"] = obj["status"]["startTime"] = \
                created.strftime("%Y-%m-%dT%H:%M:%SZ")
            obj["status"]["containerStatuses"][0]["state"] = {"running": {"startedAt": (
                created + timedelta(seconds=9)).strftime("%Y-%m-%dT%H:%M:%SZ")}}
            for cond in obj["status"]["conditions"]:
                cond["lastTransitionTime"] = created.strftime("%Y-%m-%dT%H:%M:%SZ")
    w.event("search", "Pod", ui.pod_names[1], "Pulling",
            'Pulling image "docker.io/library/nginx:1.27.3-alpine"',
            first=surge + timedelta(minutes=5, seconds=2), host=new_nodes[1],
            field_path="spec.containers{search-ui}")
    w.event("search", "Pod", ui.pod_names[1], "Pulled",
            'Successfully pulled image "docker.io/library/nginx:1.27.3-alpine" in 1.873s '
            "(1.873s including waiting). Image size: 20431023 bytes.",
            first=surge + timedelta(minutes=5, seconds=4), host=new_nodes[1],
            field_path="spec.containers{search-ui}")
    w.event("search", "Pod", ui.pod_names[0], "DNSConfigForming",
            "Search Line limits were exceeded, some search paths have been omitted, the applied "
            "search line is: search.svc.cluster.local svc.cluster.local cluster.local "
            "eu-west-1.compute.internal platform.internal corp.example",
            first=now - timedelta(minutes=57), last=now - timedelta(minutes=3), count=19,
            type_="Warning", host=old_nodes[0])
    return w
