"""Shape 5, unschedulable: a zone spread constraint (maxSkew 1, DoNotSchedule) blocks a
scale-out because one zone has no free CPU, while the other zones have plenty."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from . import _kit as k

SID = "search-scale-out-pending"
FS_MSG = ("0/7 nodes are available: 3 node(s) didn't match pod topology spread constraints, "
          "4 Insufficient cpu. preemption: 0/7 nodes are available: 3 Preemption is not "
          "helpful for scheduling, 4 No preemption victims found for incoming pod.")


def build(root: Path) -> None:
    s = k.Story(SID, "2026-08-14T18:25:00Z", seed=5505)
    old = s.ago(days=260)
    nodes = k.eks_nodes(s, [
        ("eu-west-1a", "c6i.2xlarge", "8", "15918216Ki", "compute-a"),
        ("eu-west-1a", "c6i.2xlarge", "8", "15918216Ki", "compute-a"),
        ("eu-west-1a", "c6i.2xlarge", "8", "15918216Ki", "compute-a"),
        ("eu-west-1b", "c6i.2xlarge", "8", "15918216Ki", "compute-b"),
        ("eu-west-1b", "c6i.2xlarge", "8", "15918216Ki", "compute-b"),
        ("eu-west-1c", "c6i.2xlarge", "8", "15918216Ki", "compute-c"),
        ("eu-west-1c", "c6i.2xlarge", "8", "15918216Ki", "compute-c"),
    ], old, s.ago(days=6, hours=4))
    a1, a2, a3, b1, b2, c1, c2 = nodes
    k.standard_cluster(s, nodes, old, s.ago(days=6, hours=3))
    for ns, team in (("search", "search"), ("recommendations", "discovery"),
                     ("ml", "ml-platform"), ("ingress-nginx", "platform")):
        k.namespace(s, ns, old, {"team": team})
    reg = "482913307715.dkr.ecr.eu-west-1.amazonaws.com"
    scale = s.ago(23, seconds=10)

    # ----- opensearch data nodes, one per zone, big requests -----
    osc = k.container("opensearch", "opensearchproject/opensearch:2.15.0", port=9200,
                      cpu="5", mem="10Gi", mem_limit="10Gi",
                      env=[{"name": "OPENSEARCH_JAVA_OPTS", "value": "-Xms5g -Xmx5g"}])
    osd = k.statefulset(s, "search", "opensearch-data", [osc], replicas=3, nodes=[a1, b1, c1],
                        created=old, pods_since=s.ago(days=5, hours=20),
                        service="opensearch-data-headless", cpu=3.1, mem=8.7 * k.GiB)
    k.service(s, "search", "opensearch", osd.template["metadata"]["labels"], 9200, 9200, old,
              pods=osd.pods)

    # ----- query-router: 6 -> 12 by the HPA; spread constraint DoNotSchedule -----
    qlab = {"app.kubernetes.io/name": "query-router", "app.kubernetes.io/part-of": "search"}
    qc = k.container(
        "query-router", f"{reg}/search/query-router:7.3.2", port=8080, cpu="1500m",
        mem="1Gi", mem_limit="2Gi",
        env=[{"name": "OPENSEARCH_URL", "value": "http://opensearch.search.svc:9200"},
             {"name": "ROUTER_WORKERS", "value": "6"}],
        readiness=k.http_probe("/ready", 8080, delay=5, period=5),
        liveness=k.http_probe("/live", 8080, delay=15, period=10))
    spread = {"topologySpreadConstraints": [{
        "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": qlab}}],
        "priorityClassName": "tier-2"}
    qr = k.deployment(
        s, "search", "query-router", [qc], replicas=6, nodes=[a2, b2, c2, a3, b2, c2],
        created=old, pods_since=s.ago(days=3, hours=2), revision=28, labels=qlab,
        pod_extra=spread, cpu=1.35, mem=700 * k.MiB,
        old_revisions=[(27, s.ago(days=10), [k.container(
            "query-router", f"{reg}/search/query-router:7.3.1", port=8080, cpu="1500m")])])
    h = qr.rs[-1]["metadata"]["name"].rsplit("-", 1)[1]
    rs = qr.rs[-1]
    owner = k.owner_ref("ReplicaSet", rs["metadata"]["name"], rs["metadata"]["uid"])
    new_running = []
    for i, nd in enumerate([a1, b1]):
        created = scale + timedelta(seconds=1 + i)
        pn = f"query-router-{h}-{s.suffix()}"
        p = k.make_pod(s, "search", pn, qr.template, owner, nd[0], created,
                       hash_label={"pod-template-hash": h}, host_ip=nd[1])
        new_running.append(p)
        qr.pods.append(p)
        rec = k.PodRec("search", pn, nd[0], ["query-router"], created, cpu=1.45,
                       mem=650 * k.MiB)
        s.pods.append(rec)
        qr.recs.append(rec)
        s.event("Pod", "search", pn, "Scheduled", f"Successfully assigned search/{pn} to "
                f"{nd[0]}", first=created, component="default-scheduler",
                uid=p["metadata"]["uid"])
    pending = []
    for i in range(4):
        created = scale + timedelta(seconds=1 + i)
        pn = f"query-router-{h}-{s.suffix()}"
        p = k.make_pod(s, "search", pn, qr.template, owner, None, created,
                       hash_label={"pod-template-hash": h}, phase="Pending",
                       conditions=[{"type": "PodScheduled", "status": "False",
                                    "reason": "Unschedulable", "message": FS_MSG,
                                    "lastTransitionTime": k.iso(created)}])
        pending.append(p)
        s.event("Pod", "search", pn, "FailedScheduling", FS_MSG, first=created,
                last=s.ago(seconds=s.rng.randint(30, 200)), count=s.rng.randint(8, 12),
                type_="Warning", component="default-scheduler", uid=p["metadata"]["uid"])
    dep = qr.obj
    dep["spec"]["replicas"] = 12
    dep["metadata"]["generation"] = 33
    dep["status"].update({"observedGeneration": 33, "replicas": 12, "updatedReplicas": 12,
                          "readyReplicas": 8, "availableReplicas": 8,
                          "unavailableReplicas": 4})
    dep["status"]["conditions"][0].update({
        "status": "False", "reason": "MinimumReplicasUnavailable",
        "message": "Deployment does not have minimum availability.",
        "lastUpdateTime": k.iso(scale), "lastTransitionTime": k.iso(scale)})
    dep["status"]["conditions"][1].update({
        "reason": "ReplicaSetUpdated", "message": f'ReplicaSet "query-router-{h}" is '
        "progressing.", "lastUpdateTime": k.iso(scale)})
    rs["spec"]["replicas"] = 12
    rs["status"].update({"replicas": 12, "fullyLabeledReplicas": 12, "readyReplicas": 8,
                         "availableReplicas": 8})
    rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] = "12"
    rs["metadata"]["annotations"]["deployment.kubernetes.io/max-replicas"] = "15"
    s.event("Deployment", "search", "query-router", "ScalingReplicaSet",
            f"Scaled up replica set query-router-{h} to 12 from 6", first=scale,
            component="deployment-controller")
    for p in pending + new_running:
        s.event("ReplicaSet", "search", rs["metadata"]["name"], "SuccessfulCreate",
                f"Created pod: {p['metadata']['name']}", first=scale, count=1,
                component="replicaset-controller", api_version="apps/v1")
    s.add({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": k.meta("query-router", "search", old, s.uid()),
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                    "name": "query-router"},
                 "minReplicas": 6, "maxReplicas": 24,
                 "metrics": [{"type": "Resource", "resource": {
                     "name": "cpu", "target": {"type": "Utilization",
                                               "averageUtilization": 65}}}]},
        "status": {"currentReplicas": 12, "desiredReplicas": 12,
                   "lastScaleTime": k.iso(scale),
                   "currentMetrics": [{"type": "Resource", "resource": {
                       "name": "cpu", "current": {"averageUtilization": 93,
                                                  "averageValue": "1398m"}}}],
                   "conditions": [
                       {"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale",
                        "message": "recommended size matches current size",
                        "lastTransitionTime": k.iso(scale + timedelta(minutes=5))},
                       {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound",
                        "message": "the HPA was able to successfully calculate a replica count "
                                   "from cpu resource utilization (percentage of request)",
                        "lastTransitionTime": k.iso(s.ago(days=5))},
                       {"type": "ScalingLimited", "status": "False", "reason": "DesiredWithinRange",
                        "message": "the desired count is within the acceptable range",
                        "lastTransitionTime": k.iso(scale)}]},
    })
    s.event("HorizontalPodAutoscaler", "search", "query-router", "SuccessfulRescale",
            "New size: 12; reason: cpu resource utilization (percentage of request) above "
            "target", first=scale, component="horizontal-pod-autoscaler",
            api_version="autoscaling/v2")
    k.service(s, "search", "query-router", qlab, 80, 8080, old, pods=qr.pods)

    def load(t: datetime) -> float:
        ramp = min(1.0, max(0.0, (t - s.ago(40)).total_seconds() / 900))
        return 1.0 + 1.25 * ramp

    def p50(t: datetime) -> float:
        if t < s.ago(38):
            return 0.038
        if t < scale + timedelta(minutes=1):
            return 0.038 + 0.20 * min(1.0, (t - s.ago(38)).total_seconds() / 840)
        return 0.16 * s.rng.uniform(0.95, 1.08)

    for rec in qr.recs:
        rec.cpu_fn = (lambda t: 1.05 * load(t) if t < scale else 1.42) if rec.created < scale \
            else (lambda t: 1.4)
    k.http_logs(s, qr, "query-router", s.ago(65), s.now, 75.0, [
        ("GET", "/v2/search?q={n}&page=1", 200, 70), ("GET", "/v2/suggest?prefix={n}", 200, 25),
        ("GET", "/v2/search?q={n}&page=1", 503, 1)],
        fmt="{method} {path} status={status} took={ms}ms")
    for p in qr.pods:
        if k.parse(p["metadata"]["creationTimestamp"]) > scale - timedelta(minutes=1):
            continue
        for t in s.spread(s.ago(30), s.now, 90.0):
            s.log(t, "search", p["metadata"]["name"], "query-router", "query-router", "warn",
                  f"request queue depth {s.rng.randint(40, 160)} exceeds soft limit 32; "
                  f"shedding low-priority suggest calls")
    k.lines(s, qr, "query-router", s.ago(65), s.now, 300.0, [
        ("warn", "opensearch slow response: {ms}0ms for index products_v12 (shard 3)", 2),
        ("info", "synonym set reloaded ({n} entries)", 1),
    ])

    # ----- indexer: unrelated rollout 41 minutes ago -----
    ir = s.ago(41)
    ix = k.deployment(
        s, "search", "indexer",
        [k.container("indexer", f"{reg}/search/indexer:4.9.0", cpu="500m", mem="1Gi",
                     mem_limit="2Gi")],
        replicas=2, nodes=[a3, b2], created=old, pods_since=ir, revision=40,
        old_revisions=[(39, s.ago(days=6), [k.container(
            "indexer", f"{reg}/search/indexer:4.8.7", cpu="500m")])], cpu=0.3,
        mem=900 * k.MiB)
    ih = ix.rs[-1]["metadata"]["name"].rsplit("-", 1)[1]
    s.event("Deployment", "search", "indexer", "ScalingReplicaSet",
            f"Scaled up replica set indexer-{ih} to 2", first=ir,
            component="deployment-controller")
    k.lines(s, ix, "indexer", ir, s.now, 60.0, [
        ("info", "bulk indexed {n}00 docs into products_v12 in {ms}ms", 6),
        ("warn", "bulk item rejected: version conflict for doc {id}, skipping", 1),
        ("error", "price feed message {hex} has no sku, dropped", 1),
    ])

    # ----- zone-c fillers: recommendations and ingest on c2, a batch on c1 -----
    rec_d = k.deployment(
        s, "recommendations", "recs-api",
        [k.container("recs", f"{reg}/discovery/recs-api:2.4.0", port=8080, cpu="2500m",
                     mem="3Gi", mem_limit="4Gi", readiness=k.http_probe("/ready", 8080))],
        replicas=3, nodes=[c2, a2, b2], created=old, pods_since=s.ago(days=4), cpu=1.1,
        mem=2.4 * k.GiB)
    k.service(s, "recommendations", "recs-api", {"app.kubernetes.io/name": "recs-api"}, 80,
              8080, old, pods=rec_d.pods)
    k.http_logs(s, rec_d, "recs-api", s.ago(65), s.now, 120.0, [
        ("POST", "/v1/recommendations", 200, 90), ("POST", "/v1/recommendations", 504, 1)],
        fmt="{method} {path} {status} {ms}ms")
    feat = k.deployment(
        s, "recommendations", "feature-store",
        [k.container("feature-store", f"{reg}/discovery/feature-store:1.1.3", port=8080,
                     cpu="1500m", mem="2Gi")],
        replicas=1, nodes=[c1], created=old, pods_since=s.ago(days=4), cpu=0.8,
        mem=1.6 * k.GiB)
    k.lines(s, feat, "feature-store", s.ago(65), s.now, 120.0, [
        ("info", "materialized {n} feature rows for user_embeddings", 3),
        ("warn", "redis pipeline took {ms}ms (> 50ms)", 1),
    ])
    ing = k.deployment(
        s, "ingress-nginx", "ingress-nginx-controller",
        [k.container("controller", "registry.k8s.io/ingress-nginx/controller:v1.11.2", port=80,
                     cpu="250m", mem="512Mi", mem_limit="1Gi")],
        replicas=3, nodes=[a1, b1, c2], created=old, pods_since=s.ago(days=5), cpu=0.5,
        mem=300 * k.MiB)
    for t in s.spread(s.ago(65), s.now, 30.0):
        p = s.rng.choice(ing.pods)
        slow = t > s.ago(30)
        rt = s.rng.lognormvariate(-1.8 if slow else -3.2, 0.5)
        code = s.rng.choices([200, 503, 499], [96, 2 if slow else 0, 2])[0]
        s.log(t, "ingress-nginx", p["metadata"]["name"], "controller", "ingress-nginx", "info",
              f'10.20.{s.rng.randint(32, 127)}.{s.rng.randint(2, 250)} - - '
              f'[{t.strftime("%d/%b/%Y:%H:%M:%S +0000")}] "GET /api/search?q=backpack HTTP/2.0" '
              f'{code} {s.rng.randint(800, 20000)} "https://shop.example.com/" "Mozilla/5.0" 88 '
              f'{rt:.3f} [search-query-router-80] [] {s.rng.choice(qr.pods[:8])["status"]["podIP"]}'
              f':8080 {s.rng.randint(800, 20000)} {rt:.3f} {code} {s.hexid(32)}',
              http__response__status_code=code)

    # ----- ml: a GPU job Pending for an unrelated reason -----
    tc = k.container("trainer", f"{reg}/ml/ranker-trainer:0.3.0", cpu="4", mem="24Gi",
                     mem_limit="24Gi")
    tc["resources"]["requests"]["nvidia.com/gpu"] = "1"
    tc["resources"]["limits"]["nvidia.com/gpu"] = "1"
    juid = s.uid()
    jt = k.template({"job-name": "ranker-retrain-0814"}, [tc])
    jt["spec"]["restartPolicy"] = "Never"
    s.add({"apiVersion": "batch/v1", "kind": "Job",
           "metadata": k.meta("ranker-retrain-0814", "ml", s.ago(55), juid,
                              labels={"job-name": "ranker-retrain-0814"}),
           "spec": {"backoffLimit": 2, "completions": 1, "parallelism": 1, "template": jt},
           "status": {"active": 1, "ready": 0, "startTime": k.iso(s.ago(55))}})
    gmsg = ("0/7 nodes are available: 7 Insufficient nvidia.com/gpu. preemption: 0/7 nodes are "
            "available: 7 No preemption victims found for incoming pod.")
    gp = k.make_pod(s, "ml", f"ranker-retrain-0814-{s.suffix()}", jt,
                    k.owner_ref("Job", "ranker-retrain-0814", juid, api="batch/v1"), None,
                    s.ago(55), phase="Pending",
                    conditions=[{"type": "PodScheduled", "status": "False",
                                 "reason": "Unschedulable", "message": gmsg,
                                 "lastTransitionTime": k.iso(s.ago(55))}])
    s.event("Pod", "ml", gp["metadata"]["name"], "FailedScheduling", gmsg, first=s.ago(55),
            last=s.ago(6), count=12, type_="Warning", component="default-scheduler",
            uid=gp["metadata"]["uid"])

    # ----- metrics -----
    s.pod_metrics()
    for p in pending:
        s.gauge("kube_pod_status_phase", "The pods current phase.",
                {"namespace": "search", "pod": p["metadata"]["name"], "phase": "Pending"},
                lambda t: 1.0, begin=scale)
        s.gauge("kube_pod_status_unschedulable",
                "Describes the unschedulable status for the pod.",
                {"namespace": "search", "pod": p["metadata"]["name"]}, lambda t: 1.0,
                begin=scale)
    s.gauge("kube_deployment_spec_replicas", "Number of desired pods for a deployment.",
            {"namespace": "search", "deployment": "query-router"},
            lambda t: 12.0 if t >= scale else 6.0)
    s.gauge("kube_deployment_status_replicas_available",
            "The number of available replicas per deployment.",
            {"namespace": "search", "deployment": "query-router"},
            lambda t: 8.0 if t >= scale + timedelta(seconds=30) else 6.0)
    s.gauge("kube_deployment_status_replicas_unavailable",
            "The number of unavailable replicas per deployment.",
            {"namespace": "search", "deployment": "query-router"},
            lambda t: 4.0 if t >= scale else 0.0)
    s.gauge("kube_horizontalpodautoscaler_status_desired_replicas",
            "Desired number of replicas of pods managed by this autoscaler.",
            {"namespace": "search", "horizontalpodautoscaler": "query-router"},
            lambda t: 12.0 if t >= scale else 6.0)
    s.gauge("kube_horizontalpodautoscaler_spec_max_replicas",
            "Upper limit for the number of pods that can be set by the autoscaler.",
            {"namespace": "search", "horizontalpodautoscaler": "query-router"},
            lambda t: 24.0, every=5)
    for nd in nodes:
        s.gauge("kube_node_status_allocatable", "The allocatable for different resources of a "
                "node that are available for scheduling.",
                {"node": nd[0], "resource": "cpu", "unit": "core"}, lambda t: 7.91, every=5)
    for p in qr.pods[:6] + new_running:
        s.counter("http_requests_total", "Total HTTP requests.",
                  {"namespace": "search", "service": "query-router",
                   "pod": p["metadata"]["name"], "code": "200"},
                  lambda t: 55 * load(t) / (1.0 if t < scale else 1.33),
                  begin=k.parse(p["metadata"]["creationTimestamp"]))
        s.counter("http_requests_total", "Total HTTP requests.",
                  {"namespace": "search", "service": "query-router",
                   "pod": p["metadata"]["name"], "code": "503"},
                  lambda t: 0.0 if t < s.ago(30) else 0.9, start=20,
                  begin=k.parse(p["metadata"]["creationTimestamp"]))
    s.latency("query-router", "search", {}, lambda t: 330 * load(t), p50)

    k.scenario(
        s, title="query-router scale-out stuck, search slow",
        report=(
            "Search is slow for the back-to-school campaign (p50 went from ~40ms to ~160ms). "
            "The HPA scaled query-router to 12 but 4 pods have been Pending for 20 minutes. "
            "I think the cluster is simply out of nodes; no autoscaler on this cluster, so "
            "should we bump the compute node groups? Or is the indexer rollout eating CPU?\n"
        ),
        category="unschedulable", kind="Deployment", ns="search", name="query-router",
        evidence=["didn't match pod topology spread constraints",
                  "whenUnsatisfiable: DoNotSchedule", "Insufficient cpu"],
        fix=("query-router's topologySpreadConstraints (zone, maxSkew 1, DoNotSchedule) cap "
             "zones a and b at one pod more than zone c, and zone c has no CPU left for a "
             "1500m request, so 4 replicas stay Pending although zones a and b have room. Set "
             "whenUnsatisfiable: ScheduleAnyway (or raise maxSkew), or add capacity in "
             "eu-west-1c specifically; nodes in a or b would not help."),
    )
    s.write(root)
    k.check_evidence(s, root)
