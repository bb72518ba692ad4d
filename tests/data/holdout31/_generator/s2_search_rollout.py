"""Shape 2: a ResourceQuota on the pod count is reached; a rollout's surge pod is refused.

The catalog namespace has a `pods: 24` quota. catalog-api's HPA added two pods at 13:50
for the afternoon traffic, using the last of the headroom. At 14:41 search-api 2.8.0
started rolling out with maxSurge 1 / maxUnavailable 0: the new ReplicaSet cannot create
its first pod ("exceeded quota"), the Deployment passes its progress deadline, and the
old pods keep serving. The report suspects the new image.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from . import kube
from .emit import Scenario, steps
from .fleet import app, basic_signals, chatter, make_nodes, platform, simple

ID = "search-deploy-stuck"
NOW = datetime.fromisoformat("2026-11-26T15:25:00+00:00")
ROLLOUT = datetime.fromisoformat("2026-11-26T14:41:12+00:00")
HPA_UP = datetime.fromisoformat("2026-11-26T13:50:31+00:00")
NS = "catalog"


def build() -> Scenario:
    rng = random.Random(31_02)
    sc = Scenario(
        id=ID, title="search-api 2.8.0 deploy never finishes", now=NOW,
        report=(
            "search-api 2.8.0 has been 'progressing' for 40+ min, argo marked the sync "
            "Degraded and the pipeline timed out. is the new image broken? search itself "
            "still answers. need this out today for the promo\n"),
        truth={"category": "quota_exceeded",
               "culprit": {"kind": "Deployment", "namespace": NS, "name": "search-api"},
               "evidence": ["exceeded quota: catalog-compute",
                            "requested: pods=1, used: pods=24, limited: pods=24",
                            "ProgressDeadlineExceeded"],
               "fix": "Raise the catalog-compute pods quota (or lower catalog-api's HPA "
                      "floor / give search-api maxUnavailable 1) so the surge pod can be "
                      "created; the 2.8.0 image is not at fault."})
    created = NOW - timedelta(days=320)
    sc.add(kube.namespace(NS, created, {"team": "catalog"}))
    names = [f"gke-prod-eu-pool-a-3f2c91de-{s}" for s in ("7xkq", "b2m9", "jq4t", "w8zn")]
    nodes = make_nodes(sc, names,
                       created=NOW - timedelta(days=33), cpu="16", memory="64Gi",
                       labels={"cloud.google.com/gke-nodepool": "pool-a",
                               "node.kubernetes.io/instance-type": "n2-standard-16",
                               "topology.kubernetes.io/zone": "europe-west1-b"})
    since = NOW - timedelta(days=6, hours=2)
    platform(sc, rng, nodes, created, since=since)

    surge = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    old_image = "europe-docker.pkg.dev/shop-prod/catalog/search-api:2.7.4"
    new_image = "europe-docker.pkg.dev/shop-prod/catalog/search-api:2.8.0"
    search = app(sc, rng, "search-api", NS, replicas=8, nodes=nodes, created=created,
                 images=[("europe-docker.pkg.dev/shop-prod/catalog/search-api:2.7.2",
                          NOW - timedelta(days=15)),
                         (old_image, NOW - timedelta(days=5, hours=22)),
                         (new_image, ROLLOUT)],
                 serving=2, new_desired=1,
                 containers=simple("search-api", cpu="500m", memory="1Gi",
                                   limit_memory="1536Mi", probe="/healthz",
                                   env={"OPENSEARCH_URL": "http://opensearch.catalog-data:9200"}))
    search.deployment["spec"]["strategy"] = surge
    new_rs = search.replicasets[-1]
    new_pod = f"{new_rs['metadata']['name']}-{kube.suffix(rng)}"
    refusal = (f'pods "{new_pod}" is forbidden: exceeded quota: catalog-compute, requested: '
               "pods=1, used: pods=24, limited: pods=24")
    new_rs["status"] = {"replicas": 0, "observedGeneration": 1, "conditions": [
        {"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
         "message": refusal, "lastTransitionTime": kube.ts(ROLLOUT + timedelta(seconds=1))}]}
    search.deployment["status"] = {
        "observedGeneration": 4, "replicas": 8, "updatedReplicas": 0, "readyReplicas": 8,
        "availableReplicas": 8, "conditions": [
            {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
             "message": "Deployment has minimum availability.",
             "lastUpdateTime": kube.ts(NOW - timedelta(days=5, hours=21)),
             "lastTransitionTime": kube.ts(NOW - timedelta(days=5, hours=21))},
            {"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
             "message": refusal, "lastUpdateTime": kube.ts(ROLLOUT + timedelta(seconds=1)),
             "lastTransitionTime": kube.ts(ROLLOUT + timedelta(seconds=1))},
            {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
             "message": f'ReplicaSet "{new_rs["metadata"]["name"]}" has timed out progressing.',
             "lastUpdateTime": kube.ts(ROLLOUT + timedelta(seconds=601)),
             "lastTransitionTime": kube.ts(ROLLOUT + timedelta(seconds=601))}]}
    search.deployment["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"] = \
        "catalog:apps/Deployment:catalog/search-api"

    catalog_api = app(sc, rng, "catalog-api", NS, replicas=6, nodes=nodes, created=created,
                      images=[("europe-docker.pkg.dev/shop-prod/catalog/catalog-api:5.3.0",
                               NOW - timedelta(days=8))], pod_started=since,
                      containers=simple("catalog-api", cpu="500m", memory="768Mi",
                                        limit_memory="1Gi", probe="/healthz"))
    for pod_obj in catalog_api.pods[4:]:
        _started_at(pod_obj, HPA_UP + timedelta(seconds=rng.randint(0, 9)))
    price = app(sc, rng, "price-sync", NS, replicas=4, nodes=nodes, created=created,
                images=[("europe-docker.pkg.dev/shop-prod/catalog/price-sync:1.8.1",
                         NOW - timedelta(days=20))], pod_started=since,
                containers=simple("price-sync", cpu="250m", memory="512Mi", probe="/healthz"))
    resizer = app(sc, rng, "image-resizer", NS, replicas=3, nodes=nodes, created=created,
                  images=[("europe-docker.pkg.dev/shop-prod/catalog/image-resizer:0.9.12",
                           NOW - timedelta(days=44))], pod_started=since,
                  containers=simple("image-resizer", cpu="300m", memory="512Mi",
                                    limit_memory="1Gi", probe="/healthz"))
    reco = app(sc, rng, "recommendations", NS, replicas=3, nodes=nodes, created=created,
               images=[("europe-docker.pkg.dev/shop-prod/catalog/recommendations:3.0.6",
                        NOW - timedelta(days=3, hours=4))],
               containers=simple("recommendations", cpu="250m", memory="768Mi",
                                 limit_memory="1Gi", probe="/healthz"))

    sc.add(_quota(created), _limits(created), _hpa(created))
    _events(sc, search, new_pod, refusal)
    start = NOW - timedelta(hours=6)
    for target, rps in ((search, 35.0), (catalog_api, 0.0), (reco, 0.0)):
        basic_signals(sc, target, start, NOW, rps=rps, cores=0.3, mem_mib=700)
    for target in (price, resizer):
        basic_signals(sc, target, start, NOW, cores=0.1, mem_mib=300)
    for at in steps(start, NOW, timedelta(minutes=5)):
        used = 22 if at < HPA_UP else 24
        extra = used - 24  # the two HPA pods, 500m and 768Mi each
        memory = (18688 + 768 * extra) * 2**20
        for resource, hard, value in (("pods", 24, used), ("requests.cpu", 16, 9.65 + 0.5 * extra),
                                      ("requests.memory", 48 * 2**30, memory)):
            for kind, number in (("hard", hard), ("used", value)):
                sc.sample("kube_resourcequota", "gauge",
                          {"namespace": NS, "resourcequota": "catalog-compute",
                           "resource": resource, "type": kind}, at, float(number),
                          "Information about resource quota.")
    _logs(sc, rng, search, catalog_api, price, reco)
    return sc


def _started_at(pod_obj: dict, at: datetime) -> None:
    pod_obj["metadata"]["creationTimestamp"] = kube.ts(at)
    pod_obj["status"]["startTime"] = kube.ts(at + timedelta(seconds=1))
    for condition in pod_obj["status"]["conditions"]:
        condition["lastTransitionTime"] = kube.ts(at + timedelta(seconds=12))
    for status in pod_obj["status"]["containerStatuses"]:
        status["state"]["running"]["startedAt"] = kube.ts(at + timedelta(seconds=3))


def _quota(created: datetime) -> dict:
    hard = {"pods": "24", "requests.cpu": "16", "requests.memory": "48Gi",
            "limits.memory": "64Gi", "persistentvolumeclaims": "10"}
    used = {"pods": "24", "requests.cpu": "9650m", "requests.memory": "18688Mi",
            "limits.memory": "26624Mi", "persistentvolumeclaims": "0"}
    return {"apiVersion": "v1", "kind": "ResourceQuota",
            "metadata": kube.meta("catalog-compute", NS, created,
                                  labels={"app.kubernetes.io/managed-by": "platform-terraform"}),
            "spec": {"hard": hard}, "status": {"hard": hard, "used": used}}


def _limits(created: datetime) -> dict:
    return {"apiVersion": "v1", "kind": "LimitRange",
            "metadata": kube.meta("catalog-defaults", NS, created),
            "spec": {"limits": [{"type": "Container",
                                 "default": {"cpu": "1", "memory": "512Mi"},
                                 "defaultRequest": {"cpu": "100m", "memory": "256Mi"},
                                 "max": {"memory": "4Gi"}}]}}


def _hpa(created: datetime) -> dict:
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": kube.meta("catalog-api", NS, created),
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                        "name": "catalog-api"},
                     "minReplicas": 4, "maxReplicas": 10,
                     "metrics": [{"type": "Resource", "resource": {
                         "name": "cpu", "target": {"type": "Utilization",
                                                   "averageUtilization": 70}}}]},
            "status": {"currentReplicas": 6, "desiredReplicas": 6,
                       "lastScaleTime": kube.ts(HPA_UP),
                       "currentMetrics": [{"type": "Resource", "resource": {
                           "name": "cpu", "current": {"averageUtilization": 64,
                                                      "averageValue": "321m"}}}],
                       "conditions": [
                           {"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale",
                            "message": "recommended size matches current size",
                            "lastTransitionTime": kube.ts(HPA_UP + timedelta(minutes=5))},
                           {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound",
                            "message": "the HPA was able to successfully calculate a replica "
                                       "count from cpu resource utilization (percentage of "
                                       "request)",
                            "lastTransitionTime": kube.ts(NOW - timedelta(days=6))},
                           {"type": "ScalingLimited", "status": "False",
                            "reason": "DesiredWithinRange",
                            "message": "the desired count is within the acceptable range",
                            "lastTransitionTime": kube.ts(NOW - timedelta(days=6))}]}}


def _events(sc: Scenario, search, new_pod: str, refusal: str) -> None:
    new_rs = search.replicasets[-1]["metadata"]["name"]
    sc.add(kube.event(NS, kind="Deployment", name="search-api", reason="ScalingReplicaSet",
                      component="deployment-controller", api="apps/v1",
                      message=f"Scaled up replica set {new_rs} to 1",
                      first=ROLLOUT, last=ROLLOUT),
           kube.event(NS, kind="ReplicaSet", name=new_rs, reason="FailedCreate", type="Warning",
                      component="replicaset-controller", api="apps/v1",
                      message=f"Error creating: {refusal}", count=19,
                      first=ROLLOUT + timedelta(seconds=1), last=NOW - timedelta(minutes=3)),
           kube.event(NS, kind="HorizontalPodAutoscaler", name="catalog-api",
                      reason="FailedGetResourceMetric", type="Warning",
                      component="horizontal-pod-autoscaler", api="autoscaling/v2",
                      message="failed to get cpu utilization: unable to get metrics for "
                              "resource cpu: no metrics returned from resource metrics API",
                      count=2, first=NOW - timedelta(minutes=51), last=NOW - timedelta(minutes=50)),
           kube.event(NS, kind="Pod", name=search.pods[3]["metadata"]["name"], reason="Unhealthy",
                      type="Warning", host=search.pods[3]["spec"]["nodeName"],
                      field_path="spec.containers{search-api}",
                      message=f'Readiness probe failed: Get "http://{search.pods[3]["status"]["podIP"]}'
                              ':8080/healthz": context deadline exceeded (Client.Timeout exceeded '
                              "while awaiting headers)",
                      first=NOW - timedelta(minutes=29), last=NOW - timedelta(minutes=29)))
    del new_pod


def _logs(sc: Scenario, rng: random.Random, search, catalog_api, price, reco) -> None:
    start = NOW - timedelta(hours=8)
    chatter(sc, search, start, NOW, timedelta(minutes=2), [
        ("info", "GET /v2/search q=<redacted> hits={n} took={ms}ms"),
        ("info", "GET /v2/search q=<redacted> hits={n} took={ms}ms"),
        ("info", "GET /v2/suggest prefix=<redacted> took={ms}ms"),
        ("warn", "opensearch query slow took=1{ms}2ms shard=catalog-v7[3]"),
    ], rng)
    chatter(sc, catalog_api, start, NOW, timedelta(minutes=2), [
        ("info", "GET /v1/products/{id} 200 {ms}ms"),
        ("info", "GET /v1/categories 200 {ms}ms"),
        ("info", "cache refresh products n={n}"),
    ], rng)
    chatter(sc, price, start, NOW, timedelta(minutes=6), [
        ("info", "price feed batch applied skus={n}"),
        ("warn", "price feed supplier=acme late by {n}s"),
    ], rng)
    chatter(sc, reco, start, NOW, timedelta(minutes=4), [
        ("info", "served recommendations user={id} model=als-2026-11-20 took={ms}ms"),
        ("error", "feature fetch failed user={id}: context canceled (client went away)"),
        ("info", "served recommendations user={id} model=als-2026-11-20 took={ms}ms"),
    ], rng)
