"""Biobank: bench scanners say "rack position unknown" for about a third of the freezer
racks. freezer-index is a three-shard StatefulSet; at 10:41 revision 4.8.0 started its
rolling update, which replaces the highest ordinal first. freezer-index-2's new init
container index-migrate runs schema migration 0019_split_rack_positions on the shard's
volume and fails on a duplicate position key (exit 3), so the pod sits in
Init:CrashLoopBackOff and the OrderedReady update stalls. Shard 2 serves nothing: the two
old pods answer 503 for its racks and lims-web shows 502s. Red herrings: the label-printer
rollout 43 min before the onset (which the report suspects), an ERROR about slow L0
compaction on freezer-index-0, an OOM restart of courier-notify two days ago in another
namespace."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import add_endpoints, add_service, gauge
from tests.data.holdout2._generator.kit import (
    cpu_seconds,
    crash_events,
    deleted,
    kills,
    requests,
    restarts_series,
    storage_class,
    working_set,
)
from tests.data.holdout3._generator.kit3 import chatter, ghosts, log_pod, quiet, steady
from tests.data.holdout4._generator.kit4 import log_lines
from tests.scenario_tools.common import MIB, kube_system, namespaces, nodes, truth
from tests.scenario_tools.kube import Ctr, Template, http_probe, running, waiting
from tests.scenario_tools.sim import container_status, lifecycle

from .kit import Incident, claim_volume, ksm_statefulset, step_at, sts_midway

ID = "freezer-rack-lookups-failing"
NOW = datetime.fromisoformat("2027-03-09T11:12:00+00:00")
NS = "biobank"
REG = "ghcr.io/northlab-biobank"
ROLL = NOW - timedelta(minutes=31, seconds=14)
OLD, NEW = "4.7.2", "4.8.0"
MIGRATION = "0019_split_rack_positions"


def main_ctr(version: str) -> Ctr:
    return Ctr("freezer-index", f"{REG}/freezer-index:{version}", port=7420,
               requests={"cpu": "500m", "memory": "1Gi"}, limits={"memory": "2Gi"},
               env={"SHARD_COUNT": "3", "PEERS": "freezer-index.biobank.svc:7420"},
               readiness=http_probe("/ready", delay=10), liveness=http_probe(
                   "/live", delay=30, period=20, timeout=3),
               mounts=[{"name": "data", "mountPath": "/var/lib/freezer-index"}])


def init_ctr(version: str) -> Ctr:
    return Ctr("index-migrate", f"{REG}/freezer-index:{version}", port=None,
               requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "512Mi"},
               command=["freezer-index", "migrate", "--data-dir=/var/lib/freezer-index",
                        "--target=latest"],
               mounts=[{"name": "data", "mountPath": "/var/lib/freezer-index"}])


def build() -> Incident:
    s = Incident(
        id=ID, title="Freezer rack lookups failing at the bench scanners", now=NOW,
        report="""\
Bench scanners in the biobank lab say "rack position unknown" for a good chunk of racks
when we check samples in, started maybe 30 min ago. The label printers got an update this
morning, could that be it? LIMS itself loads fine.
""",
        truth=truth(
            "crash_loop", "StatefulSet", NS, "freezer-index",
            ["index-migrate", "CrashLoopBackOff", MIGRATION, "duplicate position key",
             f"freezer-index:{NEW}"],
            f"The rolling update of the freezer-index StatefulSet to {NEW} replaced "
            f"freezer-index-2 first; its init container index-migrate fails migration "
            f"{MIGRATION} on shard 2's data (duplicate position key, exit 3) and crash-loops, "
            "so shard 2 is offline and the update is stalled. Roll the StatefulSet back to "
            f"{OLD} (or fix the duplicate rack position in shard 2 and make the migration "
            "tolerate it) before the update continues to the other shards."))
    c = s.cluster
    namespaces(s, NS, "logistics", "monitoring")
    node_list = nodes(s, 4, subnet=44, region="ca-central-1", pool="lab-apps",
                      instance="m7i.2xlarge", cpu="8", memory="32Gi",
                      allocatable_cpu="7910m", allocatable_memory="29948Mi", days=6.3)
    kube_system(s, node_list)
    storage_class(s, "gp3-retain", "ebs.csi.aws.com", {"type": "gp3", "encrypted": "true"},
                  created=s.ago(days=400), default=True, reclaim="Retain")

    # ---- freezer-index: pods 0 and 1 on 4.7.2, pod 2 stuck in its init container
    old_tpl = Template([main_ctr(OLD)], init=[init_ctr(OLD)], service_account="freezer-index")
    new_tpl = Template([main_ctr(NEW)], init=[init_ctr(NEW)], service_account="freezer-index")
    work = c.workload("StatefulSet", NS, "freezer-index", new_tpl, replicas=3,
                      created=s.ago(days=212),
                      labels={"app.kubernetes.io/name": "freezer-index",
                              "app.kubernetes.io/part-of": "lims"})
    work.obj["metadata"]["generation"] = 14
    work.obj["spec"]["updateStrategy"] = {"type": "RollingUpdate",
                                          "rollingUpdate": {"partition": 0}}
    work.obj["spec"]["revisionHistoryLimit"] = 10
    work.obj["spec"]["persistentVolumeClaimRetentionPolicy"] = {"whenDeleted": "Retain",
                                                                "whenScaled": "Retain"}
    work.obj["spec"]["volumeClaimTemplates"] = [{
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {
            "storage": "80Gi"}}, "storageClassName": "gp3-retain", "volumeMode": "Filesystem"},
        "status": {"phase": "Pending"}}]
    old_started = s.ago(days=4, hours=19)
    old_rev = c.revision(work, 13, old_started - timedelta(minutes=2), old_tpl)
    new_rev = c.revision(work, 14, ROLL, new_tpl)
    pods = []
    for i in range(2):
        born = old_started + timedelta(seconds=70 * i)
        pods.append(c.pod(work, old_rev, node=node_list[i], created=born,
                          statuses={"freezer-index": running(born + timedelta(seconds=9))},
                          name=f"freezer-index-{i}"))
    created = ROLL + timedelta(seconds=7)
    first = created + timedelta(seconds=8)
    runs = lifecycle(first, NOW, lambda t: 4.2 + s.rng.uniform(-0.6, 0.6), pull=1.1)
    p2 = "freezer-index-2"
    init_state = container_status(runs, p2, NS, "index-migrate", reason="Error", code=3,
                                  uid=c.uid("Pod", NS, p2), ready=False)
    pods.append(c.pod(work, new_rev, node=node_list[2], created=created,
                      statuses={"freezer-index": waiting("PodInitializing")},
                      init_statuses={"index-migrate": init_state}, name=p2))
    for i, pod in enumerate(pods):
        pod["metadata"]["labels"]["apps.kubernetes.io/pod-index"] = str(i)
        pod["spec"]["hostname"] = pod["metadata"]["name"]
        pod["spec"]["subdomain"] = "freezer-index"
        claim_volume(s, pod, work, "data", "80Gi", "gp3-retain",
                     s.ago(days=212) + timedelta(minutes=3 * i))
    sts_midway(s, work, old_rev, new_rev, 1)
    port = [{"name": "http", "port": 7420, "protocol": "TCP", "targetPort": "http"}]
    svc = add_service(s, NS, "freezer-index", {"app.kubernetes.io/name": "freezer-index"},
                      port, created=s.ago(days=212), headless=True,
                      labels={"app.kubernetes.io/name": "freezer-index"})
    add_endpoints(s, svc, pods, [{"name": "http", "port": 7420, "protocol": "TCP"}])

    # events of the update: delete and re-create pod 2, its init container's restarts
    c.event(work.obj, "SuccessfulDelete", "delete Pod freezer-index-2 in StatefulSet "
            "freezer-index successful", first=ROLL, component="statefulset-controller")
    c.event(work.obj, "SuccessfulCreate", "create Pod freezer-index-2 in StatefulSet "
            "freezer-index successful", first=created, component="statefulset-controller")
    c.event(pods[2], "Scheduled", f"Successfully assigned {NS}/{p2} to "
            f"{node_list[2]['metadata']['name']}", first=created, component="default-scheduler",
            host="")
    c.event(pods[2], "SuccessfulAttachVolume", 'AttachVolume.Attach succeeded for volume '
            f'"pvc-{c.uid("pv", NS, "data-" + p2)}"', first=created + timedelta(seconds=3),
            component="attachdetach-controller", host="")
    crash_events(s, pods[2], "index-migrate", runs, f"{REG}/freezer-index:{NEW}",
                 fresh_pull=True, init=True, pull_seconds=3.1, size=61_774_902)
    deaths = kills(runs)
    restarts_series(s, pods[2], "index-migrate", 0, deaths, init=True)
    gauge(s, "kube_pod_init_container_status_waiting_reason",
          {"namespace": NS, "pod": p2, "container": "index-migrate",
           "reason": "CrashLoopBackOff"},
          lambda t: 0.0 if any(r.start.timestamp() <= t < (r.end or NOW).timestamp()
                               for r in runs) else 1.0,
          "Describes the reason the init container is currently in waiting state.",
          times=[t for t in s.times if t >= first.timestamp() + 30])
    ksm_statefulset(s, work, step_at(ROLL, 3.0, 2.0))

    migrate_lines = []
    for r in runs:
        if r.end is None:
            continue
        at = r.start + timedelta(seconds=0.4)
        migrate_lines += [
            (at, f"INFO  freezer-index {NEW} migrate: data dir /var/lib/freezer-index "
                 "(shard 2 of 3)"),
            (at + timedelta(seconds=0.6), "INFO  schema version 18, target 19"),
            (at + timedelta(seconds=0.7), f"INFO  applying {MIGRATION}"),
            (r.end - timedelta(seconds=0.3), f"ERROR {MIGRATION}: duplicate position key "
             "rack=R14 shelf=3 slot=044 (samples BB-2291734, BB-2291790)"),
            (r.end - timedelta(seconds=0.1), "FATAL migration failed, schema left at 18; "
             "refusing to continue (exit 3)")]
        s.logs.add(r.end - timedelta(seconds=0.3), "error", f"{MIGRATION}: duplicate position "
                   "key rack=R14 shelf=3 slot=044 (samples BB-2291734, BB-2291790)",
                   namespace=NS, pod=p2, container="index-migrate", service="freezer-index",
                   node=node_list[2]["metadata"]["name"], error__type="MigrationError")
        s.logs.add(r.end - timedelta(seconds=0.1), "fatal", "migration failed, schema left "
                   "at 18; refusing to continue (exit 3)", namespace=NS, pod=p2,
                   container="index-migrate", service="freezer-index",
                   node=node_list[2]["metadata"]["name"])
    last = [r for r in runs if r.end is not None][-1]
    log_lines(s, pods[2], "index-migrate",
              [(w, t) for w, t in migrate_lines if last.start <= w <= last.end],
              previous=True)

    # the old shard-2 instance the update deleted, and the two that serve
    ghost = deleted(s, NS, p2, node_list[2]["metadata"]["name"], old_started +
                    timedelta(seconds=140), ROLL)
    quiet(s, pods[:2], "freezer-index", 1210)
    for pod in pods[:2]:
        cpu_seconds(s, pod, "freezer-index", lambda t: 0.31 + 0.05 * (t >= ROLL.timestamp()))
        requests(s, pod, "freezer-index", rps=lambda t: 9.5, codes={
            "200": step_at(ROLL, 0.998, 0.69), "404": lambda t: 0.002,
            "503": step_at(ROLL, 0.0, 0.31)}, median=lambda t: 0.012,
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.5))
    requests(s, ghost, "freezer-index", rps=lambda t: 9.5,
             codes={"200": lambda t: 0.998, "404": lambda t: 0.002})
    working_set(s, ghost, "freezer-index", lambda t: 1190 * MIB)
    before = [("info", "lookup rack=R07 shelf=2 -> 81 samples (shard 0)", {}),
              ("info", "lookup rack=R22 shelf=5 -> 64 samples (shard 1)", {}),
              ("info", "checkpoint written: 14 segments, 212 MiB", {})]
    chatter(s, pods[:2], "freezer-index", "freezer-index", before, 90, end=ROLL,
            start=s.ago(hours=3))
    chatter(s, pods[:2], "freezer-index", "freezer-index", [
        *before,
        ("warn", "shard 2 owner freezer-index-2 not ready; answering 503 for rack=R14",
         {"http.response.status_code": 503}),
        ("warn", "shard 2 owner freezer-index-2 not ready; answering 503 for rack=R31",
         {"http.response.status_code": 503}),
        ("warn", "peer freezer-index-2.freezer-index.biobank.svc:7420 connection refused", {}),
    ], 140, start=ROLL + timedelta(seconds=20))
    log_pod(s, pods[0], "freezer-index", "freezer-index", [
        ("error", "slow compaction on L0: 3.4s (threshold 2s), stalling writes briefly", {}),
    ], 5)
    log_pod(s, ghost, "freezer-index", "freezer-index", before, 30)

    # ---- lims-web: the bench app's backend, shows the 502s
    web = Ctr("lims-web", f"{REG}/lims-web:2026.12.4", port=8080,
              requests={"cpu": "250m", "memory": "512Mi"}, limits={"memory": "768Mi"},
              env={"FREEZER_INDEX_URL": "http://freezer-index.biobank.svc:7420"},
              readiness=http_probe("/healthz"))
    _, webs = steady(s, NS, "lims-web", [web], nodes=node_list, replicas=3, revision=57,
                     rollout=s.ago(days=3, hours=5), offset=1)
    quiet(s, webs, "lims-web", 430)
    for pod in webs:
        cpu_seconds(s, pod, "lims-web", lambda t: 0.18)
        requests(s, pod, "lims-web", rps=lambda t: 4.1, codes={
            "200": step_at(ROLL, 0.997, 0.79), "302": lambda t: 0.002,
            "502": step_at(ROLL, 0.001, 0.21)})
    chatter(s, webs, "lims-web", "lims-web", [
        ("info", "POST /api/checkin sample=BB-2301144 rack=R07 200 41ms", {}),
        ("info", "GET /api/racks/R22/slots 200 18ms", {}),
    ], 120, start=s.ago(hours=3))
    chatter(s, webs, "lims-web", "lims-web", [
        ("error", "GET /api/racks/R14/slots 502: freezer-index answered 503 Service "
         "Unavailable", {"http.response.status_code": 502}),
        ("error", "POST /api/checkin sample=BB-2301190 rack=R31 502: rack position unknown "
         "(freezer-index 503)", {"http.response.status_code": 502}),
        ("info", "GET /api/racks/R07/slots 200 21ms", {}),
    ], 110, start=ROLL + timedelta(seconds=30))

    # ---- red herrings: the label-printer rollout, an old OOM elsewhere
    lp_roll = ROLL - timedelta(minutes=43)
    printer = Ctr("label-printer", f"{REG}/label-printer:3.2.0", port=9100,
                  port_name="http", requests={"cpu": "100m", "memory": "128Mi"},
                  limits={"memory": "256Mi"}, readiness=http_probe("/healthz"))
    lp, lps = steady(s, NS, "label-printer", [printer], nodes=node_list, replicas=2,
                     revision=24, rollout=lp_roll, offset=2,
                     old=(23, s.ago(days=20), [Ctr("label-printer",
                                                  f"{REG}/label-printer:3.1.4", port=9100)]))
    old_lp = ghosts(s, lp.revisions[0], node_list[2:], [s.ago(days=20, minutes=-i)
                                                        for i in range(2)],
                    [lp_roll + timedelta(seconds=40 + 30 * i) for i in range(2)])
    quiet(s, lps, "label-printer", 96)
    for g in old_lp:
        working_set(s, g, "label-printer", lambda t: 92 * MIB)
        log_pod(s, g, "label-printer", "label-printer", [
            ("info", "printed label BB-2299871 on zebra-lab2 (ZPL, 0.4s)", {})], 25)
    chatter(s, lps, "label-printer", "label-printer", [
        ("info", "label-printer 3.2.0 started, 4 printers configured", {}),
        ("info", "printed label BB-2301144 on zebra-lab3 (ZPL, 0.3s)", {}),
        ("warn", "printer zebra-lab1 paper low (sensor 12%)", {}),
        ("warn", "printer zebra-lab4 socket reset by peer, reconnecting", {}),
    ], 60, start=lp_roll + timedelta(seconds=30))
    courier = Ctr("courier-notify", f"{REG}/courier-notify:1.14.0", port=8080,
                  requests={"cpu": "100m", "memory": "192Mi"}, limits={"memory": "256Mi"})
    _, couriers = steady(s, "logistics", "courier-notify", [courier], nodes=node_list,
                         replicas=2, revision=9, rollout=s.ago(days=6),
                         restarted={1: (s.ago(days=2, hours=3), "OOMKilled", 137)})
    quiet(s, couriers, "courier-notify", 170)
    chatter(s, couriers, "courier-notify", "courier-notify", [
        ("info", "shipment SH-88123 dry-ice pickup confirmed for 14:00", {}),
        ("warn", "courier API slow: 1.9s for POST /v1/pickups", {}),
    ], 30, start=s.ago(hours=3))
    return s
