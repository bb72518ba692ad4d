"""Digital banking onboarding: new customers hang at "verifying your ID". identity-check
sends each applicant's document photos to the third-party verification API VeriDocs
(api.veridocs.io); since 13:07 that API answers 503 "upstream unavailable" or times out after
10 s for most calls, the client's circuit breaker opens and closes, and the applications pile
up in the manual-review queue. identity-check itself is healthy: no restarts, normal CPU and
memory, its own database fine. Red herrings: identity-check's release two days ago, an egress
NetworkPolicy, and the document store's slow-upload warnings."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import partial

from tests.data.holdout._generator.base import gauge, set_times
from tests.data.holdout2._generator.kit import NodeKind, app_counter, cpu_seconds, requests
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, http_probe

from .kit4 import Incident, pool, uuid_of

ID = "signup-verification-stuck"
NOW = datetime.fromisoformat("2028-02-22T13:58:00+00:00")
NS = "onboarding"
REG = "ghcr.io/lumenbank"


def build() -> Incident:
    s = Incident(
        id=ID,
        title="New customers stuck at ID verification",
        now=NOW,
        report="""\
Sign-ups in the Lumen app are stuck on "Verifying your ID..." for most new customers since
about 13:10, and the manual-review queue in the back office is filling up fast (300+). The
onboarding squad shipped identity-check 2.40 on Sunday. Marketing's TV campaign is running
today. Can you work out what is broken?
""",
        truth=truth(
            "dependency_failure", "Deployment", NS, "identity-check",
            ["api.veridocs.io", "503", "circuit breaker", "timeout"],
            "The external verification API VeriDocs (api.veridocs.io) answers 503 or times "
            "out since 13:07; identity-check is healthy. Open an incident with VeriDocs "
            "(check their status page), and meanwhile switch identity-check to the fallback "
            "provider or pause automatic verification and tell applicants of the delay."))
    set_times(s, 2.0, 60)
    c = s.cluster
    namespaces(s, {"default": 380, "kube-system": 380, NS: 360, "backoffice": 350})
    kind = NodeKind("m3.small.x86", "8", "65701300Ki", "7800m", "63251300Ki", "v1.31.6+k0s",
                    "6.8.0-53-generic", "Ubuntu 24.04.2 LTS", runtime="containerd://1.7.26")

    def namer(i: int) -> tuple[str, str]:
        return f"lb-prod-worker-{i + 1}", f"10.70.14.{130 + i}"

    nodes = pool(s, 3, kind=kind, namer=namer, days=6.1, region="am", zones=["am6"],
                 labels=lambda i, n: {"metal.equinix.com/metro": "am",
                                      "metal.equinix.com/plan": "m3.small.x86",
                                      "node.k0sproject.io/role": "worker",
                                      "node.kubernetes.io/instance-type": "m3.small.x86"},
                 provider=lambda i, n: f"equinixmetal://{uuid_of(s, 'em', n)}",
                 cidr=lambda i: f"10.244.{i}.0/24")
    outage = NOW.replace(hour=13, minute=7, second=20)

    def out(t: int) -> float:  # share of VeriDocs calls that fail
        if t < outage.timestamp():
            return 0.004
        return 0.62 + 0.25 * ((t // 300) % 3) / 2

    app = Ctr("identity-check", f"{REG}/identity-check:2.40.1", port=8080,
              requests={"cpu": "300m", "memory": "512Mi"}, limits={"memory": "768Mi"},
              env={"VERIDOCS_BASE_URL": "https://api.veridocs.io/v3",
                   "VERIDOCS_TIMEOUT": "10s", "BREAKER_FAILURE_RATIO": "0.5"},
              readiness=http_probe("/ready"), liveness=http_probe("/live", delay=15))
    work, pods = steady(s, NS, "identity-check", [app], nodes=nodes, replicas=3, revision=40,
                        rollout=s.ago(days=2, hours=3, minutes=22))
    for pod in pods:
        name = pod["metadata"]["name"]
        quiet(s, [pod], "identity-check", 300)
        cpu_seconds(s, pod, "identity-check", lambda t: 0.11 * s.rng.uniform(0.85, 1.15))
        requests(s, pod, "identity-check", rps=lambda t: 0.9, codes={
            "202": lambda t: 1.0 - 0.98 * out(t) * 0.2, "200": lambda t: 0.6,
            "503": lambda t: 0.98 * out(t) * 0.2})
        labels = {"namespace": NS, "pod": name, "client": "veridocs",
                  "host": "api.veridocs.io"}
        for outcome, share in (("success", lambda t: 1 - out(t)),
                               ("http_5xx", lambda t: out(t) * 0.7),
                               ("timeout", lambda t: out(t) * 0.3)):
            app_counter(s, "http_client_requests_total", {**labels, "outcome": outcome},
                        s.times, partial(_scaled, share),
                        "Outgoing HTTP requests by outcome.")
        gauge(s, "resilience4j_circuitbreaker_state", {"namespace": NS, "pod": name,
              "name": "veridocs", "state": "open"},
              lambda t: 1.0 if t >= outage.timestamp() and (t // 60) % 3 != 2 else 0.0,
              "The states of the circuit breaker.")
    chatter(s, pods, "identity-check", "identity-check", [
        ("error", "VeriDocs POST /v3/checks failed: 503 Service Unavailable "
         "{\"error\":\"upstream unavailable\",\"request_id\":\"vd-7f1c2a\"}",
         {"http.response.status_code": 503, "url.domain": "api.veridocs.io"}),
        ("error", "VeriDocs POST /v3/checks failed: timeout after 10000ms",
         {"error.type": "TimeoutException", "url.domain": "api.veridocs.io"}),
        ("warn", "circuit breaker 'veridocs' OPEN (failure rate 71.4% > 50%), applications "
         "routed to manual review", {}),
        ("info", "circuit breaker 'veridocs' HALF_OPEN, permitting 5 calls", {}),
        ("info", "application APP-2028-118221 queued for manual review (reason: "
         "provider_unavailable)", {}),
    ], 260, start=outage)
    chatter(s, pods, "identity-check", "identity-check", [
        ("info", "VeriDocs check vd-chk-88123 completed: document_valid=true face_match=0.97",
         {}),
        ("info", "application APP-2028-117904 verified in 6.2s", {}),
    ], 60, end=outage)
    c.add({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
           "metadata": c.meta("NetworkPolicy", "identity-check-egress", NS, s.ago(days=2,
                              hours=3, minutes=25), {"app.kubernetes.io/name":
                                                     "identity-check"}),
           "spec": {"podSelector": {"matchLabels": {"app.kubernetes.io/name":
                                                    "identity-check"}},
                    "policyTypes": ["Egress"],
                    "egress": [{"ports": [{"port": 53, "protocol": "UDP"},
                                          {"port": 53, "protocol": "TCP"}]},
                               {"to": [{"ipBlock": {"cidr": "0.0.0.0/0",
                                                    "except": ["10.0.0.0/8"]}}],
                                "ports": [{"port": 443, "protocol": "TCP"}]},
                               {"to": [{"podSelector": {"matchLabels": {
                                   "app.kubernetes.io/name": "applicant-store"}}}],
                                "ports": [{"port": 8080, "protocol": "TCP"}]}]}})

    # ---- the back office queue and the document store
    rq = Ctr("review-queue", f"{REG}/review-queue:1.15.0", port=8080,
             requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "512Mi"},
             readiness=http_probe("/ready"))
    _, rqs = steady(s, "backoffice", "review-queue", [rq], nodes=nodes, replicas=2,
                    revision=8, rollout=s.ago(days=5, hours=8), offset=1)
    quiet(s, rqs, "review-queue", 210)
    gauge(s, "review_queue_pending_applications", {"namespace": "backoffice",
                                                   "queue": "identity"},
          lambda t: 12 + max(0.0, (t - outage.timestamp()) / 60 * 6.4) + s.rng.uniform(0, 3),
          "Applications waiting for a human reviewer.")
    store = Ctr("applicant-store", f"{REG}/applicant-store:4.3.0", port=8080,
                requests={"cpu": "200m", "memory": "512Mi"}, limits={"memory": "1Gi"},
                readiness=http_probe("/ready"))
    _, stores = steady(s, NS, "applicant-store", [store], nodes=nodes, replicas=2,
                       revision=22, rollout=s.ago(days=4, hours=1), offset=2)
    quiet(s, stores, "applicant-store", 480)
    chatter(s, stores, "applicant-store", "applicant-store", [
        ("warn", "slow upload to object storage: 4.1 MB in 2380ms (bucket lumen-applicant-docs)",
         {}),
        ("info", "stored document DOC-551203 (passport, 2 pages)", {}),
    ], 60)
    _ = work
    return s


def _scaled(share: Callable[[int], float], t: int) -> float:
    return 0.9 * share(t)
