"""Pods that never run: image_pull (a wrong tag, registry auth) and unschedulable (cpu, taint)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.scenario_tools.common import (
    MIB,
    Story,
    const,
    container_metrics,
    deployment_metrics,
    http_metrics,
    kube_system,
    namespaces,
    nodes,
    noise_logs,
    step,
    story,
    truth,
)
from tests.scenario_tools.failures import (
    image_pull_events,
    image_pull_status,
    scheduling_failed,
)
from tests.scenario_tools.kube import Ctr, Obj, Template, ended, http_probe, running
from tests.scenario_tools.parts import ghost_pod, hpa, neighbour, readiness_blip, rollout

GAR = "europe-west4-docker.pkg.dev/acme-shop-prod/apps"


@story
def catalog_image_tag() -> Story:
    s = Story("catalog-image-tag", "catalog-web release stuck",
              datetime(2026, 11, 26, 11, 5, tzinfo=UTC),
              "catalog-web 3.8.0 release has been rolling out for 30 minutes, the pipeline "
              "timed out waiting for it. product pages still show the old layout",
              truth("image_pull", "Deployment", "catalog", "catalog-web",
                    ["ImagePullBackOff", "not found", "v3.8.0"],
                    "The pipeline pushed the image as 3.8.0 but the manifest asks for v3.8.0: "
                    "fix the tag in the Deployment (or push the tag) and re-run the release"),
              hours=2.0)
    namespaces(s, "catalog", "search")
    node_list = nodes(s, 3, subnet=72, region="europe-west4", instance="n2-standard-4")
    kube_system(s, node_list)
    at = s.ago(minutes=31)
    image = f"{GAR}/catalog-web:v3.8.0"

    def ctr(version: str) -> Ctr:
        tag = "v3.8.0" if version == "3.8.0" else version
        return Ctr("catalog-web", f"{GAR}/catalog-web:{tag}", port=3000,
                   requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "512Mi"},
                   readiness=http_probe("/api/ready", delay=5), liveness=http_probe(
                       "/api/live", delay=10))

    roll = rollout(s, "catalog", "catalog-web", ctr, old="3.7.2", new="3.8.0", at=at,
                   revision=88, replicas=3, node_list=node_list, complete=False,
                   statuses=lambda i, t, n: {"catalog-web": image_pull_status(image=image)})
    error = (f'rpc error: code = NotFound desc = failed to pull and unpack image "{image}": '
             f'failed to resolve reference "{image}": {image}: not found')
    for pod in roll.new_pods:
        image_pull_events(s, pod, "catalog-web", image, error, since=at + timedelta(seconds=3))
    deployment_metrics(s, roll.work)
    for pod in roll.old_pods:
        container_metrics(s, pod, "catalog-web", memory=lambda t: 188 * MIB, cpu=const(0.09))
        http_metrics(s, "catalog-web", pod, rps=const(22.0), codes={
            "200": const(0.97), "304": const(0.02), "404": const(0.01)}, median=const(0.06))
        noise_logs(s, pod, "catalog-web", "catalog-web", [
            ("info", "GET /p/[slug] 200", {"http.response.status_code": 200}),
            ("warn", "GET /p/[slug] 404 product not found", {"http.response.status_code": 404}),
            ("error", "image optimizer: upstream image timed out, serving original",
             {"error.type": "TimeoutError"}),
        ], 30)
    neighbour(s, "catalog", "catalog-api", f"{GAR}/catalog-api:12.1.0", node_list, logs=[
        ("warn", "elasticsearch query slow: took 740ms index=products", {}),
        ("info", "GET /v2/products 200", {}), ("info", "GET /v2/products 200", {})],
        n_logs=40, rps=60.0, codes={"200": 0.99, "404": 0.01}, revision=140)
    neighbour(s, "search", "search-indexer", f"{GAR}/search-indexer:4.2.0", node_list,
              replicas=1, memory_mib=900, logs=[
                  ("warn", "bulk request partially failed: 3 of 500 documents rejected "
                   "(version conflict)", {}), ("info", "indexed 500 documents", {})],
              n_logs=20, restarts={0: running(s.ago(days=1, hours=20), restarts=3, last=ended(
                  "Error", 137, s.ago(days=2, hours=1), s.ago(days=1, hours=20, seconds=9)))})
    return s


@story
def fraud_registry_auth() -> Story:
    s = Story("fraud-registry-auth", "fraud-scorer down to one pod",
              datetime(2026, 12, 14, 21, 30, tzinfo=UTC),
              "fraud checks time out, payments falls back to manual review for a lot of "
              "orders. fraud-scorer (risk namespace) only has 1 of 3 pods ready",
              truth("image_pull", "Deployment", "risk", "fraud-scorer",
                    ["ImagePullBackOff", "401 Unauthorized", "registry.acme-risk.io"],
                    "The pull secret for registry.acme-risk.io has an expired robot token: "
                    "rotate the acme-registry pull secret in the risk namespace; new nodes "
                    "cannot pull the image, only nodes that cached it run pods"),
              hours=2.0)
    namespaces(s, "risk", "payments")
    node_list = nodes(s, 2, subnet=90, region="eu-west-1", instance="c6i.xlarge")
    gone = {"metadata": {"name": "ip-10-90-3-187.eu-west-1.compute.internal"}}  # interrupted
    c = s.cluster
    replaced = s.ago(minutes=52)
    fresh = c.node("ip-10-90-2-33.eu-west-1.compute.internal", created=replaced, zone=
                   "eu-west-1b", instance="c6i.xlarge", labels={
                       "karpenter.sh/capacity-type": "spot"}, pool="spot")
    for reason, message in (("Starting", "Starting kubelet."),
                            ("NodeHasSufficientMemory", f"Node {fresh['metadata']['name']} "
                             "status is now: NodeHasSufficientMemory"),
                            ("NodeReady", f"Node {fresh['metadata']['name']} status is now: "
                             "NodeReady"),
                            ("RegisteredNode", f"Node {fresh['metadata']['name']} event: "
                             "Registered Node in Controller")):
        c.event(fresh, reason, message, first=replaced + timedelta(seconds=20),
                component="node-controller" if reason == "RegisteredNode" else "kubelet",
                host=fresh["metadata"]["name"])
    kube_system(s, [*node_list, fresh])
    image = "registry.acme-risk.io/risk/fraud-scorer:1.22.0"
    tpl = Template([Ctr("fraud-scorer", image, requests={"cpu": "500m", "memory": "1Gi"},
                        limits={"memory": "1Gi"}, readiness=http_probe("/ready"),
                        liveness=http_probe("/healthz", delay=20))],
                   service_account="fraud-scorer", image_pull_secrets=["acme-registry"])
    work = c.workload("Deployment", "risk", "fraud-scorer", tpl, replicas=3,
                      created=s.ago(days=300))
    rs_created = s.ago(days=4, hours=3)
    rs = c.revision(work, 23, rs_created, tpl, replicas=3)
    survivor = c.pod(work, rs, node=node_list[0], created=rs_created + timedelta(seconds=4),
                     statuses={"fraud-scorer": running(rs_created + timedelta(seconds=16))})
    ghosts = [ghost_pod(s, rs, gone, rs_created + timedelta(seconds=40), replaced),
              ghost_pod(s, rs, gone, rs_created + timedelta(seconds=80), replaced)]
    error = (f'rpc error: code = Unknown desc = failed to pull and unpack image "{image}": '
             f'failed to resolve reference "{image}": failed to authorize: failed to fetch '
             "oauth token: unexpected status from GET request to https://registry.acme-risk.io/"
             "service/token?scope=repository%3Arisk%2Ffraud-scorer%3Apull&service=harbor-"
             "registry: 401 Unauthorized")
    stuck = []
    for i in range(2):
        created = replaced + timedelta(seconds=3 + i)
        pod = c.pod(work, rs, node=fresh, created=created, statuses={
            "fraud-scorer": image_pull_status(image=image)})
        image_pull_events(s, pod, "fraud-scorer", image, error, since=created +
                          timedelta(seconds=50))
        stuck.append(pod)
    work.availability_changed = replaced
    deployment_metrics(s, work, lambda t: 3 if t < replaced.timestamp() else 1)
    container_metrics(s, survivor, "fraud-scorer", memory=lambda t: 702 * MIB,
                      cpu=step(0.35, 0.98, replaced), limit_memory=1024 * MIB)
    http_metrics(s, "fraud-scorer", survivor, rps=step(10.0, 30.0, replaced),
                 codes={"200": const(0.999), "500": const(0.001)},
                 median=step(0.09, 0.62, replaced), histogram=True)
    for ghost in ghosts:
        container_metrics(s, ghost, "fraud-scorer", memory=lambda t: 690 * MIB, cpu=const(0.34))
        http_metrics(s, "fraud-scorer", ghost, rps=const(10.0), codes={
            "200": const(0.999), "500": const(0.001)}, median=const(0.09), histogram=True)
    _, callers = neighbour(s, "payments", "payments-api", "registry.acme-risk.io/payments/"
                           "payments-api:9.3.1", node_list, replicas=2, memory_mib=380)
    for pod in callers:
        noise_logs(s, pod, "payments-api", "payments-api", [
            ("warn", "fraud check timed out after 800ms, routing order to manual review",
             {"error.type": "TimeoutError"})], 30, start=replaced + timedelta(minutes=2))
        noise_logs(s, pod, "payments-api", "payments-api", [
            ("info", "payment captured", {}), ("warn", "card declined by issuer", {})], 15)
    neighbour(s, "risk", "rules-engine", "registry.acme-risk.io/risk/rules-engine:3.0.4",
              node_list, replicas=1, memory_mib=240, logs=[
                  ("warn", "rule set 'velocity-eu' reloaded with 2 deprecated predicates", {}),
                  ("info", "evaluated 1000 transactions", {})], n_logs=12)
    return s


@story
def enricher_insufficient_cpu() -> Story:
    s = Story("enricher-insufficient-cpu", "Event enrichment lagging behind",
              datetime(2026, 12, 1, 15, 40, tzinfo=UTC),
              "consumer lag on the clickstream topic keeps growing, dashboards are an hour "
              "behind. we scaled event-enricher to 8 replicas 40 min ago, no change",
              truth("unschedulable", "Deployment", "analytics", "event-enricher",
                    ["FailedScheduling", "Insufficient cpu", "max node group size reached"],
                    "The new replicas request 1500m CPU each and the node group is at its "
                    "maximum: lower the request or raise the node group's max size"),
              hours=2.0)
    namespaces(s, "analytics", "streaming")
    node_list = nodes(s, 4, subnet=24, region="us-west-2", instance="m6i.xlarge", pool="data")
    kube_system(s, node_list)
    c = s.cluster
    scaled = s.ago(minutes=41)
    tpl = Template([Ctr("event-enricher", "ghcr.io/acme-analytics/event-enricher:1.31.2",
                        port=9400, port_name="metrics",
                        requests={"cpu": "1500m", "memory": "1536Mi"}, limits={"memory":
                                                                              "2Gi"})],
                   service_account="event-enricher")
    work = c.workload("Deployment", "analytics", "event-enricher", tpl, replicas=8,
                      created=s.ago(days=210))
    rs_at = s.ago(days=3, hours=7)
    rs = c.revision(work, 14, rs_at, tpl, replicas=8)
    running_pods = [c.pod(work, rs, node=node_list[i], created=rs_at + timedelta(seconds=i * 3),
                          statuses={"event-enricher": running(rs_at + timedelta(seconds=15))})
                    for i in range(4)]
    message = ("0/4 nodes are available: 4 Insufficient cpu. preemption: 0/4 nodes are "
               "available: 4 No preemption victims found for incoming pod.")
    pending = [c.pod(work, rs, node=None, created=scaled + timedelta(seconds=1), statuses={},
                     scheduled_message=message) for _ in range(4)]
    scheduling_failed(s, pending, message, since=scaled + timedelta(seconds=1), autoscaler=
                      "pod didn't trigger scale-up: 1 max node group size reached")
    c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set {rs['metadata']['name']} "
            "from 4 to 8", first=scaled, component="deployment-controller")
    deployment_metrics(s, work, const(4), spec=step(4, 8, scaled))
    work.availability_changed = scaled
    for pod in running_pods:
        container_metrics(s, pod, "event-enricher", memory=lambda t: 1210 * MIB, cpu=const(1.46))
    for pod in pending:
        s.metrics.gauge("kube_pod_status_unschedulable", {"namespace": "analytics", "pod":
                        pod["metadata"]["name"]}, [(t, 1) for t in s.times
                                                   if t >= scaled.timestamp() + 30],
                        "Describes the unschedulable status for the pod.")
    s.metrics.gauge("kafka_consumergroup_lag", {"namespace": "streaming", "consumergroup":
                    "event-enricher", "topic": "clickstream"},
                    [(t, max(0.0, (t - s.times[0]) * 38.0 + 12000)) for t in s.times],
                    "Current approximate lag of a consumer group at topic/partition")
    for pod in running_pods:
        noise_logs(s, pod, "event-enricher", "event-enricher", [
            ("info", "enriched batch of 500 events", {}),
            ("warn", "geoip lookup miss for 10.0.0.0/8 address, skipping", {}),
            ("warn", "late event older than 15m dropped from session window", {})], 12)
    neighbour(s, "streaming", "kafka-exporter", "docker.io/danielqsj/kafka-exporter:v1.8.0",
              node_list, replicas=1, memory_mib=60, logs=[
                  ("error", "Cannot get oldest offset of topic __consumer_offsets partition "
                   "12: kafka server: Request was for a topic or partition that does not exist "
                   "on this broker", {})], n_logs=10)
    readiness_blip(s, "streaming", "schema-registry-ui", "docker.io/landoop/schema-registry-ui:"
                   "0.9.5", node_list, port=8000, path="/", minutes_ago=29)
    return s


@story
def recommender_taint() -> Story:
    s = Story("recommender-taint", "Recommendations slow after scale-out",
              datetime(2026, 12, 2, 12, 50, tzinfo=UTC),
              "recommendations widget is slow since ~12:15, p95 went from 200ms to 2s. "
              "recommender in the ml namespace",
              truth("unschedulable", "Deployment", "ml", "recommender",
                    ["FailedScheduling", "untolerated taint", "dedicated: ml"],
                    "The ml node pool got a dedicated=ml:NoSchedule taint that recommender does "
                    "not tolerate: add the toleration so the new replicas can schedule"),
              hours=2.0, interventions=[{"after_step": 1, "text": "please don't restart the "
                                         "recommender pods, model warm-up takes 10 minutes"}])
    namespaces(s, "ml", "shop")
    general = nodes(s, 4, subnet=36, region="eu-west-1")
    taint = [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}]
    ml_nodes = nodes(s, 2, subnet=37, region="eu-west-1", pool="ml", instance="r6i.2xlarge",
                     cpu="8", memory="64Gi", allocatable_cpu="7910m",
                     allocatable_memory="63112Mi", taints=taint, labels={"workload": "ml"})
    kube_system(s, general + ml_nodes)
    c = s.cluster
    scaled = s.ago(minutes=36)
    tpl = Template([Ctr("recommender", "ghcr.io/acme-ml/recommender:0.18.2",
                        requests={"cpu": "1", "memory": "4Gi"}, limits={"memory": "6Gi"},
                        readiness=http_probe("/v1/ready"), liveness=http_probe("/v1/health",
                                                                               delay=30))],
                   node_selector={"workload": "ml"}, service_account="recommender")
    work = c.workload("Deployment", "ml", "recommender", tpl, replicas=6,
                      created=s.ago(days=160))
    rs_at = s.ago(days=2, hours=4)
    rs = c.revision(work, 9, rs_at, tpl, replicas=6)
    serving = [c.pod(work, rs, node=ml_nodes[i % 2], created=rs_at + timedelta(seconds=5 * i),
                     statuses={"recommender": running(rs_at + timedelta(seconds=40))})
               for i in range(3)]
    c.service("ml", "recommender", {"app.kubernetes.io/name": "recommender"},
              created=s.ago(days=160))
    message = ("0/6 nodes are available: 2 node(s) had untolerated taint {dedicated: ml}, 4 "
               "node(s) didn't match Pod's node affinity/selector. preemption: 0/6 nodes are "
               "available: 6 Preemption is not helpful for scheduling.")
    pending = [c.pod(work, rs, node=None, created=scaled + timedelta(seconds=1), statuses={},
                     scheduled_message=message) for _ in range(3)]
    scheduling_failed(s, pending, message, since=scaled + timedelta(seconds=1))
    hpa_obj = hpa(s, work, minimum=3, maximum=12, current=6, desired=6, utilization=94,
                  scaled=scaled)
    work.availability_changed = scaled
    c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set {rs['metadata']['name']} "
            "from 3 to 6", first=scaled, component="deployment-controller")
    c.event(hpa_obj, "SuccessfulRescale", "New size: 6; reason: cpu resource utilization "
            "(percentage of request) above target", first=scaled,
            component="horizontal-pod-autoscaler")
    s.metrics.gauge("kube_horizontalpodautoscaler_status_current_replicas",
                    {"namespace": "ml", "horizontalpodautoscaler": "recommender"},
                    [(t, 3 if t < scaled.timestamp() else 6) for t in s.times],
                    "Current number of replicas of pods managed by this autoscaler.")
    s.metrics.gauge("kube_horizontalpodautoscaler_spec_max_replicas",
                    {"namespace": "ml", "horizontalpodautoscaler": "recommender"},
                    [(t, 12) for t in s.times], "Upper limit for the number of pods that can "
                    "be set by the autoscaler.")
    deployment_metrics(s, work, const(3), spec=step(3, 6, scaled))
    busy = s.ago(minutes=40)
    for pod in serving:
        container_metrics(s, pod, "recommender", memory=lambda t: 3.1 * 1024 * MIB,
                          cpu=step(0.55, 0.97, busy), limit_memory=6 * 1024 * MIB)
        http_metrics(s, "recommender", pod, rps=step(25.0, 58.0, busy), codes={
            "200": const(0.996), "504": step(0.001, 0.03, busy)},
            median=step(0.08, 0.9, busy), histogram=True)
    for pod in pending:
        s.metrics.gauge("kube_pod_status_unschedulable", {"namespace": "ml", "pod":
                        pod["metadata"]["name"]}, [(t, 1) for t in s.times
                                                   if t >= scaled.timestamp() + 30],
                        "Describes the unschedulable status for the pod.")
    _ml_neighbours(s, general, serving)
    return s


def _ml_neighbours(s: Story, general: list[Obj], serving: list[Obj]) -> None:
    neighbour(s, "ml", "feature-store", "ghcr.io/acme-ml/feature-store:2.3.0", general,
              memory_mib=900, logs=[
                  ("warn", "feature 'user_ltv_90d' is stale (last materialized 26h ago)", {}),
                  ("info", "served 200 feature vectors", {}),
                  ("info", "served 200 feature vectors", {})], n_logs=30)
    neighbour(s, "shop", "storefront", "ghcr.io/acme-shop/storefront:8.2.1", general,
              memory_mib=300, logs=[
                  ("warn", "recommendations widget took 1870ms, rendering fallback list", {}),
                  ("info", "GET / 200", {}), ("info", "GET /product/[id] 200", {})],
              n_logs=40, rps=120.0, codes={"200": 0.985, "404": 0.015}, revision=203,
              restarts={1: running(s.ago(days=1, hours=3), restarts=1, last=ended(
                  "Error", 1, s.ago(days=2), s.ago(days=1, hours=3, seconds=11)))})
    for pod in serving:
        noise_logs(s, pod, "recommender", "recommender", [
            ("info", "POST /v1/recommend 200", {}),
            ("warn", "request queue depth 48 exceeds 32, shedding to cached results", {}),
        ], 14, start=s.ago(minutes=38))
        noise_logs(s, pod, "recommender", "recommender", [
            ("info", "POST /v1/recommend 200", {})], 6, end=s.ago(minutes=40))
