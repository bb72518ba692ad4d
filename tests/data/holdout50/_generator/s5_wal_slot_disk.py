"""resource_exhaustion: an orphaned replication slot retains WAL until the volume is full."""

from __future__ import annotations

import random
from pathlib import Path

from . import _kit as k

SID = "orders-pg-orphan-slot-disk-full"
NOW = "2026-06-09T10:05:00Z"
GI = 1024**3


def build(root: Path) -> None:
    c = k.Clock(NOW)
    old = c.s(days=500)
    nodes = [f"aks-db-3105{i}-vmss00000{i}" for i in range(3)]
    objs = [k.namespace(n, old) for n in ("data", "orders", "etl")]
    objs += [k.node(n, c.s(days=40), {"kubernetes.azure.com/agentpool": "db"}, cpu="8",
                    mem="32Gi", ip=f"10.224.0.{4 + i}") for i, n in enumerate(nodes)]
    ctr = k.container("postgres", "docker.io/library/postgres:16.3", cpu_req="2", mem_req="8Gi",
                      cpu_lim="4", mem_lim="8Gi", ports=[5432],
                      env={"PGDATA": "/var/lib/postgresql/data/pgdata",
                           "POSTGRES_INITDB_ARGS": "--data-checksums"},
                      volumeMounts=[{"name": "data", "mountPath": "/var/lib/postgresql/data"}])
    tmpl = k.template({"app": "orders-pg"}, [ctr])
    sts = k.statefulset("data", "orders-pg", c.s(days=480), 2, tmpl, storage="64Gi",
                        storage_class="managed-csi-premium")
    objs.append(sts)
    pg = []
    for i in range(2):
        p = k.pod(sts, f"orders-pg-{i}", tmpl, nodes[i], c.s(days=6), ip=f"10.244.{i}.20",
                  extra_labels={"statefulset.kubernetes.io/pod-name": f"orders-pg-{i}",
                                "role": "primary" if i == 0 else "replica"})
        p["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {
            "claimName": f"data-orders-pg-{i}"}}]
        pg.append(p)
        objs.append(p)
    for i in range(3):
        objs.append(k.pvc("data", f"data-orders-pg-{i}", c.s(days=480 - 200 * (i == 2)),
                          "64Gi", "managed-csi-premium"))
    cm = {"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": k.meta("ConfigMap", "orders-pg-config", "data", c.s(days=480)),
          "data": {"postgresql.conf": "max_wal_senders = 10\nmax_replication_slots = 10\n"
                   "wal_level = replica\nmax_slot_wal_keep_size = -1\nwal_keep_size = 1GB\n"
                   "hot_standby = on\n"}}
    objs.append(cm)
    svc = k.service("data", "orders-pg", old, {"app": "orders-pg", "role": "primary"}, 5432,
                    5432, "10.0.41.5")
    objs += [svc, k.endpoints(svc, old, [("10.244.0.20", "orders-pg-0", nodes[0])])]
    api, _, apods = k.simple_app(objs, "orders", "orders-api", c.s(days=300), 3,
                                      "acrkite.azurecr.io/orders-api:2026.6.2", nodes,
                                      "10.244.5", c.s(hours=2, minutes=20), revision=71,
                                      ports=[8080], probe="/ready")
    objs.append(k.event(api, "ScalingReplicaSet", f"Scaled down replica set orders-api-"
                        f"{k.phash('orders', 'orders-api', 70)} to 0", c.s(minutes=59),
                        c.s(minutes=59), component="deployment-controller"))
    jt = k.template({"app": "nightly-export"}, [k.container(
        "export", "acrkite.azurecr.io/export:1.1.0", cpu_req="1", mem_req="2Gi")],
        restartPolicy="Never")
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": k.meta("Job", "nightly-export-29155200", "etl", c.s(hours=8)),
           "spec": {"backoffLimit": 2, "completions": 1, "parallelism": 1, "template": jt},
           "status": {"failed": 1, "startTime": c.s(hours=8),
                      "conditions": [{"type": "Failed", "status": "True",
                                      "reason": "BackoffLimitExceeded",
                                      "message": "Job has reached the specified backoff limit",
                                      "lastProbeTime": c.s(hours=7),
                                      "lastTransitionTime": c.s(hours=7)}]}}
    objs.append(job)
    objs.append(k.event(pg[0], "Unhealthy", "Readiness probe failed: command timed out",
                        c.s(minutes=40), c.s(minutes=40), etype="Warning", host=nodes[0]))

    rnd = random.Random(505)
    full = c.ago(minutes=52)
    logs = []
    for m in range(0, 180):
        t = c.ago(minutes=180 - m)
        if m % 4 == 0:
            logs.append(k.log(t, "orders-pg", "data", "orders-pg-0",
                              "LOG:  checkpoints are occurring too frequently (24 seconds apart)"
                              if m % 16 == 0 else
                              f"LOG:  checkpoint complete: wrote {rnd.randint(900, 4000)} "
                              f"buffers; 0 WAL file(s) added, 0 removed, "
                              f"{rnd.randint(20, 40)} recycled", container_name="postgres"))
        if t >= full:
            for _ in range(3):
                ap = apods[rnd.randint(0, 2)]["metadata"]["name"]
                logs.append(k.log(t, "orders-api", "orders", ap,
                                  'POST /v1/orders 500: pq: could not extend file '
                                  '"base/16384/24611": No space left on device '
                                  "(SQLSTATE 53100)", level="error",
                                  **{"http.response.status_code": 500}))
            logs.append(k.log(t, "orders-pg", "data", "orders-pg-0",
                              'ERROR:  could not extend file "base/16384/24611": No space '
                              "left on device", level="error", container_name="postgres"))
            if m % 3 == 0:
                logs.append(k.log(t, "orders-pg", "data", "orders-pg-0",
                                  'WARNING:  could not write to file "pg_wal/xlogtemp.211": '
                                  "No space left on device", level="warn",
                                  container_name="postgres"))
        else:
            if rnd.random() < 0.5:
                logs.append(k.log(t, "orders-api", "orders", apods[m % 3]["metadata"]["name"],
                                  f"POST /v1/orders 201 {rnd.randint(20, 60)}ms"))
    logs.append(k.log(c.ago(minutes=30), "orders-pg", "data", "orders-pg-0",
                      "LOG:  statement: SELECT slot_name, active, restart_lsn FROM "
                      "pg_replication_slots", container_name="postgres"))

    mx = k.Metrics()
    ts = k.steps(c, 3)
    now = int(c.now.timestamp())
    for i in range(2):
        lab = {"namespace": "data", "persistentvolumeclaim": f"data-orders-pg-{i}"}
        avail = []
        for t in ts:
            left_min = max(0, (now - t) / 60 - 52)
            v = (0.0 if i == 0 else 40.0 * GI) if left_min <= 0 and i == 0 else \
                (left_min * 0.095 * GI if i == 0 else 40.0 * GI - (now - t) * 10)
            avail.append((t, float(int(max(v, 0)))))
        mx.add("kubelet_volume_stats_available_bytes", "gauge", "Number of available bytes in "
               "the volume", "kubelet_volume_stats_available_bytes", lab, avail)
        mx.add("kubelet_volume_stats_capacity_bytes", "gauge", "Capacity in bytes of the "
               "volume", "kubelet_volume_stats_capacity_bytes", lab,
               [(t, float(64 * GI)) for t in ts[::5]])
    for slot, act in (("orders_pg_1", 1), ("orders_pg_2", 0)):
        lab = {"namespace": "data", "pod": "orders-pg-0", "slot_name": slot}
        mx.add("pg_replication_slots_active", "gauge", "Flag indicating if the slot is active",
               "pg_replication_slots_active", lab, [(t, float(act)) for t in ts[::2]])
        lag = [(t, float(int(rnd.randint(1, 9) * 1e5 if act else
                             45.2 * GI + min(t, now - 52 * 60) - ts[0]) * 1))
               for t in ts[::2]]
        if not act:
            lag = [(t, float(int(44 * GI + (min(t, now - 3120) - ts[0]) * 0.0016 * GI)))
                   for t in ts[::2]]
        mx.add("pg_replication_slots_pg_wal_lsn_diff", "gauge", "WAL retained by the "
               "replication slot in bytes", "pg_replication_slots_pg_wal_lsn_diff", lab, lag)
    sc = {"id": SID, "title": "Orders API returns 500 on checkout", "now": NOW,
          "report": "orders-api started throwing 500s on order creation about an hour ago, "
                    "right after the 2026.6.2 release went out. rolling back? also the "
                    "nightly export failed, maybe related\n",
          "truth": {"category": "resource_exhaustion",
                    "culprit": {"kind": "StatefulSet", "namespace": "data", "name": "orders-pg"},
                    "evidence": ["No space left on device", "orders_pg_2",
                                 "pg_replication_slots_active", "max_slot_wal_keep_size = -1"],
                    "fix": "Drop the orphaned slot (SELECT pg_drop_replication_slot('orders_pg_2'))"
                           " left by the decommissioned replica, grow the volume, and set "
                           "max_slot_wal_keep_size"}}
    k.write(root, SID, sc, objs, logs, mx)
