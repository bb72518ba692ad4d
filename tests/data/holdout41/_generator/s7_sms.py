"""Shape 7: the SMS provider answers every send of otp-sender with 402 Payment Required
(the prepaid balance ran out overnight). otp-sender is healthy and returns 202 to its
callers, since it sends asynchronously; the codes never arrive."""

from __future__ import annotations

from .fleet import counter, healthy, series
from .kit import Clock, Scenario, event, namespace, node

NOW = "2026-11-24T07:58:00Z"
EMPTY = 212  # minutes ago the balance hit zero


def build() -> Scenario:
    c = Clock(NOW)
    sc = Scenario(
        "login-codes-not-arriving",
        "Users do not receive login verification codes",
        NOW,
        "support is flooded: users say they never get the SMS login code, since early this "
        "morning. "
        "otp-sender looks totally fine (no restarts, 202s everywhere). is the kafka lag thing from "
        "last week back? auth-api is also logging a lot of failed verifications\n",
        {
            "category": "dependency_failure",
            "culprit": {"kind": "Deployment", "namespace": "identity", "name": "otp-sender"},
            "evidence": ["402", "insufficient account balance", "api.textlane.io"],
            "fix": "Top up the Textlane account (and enable auto-recharge / a balance alert), or "
            "fail over "
            "otp-sender to the secondary SMS provider",
        },
    )
    nodes = [(f"node-{i}.pocketa-prod.internal", f"10.60.{i}.10") for i in range(1, 4)]
    for ns in ("identity", "messaging"):
        sc.objects.append(namespace(ns, c.ago(420 * 1440)))
    sc.objects += [
        node(
            n,
            c.ago(80 * 1440),
            c.ago(0.2),
            ip=ip,
            zone="eu-central-1" + "abc"[i],
            transition=c.ago(6 * 1440),
        )
        for i, (n, ip) in enumerate(nodes)
    ]
    otp = healthy(
        sc,
        c,
        "identity",
        "otp-sender",
        "ghcr.io/pocketa/otp-sender:5.4.1",
        replicas=2,
        nodes=nodes,
        port=8080,
        revision=23,
        rollout_hours=4 * 24,
        cluster_ip="172.30.10.12",
        ip_base="10.61.1",
        requests={"cpu": "200m", "memory": "384Mi"},
        limits={"memory": "512Mi"},
        probe="/health/ready",
    )
    auth = healthy(
        sc,
        c,
        "identity",
        "auth-api",
        "ghcr.io/pocketa/auth-api:12.8.0",
        replicas=3,
        nodes=nodes,
        port=8080,
        cluster_ip="172.30.10.4",
        ip_base="10.61.2",
        requests={"cpu": "500m", "memory": "512Mi"},
        limits={"memory": "1Gi"},
    )
    events = healthy(
        sc,
        c,
        "messaging",
        "notification-consumer",
        "ghcr.io/pocketa/notification-consumer:2.2.7",
        replicas=2,
        nodes=nodes,
        port=8080,
        cluster_ip="172.30.12.5",
        ip_base="10.61.3",
    )
    healthy(
        sc,
        c,
        "messaging",
        "email-sender",
        "ghcr.io/pocketa/email-sender:3.0.2",
        replicas=2,
        nodes=nodes,
        port=8080,
        cluster_ip="172.30.12.9",
        ip_base="10.61.4",
    )
    sc.objects.append(
        event(
            "messaging",
            "Pod",
            events.names[0],
            "Unhealthy",
            "Readiness probe failed: Get "
            '"http://10.61.3.20:8080/healthz": context deadline exceeded (Client.Timeout exceeded '
            "while awaiting headers)",
            first=c.ago(51),
            last=c.ago(38),
            count=3,
            type_="Warning",
            host=nodes[0][0],
        )
    )
    # otp-sender: logback-style lines; balance warnings the day before, then 402 on every send
    for i, pn in enumerate(otp.names):
        lines = []
        for k in range(EMPTY + 60, 0, -1):
            ts = c.ms(k + i * 0.37)
            lines.append(
                f"{ts} INFO  [http-nio-8080-exec-{k % 20}] c.p.otp.api.OtpController - accepted "
                f"otp request "
                f"id=otp_{(k * 7919 + i) % 10**8:08d} channel=sms status=202"
            )
            if k > EMPTY:
                lines.append(
                    f"{ts} INFO  [sms-dispatch-{k % 4}] c.p.otp.sms.TextlaneClient - sms queued "
                    f"by provider "
                    f"message_id=tl_{k * 31 + i:07d} cost=0.071 EUR"
                )
            else:
                body = (
                    '{"error":{"code":"insufficient_balance","message":"insufficient account '
                    'balance",'
                    '"balance":"0.00","currency":"EUR"}}'
                )
                lines.append(
                    f"{ts} WARN  [sms-dispatch-{k % 4}] c.p.otp.sms.TextlaneClient - send failed "
                    f"POST https://api.textlane.io/v2/messages -> 402 Payment Required body={body}"
                )
                lines.append(
                    f"{ts} INFO  [sms-dispatch-{k % 4}] c.p.otp.sms.DispatchWorker - giving up on "
                    f"otp_{(k * 7919 + i) % 10**8:08d} after 3 attempts (non-retryable status 402)"
                )
                sc.doc(
                    ts,
                    "warn",
                    "otp-sender",
                    "identity",
                    pn,
                    "app",
                    "send failed POST https://api.textlane.io/v2/messages -> 402 Payment Required",
                    **{
                        "http.response.status_code": 402,
                        "url.domain": "api.textlane.io",
                        "error.message": "insufficient account balance",
                    },
                )
            sc.doc(
                ts,
                "info",
                "otp-sender",
                "identity",
                pn,
                "app",
                "accepted otp request channel=sms status=202",
                **{"http.response.status_code": 202},
            )
        sc.log("identity", pn, "app", lines)
    for h in range(30, 3, -3):
        m = EMPTY + h * 60
        sc.doc(
            c.ms(m),
            "warn",
            "otp-sender",
            "identity",
            otp.names[0],
            "app",
            f"provider balance webhook: balance={max(0.4, h * 1.3):.2f} EUR below threshold "
            f"50.00 EUR",
            **{"url.domain": "api.textlane.io"},
        )
    for i, pn in enumerate(auth.names):
        for k in range(EMPTY, 0, -1):
            sc.doc(
                c.ms(k + i * 0.2),
                "warn",
                "auth-api",
                "identity",
                pn,
                "app",
                "otp verification failed: code expired or not found",
                **{"http.response.status_code": 401},
            )
    for pn in events.names:
        for k in range(0, 5 * 24 * 60, 90):
            sc.doc(
                c.ms(k + 3 * 24 * 60 if k < 600 else k),
                "warn",
                "notification-consumer",
                "messaging",
                pn,
                "app",
                "consumer lag above 5000 on topic notifications.push partition 3, rebalancing",
            )
    for pn in otp.names:
        lab = {"namespace": "identity", "pod": pn}
        for code, rate in (("202", lambda m: 3.1),):
            series(
                sc,
                c,
                "http_server_requests",
                "counter",
                "requests",
                lab | {"uri": "/v1/otp", "status": code},
                counter(rate, 720, 1, pn + code),
                start_min=720,
                step_min=2,
                sample="http_server_requests_total",
            )
        for code, rate in (
            ("200", lambda m: 3.1 if m > EMPTY else 0.0),
            ("402", lambda m: 0.0 if m > EMPTY else 9.3),
        ):
            series(
                sc,
                c,
                "sms_provider_requests",
                "counter",
                "provider calls",
                lab | {"provider": "textlane", "status": code},
                counter(rate, 720, 1, pn + "p" + code),
                start_min=720,
                step_min=2,
                sample="sms_provider_requests_total",
            )
        series(
            sc,
            c,
            "kube_pod_container_status_restarts",
            "counter",
            "restarts",
            lab | {"container": "app"},
            lambda m: 0,
            start_min=720,
            step_min=10,
            sample="kube_pod_container_status_restarts_total",
        )
    return sc
