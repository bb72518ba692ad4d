"""Bank: Confirmation of Payee checks (the name check shown before a first transfer to a new
payee) fail or hang for part of the customers. payee-check 7.4.0 went out at 14:16: the
release moved the scheme participant id from the mounted properties file to a required
setting PAYEE_SCHEME_PARTICIPANT_ID that the Deployment's template does not set, so every new
pod stops at start-up with a bind error (exit 1) and sits in CrashLoopBackOff. The rolling
update took one old pod away (max unavailable 25%) and stalled, so three old pods carry the
whole afternoon peak: slower answers and some 503s at the mobile gateway. Red herrings: a
standing-orders release in the same namespace 36 minutes before the onset, the core banking
adapter's slow keepalive warnings (the report suspects core banking), a fraud-screening
readiness blip in another namespace, an OOM restart of ledger-gateway three days ago."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.scenario_tools.common import (
    MIB,
    Story,
    const,
    container_metrics,
    daily,
    deployment_metrics,
    http_metrics,
    kube_system,
    namespaces,
    nodes,
    noise_logs,
    truth,
)
from tests.scenario_tools.failures import crash_events, crash_looping
from tests.scenario_tools.kube import Ctr, ended, http_probe, running
from tests.scenario_tools.parts import neighbour, readiness_blip, rollout
from tests.scenario_tools.sim import Run, deaths

from .kit import between, line, ship

ID = "payee-name-checks-failing"
NOW = datetime(2027, 3, 9, 14, 42, tzinfo=UTC)
NS = "payments"
REG = "harbor.corp.northmere-bank.internal"
NEW = f"{REG}/payments/payee-check:7.4.0"
KEY = "PAYEE_SCHEME_PARTICIPANT_ID"


def build() -> Story:
    s = Story(ID, "Payee name checks failing in the banking app", NOW, """\
Since about 14:15 customers adding a new payee in the mobile app get "We couldn't check the
name on this account, try again later" or it spins for ages. Roughly 1 in 10 attempts, more
at the moment. Payments to existing payees are fine. Is the core banking link down again?
""", truth("crash_loop", "Deployment", NS, "payee-check",
           ["CrashLoopBackOff", KEY, "payee-check:7.4.0", "Application run failed"],
           "payee-check 7.4.0 requires the setting PAYEE_SCHEME_PARTICIPANT_ID, which the "
           "Deployment does not set: its new pods exit at start-up and the rollout stalls "
           "with three old pods serving the peak. Roll back to 7.3.2 (kubectl rollout undo) "
           "or add the variable to the template, then let the rollout finish."), hours=2.0)
    c = s.cluster
    namespaces(s, NS, "channels", "risk")
    node_list = nodes(s, 4, subnet=42, region="eu-west-2", instance="m6i.2xlarge", cpu="8",
                      memory="32Gi", allocatable_cpu="7910m", allocatable_memory="30310Mi",
                      days=5.5)
    kube_system(s, node_list)

    at = NOW - timedelta(minutes=26, seconds=14)
    runs_of: dict[str, list[Run]] = {}

    def ctr(version: str) -> Ctr:
        env = {"SPRING_PROFILES_ACTIVE": "prod", "JAVA_TOOL_OPTIONS": "-XX:MaxRAMPercentage=70",
               "COP_DIRECTORY_URL": "https://cop-directory.scheme-gw.payments.svc:8443",
               "ACCOUNTS_URL": "http://core-banking-adapter.payments.svc/accounts"}
        if version == "7.3.2":
            env["PAYEE_PROPERTIES"] = "/etc/payee-check/scheme.properties"
        return Ctr("payee-check", f"{REG}/payments/payee-check:{version}", port=8080,
                   requests={"cpu": "500m", "memory": "768Mi"}, limits={"memory": "1Gi"},
                   env=env, readiness=http_probe("/actuator/health/readiness", delay=20),
                   liveness=http_probe("/actuator/health/liveness", delay=45, period=15),
                   mounts=[{"name": "scheme", "mountPath": "/etc/payee-check",
                            "readOnly": True}])

    def crashing(i: int, started: datetime, pod_name: str) -> dict:
        status, runs = crash_looping(s, pod_name, NS, "payee-check", started=started,
                                     life=8.6 + i * 0.7, code=1)
        runs_of[pod_name] = runs
        return {"payee-check": status}

    roll = rollout(s, NS, "payee-check", ctr, old="7.3.2", new="7.4.0", at=at, revision=57,
                   replicas=4, node_list=node_list, statuses=crashing, complete=False,
                   pods_of_new=2, old_left=3,
                   template_extra={"volumes": [{"name": "scheme", "configMap": {
                       "name": "payee-check-scheme", "defaultMode": 420}}]})
    c.add({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": c.meta("ConfigMap", "payee-check-scheme", NS, s.ago(days=141)),
           "data": {"scheme.properties": "payee.scheme.participant-id=NMBK0417\n"
                                         "payee.scheme.sort-code-range=40-11-00:40-11-99\n"}})
    old_live = [p for p in roll.old_pods if "_deleted" not in p["metadata"]]
    ghost = next(p for p in roll.old_pods if "_deleted" in p["metadata"])
    gone = ghost["metadata"]["_deleted"]
    for pod in roll.new_pods:
        runs = runs_of[pod["metadata"]["name"]]
        crash_events(s, pod, "payee-check", runs, NEW)
        _crash_output(s, pod, runs)
        kills = [int(d.timestamp()) for d in deaths(runs)]

        def mem(t: int, rr: list[Run] = runs) -> float | None:
            for r in rr:
                end = r.end.timestamp() if r.end else NOW.timestamp() + 1
                if r.start.timestamp() <= t < end:
                    return 310 * MIB
            return None
        container_metrics(s, pod, "payee-check", memory=mem, cpu=const(0.4), restarts=kills,
                          limit_memory=1024 * MIB)

    traffic = daily(46.0, 0.35, 14.5)

    def serving(t: int) -> int:
        return 4 if t < gone else 3

    def slow(t: int) -> float:
        return 0.13 if t < gone else 0.13 + min(0.38, (t - gone) / 600 * 0.38)

    def failing(t: int) -> float:
        return 0.001 if t < gone else 0.001 + min(0.06, (t - gone) / 900 * 0.06)

    for pod in [*old_live, ghost]:
        container_metrics(s, pod, "payee-check",
                          memory=lambda t: 640 * MIB * (1.0 if t < gone else 1.12),
                          cpu=lambda t: traffic(t) / serving(t) * 0.021,
                          limit_memory=1024 * MIB)
        http_metrics(s, "payee-check", pod, rps=lambda t: traffic(t) / serving(t),
                     codes={"200": lambda t: 0.992 - failing(t), "404": const(0.007),
                            "503": failing}, median=slow, histogram=pod is not ghost)
    deployment_metrics(s, roll.work, lambda t: 4.0 if t < gone else 3.0)
    _serving_logs(s, old_live, ghost, gone)
    _herrings(s, node_list, at)
    return s


def _crash_output(s: Story, pod: dict, runs: list[Run]) -> None:
    def instance(run: Run) -> list[str]:
        t0 = run.start + timedelta(milliseconds=640)
        end = run.end or NOW
        return [
            line(t0, "info", "main", "c.n.payee.PayeeCheckApplication : Starting "
                 "PayeeCheckApplication v7.4.0 using Java 21.0.5 with PID 1"),
            line(t0 + timedelta(milliseconds=35), "info", "main", "c.n.payee."
                 "PayeeCheckApplication : The following 1 profile is active: \"prod\""),
            line(t0 + timedelta(seconds=3.1), "info", "main", "o.s.b.w.e.tomcat.TomcatWebServer"
                 " : Tomcat initialized with port 8080 (http)"),
            line(end - timedelta(milliseconds=420), "warn", "main", "o.s.b.w.s.c.Annotation"
                 "ConfigServletWebServerApplicationContext : Exception encountered during "
                 "context initialization - cancelling refresh attempt"),
            line(end - timedelta(milliseconds=380), "error", "main", "o.s.boot.Spring"
                 "Application : Application run failed"),
            "org.springframework.boot.context.properties.bind.BindValidationException: "
            "Binding validation errors on payee.scheme",
            f"   - Field error in object 'payee.scheme' on field 'participantId': rejected "
            f"value [null]; {KEY} must be set (payee.scheme.participant-id is no longer read "
            "from /etc/payee-check/scheme.properties since 7.4.0)",
            "\tat org.springframework.boot.context.properties.bind.validation."
            "ValidationBindHandler.validate(ValidationBindHandler.java:143)",
            "\tat com.northmere.payee.config.SchemeProperties.<init>(SchemeProperties."
            "java:38)"]
    done = [r for r in runs if r.end is not None]
    current = runs[-1]
    s.pod_log(pod, "payee-check", instance(current if current.end else done[-1]))
    if len(done) > 1 or (current.end is None and done):
        prev = done[-2] if current.end else done[-1]
        s.pod_log(pod, "payee-check", instance(prev), previous=True)
    for run in done:
        if run.end.timestamp() < s.times[0]:
            continue
        ship(s, pod, "payee-check", run.start + timedelta(milliseconds=640), "info",
             "Starting PayeeCheckApplication v7.4.0 using Java 21.0.5 with PID 1")
        ship(s, pod, "payee-check", run.end - timedelta(milliseconds=380), "error",
             f"Application run failed: BindValidationException: Binding validation errors on "
             f"payee.scheme: participantId rejected value [null]; {KEY} must be set",
             error__type="org.springframework.boot.context.properties.bind."
             "BindValidationException", log__logger="o.s.boot.SpringApplication")


def _serving_logs(s: Story, pods: list[dict], ghost: dict, gone: int) -> None:
    entries = [("info", "CoP request answered result=MATCH latencyMs=94", {}),
               ("info", "CoP request answered result=MATCH latencyMs=121", {}),
               ("info", "CoP request answered result=CLOSE_MATCH suggestion returned", {}),
               ("info", "CoP request answered result=NO_MATCH", {}),
               ("warn", "CoP responder: account type mismatch (personal vs business) for "
                "sort code 40-11-62", {})]
    onset = datetime.fromtimestamp(gone, UTC)
    for pod in pods:
        noise_logs(s, pod, "payee-check", "payee-check", entries, 60)
        noise_logs(s, pod, "payee-check", "payee-check", [
            ("warn", "request queued for 1840ms before a worker was free (pool 48/48)", {}),
            ("error", "POST /v1/confirmation-of-payee 503 Service Unavailable: no worker "
             "within 2000ms", {"http.response.status_code": 503}),
            ("info", "CoP request answered result=MATCH latencyMs=612", {})],
            40, start=onset + timedelta(minutes=2))
        # harmless and long-standing: the fraud events topic retries on leader elections
        for when in between(s, s.ago(hours=1, minutes=50), NOW, 3):
            ship(s, pod, "payee-check", when, "error", "fraud-signals publish failed: "
                 "NOT_LEADER_OR_FOLLOWER for partition cop-outcomes-7, retrying (attempt 1/5)",
                 error__type="org.apache.kafka.common.errors.NotLeaderOrFollowerException")
    ghost_end = datetime.fromtimestamp(gone, UTC)
    noise_logs(s, ghost, "payee-check", "payee-check", entries, 25, end=ghost_end)
    ship(s, ghost, "payee-check", ghost_end - timedelta(seconds=1), "info",
         "Commencing graceful shutdown. Waiting for active requests to complete")


def _herrings(s: Story, node_list: list[dict], at: datetime) -> None:
    so_at = at - timedelta(minutes=36, seconds=40)
    roll = rollout(s, NS, "standing-orders", lambda v: Ctr(
        "standing-orders", f"{REG}/payments/standing-orders:{v}", port=8080,
        requests={"cpu": "250m", "memory": "512Mi"}, limits={"memory": "768Mi"},
        readiness=http_probe("/actuator/health/readiness", delay=15)),
        old="3.17.4", new="3.18.0", at=so_at, revision=88, replicas=2, node_list=node_list)
    for pod in roll.new_pods:
        container_metrics(s, pod, "standing-orders", memory=const(455 * MIB))
        noise_logs(s, pod, "standing-orders", "standing-orders", [
            ("info", "standing order batch slot 14:30 queued 1,842 instructions", {}),
            ("info", "instruction SO-77120431 submitted to faster payments", {}),
            ("warn", "instruction SO-61022817 skipped: insufficient funds, retry at 18:00", {}),
        ], 30, start=so_at + timedelta(minutes=1))
    neighbour(s, NS, "core-banking-adapter", f"{REG}/payments/core-banking-adapter:"
                       "12.4.1", node_list, replicas=3, memory_mib=880, revision=33, logs=[
                           ("warn", "CBS session keepalive took 1920ms (threshold 1500ms)", {}),
                           ("info", "GET /accounts/lookup 200 (38ms)", {}),
                           ("info", "GET /accounts/lookup 200 (41ms)", {}),
                           ("warn", "CBS host TXN gateway returned RC=0091 (retry ok)", {})],
                       n_logs=60, rps=31.0, codes={"200": 0.997, "404": 0.003})
    neighbour(s, NS, "ledger-gateway", f"{REG}/payments/ledger-gateway:5.0.9", node_list,
              replicas=2, memory_mib=1400, revision=21,
              restarts={0: running(s.ago(days=3, hours=4), restarts=1, last=ended(
                  "OOMKilled", 137, s.ago(days=5, hours=20), s.ago(days=3, hours=4,
                                                                   seconds=11)))})
    readiness_blip(s, "risk", "fraud-screening", f"{REG}/risk/fraud-screening:2.41.0",
                   node_list, port=8080, path="/health/ready", minutes_ago=41)
    _, gw = neighbour(s, "channels", "mobile-gateway", f"{REG}/channels/mobile-gateway:"
                      "22.1.3", node_list, replicas=3, memory_mib=350, revision=140)
    for when in between(s, at + timedelta(minutes=4), NOW, 26):
        pod = s.rng.choice(gw)
        ship(s, pod, "mobile-gateway", when, "error", "POST /api/v3/payees/confirm -> "
             "payee-check.payments.svc: 503 Service Unavailable", http__response__status_code=503,
             url__path="/api/v3/payees/confirm")
