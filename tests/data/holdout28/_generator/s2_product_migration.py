# ruff: noqa: E501  (log lines and messages are kept whole, as the systems print them)
"""Shape 2: product-api 2.31.0 adds an init container that runs the schema migrations;
migration 0042 adds a column that an operator had already added by hand, so the new pod
sits in Init:CrashLoopBackOff while the old revision keeps serving."""

from __future__ import annotations

from datetime import datetime, timedelta

from . import _k8s as k
from ._common import NODES, access, app, backoff_moments, chatter, ip, ms, nodes, restarts_counter
from ._out import Scenario, accumulate, grid
from ._workloads import Revision, deployment, pod_name, statefulset

NOW = datetime(2026, 4, 2, 14, 40, 0)
ROLLOUT = datetime(2026, 4, 2, 13, 52, 17)
OLD_IMAGE = "ghcr.io/acme-retail/product-api:2.30.1"
NEW_IMAGE = "ghcr.io/acme-retail/product-api:2.31.0"


def build() -> Scenario:
    sc = Scenario(
        id="catalog-deploy-hanging",
        title="product-api deploy hanging in the pipeline",
        now=NOW,
        seed=202,
        report="deploy of product-api 2.31 has been hanging in the pipeline for 40+ min, argo "
        "keeps saying Progressing. prod still seems to work. are we out of capacity on "
        "the cluster again?",
        truth={
            "category": "crash_loop",
            "culprit": {"kind": "Deployment", "namespace": "catalog", "name": "product-api"},
            "evidence": [
                'column "barcode" of relation "products" already exists',
                "Init:CrashLoopBackOff",
                "0042_product_barcode",
            ],
            "fix": "Make migration 0042 idempotent (ADD COLUMN IF NOT EXISTS) or mark it applied "
            "after checking the hand-added column, then let the rollout continue.",
        },
    )
    nodes(sc)
    for ns in ("catalog", "search", "kube-system"):
        sc.add(k.namespace(ns, NOW - timedelta(days=500)))
    labels = {"app": "product-api", "app.kubernetes.io/part-of": "catalog"}
    env = [
        {"name": "DATABASE_HOST", "value": "catalog-db-0.catalog-db.catalog.svc"},
        {"name": "DATABASE_NAME", "value": "catalog"},
        {
            "name": "DATABASE_USER",
            "valueFrom": {"secretKeyRef": {"name": "catalog-db-app", "key": "username"}},
        },
        {
            "name": "DATABASE_PASSWORD",
            "valueFrom": {"secretKeyRef": {"name": "catalog-db-app", "key": "password"}},
        },
    ]

    def main(image: str) -> dict:
        return k.container(
            "product-api",
            image,
            port=8080,
            env=env,
            resources=k.res("300m", "384Mi", mem_lim="768Mi"),
            readiness=k.http_probe("/health/ready", 8080),
            liveness=k.http_probe("/health/live", 8080, delay=20, period=20),
        )

    migrate = k.container(
        "migrate",
        NEW_IMAGE,
        command=["/app/product-api"],
        args=["migrate", "up"],
        env=env,
        resources=k.res("100m", "128Mi", mem_lim="256Mi"),
    )
    r6 = Revision(
        k.template(labels, [main("ghcr.io/acme-retail/product-api:2.29.4")]),
        NOW - timedelta(days=6, hours=2),
        0,
    )
    r7 = Revision(k.template(labels, [main(OLD_IMAGE)]), NOW - timedelta(days=2, hours=5), 3)
    r8 = Revision(
        k.template(labels, [main(NEW_IMAGE)], init=[migrate]),
        ROLLOUT,
        1,
        ready=0,
        change_cause="argocd: sync to 7b1e0c2 (product-api 2.31.0)",
    )
    progress = {
        "desired": 3,
        "max_unavailable": 0,
        "condition": {
            "type": "Progressing",
            "status": "False",
            "reason": "ProgressDeadlineExceeded",
            "message": 'ReplicaSet "{}" has timed out progressing.',
            "lastUpdateTime": k.stamp(ROLLOUT + timedelta(minutes=10)),
            "lastTransitionTime": k.stamp(ROLLOUT + timedelta(minutes=10)),
        },
    }
    dep, rss = deployment(
        "product-api",
        "catalog",
        {"app": "product-api"},
        [r6, r7, r8],
        created=NOW - timedelta(days=420),
        now=NOW,
        labels=labels,
        progress=progress,
        strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
    )
    dep["spec"]["selector"] = {"matchLabels": {"app": "product-api"}}
    cond = dep["status"]["conditions"][1]
    cond["message"] = cond["message"].format(r8.name)
    sc.add(dep, rss)
    old_pods = []
    for i in range(3):
        name = pod_name(r7, i)
        started = r7.created + timedelta(seconds=30 * i + 12)
        sc.add(
            k.pod(
                name,
                "catalog",
                r7.template,
                owner=("ReplicaSet", r7.name),
                created=started,
                node=NODES[i],
                ip=ip(sc, i + 1),
                statuses=[
                    k.running("product-api", started + timedelta(seconds=4), image=OLD_IMAGE)
                ],
                extra_labels={"pod-template-hash": r7.hash},
            )
        )
        old_pods.append(name)
    new = pod_name(r8, 0)
    moments = backoff_moments(ROLLOUT.timestamp() + 9, NOW.timestamp() - 60)
    last_start = datetime.utcfromtimestamp(moments[-1])
    last = k.terminated("Error", 1, last_start, last_start + timedelta(seconds=2), NEW_IMAGE)
    init_status = k.crashing(
        "migrate",
        image=NEW_IMAGE,
        restarts=len(moments) - 1,
        last=last,
        message=f"back-off 5m0s restarting failed container=migrate pod={new}_catalog"
        f"({k.uid('Pod' + 'catalog' + new)})",
    )
    sc.add(
        k.pod(
            new,
            "catalog",
            r8.template,
            owner=("ReplicaSet", r8.name),
            created=ROLLOUT,
            node=NODES[1],
            ip=ip(sc, 2),
            statuses=[k.waiting_init("product-api", image=NEW_IMAGE)],
            init_statuses=[init_status],
            phase="Pending",
            extra_labels={"pod-template-hash": r8.hash},
        )
    )
    sc.add(
        k.service(
            "product-api",
            "catalog",
            {"app": "product-api"},
            [("http", 80, 8080)],
            cluster_ip="172.20.88.14",
            created=NOW - timedelta(days=420),
        )
    )

    # migrate's log, each attempt the same ------------------------------------------------------
    def attempt(t: datetime) -> list[tuple[str, str]]:
        return [
            ("info", 'msg="product-api 2.31.0 migrate" commit=7b1e0c2'),
            (
                "info",
                'msg="connected to postgres" host=catalog-db-0.catalog-db.catalog.svc db=catalog',
            ),
            (
                "info",
                'msg="schema version" current=41 target=43 pending="0042_product_barcode,0043_price_history_idx"',
            ),
            ("info", 'msg="applying migration" name=0042_product_barcode.up.sql'),
            (
                "error",
                'msg="migration failed" name=0042_product_barcode error="ERROR: column \\"barcode\\" of '
                'relation \\"products\\" already exists (SQLSTATE 42701)"',
            ),
            ("info", 'msg="transaction rolled back" schema_version=41'),
            ("fatal", 'msg="migrate up: 1 migration failed, 1 not attempted"'),
        ]

    lines = [
        f"time={ms(last_start + timedelta(milliseconds=80 * n))} level={lvl} {text}"
        for n, (lvl, text) in enumerate(attempt(last_start))
    ]
    sc.log_file("catalog", new, "migrate", lines, previous=True)
    for m in moments:
        t = datetime.utcfromtimestamp(m)
        for n, (lvl, text) in enumerate(attempt(t)):
            sc.doc(
                t + timedelta(milliseconds=80 * n),
                "product-api",
                "catalog",
                new,
                lvl,
                text,
                container="migrate",
            )
    # events --------------------------------------------------------------------------------------
    sc.add(
        k.event(
            "catalog",
            "Deployment",
            "product-api",
            "ScalingReplicaSet",
            f"Scaled up replica set {r8.name} to 1",
            first=ROLLOUT,
            last=ROLLOUT,
            component="deployment-controller",
        )
    )
    sc.add(
        k.event(
            "catalog",
            "Pod",
            new,
            "Scheduled",
            f"Successfully assigned catalog/{new} to {NODES[1]}",
            first=ROLLOUT,
            last=ROLLOUT,
            component="default-scheduler",
        )
    )
    sc.add(
        k.event(
            "catalog",
            "Pod",
            new,
            "Pulled",
            f'Container image "{NEW_IMAGE}" already present on machine',
            first=ROLLOUT + timedelta(seconds=8),
            last=last_start,
            count=len(moments),
            host=NODES[1],
            field_path="spec.initContainers{migrate}",
        )
    )
    sc.add(
        k.event(
            "catalog",
            "Pod",
            new,
            "BackOff",
            f"Back-off restarting failed container migrate in pod {new}_catalog"
            f"({k.uid('Pod' + 'catalog' + new)})",
            first=ROLLOUT + timedelta(seconds=12),
            last=NOW - timedelta(seconds=25),
            count=212,
            type="Warning",
            host=NODES[1],
            field_path="spec.initContainers{migrate}",
        )
    )
    # catalog-db: healthy, but it logs the failing statement -----------------------------------------
    db_labels = {"app": "catalog-db"}
    db_tmpl = k.template(
        db_labels,
        [
            k.container(
                "postgres",
                "postgres:16.4",
                port=5432,
                port_name="postgres",
                resources=k.res("1", "2Gi", mem_lim="4Gi"),
                mounts=[{"name": "data", "mountPath": "/var/lib/postgresql/data"}],
            )
        ],
    )
    sts, revision = statefulset(
        "catalog-db",
        "catalog",
        db_labels,
        db_tmpl,
        replicas=1,
        created=NOW - timedelta(days=500),
        service_name="catalog-db",
    )
    sc.add(sts)
    started = NOW - timedelta(days=4, hours=11)
    sc.add(
        k.pod(
            "catalog-db-0",
            "catalog",
            db_tmpl,
            owner=("StatefulSet", "catalog-db"),
            created=started,
            node=NODES[2],
            ip=ip(sc, 3),
            statuses=[k.running("postgres", started + timedelta(seconds=6), image="postgres:16.4")],
            extra_labels={
                "controller-revision-hash": revision,
                "statefulset.kubernetes.io/pod-name": "catalog-db-0",
            },
        )
    )
    sc.doc(
        NOW - timedelta(days=2, hours=20, minutes=13),
        "catalog-db",
        "catalog",
        "catalog-db-0",
        "info",
        "LOG:  statement: ALTER TABLE products ADD COLUMN barcode varchar(32);",
        container="postgres",
        user__name="ops_rw",
        client__ip="10.0.1.201",
    )
    for m in moments:
        t = datetime.utcfromtimestamp(m) + timedelta(milliseconds=330)
        sc.doc(
            t,
            "catalog-db",
            "catalog",
            "catalog-db-0",
            "error",
            'ERROR:  column "barcode" of relation "products" already exists',
            container="postgres",
        )
        sc.doc(
            t,
            "catalog-db",
            "catalog",
            "catalog-db-0",
            "error",
            "STATEMENT:  ALTER TABLE products ADD COLUMN barcode text NOT NULL DEFAULT ''",
            container="postgres",
        )
    chatter(
        sc,
        "catalog-db",
        "catalog",
        ["catalog-db-0"],
        NOW - timedelta(hours=4),
        [
            "LOG:  checkpoint starting: time",
            "LOG:  checkpoint complete: wrote 412 buffers (2.5%)",
            'LOG:  automatic vacuum of table "catalog.public.product_views": index scans: 1',
        ],
        gap=400,
    )
    # bystanders ----------------------------------------------------------------------------------------
    access(
        sc,
        "product-api",
        "catalog",
        old_pods,
        NOW - timedelta(hours=4),
        ["GET /v1/products/{id}", "GET /v1/products?category={c}", "GET /v1/categories"],
        gap=1.5,
    )
    idx, _ = app(
        sc, "search-indexer", "search", "ghcr.io/acme-retail/search-indexer:0.19.2", replicas=2
    )
    img, _ = app(
        sc, "image-resizer", "catalog", "ghcr.io/acme-retail/image-resizer:1.7.0", replicas=2
    )
    chatter(
        sc,
        "search-indexer",
        "search",
        idx,
        NOW - timedelta(hours=4),
        ["indexed batch of 500 products in 1.8s", "refresh interval elapsed, committing"],
        gap=45,
    )
    chatter(
        sc,
        "search-indexer",
        "search",
        idx,
        NOW - timedelta(hours=4),
        ["elasticsearch bulk request took 6.2s (slow), retrying 3 items"],
        gap=900,
        level="warn",
    )
    chatter(
        sc,
        "image-resizer",
        "catalog",
        img,
        NOW - timedelta(hours=4),
        ["resized 3 variants for sku in 212ms", "cache miss, fetching original from s3"],
        gap=30,
    )
    sc.add(
        k.event(
            "search",
            "Pod",
            idx[0],
            "Unhealthy",
            'Liveness probe failed: Get "http://10.0.1.77:8080/healthz": context deadline exceeded',
            first=NOW - timedelta(minutes=55),
            last=NOW - timedelta(minutes=31),
            count=3,
            type="Warning",
            host=NODES[0],
            field_path="spec.containers{search-indexer}",
        )
    )
    times = grid(NOW - timedelta(hours=3), NOW)
    for pod in old_pods:
        sc.counter(
            "http_requests_total",
            "HTTP requests served.",
            {"namespace": "catalog", "pod": pod, "service": "product-api", "code": "200"},
            accumulate(times, lambda t: 0.22 + 0.05 * sc.rng.random(), 80000),
        )
    restarts_counter(sc, "catalog", new, "migrate", times, moments[1:])
    return sc
