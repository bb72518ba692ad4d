"""3. crash_loop: the db-migrate init container of invoice-service 2.8.0 re-runs a migration
that an earlier attempt half applied (the table committed before a CONCURRENTLY index timed
out), so every retry fails with "relation ... already exists": Init:CrashLoopBackOff."""

from __future__ import annotations

from datetime import timedelta

from . import _kit as k

SID = "invoice-migrate-init-crashloop"

ECR = "774019352210.dkr.ecr.us-east-2.amazonaws.com"
OLD = f"{ECR}/invoice-service:2.7.3"
NEW = f"{ECR}/invoice-service:2.8.0"
DB = "billing-prod.cluster-c7ha1xq2m0pz.us-east-2.rds.amazonaws.com"

TRACE_DUP = [
    "INFO  [alembic.runtime.migration] Context impl PostgresqlImpl.",
    "INFO  [alembic.runtime.migration] Will assume transactional DDL.",
    (
        "INFO  [alembic.runtime.migration] Running upgrade b71e4c2a9f10 -> c3f9a1d07e52, add "
        "invoice adjustments"
    ),
    "Traceback (most recent call last):",
    (
        '  File "/usr/local/lib/python3.11/site-packages/sqlalchemy/engine/base.py", line 1969, '
        "in _exec_single_context"
    ),
    "    self.dialect.do_execute(",
    (
        '  File "/usr/local/lib/python3.11/site-packages/sqlalchemy/engine/default.py", line 922, '
        "in do_execute"
    ),
    "    cursor.execute(statement, parameters)",
    'psycopg2.errors.DuplicateTable: relation "invoice_adjustments" already exists',
    "",
    "",
    "The above exception was the direct cause of the following exception:",
    "",
    "Traceback (most recent call last):",
    '  File "/usr/local/bin/alembic", line 8, in <module>',
    "    sys.exit(main())",
    '  File "/usr/local/lib/python3.11/site-packages/alembic/config.py", line 636, in main',
    "    CommandLine(prog=prog).main(argv=argv)",
    '  File "/usr/local/lib/python3.11/site-packages/alembic/command.py", line 403, in upgrade',
    "    script.run_env()",
    '  File "/app/migrations/env.py", line 71, in <module>',
    "    run_migrations_online()",
    (
        '  File "/app/migrations/versions/c3f9a1d07e52_add_invoice_adjustments.py", line 22, in '
        "upgrade"
    ),
    "    op.create_table(",
    (
        '  File "/usr/local/lib/python3.11/site-packages/sqlalchemy/engine/default.py", line 922, '
        "in do_execute"
    ),
    "    cursor.execute(statement, parameters)",
    (
        "sqlalchemy.exc.ProgrammingError: (psycopg2.errors.DuplicateTable) relation "
        '"invoice_adjustments" already exists'
    ),
    "",
    "[SQL: ",
    "CREATE TABLE invoice_adjustments (",
    "\tid BIGSERIAL NOT NULL, ",
    "\tinvoice_id BIGINT NOT NULL, ",
    "\tamount_cents BIGINT NOT NULL, ",
    "\treason VARCHAR(64) NOT NULL, ",
    "\tcreated_at TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL, ",
    "\tPRIMARY KEY (id), ",
    "\tFOREIGN KEY(invoice_id) REFERENCES invoices (id)",
    ")",
    "",
    "]",
    "(Background on this error at: https://sqlalche.me/e/20/f405)",
]


def build(root) -> None:
    s = k.Scenario(SID, "2026-12-04T15:20:00Z", 4603)
    for ns in ("default", "kube-system", "billing", "web", "reporting"):
        s.add(k.namespace(s, ns, s.ago(days=500)))
    nodes = []
    for i, zone in enumerate(["us-east-2a", "us-east-2b", "us-east-2c", "us-east-2a"]):
        ip = f"10.48.{i * 16 + 3}.{21 + i * 7}"
        nodes.append(
            k.node(
                s,
                f"ip-{ip.replace('.', '-')}.us-east-2.compute.internal",
                s.ago(days=12, hours=i),
                zone,
                "m6i.2xlarge",
                cpu="8",
                memory="32408536Ki",
                alloc_cpu="7910m",
                alloc_mem="31387608Ki",
                internal_ip=ip,
                extra_labels={"eks.amazonaws.com/nodegroup": "apps-v3"},
            )
        )
    s.add(*nodes)
    nn = [n["metadata"]["name"] for n in nodes]

    ns = "billing"
    labels = {"app": "invoice-service"}
    env = [
        {
            "name": "DATABASE_URL",
            "valueFrom": {"secretKeyRef": {"name": "invoice-db", "key": "url"}},
        },
        {"name": "DB_HOST", "value": DB},
        {"name": "PGOPTIONS", "value": "-c statement_timeout=60000"},
    ]

    def spec_for(image: str) -> dict:
        init = [
            k.container(
                "db-migrate",
                image,
                cpu="100m",
                memory="256Mi",
                env=env,
                command=["alembic"],
                args=["-c", "/app/alembic.ini", "upgrade", "head"],
            )
        ]
        main = k.container(
            "invoice-service",
            image,
            ports=[{"name": "http", "containerPort": 8000, "protocol": "TCP"}],
            cpu="500m",
            memory="512Mi",
            limit_memory="768Mi",
            env=env,
            command=["gunicorn"],
            args=[
                "invoice.wsgi:app",
                "-k",
                "uvicorn.workers.UvicornWorker",
                "-w",
                "4",
                "-b",
                "0.0.0.0:8000",
            ],
            readiness=k.http_probe("/health/ready", "http", delay=5),
            liveness=k.http_probe("/health/live", "http", delay=20, period=20),
        )
        return k.pod_spec([main], init=init, sa="invoice-service")

    old_spec, new_spec = spec_for(OLD), spec_for(NEW)
    roll = s.ago(minutes=43)
    dep_created = s.ago(days=420)
    dep = k.deployment(
        s,
        ns,
        "invoice-service",
        3,
        labels,
        new_spec,
        dep_created,
        58,
        k.deploy_status(
            4,
            3,
            1,
            3,
            71,
            ("False", "ProgressDeadlineExceeded", "", roll + timedelta(minutes=10)),
            (
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.",
                s.ago(days=5),
            ),
            s.ago(days=5),
        ),
        strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
        annotations={
            "argocd.argoproj.io/tracking-id": "billing:apps/Deployment:billing/invoice-service"
        },
    )
    old_pth, new_pth = "6b7d9c5f48", "5d8c7b9f6"
    dep["status"]["conditions"][1]["message"] = (
        f'ReplicaSet "invoice-service-{new_pth}" has timed out progressing.'
    )
    old_rs = k.replicaset(
        s,
        dep,
        f"invoice-service-{old_pth}",
        old_pth,
        3,
        3,
        s.ago(days=5, hours=2),
        57,
        old_spec,
        labels,
    )
    new_rs = k.replicaset(
        s, dep, f"invoice-service-{new_pth}", new_pth, 1, 0, roll, 58, new_spec, labels
    )
    s.add(dep, old_rs, new_rs)
    old_pods = []
    for i in range(3):
        pc = s.ago(days=5, hours=2) + timedelta(seconds=40 * i)
        nd = nodes[i]
        last = None
        restarts = 0
        started = pc + timedelta(seconds=9)
        if i == 2:
            restarts = 1
            fin = s.ago(days=3, hours=4)
            last = k.terminated("Error", 137, started, fin, "inv-old")
            started = fin + timedelta(seconds=1)
        st = k.cs_running(
            "invoice-service",
            OLD,
            f"{ECR}/invoice-service@" + s.digest(OLD),
            started,
            True,
            restarts,
            last,
        )
        ist = {
            "name": "db-migrate",
            "image": OLD,
            "imageID": f"{ECR}/invoice-service@" + s.digest(OLD),
            "containerID": "containerd://" + s.digest("init", str(i))[7:],
            "ready": True,
            "started": False,
            "restartCount": 0,
            "state": {
                "terminated": {
                    "exitCode": 0,
                    "reason": "Completed",
                    "startedAt": k.rfc(pc + timedelta(seconds=2)),
                    "finishedAt": k.rfc(pc + timedelta(seconds=7)),
                    "containerID": "containerd://" + s.digest("init", str(i))[7:],
                }
            },
            "lastState": {},
        }
        old_pods.append(
            k.pod(
                s,
                ns,
                f"invoice-service-{old_pth}-{s.suffix()}",
                k.owner_of(old_rs),
                dict(labels, **{"pod-template-hash": old_pth}),
                old_spec,
                nn[i],
                nd["status"]["addresses"][0]["address"],
                pc,
                "Running",
                k.pod_conditions(pc, ready_at=started + timedelta(seconds=8)),
                [st],
                init_statuses=[ist],
            )
        )
    s.add(*old_pods)
    npn = f"invoice-service-{new_pth}-x2k4q"
    nd = nodes[3]
    restarts = 12
    last_start = s.ago(minutes=2, seconds=51)
    last = k.terminated("Error", 1, last_start, last_start + timedelta(seconds=3), "inv-new")
    pod_uid = s.uid("Pod", ns, npn)
    ist = k.cs_waiting(
        "db-migrate",
        NEW,
        "CrashLoopBackOff",
        f"back-off 5m0s restarting failed container=db-migrate pod={npn}_{ns}({pod_uid})",
        restarts=restarts,
        last=last,
        image_id=f"{ECR}/invoice-service@" + s.digest(NEW),
    )
    mst = k.cs_waiting("invoice-service", NEW, "PodInitializing")
    np_ = k.pod(
        s,
        ns,
        npn,
        k.owner_of(new_rs),
        dict(labels, **{"pod-template-hash": new_pth}),
        new_spec,
        nn[3],
        nd["status"]["addresses"][0]["address"],
        roll + timedelta(seconds=1),
        "Pending",
        k.pod_conditions(
            roll + timedelta(seconds=1),
            initialized=False,
            ready=False,
            message="containers with unready status: [invoice-service]",
            init_reason="containers with incomplete status: [db-migrate]",
        ),
        [mst],
        init_statuses=[ist],
    )
    s.add(np_)
    fp = "spec.initContainers{db-migrate}"
    s.add(
        k.event(
            s,
            ns,
            "Deployment",
            "invoice-service",
            "ScalingReplicaSet",
            f"Scaled up replica set invoice-service-{new_pth} to 1",
            roll,
            component="deployment-controller",
            api_version="apps/v1",
            involved_uid=dep["metadata"]["uid"],
        ),
        k.event(
            s,
            ns,
            "ReplicaSet",
            f"invoice-service-{new_pth}",
            "SuccessfulCreate",
            f"Created pod: {npn}",
            roll + timedelta(seconds=1),
            component="replicaset-controller",
            api_version="apps/v1",
            involved_uid=new_rs["metadata"]["uid"],
        ),
        k.event(
            s,
            ns,
            "Pod",
            npn,
            "Scheduled",
            f"Successfully assigned {ns}/{npn} to {nn[3]}",
            roll + timedelta(seconds=1),
            component="default-scheduler",
            involved_uid=pod_uid,
        ),
        k.event(
            s,
            ns,
            "Pod",
            npn,
            "Pulling",
            f'Pulling image "{NEW}"',
            roll + timedelta(seconds=2),
            host=nn[3],
            field_path=fp,
            involved_uid=pod_uid,
        ),
        k.event(
            s,
            ns,
            "Pod",
            npn,
            "Pulled",
            f'Successfully pulled image "{NEW}" in 11.482s (11.482s including waiting)',
            roll + timedelta(seconds=14),
            host=nn[3],
            field_path=fp,
            involved_uid=pod_uid,
        ),
        k.event(
            s,
            ns,
            "Pod",
            npn,
            "Pulled",
            f'Container image "{NEW}" already present on machine',
            roll + timedelta(minutes=1, seconds=20),
            last_start,
            count=restarts,
            host=nn[3],
            field_path=fp,
            involved_uid=pod_uid,
        ),
        k.event(
            s,
            ns,
            "Pod",
            npn,
            "Created",
            "Created container db-migrate",
            roll + timedelta(seconds=14),
            last_start,
            count=restarts + 1,
            host=nn[3],
            field_path=fp,
            involved_uid=pod_uid,
        ),
        k.event(
            s,
            ns,
            "Pod",
            npn,
            "Started",
            "Started container db-migrate",
            roll + timedelta(seconds=15),
            last_start,
            count=restarts + 1,
            host=nn[3],
            field_path=fp,
            involved_uid=pod_uid,
        ),
        k.event(
            s,
            ns,
            "Pod",
            npn,
            "BackOff",
            f"Back-off restarting failed container db-migrate in pod {npn}_{ns}({pod_uid})",
            roll + timedelta(minutes=1, seconds=22),
            s.ago(seconds=14),
            count=191,
            etype="Warning",
            host=nn[3],
            field_path=fp,
            involved_uid=pod_uid,
        ),
    )
    svc = k.service(
        s,
        ns,
        "invoice-service",
        {"app": "invoice-service"},
        [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": "http"}],
        dep_created,
    )
    ep = k.endpoints(s, svc, old_pods)
    ep["subsets"][0]["ports"][0]["port"] = 8000
    s.add(svc, ep)
    s.add(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": k.meta(
                s, "ConfigMap", "invoice-service-release", ns, roll - timedelta(minutes=2)
            ),
            "data": {
                "CHANGELOG": "2.8.0\n- invoice adjustments (credit notes) API\n- migration "
                "c3f9a1d07e52: "
                "create table invoice_adjustments; add invoice_lines.adjustment_id with index "
                "(built CONCURRENTLY in an autocommit block)\n"
            },
        }
    )

    # neighbours
    pgb = k.healthy_deployment(
        s,
        ns,
        "pgbouncer",
        "docker.io/bitnami/pgbouncer:1.21.0",
        2,
        nodes[:2],
        s.ago(days=300),
        s.ago(days=6, hours=1),
        revision=4,
        port=6432,
        readiness_path=None,
        memory="128Mi",
    )
    k.add_parts(s, pgb)
    portal = k.healthy_deployment(
        s,
        "web",
        "portal",
        f"{ECR}/portal:9.14.0",
        3,
        nodes,
        s.ago(days=380),
        s.ago(hours=2, minutes=5),
        revision=91,
        memory="384Mi",
    )
    k.add_parts(s, portal)
    s.add(
        k.event(
            s,
            "web",
            "Deployment",
            "portal",
            "ScalingReplicaSet",
            "Scaled down replica set portal-7c4f8d9b6 to 0 from 1",
            s.ago(minutes=58),
            component="deployment-controller",
            api_version="apps/v1",
            involved_uid=portal["deployment"]["metadata"]["uid"],
        )
    )
    # reporting: a CronJob whose run failed yesterday (decoy)
    cj_labels = {"app": "revenue-report"}
    cjc = k.container(
        "revenue-report",
        f"{ECR}/revenue-report:1.3.2",
        cpu="500m",
        memory="1Gi",
        command=["python", "-m", "reports.revenue", "--period", "yesterday"],
    )
    cj_spec = k.pod_spec([cjc], restart="Never")
    cj = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": k.meta(
            s, "CronJob", "revenue-report", "reporting", s.ago(days=200), labels=cj_labels
        ),
        "spec": {
            "schedule": "30 5 * * *",
            "concurrencyPolicy": "Forbid",
            "suspend": False,
            "successfulJobsHistoryLimit": 3,
            "failedJobsHistoryLimit": 1,
            "jobTemplate": {
                "spec": {
                    "backoffLimit": 1,
                    "template": {"metadata": {"labels": cj_labels}, "spec": cj_spec},
                }
            },
        },
        "status": {
            "lastScheduleTime": k.rfc(s.ago(hours=9, minutes=50)),
            "lastSuccessfulTime": k.rfc(s.ago(hours=9, minutes=41)),
        },
    }
    s.add(cj)
    for days, ok in ((1, False), (0, True)):
        sched = s.ago(hours=9, minutes=50, days=days)
        jn = f"revenue-report-{int(sched.timestamp() // 60)}"
        job = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": k.meta(
                s, "Job", jn, "reporting", sched, labels=cj_labels, owner=k.owner_of(cj)
            ),
            "spec": {
                "backoffLimit": 1,
                "completions": 1,
                "parallelism": 1,
                "template": {"metadata": {"labels": cj_labels}, "spec": cj_spec},
            },
            "status": {"startTime": k.rfc(sched)},
        }
        if ok:
            job["status"].update(
                {
                    "succeeded": 1,
                    "completionTime": k.rfc(sched + timedelta(minutes=9)),
                    "conditions": [
                        {
                            "type": "Complete",
                            "status": "True",
                            "lastProbeTime": k.rfc(sched + timedelta(minutes=9)),
                            "lastTransitionTime": k.rfc(sched + timedelta(minutes=9)),
                        }
                    ],
                }
            )
        else:
            job["status"].update(
                {
                    "failed": 2,
                    "conditions": [
                        {
                            "type": "Failed",
                            "status": "True",
                            "reason": "BackoffLimitExceeded",
                            "message": "Job has reached the specified backoff limit",
                            "lastProbeTime": k.rfc(sched + timedelta(minutes=23)),
                            "lastTransitionTime": k.rfc(sched + timedelta(minutes=23)),
                        }
                    ],
                }
            )
        s.add(job)
        if not ok:
            s.log(
                sched + timedelta(minutes=11),
                "reporting",
                f"{jn}-{s.suffix()}",
                "revenue-report",
                "error",
                "snowflake.connector.errors.OperationalError: 250003: Failed to get the response. "
                "Hanging? "
                "method: post, url: https://kx21873.us-east-2.aws.snowflakecomputing.com:443/queries/v1/query-request",
            )

    # --- logs ----------------------------------------------------------------------------------
    first = roll + timedelta(seconds=15)
    mp = npn
    seq = [
        (0, "info", "INFO  [alembic.runtime.migration] Context impl PostgresqlImpl."),
        (0, "info", "INFO  [alembic.runtime.migration] Will assume transactional DDL."),
        (
            1,
            "info",
            "INFO  [alembic.runtime.migration] Running upgrade b71e4c2a9f10 -> c3f9a1d07e52, add "
            "invoice adjustments",
        ),
        (
            61,
            "error",
            "psycopg2.errors.QueryCanceled: canceling statement due to statement timeout",
        ),
        (
            61,
            "error",
            "sqlalchemy.exc.OperationalError: (psycopg2.errors.QueryCanceled) canceling statement "
            "due to "
            "statement timeout\n[SQL: CREATE INDEX CONCURRENTLY ix_invoice_lines_adjustment_id ON "
            "invoice_lines (adjustment_id)]\n(Background on this error at: https://sqlalche.me/e/20/e3q8)",
        ),
    ]
    for off, lvl, msg in seq:
        s.log(
            first + timedelta(seconds=off),
            ns,
            mp,
            "db-migrate",
            lvl,
            msg,
            service="invoice-service",
        )
    # every later attempt
    attempt = first + timedelta(minutes=1, seconds=20)
    delays = [10, 20, 40, 80, 160, 300, 300, 300, 300, 300, 300, 300]
    starts = []
    for d in delays:
        starts.append(attempt)
        attempt = attempt + timedelta(seconds=3 + d)
    # pin the last start to the status' lastState
    shift = last_start - starts[-1]
    starts = [t + shift for t in starts]
    for t in starts:
        s.log(
            t,
            ns,
            mp,
            "db-migrate",
            "info",
            "INFO  [alembic.runtime.migration] Running upgrade b71e4c2a9f10 -> c3f9a1d07e52, add "
            "invoice adjustments",
            service="invoice-service",
        )
        s.log(
            t + timedelta(seconds=2),
            ns,
            mp,
            "db-migrate",
            "error",
            "sqlalchemy.exc.ProgrammingError: (psycopg2.errors.DuplicateTable) relation "
            '"invoice_adjustments" already '
            "exists\n[SQL: \nCREATE TABLE invoice_adjustments (\n\tid BIGSERIAL NOT NULL, "
            "\n\tinvoice_id BIGINT NOT "
            "NULL, \n\tamount_cents BIGINT NOT NULL, \n\treason VARCHAR(64) NOT NULL, "
            "\n\tcreated_at TIMESTAMP WITH "
            "TIME ZONE DEFAULT now() NOT NULL, \n\tPRIMARY KEY (id), \n\tFOREIGN KEY(invoice_id) "
            "REFERENCES invoices "
            "(id)\n)\n\n]\n(Background on this error at: https://sqlalche.me/e/20/f405)",
            service="invoice-service",
            **{"error.type": "sqlalchemy.exc.ProgrammingError"},
        )
    s.pod_log(ns, mp, "db-migrate", TRACE_DUP)
    s.pod_log(ns, mp, "db-migrate", TRACE_DUP, previous=True)
    paths = [
        "/v1/invoices",
        "/v1/invoices/{id}",
        "/v1/invoices/{id}/pdf",
        "/v1/customers/{id}/balance",
    ]
    t = s.ago(hours=2)
    i = 0
    while t < s.now:
        p = old_pods[i % 3]
        path = s.rng.choice(paths)
        s.log(
            t,
            ns,
            p["metadata"]["name"],
            "invoice-service",
            "info",
            f'{p["status"]["podIP"]}:0 - "GET {path} HTTP/1.1" 200',
            service="invoice-service",
            **{"http.response.status_code": 200, "url.path": path},
        )
        t += timedelta(seconds=s.rng.randint(12, 30))
        i += 1
    t = s.ago(hours=2)
    while t < s.now:
        p = pgb["pods"][0]
        s.log(
            t,
            ns,
            p["metadata"]["name"],
            "pgbouncer",
            "info",
            f"LOG stats: {s.rng.randint(30, 60)} xacts/s, {s.rng.randint(120, 200)} queries/s, in "
            f"{s.rng.randint(20000, 40000)} "
            f"B/s, out {s.rng.randint(80000, 160000)} B/s, xact {s.rng.randint(900, 1600)} us, "
            f"query {s.rng.randint(300, 700)} us, "
            f"wait {s.rng.randint(0, 40)} us",
            service="pgbouncer",
        )
        t += timedelta(seconds=60)
    s.log(
        roll + timedelta(seconds=76),
        ns,
        pgb["pods"][1]["metadata"]["name"],
        "pgbouncer",
        "warn",
        "WARNING C-0x55d1c2a8e0b0: billing/invoice_migrator@10.48.51.42:41822 pooler error: "
        "query_wait_timeout",
        service="pgbouncer",
    )

    # --- metrics -------------------------------------------------------------------------------
    pts = s.steps(120)
    ksm = {"job": "kube-state-metrics"}
    vals = []
    for t in pts:
        if t < roll:
            continue
        vals.append((t, sum(1 for st in starts if st + timedelta(seconds=3) <= t)))
    s.series(
        "kube_pod_init_container_status_restarts_total",
        "counter",
        "The number of restarts for the init container.",
        dict(ksm, namespace=ns, pod=npn, container="db-migrate"),
        vals,
    )
    s.series(
        "kube_pod_init_container_status_waiting_reason",
        "gauge",
        "Describes the reason the init container is currently in waiting state.",
        dict(ksm, namespace=ns, pod=npn, container="db-migrate", reason="CrashLoopBackOff"),
        [(t, 1) for t in pts if t > roll + timedelta(minutes=2)],
    )
    for dn, avail in (("invoice-service", 3), ("pgbouncer", 2)):
        s.series(
            "kube_deployment_status_replicas_available",
            "gauge",
            "The number of available replicas per deployment.",
            dict(ksm, namespace=ns, deployment=dn),
            [(t, avail) for t in pts],
        )
    s.series(
        "kube_deployment_status_replicas_updated",
        "gauge",
        "The number of updated replicas per deployment.",
        dict(ksm, namespace=ns, deployment="invoice-service"),
        [(t, 1 if t >= roll else 3) for t in pts],
    )
    for p in old_pods:
        acc = 0
        vals = []
        for t in pts:
            acc += s.rng.randint(180, 260)
            vals.append((t, acc))
        s.series(
            "http_requests_total",
            "counter",
            "Total HTTP requests.",
            {
                "namespace": ns,
                "pod": p["metadata"]["name"],
                "service": "invoice-service",
                "code": "200",
            },
            vals,
        )

    s.write(
        root,
        {
            "title": "invoice-service 2.8.0 rollout stuck",
            "report": "invoice-service 2.8.0 rollout has been stuck for ~40 min, argo shows it "
            "Degraded. the old "
            "pods are still serving so customers are fine for now. postgres slow again? (the "
            "revenue "
            "report job also failed yesterday, might be the same thing)\n",
            "truth": {
                "category": "crash_loop",
                "culprit": {
                    "kind": "Deployment",
                    "namespace": "billing",
                    "name": "invoice-service",
                },
                "evidence": [
                    'relation "invoice_adjustments" already exists',
                    "Init:CrashLoopBackOff",
                    "Back-off restarting failed container db-migrate",
                    "canceling statement due to statement timeout",
                ],
                "fix": "The first db-migrate run committed CREATE TABLE invoice_adjustments and "
                "then timed out on the "
                "CONCURRENTLY index, leaving alembic_version at b71e4c2a9f10; make the migration "
                "idempotent "
                "(create only if missing) or finish it by hand and stamp c3f9a1d07e52, with a "
                "longer "
                "statement_timeout for the index build; then the 2.8.0 pod initialises.",
            },
        },
    )
