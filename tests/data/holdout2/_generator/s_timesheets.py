"""Payroll: timesheet submission fails on and off. timesheet-api 4.0.0 moved its HTTP port
from 8080 to 8000 (SERVER_PORT, the container port, the readiness probe on the named port)
but the liveness probe still calls 8080: connection refused, the kubelet kills the container
after three failures; the shell in front of the JVM ignores SIGTERM, so every kill ends in
SIGKILL (exit 137) 30 s later. Pods serve for about a minute, then back off."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from tests.data.holdout._generator.base import aks_nodes, alive, daemonset, gauge, logs_for
from tests.data.holdout._generator.base import set_times as grid
from tests.scenario_tools.common import MIB, truth
from tests.scenario_tools.kube import Ctr, Obj, ended, http_probe, iso, running
from tests.scenario_tools.sim import Run, container_status

from .kit import (
    Incident,
    app_counter,
    deleted,
    deploy,
    drift,
    kills,
    lines,
    plain,
    product,
    requests,
    restarts_series,
    runs_from,
    scraped,
    up_at,
    working_set,
)

ID = "timesheet-submit-flaky"
NOW = datetime.fromisoformat("2027-02-23T13:58:00+00:00")
NS = "payroll"
ACR = "acrpayrollprod.azurecr.io/payroll"
SUB = "b6a4e0d1-3c52-4f8e-9d17-2e6c8a4b5f90"
GROUP = "rg-payroll-prod_aks-payroll-prod_northeurope"
OLD, NEW = "3.9.4", "4.0.0"
READY_AFTER, LIVE_KILL, GRACE = 27.0, 75.0, 30.0


def build() -> Incident:
    s = Incident(
        id=ID,
        title="Timesheet submission failing intermittently",
        now=NOW,
        report="""\
Since about 13:20 UTC submitting a timesheet mostly fails: people get "503 Service
Temporarily Unavailable" or "502 Bad Gateway", sometimes it goes through after a few
retries. Payroll cut-off is at 17:00 today, this is urgent. The dashboard shows the
available replicas of timesheet-api jumping between 0 and 4.
""",
        truth=truth(
            "probe_failure", "Deployment", NS, "timesheet-api",
            ["Liveness probe failed", ":8080/actuator/health/liveness",
             "connect: connection refused", "failed liveness probe, will be restarted",
             "exit code 137", "SERVER_PORT"],
            "The liveness probe of timesheet-api still targets port 8080 while 4.0.0 listens "
            "on 8000 (SERVER_PORT): point it at the named port http (or 8000) and roll out "
            "again; run the JVM with exec in the start command so that SIGTERM reaches it."))
    grid(s, 2.0, 30)
    c = s.cluster
    for ns, days in (("default", 530), ("kube-system", 530), (NS, 470), ("hr-portal", 470),
                     ("app-routing-system", 300)):
        c.namespace(ns, s.ago(days=days))
    system = aks_nodes(s, 2, pool="system", region="northeurope", instance="Standard_D4ds_v5",
                       kubelet="v1.31.3", cpu="4", memory="16365452Ki", alloc_cpu="3860m",
                       alloc_memory="12880780Ki", subscription=SUB, group=GROUP, days=6.1)
    apps = aks_nodes(s, 3, pool="apps", region="northeurope", instance="Standard_D8ds_v5",
                     kubelet="v1.31.3", cpu="8", memory="32863276Ki", alloc_cpu="7820m",
                     alloc_memory="28263468Ki", subscription=SUB, group=GROUP, days=5.4,
                     first=2)
    nodes = system + apps

    # ---- timesheet-api: rolled out at 13:17:30, pods killed by their liveness probe
    t0 = NOW - timedelta(minutes=40, seconds=30)

    def ctr(version: str) -> Ctr:
        port = 8000 if version == NEW else 8080
        return Ctr("timesheet-api", f"{ACR}/timesheet-api:{version}", port=port,
                   requests={"cpu": "500m", "memory": "1Gi"}, limits={"memory": "1536Mi"},
                   command=["/bin/sh", "-c", "/app/bin/render-config.sh && java $JAVA_OPTS "
                            "-jar /app/timesheet-api.jar"],
                   env={"SERVER_PORT": str(port), "SPRING_PROFILES_ACTIVE": "prod,azure",
                        "JAVA_OPTS": "-XX:MaxRAMPercentage=70 -XX:+UseZGC",
                        "MANAGEMENT_ENDPOINT_HEALTH_PROBES_ENABLED": "true"},
                   env_from=[{"configMapRef": {"name": "timesheet-api"}}],
                   readiness=http_probe("/actuator/health/readiness", "http", delay=20,
                                        period=10, timeout=2),
                   liveness=http_probe("/actuator/health/liveness", 8080, delay=45,
                                       period=15, timeout=2))
    old_at = s.ago(days=8, hours=2)
    old_born = [old_at + timedelta(seconds=9 + 38 * i) for i in range(4)]
    new_born = [t0 + timedelta(seconds=x) for x in (1.6, 2.3, 33.8, 35.1)]
    gone_at = [t0 + timedelta(seconds=x) for x in (1.4, 32.9, 34.6, 66.2)]
    plans: dict[int, list[Run]] = {}

    def life(start: datetime) -> float:
        return LIVE_KILL + GRACE + s.rng.uniform(0.2, 1.4)

    def states(i: int, name: str, started: datetime) -> dict[str, Obj]:
        runs = runs_from(new_born[i] + timedelta(seconds=4.1 + s.rng.uniform(0, 0.8)), NOW,
                         life, pull=1.1, jitter=lambda: s.rng.uniform(0, 1.2))
        plans[i] = runs
        status = container_status(runs, name, NS, "timesheet-api", reason="Error", code=137,
                                  uid=c.uid("Pod", NS, name), ready=False)
        current = runs[-1]
        if current.end is None:
            age = (NOW - current.start).total_seconds()
            status["ready"] = age >= READY_AFTER
        return {"timesheet-api": status}
    work, pods = deploy(
        s, NS, "timesheet-api", [ctr(NEW)], replicas=4, nodes=apps, revision=52, rollout=t0,
        old=(51, old_at, [ctr(OLD)]), statuses=states, born=lambda i: new_born[i],
        labels={"app.kubernetes.io/name": "timesheet-api", "app.kubernetes.io/part-of":
                "payroll"}, template_labels={"app.kubernetes.io/version": NEW},
        old_template_labels={"app.kubernetes.io/version": OLD},
        annotations={"kubectl.kubernetes.io/restartedAt": iso(old_at - timedelta(days=3))})
    for i, pod in enumerate(pods):
        runs = plans[i]
        cur = runs[-1]
        age = (NOW - cur.start).total_seconds()
        ready = cur.end is None and age >= READY_AFTER
        when = (cur.start + timedelta(seconds=READY_AFTER)) if ready else (
            (runs[-2].end or NOW) if cur.end is None else (cur.end or NOW))
        for cond in pod["status"]["conditions"]:
            if cond["type"] in ("Ready", "ContainersReady"):
                cond["lastTransitionTime"] = iso(when)
    rs_new, rs_old = work.revisions[-1], work.revisions[0]
    ready_now = sum(1 for p in pods if p["status"]["containerStatuses"][0]["ready"])
    if ready_now < 3:
        work.availability_changed = NOW - timedelta(seconds=s.rng.randrange(20, 80))
    work.progressing = ("NewReplicaSetAvailable", f'ReplicaSet "{rs_new["metadata"]["name"]}" '
                        "has successfully progressed.", t0 + timedelta(seconds=98))
    c.add({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": c.meta("ConfigMap", "timesheet-api", NS, s.ago(days=470),
                              {"app.kubernetes.io/name": "timesheet-api"}),
           "data": {"SPRING_DATASOURCE_URL": "jdbc:postgresql://psql-payroll-prod.postgres."
                    "database.azure.com:5432/timesheets?sslmode=require",
                    "TIMESHEET_CUTOFF": "17:00", "TZ": "Europe/Dublin"}})

    # rollout events: the controllers' and each pod's kubelet
    ghosts = [deleted(s, NS, f"{rs_old['metadata']['name']}-{c.token(5)}",
                      apps[i % 3]["metadata"]["name"], old_born[i], gone_at[i])
              for i in range(4)]
    dep = work.obj
    steps = [(0.9, f"Scaled up replica set {rs_new['metadata']['name']} from 0 to 1"),
             (1.2, f"Scaled down replica set {rs_old['metadata']['name']} from 4 to 3"),
             (1.9, f"Scaled up replica set {rs_new['metadata']['name']} from 1 to 2"),
             (32.7, f"Scaled down replica set {rs_old['metadata']['name']} from 3 to 2"),
             (33.5, f"Scaled up replica set {rs_new['metadata']['name']} from 2 to 3"),
             (34.4, f"Scaled down replica set {rs_old['metadata']['name']} from 2 to 1"),
             (34.9, f"Scaled up replica set {rs_new['metadata']['name']} from 3 to 4"),
             (66.0, f"Scaled down replica set {rs_old['metadata']['name']} from 1 to 0")]
    for off, msg in steps:
        c.event(dep, "ScalingReplicaSet", msg, first=t0 + timedelta(seconds=off),
                component="deployment-controller")
    for g in ghosts:
        c.event(rs_old, "SuccessfulDelete", f"Deleted pod: {g['metadata']['name']}",
                first=datetime.fromtimestamp(g["metadata"]["_deleted"], NOW.tzinfo),
                component="replicaset-controller")
    image = f"{ACR}/timesheet-api:{NEW}"
    field_ = "spec.containers{timesheet-api}"
    for i, pod in enumerate(pods):
        name, runs = pod["metadata"]["name"], plans[i]
        ip = pod["status"]["podIP"]
        c.event(rs_new, "SuccessfulCreate", f"Created pod: {name}", first=new_born[i],
                component="replicaset-controller")
        c.event(pod, "Scheduled", f"Successfully assigned {NS}/{name} to "
                f"{pod['spec']['nodeName']}", first=new_born[i], component="default-scheduler",
                host="")
        first = runs[0].start
        if i in (0, 1):
            c.event(pod, "Pulling", f'Pulling image "{image}"',
                    first=first - timedelta(seconds=2.9), field_path=field_)
            c.event(pod, "Pulled", f'Successfully pulled image "{image}" in 2.412s (2.412s '
                    "including waiting). Image size: 211874519 bytes.",
                    first=first - timedelta(seconds=0.4), field_path=field_)
            present = runs[1:]
        else:
            present = runs
        if present:
            c.event(pod, "Pulled", f'Container image "{image}" already present on machine',
                    first=present[0].start - timedelta(seconds=0.3),
                    last=present[-1].start - timedelta(seconds=0.3), count=len(present),
                    field_path=field_)
        c.event(pod, "Created", "Created container: timesheet-api", first=first -
                timedelta(seconds=0.2), last=runs[-1].start - timedelta(seconds=0.2),
                count=len(runs), field_path=field_)
        c.event(pod, "Started", "Started container timesheet-api", first=first,
                last=runs[-1].start, count=len(runs), field_path=field_)
        readiness_fails = [r.start + timedelta(seconds=20.3) for r in runs
                           if r.start + timedelta(seconds=20.3) <= NOW]
        c.event(pod, "Unhealthy", f'Readiness probe failed: Get "http://{ip}:8000/actuator/'
                f'health/readiness": dial tcp {ip}:8000: connect: connection refused',
                first=readiness_fails[0], last=readiness_fails[-1],
                count=len(readiness_fails), type_="Warning", field_path=field_)
        probes = [r.start + timedelta(seconds=45 + 15 * k + 0.2) for r in runs
                  for k in range(3) if r.start + timedelta(seconds=45 + 15 * k + 0.2) <= NOW]
        if probes:
            c.event(pod, "Unhealthy", f'Liveness probe failed: Get "http://{ip}:8080/actuator/'
                    f'health/liveness": dial tcp {ip}:8080: connect: connection refused',
                    first=probes[0], last=probes[-1], count=len(probes), type_="Warning",
                    field_path=field_)
        killed = [r.start + timedelta(seconds=LIVE_KILL + 0.3) for r in runs
                  if r.start + timedelta(seconds=LIVE_KILL + 0.3) <= NOW]
        if killed:
            c.event(pod, "Killing", "Container timesheet-api failed liveness probe, will be "
                    "restarted", first=killed[0], last=killed[-1], count=len(killed),
                    field_path=field_)
        waits = [(r.end, runs[k + 1].start if k + 1 < len(runs) else NOW)
                 for k, r in enumerate(runs) if r.end is not None]
        if waits:
            meta = pod["metadata"]
            c.event(pod, "BackOff", f"Back-off restarting failed container timesheet-api in "
                    f"pod {name}_{NS}({meta['uid']})", first=waits[0][0] + timedelta(
                        seconds=1), last=min(NOW - timedelta(seconds=3), waits[-1][1]),
                    count=sum(max(1, int((b - a).total_seconds() // 10)) for a, b in waits),
                    type_="Warning", field_path=field_)

    # what each instance printed: a clean start, requests, then nothing (SIGKILL)
    def boot(r: Run, pod: Obj) -> list[tuple[float, str]]:
        out = [(0.05, "+ /app/bin/render-config.sh: wrote /app/config/application-azure.yml"),
               (1.9, f"INFO 1 --- [main] c.p.t.TimesheetApiApplication : Starting "
                f"TimesheetApiApplication v{NEW} using Java 21.0.6 with PID 7"),
               (2.0, "INFO 1 --- [main] c.p.t.TimesheetApiApplication : The following 2 "
                "profiles are active: \"prod\", \"azure\""),
               (9.8, "INFO 1 --- [main] o.s.b.w.embedded.tomcat.TomcatWebServer : Tomcat "
                "initialized with port 8000 (http)"),
               (15.2, "INFO 1 --- [main] com.zaxxer.hikari.HikariDataSource : HikariPool-1 - "
                "Start completed."),
               (19.7, "WARN 1 --- [main] o.s.b.a.o.j.JpaBaseConfiguration : spring.jpa.open-"
                "in-view is enabled by default. Therefore, database queries may be performed "
                "during view rendering."),
               (21.6, "INFO 1 --- [main] o.s.b.w.embedded.tomcat.TomcatWebServer : Tomcat "
                "started on port 8000 (http) with context path '/'"),
               (21.9, "INFO 1 --- [main] c.p.t.TimesheetApiApplication : Started "
                "TimesheetApiApplication in 20.874 seconds (process running for 21.6)")]
        end = ((r.end or NOW) - r.start).total_seconds()
        t = 30.0
        while t < end - 1:
            kind = s.rng.random()
            if kind < 0.6:
                out.append((t, "INFO 1 --- [nio-8000-exec-4] c.p.t.api.TimesheetController : "
                            "POST /v2/timesheets/2027-W08 200 employee="
                            f"E{s.rng.randrange(10000, 99999)} {s.rng.randrange(40, 190)}ms"))
            elif kind < 0.9:
                out.append((t, "INFO 1 --- [nio-8000-exec-2] c.p.t.api.TimesheetController : "
                            "GET /v2/timesheets/current 200"))
            else:
                out.append((t, "WARN 1 --- [nio-8000-exec-7] c.p.t.api.TimesheetController : "
                            "POST /v2/timesheets/2027-W08 400 hours exceed 13h on 2027-02-20"))
            t += s.rng.uniform(6.0, 14.0)
        return [x for x in out if x[0] < end]

    for i, pod in enumerate(pods):
        runs = plans[i]
        cur, prev = runs[-1], runs[-2]
        s.pod_log(pod, "timesheet-api", lines(cur.start, boot(cur, pod)))
        s.pod_log(pod, "timesheet-api", lines(prev.start, boot(prev, pod)), previous=True)
        for r in runs:
            for off, text in boot(r, pod):
                if text.startswith("+"):
                    continue
                level, msg = text.split(" ", 1)
                if r.start + timedelta(seconds=off) > NOW:
                    continue
                s.logs.add(r.start + timedelta(seconds=off), level.lower(), msg, namespace=NS,
                           pod=pod["metadata"]["name"], container="timesheet-api",
                           service="timesheet-api", node=pod["spec"]["nodeName"])

    # ---- metrics
    for i, pod in enumerate(pods):
        runs = plans[i]
        up = scraped(s, runs, pod, grace=15)
        resets = kills(runs)
        working_set(s, pod, "timesheet-api", _jvm(runs), times=up)
        restarts_series(s, pod, "timesheet-api", 0, [int(r.end.timestamp()) + 1 for r in runs
                                                     if r.end is not None])
        gauge(s, "kube_pod_container_status_last_terminated_exitcode",
              {"namespace": NS, "pod": pod["metadata"]["name"], "container": "timesheet-api"},
              _exit_code(runs[0]),
              "Describes the exit code for the last container in terminated state.",
              times=alive(s, pod))
        serving = [t for t in up if (inst := up_at(runs, t)) is not None
                   and t - inst.start.timestamp() >= READY_AFTER]
        requests(s, pod, "timesheet-api", rps=lambda t: 5.5, codes={
            "200": lambda t: 0.95, "400": lambda t: 0.05}, times=serving, resets=resets)
    for g in ghosts:
        working_set(s, g, "timesheet-api", drift(s, 702 * MIB, 0.03))
        requests(s, g, "timesheet-api", rps=lambda t: 2.2, codes={"200": lambda t: 0.95})
    t_edge = t0.timestamp() + 100

    def available(t: int) -> float:
        if t < t_edge:
            return 4.0
        return float(sum(1 for k in range(4) if (inst := up_at(plans[k], t)) is not None
                         and t - inst.start.timestamp() >= READY_AFTER))
    gauge(s, "kube_deployment_status_replicas_available", {"namespace": NS, "deployment":
                                                           "timesheet-api"}, available,
          "The number of available replicas per deployment.")
    def serving_share(t: int) -> float:
        return 1.0 if available(t) > 0 else 0.0
    for code, share in (("200", lambda t: 0.948 * serving_share(t)),
                        ("400", lambda t: 0.05 * serving_share(t)),
                        ("502", lambda t: 0.0 if t < t_edge else 0.03 * serving_share(t)),
                        ("503", lambda t: 1.0 - serving_share(t))):
        app_counter(s, "nginx_ingress_controller_requests",
                    {"namespace": NS, "ingress": "timesheet-api", "service": "timesheet-api",
                     "status": code, "method": "POST", "controller_class":
                     "approuting.kubernetes.azure.com"},
                    s.times, product(lambda t: 22.0, share),
                    "The total number of client requests")

    # ---- the ingress (app routing add-on) and its logs
    ing = Ctr("controller", "mcr.microsoft.com/oss/kubernetes/ingress/nginx-ingress-controller:"
              "v1.11.5", port=80, requests={"cpu": "500m", "memory": "127Mi"}, limits={},
              readiness=http_probe("/healthz", 10254, delay=10))
    _, ings = deploy(s, "app-routing-system", "nginx", [ing], replicas=2, nodes=system,
                     revision=9, rollout=s.ago(days=5, hours=3), service=None,
                     labels={"app": "nginx"}, sa="nginx")
    start = NOW - timedelta(hours=2)
    logs_for(s, ings, "controller", "nginx", [
        ("info", '10.224.0.4 - - "POST /api/v2/timesheets/2027-W08 HTTP/2.0" 200 412 '
         '"https://payroll.contoso-hr.example/"', {"http.response.status_code": 200}),
        ("info", '10.224.0.4 - - "GET /api/v2/timesheets/current HTTP/2.0" 200 1810',
         {"http.response.status_code": 200}),
    ], 72, start=start, end=NOW)
    logs_for(s, ings, "controller", "nginx", [
        ("error", "connect() failed (111: Connection refused) while connecting to upstream, "
         'client: 10.224.0.4, server: payroll.contoso-hr.example, request: "POST '
         '/api/v2/timesheets/2027-W08 HTTP/2.0", upstream: "http://10.244.3.21:8000/v2/'
         'timesheets/2027-W08"', {}),
        ("warn", '10.224.0.4 - - "POST /api/v2/timesheets/2027-W08 HTTP/2.0" 503 190 '
         '"-" upstream: -', {"http.response.status_code": 503}),
        ("warn", '10.224.0.4 - - "POST /api/v2/timesheets/2027-W08 HTTP/2.0" 502 150',
         {"http.response.status_code": 502}),
    ], 84, start=t0 + timedelta(seconds=110), end=NOW)

    # ---- red herrings
    pdf = Ctr("payslip-renderer", f"{ACR}/payslip-renderer:2.3.0", port=8080,
              requests={"cpu": "250m", "memory": "768Mi"}, limits={"memory": "1Gi"},
              readiness=http_probe("/ready", delay=10))
    oom = s.ago(days=4, hours=5, minutes=12)

    def pdf_states(i: int, name: str, started: datetime) -> dict[str, Obj]:
        return {"payslip-renderer": running(oom + timedelta(seconds=1), restarts=1, last=ended(
            "OOMKilled", 137, started, oom))} if i == 1 else {}
    _, pdfs = deploy(s, NS, "payslip-renderer", [pdf], replicas=2, nodes=apps, revision=12,
                     rollout=s.ago(days=5, hours=2), statuses=pdf_states, offset=1)
    for k, pod in enumerate(pdfs):
        plain(s, pod, "payslip-renderer", 530)
        restarts_series(s, pod, "payslip-renderer", k, [])
    logs_for(s, pdfs, "payslip-renderer", "payslip-renderer", [
        ("info", "rendered payslip batch 2027-02 for cost centre 4410 (212 documents)", {}),
        ("warn", "font 'Noto Sans Thai' not found, falling back to DejaVu Sans", {}),
    ], 24, start=start, end=NOW)
    org = Ctr("org-chart", f"{ACR}/org-chart:1.12.4", port=3000,
              requests={"cpu": "100m", "memory": "192Mi"}, limits={"memory": "384Mi"},
              readiness=http_probe("/healthz", delay=5, timeout=1))
    _, orgs = deploy(s, "hr-portal", "org-chart", [org], replicas=1, nodes=apps, revision=7,
                     rollout=s.ago(days=2, hours=6), offset=2)
    blip = NOW - timedelta(minutes=57, seconds=30)
    ip = orgs[0]["status"]["podIP"]
    c.event(orgs[0], "Unhealthy", f'Readiness probe failed: Get "http://{ip}:3000/healthz": '
            "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            first=blip, last=blip + timedelta(seconds=10), count=2, type_="Warning",
            field_path="spec.containers{org-chart}")
    logs_for(s, orgs, "org-chart", "org-chart", [
        ("info", "GET /api/tree?root=E10021 200", {"http.response.status_code": 200}),
        ("warn", "Graph API throttled (429), serving cached photos", {}),
    ], 18, start=start, end=NOW)
    ama = Ctr("ama-logs", "mcr.microsoft.com/azuremonitor/containerinsights/ciprod:3.1.25",
              port=None, requests={"cpu": "75m", "memory": "325Mi"},
              limits={"memory": "750Mi"})
    _, amas = daemonset(s, "kube-system", "ama-logs", [ama], node_list=nodes, generation=14,
                        since=s.ago(days=5.9), labels={"component": "ama-logs-agent"})
    logs_for(s, amas, "ama-logs", "ama-logs", [
        ("warn", "[out_oms] Failed to flush to ODS, will retry: 503 Service Unavailable", {}),
        ("info", "[in_kube_podinventory] pod inventory: 54 pods, 71 containers", {}),
    ], 18, start=start, end=NOW)
    return s


def _jvm(runs: list[Run]) -> Callable[[int], float | None]:
    def value(t: int) -> float | None:
        r = up_at(runs, t)
        if r is None:
            return None
        age = t - r.start.timestamp()
        return (180 + 520 * min(1.0, age / 25) + 0.4 * age) * MIB
    return value


def _exit_code(first: Run) -> Callable[[int], float | None]:
    died = first.end.timestamp() if first.end else float("inf")
    return lambda t: 137.0 if t >= died else None
