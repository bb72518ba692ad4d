"""Hair salon chain: customers cannot sign in to the booking app because the one-time SMS
codes never arrive. otp-sender hands every code to the third-party SMS gateway Textwell
(api.textwell.io); since about 08:07 Textwell answers most submissions with 503 Service
Unavailable or lets them time out, otp-sender's circuit breaker opens and the codes are
dropped. otp-sender itself is healthy (no restarts, flat memory and CPU): the cause lies
outside the cluster, so the culprit is the workload that depends on it. The signal is
mainly in otp-sender's logs (and its provider counters). Red herrings: booking-web 3.5.0
rolled out 42 min before the onset in the same namespace (its sign-in errors are the
symptom, not the cause), an alert-looking "monthly SMS quota at 81%" warning in
otp-sender itself, an old OOM restart of stylist-calendar four days ago, a push-sender
that logs noisy APNs token errors, and a payment gateway with a few ordinary timeouts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.scenario_tools.common import (
    MIB,
    Story,
    const,
    container_metrics,
    deployment_metrics,
    http_metrics,
    truth,
)
from tests.scenario_tools.kube import Ctr, ended, http_probe, running
from tests.scenario_tools.parts import app, neighbour, readiness_blip, rollout

from .kit14 import base, chatter, counter

ID = "salon-sign-in-codes-missing"
NOW = datetime(2028, 4, 11, 8, 52, tzinfo=UTC)
NS = "salon"
REG = "ghcr.io/shearline"


def build() -> Story:
    s = Story(
        id=ID, title="Salon app sign-in codes not arriving", now=NOW,
        report="""\
Lots of customers can't log in to the salon booking app this morning, they say the SMS
code never arrives. Started roughly 08:00-08:10. Front desks are taking bookings by phone.
""",
        truth=truth(
            "dependency_failure", "Deployment", NS, "otp-sender",
            ["api.textwell.io", "503 Service Unavailable", "circuit breaker open"],
            "The third-party SMS gateway Textwell (api.textwell.io) has been returning 503 "
            "Service Unavailable and timing out since about 08:07, so otp-sender's circuit "
            "breaker opens and sign-in codes are not delivered. otp-sender itself is healthy. "
            "Open a ticket with Textwell / check their status page and fail over otp-sender "
            "to the secondary SMS provider; booking-web 3.5.0 is not involved."),
        hours=3.0)
    onset = NOW - timedelta(minutes=45, seconds=17)
    t0 = onset.timestamp()
    node_list = base(s, [NS, "payments", "marketing"], 4, subnet=41, instance="m7i.xlarge")

    # ---- otp-sender: healthy pods, failing provider
    def ok_share(t: int) -> float:
        return 0.995 if t < t0 else 0.12

    work, pods = app(
        s, NS, "otp-sender", f"{REG}/otp-sender:2.8.3", node_list, replicas=2, revision=17,
        rps=const(1.6), codes={"202": ok_share, "502": lambda t: 1 - ok_share(t)},
        median=lambda t: 0.35 if t < t0 else 2.9, cpu=const(0.06), memory_mib=140,
        limits={"memory": "256Mi"}, requests={"cpu": "100m", "memory": "192Mi"},
        env={"SMS_PRIMARY": "textwell", "TEXTWELL_BASE_URL": "https://api.textwell.io/v2",
             "TEXTWELL_TIMEOUT": "4s", "SMS_FAILOVER_ENABLED": "false",
             "BREAKER_ERROR_RATIO": "0.5"},
        rollout_at=NOW - timedelta(days=6, hours=3))
    deployment_metrics(s, work)
    for pod in pods:
        labels = {"namespace": NS, "pod": pod["metadata"]["name"], "provider": "textwell"}
        for outcome, share in (("delivered", ok_share),
                               ("http_503", lambda t: 0.0 if t < t0 else 0.61),
                               ("timeout", lambda t: 0.0008 if t < t0 else 0.27)):
            counter(s, "sms_provider_requests", {**labels, "outcome": outcome},
                    lambda t, sh=share: 0.8 * sh(t), "SMS submissions to the provider by "
                    "outcome.")
    ok_lines = [
        ("info", "otp sent to +43 6*** **** 21 via textwell msg_id=tw_8f2a91 in 0.31s", {}),
        ("info", "otp sent to +49 15** ***** 07 via textwell msg_id=tw_8f2b0c in 0.42s", {}),
        ("info", "delivery receipt tw_8f2a91 status=DELIVERED", {}),
        ("info", "POST /v1/otp 202 accepted", {"http.response.status_code": 202}),
    ]
    chatter(s, pods, "otp-sender", "otp-sender", ok_lines, 150, end=onset)
    chatter(s, pods, "otp-sender", "otp-sender", [
        ("warn", "ALERT monthly SMS quota at 81% of plan (textwell, 40500/50000)", {}),
    ], 4, start=s.ago(hours=2, minutes=50))
    chatter(s, pods, "otp-sender", "otp-sender", [
        ("error", "POST https://api.textwell.io/v2/messages failed: 503 Service Unavailable "
         "(attempt 3/3)", {"error.type": "ProviderUnavailable",
                           "http.response.status_code": 503, "url.domain": "api.textwell.io"}),
        ("error", "POST https://api.textwell.io/v2/messages failed: context deadline exceeded "
         "after 4s (attempt 3/3)", {"error.type": "Timeout", "url.domain": "api.textwell.io"}),
        ("warn", "circuit breaker open for provider textwell (error ratio 0.88 > 0.5), "
         "rejecting sends for 30s", {}),
        ("error", "POST /v1/otp 502 sms provider unavailable, code not sent",
         {"http.response.status_code": 502}),
        ("info", "otp sent to +41 79* *** ** 55 via textwell msg_id=tw_91c4e0 in 3.62s", {}),
        ("warn", "failover provider not configured (SMS_FAILOVER_ENABLED=false)", {}),
    ], 260, start=onset)

    # ---- booking-web: rolled out 42 min before the onset, sees the symptom
    roll = onset - timedelta(minutes=42, seconds=30)

    def web(version: str) -> Ctr:
        return Ctr("booking-web", f"{REG}/booking-web:{version}", port=3000,
                   requests={"cpu": "200m", "memory": "384Mi"}, limits={"memory": "512Mi"},
                   env={"OTP_URL": "http://otp-sender.salon.svc/v1/otp",
                        "NODE_ENV": "production"},
                   readiness=http_probe("/api/ready", delay=5),
                   liveness=http_probe("/api/live", delay=15, period=20))
    roll_out = rollout(s, NS, "booking-web", web, old="3.4.6", new="3.5.0", at=roll,
                       revision=88, replicas=3, node_list=node_list)
    deployment_metrics(s, roll_out.work)
    for pod in roll_out.new_pods + roll_out.old_pods:
        level = s.rng.uniform(250, 290) * MIB
        container_metrics(s, pod, "booking-web", memory=lambda t, b=level: b)
        http_metrics(s, "booking-web", pod, rps=const(6.5), codes={
            "200": const(0.97), "304": const(0.02),
            "401": lambda t: 0.004 if t < t0 else 0.006,
            "502": lambda t: 0.0005 if t < t0 else 0.008}, median=const(0.08))
    chatter(s, roll_out.new_pods, "booking-web", "booking-web", [
        ("info", "booking-web 3.5.0 ready on :3000 (next 15.2, node 22.14)", {}),
        ("info", "GET /salons/vienna-mariahilf/slots 200 74ms", {}),
        ("warn", "feature flag 'stylist-photos-v2' not found, using default=false", {}),
    ], 60, start=roll)
    chatter(s, roll_out.new_pods, "booking-web", "booking-web", [
        ("error", "sign-in: otp request failed: upstream otp-sender answered 502",
         {"http.response.status_code": 502}),
        ("info", "GET /salons/graz-lend/slots 200 61ms", {}),
        ("info", "sign-in: code requested for session s_3Yt0", {}),
    ], 90, start=onset + timedelta(minutes=1))

    # ---- neighbours and red herrings
    _, cal = neighbour(s, NS, "stylist-calendar", f"{REG}/stylist-calendar:1.19.0", node_list,
                       replicas=2, memory_mib=410, logs=[
                           ("info", "calendar sync for salon graz-lend: 14 stylists, 212 slots",
                            {}),
                           ("info", "slot hold released after 10m: booking b_71aa", {})],
                       restarts={1: running(s.ago(days=4, hours=2), restarts=1, last=ended(
                           "OOMKilled", 137, s.ago(days=5, hours=7), s.ago(days=4, hours=2,
                                                                          seconds=14)))})
    _, push = neighbour(s, NS, "push-sender", f"{REG}/push-sender:0.14.2", node_list,
                        replicas=2, memory_mib=95, logs=[
                            ("error", "APNs rejected token 8c1f…e2: BadDeviceToken (uninstalled "
                             "app), removing", {"error.type": "BadDeviceToken"}),
                            ("info", "push sent: appointment reminder b_70f2 (fcm)", {}),
                            ("warn", "FCM quota window 60% used", {})], n_logs=60)
    _, psp = neighbour(s, "payments", "card-gateway", f"{REG}/card-gateway:5.2.0", node_list,
                       replicas=2, memory_mib=220, rps=1.1, codes={"200": 0.992, "504": 0.008},
                       logs=[("info", "deposit authorised for booking b_7201 (EUR 20.00)", {}),
                             ("warn", "acquirer call timed out after 5s, retry 1/2 succeeded",
                              {"error.type": "Timeout"})], n_logs=30)
    readiness_blip(s, "marketing", "newsletter-preview", f"{REG}/newsletter-preview:0.3.1",
                   node_list, minutes_ago=31)
    assert cal and push and psp
    return s
