"""catalog-big-listings: a caller's new client library lowers the receive-size ceiling.

catalog-bff 2.23.0 moved from the in-house rpc wrapper 4.x to 5.0, which no longer reads
GRPC_MAX_RECV_MSG_BYTES and falls back to grpc-go's default of 4 MiB. Listings of the
big categories (6-9 MB responses) now fail with ResourceExhausted; small categories
work. The report blames catalog-svc (the server), which served every call successfully.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from ._kit import Container, Workload
from ._scene import Line, Scene, switch
from ._signals import restarted

SID = "catalog-big-listings"
NODES = [f"ip-10-52-{a}-{b}.eu-west-1.compute.internal"
         for a, b in ((1, 36), (2, 119), (3, 204), (1, 88))]
BIG = {"electronics": 7_912_344, "home-garden": 6_377_102, "toys": 4_611_980}
SMALL = {"gift-cards": 84_211, "books": 1_930_006, "pets": 902_114, "garden-tools": 2_440_771,
         "beauty": 3_102_556, "sports": 3_688_090}


def build(root: Path) -> None:
    """Write the scenario."""
    s = Scene(SID, "2026-04-02T09:45:00Z", seed=5902)
    rollout = s.ago(48)
    s.nodes(NODES)
    s.namespaces("catalog", "search", "ml", "kube-system")

    bff_env = {"CATALOG_SVC_ADDR": "dns:///catalog-svc.catalog.svc.cluster.local:50051",
               "GRPC_MAX_RECV_MSG_BYTES": "16777216", "RPC_CLIENT_TIMEOUT": "3s"}
    bff = s.cluster.workload(Workload(
        "catalog", "catalog-bff",
        [Container("catalog-bff", "ghcr.io/shopco/catalog-bff:2.23.0", cpu_req="300m",
                   cpu_lim="1500m", mem_req="384Mi", mem_lim="768Mi", env=bff_env)],
        NODES, s.ago(60 * 24 * 330), replicas=3, revision=15, rollout_at=rollout,
        previous_images={"catalog-bff": "ghcr.io/shopco/catalog-bff:2.22.3"},
        template_annotations={"shopco.io/change": "CHG-88213 dependency refresh (rpc 5.0, "
                              "otel 1.31)"}))
    svc_c = Container("catalog-svc", "ghcr.io/shopco/catalog-svc:7.4.1", port=50051,
                      cpu_req="1", cpu_lim="2", mem_req="1Gi", mem_lim="2Gi", probe_path=None,
                      env={"GRPC_MAX_SEND_MSG_BYTES": "33554432"})
    svc_started = [s.ago(60 * 24 * 2 - 1 - i) for i in range(3)]

    def svc_pod(i: int, pod: dict[str, object]) -> None:
        if i == 1:
            restarted(pod, count=1, finished=s.ago(60 * 5 + 12), reason="OOMKilled",
                      exit_code=137)

    catalog = s.cluster.workload(Workload(
        "catalog", "catalog-svc", [svc_c], NODES[1:], s.ago(60 * 24 * 600), replicas=3,
        revision=41, rollout_at=s.ago(60 * 24 * 2), pod_started=svc_started,
        mutate_pod=svc_pod, service_port=50051))
    indexer = s.cluster.workload(Workload(
        "search", "search-indexer",
        [Container("search-indexer", "ghcr.io/shopco/search-indexer:3.0.8", cpu_req="500m")],
        NODES[:2], s.ago(60 * 24 * 90), replicas=2, rollout_at=s.ago(60 * 24 * 6)))
    s.pending_pod("ml", "recs-train-29061120-qk8vd", "recs-train",
                  "ghcr.io/shopco/recs-train:0.19.2", cpu="8", memory="60Gi",
                  since=s.ago(70), node_selector={"nvidia.com/gpu.present": "true"},
                  message="0/4 nodes are available: 4 node(s) didn't match Pod's node "
                  "affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is "
                  "not helpful for scheduling.")
    s.cluster.add({"apiVersion": "batch/v1", "kind": "CronJob",
                   "metadata": {"name": "catalog-import", "namespace": "catalog",
                                "creationTimestamp": "2025-06-01T10:00:00Z"},
                   "spec": {"schedule": "30 8 * * *", "concurrencyPolicy": "Forbid",
                            "jobTemplate": {"spec": {"template": {"spec": {
                                "restartPolicy": "OnFailure", "containers": [{
                                    "name": "import",
                                    "image": "ghcr.io/shopco/catalog-import:1.12.0"}]}}}}},
                   "status": {"lastScheduleTime": "2026-04-02T08:30:00Z",
                              "lastSuccessfulTime": "2026-04-02T08:52:41Z"}})

    # --- events: the rollout, a probe blip, the import job
    s.cluster.event("catalog", "Deployment", "catalog-bff", "ScalingReplicaSet",
                    f"Scaled up replica set {bff[0].pod.rsplit('-', 1)[0]} to 3",
                    first=rollout, component="deployment-controller")
    s.cluster.event("catalog", "CronJob", "catalog-import", "SawCompletedJob",
                    "Saw completed job: catalog-import-29061150, status: Complete",
                    first=s.ago(52), component="cronjob-controller")
    for i, ref in enumerate(bff):
        s.cluster.event("catalog", "Pod", ref.pod, "Pulled", "Successfully pulled image "
                        "\"ghcr.io/shopco/catalog-bff:2.23.0\" in 2.811s (2.811s including "
                        "waiting). Image size: 31877410 bytes.", first=rollout
                        + timedelta(seconds=30 + 17 * i), host=ref.node)

    # --- logs
    def new(t: datetime, i: int) -> bool:
        return t >= rollout + timedelta(seconds=40 + 17 * i)

    old_pods = [f"catalog-bff-7d9c5b8f4-{x}" for x in ("h2kqp", "m8rzt", "x4vnc")]
    for i, ref in enumerate(bff):
        old = type(ref)(ref.ns, old_pods[i], ref.container, ref.service, ref.node, ref.ip)
        s.logs.add(s.ago(60 * 24 * 3 + 7 * i), old, "info",
                   "catalog-bff 2.22.3 starting; rpc client shopco-rpc 4.7.2 (grpc-go 1.58.3) "
                   "target=dns:///catalog-svc.catalog.svc.cluster.local:50051 "
                   "maxCallRecvMsgSize=16777216")
        s.chatter(old, _bff_line(s, lambda t: False), every_s=12, minutes=170,
                  until=48 - (40 + 17 * i) / 60)
        s.logs.add(rollout + timedelta(seconds=42 + 17 * i), ref, "info",
                   "catalog-bff 2.23.0 starting; rpc client shopco-rpc 5.0.1 (grpc-go 1.66.2) "
                   "target=dns:///catalog-svc.catalog.svc.cluster.local:50051 "
                   "otel-go 1.31.0")
        s.logs.add(rollout + timedelta(seconds=43 + 17 * i), ref, "warn",
                   "config: unknown environment variable GRPC_MAX_RECV_MSG_BYTES ignored")
        s.chatter(ref, _bff_line(s, lambda t: True), every_s=12, minutes=(48 * 60 - 45) / 60)

    def svc_line(t: datetime) -> Line | None:
        cat, size = s.pick(list({**BIG, **SMALL}.items()))
        r = s.rng.random()
        if r < 0.8:
            return ("info", f"finished unary call grpc.method=ListCategory grpc.code=OK "
                    f"category={cat} response_bytes={size + s.rng.randrange(-9999, 9999)} "
                    f"grpc.time_ms={s.rng.uniform(20, 160):.1f}",
                    {"rpc.method": "ListCategory", "rpc.grpc.status_code": 0})
        if r < 0.93:
            return ("info", f"cache refresh: {s.rng.randrange(40, 900)} products reloaded "
                    "from postgres", {})
        return ("warn", "slow query: SELECT ... FROM product_variants WHERE category_id = $1 "
                f"took {s.rng.randrange(500, 1400)}ms", {})

    for ref in catalog:
        s.chatter(ref, svc_line, every_s=9, minutes=170)
    s.logs.add(s.ago(60 * 5 + 12), catalog[1], "error", "runtime: out of memory while "
               "loading price snapshot (previous container)")
    for ref in indexer:
        s.chatter(ref, lambda t: s.pick([
            ("warn", "elasticsearch bulk: 3 items rejected (es_rejected_execution_exception), "
             "retrying", {}),
            ("info", f"indexed {s.rng.randrange(100, 2000)} documents into products-v42", {}),
        ]), every_s=30, minutes=170)

    # --- metrics
    big_share = sum(BIG.values()) / (sum(BIG.values()) + sum(SMALL.values()))
    for i, ref in enumerate(bff):
        since = rollout + timedelta(seconds=40 + 17 * i)

        s.http(ref, "/api/v2/categories/{slug}", lambda t: 21.0, switch(since, 0.003, 0.31),
               lambda t: 0.09, code="502")
        s.counter("grpc_client_handled", "Total number of RPCs completed by the client.",
                  {"namespace": "catalog", "pod": ref.pod, "grpc_service":
                   "shopco.catalog.v3.Catalog", "grpc_method": "ListCategory",
                   "grpc_code": "ResourceExhausted"},
                  switch(since, 0.0, 6.5))
        s.counter("grpc_client_handled", "Total number of RPCs completed by the client.",
                  {"namespace": "catalog", "pod": ref.pod, "grpc_service":
                   "shopco.catalog.v3.Catalog", "grpc_method": "ListCategory",
                   "grpc_code": "OK"},
                  switch(since, 21.0, 14.5))
        s.usage(ref, 0.35, 240e6, cpu_limit=1.5)
    for ref in catalog:
        s.counter("grpc_server_handled", "Total number of RPCs completed on the server.",
                  {"namespace": "catalog", "pod": ref.pod, "grpc_service":
                   "shopco.catalog.v3.Catalog", "grpc_method": "ListCategory",
                   "grpc_code": "OK"}, lambda t: 21.0)
        s.gauge("grpc_server_msg_sent_bytes_p99", "p99 size of response messages sent.",
                {"namespace": "catalog", "pod": ref.pod, "grpc_method": "ListCategory"},
                lambda t: 7.9e6)
        s.usage(ref, 0.8 + 0.4 * big_share, 1.3e9, cpu_limit=2)
    s.restarts(catalog[1], lambda t: 1 if t >= s.ago(60 * 5 + 12) else 0)

    s.write(root, title="Big category pages fail, small ones load",
            report="Category pages for the big departments (electronics, home & garden) "
            "error out for a lot of shoppers since about 9. I think catalog-svc is choking "
            "on the import that ran at 8:30 - it OOMed earlier this morning too. Can you "
            "check catalog-svc?",
            category="bad_rollout", culprit=("Deployment", "catalog", "catalog-bff"),
            evidence=["received message larger than max", "4194304", "shopco-rpc 5.0.1",
                      "GRPC_MAX_RECV_MSG_BYTES ignored"],
            fix="Roll catalog-bff back to 2.22.3, or set the client's max receive message size "
            "(grpc.MaxCallRecvMsgSize 16 MiB) through the new rpc 5.x option and redeploy.")


def _bff_line(s: Scene, is_new: Callable[[datetime], bool]) -> Callable[[datetime], Line | None]:
    """catalog-bff request logs; on the new revision big listings fail."""

    def make(t: datetime) -> Line | None:
        r = s.rng.random()
        if r < 0.85:
            cat, size = s.pick(list({**BIG, **SMALL}.items()))
            size += s.rng.randrange(-9999, 9999)
            trace = s.trace()
            if is_new(t) and size > 4_194_304:
                return ("error", f"GET /api/v2/categories/{cat} 502: ListCategory: rpc error: "
                        "code = ResourceExhausted desc = grpc: received message larger than "
                        f"max ({size} vs. 4194304)",
                        {"http.response.status_code": 502, "url.path":
                         f"/api/v2/categories/{cat}", "trace.id": trace,
                         "rpc.grpc.status_code": 8})
            return ("info", f"GET /api/v2/categories/{cat} 200 {s.rng.randrange(40, 190)}ms",
                    {"http.response.status_code": 200, "url.path": f"/api/v2/categories/{cat}",
                     "trace.id": trace})
        if r < 0.95:
            return ("warn", "recommendations timeout after 250ms, rendering without "
                    "'you may also like'", {})
        return ("info", "feature flags refreshed (37 flags)", {})

    return make
