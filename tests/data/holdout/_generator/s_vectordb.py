"""ML platform: the new vector database never starts. Its StatefulSet's volume claim asks a
StorageClass (made with it, Immediate binding) for a regional PD but allows one zone only, so
provisioning fails, the claim stays Pending and the scheduler refuses the pod."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.scenario_tools.common import Story, truth
from tests.scenario_tools.kube import Ctr, Template, ended, http_probe, iso, running

from .base import (
    PCtr,
    add_endpoints,
    add_service,
    daemonset,
    deployment,
    gauge,
    gke_nodes,
    http_series,
    logs_for,
    quiet_container,
    set_times,
)

ID = "vectordb-rollout-stalled"
NOW = datetime.fromisoformat("2027-01-14T10:32:00+00:00")
PROJECT = "mlp-prod-4471"
REG = "europe-west4-docker.pkg.dev/mlp-prod-4471/platform"
SC = "regional-ssd-vectordb"
BUCKETS = (0.01, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2)


def build() -> Story:
    s = Story(
        id="vectordb-rollout-stalled",
        title="New vector database of the ML platform never comes up",
        now=NOW,
        report="""\
we shipped the qdrant-based vector store for semantic search ~45 min ago (argo app
ml-platform-vectordb) and it's still not up. argo shows it progressing forever, semantic-search
only returns keyword results and the embedding indexer keeps retrying. what's going on?
""",
        truth=truth(
            "unschedulable", "StatefulSet", "ml-platform", "vectordb",
            ["unbound immediate PersistentVolumeClaims", "ProvisioningFailed",
             "need 2 zones from topology, only got 1 unique zones", SC, "Pending"],
            f"Fix the StorageClass {SC}: a regional PD needs two zones in allowedTopologies (or "
            "use a zonal class such as premium-rwo with WaitForFirstConsumer); then delete the "
            "Pending claim storage-vectordb-0 so the StatefulSet recreates it and vectordb-0 "
            "can be scheduled."))
    set_times(s, 2.5, 30)
    c = s.cluster
    t0 = NOW - timedelta(minutes=46, seconds=21)
    for ns, days in (("default", 380), ("kube-system", 380), ("ml-platform", 164),
                     ("storefront", 380), ("gmp-public", 380)):
        c.namespace(ns, s.ago(days=days))
    general = gke_nodes(s, 3, project=PROJECT, cluster="mlp-prod", pool="general-e2",
                        region="europe-west4", instance="e2-standard-8",
                        kubelet="v1.31.5-gke.1233000", cpu="8", memory="32880516Ki",
                        alloc_cpu="7910m", alloc_memory="29094276Ki", days=5.4)
    highmem = gke_nodes(s, 1, project=PROJECT, cluster="mlp-prod", pool="highmem-n2",
                        region="europe-west4", instance="n2-highmem-4",
                        kubelet="v1.31.5-gke.1233000", cpu="4", memory="32876964Ki",
                        alloc_cpu="3920m", alloc_memory="28409220Ki", days=3.1)
    nodes = general + highmem

    # ---- storage classes: GKE's own and the one shipped with vectordb
    def storage_class(name: str, provisioner: str, params: dict, mode: str, created: datetime,
                      default: bool = False, topo: list | None = None,
                      labels: dict | None = None) -> None:
        meta = c.meta("StorageClass", name, "", created, labels or {
            "addonmanager.kubernetes.io/mode": "EnsureExists"})
        if default:
            meta["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
        obj = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": meta,
               "provisioner": provisioner, "parameters": params, "reclaimPolicy": "Delete",
               "volumeBindingMode": mode, "allowVolumeExpansion": True}
        if topo:
            obj["allowedTopologies"] = topo
        c.add(obj)
    storage_class("premium-rwo", "pd.csi.storage.gke.io", {"type": "pd-ssd"},
                  "WaitForFirstConsumer", s.ago(days=380))
    storage_class("standard", "kubernetes.io/gce-pd", {"type": "pd-standard"}, "Immediate",
                  s.ago(days=380))
    storage_class("standard-rwo", "pd.csi.storage.gke.io", {"type": "pd-balanced"},
                  "WaitForFirstConsumer", s.ago(days=380), default=True)
    storage_class(SC, "pd.csi.storage.gke.io", {"type": "pd-ssd",
                                                "replication-type": "regional-pd"},
                  "Immediate", t0 - timedelta(seconds=3),
                  topo=[{"matchLabelExpressions": [{"key": "topology.gke.io/zone",
                                                    "values": ["europe-west4-a"]}]}],
                  labels={"app.kubernetes.io/instance": "ml-platform-vectordb",
                          "app.kubernetes.io/managed-by": "Helm"})

    # ---- the vectordb StatefulSet: one pod, Pending on its claim
    labels = {"app.kubernetes.io/name": "vectordb", "app.kubernetes.io/instance":
              "ml-platform-vectordb", "app.kubernetes.io/version": "1.12.5"}
    qd = PCtr("vectordb", "docker.io/qdrant/qdrant:v1.12.5", port=None,
              requests={"cpu": "1", "memory": "6Gi"}, limits={"memory": "6Gi"},
              env={"QDRANT__CLUSTER__ENABLED": "true", "QDRANT__CLUSTER__P2P__PORT": "6335",
                   "QDRANT__STORAGE__STORAGE_PATH": "/qdrant/storage"},
              command=["/bin/bash", "-c"],
              args=["exec ./entrypoint.sh --uri http://vectordb-0.vectordb-headless:6335"],
              readiness=http_probe("/readyz", 6333, delay=5, period=5),
              startup=http_probe("/healthz", 6333, delay=10, period=5, failures=30),
              mounts=[{"mountPath": "/qdrant/storage", "name": "storage"},
                      {"mountPath": "/qdrant/config/production.yaml", "name": "qdrant-config",
                       "subPath": "production.yaml"}],
              ports=[("http", 6333, "TCP"), ("grpc", 6334, "TCP"), ("p2p", 6335, "TCP")])
    tpl = Template([qd], service_account="vectordb", volumes=[
        {"name": "qdrant-config", "configMap": {"name": "vectordb", "defaultMode": 420}}],
        node_selector={"cloud.google.com/gke-nodepool": "highmem-n2"})
    sts = c.workload("StatefulSet", "ml-platform", "vectordb", tpl, replicas=3, created=t0,
                     labels=labels)
    sts.obj["spec"].update({
        "serviceName": "vectordb-headless",
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled":
                                                 "Retain"},
        "revisionHistoryLimit": 10,
        "volumeClaimTemplates": [{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                  "metadata": {"name": "storage", "labels": {
                                      "app.kubernetes.io/name": "vectordb"}},
                                  "spec": {"accessModes": ["ReadWriteOnce"],
                                           "resources": {"requests": {"storage": "40Gi"}},
                                           "storageClassName": SC, "volumeMode": "Filesystem"},
                                  "status": {"phase": "Pending"}}]})
    rev = c.revision(sts, 1, t0)
    pod = c.pod(sts, rev, node=None, created=t0 + timedelta(seconds=1), statuses={},
                name="vectordb-0",
                scheduled_message="0/4 nodes are available: pod has unbound immediate "
                "PersistentVolumeClaims. preemption: 0/4 nodes are available: 4 Preemption is "
                "not helpful for scheduling.")
    pod["metadata"]["labels"]["apps.kubernetes.io/pod-index"] = "0"
    pod["spec"]["hostname"] = "vectordb-0"
    pod["spec"]["subdomain"] = "vectordb-headless"
    pod["spec"]["volumes"] = [{"name": "storage", "persistentVolumeClaim": {
        "claimName": "storage-vectordb-0"}}, *pod["spec"]["volumes"]]
    pod["spec"]["priority"] = 0
    pvc_meta = c.meta("PersistentVolumeClaim", "storage-vectordb-0", "ml-platform",
                      t0 + timedelta(seconds=1), {"app.kubernetes.io/name": "vectordb"},
                      annotations={"volume.beta.kubernetes.io/storage-provisioner":
                                   "pd.csi.storage.gke.io",
                                   "volume.kubernetes.io/storage-provisioner":
                                   "pd.csi.storage.gke.io"},
                      finalizers=["kubernetes.io/pvc-protection"])
    pvc = c.add({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": pvc_meta,
                 "spec": {"accessModes": ["ReadWriteOnce"],
                          "resources": {"requests": {"storage": "40Gi"}},
                          "storageClassName": SC, "volumeMode": "Filesystem"},
                 "status": {"phase": "Pending"}})
    c.add({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": c.meta("ConfigMap", "vectordb", "ml-platform", t0 - timedelta(seconds=2),
                              labels),
           "data": {"production.yaml": "log_level: INFO\nstorage:\n  performance:\n"
                    "    max_search_threads: 0\n  optimizers:\n    default_segment_number: 4\n"
                    "cluster:\n  enabled: true\n  consensus:\n    tick_period_ms: 100\n"}})
    headless = add_service(s, "ml-platform", "vectordb-headless", {"app.kubernetes.io/name":
                                                                   "vectordb"},
                           [{"name": "http", "port": 6333, "protocol": "TCP", "targetPort": 6333},
                            {"name": "grpc", "port": 6334, "protocol": "TCP", "targetPort": 6334},
                            {"name": "p2p", "port": 6335, "protocol": "TCP", "targetPort": 6335}],
                           created=t0 - timedelta(seconds=2), labels=labels, headless=True)
    headless["spec"]["publishNotReadyAddresses"] = True
    svc = add_service(s, "ml-platform", "vectordb", {"app.kubernetes.io/name": "vectordb"},
                      [{"name": "http", "port": 6333, "protocol": "TCP", "targetPort": 6333},
                       {"name": "grpc", "port": 6334, "protocol": "TCP", "targetPort": 6334}],
                      created=t0 - timedelta(seconds=2), labels=labels,
                      cluster_ip="34.118.231.88")
    add_endpoints(s, headless, [], [])
    add_endpoints(s, svc, [], [])

    # events of the hour: controller, provisioner, scheduler
    c.event(sts.obj, "SuccessfulCreate", "create Claim storage-vectordb-0 Pod vectordb-0 in "
            "StatefulSet vectordb success", first=t0 + timedelta(seconds=1),
            component="statefulset-controller")
    c.event(sts.obj, "SuccessfulCreate", "create Pod vectordb-0 in StatefulSet vectordb "
            "successful", first=t0 + timedelta(seconds=1), component="statefulset-controller")
    csi = ("pd.csi.storage.gke.io_gke-7a51c0e39d2f4be8a1c6-5e2b-7d41-vm_"
           "0d6c3e24-51ab-4c2f-9e0a-8b3f6d21c7e5")
    c.event(pvc, "ExternalProvisioning", "Waiting for a volume to be created either by the "
            "external provisioner 'pd.csi.storage.gke.io' or manually by the system "
            "administrator. If volume creation is delayed, please verify that the provisioner is "
            "running and correctly registered.", first=t0 + timedelta(seconds=1),
            last=NOW - timedelta(seconds=9), count=186, component="persistentvolume-controller")
    fails = [t0 + timedelta(seconds=2)]
    gap = 1.0
    while True:
        nxt = fails[-1] + timedelta(seconds=min(gap, 300) + s.rng.uniform(0, 1.5))
        if nxt > NOW:
            break
        fails.append(nxt)
        gap *= 2
    c.event(pvc, "Provisioning", 'External provisioner is provisioning volume for claim '
            '"ml-platform/storage-vectordb-0"', first=fails[0], last=fails[-1], count=len(fails),
            component="pd.csi.storage.gke.io", host=csi)
    c.event(pvc, "ProvisioningFailed", f'failed to provision volume with StorageClass "{SC}": '
            "rpc error: code = InvalidArgument desc = CreateVolume failed to pick zones for disk: "
            "failed to pick zones from topology: need 2 zones from topology, only got 1 unique "
            "zones", first=fails[0] + timedelta(seconds=1), last=fails[-1] + timedelta(seconds=1),
            count=len(fails), type_="Warning", component="pd.csi.storage.gke.io", host=csi)
    c.event(pod, "FailedScheduling", "0/4 nodes are available: pod has unbound immediate "
            "PersistentVolumeClaims. preemption: 0/4 nodes are available: 4 Preemption is not "
            "helpful for scheduling.", first=t0 + timedelta(seconds=1),
            last=NOW - timedelta(minutes=3, seconds=44), count=11, type_="Warning",
            component="default-scheduler", host="")
    gauge(s, "kube_persistentvolumeclaim_status_phase", {
        "namespace": "ml-platform", "persistentvolumeclaim": "storage-vectordb-0",
        "phase": "Pending"}, lambda t: 1.0 if t >= t0.timestamp() + 30 else None,
        "The phase the persistent volume claim is currently in.")
    gauge(s, "kube_persistentvolumeclaim_status_phase", {
        "namespace": "ml-platform", "persistentvolumeclaim": "storage-vectordb-0",
        "phase": "Bound"}, lambda t: 0.0 if t >= t0.timestamp() + 30 else None,
        "The phase the persistent volume claim is currently in.")
    gauge(s, "kube_persistentvolumeclaim_status_phase", {
        "namespace": "ml-platform", "persistentvolumeclaim": "data-feature-cache-0",
        "phase": "Bound"}, lambda t: 1.0, "The phase the persistent volume claim is currently in.")
    gauge(s, "kube_pod_status_phase", {"namespace": "ml-platform", "pod": "vectordb-0",
                                       "phase": "Pending"},
          lambda t: 1.0 if t >= t0.timestamp() + 30 else None,
          "The pods current phase.")
    gauge(s, "kube_statefulset_replicas", {"namespace": "ml-platform", "statefulset": "vectordb"},
          lambda t: 3.0 if t >= t0.timestamp() + 30 else None,
          "Number of desired pods for a StatefulSet.")
    gauge(s, "kube_statefulset_status_replicas_ready", {"namespace": "ml-platform",
                                                        "statefulset": "vectordb"},
          lambda t: 0.0 if t >= t0.timestamp() + 30 else None,
          "The number of ready replicas per StatefulSet.")

    # ---- a healthy StatefulSet whose claim is bound (storage works in this cluster)
    rc = PCtr("redis", "docker.io/bitnami/redis:7.4.1-debian-12-r2", port=None,
              requests={"cpu": "100m", "memory": "1Gi"}, limits={"memory": "1536Mi"},
              readiness={
                  "exec": {"command": ["sh", "-c", "/health/ping_readiness_local.sh 1"]},
                  "initialDelaySeconds": 5, "periodSeconds": 5, "timeoutSeconds": 2,
                  "successThreshold": 1, "failureThreshold": 5},
              mounts=[{"mountPath": "/data", "name": "data"}], ports=[("redis", 6379, "TCP")])
    ctpl = Template([rc], service_account="feature-cache",
                    node_selector={"cloud.google.com/gke-nodepool": "general-e2"})
    cache = c.workload("StatefulSet", "ml-platform", "feature-cache", ctpl, replicas=1,
                       created=s.ago(days=164))
    cache.obj["spec"].update({
        "serviceName": "feature-cache-headless",
        "updateStrategy": {"type": "RollingUpdate"},
        "volumeClaimTemplates": [{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                  "metadata": {"name": "data"},
                                  "spec": {"accessModes": ["ReadWriteOnce"], "resources": {
                                      "requests": {"storage": "8Gi"}},
                                      "storageClassName": "standard-rwo",
                                      "volumeMode": "Filesystem"}}]})
    crev = c.revision(cache, 4, s.ago(days=4, hours=3))
    cstart = max(s.ago(days=4, hours=3), datetime.fromisoformat(
        general[1]["metadata"]["creationTimestamp"].replace("Z", "+00:00"))) + timedelta(minutes=3)
    cpod = c.pod(cache, crev, node=general[1], created=cstart, name="feature-cache-0",
                 statuses={"redis": running(cstart + timedelta(seconds=6))})
    cpod["metadata"]["labels"]["apps.kubernetes.io/pod-index"] = "0"
    cpod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {
        "claimName": "data-feature-cache-0"}}]
    bound_uid = c.uid("pv", "data-feature-cache-0")
    c.add({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": c.meta("PersistentVolumeClaim", "data-feature-cache-0", "ml-platform",
                              s.ago(days=164), {"app.kubernetes.io/name": "feature-cache"},
                              annotations={"pv.kubernetes.io/bind-completed": "yes",
                                           "pv.kubernetes.io/bound-by-controller": "yes",
                                           "volume.beta.kubernetes.io/storage-provisioner":
                                           "pd.csi.storage.gke.io",
                                           "volume.kubernetes.io/selected-node":
                                           general[1]["metadata"]["name"]},
                              finalizers=["kubernetes.io/pvc-protection"]),
           "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {
               "storage": "8Gi"}}, "storageClassName": "standard-rwo",
               "volumeMode": "Filesystem", "volumeName": f"pvc-{bound_uid}"},
           "status": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "8Gi"},
                      "phase": "Bound"}})
    quiet_container(s, cpod, "redis", 612, cpu=0.04, limit_mib=1536)

    # ---- the callers of vectordb: degraded, not broken
    edge = t0.timestamp() + 120
    ss = Ctr("semantic-search", f"{REG}/semantic-search:0.14.0", port=8000,
             requests={"cpu": "500m", "memory": "768Mi"}, limits={"memory": "1Gi"},
             env={"VECTOR_BACKEND": "qdrant", "QDRANT_URL": "http://vectordb.ml-platform.svc:6333",
                  "KEYWORD_FALLBACK": "true", "WEB_CONCURRENCY": "4"},
             readiness=http_probe("/healthz", delay=5), liveness=http_probe("/healthz", delay=15,
                                                                           period=20))
    _, sspods = deployment(s, "ml-platform", "semantic-search", [ss], replicas=3,
                           node_list=general, revision=19,
                           rollout=t0 + timedelta(seconds=95),
                           labels={"app.kubernetes.io/name": "semantic-search",
                                   "app.kubernetes.io/instance": "ml-platform-search"})
    for pod in sspods:
        quiet_container(s, pod, "semantic-search", 505, cpu=0.31, limit_mib=1024)
        http_series(s, pod, "semantic-search", rps=lambda t: 14.0,
                    codes={"200": lambda t: 0.992, "400": lambda t: 0.006,
                           "500": lambda t: 0.0008},
                    median=lambda t: 0.07, buckets=BUCKETS)
    idx = Ctr("embedding-indexer", f"{REG}/embedding-indexer:0.9.2", port=None,
              requests={"cpu": "250m", "memory": "512Mi"}, limits={"memory": "1Gi"},
              env={"QDRANT_URL": "http://vectordb.ml-platform.svc:6333",
                   "SOURCE_TOPIC": "catalog.products.v3", "BATCH_SIZE": "256"})
    _, idxpods = deployment(s, "ml-platform", "embedding-indexer", [idx], replicas=1,
                            node_list=general, revision=3, rollout=t0 + timedelta(seconds=95),
                            service=None, node_offset=2)
    for pod in idxpods:
        quiet_container(s, pod, "embedding-indexer", 388, cpu=0.02, limit_mib=1024)
    vip = "34.118.231.88"
    logs_for(s, sspods, "semantic-search", "semantic-search", [
        ("info", 'GET /v1/search?q=... 200 (keyword)', {"http.response.status_code": 200}),
        ("warn", f"qdrant unavailable, falling back to keyword search: [Errno 111] Connect call "
         f"failed ('{vip}', 6333)", {"error.type": "ResponseHandlingException"}),
        ("info", "GET /v1/search 200 in 61ms", {"http.response.status_code": 200}),
    ], 160, start=datetime.fromtimestamp(edge, NOW.tzinfo), end=NOW)
    logs_for(s, idxpods, "embedding-indexer", "embedding-indexer", [
        ("error", "upsert of 256 points to collection 'products_v3' failed, retrying in 30s: "
         f"httpx.ConnectError: [Errno 111] Connection refused ({vip}:6333)",
         {"error.type": "httpx.ConnectError"}),
        ("info", "consumer lag on catalog.products.v3: 18244 messages", {}),
        ("warn", "collection 'products_v3' not found yet, will create it when qdrant is "
         "reachable", {}),
    ], 70, start=datetime.fromtimestamp(edge, NOW.tzinfo), end=NOW)

    # ---- red herrings
    gw = Ctr("model-gateway", f"{REG}/model-gateway:2.3.7", port=8080,
             requests={"cpu": "200m", "memory": "384Mi"}, limits={"memory": "768Mi"},
             readiness=http_probe("/ready", delay=5))
    _, gws = deployment(s, "ml-platform", "model-gateway", [gw], replicas=2, node_list=general,
                        revision=31, rollout=s.ago(days=2, hours=17), node_offset=1)
    for pod in gws:
        quiet_container(s, pod, "model-gateway", 301, cpu=0.15, limit_mib=768)
        http_series(s, pod, "model-gateway", rps=lambda t: 9.0,
                    codes={"200": lambda t: 0.985, "504": lambda t: 0.012, "429": lambda t: 0.003},
                    median=lambda t: 0.42, buckets=BUCKETS)
    logs_for(s, gws, "model-gateway", "model-gateway", [
        ("info", "POST /v1/rank 200 model=ranker-v7 412ms", {"http.response.status_code": 200}),
        ("error", "upstream timeout after 30s model=ranker-v7 replica=ranker-v7-predictor-2",
         {"http.response.status_code": 504, "error.type": "UpstreamTimeout"}),
        ("warn", "rate limited tenant=marketplace-eu (429), budget 40 rps",
         {"http.response.status_code": 429}),
    ], 120, start=NOW - timedelta(hours=2.5), end=NOW)
    web = Ctr("web-frontend", "europe-west4-docker.pkg.dev/mlp-prod-4471/storefront/web-frontend:"
              "8.40.1", port=3000, requests={"cpu": "250m", "memory": "512Mi"},
              limits={"memory": "1Gi"}, readiness=http_probe("/api/ready", delay=5))
    restart_at = s.ago(days=3, hours=21, minutes=5)

    def web_states(i: int, started: datetime) -> dict:
        if i != 1:
            return {}
        return {"web-frontend": running(restart_at, restarts=1, last=ended(
            "Error", 1, started, restart_at - timedelta(seconds=12)))}
    _, webs = deployment(s, "storefront", "web-frontend", [web], replicas=3, node_list=general,
                         revision=112, rollout=s.ago(days=4, hours=6), statuses=web_states)
    for pod in webs:
        quiet_container(s, pod, "web-frontend", 402, cpu=0.2, limit_mib=1024)
    logs_for(s, webs, "web-frontend", "web-frontend", [
        ("info", "GET /search?q=garden+chair 200", {"http.response.status_code": 200}),
        ("warn", "semantic results empty, rendering keyword results", {}),
        ("error", "Failed to fetch recommendations: AbortError: The operation was aborted "
         "(timeout 800ms)", {"error.type": "AbortError"}),
        ("info", "GET /product/18c3-44 200", {"http.response.status_code": 200}),
    ], 130, start=NOW - timedelta(hours=2.5), end=NOW)
    ir = Ctr("image-resizer", "europe-west4-docker.pkg.dev/mlp-prod-4471/storefront/"
             "image-resizer:1.4.0", port=8080, requests={"cpu": "500m", "memory": "256Mi"},
             limits={"memory": "512Mi"}, readiness=http_probe("/healthz", delay=3))
    _, irs = deployment(s, "storefront", "image-resizer", [ir], replicas=2, node_list=general,
                          revision=8, rollout=s.ago(days=5, hours=2), node_offset=2)
    for pod in irs:
        quiet_container(s, pod, "image-resizer", 143, cpu=0.22, limit_mib=512)
    hpa_meta = c.meta("HorizontalPodAutoscaler", "image-resizer", "storefront", s.ago(days=200),
                      {"app.kubernetes.io/name": "image-resizer"})
    blip = NOW - timedelta(minutes=39, seconds=10)
    hpa = c.add({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                 "metadata": hpa_meta,
                 "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                             "name": "image-resizer"},
                          "minReplicas": 2, "maxReplicas": 8, "metrics": [{
                              "type": "Resource", "resource": {"name": "cpu", "target": {
                                  "type": "Utilization", "averageUtilization": 65}}}]},
                 "status": {"currentReplicas": 2, "desiredReplicas": 2,
                            "lastScaleTime": iso(s.ago(days=1, hours=4)),
                            "currentMetrics": [{"type": "Resource", "resource": {
                                "name": "cpu", "current": {"averageUtilization": 44,
                                                           "averageValue": "221m"}}}],
                            "conditions": [
                                {"type": "AbleToScale", "status": "True",
                                 "reason": "ReadyForNewScale", "message": "recommended size "
                                 "matches current size",
                                 "lastTransitionTime": iso(s.ago(days=1, hours=4))},
                                {"type": "ScalingActive", "status": "True",
                                 "reason": "ValidMetricFound", "message": "the HPA was able to "
                                 "successfully calculate a replica count from cpu resource "
                                 "utilization (percentage of request)",
                                 "lastTransitionTime": iso(blip + timedelta(seconds=45))},
                                {"type": "ScalingLimited", "status": "False",
                                 "reason": "DesiredWithinRange", "message": "the desired count "
                                 "is within the acceptable range",
                                 "lastTransitionTime": iso(s.ago(days=1, hours=4))}]}})
    c.event(hpa, "FailedGetResourceMetric", "failed to get cpu utilization: unable to get "
            "metrics for resource cpu: no metrics returned from resource metrics API",
            first=blip, last=blip + timedelta(seconds=30), count=3, type_="Warning",
            component="horizontal-pod-autoscaler")
    c.event(hpa, "FailedComputeMetricsReplicas", "invalid metrics (1 invalid out of 1), first "
            "error is: failed to get cpu resource metric value: failed to get cpu utilization: "
            "unable to get metrics for resource cpu: no metrics returned from resource metrics "
            "API", first=blip, last=blip + timedelta(seconds=30), count=3, type_="Warning",
            component="horizontal-pod-autoscaler")

    # ---- GKE system pods
    reg = Ctr("csi-driver-registrar", "gke.gcr.io/csi-node-driver-registrar:v2.9.4-gke.21",
              port=None, requests={"cpu": "5m", "memory": "10Mi"}, limits={},
              args=["--v=5", "--csi-address=/csi/csi.sock",
                    "--kubelet-registration-path=/var/lib/kubelet/plugins/pd.csi.storage.gke.io/"
                    "csi.sock"])
    drv = Ctr("gce-pd-driver", "gke.gcr.io/gcp-compute-persistent-disk-csi-driver:"
              "v1.15.3-gke.4", port=None, requests={"cpu": "5m", "memory": "10Mi"}, limits={},
              args=["--v=5", "--endpoint=unix:/csi/csi.sock", "--run-controller-service=false"])
    _, pds = daemonset(s, "kube-system", "pdcsi-node", [reg, drv], node_list=nodes,
                       generation=2, since=s.ago(days=5.5),
                       labels={"k8s-app": "gcp-compute-persistent-disk-csi-driver",
                               "addonmanager.kubernetes.io/mode": "Reconcile"})
    for pod in pds:
        quiet_container(s, pod, "gce-pd-driver", 21)
    return s
