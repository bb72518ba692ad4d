"""Shape 1, crash_loop: a hardening change sets readOnlyRootFilesystem and the app can no
longer write its pid file under /app/var; the base-image bump shipped with it is blamed."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from . import _kit as k

SID = "payments-ledger-rollout-stuck"


def build(root: Path) -> None:
    s = k.Story(SID, "2026-04-14T09:42:00Z", seed=5501)
    old = s.ago(days=200)
    nodes = k.eks_nodes(s, [
        ("eu-west-1a", "m6i.2xlarge", "8", "32386132Ki", "general-a"),
        ("eu-west-1b", "m6i.2xlarge", "8", "32386132Ki", "general-b"),
        ("eu-west-1c", "m6i.2xlarge", "8", "32386132Ki", "general-c"),
        ("eu-west-1a", "m6i.2xlarge", "8", "32386132Ki", "general-a"),
    ], old, s.ago(days=5, hours=3))
    base = k.standard_cluster(s, nodes, old, s.ago(days=5, hours=2))
    for ns in ("payments", "notifications", "batch", "ingress-nginx"):
        k.namespace(s, ns, old, {"team": {"payments": "payments", "notifications": "comms",
                                          "batch": "data", "ingress-nginx": "platform"}[ns]})

    reg = "482913307715.dkr.ecr.eu-west-1.amazonaws.com"
    rollout = s.ago(34, seconds=12)

    # ----- ledger-api: revision 7 healthy, revision 8 (chart 3.2.0) crashes -----
    def ledger_container(tag: str, hardened: bool) -> k.Obj:
        sec: k.Obj = {"allowPrivilegeEscalation": False}
        if hardened:
            sec = {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                   "runAsNonRoot": True, "runAsUser": 10001,
                   "capabilities": {"drop": ["ALL"]}}
        mounts = [{"name": "config", "mountPath": "/etc/ledger", "readOnly": True}]
        if hardened:
            mounts.append({"name": "tmp", "mountPath": "/tmp"})
        return k.container(
            "ledger-api", f"{reg}/payments/ledger-api:{tag}", port=8000, cpu="500m",
            mem="512Mi", cpu_limit="2", mem_limit="1Gi",
            args=["--config", "/etc/ledger/ledger.yaml", "--workers", "4"],
            env=[{"name": "LEDGER_ENV", "value": "prod"},
                 {"name": "LEDGER_DB_HOST", "value": "ledger-db.payments.svc"},
                 {"name": "LEDGER_RUN_DIR", "value": "/app/var/run"},
                 {"name": "LEDGER_CACHE_DIR", "value": "/app/var/cache"}],
            readiness=k.http_probe("/readyz", "http", delay=5, period=5),
            liveness=k.http_probe("/livez", "http", delay=20, period=10),
            mounts=mounts, security=sec)

    vol_old = [{"name": "config", "configMap": {"name": "ledger-api-config"}}]
    vol_new = [*vol_old, {"name": "tmp", "emptyDir": {}}]
    labels = {"app.kubernetes.io/name": "ledger-api", "app.kubernetes.io/part-of": "payments"}
    old_c = ledger_container("4.13.0", hardened=False)
    new_c = ledger_container("4.13.1", hardened=True)
    ledger = k.deployment(
        s, "payments", "ledger-api", [old_c], replicas=3, nodes=nodes, created=old,
        pods_since=s.ago(days=2, hours=5), revision=7, labels=labels, volumes=vol_old,
        sa="ledger-api", cpu=0.35, mem=410 * k.MiB,
        strategy={"type": "RollingUpdate",
                  "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}},
        old_revisions=[(6, s.ago(days=9), [ledger_container("4.12.4", hardened=False)])],
        annotations={"meta.helm.sh/release-name": "ledger-api",
                     "meta.helm.sh/release-namespace": "payments"},
        tmpl_annotations={"checksum/config": s.hexid(64)})
    dep = ledger.obj
    # The live Deployment carries revision 8's template.
    new_tmpl = k.template(labels, [new_c], volumes=vol_new, sa="ledger-api",
                          annotations={"checksum/config": s.hexid(64)},
                          extra={"securityContext": {"fsGroup": 10001,
                                                     "seccompProfile":
                                                     {"type": "RuntimeDefault"}}})
    dep["spec"]["template"] = new_tmpl
    dep["spec"]["replicas"] = 4
    dep["metadata"]["annotations"]["deployment.kubernetes.io/revision"] = "8"
    dep["metadata"]["labels"]["helm.sh/chart"] = "ledger-api-3.2.0"
    dep["metadata"]["labels"]["app.kubernetes.io/version"] = "4.13.1"
    dep["metadata"]["generation"] = 11
    h_new = s.suffix(10)
    new_rs = k.replicaset(s, ledger, new_tmpl, 8, rollout, 2, 0, hash_=h_new)
    old_rs = ledger.rs[-1]
    old_rs["spec"]["replicas"] = 3
    old_rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] = "4"
    dep["status"] = {
        "observedGeneration": 11, "replicas": 5, "updatedReplicas": 2, "readyReplicas": 3,
        "availableReplicas": 3, "unavailableReplicas": 2,
        "conditions": [
            {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
             "message": "Deployment has minimum availability.",
             "lastUpdateTime": k.iso(s.ago(days=2, hours=5)),
             "lastTransitionTime": k.iso(s.ago(days=2, hours=5))},
            {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
             "message": f'ReplicaSet "ledger-api-{h_new}" has timed out progressing.',
             "lastUpdateTime": k.iso(rollout + timedelta(seconds=601)),
             "lastTransitionTime": k.iso(rollout + timedelta(seconds=601))},
        ],
    }
    old_hash = old_rs["metadata"]["name"].rsplit("-", 1)[1]
    s.event("Deployment", "payments", "ledger-api", "ScalingReplicaSet",
            f"Scaled up replica set ledger-api-{h_new} to 1", first=rollout,
            component="deployment-controller")
    s.event("Deployment", "payments", "ledger-api", "ScalingReplicaSet",
            f"Scaled down replica set ledger-api-{old_hash} to 3 from 4", first=rollout,
            component="deployment-controller")
    s.event("Deployment", "payments", "ledger-api", "ScalingReplicaSet",
            f"Scaled up replica set ledger-api-{h_new} to 2 from 1",
            first=rollout + timedelta(seconds=1), component="deployment-controller")
    # The fourth old pod was removed by the rollout.
    gone = ledger.pods.pop()
    s.objects.remove(gone)
    s.pods.remove(ledger.recs.pop())

    crash_pods: list[str] = []
    for i, (nd, hip) in enumerate([nodes[2], nodes[3]]):
        pname = f"ledger-api-{h_new}-{s.suffix()}"
        crash_pods.append(pname)
        created = rollout + timedelta(seconds=i)
        runs = k.crashloop(created + timedelta(seconds=6 + i), s.now, 1.4)
        last_start, last_exit = runs[-1]
        if last_exit > s.now:
            runs = runs[:-1]
            last_start, last_exit = runs[-1]
        restarts = len(runs) - 1
        st = k.waiting(new_c, "CrashLoopBackOff",
                       f"back-off 5m0s restarting failed container=ledger-api "
                       f"pod={pname}_payments({s.uid()})",
                       restarts=restarts,
                       last=k.terminated("Error", 1, last_start, last_exit))
        p = k.make_pod(s, "payments", pname, new_tmpl,
                       k.owner_ref("ReplicaSet", new_rs["metadata"]["name"],
                                   new_rs["metadata"]["uid"]),
                       nd, created, hash_label={"pod-template-hash": h_new}, statuses=[st],
                       conditions=k.pod_conditions(
                           created, None, reason="ContainersNotReady",
                           message="containers with unready status: [ledger-api]"),
                       host_ip=hip)
        uid = p["metadata"]["uid"]
        s.pods.append(k.PodRec("payments", pname, nd, ["ledger-api"], created, ready=False,
                               cpu=0.002, mem=38 * k.MiB, restarts=restarts,
                               restart_times=[a for a, _ in runs[1:]]))
        s.event("Pod", "payments", pname, "Scheduled",
                f"Successfully assigned payments/{pname} to {nd}", first=created,
                component="default-scheduler", uid=uid)
        s.event("Pod", "payments", pname, "Pulling",
                f'Pulling image "{new_c["image"]}"', first=created + timedelta(seconds=1),
                host=nd, uid=uid, field_path="spec.containers{ledger-api}")
        s.event("Pod", "payments", pname, "Pulled",
                f'Successfully pulled image "{new_c["image"]}" in 4.18s (4.18s including '
                f"waiting). Image size: 58231904 bytes.", first=created + timedelta(seconds=5),
                host=nd, uid=uid, field_path="spec.containers{ledger-api}")
        s.event("Pod", "payments", pname, "Pulled",
                f'Container image "{new_c["image"]}" already present on machine',
                first=runs[1][0], last=last_start, count=restarts, host=nd, uid=uid,
                field_path="spec.containers{ledger-api}")
        s.event("Pod", "payments", pname, "Created", "Created container ledger-api",
                first=runs[0][0], last=last_start, count=restarts + 1, host=nd, uid=uid,
                field_path="spec.containers{ledger-api}")
        s.event("Pod", "payments", pname, "Started", "Started container ledger-api",
                first=runs[0][0], last=last_start, count=restarts + 1, host=nd, uid=uid,
                field_path="spec.containers{ledger-api}")
        s.event("Pod", "payments", pname, "BackOff",
                "Back-off restarting failed container ledger-api in pod "
                f"{pname}_payments({uid})", first=runs[0][1] + timedelta(seconds=2),
                last=s.ago(seconds=s.rng.randint(3, 20)), count=restarts * 6 + 3,
                type_="Warning", host=nd, uid=uid, field_path="spec.containers{ledger-api}")
        attempt_logs: list[list[str]] = []
        for a, b in runs:
            out = _boot_lines(s, a, b)
            attempt_logs.append(out)
            for line in out:
                if line.startswith("  ") or line.startswith("Traceback") or \
                        line.startswith("OSError"):
                    continue
                stamp = k.parse(line[:19].replace(" ", "T") + "Z") + timedelta(
                    milliseconds=int(line[20:23]))
                level = line[24:32].strip()
                msg = line[24:].split("] ", 1)[1] if "] " in line else line
                s.log(stamp, "payments", pname, "ledger-api", "ledger-api",
                      level.lower().replace("critical", "fatal"), msg,
                      kubernetes__node__name=nd, service__version="4.13.1")
            tb = [ln for ln in out if ln.startswith("  ") or ln.startswith("Traceback")
                  or ln.startswith("OSError")]
            s.log(b - timedelta(milliseconds=2), "payments", pname, "ledger-api",
                  "ledger-api", "error", "\n".join(tb), kubernetes__node__name=nd,
                  service__version="4.13.1", error__type="OSError",
                  error__message="[Errno 30] Read-only file system: "
                                 "'/app/var/run/ledger-api.pid'")
        s.pod_log("payments", pname, "ledger-api", attempt_logs[-1])
        s.pod_log("payments", pname, "ledger-api", attempt_logs[-2], previous=True)

    # Healthy old pods: serving postings, a stale-rate warning now and then.
    ledger_routes = [("POST", "/v1/postings", 201, 60), ("GET", "/v1/accounts/{id}/balance",
                                                          200, 30),
                     ("GET", "/v1/postings/{id}", 200, 8), ("GET", "/v1/postings/{id}", 404, 1),
                     ("POST", "/v1/postings", 409, 1)]
    k.http_logs(s, ledger, "ledger-api", s.ago(65), s.now, 30.0, ledger_routes,
                fmt='{method} {path} -> {status} in {ms}ms')
    k.lines(s, ledger, "ledger-api", s.ago(65), s.now, 140.0, [
        ("warn", "fx-rates upstream slow, using cached EUR/GBP rate (age {n}s)", 3),
        ("info", "postgres pool stats: in_use={n} idle=4 max=20", 2),
        ("warn", "idempotency key replay for posting {id}, returning original result", 1),
    ])
    for p in ledger.pods:
        boot = k.parse(p["metadata"]["creationTimestamp"]) + timedelta(seconds=4)
        for i, msg in enumerate([
            "ledger-api 4.13.0 (build 2b91e07, python 3.11.9) starting",
            "config loaded from /etc/ledger/ledger.yaml (profile=prod)",
            "pid file written: /app/var/run/ledger-api.pid",
            "fx-rate cache ready in /app/var/cache/fx (1432 pairs)",
            "listening on 0.0.0.0:8000 with 4 workers",
        ]):
            s.log(boot + timedelta(milliseconds=120 * i), "payments", p["metadata"]["name"],
                  "ledger-api", "ledger-api", "info", msg, service__version="4.13.0")
    k.service(s, "payments", "ledger-api", labels, 80, "http", old, pods=ledger.pods,
              not_ready=[o for o in s.objects if o["kind"] == "Pod"
                         and o["metadata"]["name"] in crash_pods])

    # ----- payments-gateway (caller), fx-rates (bystander with an old OOM restart) -----
    gw = k.deployment(
        s, "payments", "payments-gateway",
        [k.container("gateway", f"{reg}/payments/payments-gateway:2.31.0", port=8080,
                     cpu="300m", mem="384Mi", mem_limit="768Mi",
                     readiness=k.http_probe("/health/ready", 8080),
                     liveness=k.http_probe("/health/live", 8080, delay=15))],
        replicas=3, nodes=nodes, created=old, pods_since=s.ago(days=4, hours=1), cpu=0.25,
        mem=300 * k.MiB)
    k.service(s, "payments", "payments-gateway", {"app.kubernetes.io/name": "payments-gateway"},
              80, 8080, old, pods=gw.pods)
    k.http_logs(s, gw, "payments-gateway", s.ago(65), s.now, 50.0, [
        ("POST", "/api/payments", 201, 50), ("GET", "/api/payments/{id}", 200, 40),
        ("POST", "/api/payments", 402, 3), ("POST", "/api/payments", 422, 1)],
        fmt='method={method} path={path} status={status} duration_ms={ms}')
    k.lines(s, gw, "payments-gateway", s.ago(65), s.now, 200.0, [
        ("warn", "card-network adapter: retrying authorisation {id} after timeout (attempt 2)",
         2),
        ("error", "3DS callback for payment {id} arrived after session expiry; ignored", 1),
    ])
    fx = k.deployment(
        s, "payments", "fx-rates",
        [k.container("fx-rates", f"{reg}/payments/fx-rates:1.8.2", port=8080, cpu="100m",
                     mem="256Mi", mem_limit="256Mi",
                     readiness=k.http_probe("/ready", 8080))],
        replicas=2, nodes=nodes[1:3], created=old, pods_since=s.ago(days=6), cpu=0.05,
        mem=170 * k.MiB)
    st = fx.pods[0]["status"]["containerStatuses"][0]
    st["restartCount"] = 1
    st["lastState"] = {"terminated": k.terminated(
        "OOMKilled", 137, s.ago(days=6) + timedelta(seconds=8), s.ago(days=2, hours=7))}
    st["state"] = {"running": {"startedAt": k.iso(s.ago(days=2, hours=7, seconds=-2))}}
    fx.recs[0].restarts = 1
    k.service(s, "payments", "fx-rates", {"app.kubernetes.io/name": "fx-rates"}, 80, 8080, old,
              pods=fx.pods)
    k.lines(s, fx, "fx-rates", s.ago(65), s.now, 60.0, [
        ("info", "refreshed {n} currency pairs from ecb feed", 5),
        ("warn", "provider openexchange returned 429, backing off 30s", 1),
    ])

    # ----- notifications: an unrelated rollout 22 minutes ago, healthy -----
    es_roll = s.ago(22)
    email = k.deployment(
        s, "notifications", "email-sender",
        [k.container("email-sender", f"{reg}/comms/email-sender:5.2.0", port=8080, cpu="100m",
                     mem="192Mi", mem_limit="384Mi", readiness=k.http_probe("/ready", 8080))],
        replicas=2, nodes=nodes[:2], created=old, pods_since=es_roll, revision=23,
        old_revisions=[(22, s.ago(days=3),
                        [k.container("email-sender", f"{reg}/comms/email-sender:5.1.4",
                                     port=8080, cpu="100m", mem="192Mi")])],
        cpu=0.03, mem=140 * k.MiB)
    e_hash = email.rs[-1]["metadata"]["name"].rsplit("-", 1)[1]
    s.event("Deployment", "notifications", "email-sender", "ScalingReplicaSet",
            f"Scaled up replica set email-sender-{e_hash} to 1", first=es_roll,
            component="deployment-controller")
    s.event("Deployment", "notifications", "email-sender", "ScalingReplicaSet",
            f"Scaled up replica set email-sender-{e_hash} to 2 from 1",
            first=es_roll + timedelta(seconds=21), component="deployment-controller")
    k.lines(s, email, "email-sender", es_roll, s.now, 30.0, [
        ("info", "sent template=receipt provider=ses message_id={hex} in {ms}ms", 8),
        ("warn", "ses throttled (rate 14/s), requeue message {hex}", 1),
        ("error", "hard bounce for recipient hash {hex}, suppressing", 1),
    ])

    # ----- batch: a Pending report builder that asks for too much memory -----
    rb_c = k.container("report-builder", f"{reg}/data/report-builder:0.9.7", cpu="2",
                       mem="40Gi", mem_limit="40Gi")
    rb_uid = s.uid()
    rb_t = k.template({"job-name": "monthly-statements-manual"}, [rb_c],
                      extra={"restartPolicy": "Never"})
    rb_t["spec"]["restartPolicy"] = "Never"
    job = s.add({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": k.meta("monthly-statements-manual", "batch", s.ago(48), rb_uid,
                           labels={"job-name": "monthly-statements-manual"}),
        "spec": {"backoffLimit": 0, "completions": 1, "parallelism": 1, "template": rb_t},
        "status": {"active": 1, "startTime": k.iso(s.ago(48)), "ready": 0},
    })
    rb_pod = f"monthly-statements-manual-{s.suffix()}"
    pend = k.make_pod(s, "batch", rb_pod, rb_t, k.owner_ref("Job", "monthly-statements-manual",
                                                            rb_uid, api="batch/v1"),
                      None, s.ago(48), phase="Pending", conditions=[
                          {"type": "PodScheduled", "status": "False",
                           "reason": "Unschedulable",
                           "lastTransitionTime": k.iso(s.ago(48)),
                           "message": "0/4 nodes are available: 4 Insufficient memory. "
                                      "preemption: 0/4 nodes are available: 4 No preemption "
                                      "victims found for incoming pod."}])
    del job
    s.event("Pod", "batch", rb_pod, "FailedScheduling",
            "0/4 nodes are available: 4 Insufficient memory. preemption: 0/4 nodes are "
            "available: 4 No preemption victims found for incoming pod.", first=s.ago(48),
            last=s.ago(3), count=11, type_="Warning", component="default-scheduler",
            uid=pend["metadata"]["uid"])

    # ----- ingress controller access lines for payments -----
    ing = k.deployment(
        s, "ingress-nginx", "ingress-nginx-controller",
        [k.container("controller", "registry.k8s.io/ingress-nginx/controller:v1.11.2",
                     port=80, cpu="200m", mem="256Mi", mem_limit="1Gi")],
        replicas=2, nodes=nodes[:2], created=old, pods_since=s.ago(days=5), cpu=0.12,
        mem=230 * k.MiB)
    for t in s.spread(s.ago(60), s.now, 45.0):
        p = s.rng.choice(ing.pods)
        ms = s.rng.lognormvariate(-3.0, 0.5)
        st_code = s.rng.choices([201, 200, 402, 499], [50, 40, 3, 1])[0]
        s.log(t, "ingress-nginx", p["metadata"]["name"], "controller", "ingress-nginx", "info",
              f'10.20.{s.rng.randint(32, 127)}.{s.rng.randint(2, 250)} - - '
              f'[{t.strftime("%d/%b/%Y:%H:%M:%S +0000")}] "POST /api/payments HTTP/1.1" '
              f'{st_code} {s.rng.randint(90, 900)} "-" "shop-backend/7.2" '
              f'{s.rng.randint(300, 1400)} {ms:.3f} [payments-payments-gateway-80] [] '
              f'{s.rng.choice(gw.pods)["status"]["podIP"]}:8080 {s.rng.randint(90, 900)} '
              f'{ms - 0.001:.3f} {st_code} {s.hexid(32)}',
              http__response__status_code=st_code)

    # ----- metrics -----
    s.pod_metrics()
    for p in ledger.pods:
        name = p["metadata"]["name"]
        s.counter("http_requests_total", "Total HTTP requests.",
                  {"namespace": "payments", "service": "ledger-api", "pod": name,
                   "code": "201", "method": "POST"}, lambda t: 3.1)
        s.counter("http_requests_total", "Total HTTP requests.",
                  {"namespace": "payments", "service": "ledger-api", "pod": name,
                   "code": "200", "method": "GET"}, lambda t: 2.0)
    for p in gw.pods:
        name = p["metadata"]["name"]
        s.counter("http_requests_total", "Total HTTP requests.",
                  {"namespace": "payments", "service": "payments-gateway", "pod": name,
                   "code": "201", "method": "POST"}, lambda t: 2.4)
        s.counter("http_requests_total", "Total HTTP requests.",
                  {"namespace": "payments", "service": "payments-gateway", "pod": name,
                   "code": "502", "method": "POST"},
                  lambda t: 0.004 if rollout < t < rollout + timedelta(minutes=2) else 0.0,
                  start=3)

    def p50(t: datetime) -> float:
        return 0.062 if t > rollout else 0.048

    s.latency("payments-gateway", "payments", {}, lambda t: 7.5, p50)

    def unavailable(t: datetime) -> float:
        return 2.0 if t > rollout + timedelta(seconds=20) else 0.0

    s.gauge("kube_deployment_status_replicas_unavailable",
            "The number of unavailable replicas per deployment.",
            {"namespace": "payments", "deployment": "ledger-api"}, unavailable)
    s.gauge("kube_deployment_status_replicas_available",
            "The number of available replicas per deployment.",
            {"namespace": "payments", "deployment": "ledger-api"},
            lambda t: 3.0 if t > rollout else 4.0)
    s.gauge("kube_deployment_spec_replicas", "Number of desired pods for a deployment.",
            {"namespace": "payments", "deployment": "ledger-api"}, lambda t: 4.0, every=5)
    s.gauge("kube_deployment_status_observed_generation",
            "The generation observed by the deployment controller.",
            {"namespace": "payments", "deployment": "ledger-api"},
            lambda t: 11.0 if t > rollout else 10.0, every=5)
    del base

    k.scenario(
        s, title="ledger-api rollout stuck, new pods restarting",
        report=(
            "ledger-api 4.13.1 rollout in payments has been stuck for half an hour, the two "
            "new pods keep restarting. 4.13.1 is only the base image bump (python 3.11 -> "
            "3.12-slim), so I guess the new base image is missing something. The old pods "
            "are still serving and gateway latency is a bit up. Should we pin the old base "
            "image and rebuild?\n"
        ),
        category="crash_loop", kind="Deployment", ns="payments", name="ledger-api",
        evidence=["Read-only file system: '/app/var/run/ledger-api.pid'",
                  "readOnlyRootFilesystem: true"],
        fix=("Revision 8 (chart 3.2.0) turned on readOnlyRootFilesystem; ledger-api writes "
             "its pid file and fx cache under /app/var at start. Mount an emptyDir at "
             "/app/var (or point LEDGER_RUN_DIR/LEDGER_CACHE_DIR at /tmp), or roll back to "
             "revision 7; the python 3.12 base image is not the cause."),
    )
    s.write(root)
    k.check_evidence(s, root)


def _boot_lines(s: k.Story, start: datetime, end: datetime) -> list[str]:
    def at(ms: int) -> str:
        return k.clock(start + timedelta(milliseconds=ms))

    total = int((end - start).total_seconds() * 1000)
    return [
        f"{at(0)} INFO     [ledger.boot] ledger-api 4.13.1 (build 8f3c2a1, python 3.12.3) "
        "starting",
        f"{at(3)} WARNING  [py.warnings] /app/ledger/clock.py:14: DeprecationWarning: "
        "datetime.datetime.utcnow() is deprecated and scheduled for removal in a future "
        "version. Use timezone-aware objects to represent datetimes in UTC: "
        "datetime.datetime.now(datetime.UTC).",
        f"{at(9)} INFO     [ledger.boot] config loaded from /etc/ledger/ledger.yaml "
        "(profile=prod)",
        f"{at(210)} INFO     [ledger.db] postgres pool ready: ledger-db.payments.svc:5432 "
        "(min=4 max=20)",
        f"{at(214)} INFO     [ledger.boot] writing pid file /app/var/run/ledger-api.pid",
        f"{at(215)} ERROR    [ledger.boot] startup failed",
        "Traceback (most recent call last):",
        '  File "/app/ledger/boot.py", line 88, in main',
        "    write_pidfile(settings.run_dir / \"ledger-api.pid\")",
        '  File "/app/ledger/boot.py", line 61, in write_pidfile',
        '    with open(path, "w", encoding="ascii") as fh:',
        "         ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        "OSError: [Errno 30] Read-only file system: '/app/var/run/ledger-api.pid'",
        f"{at(max(216, total - 2))} CRITICAL [ledger.boot] cannot write runtime state under "
        "/app/var; exiting with status 1",
    ]
