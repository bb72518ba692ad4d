"""Fleet telematics: a third of the vehicles freeze on the live map. The helm upgrade of the
position-store StatefulSet to 3.0.0 replaced its highest ordinal first; 3.0.0 renamed the
-retention-days flag to -retention, the chart still passes the old one, and the Go binary
exits 2 at once ("flag provided but not defined"). Shard 2 is gone, the rollout waits."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import (
    PCtr,
    add_endpoints,
    add_service,
    alive,
    daemonset,
    fix_pod_ips,
    gauge,
    logs_for,
    set_times,
)
from tests.scenario_tools.common import MIB, truth
from tests.scenario_tools.kube import Ctr, Obj, Template, ended, http_probe, running
from tests.scenario_tools.sim import container_status

from .kit import (
    Incident,
    NodeKind,
    after,
    app_counter,
    cpu_seconds,
    crash_events,
    deleted,
    deploy,
    drift,
    kills,
    lines,
    node,
    plain,
    requests,
    restarts_series,
    runs_from,
    statefulset,
    storage_class,
    working_set,
)

ID = "fleet-positions-frozen"
NOW = datetime.fromisoformat("2027-02-11T14:47:00+00:00")
NS = "fleet"
REG = "registry.haulwise.internal/telematics"
OLD, NEW = "2.14.1", "3.0.0"
USAGE = """\
flag provided but not defined: -retention-days
Usage of /usr/local/bin/position-store:
  -data-dir string
    \tdirectory for the WAL and the segments (default "/var/lib/position-store")
  -grpc-listen string
    \tgRPC listen address (default ":7401")
  -listen string
    \tHTTP listen address (default ":7400")
  -retention duration
    \thow long positions are kept (default 168h0m0s)
  -shard-from-hostname
    \tderive the shard index from the ordinal of the pod's hostname
  -shards int
    \tnumber of shards in the ring (default 1)
  -wal-fsync string
    \tWAL fsync mode: always, batch or never (default "batch")"""


def build() -> Incident:
    s = Incident(
        id=ID,
        title="A third of the fleet frozen on the live map",
        now=NOW,
        report="""\
Dispatch says roughly a third of our trucks haven't moved on the live map since ~14:20,
the others update fine. Drivers are driving, the telematics boxes report normally per the
vendor portal. Customers' ETA links for those trucks are stuck too. Can you check what's
going on in fleet?
""",
        truth=truth(
            "crash_loop", "StatefulSet", NS, "position-store",
            ["flag provided but not defined: -retention-days", "CrashLoopBackOff",
             "exit code 2", NEW, "position-store-2"],
            f"position-store {NEW} no longer knows -retention-days (now -retention=336h): "
            "change the chart's args and upgrade again, or roll the StatefulSet back to "
            f"{OLD} (helm rollback) so that position-store-2 starts and shard 2 serves "
            "again."))
    set_times(s, 2.0, 60)
    c = s.cluster
    for ns, days in (("default", 810), ("kube-system", 810), (NS, 540), ("dispatch", 402),
                     ("infra", 790)):
        c.namespace(ns, s.ago(days=days))

    cp_kind = NodeKind("", "16", "65569232Ki", "16", "65466832Ki", "v1.30.8",
                       "6.8.0-51-generic", "Ubuntu 24.04.1 LTS", pods="110")
    wk_kind = NodeKind("", "48", "263842584Ki", "47500m", "259648280Ki", "v1.30.8",
                       "6.8.0-51-generic", "Ubuntu 24.04.1 LTS", pods="110",
                       storage="936709136Ki", alloc_storage="863278116683")
    nodes: list[Obj] = []
    for i in range(3):
        name = f"k8s-fleet-cp0{i + 1}"
        nodes.append(node(s, name, ip=f"172.22.40.{11 + i}", kind=cp_kind,
                          created=s.ago(days=6.6 - i * 0.01), region="dc-west",
                          zone=f"dc-west-r1{i + 1}",
                          labels={"node-role.kubernetes.io/control-plane": "",
                                  "node.kubernetes.io/exclude-from-external-load-balancers": "",
                                  "hardware.haulwise.io/model": "r450"},
                          provider_id="", pod_cidr=f"10.244.{i}.0/24",
                          taints=[{"effect": "NoSchedule",
                                   "key": "node-role.kubernetes.io/control-plane"}]))
    workers: list[Obj] = []
    for i in range(5):
        name = f"k8s-fleet-w0{i + 1}"
        workers.append(node(s, name, ip=f"172.22.41.{21 + i}", kind=wk_kind,
                            created=s.ago(days=6.5 - i * 0.02), region="dc-west",
                            zone=f"dc-west-r1{i % 3 + 1}",
                            labels={"node-role.kubernetes.io/worker": "",
                                    "hardware.haulwise.io/model": "r650"},
                            provider_id="", pod_cidr=f"10.244.{8 + i}.0/24"))
    for each in nodes + workers:
        each["metadata"]["labels"].pop("node.kubernetes.io/instance-type", None)
    nodes += workers
    storage_class(s, "ceph-rbd-ssd", "rook-ceph.rbd.csi.ceph.com",
                  {"clusterID": "rook-ceph", "pool": "k8s-ssd", "imageFeatures": "layering",
                   "csi.storage.k8s.io/fstype": "ext4"}, created=s.ago(days=790),
                  mode="Immediate", default=True, reclaim="Retain")

    # ---- position-store: 2 pods of 2.14.1, pod 2 of 3.0.0 crash looping
    t0 = NOW - timedelta(minutes=27, seconds=19)  # 14:19:41, the helm upgrade
    labels = {"app.kubernetes.io/name": "position-store", "app.kubernetes.io/instance":
              "position-store", "app.kubernetes.io/managed-by": "Helm"}

    def store(version: str) -> PCtr:
        return PCtr("position-store", f"{REG}/position-store:{version}", port=None,
                    requests={"cpu": "2", "memory": "8Gi"}, limits={"memory": "12Gi"},
                    args=["-listen=:7400", "-grpc-listen=:7401",
                          "-data-dir=/var/lib/position-store", "-shard-from-hostname",
                          "-shards=3", "-retention-days=14", "-wal-fsync=batch"],
                    env={"GOMAXPROCS": "4", "GOMEMLIMIT": "10GiB"},
                    readiness=http_probe("/readyz", "http", delay=5, period=5),
                    liveness=http_probe("/healthz", "http", delay=30, period=10),
                    mounts=[{"mountPath": "/var/lib/position-store", "name": "data"}],
                    ports=[("http", 7400, "TCP"), ("grpc", 7401, "TCP")])

    def tpl(version: str) -> Template:
        return Template([store(version)], service_account="position-store",
                        labels={"app.kubernetes.io/version": version},
                        annotations={"prometheus.io/scrape": "true", "prometheus.io/port":
                                     "7400"})
    old_at = s.ago(days=23, hours=2)
    old_born = [s.ago(days=6, hours=3, minutes=40 - 2 * i) for i in range(3)]
    new_born = t0 + timedelta(seconds=2.2)
    runs = runs_from(new_born + timedelta(seconds=3.1), NOW, lambda st: s.rng.uniform(0.04, 0.09),
                     pull=0.7, jitter=lambda: s.rng.uniform(0, 0.9))
    restart_old = s.ago(days=2, hours=7, minutes=3)

    def states(i: int, started: datetime) -> dict[str, Obj]:
        if i == 2:
            return {"position-store": container_status(
                runs, "position-store-2", NS, "position-store", reason="Error", code=2,
                uid=c.uid("Pod", NS, "position-store-2"), ready=False)}
        if i == 0:
            return {"position-store": running(restart_old, restarts=1, last=ended(
                "Error", 1, started, restart_old - timedelta(seconds=11)))}
        return {}
    sts, pods = statefulset(
        s, NS, "position-store", tpl(NEW), replicas=3, nodes=workers,
        revisions=[(14, old_at, tpl(OLD)), (15, t0, tpl(NEW))],
        pod_revision=lambda i: 15 if i == 2 else 14,
        born=lambda i: new_born if i == 2 else old_born[i], statuses=states,
        claim=("data", "200Gi", "ceph-rbd-ssd"), labels=labels, created=s.ago(days=540),
        service="position-store")
    sts.obj["spec"]["podManagementPolicy"] = "Parallel"
    sts.obj["metadata"]["annotations"] = {"meta.helm.sh/release-name": "position-store",
                                          "meta.helm.sh/release-namespace": NS}
    sts.obj["metadata"]["labels"]["helm.sh/chart"] = f"position-store-{NEW}"
    sts.obj["metadata"]["generation"] = 15
    for pod in pods:
        pod["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] = pod["metadata"]["name"]
    fix_pod_ips(s)
    old_rev, new_rev = sts.revisions[0]["metadata"]["name"], sts.revisions[1]["metadata"]["name"]

    def sts_status(objects: list[Obj]) -> None:
        sts.obj["status"] = {"availableReplicas": 2, "collisionCount": 0, "currentReplicas": 2,
                             "currentRevision": old_rev, "observedGeneration": 15,
                             "readyReplicas": 2, "replicas": 3, "updateRevision": new_rev,
                             "updatedReplicas": 1}
    s.fixes.append(sts_status)
    ports = [{"name": "http", "port": 7400, "protocol": "TCP", "targetPort": "http"},
             {"name": "grpc", "port": 7401, "protocol": "TCP", "targetPort": "grpc"}]
    svc = add_service(s, NS, "position-store", dict(sts.obj["spec"]["selector"]["matchLabels"]),
                      ports, created=s.ago(days=540), labels=labels, headless=True)
    add_endpoints(s, svc, pods, [{"name": "http", "port": 7400, "protocol": "TCP"},
                                 {"name": "grpc", "port": 7401, "protocol": "TCP"}])

    # controller and kubelet events of the upgrade
    c.event(sts.obj, "SuccessfulDelete", "delete Pod position-store-2 in StatefulSet "
            "position-store successful", first=t0 + timedelta(seconds=1),
            component="statefulset-controller")
    c.event(sts.obj, "SuccessfulCreate", "create Pod position-store-2 in StatefulSet "
            "position-store successful", first=new_born, component="statefulset-controller")
    bad = pods[2]
    c.event(bad, "Scheduled", f"Successfully assigned {NS}/position-store-2 to "
            f"{bad['spec']['nodeName']}", first=new_born, component="default-scheduler",
            host="")
    crash_events(s, bad, "position-store", runs, f"{REG}/position-store:{NEW}",
                 fresh_pull=True, pull_seconds=1.874, size=31_406_218)
    out = USAGE.split("\n")
    s.pod_log(bad, "position-store", out)
    s.pod_log(bad, "position-store", out, previous=True)
    for r in runs:
        for j, text in enumerate(out):
            s.logs.add(r.start + timedelta(milliseconds=21 + j), "error" if j == 0 else "info",
                       text.replace("\t", "").strip(), namespace=NS, pod="position-store-2",
                       container="position-store", service="position-store",
                       node=bad["spec"]["nodeName"], stream="stderr")

    # metrics of the store: the old pod 2 until the upgrade deleted it
    ghost = deleted(s, NS, "position-store-2", bad["spec"]["nodeName"], old_born[2],
                    t0 + timedelta(seconds=1))
    edge = t0.timestamp()
    vehicles = 4812
    for pod in [pods[0], pods[1], ghost]:
        name = pod["metadata"]["name"]
        working_set(s, pod, "position-store", drift(s, 6120 * MIB, 0.02))
        cpu_seconds(s, pod, "position-store", lambda t: 0.9 * s.rng.uniform(0.85, 1.15))
        app_counter(s, "position_store_points_written_total",
                    {"namespace": NS, "pod": name, "shard": name[-1]}, alive(s, pod),
                    lambda t: vehicles / 3 / 10, "Position points appended to the WAL.")
    for pod, restarts in ((pods[0], 1), (pods[1], 0)):
        restarts_series(s, pod, "position-store", restarts, [])
    restarts_series(s, bad, "position-store", 0, [t for t in kills(runs)])
    gauge(s, "kube_pod_container_status_waiting_reason",
          {"namespace": NS, "pod": "position-store-2", "container": "position-store",
           "reason": "CrashLoopBackOff"}, after(runs[1].start.timestamp()),
          "Describes the reason the container is currently in waiting state.",
          times=alive(s, bad))
    for metric, value, help_ in (
            ("kube_statefulset_replicas", lambda t: 3.0,
             "Number of desired pods for a StatefulSet."),
            ("kube_statefulset_status_replicas_ready", after(edge, 3.0, 2.0),
             "The number of ready replicas per StatefulSet."),
            ("kube_statefulset_status_replicas_updated", after(edge, 3.0, 1.0),
             "Number of pods created by the StatefulSet controller from the StatefulSet "
             "version indicated by updateRevision.")):
        gauge(s, metric, {"namespace": NS, "statefulset": "position-store"}, value, help_)

    # ---- gps-ingest writes every vehicle to its shard
    ingest = Ctr("gps-ingest", f"{REG}/gps-ingest:1.33.0", port=8080,
                 requests={"cpu": "500m", "memory": "512Mi"}, limits={"memory": "1Gi"},
                 env={"MQTT_BROKER": "ssl://mqtt.haulwise.internal:8883",
                      "MQTT_TOPIC": "$share/ingest/telematics/+/position",
                      "STORE_ADDR": "dns:///position-store.fleet.svc.cluster.local:7401",
                      "STORE_SHARDS": "3"},
                 readiness=http_probe("/ready", delay=5), liveness=http_probe("/live", delay=10))
    _, ingests = deploy(s, NS, "gps-ingest", [ingest], replicas=3, nodes=workers, revision=61,
                        rollout=s.ago(days=4, hours=22), offset=1)
    for pod in ingests:
        plain(s, pod, "gps-ingest", 244, 0.31)
        name = pod["metadata"]["name"]
        for result, rate in (("ok", lambda t: vehicles / 30 * (1 if t < edge else 2 / 3)),
                             ("error", lambda t: 0.0 if t < edge else vehicles / 90)):
            app_counter(s, "ingest_positions_total", {"namespace": NS, "pod": name,
                                                      "result": result},
                        alive(s, pod), rate, "Positions received, by write result.")
    start = NOW - timedelta(hours=2)
    logs_for(s, ingests, "gps-ingest", "gps-ingest", [
        ("info", "flushed 1604 positions to 3 shards in 41ms", {}),
        ("warn", "position for unit TB-20931 has no GNSS fix (hdop 99.9), dropped", {}),
        ("info", "mqtt session resumed, 3 subscriptions", {}),
    ], 54, start=start, end=NOW)
    logs_for(s, ingests, "gps-ingest", "gps-ingest", [
        ("error", "write batch of 534 positions to shard 2 failed: rpc error: code = "
         "Unavailable desc = dns: A record lookup error: lookup position-store-2.position-store"
         ".fleet.svc.cluster.local on 10.96.0.10:53: no such host", {"error.type":
                                                                    "grpc.Unavailable"}),
        ("warn", "shard 2 retry buffer full (50000 positions), dropping oldest", {}),
        ("info", "flushed 1069 positions to 2 shards in 38ms", {}),
    ], 84, start=t0 + timedelta(seconds=4), end=NOW)

    # ---- live-map-api reads the shards
    live = Ctr("live-map-api", f"{REG}/live-map-api:4.7.2", port=8080,
               requests={"cpu": "250m", "memory": "384Mi"}, limits={"memory": "768Mi"},
               readiness=http_probe("/healthz", delay=5))
    _, lives = deploy(s, NS, "live-map-api", [live], replicas=2, nodes=workers, revision=90,
                      rollout=s.ago(days=1, hours=21), offset=3)
    for pod in lives:
        plain(s, pod, "live-map-api", 201, 0.12)
        requests(s, pod, "live-map-api", rps=lambda t: 46.0, codes={
            "200": lambda t: 0.993, "304": lambda t: 0.006, "500": lambda t: 0.0004})
    gauge(s, "live_map_stale_vehicles", {"namespace": NS, "service": "live-map-api"},
          lambda t: 37 + s.rng.randrange(0, 9) if t < edge + 120 else
          1570 + s.rng.randrange(0, 40), "Vehicles whose last position is older than 2 minutes.")
    logs_for(s, lives, "live-map-api", "live-map-api", [
        ("info", "GET /v2/fleet/snapshot?tenant=hw-benelux 200 18ms",
         {"http.response.status_code": 200}),
        ("info", "GET /v2/eta/8QK3-Z 200 6ms", {"http.response.status_code": 200}),
    ], 48, start=start, end=NOW)
    logs_for(s, lives, "live-map-api", "live-map-api", [
        ("warn", "shard 2 unavailable (no ready endpoint for position-store-2), returning "
         "partial fleet snapshot (2/3 shards)", {}),
        ("warn", "GET /v2/eta/R7T1-M served from last known position (age 14m)", {}),
    ], 54, start=t0 + timedelta(seconds=10), end=NOW)

    # ---- red herrings
    geo = Ctr("geofence-alerts", f"{REG}/geofence-alerts:0.9.12", port=8080,
              requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "512Mi"},
              readiness=http_probe("/ready", delay=5))
    _, geos = deploy(s, NS, "geofence-alerts", [geo], replicas=1, nodes=workers, revision=22,
                     rollout=s.ago(days=3, hours=5), offset=2)
    plain(s, geos[0], "geofence-alerts", 133)
    logs_for(s, geos, "geofence-alerts", "geofence-alerts", [
        ("warn", "polygon of depot 'ACME-Lyon' self-intersects, skipping", {}),
        ("error", "smtp relay answered 421 4.7.0 try again later, alert 88121 requeued",
         {"error.type": "SMTPTemporaryError"}),
        ("info", "truck TB-11872 entered geofence DE-DUI-Hub", {}),
    ], 27, start=start, end=NOW)
    chat = Ctr("driver-chat", f"{REG}/driver-chat:2.2.0", port=8080,
               requests={"cpu": "150m", "memory": "256Mi"}, limits={"memory": "512Mi"},
               readiness=http_probe("/ready", delay=5, timeout=1))
    _, chats = deploy(s, "dispatch", "driver-chat", [chat], replicas=2, nodes=workers,
                      revision=17, rollout=s.ago(days=5, hours=2), offset=4)
    for pod in chats:
        plain(s, pod, "driver-chat", 172)
    blip = NOW - timedelta(minutes=22, seconds=40)
    ip = chats[1]["status"]["podIP"]
    c.event(chats[1], "Unhealthy", f'Readiness probe failed: Get "http://{ip}:8080/ready": '
            "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            first=blip, last=blip + timedelta(seconds=10), count=2, type_="Warning",
            field_path="spec.containers{driver-chat}")
    logs_for(s, chats, "driver-chat", "driver-chat", [
        ("info", "ws connect driver=D-4471 device=android-14", {}),
        ("warn", "ws closed by client (1006 abnormal closure) driver=D-1180", {}),
        ("info", "message delivered to dispatcher desk NL-2", {}),
    ], 36, start=start, end=NOW)
    exp = Ctr("node-exporter", "quay.io/prometheus/node-exporter:v1.8.2", port=9100,
              port_name="metrics", requests={"cpu": "50m", "memory": "64Mi"},
              limits={"memory": "128Mi"}, args=["--path.rootfs=/host", "--web.listen-address="
                                                ":9100", "--no-collector.wifi"])
    exp_restart = s.ago(days=3, hours=1, minutes=22)

    def exp_states(i: int, n: Obj, started: datetime) -> dict[str, Obj]:
        if i != 4:
            return {}
        return {"node-exporter": running(exp_restart, restarts=1, last=ended(
            "Error", 2, started, exp_restart - timedelta(seconds=4)))}
    _, exps = daemonset(s, "infra", "node-exporter", [exp], node_list=nodes, generation=7,
                        since=s.ago(days=6.4), statuses=exp_states,
                        labels={"app.kubernetes.io/name": "node-exporter"})
    for pod in exps:
        pod["spec"]["hostNetwork"] = True
        pod["status"]["podIP"] = pod["status"]["hostIP"]
        pod["status"]["podIPs"] = [{"ip": pod["status"]["hostIP"]}]
    restarts_series(s, exps[4], "node-exporter", 1, [])
    s.pod_log(exps[4], "node-exporter", lines(exp_restart, [
        (0.01, 'level=INFO source=node_exporter.go:193 msg="Starting node_exporter" '
         'version="(version=1.8.2, branch=HEAD, revision=f1e0e8360aa60b6cb5e5cc1560bed348fc2c'
         '1895)"'),
        (0.02, 'level=INFO source=tls_config.go:313 msg="Listening on" address=[::]:9100'),
    ]))
    s.pod_log(exps[4], "node-exporter", lines(exp_restart - timedelta(seconds=4.2), [
        (0.0, "panic: runtime error: invalid memory address or nil pointer dereference"),
        (0.0, "[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x9c2f31]"),
        (0.001, "goroutine 48213 [running]:"),
        (0.001, "github.com/prometheus/node_exporter/collector.(*hwMonCollector)"
         ".updateHwmon(0xc000412a80, {0xc0004f6d20, 0x1d}, 0xc00081c0c0)"),
    ]), previous=True)
    return s
