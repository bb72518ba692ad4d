"""School meals: parents cannot top up their children's meal accounts. topup-gateway
authenticates to the card acquirer with a client certificate (mutual TLS) mounted from the
Secret acquirer-client-tls; that certificate expired at 06:00 today and nobody renewed it.
Since then every authorisation fails in the TLS handshake ("remote error: tls: expired
certificate"), the gateway answers 502 and the parents' app shows a generic decline. The
cause is only in topup-gateway's logs (its start-up line with notAfter, the daily expiry
warnings, the handshake errors); metrics show 502s, cluster state is all green. Red
herrings: wallet-ledger 6.2.0 rolled out at 05:15 in the same namespace (the reporter's
suspect); acquirer latency warnings and replayed-webhook errors in the gateway; an old OOM
restart of menu-planner; SMS provider throttling in notifications."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import eks_nodes, set_times
from tests.data.holdout2._generator.kit import app_counter, cpu_seconds, requests
from tests.data.holdout3._generator.kit3 import (
    chatter,
    ksm_deployment,
    log_pod,
    namespaces,
    quiet,
    steady,
)
from tests.data.holdout4._generator.kit4 import ramp
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, http_probe

from .kit import Incident, rolled_neighbour

ID = "meal-topups-declined"
NOW = datetime.fromisoformat("2028-09-18T07:41:00+00:00")
NS = "schoolmeals"
ECR = "604118827340.dkr.ecr.eu-west-1.amazonaws.com"
EXPIRY = datetime.fromisoformat("2028-09-18T06:00:00+00:00")
ACQ = "https://api.merchant.paylane-acquiring.eu/v3/authorisations"
MORNING = datetime.fromisoformat("2028-09-18T06:25:00+00:00")


def build() -> Incident:
    s = Incident(
        id=ID, title="Parents cannot top up school meal accounts", now=NOW,
        report="""\
Parents can't top up school meal accounts since early this morning, the app says
"payment declined, please try another card" for every card. The acquirer's status page
is all green. Wallet had a release this morning, maybe that broke something? Schools
open in an hour and kids with zero balance won't get lunch.
""",
        truth=truth(
            "certificate", "Deployment", NS, "topup-gateway",
            ["tls: expired certificate", "notAfter=2028-09-18T06:00:00Z",
             "acquirer-client-tls"],
            "topup-gateway's client certificate for the acquirer (Secret acquirer-client-tls) "
            "expired at 06:00 today, so every mutual-TLS handshake with the acquirer fails. "
            "Issue a new client certificate, update the Secret and restart topup-gateway; "
            "alert on certificate expiry instead of only logging it."))
    set_times(s, 3.0, 60)
    namespaces(s, {"default": 610, "kube-system": 610, NS: 588, "notifications": 560})
    nodes = eks_nodes(s, 4, region="eu-west-1", subnet=37, pool="apps-m7i",
                      instance="m7i.xlarge", kubelet="v1.32.7-eks-3abbec1",
                      kernel="6.1.141-155.222.amzn2023.x86_64",
                      os_image="Amazon Linux 2023.8.20250818", cpu="4", memory="16088632Ki",
                      alloc_cpu="3920m", alloc_memory="15064632Ki", days=5.6)
    edge = EXPIRY.timestamp()

    def load(t: int) -> float:  # parents top up before school
        return 0.06 + 1.5 * ramp(t, MORNING, 55)

    # ---- topup-gateway: its client certificate expired at 06:00
    image = f"{ECR}/schoolmeals/topup-gateway:3.14.1"
    ctr = Ctr("topup-gateway", image, port=8443, port_name="https",
              requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "384Mi"},
              env={"ACQUIRER_URL": ACQ.rsplit("/", 1)[0],
                   "ACQUIRER_CLIENT_CERT": "/etc/acquirer/tls/tls.crt",
                   "ACQUIRER_CLIENT_KEY": "/etc/acquirer/tls/tls.key",
                   "ACQUIRER_TIMEOUT": "8s", "MERCHANT_ID": "SM-UK-004417"},
              readiness=http_probe("/ready", "https", delay=5),
              liveness=http_probe("/live", "https", delay=15, period=20),
              mounts=[{"name": "acquirer-client-tls", "mountPath": "/etc/acquirer/tls",
                       "readOnly": True}])
    for probe in (ctr.readiness, ctr.liveness):
        if probe:
            probe["httpGet"]["scheme"] = "HTTPS"
    started = s.ago(days=4, hours=9, minutes=22)
    _, pods = steady(s, NS, "topup-gateway", [ctr], nodes=nodes, replicas=3, revision=27,
                     rollout=started, service=443, target="https",
                     volumes=[{"name": "acquirer-client-tls", "secret": {
                         "secretName": "acquirer-client-tls", "defaultMode": 288}}])
    for i, pod in enumerate(pods):
        born = datetime.fromisoformat(pod["status"]["startTime"].replace("Z", "+00:00"))
        node = pod["spec"]["nodeName"]
        for offset, level, text in (
                (6.1, "info", "topup-gateway 3.14.1 starting (go1.22.6, merchant SM-UK-004417)"),
                (6.4, "info", "loaded acquirer client certificate subject=CN=topup-gateway."
                 "schoolmeals.prod,O=Lunchbox Payments Ltd serial=4f:1a:09:c2:77:3e:b0:15 "
                 "notAfter=2028-09-18T06:00:00Z"),
                (6.9, "info", "listening on :8443 (tls)")):
            s.logs.add(born + timedelta(seconds=offset + 0.3 * i), level, text, namespace=NS,
                       pod=pod["metadata"]["name"], container="topup-gateway",
                       service="topup-gateway", node=node)
        for days_left in (3, 2, 1):
            when = EXPIRY - timedelta(days=days_left, seconds=-(4 + 7 * i))
            if when > born:
                s.logs.add(when, "warn", f"acquirer client certificate expires in "
                           f"{24 * days_left}h (notAfter=2028-09-18T06:00:00Z)", namespace=NS,
                           pod=pod["metadata"]["name"], container="topup-gateway",
                           service="topup-gateway", node=node)
        requests(s, pod, "topup-gateway", rps=lambda t: load(t) / 3, codes={
            "200": lambda t: 0.99 if t < edge else 0.31,
            "502": lambda t: 0.002 if t < edge else 0.69,
            "400": lambda t: 0.008}, median=lambda t: 0.41 if t < edge else 0.06,
            buckets=(0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 8.0))
        labels = {"namespace": NS, "pod": pod["metadata"]["name"]}
        for result, share in (("approved", lambda t: 0.955 if t < edge else 0.0),
                              ("declined", lambda t: 0.04 if t < edge else 0.0),
                              ("error", lambda t: 0.005 if t < edge else 1.0)):
            app_counter(s, "acquirer_authorisations_total", {**labels, "result": result},
                        [t for t in s.times if t >= born.timestamp() + 25],
                        lambda t, f=share: load(t) / 3 * 0.69 * f(t),
                        "Card authorisations sent to the acquirer by result.")
        cpu_seconds(s, pod, "topup-gateway", lambda t: 0.02 + 0.05 * load(t))
    quiet(s, pods, "topup-gateway", 96)
    chatter(s, pods, "topup-gateway", "topup-gateway", [
        ("info", "authorisation A-20913377 approved: 20.00 GBP account SM-7731-0042 in 402ms",
         {}),
        ("info", "authorisation A-20913381 approved: 10.00 GBP account SM-2208-0113 in 388ms",
         {}),
        ("info", "authorisation A-20913390 declined by issuer: insufficient funds (51)", {}),
        ("warn", "acquirer latency p99 1840ms above SLO 1500ms (last 5m)", {}),
    ], 40, start=s.ago(hours=3), end=EXPIRY)
    chatter(s, pods, "topup-gateway", "topup-gateway", [
        ("error", f'authorisation failed: Post "{ACQ}": remote error: tls: expired certificate',
         {"error.type": "tls.alert", "http.response.status_code": 502}),
        ("error", f'authorisation failed: Post "{ACQ}": remote error: tls: expired certificate',
         {"error.type": "tls.alert", "http.response.status_code": 502}),
        ("info", "balance lookup account SM-7731-0042: 1.85 GBP", {}),
        ("warn", "topup T-88120455 marked failed, customer shown decline screen", {}),
    ], 330, start=EXPIRY + timedelta(seconds=5))
    chatter(s, pods, "topup-gateway", "topup-gateway", [
        ("error", "webhook signature check failed for event evt_3Pq81Lk (replayed event, "
         "ignored)", {"error.type": "SignatureMismatch"}),
    ], 6, start=s.ago(hours=3))
    ksm_deployment(s, NS, "topup-gateway", lambda t: 3.0, lambda t: 3.0, lambda t: 0.0)

    # ---- parents-api: the app's backend, a victim
    api = Ctr("parents-api", f"{ECR}/schoolmeals/parents-api:9.3.0", port=8080,
              requests={"cpu": "250m", "memory": "384Mi"}, limits={"memory": "512Mi"},
              env={"TOPUP_GATEWAY_URL": "https://topup-gateway.schoolmeals.svc:443",
                   "WALLET_URL": "http://wallet-ledger.schoolmeals.svc"},
              readiness=http_probe("/ready"), liveness=http_probe("/live", delay=15,
                                                                   period=20))
    _, api_pods = steady(s, NS, "parents-api", [api], nodes=nodes, replicas=2, revision=112,
                         rollout=s.ago(days=2, hours=18), offset=1)
    for pod in api_pods:
        requests(s, pod, "parents-api", rps=lambda t: 1.2 + 4.0 * ramp(t, MORNING, 55) / 2,
                 codes={"200": lambda t: 0.97 if t < edge else 0.86,
                        "402": lambda t: 0.002 if t < edge else 0.11,
                        "401": lambda t: 0.028})
        cpu_seconds(s, pod, "parents-api", lambda t: 0.09)
    quiet(s, api_pods, "parents-api", 233)
    chatter(s, api_pods, "parents-api", "parents-api", [
        ("info", "GET /v2/children/balances 200 31ms", {"http.response.status_code": 200}),
        ("info", "POST /v2/topups 200 455ms amount=20.00", {"http.response.status_code": 200}),
    ], 60, start=s.ago(hours=3), end=EXPIRY)
    chatter(s, api_pods, "parents-api", "parents-api", [
        ("info", "GET /v2/children/balances 200 28ms", {"http.response.status_code": 200}),
        ("warn", "POST /v2/topups 402 payment declined (topup-gateway answered 502 Bad "
         "Gateway)", {"http.response.status_code": 402}),
        ("info", "GET /v2/menus/week 200 12ms", {"http.response.status_code": 200}),
    ], 240, start=EXPIRY)
    ksm_deployment(s, NS, "parents-api", lambda t: 2.0, lambda t: 2.0, lambda t: 0.0)

    # ---- red herring: wallet-ledger rolled out at 05:15
    roll = EXPIRY - timedelta(minutes=44, seconds=51)
    rolled_neighbour(
        s, NS, "wallet-ledger", lambda v: Ctr(
            "wallet-ledger", f"{ECR}/schoolmeals/wallet-ledger:{v}", port=8080,
            requests={"cpu": "250m", "memory": "512Mi"}, limits={"memory": "768Mi"},
            env={"DB_HOST": "wallet-prod.cluster-cq81xk.eu-west-1.rds.amazonaws.com"},
            readiness=http_probe("/ready"), liveness=http_probe("/live", delay=20, period=20)),
        old="6.1.4", new="6.2.0", revision=31, at=roll, replicas=2, nodes=nodes[1:],
        mib=344, cpu=0.07, rps=lambda t: 0.3 + 1.1 * ramp(t, MORNING, 55),
        codes={"200": 0.998, "409": 0.002}, entries=[
            ("info", "ledger entry posted: account SM-4410-0087 lunch -2.40 GBP", {}),
            ("info", "balance projection refreshed for 18,204 accounts in 3.1s", {}),
            ("warn", "duplicate meal charge ignored (idempotency key till-17-0912-3341)", {}),
        ], n_logs=90, size=88_504_117)
    ksm_deployment(s, NS, "wallet-ledger", lambda t: 2.0, lambda t: 2.0, lambda t: 0.0)

    # ---- red herring: menu-planner's OOM restart two days ago
    menu = Ctr("menu-planner", f"{ECR}/schoolmeals/menu-planner:2.6.0", port=8080,
               requests={"cpu": "100m", "memory": "384Mi"}, limits={"memory": "512Mi"},
               readiness=http_probe("/ready"))
    _, menus = steady(s, NS, "menu-planner", [menu], nodes=nodes, replicas=1, revision=14,
                      rollout=s.ago(days=6, hours=4), offset=2,
                      restarted={0: (s.ago(days=2, hours=5, minutes=41), "OOMKilled", 137)})
    quiet(s, menus, "menu-planner", 298)
    log_pod(s, menus[0], "menu-planner", "menu-planner", [
        ("info", "menu week 38 published for 212 schools", {}),
        ("info", "allergen matrix recalculated (14 allergens, 96 dishes)", {}),
    ], 18, start=s.ago(hours=3))
    ksm_deployment(s, NS, "menu-planner", lambda t: 1.0, lambda t: 1.0, lambda t: 0.0)

    # ---- noisy neighbour: SMS notifications throttled by the provider
    sms = Ctr("sms-notifier", f"{ECR}/notifications/sms-notifier:1.8.2", port=8080,
              requests={"cpu": "100m", "memory": "128Mi"}, limits={"memory": "256Mi"},
              readiness=http_probe("/ready"))
    _, smss = steady(s, "notifications", "sms-notifier", [sms], nodes=nodes, replicas=2,
                     revision=22, rollout=s.ago(days=3, hours=2), offset=3)
    quiet(s, smss, "sms-notifier", 88)
    chatter(s, smss, "sms-notifier", "sms-notifier", [
        ("warn", "provider returned 429 Too Many Requests, retrying in 2s (batch low-balance "
         "reminders)", {"http.response.status_code": 429}),
        ("info", "sent 50 low-balance reminders (batch 2028-09-18-07)", {}),
    ], 70, start=s.ago(hours=3))
    ksm_deployment(s, "notifications", "sms-notifier", lambda t: 2.0, lambda t: 2.0,
                   lambda t: 0.0)
    return s
