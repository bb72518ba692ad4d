"""Self-storage chain: customers cannot get gate access codes in the app. gate-codes
issues a code and publishes it (with publisher confirms) to a hosted RabbitMQ instance on
CloudAMQP, from where the SMS and lock-sync consumers pick it up. Since about 35 minutes ago
the broker has raised its memory alarm (a partner's queue of 2.1 M unacked messages on the
same shared plan) and blocks every publishing connection: publishes wait for confirms until
the 5 s timeout and gate-codes answers 503. gate-codes itself is healthy (no restarts, CPU
and memory flat). Red herrings: unit-billing 3.2.0 rolled out 1 h 40 min ago in the same
namespace, code-dispatcher's idle warnings (nothing to consume), a few normal SMS provider
timeouts, an old OOM restart of the marketing website in another namespace."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import alive, set_times
from tests.data.holdout2._generator.kit import app_counter, cpu_seconds, deploy, requests
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.data.holdout4._generator.kit4 import ramp
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, http_probe

from .kit12 import Incident, NodeKind, provider_nodes, secs

ID = "storage-gate-codes-failing"
NOW = datetime.fromisoformat("2028-09-02T16:22:00+00:00")
NS = "access"
REG = "cr.eu-north1.nebius.cloud/e00stowit/apps"
BROKER = "amqps://stowit:***@sharp-wombat.rmq3.cloudamqp.com/stowit"
BLOCKED = ("AMQP connection blocked by broker sharp-wombat.rmq3.cloudamqp.com: "
           "low on memory")


def build() -> Incident:
    s = Incident(
        id=ID, title="Customers cannot get gate access codes", now=NOW,
        report="""\
Lots of customers at our storage sites can't get their gate code in the app, they get
"Couldn't create your access code, try again" and are stuck outside the gate. Started maybe
half an hour ago, all sites. Staff are opening gates by hand.
""",
        truth=truth(
            "dependency_failure", "Deployment", NS, "gate-codes",
            ["connection blocked", "low on memory", "publish confirm timeout", "503",
             "cloudamqp"],
            "The hosted RabbitMQ broker (CloudAMQP sharp-wombat) has raised its memory alarm "
            "and blocks all publishers, so gate-codes' publishes time out waiting for "
            "confirms and it answers 503. gate-codes itself is healthy. Free the broker "
            "(purge or move the partner's backlog, upgrade the plan) with CloudAMQP; "
            "meanwhile issue codes without the queue (the fallback flag DIRECT_LOCK_SYNC) or "
            "open the gates from the site consoles."))
    set_times(s, 3.0, 60)
    c = s.cluster
    namespaces(s, {"default": 330, "kube-system": 330, NS: 320, "web": 300})
    kind = NodeKind("cpu-d3-4vcpu-16gb", "4", "16393216Ki", "3860m", "14296064Ki",
                    "v1.31.4", "6.8.0-51-generic", "Ubuntu 24.04.1 LTS",
                    runtime="containerd://1.7.24")
    nodes = provider_nodes(s, "nebius", 3, kind, days=5.8, group="apps")
    alarm = NOW - timedelta(minutes=35, seconds=20)

    def busy(t: int) -> float:  # Saturday afternoon move-ins
        return 1.0 + 0.25 * ramp(t, NOW - timedelta(hours=2), 60)

    # ---- gate-codes: healthy, but its broker blocks publishes
    gc = Ctr("gate-codes", f"{REG}/gate-codes:6.4.0", port=8080,
             requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "512Mi"},
             env={"AMQP_URL": BROKER.replace("***", "$(AMQP_PASSWORD)"),
                  "AMQP_EXCHANGE": "access.codes", "PUBLISH_CONFIRM_TIMEOUT": "5s",
                  "DB_HOST": "pg-access.access.svc"},
             readiness=http_probe("/ready"), liveness=http_probe("/healthz", delay=20))
    _, pods = deploy(s, NS, "gate-codes", [gc], replicas=3, nodes=nodes, revision=27,
                     rollout=s.ago(days=3, hours=2, minutes=40),
                     old=(26, s.ago(days=10), [Ctr("gate-codes", f"{REG}/gate-codes:6.3.2")]))
    block = ramp  # shape of the failure: immediate once the alarm is on
    for pod in pods:
        name = pod["metadata"]["name"]
        quiet(s, [pod], "gate-codes", 181)
        cpu_seconds(s, pod, "gate-codes", lambda t: 0.05 * busy(t))
        requests(s, pod, "gate-codes", rps=lambda t: 0.7 * busy(t), codes={
            "201": lambda t: 0.985 - 0.82 * block(t, alarm, 1),
            "503": lambda t: 0.82 * block(t, alarm, 1),
            "409": lambda t: 0.015},
            median=lambda t: 0.08 + 4.9 * block(t, alarm, 1),
            buckets=(0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0))
        app_counter(s, "amqp_publish_failures_total", {"namespace": NS, "pod": name,
                                                       "exchange": "access.codes",
                                                       "reason": "confirm_timeout"},
                    alive(s, pod), lambda t: 0.7 / 3 * busy(t) * 0.82 * block(t, alarm, 1),
                    "Messages the broker did not confirm.", start=0)
        node = pod["spec"]["nodeName"]
        s.logs.add(secs(alarm, 0.8 + s.rng.uniform(0, 0.4)), "warn", BLOCKED, namespace=NS,
                   pod=name, container="gate-codes", service="gate-codes", node=node,
                   error__type="amqp.ConnectionBlocked")
        chatter(s, [pod], "gate-codes", "gate-codes", [
            ("error", "POST /v1/access-codes 503: publish confirm timeout after 5000ms "
             "(exchange access.codes, routing key code.issued)",
             {"http.response.status_code": 503, "error.type": "PublishTimeout"}),
            ("error", "POST /v1/access-codes 503: publish confirm timeout after 5000ms "
             "(exchange access.codes, routing key code.issued)",
             {"http.response.status_code": 503, "error.type": "PublishTimeout"}),
            ("warn", "amqp channel 3 still blocked after 60s (broker resource alarm)",
             {"error.type": "amqp.ConnectionBlocked"}),
            ("info", "POST /v1/access-codes 201 site=OSL-07 unit=B-114 in 74ms",
             {"http.response.status_code": 201}),
        ], 110, start=alarm)
        chatter(s, [pod], "gate-codes", "gate-codes", [
            ("info", "POST /v1/access-codes 201 site=BGO-02 unit=A-031 in 68ms",
             {"http.response.status_code": 201}),
            ("info", "code published to access.codes (code.issued) confirmed in 9ms", {}),
            ("warn", "POST /v1/access-codes 409 unit C-220 has an unpaid invoice",
             {"http.response.status_code": 409}),
        ], 70, end=alarm)

    # ---- consumers and red herrings
    disp = Ctr("code-dispatcher", f"{REG}/code-dispatcher:2.2.1", port=8080,
               requests={"cpu": "100m", "memory": "192Mi"}, limits={"memory": "256Mi"})
    _, disps = steady(s, NS, "code-dispatcher", [disp], nodes=nodes, replicas=2, revision=14,
                      rollout=s.ago(days=5, hours=1), service=None, offset=1)
    quiet(s, disps, "code-dispatcher", 96)
    chatter(s, disps, "code-dispatcher", "code-dispatcher", [
        ("info", "sent SMS for code.issued site=OSL-07 via twilio in 420ms", {}),
        ("warn", "twilio POST /Messages timed out after 10s, retry 1/3",
         {"error.type": "ReadTimeout"}),
    ], 40, end=alarm)
    chatter(s, disps, "code-dispatcher", "code-dispatcher", [
        ("warn", "no message on queue sms.code-issued for 300s", {}),
        ("info", "lock-sync heartbeat ok: 41 sites", {}),
    ], 20, start=alarm)
    roll = NOW - timedelta(hours=1, minutes=40)
    bill = Ctr("unit-billing", f"{REG}/unit-billing:3.2.0", port=8080,
               requests={"cpu": "200m", "memory": "384Mi"}, limits={"memory": "512Mi"},
               readiness=http_probe("/ready"))
    _, bills = steady(s, NS, "unit-billing", [bill], nodes=nodes, replicas=2, revision=52,
                      rollout=roll, offset=2,
                      old=(51, s.ago(days=8), [Ctr("unit-billing",
                                                   f"{REG}/unit-billing:3.1.9")]))
    quiet(s, bills, "unit-billing", 266)
    for pod in bills:
        requests(s, pod, "unit-billing", rps=lambda t: 1.1, codes={
            "200": lambda t: 0.99, "402": lambda t: 0.01})
    chatter(s, bills, "unit-billing", "unit-billing", [
        ("info", "unit-billing 3.2.0 started (prorated move-in invoices)", {}),
        ("warn", "invoice INV-2028-09-88412 overdue 14 days, access flag set", {}),
        ("info", "GET /v1/units/B-114/balance 200 22ms", {}),
    ], 50, start=roll)
    site = Ctr("website", f"{REG}/website:11.7.0", port=3000,
               requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "384Mi"},
               readiness=http_probe("/api/health"))
    _, sites = steady(s, "web", "website", [site], nodes=nodes, replicas=2, revision=140,
                      rollout=s.ago(days=2, hours=8), service=80,
                      restarted={0: (s.ago(days=1, hours=11), "OOMKilled", 137)})
    quiet(s, sites, "website", 233)
    chatter(s, sites, "website", "website", [
        ("info", "GET /locations/oslo-ryen 200 35ms", {"http.response.status_code": 200}),
        ("warn", "image optimizer cache miss /img/units/xl.webp", {}),
    ], 30)
    _ = c
    return s
