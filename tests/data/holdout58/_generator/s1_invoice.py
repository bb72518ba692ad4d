"""Scenario 1: invoice-api rolled back to 4.7.3 after 4.8.0 migrated the schema forward.

The old code warms its open-invoice cache at boot, meets rows with the enum label that
4.8.0 introduced, and the gunicorn worker fails to boot (exit 3), so the pods crash-loop.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ._k8s import (
    PodSpecBits,
    app,
    container,
    cstatus,
    deployment,
    endpoints,
    meta,
    namespace,
    node,
    old_restart,
    owner_ref,
    pod,
    replicaset,
    service,
    terminated,
    waiting,
)
from ._kit import Story, at, grid, iso, mins

NS = "payments"
REG = "registry.acme.io/payments"
OLD, NEW = "4.7.3", "4.8.0"


def _nodes(s: Story) -> dict[str, str]:
    ips: dict[str, str] = {}
    for i, zone in enumerate(["eu-west-1a", "eu-west-1b", "eu-west-1c"] * 3):
        ip = f"10.12.{32 + i * 8}.{s.rng.randint(10, 240)}"
        name = f"ip-{ip.replace('.', '-')}.eu-west-1.compute.internal"
        labels = {"topology.kubernetes.io/zone": zone,
                  "eks.amazonaws.com/nodegroup": "general-m6i" if i < 6 else "data-r6i",
                  "node.kubernetes.io/instance-type": "m6i.2xlarge" if i < 6 else "r6i.2xlarge"}
        taints = [{"key": "dedicated", "value": "data", "effect": "NoSchedule"}] if i >= 6 else None
        s.add(node(s, name, s.now - timedelta(days=19 + i), ip=ip, labels=labels, taints=taints))
        ips[name] = ip
    return ips


def _crash_lines(t: datetime, pid: int) -> list[str]:
    """The container output of one failed boot of 4.7.3."""
    g = t.strftime("[%Y-%m-%d %H:%M:%S +0000]")
    j = t.strftime("%Y-%m-%dT%H:%M:%S")
    sa = "/usr/local/lib/python3.11/site-packages"
    return [
        f"{g} [1] [INFO] Starting gunicorn 21.2.0",
        f"{g} [1] [INFO] Listening at: http://0.0.0.0:8080 (1)",
        f"{g} [1] [INFO] Using worker: uvicorn.workers.UvicornWorker",
        f"{g} [{pid}] [INFO] Booting worker with pid: {pid}",
        f'{{"ts":"{j}.412Z","level":"info","logger":"invoice_api.main",'
        f'"msg":"invoice-api {OLD} (git 1d9e2c4) starting","env":"prod"}}',
        f'{{"ts":"{j}.688Z","level":"info","logger":"invoice_api.db",'
        '"msg":"connected","dsn":"postgresql://invoice_api@payments-db-rw.payments.svc:5432/'
        'invoicing","pool_size":10}',
        f'{{"ts":"{j}.702Z","level":"info","logger":"invoice_api.cache",'
        '"msg":"warming open-invoice cache","filter":"paid_at IS NULL AND issued_at > now() - '
        "interval '90 days'\"}",
        f"{g} [{pid}] [ERROR] Exception in worker process",
        "Traceback (most recent call last):",
        f'  File "{sa}/gunicorn/arbiter.py", line 609, in spawn_worker',
        "    worker.init_process()",
        f'  File "{sa}/uvicorn/workers.py", line 75, in init_process',
        "    super().init_process()",
        f'  File "{sa}/gunicorn/workers/base.py", line 142, in init_process',
        "    self.load_wsgi()",
        '  File "/app/invoice_api/main.py", line 44, in create_app',
        "    cache.warm_open_invoices(session)",
        '  File "/app/invoice_api/cache.py", line 58, in warm_open_invoices',
        "    for inv in session.execute(stmt).scalars():",
        f'  File "{sa}/sqlalchemy/engine/result.py", line 1367, in iterrows',
        "    for row in self._fetchiter_impl():",
        f'  File "{sa}/sqlalchemy/sql/sqltypes.py", line 1640, in _object_value_for_elem',
        "    raise LookupError(",
        "LookupError: 'credit_note_pending' is not among the defined enum values. Enum name: "
        "invoice_status. Possible values: draft, issued, overdue, paid, void",
        f"{g} [{pid}] [INFO] Worker exiting (pid: {pid})",
        f"{g} [1] [ERROR] Worker (pid:{pid}) exited with code 3",
        f"{g} [1] [ERROR] Shutting down: Master",
        f"{g} [1] [ERROR] Reason: Worker failed to boot.",
    ]


def build() -> Story:
    """Build the scenario."""
    now = at("2026-05-12T10:20:00Z")
    s = Story(
        "billing-invoice-downloads-503", "Invoice downloads failing with 503 in billing", now,
        "billing-gateway is returning 503 on invoice downloads since ~20-30 min, customers "
        "can't get their PDFs. payments-db was slow this morning (statement timeouts around "
        "8), could it be that again? fyi we rolled invoice-api back to the previous version "
        "earlier because 4.8.0 PDFs were slow.",
        "crash_loop", {"kind": "Deployment", "namespace": NS, "name": "invoice-api"},
        ["credit_note_pending", "is not among the defined enum values", "Worker failed to boot",
         "CrashLoopBackOff", "invoice-api:4.7.3", "Running upgrade 7c1f0e2ab4d9 -> a3e5d1c90b72"],
        "Roll invoice-api forward to 4.8.0 (or a 4.8.x with the PDF fix): 4.7.3 cannot read the "
        "schema 4.8.0's migration a3e5d1c90b72 left behind (new invoice_status label "
        "credit_note_pending, tax_region_code). Never roll back past a forward migration "
        "without its downgrade; if 4.7.x is required, ship a 4.7.4 that knows the new label.",
        seed=5801)
    rng = s.rng
    ips = _nodes(s)
    general = list(ips)[:6]
    for ns in (NS, "platform"):
        s.add(namespace(s, ns, now - timedelta(days=400)))
    rollback = s.ago(32)
    release = at("2026-05-11T15:05:00Z")

    # invoice-api: Recreate strategy, rolled back to the reused 4.7.3 ReplicaSet ---------
    labels = {"app": "invoice-api", "app.kubernetes.io/name": "invoice-api",
              "app.kubernetes.io/part-of": "billing"}
    env = [{"name": "DATABASE_URL", "value": "postgresql://invoice_api@payments-db-rw.payments"
            ".svc:5432/invoicing"}, {"name": "PDF_RENDERER", "value": "weasyprint"},
           {"name": "WEB_CONCURRENCY", "value": "2"}]
    c_old = [container("invoice-api", f"{REG}/invoice-api:{OLD}", cpu="500m", memory="768Mi",
                       env=env, probe_path="/healthz")]
    c_new = [container("invoice-api", f"{REG}/invoice-api:{NEW}", cpu="500m", memory="768Mi",
                       env=env, probe_path="/healthz")]
    d, duid = deployment(
        s, NS, "invoice-api", labels=labels, containers=c_old, replicas=3, ready=0,
        created=now - timedelta(days=310), revision=24, generation=41,
        strategy={"type": "Recreate"}, available=False, changed=rollback,
        progressing=("True", "ReplicaSetUpdated",
                     'ReplicaSet "invoice-api-6b9f7c5d48" is progressing.'))
    s.add(d)
    rs_old, rs_old_uid = replicaset(s, NS, "invoice-api", duid, "6b9f7c5d48", containers=c_old,
                                    replicas=3, ready=0, revision=24, app="invoice-api",
                                    created=at("2026-04-28T13:40:00Z"))
    rs_old["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"] = "22"
    rs_new, _ = replicaset(s, NS, "invoice-api", duid, "7d4c8b9f65", containers=c_new,
                           replicas=0, ready=0, revision=23, app="invoice-api", created=release)
    rs_prev, _ = replicaset(s, NS, "invoice-api", duid, "58f6d9c7b4", containers=c_old,
                            replicas=0, ready=0, revision=21, app="invoice-api",
                            created=at("2026-04-14T09:12:00Z"))
    s.add(rs_old, rs_new, rs_prev)
    s.event(NS, "Deployment", "invoice-api", "ScalingReplicaSet",
            "Scaled down replica set invoice-api-7d4c8b9f65 to 0 from 3",
            component="deployment-controller", last=rollback, api="apps/v1")
    s.event(NS, "Deployment", "invoice-api", "ScalingReplicaSet",
            "Scaled up replica set invoice-api-6b9f7c5d48 to 3 from 0",
            component="deployment-controller", last=rollback + timedelta(seconds=31),
            api="apps/v1")
    crash_pods: list[tuple[str, str, str]] = []
    img = f"{REG}/invoice-api:{OLD}"
    for i in range(3):
        pn = f"invoice-api-6b9f7c5d48-{s.suffix()}"
        nd = general[(i * 2) % 6]
        ip = f"10.42.{rng.randint(0, 31)}.{rng.randint(2, 250)}"
        start = rollback + timedelta(seconds=33 + i)
        # crash times: exponential back-off 10s, 20s, 40s ... capped at 5m
        c_t, back, times = start, 10, []
        while c_t < now - timedelta(seconds=20):
            times.append(c_t)
            c_t += timedelta(seconds=back + 3)
            back = min(back * 2, 300)
        restarts = len(times) - 1
        last_t = times[-1] + timedelta(seconds=3)
        st = [cstatus("invoice-api", img, waiting(
            "CrashLoopBackOff", f"back-off 5m0s restarting failed container=invoice-api "
                                f"pod={pn}_payments({s.uid()})"), ready=False, restarts=restarts,
            last=terminated("Error", 3, last_t - timedelta(seconds=3), last_t))]
        s.add(pod(s, NS, pn, PodSpecBits(c_old, {"app": "invoice-api",
                                                 "pod-template-hash": "6b9f7c5d48"}),
                  node_name=nd, ip=ip, start=start, statuses=st, ready=False, host_ip=ips[nd],
                  owner=owner_ref("ReplicaSet", "invoice-api-6b9f7c5d48", rs_old_uid)))
        crash_pods.append((pn, ip, nd))
        s.event(NS, "Pod", pn, "Scheduled", f"Successfully assigned {NS}/{pn} to {nd}",
                component="default-scheduler", last=start)
        s.event(NS, "Pod", pn, "Pulled", f'Container image "{img}" already present on machine',
                count=restarts + 1, first=start, last=last_t - timedelta(seconds=3), host=nd)
        s.event(NS, "Pod", pn, "Created", "Created container invoice-api", count=restarts + 1,
                first=start, last=last_t - timedelta(seconds=3), host=nd)
        s.event(NS, "Pod", pn, "Started", "Started container invoice-api", count=restarts + 1,
                first=start, last=last_t - timedelta(seconds=3), host=nd)
        s.event(NS, "Pod", pn, "BackOff", f"Back-off restarting failed container invoice-api in "
                f"pod {pn}_{NS}", type_="Warning", count=118 + 9 * i, first=start + mins(0.2),
                last=s.ago(0.3), host=nd)
        for k, ct in enumerate(times):
            lines = _crash_lines(ct, 7 + k % 3)
            if k == len(times) - 1:
                s.pod_log(NS, pn, "invoice-api", lines)
            elif k == len(times) - 2:
                s.pod_log(NS, pn, "invoice-api", lines, previous=True)
            s.log(ct + timedelta(milliseconds=412), NS, pn, "invoice-api", "invoice-api", "info",
                  f"invoice-api {OLD} (git 1d9e2c4) starting", service__version=OLD)
            s.log(ct + timedelta(milliseconds=702), NS, pn, "invoice-api", "invoice-api", "info",
                  "warming open-invoice cache", service__version=OLD)
            s.log(ct + timedelta(milliseconds=950), NS, pn, "invoice-api", "invoice-api", "error",
                  "Exception in worker process", service__version=OLD)
            s.log(ct + timedelta(milliseconds=990), NS, pn, "invoice-api", "invoice-api", "error",
                  "Worker failed to boot.", service__version=OLD)
        ms = grid(rollback, now, 60)
        s.metrics.counter("kube_pod_container_status_restarts", "restarts", {
            "namespace": NS, "pod": pn, "container": "invoice-api",
            "job": "kube-state-metrics"},
            [(m, float(sum(1 for x in times[1:] if x <= m))) for m in ms])
    s.add(service(s, NS, "invoice-api", "invoice-api", now - timedelta(days=310)),
          endpoints(s, NS, "invoice-api", [], crash_pods, now - timedelta(days=310)))
    _migration(s, ips, general, release)
    gw_pods = _traffic(s, ips, general, rollback)
    _distractors(s, ips, general, rollback)
    _metrics(s, rollback, gw_pods)
    return s


def _migration(s: Story, ips: dict[str, str], general: list[str], release: datetime) -> None:
    """The 4.8.0 pre-upgrade migration hook Job from yesterday, still on record."""
    job_uid = s.uid()
    job = "invoice-api-db-migrate-4-8-0"
    mc = container("migrate", f"{REG}/invoice-api:{NEW}", port=None, probe_path=None,
                   command=["alembic", "upgrade", "head"])
    s.add({"apiVersion": "batch/v1", "kind": "Job",
           "metadata": meta(job, NS, release - mins(3), job_uid,
                            {"app": "invoice-api", "app.kubernetes.io/version": NEW},
                            {"helm.sh/hook": "pre-upgrade",
                             "helm.sh/hook-delete-policy": "before-hook-creation"}),
           "spec": {"backoffLimit": 0, "completions": 1, "parallelism": 1, "template": {
               "spec": {"restartPolicy": "Never", "containers": [mc]}}},
           "status": {"succeeded": 1, "startTime": iso(release - mins(3)),
                      "completionTime": iso(release - mins(2)),
                      "conditions": [{"type": "Complete", "status": "True",
                                      "lastTransitionTime": iso(release - mins(2))}]}})
    mpod = f"{job}-x7k2p"
    s.add(pod(s, NS, mpod, PodSpecBits([mc], {"job-name": job}), node_name=general[1],
              ip="10.42.7.31", start=release - mins(3), phase="Succeeded", ready=False,
              host_ip=ips[general[1]], owner=owner_ref("Job", job, job_uid, "batch/v1"),
              statuses=[cstatus("migrate", mc["image"], terminated(
                  "Completed", 0, release - mins(3), release - mins(2)), ready=False)]))
    mig = ["INFO  [alembic.runtime.migration] Context impl PostgresqlImpl.",
           "INFO  [alembic.runtime.migration] Will assume transactional DDL.",
           "INFO  [alembic.runtime.migration] Running upgrade 7c1f0e2ab4d9 -> a3e5d1c90b72, "
           "credit notes: invoice_status += credit_note_pending; invoices.tax_region_code",
           "INFO  [alembic.runtime.migration] Running upgrade a3e5d1c90b72 -> e41b07c2d9f3, "
           "backfill tax_region_code from billing_address.country"]
    s.pod_log(NS, mpod, "migrate", mig)
    for k, line in enumerate(mig):
        s.log(release - mins(3) + timedelta(seconds=2 + k * 9), NS, mpod, "migrate",
              "invoice-api-migrate", "info", line)


def _traffic(s: Story, ips: dict[str, str], general: list[str], rollback: datetime) -> list[str]:
    """4.8.0's last hours (slow PDFs, first credit notes) and the loud billing-gateway."""
    now = s.now
    v48 = [f"invoice-api-7d4c8b9f65-{s.suffix()}" for _ in range(3)]
    s.chatter(NS, v48, "invoice-api", "invoice-api", now - timedelta(hours=7), rollback, 14.0, [
        (6, "info", "GET /v1/invoices/{id} 200 {ms}ms"),
        (3, "info", "GET /v1/invoices?customer={user}&status=open 200 {ms}ms"),
        (2, "warning", "GET /v1/invoices/{id}/pdf 200 4{n}87ms slow render (weasyprint)"),
        (1, "info", "POST /v1/invoices/{id}/credit-notes 201: invoice {id} status -> "
                    "credit_note_pending"),
        (1, "info", "POST /v1/invoices 201 {ms}ms tax_region_code=EU-DE")],
        service__version=NEW)
    gw = app(s, NS, "billing-gateway", f"{REG}/billing-gateway:2.31.0", replicas=4,
             nodes=general, node_ips=ips, created=now - timedelta(days=500),
             rolled=now - timedelta(days=6))
    s.chatter(NS, gw.pods, "billing-gateway", "billing-gateway", now - timedelta(hours=7),
              rollback, 9.0, [(8, "info", "GET /billing/invoices/{id}/download 200 {ms}ms"),
                              (4, "info", "GET /billing/account/{user}/summary 200 {ms}ms")])
    s.chatter(NS, gw.pods, "billing-gateway", "billing-gateway", rollback, now, 2.5, [
        (8, "error", "GET /billing/invoices/{id}/download 503 upstream invoice-api: no healthy "
                     "upstream (0/3 endpoints ready)"),
        (3, "error", "GET /billing/account/{user}/summary 503 upstream invoice-api: no healthy "
                     "upstream"),
        (1, "warning", "circuit breaker invoice-api OPEN after 50 consecutive failures")],
        http__response__status_code=503)
    return gw.pods


def _distractors(s: Story, ips: dict[str, str], general: list[str], rollback: datetime) -> None:
    """payments-db noise, fx-rates deploy, ledger-consumer old OOM, Pending report-exporter."""
    now = s.now
    db = [f"payments-db-{i}" for i in range(3)]
    s.chatter(NS, db, "payments-db", "postgres", now - timedelta(hours=7), now, 40.0, [
        (5, "info", "LOG:  checkpoint starting: time"),
        (4, "info", "LOG:  checkpoint complete: wrote {n}31 buffers (1.{n}%); 0 WAL file(s) "
                    "added, 0 removed, 3 recycled"),
        (2, "warning", "LOG:  could not receive data from client: Connection reset by peer")])
    s.chatter(NS, db[:1], "payments-db", "postgres", at("2026-05-12T07:38:00Z"),
              at("2026-05-12T08:12:00Z"), 12.0, [
        (3, "error", "ERROR:  canceling statement due to statement timeout"),
        (1, "warning", "LOG:  duration: 3{n}12.118 ms  statement: SELECT ... FROM ledger_entries "
                       "WHERE account_id = $1")])
    for k in range(6):
        s.log(rollback + timedelta(seconds=2 + k), NS, db[0], "postgres", "payments-db",
              "warning", "LOG:  could not receive data from client: Connection reset by peer")
    fx = app(s, NS, "fx-rates", f"{REG}/fx-rates:1.9.2", replicas=2, nodes=general,
             node_ips=ips, created=now - timedelta(days=200), rolled=s.ago(55), revision=17)
    s.event(NS, "Deployment", "fx-rates", "ScalingReplicaSet",
            f"Scaled up replica set {fx.pods[0].rsplit('-', 1)[0]} to 2 from 0",
            component="deployment-controller", last=s.ago(55), api="apps/v1")
    s.chatter(NS, fx.pods, "fx-rates", "fx-rates", s.ago(55), now, 30.0, [
        (5, "info", "rates refreshed from ECB: 32 currencies, base EUR"),
        (2, "warning", "provider ratesapi timeout after 2000ms, serving cached rates (age {n}s)")])
    lc = app(s, NS, "ledger-consumer", f"{REG}/ledger-consumer:3.2.1", replicas=2,
             nodes=general, node_ips=ips, created=now - timedelta(days=90),
             rolled=now - timedelta(days=6), svc=False,
             restarts={1: old_restart("OOMKilled", 137, now - timedelta(days=6),
                                      now - timedelta(days=2, hours=3))})
    s.chatter(NS, lc.pods, "ledger-consumer", "ledger-consumer", now - timedelta(hours=7), now,
              45.0, [(6, "info", "consumed batch of {n} ledger events, lag 0"),
                     (1, "warning", "kafka: rebalance in progress, retrying commit")])
    pn = f"report-exporter-5c8d7f9b6-{s.suffix()}"
    s.add(pod(s, NS, pn, PodSpecBits([container("report-exporter",
                                                f"{REG}/report-exporter:0.14.0",
                                                memory="24Gi", cpu="2")],
                                     {"app": "report-exporter"}),
              node_name=None, ip=None, start=now - timedelta(hours=3), owner=None,
              phase="Pending", ready=False,
              conditions=[{"type": "PodScheduled", "status": "False",
                           "reason": "Unschedulable", "lastTransitionTime": iso(s.ago(180)),
                           "message": "0/9 nodes are available: 3 node(s) had untolerated "
                                      "taint {dedicated: data}, 6 Insufficient memory."}]))
    s.event(NS, "Pod", pn, "FailedScheduling", "0/9 nodes are available: 3 node(s) had "
            "untolerated taint {dedicated: data}, 6 Insufficient memory. preemption: 0/9 nodes "
            "are available: 3 Preemption is not helpful for scheduling, 6 No preemption victims "
            "found for incoming pod.", type_="Warning", count=37, first=s.ago(58),
            last=s.ago(4), component="default-scheduler")


def _metrics(s: Story, rollback: datetime, gw_pods: list[str]) -> None:
    """Gateway codes, invoice-api availability, database activity, blackbox latency."""
    now = s.now
    ts = grid(now - timedelta(hours=6), now, 60)
    for code in ("200", "503"):
        total = 0.0
        pts = []
        for t in ts:
            bad = t > rollback
            rate = (0.4 if bad else 18.0) if code == "200" else (17.0 if bad else 0.02)
            total += rate * 60 * (0.9 + 0.2 * s.rng.random())
            pts.append((t, float(round(total))))
        s.metrics.counter("http_requests_total", "HTTP requests", {
            "namespace": NS, "service": "billing-gateway", "code": code,
            "route": "/billing/invoices/{id}/download"}, pts)
    s.metrics.gauge("kube_deployment_status_replicas_available", "available replicas", {
        "namespace": NS, "deployment": "invoice-api"}, [(t, 3.0 if t < rollback else 0.0)
                                                        for t in ts])
    s.metrics.gauge("kube_deployment_status_replicas_available", "available replicas", {
        "namespace": NS, "deployment": "billing-gateway"}, [(t, float(len(gw_pods))) for t in ts])
    slow = (at("2026-05-12T07:38:00Z"), at("2026-05-12T08:12:00Z"))
    s.metrics.gauge("pg_stat_activity_count", "connections by state", {
        "namespace": NS, "datname": "invoicing", "state": "active"},
        [(t, float(s.rng.randint(4, 9) + (38 if slow[0] < t < slow[1] else 0))) for t in ts])
    probe = {"job": "blackbox", "instance": "https://billing.acme.io/invoices/sample.pdf"}
    s.metrics.gauge("probe_duration_seconds", "blackbox probe duration", probe,
                    [(t, (4.4 if t > now - timedelta(hours=2, minutes=20) else 0.9)
                      * (0.8 + 0.4 * s.rng.random()) if t < rollback else 0.05) for t in ts])
    s.metrics.gauge("probe_success", "blackbox probe success", probe,
                    [(t, 1.0 if t < rollback else 0.0) for t in ts])
