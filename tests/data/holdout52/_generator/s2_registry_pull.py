"""Shape 2, image_pull: a private registry outage stops an Always-pull Deployment scaling."""

from __future__ import annotations

from pathlib import Path

from . import _kit as k

SID = "search-pods-not-coming-up"
NOW = "2026-12-09T07:50:00Z"
IMAGE = "registry.corp.example/catalog/search-api:5.14.2"
OUTAGE = 31.0  # registry answering 503 since this many minutes before now


def pull_message() -> str:
    return (f'Failed to pull image "{IMAGE}": failed to pull and unpack image "{IMAGE}": failed to '
            f'resolve reference "{IMAGE}": unexpected status from HEAD request to '
            "https://registry.corp.example/v2/catalog/search-api/manifests/5.14.2: "
            "503 Service Unavailable")


def build(root: Path) -> None:
    st = k.Story(SID, NOW, seed=5202)
    names = [f"ip-10-0-{i}-{31 + i * 5}.eu-west-1.compute.internal" for i in range(1, 7)]
    drained = names[1]
    for i, n in enumerate(names):
        taints = ([{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule",
                    "timeAdded": st.ts(28)}] if n == drained else None)
        k.node(st, n, ("eu-west-1a", "eu-west-1b", "eu-west-1c")[i % 3],
               unschedulable=n == drained, taints=taints)
    live = [n for n in names if n != drained]
    k.kube_system(st, live)
    for ns in ("catalog", "web", "monitoring", "ops"):
        k.namespace(st, ns)
    st.event(ns="", kind="Node", name=drained, reason="NodeNotSchedulable",
             message=f"Node {drained} status is now: NodeNotSchedulable", first=st.ago(28),
             host=drained)

    # --- search-api: 4 running pods, 4 that cannot pull ---------------------------------
    labels = {"app": "search-api"}
    ctr = k.container("search-api", IMAGE, cpu="500m", memory="1Gi", mem_limit="2Gi",
                      pull="Always", env={"ES_URL": "http://search-es.catalog:9200",
                                          "JAVA_OPTS": "-Xmx1280m"}, liveness="/livez")
    h = "7d4c9b6f58"
    dep = k.deployment(st, "catalog", "search-api", labels=labels, containers=[ctr], replicas=8,
                       revision=63, created=st.ago(days=400), updated=st.ago(hours=52),
                       ready=4, available=4)
    dep["status"]["conditions"][0]["lastTransitionTime"] = st.ts(24)
    dep["status"]["conditions"][0]["lastUpdateTime"] = st.ts(24)
    k.replicaset(st, dep, "5f8b7d9c44", revision=62, replicas=0, created=st.ago(days=6))
    rs = k.replicaset(st, dep, h, revision=63, replicas=8, created=st.ago(hours=52), ready=4)
    ok_nodes = [live[0], live[1], live[2], live[3]]
    running, stuck = [], []
    for i, n in enumerate(ok_nodes):
        p = k.pod(st, "catalog", f"search-api-{h}-{st.suffix()}",
                  labels={**labels, "pod-template-hash": h}, containers=[ctr], node_name=n,
                  owner=rs, created=st.ago(hours=52, minutes=-i))
        running.append(p)
        st.add(p)
    # one replacement of the pod evicted by the drain, three from the HPA scale-up
    for i, (n, made) in enumerate(((live[4], 27.5), (live[2], 24.0), (live[3], 24.0),
                                    (live[0], 23.5))):
        p = k.pod(st, "catalog", f"search-api-{h}-{st.suffix()}",
                  labels={**labels, "pod-template-hash": h}, containers=[ctr], node_name=n,
                  owner=rs, created=st.ago(made))
        reason = "ImagePullBackOff" if i != 2 else "ErrImagePull"
        msg = (f'Back-off pulling image "{IMAGE}"' if reason == "ImagePullBackOff"
               else pull_message())
        k.set_waiting(st, p, reason, msg, since=st.ago(made))
        stuck.append(p)
        st.add(p)
        pn = p["metadata"]["name"]
        tries = int(made // 4) + 1
        st.event(ns="catalog", kind="Pod", name=pn, reason="Scheduled",
                 component="default-scheduler",
                 message=f"Successfully assigned catalog/{pn} to {n}", first=st.ago(made))
        st.event(ns="catalog", kind="Pod", name=pn, reason="Pulling", host=n,
                 field_path="spec.containers{search-api}", count=tries,
                 message=f'Pulling image "{IMAGE}"', first=st.ago(made - 0.1),
                 last=st.ago(2 + i * 0.5))
        st.event(ns="catalog", kind="Pod", name=pn, reason="Failed", type_="Warning", host=n,
                 field_path="spec.containers{search-api}", count=tries,
                 message=pull_message(), first=st.ago(made - 0.2), last=st.ago(2 + i * 0.5))
        st.event(ns="catalog", kind="Pod", name=pn, reason="Failed", type_="Warning", host=n,
                 field_path="spec.containers{search-api}", count=tries,
                 message="Error: ErrImagePull", first=st.ago(made - 0.2),
                 last=st.ago(2 + i * 0.5))
        st.event(ns="catalog", kind="Pod", name=pn, reason="BackOff", host=n,
                 field_path="spec.containers{search-api}", count=tries * 6,
                 message=f'Back-off pulling image "{IMAGE}"', first=st.ago(made - 0.5),
                 last=st.ago(0.5 + i * 0.3))
        st.event(ns="catalog", kind="Pod", name=pn, reason="Failed", type_="Warning", host=n,
                 field_path="spec.containers{search-api}", count=tries * 6,
                 message="Error: ImagePullBackOff", first=st.ago(made - 0.5),
                 last=st.ago(0.5 + i * 0.3))
    st.event(ns="catalog", kind="ReplicaSet", name=rs["metadata"]["name"], api_version="apps/v1",
             reason="SuccessfulCreate", component="replicaset-controller",
             message=f"Created pod: {stuck[0]['metadata']['name']}", first=st.ago(27.5))
    for p in stuck[1:]:
        st.event(ns="catalog", kind="ReplicaSet", name=rs["metadata"]["name"],
                 api_version="apps/v1", reason="SuccessfulCreate",
                 component="replicaset-controller",
                 message=f"Created pod: {p['metadata']['name']}", first=st.ago(24))
    st.event(ns="catalog", kind="Deployment", name="search-api", api_version="apps/v1",
             reason="ScalingReplicaSet", component="deployment-controller",
             message=f"Scaled up replica set search-api-{h} to 8 from 5", first=st.ago(24))
    svc = k.service(st, "catalog", "search-api", labels)
    k.endpoints(st, svc, running, not_ready=stuck)
    k.hpa(st, "catalog", "search-api", "Deployment", min_r=4, max_r=12, current=8, desired=8,
          cpu_target=60, cpu_now=97, last_scale=st.ago(24),
          conditions=k.hpa_ok_conditions(st, st.ago(24)))
    st.event(ns="catalog", kind="HorizontalPodAutoscaler", name="search-api",
             api_version="autoscaling/v2", reason="SuccessfulRescale",
             component="horizontal-pod-autoscaler",
             message="New size: 8; reason: cpu resource utilization (percentage of request) "
                     "above target", first=st.ago(24))

    def lat(m: float) -> float:
        return k.ramp(m, 40, 20, 45, 380)

    for p in running:
        k.access_log(st, p, "search-api", "search-api", every=45,
                     paths=("/v1/search", "/v1/suggest", "/v1/search/facets"), lat_fn=lat,
                     err_ratio=0.01)
        k.noise(st, p, "search-api", "search-api", "warn", [
            "request queue at 58/64, shedding low-priority suggest traffic",
            "GC pause 412ms (G1 Evacuation Pause), heap 1.1G/1.25G",
        ], every=200, start_min=22)
        k.pod_metrics(st, p, "search-api", mem_mb=1050,
                      cpu_fn=lambda m: k.ramp(m, 40, 20, 0.28, 0.49) * st.rng.uniform(0.9, 1.1))
    for p in stuck:
        k.gauge_fn(st, "kube_pod_container_status_waiting_reason",
                   "Describes the reason the container is currently in waiting state.",
                   {"namespace": "catalog", "pod": p["metadata"]["name"],
                    "container": "search-api", "reason": "ImagePullBackOff"},
                   lambda m: 1.0,
                   since_min=(st.now - k.parse(p["metadata"]["creationTimestamp"])).seconds / 60)
    k.latency_hist(st, "catalog", "search-api", rps=lambda m: k.ramp(m, 40, 20, 60, 110),
                   median_s=lambda m: lat(m) / 1000)
    k.http_counters(st, "catalog", "search-api", rps=lambda m: k.ramp(m, 40, 20, 60, 110),
                    err=lambda m: k.ramp(m, 30, 20, 0.1, 3.0), err_code="503")
    for what, fn in (("spec", lambda m: 5.0 if m > 24 else 8.0),
                     ("available", lambda m: 5.0 if m > 28 else 4.0)):
        name = ("kube_deployment_spec_replicas" if what == "spec"
                else "kube_deployment_status_replicas_available")
        k.gauge_fn(st, name, f"Deployment replicas ({what}).",
                   {"namespace": "catalog", "deployment": "search-api"}, fn)
    for n in live:
        k.counter_fn(st, "kubelet_runtime_operations_errors",
                     "Cumulative number of runtime operation errors by operation type.",
                     {"node": n, "operation_type": "pull_image"},
                     lambda m, n=n: (0.02 if m < OUTAGE and n != live[1] else 0.0),
                     start=float(st.rng.randint(2, 9)))

    # --- the rest of the cluster ---------------------------------------------------------
    idx = k.app(st, "catalog", "search-indexer", "registry.corp.example/catalog/indexer:2.3.0",
                nodes=live, replicas=2, rps=0.5, log_every=240, http=False, mem_mb=512)
    for p in idx.pods:
        k.noise(st, p, "search-indexer", "search-indexer", "info", [
            "indexed 500 products into products-v42 in 3.1s",
            "delta feed: 41 updates, 3 deletes",
        ], every=120)
    front = k.app(st, "web", "storefront", "public.ecr.aws/acme/storefront:8.2.1", nodes=live,
                  replicas=3, rps=30, log_every=60, lat_ms=120, paths=("/", "/search", "/p"),
                  rollout_hours=30, mem_mb=260)
    moved = front.pods[2]
    k.retime(st, moved, 27.8)
    mn = moved["metadata"]["name"]
    st.event(ns="web", kind="Pod", name=mn, reason="Pulled", host=moved["spec"]["nodeName"],
             field_path="spec.containers{storefront}",
             message='Container image "public.ecr.aws/acme/storefront:8.2.1" already present on '
                     "machine", first=st.ago(27.7))
    st.event(ns="web", kind="Pod", name=mn, reason="Started", host=moved["spec"]["nodeName"],
             field_path="spec.containers{storefront}", message="Started container storefront",
             first=st.ago(27.6))
    for p in front.pods:
        k.noise(st, p, "storefront", "storefront", "error", [
            "search backend slow: GET http://search-api.catalog/v1/search took 2140ms",
            "search backend timeout after 2500ms, rendering cached results",
        ], every=150, start_min=20)
    k.app(st, "monitoring", "grafana", "docker.io/grafana/grafana:11.3.1", nodes=live, replicas=1,
          port=3000, rps=0.4, log_every=300, http=False, paths=("/api/ds/query",))
    drain_ctr = k.container("kubectl", "docker.io/bitnami/kubectl:1.30.6", port=None,
                            cpu="50m", memory="64Mi")
    k.pending_pod(st, "ops", "node-drain-report-29421346-x8kq2", drain_ctr,
                  "0/6 nodes are available: 1 node(s) were unschedulable, 5 node(s) didn't "
                  "match Pod's node affinity/selector. preemption: 0/6 nodes are available: "
                  "6 Preemption is not helpful for scheduling.", minutes=26,
                  labels={"job-name": "node-drain-report-29421346"})
    st.keep_pod_logs(*running, *front.pods)
    st.write(root, title="search-api pods not coming up after node maintenance", report=(
        "search is slow (p99 ~1s+) and half the search-api pods are not coming up since the node "
        f"maintenance started ~07:20. we cordoned/drained {drained.split('.')[0]} for the kernel "
        "patch. did "
        "the drain break something or is the cluster out of capacity? the HPA wants 8 and we "
        "only have 4 serving\n"),
        truth={"category": "image_pull",
               "culprit": {"kind": "Deployment", "namespace": "catalog", "name": "search-api"},
               "evidence": ["503 Service Unavailable", "ImagePullBackOff",
                            "imagePullPolicy: Always"],
               "fix": "The private registry registry.corp.example answers 503: get it back (or "
                      "fail over to the mirror); meanwhile set search-api's imagePullPolicy to "
                      "IfNotPresent so pods on nodes that already have 5.14.2 can start. The "
                      "drain and the HPA only exposed it; nodes have capacity."})
