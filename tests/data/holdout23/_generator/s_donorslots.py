"""Blood donation service: online appointment booking is down. The service runs on an
OpenShift 4.18 cluster on premises. slot-booking 6.2.0 (Recreate strategy, rolled out at
07:18) moved to a new base image whose Tomcat base directory /opt/slot-booking/work belongs
to root with mode 0755; under the restricted-v2 SCC the container runs as an arbitrary UID
(1000720000, group 0), Spring Boot cannot create its tempDir and exits 1 at every start
(java.nio.file.AccessDeniedException): both pods crash-loop, the booking page answers 503.
Red herrings: reminder-mailer rolled out at 06:41 in the same project (healthy); every crash
log starts with a Hibernate warning about the database connection (the pool is not up yet);
the report suspects the single sign-on; label-printer in another project is not ready (the
printer is switched off); keycloak logs ordinary failed logins."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import set_times
from tests.data.holdout2._generator.kit import (
    cpu_seconds,
    crash_events,
    deploy,
    kills,
    requests,
    restarts_series,
    runs_from,
    scraped,
    working_set,
)
from tests.data.holdout3._generator.kit3 import (
    chatter,
    ghosts,
    ksm_deployment,
    log_pod,
    namespaces,
    quiet,
)
from tests.data.holdout4._generator.kit4 import stamp
from tests.scenario_tools.common import MIB, truth
from tests.scenario_tools.kube import Ctr, http_probe, iso, running
from tests.scenario_tools.sim import container_status

from .kit import Incident, NodeKind, openshift_nodes

ID = "donor-appointments-unavailable"
NOW = datetime.fromisoformat("2028-04-06T08:02:00+00:00")
NS = "termine"
REG = "quay.blutspende.lan"
IMAGE = f"{REG}/termine/slot-booking:6.2.0"
UID = 1000720000


def jl(thread: str, level: str, logger: str, text: str) -> str:
    """A plain Java log line (Logback pattern without the date, which the shipper keeps)."""
    return f"[{thread}] {level:<5} {logger} - {text}"


def crash_lines(start: datetime, pod: str) -> list[tuple[float, str]]:
    return [
        (0.0, "  .   ____          _            __ _ _"),
        (0.1, ":: Spring Boot ::                (v3.4.4)"),
        (0.9, jl("main", "INFO", "d.b.termine.SlotBookingApplication",
                 f"Starting SlotBookingApplication v6.2.0 using Java 21.0.6 with PID 1 "
                 f"(/opt/slot-booking/app.jar started by {UID} in /opt/slot-booking)")),
        (1.0, jl("main", "INFO", "d.b.termine.SlotBookingApplication",
                 'The following 1 profile is active: "prod"')),
        (4.2, jl("main", "WARN", "o.h.engine.jdbc.env.internal.JdbcEnvironmentInitiator",
                 "HHH000342: Could not obtain connection to query metadata")),
        (4.3, jl("main", "INFO", "o.s.b.w.embedded.tomcat.TomcatWebServer",
                 "Tomcat initialized with port 8080 (http)")),
        (4.4, jl("main", "ERROR", "o.s.boot.SpringApplication", "Application run failed")),
        (4.4, "org.springframework.context.ApplicationContextException: Unable to start web "
              "server"),
        (4.4, "Caused by: org.springframework.boot.web.server.WebServerException: Unable to "
              "create tempDir. java.io.tmpdir is set to /opt/slot-booking/work"),
        (4.4, "Caused by: java.nio.file.AccessDeniedException: /opt/slot-booking/work/"
              "tomcat.8080.1204711937"),
        (4.4, "\tat java.base/sun.nio.fs.UnixException.translateToIOException("
              "UnixException.java:90)"),
        (4.4, "\tat java.base/java.nio.file.Files.createDirectory(Files.java:700)"),
        (4.5, jl("main", "INFO", "o.s.o.j.LocalContainerEntityManagerFactoryBean",
                 "Closing JPA EntityManagerFactory for persistence unit 'default'")),
    ]


def build() -> Incident:
    s = Incident(
        id=ID, title="Blood donor appointment booking unavailable", now=NOW,
        report="""\
Donors can't book appointments online since about 07:20, the booking page says "Service
vorübergehend nicht verfügbar". The call centre tool can't load free slots either. Is the
login (Keycloak) broken again? Donation centres open at 8.
""",
        truth=truth(
            "crash_loop", "Deployment", NS, "slot-booking",
            ["CrashLoopBackOff", "AccessDeniedException", "Unable to create tempDir",
             "slot-booking:6.2.0"],
            "slot-booking 6.2.0 (rolled out at 07:18 with the Recreate strategy) exits at "
            "start: its new base image leaves /opt/slot-booking/work owned by root (0755), "
            "and under the restricted-v2 SCC the container runs as an arbitrary UID, so "
            "Tomcat cannot create its tempDir (AccessDeniedException). Roll back to 6.1.3 "
            "(oc rollout undo deployment/slot-booking), then fix the image (chgrp -R 0 and "
            "chmod -R g=u on the work directory, or point server.tomcat.basedir at an "
            "emptyDir)."))
    set_times(s, 2.0, 30)
    c = s.cluster
    namespaces(s, {"default": 500, "kube-system": 500, "openshift-ingress": 500,
                   "openshift-dns": 500, NS: 330, "sso": 330, "labor": 210})
    for ns in (NS, "sso", "labor"):
        obj = next(o for o in c.objects_of("Namespace") if o["metadata"]["name"] == ns)
        obj["metadata"]["annotations"] = {
            "openshift.io/sa.scc.uid-range": f"{UID if ns == NS else 1000650000}/10000",
            "openshift.io/sa.scc.supplemental-groups": f"{UID if ns == NS else 1000650000}"
                                                       "/10000",
            "openshift.io/sa.scc.mcs": "s0:c27,c4" if ns == NS else "s0:c26,c15",
            "openshift.io/requester": "system:admin"}
    kind = NodeKind("", "16", "65843512Ki", "15500m", "64692536Ki",
                    "v1.31.6", "5.14.0-427.50.1.el9_4.x86_64",
                    "Red Hat Enterprise Linux CoreOS 418.94.202503121324-0",
                    runtime="cri-o://1.31.6-3.rhaos4.18.git4c0a4fb.el9", pods="250")
    nodes = openshift_nodes(s, 3, kind=kind, days=5.8, rack="r2")
    for n in nodes:
        n["metadata"]["labels"].pop("node.kubernetes.io/instance-type", None)
        n["metadata"]["labels"]["node-role.kubernetes.io/app"] = ""

    def crio(objects: list[dict]) -> None:  # OpenShift runs CRI-O, not containerd
        for obj in objects:
            if obj["kind"] != "Pod":
                continue
            for st in obj["status"].get("containerStatuses", []):
                for holder in (st, st.get("lastState", {}).get("terminated") or {}):
                    if "containerID" in holder:
                        holder["containerID"] = holder["containerID"].replace(
                            "containerd://", "cri-o://")
    s.fixes.append(crio)

    # ---- openshift system workloads
    router = Ctr("router", "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:"
                 "5b0a9c2f1e", port=80, requests={"cpu": "100m", "memory": "256Mi"},
                 limits={}, readiness=http_probe("/healthz/ready", 1936))
    _, routers = deploy(s, "openshift-ingress", "router-default", [router], replicas=2,
                        nodes=nodes, revision=6, rollout=s.ago(days=5, hours=6), service=None,
                        labels={"ingresscontroller.operator.openshift.io/owning-"
                                "ingresscontroller": "default"})
    quiet(s, routers, "router", 180)

    # ---- slot-booking: rolled out at 07:18 (Recreate), crash-looping since
    roll = NOW - timedelta(minutes=44, seconds=6)
    ctr = Ctr("slot-booking", IMAGE, port=8080,
              requests={"cpu": "500m", "memory": "768Mi"}, limits={"memory": "1Gi"},
              env={"SPRING_PROFILES_ACTIVE": "prod", "SERVER_TOMCAT_BASEDIR":
                   "/opt/slot-booking/work", "SPRING_DATASOURCE_URL":
                   "jdbc:postgresql://termine-db.termine.svc:5432/termine",
                   "JAVA_TOOL_OPTIONS": "-XX:MaxRAMPercentage=70"},
              readiness=http_probe("/actuator/health/readiness", delay=20),
              liveness=http_probe("/actuator/health/liveness", delay=40, period=15))
    runs_by_pod: dict[int, list] = {}

    def life(t: datetime) -> float:
        return 5.0 + s.rng.uniform(0.2, 0.9)

    def states(i: int, pod_name: str, started: datetime) -> dict[str, dict]:
        runs = runs_from(started, NOW, life, jitter=lambda: s.rng.uniform(0, 0.8))
        runs_by_pod[i] = runs
        status = container_status(runs, pod_name, NS, "slot-booking", reason="Error", code=1,
                                  uid=c.uid("Pod", NS, pod_name), ready=False)
        return {"slot-booking": status}
    work, pods = deploy(s, NS, "slot-booking", [ctr], replicas=2, nodes=nodes, revision=27,
                        rollout=roll, statuses=states, service=8080, offset=1,
                        strategy={"type": "Recreate"},
                        born=lambda i: roll + timedelta(seconds=1.5 + 0.4 * i),
                        old=(26, s.ago(days=4, hours=3), [Ctr(
                            "slot-booking", f"{REG}/termine/slot-booking:6.1.3", port=8080)]))
    old_rs, new_rs = work.revisions
    old_born = [s.ago(days=4, hours=3) + timedelta(seconds=3 + 20 * i) for i in range(2)]
    olds = ghosts(s, old_rs, nodes, old_born, [roll - timedelta(seconds=4)] * 2)
    work.progressing = ("ProgressDeadlineExceeded", f'ReplicaSet "{new_rs["metadata"]["name"]}" '
                        "has timed out progressing.", roll + timedelta(seconds=600))
    work.availability_changed = roll - timedelta(seconds=5)
    c.event(work.obj, "ScalingReplicaSet", f"Scaled down replica set {old_rs['metadata']['name']}"
            " from 2 to 0", first=roll - timedelta(seconds=5), component="deployment-controller")
    c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set {new_rs['metadata']['name']}"
            " from 0 to 2", first=roll + timedelta(seconds=1), component="deployment-controller")
    for ghost in olds:
        c.event(old_rs, "SuccessfulDelete", f"Deleted pod: {ghost['metadata']['name']}",
                first=roll - timedelta(seconds=4), component="replicaset-controller")
        log_pod(s, ghost, "slot-booking", "slot-booking", [
            ("info", jl(f"http-nio-8080-exec-{k}", "INFO", "d.b.termine.web.SlotController",
                        f"GET /api/v3/slots centre={cc} date=2028-04-{d} -> 200 in {ms} ms"), {})
            for k, cc, d, ms in ((3, "DD-03", "08", 61), (11, "L-01", "09", 48),
                                 (7, "C-02", "12", 73))] + [
            ("info", jl(f"http-nio-8080-exec-{k}", "INFO", "d.b.termine.web.BookingController",
                        f"booking {b} confirmed for centre {cc}"), {})
            for k, b, cc in ((5, "TB-88120411", "DD-03"), (2, "TB-88120415", "Z-01"))] + [
            ("error", jl("slot-cache-refresh", "ERROR", "d.b.termine.cache.SlotCache",
                         "ALERT slot cache refresh took 2340 ms (budget 2000 ms)"), {})], 80)
        s.logs.add(roll - timedelta(seconds=3.2), "info",
                   jl("SpringApplicationShutdownHook", "INFO",
                      "o.s.b.w.embedded.tomcat.GracefulShutdown",
                      "Commencing graceful shutdown. Waiting for active requests to complete"),
                   namespace=NS, pod=ghost["metadata"]["name"], container="slot-booking",
                   node=ghost["spec"]["nodeName"])
        requests(s, ghost, "slot-booking", rps=lambda t: 3.6, codes={
            "200": lambda t: 0.991, "404": lambda t: 0.008, "500": lambda t: 0.001})
        working_set(s, ghost, "slot-booking", lambda t: 612 * MIB)
        cpu_seconds(s, ghost, "slot-booking", lambda t: 0.21)
    c.event(new_rs, "SuccessfulCreate", f"Created pod: {pods[0]['metadata']['name']}",
            first=roll + timedelta(seconds=1.5), component="replicaset-controller")
    c.event(new_rs, "SuccessfulCreate", f"Created pod: {pods[1]['metadata']['name']}",
            first=roll + timedelta(seconds=1.9), component="replicaset-controller")
    for i, pod in enumerate(pods):
        runs = runs_by_pod[i]
        meta = pod["metadata"]
        c.event(pod, "Scheduled", f"Successfully assigned {NS}/{meta['name']} to "
                f"{pod['spec']['nodeName']}", first=parse_(meta["creationTimestamp"]),
                component="default-scheduler", host="")
        c.event(pod, "AddedInterface", f"Add eth0 [{pod['status']['podIP']}/23] from "
                "ovn-kubernetes", first=parse_(meta["creationTimestamp"]) +
                timedelta(seconds=1), component="multus", host="")
        crash_events(s, pod, "slot-booking", runs, IMAGE, fresh_pull=True, pull_seconds=6.8,
                     size=212_644_301)
        restarts_series(s, pod, "slot-booking", 0, kills(runs))
        up = scraped(s, runs, pod, grace=1)
        working_set(s, pod, "slot-booking", lambda t: 188 * MIB, times=up)
        last = [r for r in runs if r.end is not None][-1]
        s.pod_log(pod, "slot-booking", [f"{stamp(last.start + timedelta(seconds=o))} {x}"
                                        for o, x in crash_lines(last.start, meta["name"])],
                  previous=True)
        if runs[-1].end is None:
            s.pod_log(pod, "slot-booking", [f"{stamp(runs[-1].start + timedelta(seconds=o))} "
                                            f"{x}" for o, x in crash_lines(runs[-1].start,
                                                                           meta["name"])
                                            if runs[-1].start + timedelta(seconds=o) <= NOW])
        for r in runs[::3]:
            for o, x in crash_lines(r.start, meta["name"]):
                if o < 4 or (r.start + timedelta(seconds=o)) > NOW:
                    continue
                level = "error" if ("Exception" in x or "ERROR" in x) else (
                    "warn" if "WARN" in x else "info")
                s.logs.add(r.start + timedelta(seconds=o), level, x, namespace=NS,
                           pod=meta["name"], container="slot-booking",
                           node=pod["spec"]["nodeName"])
    ksm_deployment(s, NS, "slot-booking", lambda t: 2.0,
                   lambda t: 0.0 if t >= roll.timestamp() - 5 else 2.0,
                   lambda t: 2.0 if t >= roll.timestamp() - 5 else 0.0)

    # ---- the web frontend: booking calls fail with 503 since 07:18
    web = Ctr("termine-web", f"{REG}/termine/termine-web:2.31.0", port=8080,
              requests={"cpu": "100m", "memory": "128Mi"}, limits={"memory": "256Mi"},
              env={"SLOT_API": "http://slot-booking.termine.svc:8080"},
              readiness=http_probe("/", delay=3))
    _, webs = deploy(s, NS, "termine-web", [web], replicas=2, nodes=nodes, revision=19,
                     rollout=s.ago(days=2, hours=5), service=8080)
    quiet(s, webs, "termine-web", 64)
    for pod in webs:
        requests(s, pod, "termine-web", rps=lambda t: 4.1, codes={
            "200": lambda t: 0.985 if t < roll.timestamp() else 0.42,
            "503": lambda t: 0.001 if t < roll.timestamp() else 0.57,
            "304": lambda t: 0.014})
    chatter(s, webs, "termine-web", "termine-web", [
        ("info", '10.131.0.2 - - "GET /termine/suche HTTP/1.1" 200 18211', {}),
        ("info", '10.131.0.2 - - "GET /static/app.4f1c.js HTTP/1.1" 304 0', {})],
        70, start=s.ago(hours=2))
    chatter(s, webs, "termine-web", "termine-web", [
        ("error", 'upstream slot-booking: connect() failed (111: Connection refused) while '
                  'connecting to upstream, request: "GET /api/v3/slots?centre=DD-03"', {}),
        ("error", '10.131.0.2 - - "POST /api/v3/bookings HTTP/1.1" 503 197', {})],
        110, start=roll + timedelta(seconds=5))

    # ---- red herring: reminder-mailer rolled out at 06:41, healthy
    mroll = NOW - timedelta(minutes=81)
    mail = Ctr("reminder-mailer", f"{REG}/termine/reminder-mailer:3.7.0", port=8080,
               requests={"cpu": "100m", "memory": "384Mi"}, limits={"memory": "512Mi"},
               env={"SMTP_HOST": "mailrelay.blutspende.lan"},
               readiness=http_probe("/actuator/health/readiness", delay=20))
    mw, mails = deploy(s, NS, "reminder-mailer", [mail], replicas=1, nodes=nodes[2:],
                       revision=12, rollout=mroll, service=None,
                       old=(11, s.ago(days=6), [Ctr("reminder-mailer",
                                                    f"{REG}/termine/reminder-mailer:3.6.2")]))
    mghost = ghosts(s, mw.revisions[0], nodes[:1], [s.ago(days=5, hours=22)],
                    [mroll + timedelta(seconds=48)])
    quiet(s, mails, "reminder-mailer", 301)
    for p in mghost:
        working_set(s, p, "reminder-mailer", lambda t: 288 * MIB)
    chatter(s, mails, "reminder-mailer", "reminder-mailer", [
        ("info", jl("scheduling-1", "INFO", "d.b.termine.mail.ReminderJob",
                    "sent 212 reminders for appointments on 2028-04-07"), {}),
        ("warn", jl("scheduling-1", "WARN", "d.b.termine.mail.ReminderJob",
                    "mailbox donor-4471@t-online.de rejected: 550 5.1.1 user unknown"), {})],
        30, start=mroll + timedelta(seconds=40))

    # ---- sso: ordinary failed logins (the report suspects it)
    kc = Ctr("keycloak", "quay.io/keycloak/keycloak:26.1.4", port=8080,
             requests={"cpu": "500m", "memory": "1Gi"}, limits={"memory": "1536Mi"},
             readiness=http_probe("/health/ready", 9000, delay=30))
    _, kcs = deploy(s, "sso", "keycloak", [kc], replicas=2, nodes=nodes, revision=8,
                    rollout=s.ago(days=3, hours=1), service=8080)
    quiet(s, kcs, "keycloak", 790)
    chatter(s, kcs, "keycloak", "keycloak", [
        ("warn", "WARN  [org.keycloak.events] (executor-thread-12) type=\"LOGIN_ERROR\", "
                 "realmId=\"spender\", clientId=\"termine-web\", error=\"invalid_user_"
                 "credentials\"", {}),
        ("info", "INFO  [org.keycloak.events] (executor-thread-4) type=\"LOGIN\", realmId="
                 "\"spender\", clientId=\"termine-web\"", {}),
        ("info", "INFO  [org.keycloak.events] (executor-thread-9) type=\"CODE_TO_TOKEN\", "
                 "realmId=\"spender\", clientId=\"callcenter\"", {})], 120, start=s.ago(hours=2))

    # ---- labor: the label printer bridge is not ready (printer switched off)
    off = NOW - timedelta(minutes=52)
    lp = Ctr("label-printer", f"{REG}/labor/label-printer:1.4.2", port=9100,
             requests={"cpu": "50m", "memory": "64Mi"}, limits={"memory": "128Mi"},
             readiness=http_probe("/ready", 9101, period=20))
    _, lps = deploy(s, "labor", "label-printer", [lp], replicas=1, nodes=nodes[1:],
                    revision=3, rollout=s.ago(days=5, hours=2), service=None,
                    statuses=lambda i, n, st: {"label-printer": running(st, ready=False)})
    for cond in lps[0]["status"]["conditions"]:
        if cond["type"] in ("Ready", "ContainersReady"):
            cond["lastTransitionTime"] = iso(off)
    c.event(lps[0], "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: "
            "503", first=off + timedelta(seconds=11), last=NOW - timedelta(seconds=9),
            count=int((NOW - off).total_seconds() / 20), type_="Warning",
            field_path="spec.containers{label-printer}")
    quiet(s, lps, "label-printer", 31)
    chatter(s, lps, "label-printer", "label-printer", [
        ("warn", "printer zt411-lab2 at 10.61.44.19:9100 unreachable: connect timed out", {})],
        25, start=off)
    return s


def parse_(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
