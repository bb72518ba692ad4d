"""Carbon-credit registry: the compliance export crawls and the new read replica never
comes up. The team is retiring the old Ceph block class rook-ceph-block for a new
ceph-rbd-ssd-retain class. Since a StatefulSet's volumeClaimTemplates cannot change, at 09:08
`helm upgrade --force` deleted and re-created registry-ledger with the new class name in
its claim template, misspelt "ceph-rbd-ssd-retian", and with 4 replicas instead of 3. Pods
0-2 came back one by one on their retained, bound claims; pod 3 needs a new
claim, data-registry-ledger-3, which stays Pending (storageclass "ceph-rbd-ssd-retian" not
found), so registry-ledger-3 is unschedulable (unbound immediate PersistentVolumeClaims).
Red herrings: credit-api 3.8.0 rolled out 35 min ago (plausible alternative), replication
lag and slow-query warnings of the three busy replicas, an old OOM of retirement-worker."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import alive, gauge, set_times
from tests.data.holdout2._generator.kit import (
    app_counter,
    pvc,
    requests,
    start_events,
    statefulset,
    storage_class,
)
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, Template, http_probe, tcp_probe

from .kit8 import Incident, NodeKind, provider_nodes

ID = "registry-export-crawling"
NOW = datetime.fromisoformat("2028-05-22T09:58:00+00:00")
NS = "carbon-registry"
REG = "quay.registry-ops.internal/carbon"
TYPO = "ceph-rbd-ssd-retian"
GOOD = "ceph-rbd-ssd-retain"
WAIT = ("0/6 nodes are available: pod has unbound immediate PersistentVolumeClaims. "
        "preemption: 0/6 nodes are available: 6 Preemption is not helpful for scheduling.")


def build() -> Incident:
    s = Incident(
        id=ID, title="Registry compliance export crawling", now=NOW,
        report="""\
The annual compliance export of the carbon registry is crawling, at this rate it won't be
done before the regulator's cut-off tonight. Also registry-ledger still shows 3/4 ready,
it's been like that for most of an hour. credit-api users say balances load slowly too.
""",
        truth=truth(
            "unschedulable", "StatefulSet", NS, "registry-ledger",
            ["data-registry-ledger-3", f'storageclass.storage.k8s.io "{TYPO}" not found',
             "unbound immediate PersistentVolumeClaims", "Pending", TYPO],
            "registry-ledger was re-created at 09:08 with a volumeClaimTemplate naming the "
            f"StorageClass {TYPO} (a typo of {GOOD}); the new pod registry-ledger-3 needs "
            "the new claim data-registry-ledger-3, which stays Pending because that class "
            "does not exist, so the pod cannot be scheduled and the fourth read replica never "
            f"starts. Fix the class name to {GOOD} (re-create the StatefulSet "
            "again) and delete the Pending claim so it is re-created; the three "
            "old replicas carry the export alone until then."))
    set_times(s, 2.0, 60)
    c = s.cluster
    namespaces(s, {"default": 990, "kube-system": 990, NS: 870, "rook-ceph": 990,
                   "reporting": 400})
    kind = NodeKind("one-db32-128", "32", "131916052Ki", "31750m", "129102612Ki", "v1.31.4",
                    "6.8.0-52-generic", "Ubuntu 24.04.1 LTS", runtime="containerd://1.7.25")
    nodes = provider_nodes(s, "one", 6, kind, days=6.9, group="db")
    recreate = NOW - timedelta(minutes=49, seconds=6)
    storage_class(s, "rook-ceph-block", "rook-ceph.rbd.csi.ceph.com",
                  {"clusterID": "rook-ceph", "pool": "replicapool", "imageFormat": "2",
                   "csi.storage.k8s.io/fstype": "ext4"}, created=s.ago(days=900),
                  mode="Immediate", default=True)
    storage_class(s, GOOD, "rook-ceph.rbd.csi.ceph.com",
                  {"clusterID": "rook-ceph", "pool": "ssd-replicapool", "imageFormat": "2",
                   "imageFeatures": "layering,fast-diff,object-map,deep-flatten,exclusive-lock",
                   "csi.storage.k8s.io/fstype": "ext4"}, created=s.ago(days=1, hours=4),
                  mode="Immediate", reclaim="Retain")

    # ---- registry-ledger: PostgreSQL read replicas, re-created with a misspelt class
    pg = Ctr("postgres", f"{REG}/registry-ledger-pg:16.4-2", port=5432, port_name="postgres",
             requests={"cpu": "4", "memory": "16Gi"}, limits={"memory": "16Gi"},
             env={"PGDATA": "/var/lib/postgresql/data/pgdata", "REPLICA_OF":
                  "registry-primary.carbon-registry.svc", "HOT_STANDBY": "on"},
             mounts=[{"name": "data", "mountPath": "/var/lib/postgresql/data"}],
             readiness={"exec": {"command": ["pg_isready", "-U", "postgres"]},
                        "initialDelaySeconds": 10, "periodSeconds": 10, "timeoutSeconds": 5,
                        "successThreshold": 1, "failureThreshold": 6},
             liveness=tcp_probe("postgres", delay=30, period=15))
    tpl = Template([pg], service_account="registry-ledger",
                   labels={"app.kubernetes.io/component": "read-replica"})
    back = [recreate + timedelta(seconds=1.2 + 41.5 * i) for i in range(4)]
    work, pods = statefulset(
        s, NS, "registry-ledger", tpl, replicas=4, nodes=nodes[1:] + nodes[:1],
        revisions=[(1, recreate, tpl)], pod_revision=lambda i: 1,
        born=lambda i: back[i], claim=("data", "500Gi", "rook-ceph-block"),
        labels={"app.kubernetes.io/name": "registry-ledger",
                "app.kubernetes.io/managed-by": "Helm"},
        created=recreate, service="registry-ledger-headless",
        pending={3: WAIT})
    work.obj["spec"]["volumeClaimTemplates"][0]["spec"]["storageClassName"] = TYPO
    work.obj["metadata"]["generation"] = 1
    work.obj["metadata"]["annotations"] = {"meta.helm.sh/release-name": "registry-ledger",
                                           "meta.helm.sh/release-namespace": NS}
    for claim in list(c.objects_of("PersistentVolumeClaim")):
        if claim["metadata"]["name"] == "data-registry-ledger-3":
            c.remove(claim)
        else:
            claim["metadata"]["annotations"].pop("volume.kubernetes.io/selected-node")
            claim["metadata"]["creationTimestamp"] = (s.ago(days=420) + timedelta(
                minutes=int(claim["metadata"]["name"][-1]))).strftime("%Y-%m-%dT%H:%M:%SZ")
    pend = c.add({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                  "metadata": c.meta("PersistentVolumeClaim", "data-registry-ledger-3", NS,
                                     back[3], {"app.kubernetes.io/name": "registry-ledger",
                                             "app.kubernetes.io/component": "read-replica"},
                                     finalizers=["kubernetes.io/pvc-protection"]),
                  "spec": {"accessModes": ["ReadWriteOnce"],
                           "resources": {"requests": {"storage": "500Gi"}},
                           "storageClassName": TYPO, "volumeMode": "Filesystem"},
                  "status": {"phase": "Pending"}})
    _ = pvc
    late = pods[3]
    scale = back[3]
    for i, pod in enumerate(pods):
        c.event(work.obj, "SuccessfulCreate", f"create Pod registry-ledger-{i} in StatefulSet "
                "registry-ledger successful", first=back[i] - timedelta(seconds=0.1),
                component="statefulset-controller", host="")
        if i < 3:
            start_events(s, pod, scheduled=back[i] + timedelta(seconds=0.2),
                         started=back[i] + timedelta(seconds=3.5))
    c.event(work.obj, "SuccessfulCreate", "create Claim data-registry-ledger-3 Pod "
            "registry-ledger-3 in StatefulSet registry-ledger success",
            first=scale - timedelta(seconds=0.2), component="statefulset-controller", host="")
    c.event(pend, "ProvisioningFailed", f'storageclass.storage.k8s.io "{TYPO}" not found',
            first=scale + timedelta(seconds=0.3), last=NOW - timedelta(seconds=11),
            count=197, type_="Warning", component="persistentvolume-controller", host="")
    c.event(late, "FailedScheduling", WAIT, first=scale + timedelta(seconds=0.7),
            last=NOW - timedelta(minutes=3, seconds=40), count=11, type_="Warning",
            component="default-scheduler", host="")
    gauge(s, "kube_persistentvolumeclaim_status_phase",
          {"namespace": NS, "persistentvolumeclaim": "data-registry-ledger-3",
           "phase": "Pending"}, lambda t: 1.0,
          "The phase the persistent volume claim is currently in.",
          times=[t for t in s.times if t >= scale.timestamp() + 30])
    gauge(s, "kube_pod_status_phase", {"namespace": NS, "pod": "registry-ledger-3",
                                       "phase": "Pending"}, lambda t: 1.0,
          "The pods current phase.", times=[t for t in s.times if t >= scale.timestamp() + 30])
    sl = {"namespace": NS, "statefulset": "registry-ledger"}
    gauge(s, "kube_statefulset_replicas", sl,
          lambda t: 4.0 if t >= recreate.timestamp() + 30 else 3.0,
          "Number of desired pods for a StatefulSet.")
    gauge(s, "kube_statefulset_status_replicas_ready", sl,
          lambda t: 3.0 if t < recreate.timestamp() else float(sum(
              1 for b in back[:3] if t >= b.timestamp() + 20)),
          "The number of ready replicas per StatefulSet.")
    export = NOW - timedelta(minutes=57)

    def busy(t: int) -> float:
        return 1.0 if t >= export.timestamp() else 0.0
    for pod in pods[:3]:
        quiet(s, [pod], "postgres", 11_200)
        gauge(s, "pg_replication_lag_seconds", {"namespace": NS, "pod": pod["metadata"]["name"]},
              lambda t: 0.4 + 38 * busy(t) * s.rng.uniform(0.6, 1.3),
              "Replication lag behind master in seconds.", times=alive(s, pod))
        app_counter(s, "pg_stat_database_xact_commit", {"namespace": NS,
                                                        "pod": pod["metadata"]["name"],
                                                        "datname": "registry"}, alive(s, pod),
                    lambda t: 40 + 25 * busy(t), "Number of transactions in this database "
                    "that have been committed.")
    chatter(s, pods[:3], "postgres", "registry-ledger", [
        ("warn", "LOG:  duration: 48211.904 ms  statement: SELECT c.serial_block, c.vintage, "
         "c.project_id, ... FROM credits c JOIN retirements r ...", {}),
        ("warn", "LOG:  recovery is waiting for the conflicting query to finish "
         "(max_standby_streaming_delay 60s)", {}),
        ("info", "LOG:  restartpoint complete: wrote 31288 buffers (3.0%)", {}),
    ], 80, start=export)
    chatter(s, pods[:3], "postgres", "registry-ledger", [
        ("info", "LOG:  restartpoint starting: time", {}),
        ("info", "LOG:  restartpoint complete: wrote 8210 buffers (0.8%)", {}),
    ], 20, end=export)

    # ---- the export job (as a Deployment worker) and red herrings
    ex = Ctr("compliance-export", f"{REG}/compliance-export:2.2.0", port=8080,
             requests={"cpu": "500m", "memory": "2Gi"}, limits={"memory": "3Gi"},
             env={"LEDGER_DSN": "postgres://registry-ledger.carbon-registry.svc:5432/registry"
                  "?target_session_attrs=read-only", "PARALLEL_READERS": "12"})
    _, exs = steady(s, "reporting", "compliance-export", [ex], nodes=nodes, replicas=1,
                    revision=6, rollout=s.ago(days=2, hours=3), service=None)
    quiet(s, exs, "compliance-export", 1450)
    app_counter(s, "compliance_export_rows_total", {"namespace": "reporting",
                                                    "pod": exs[0]["metadata"]["name"]},
                s.times, lambda t: 1800 * busy(t), "Rows written to the export.", start=0)
    chatter(s, exs, "compliance-export", "compliance-export", [
        ("info", "export AR-2027: 3.1M of 42.6M credit rows written, ETA 14h52m", {}),
        ("warn", "reader 7: query on registry-ledger took 48.2s (expected < 10s)", {}),
        ("warn", "reader 3: canceling statement due to conflict with recovery, retrying "
         "batch 5521", {}),
    ], 40, start=export)
    roll = NOW - timedelta(minutes=35)
    api = Ctr("credit-api", f"{REG}/credit-api:3.8.0", port=8080,
              requests={"cpu": "500m", "memory": "768Mi"}, limits={"memory": "1Gi"},
              readiness=http_probe("/healthz"))
    _, apis = steady(s, NS, "credit-api", [api], nodes=nodes, replicas=3, revision=71,
                     rollout=roll, offset=2,
                     old=(70, s.ago(days=6), [Ctr("credit-api", f"{REG}/credit-api:3.7.5")]))
    for pod in apis:
        quiet(s, [pod], "credit-api", 540)
        requests(s, pod, "credit-api", rps=lambda t: 4.0, codes={
            "200": lambda t: 0.996, "404": lambda t: 0.003, "500": lambda t: 0.001},
            median=lambda t: 0.09 + 0.25 * busy(t), buckets=(0.1, 0.5, 2.0))
    chatter(s, apis, "credit-api", "credit-api", [
        ("info", "credit-api 3.8.0 started (feature: vintage filter on /v2/balances)", {}),
        ("info", "GET /v2/balances/ACC-004812 200 412ms", {}),
        ("warn", "GET /v2/serials/VCS-1183-2019-XX 404 serial block not found",
         {"http.response.status_code": 404}),
    ], 50, start=roll)
    rw = Ctr("retirement-worker", f"{REG}/retirement-worker:1.5.3", port=8080,
             requests={"cpu": "200m", "memory": "512Mi"}, limits={"memory": "640Mi"})
    _, rws = steady(s, NS, "retirement-worker", [rw], nodes=nodes, replicas=1, revision=18,
                    rollout=s.ago(days=4, hours=2), offset=4, service=None,
                    restarted={0: (s.ago(days=1, hours=9), "OOMKilled", 137)})
    quiet(s, rws, "retirement-worker", 410)
    chatter(s, rws, "retirement-worker", "retirement-worker", [
        ("info", "retired 250 credits of block VCS-1183-2019-7A for beneficiary BEN-2211", {}),
    ], 12)
    return s
