"""Shape 5: the warehouse PostgreSQL (a StatefulSet in the cluster) hit transaction ID
wraparound protection: a replication slot abandoned by a retired CDC connector held back
xmin, vacuum could not freeze, and now every write is refused. Reads still work, the pod is
Running and Ready, the clients are healthy and fail on every write."""

from __future__ import annotations

from .fleet import counter, healthy, old_rs, series
from .kit import (
    Clock,
    Scenario,
    container,
    endpoints,
    event,
    namespace,
    node,
    pod,
    running,
    service,
    template,
    uid,
)

NOW = "2026-11-28T03:26:00Z"
STOP = 76  # minutes ago postgres stopped accepting writes


def build() -> Scenario:
    c = Clock(NOW)
    sc = Scenario(
        "pick-scans-not-saving",
        "Warehouse pick scans fail to save during the night shift",
        NOW,
        "night shift in the Venlo DC: handhelds show 'could not save pick' on every scan since "
        "~02:10, "
        "looking things up still works. picking-api got a release yesterday afternoon, roll it "
        "back?\n",
        {
            "category": "resource_exhaustion",
            "culprit": {"kind": "StatefulSet", "namespace": "warehouse", "name": "wms-postgres"},
            "evidence": [
                "database is not accepting commands to avoid wraparound data loss",
                "drop stale replication slots",
                "oldest xmin is far in the past",
            ],
            "fix": "Drop the stale replication slot debezium_wms, then VACUUM (FREEZE) the wms "
            "database "
            "(single-user mode if needed) so datfrozenxid advances; alert on XID age",
        },
    )
    nodes = [(f"wms-worker-{i}", f"192.168.40.{21 + i}") for i in range(1, 4)]
    sc.objects += [namespace("warehouse", c.ago(900 * 1440))]
    sc.objects += [
        node(
            n,
            c.ago(200 * 1440),
            c.ago(0.2),
            ip=ip,
            zone="venlo-rack-" + "abc"[i],
            cpu="16",
            memory="64Gi",
            kubelet="v1.28.14+k3s1",
            transition=c.ago(6 * 1440),
        )
        for i, (n, ip) in enumerate(nodes)
    ]
    image = "docker.io/bitnami/postgresql:15.8.0-debian-12-r6"
    lab = {"app": "wms-postgres", "app.kubernetes.io/name": "postgresql"}
    tpl = template(
        lab,
        [
            container(
                "postgresql",
                image,
                requests={"cpu": "2", "memory": "8Gi"},
                limits={"memory": "12Gi"},
                mounts=[{"name": "data", "mountPath": "/bitnami/postgresql"}],
            )
        ],
    )
    tpl["spec"]["containers"][0]["ports"] = [
        {"name": "tcp-postgresql", "containerPort": 5432, "protocol": "TCP"}
    ]
    tpl["spec"]["containers"][0]["readinessProbe"] = {
        "exec": {"command": ["/bin/sh", "-c", "exec pg_isready -U postgres -h 127.0.0.1 -p 5432"]},
        "periodSeconds": 10,
        "timeoutSeconds": 5,
        "failureThreshold": 6,
    }
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {
            "name": "wms-postgres",
            "namespace": "warehouse",
            "creationTimestamp": c.ago(880 * 1440),
            "labels": lab,
            "generation": 4,
            "uid": uid("wms-postgres"),
        },
        "spec": {
            "replicas": 1,
            "serviceName": "wms-postgres-hl",
            "selector": {"matchLabels": {"app": "wms-postgres"}},
            "template": tpl,
            "podManagementPolicy": "OrderedReady",
            "updateStrategy": {"type": "RollingUpdate"},
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "storageClassName": "local-path",
                        "resources": {"requests": {"storage": "500Gi"}},
                    },
                }
            ],
        },
        "status": {
            "replicas": 1,
            "readyReplicas": 1,
            "currentReplicas": 1,
            "updatedReplicas": 1,
            "availableReplicas": 1,
            "observedGeneration": 4,
            "currentRevision": "wms-postgres-7bd9c5f8d9",
            "updateRevision": "wms-postgres-7bd9c5f8d9",
        },
    }
    pg = pod(
        sts,
        tpl,
        "wms-postgres-0",
        node_name=nodes[0][0],
        host_ip=nodes[0][1],
        ip="10.42.0.57",
        created=c.ago(5 * 1440 + 100),
        statuses=[running("postgresql", image, c.ago(5 * 1440 + 99))],
    )
    svc = service(
        "warehouse",
        "wms-postgres",
        {"app": "wms-postgres"},
        5432,
        5432,
        "10.43.12.9",
        c.ago(880 * 1440),
    )
    sc.objects += [sts, pg, svc, endpoints(svc, [pg], 5432)]
    sc.objects.append(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {
                "name": "data-wms-postgres-0",
                "namespace": "warehouse",
                "creationTimestamp": c.ago(880 * 1440),
                "labels": {"app": "wms-postgres"},
            },
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "local-path",
                "resources": {"requests": {"storage": "500Gi"}},
                "volumeName": "pvc-" + uid("wmsdata"),
            },
            "status": {
                "phase": "Bound",
                "accessModes": ["ReadWriteOnce"],
                "capacity": {"storage": "500Gi"},
            },
        }
    )
    picking = healthy(
        sc,
        c,
        "warehouse",
        "picking-api",
        "harbor.tallyho.nl/wms/picking-api:8.14.0",
        replicas=3,
        nodes=nodes,
        port=8080,
        revision=58,
        rollout_hours=12,
        cluster_ip="10.43.12.40",
        ip_base="10.42.1",
        requests={"cpu": "250m", "memory": "256Mi"},
        limits={"memory": "512Mi"},
    )
    old_rs(sc, picking.dep, picking.dep["spec"]["template"], 57, c.ago(9 * 1440))
    ledger = healthy(
        sc,
        c,
        "warehouse",
        "stock-ledger",
        "harbor.tallyho.nl/wms/stock-ledger:3.7.2",
        replicas=2,
        nodes=nodes,
        port=8080,
        cluster_ip="10.43.12.51",
        ip_base="10.42.2",
        requests={"cpu": "500m", "memory": "1Gi"},
        limits={"memory": "1536Mi"},
    )
    healthy(
        sc,
        c,
        "warehouse",
        "label-printer-gw",
        "harbor.tallyho.nl/wms/label-printer-gw:1.2.9",
        replicas=1,
        nodes=nodes,
        port=9100,
        cluster_ip="10.43.12.77",
        ip_base="10.42.3",
    )
    sc.objects.append(
        event(
            "warehouse",
            "Pod",
            "wms-postgres-0",
            "Unhealthy",
            "Readiness probe failed: 127.0.0.1:5432 - rejecting connections",
            first=c.ago(55),
            last=c.ago(55),
            count=1,
            type_="Warning",
            host=nodes[0][0],
        )
    )
    sc.objects.append(
        event(
            "warehouse",
            "Pod",
            picking.names[0],
            "Pulled",
            'Container image "harbor.tallyho.nl/wms/picking-api:8.14.0" already present on machine',
            first=c.ago(57),
            last=c.ago(57),
            host=nodes[0][0],
        )
    )
    # postgres log: days of warnings, then the stop
    pgl = []
    left = 40_000_000
    for h in range(96, 0, -1):
        m = STOP + h * 20
        left = int(40_000_000 * (h / 96) ** 1.1) + 1_000_000
        stamp = c.at(m).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"
        pgl.append(
            f"{stamp} [{23000 + h}] LOG:  automatic aggressive vacuum to prevent wraparound of "
            f"table "
            f'"wms.public.stock_movements": index scans: 1\n\tpages: 0 removed, 412331 remain, '
            "412331 scanned (100.00% of total)\n\ttuples: 0 removed, 48213390 remain, "
            f"{1203311 + (96 - h) * 5100} are dead but not yet removable, oldest xmin: 1411902264"
        )
        pgl.append(
            f'{stamp} [{23000 + h}] WARNING:  database "wms" must be vacuumed within {left} '
            f"transactions"
        )
        pgl.append(
            f"{stamp} [{23000 + h}] HINT:  To avoid a database shutdown, execute a database-wide "
            f"VACUUM in "
            "that database.\n\tYou might also need to commit or roll back old prepared "
            "transactions, or drop "
            "stale replication slots."
        )
        if h % 8 == 0:
            pgl.append(f"{stamp} [{23000 + h}] WARNING:  oldest xmin is far in the past")
            pgl.append(
                f"{stamp} [{23000 + h}] HINT:  Close open transactions soon to avoid wraparound "
                f"problems.\n\t"
                "You might also need to commit or roll back old prepared transactions, or drop "
                "stale "
                "replication slots."
            )
        if h % 24 == 0:
            pgl.append(
                f"{stamp} [{24100 + h}] LOG:  checkpoint complete: wrote 18211 buffers (13.9%); "
                "distance=402113 kB, estimate=420118 kB"
            )
    for k in range(STOP, 0, -1):
        stamp = c.at(k).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"
        app = "picking-api" if k % 3 else "stock-ledger"
        stmt = (
            "INSERT INTO pick_confirmations (order_id, sku, qty, scanned_at) VALUES ($1,$2,$3,$4)"
            if app == "picking-api"
            else "UPDATE stock_levels SET on_hand = on_hand - $1 WHERE sku = $2"
        )
        pgl.append(
            f"{stamp} [{31000 + k}] wms_{app.replace('-', '_')}@wms ERROR:  database is not "
            f"accepting "
            'commands to avoid wraparound data loss in database "wms"'
        )
        pgl.append(
            f"{stamp} [{31000 + k}] wms_{app.replace('-', '_')}@wms HINT:  Stop the postmaster "
            f"and vacuum "
            "that database in single-user mode.\n\tYou might also need to commit or roll back "
            "old prepared "
            "transactions, or drop stale replication slots."
        )
        pgl.append(f"{stamp} [{31000 + k}] wms_{app.replace('-', '_')}@wms STATEMENT:  {stmt}")
    sc.log("warehouse", "wms-postgres-0", "postgresql", pgl)
    for h in range(96, 0, -4):
        sc.doc(
            c.ms(STOP + h * 20),
            "warning",
            "postgresql",
            "warehouse",
            "wms-postgres-0",
            "postgresql",
            f'database "wms" must be vacuumed within '
            f"{int(40_000_000 * (h / 96) ** 1.1) + 1_000_000} transactions",
        )
    for k in range(STOP, 0, -3):
        sc.doc(
            c.ms(k),
            "error",
            "postgresql",
            "warehouse",
            "wms-postgres-0",
            "postgresql",
            'database is not accepting commands to avoid wraparound data loss in database "wms"',
        )
    # clients: Go (picking-api) and Kotlin (stock-ledger)
    for _i, pn in enumerate(picking.names):
        lines = []
        for k in range(STOP + 20, 0, -1):
            if k > STOP:
                lines.append(
                    f'{{"t":"{c.ms(k)}","lvl":"info","msg":"pick '
                    f'confirmed","order":"SO-{771200 + k}",'
                    f'"ms":{12 + k % 9}}}'
                )
                continue
            if k % 2:
                lines.append(
                    f'{{"t":"{c.ms(k)}","lvl":"info","msg":"GET /v2/orders/SO-{771300 + k}/lines '
                    f'200","ms":7}}'
                )
            lines.append(
                f'{{"t":"{c.ms(k - 0.3)}","lvl":"error","msg":"POST /v2/picks '
                f'500","err":"confirm pick: '
                "ERROR: database is not accepting commands to avoid wraparound data loss in "
                "database "
                '\\"wms\\" (SQLSTATE 54000)","order":"SO-' + str(771300 + k) + '"}'
            )
            sc.doc(
                c.ms(k - 0.3),
                "error",
                "picking-api",
                "warehouse",
                pn,
                "app",
                "confirm pick: ERROR: database is not accepting commands to avoid wraparound "
                "data loss in "
                'database "wms" (SQLSTATE 54000)',
                **{"http.response.status_code": 500, "error.type": "pgconn.PgError"},
            )
        sc.log("warehouse", pn, "app", lines)
    for _i, pn in enumerate(ledger.names):
        sc.log(
            "warehouse",
            pn,
            "app",
            [
                f"{c.ms(k)} ERROR [ledger-consumer-{k % 4}] o.h.e.j.s.SqlExceptionHelper : "
                f"ERROR: database is not "
                'accepting commands to avoid wraparound data loss in database "wms"\n  Hint: '
                "Stop the postmaster and "
                "vacuum that database in single-user mode."
                if k < STOP
                else f"{c.ms(k)} INFO  [ledger-consumer-{k % 4}] c.t.ledger.MovementHandler : "
                f"applied movement batch size=50"
                for k in range(STOP + 30, 0, -2)
            ],
        )
    for code, rate in (
        ("200", lambda m: 14.0 if m > STOP else 6.0),
        ("500", lambda m: 0.0 if m > STOP else 8.0),
    ):
        for pn in picking.names:
            series(
                sc,
                c,
                "http_requests",
                "counter",
                "requests",
                {
                    "namespace": "warehouse",
                    "pod": pn,
                    "code": code,
                    "handler": "/v2/picks" if code == "500" else "/v2/orders",
                },
                counter(rate, 600, 1, pn + code),
                start_min=600,
                step_min=2,
                sample="http_requests_total",
            )
    series(
        sc,
        c,
        "pg_up",
        "gauge",
        "postgres up",
        {"namespace": "warehouse", "pod": "wms-postgres-0"},
        lambda m: 1,
        start_min=600,
        step_min=5,
    )
    series(
        sc,
        c,
        "pg_stat_database_xact_commit",
        "counter",
        "commits",
        {"datname": "wms", "pod": "wms-postgres-0"},
        counter(lambda m: 210.0 if m > STOP else 35.0, 600, 1, "commits"),
        start_min=600,
        step_min=2,
        sample="pg_stat_database_xact_commit_total",
    )
    series(
        sc,
        c,
        "pg_replication_slots_active",
        "gauge",
        "slot active",
        {"slot_name": "debezium_wms", "pod": "wms-postgres-0"},
        lambda m: 0,
        start_min=600,
        step_min=10,
    )
    return sc
