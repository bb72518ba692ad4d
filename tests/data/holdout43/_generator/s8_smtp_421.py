# ruff: noqa: E501 - log lines, event messages and object literals are kept verbatim on one line
"""Kestrel Travel: after marketing's Black Friday newsletter went out through the same relay
account and egress IP, the outside SMTP relay answers the mailer with 421 "too many
connections from your IP". Confirmation mails queue in RabbitMQ and arrive an hour late;
the mailer, the queue and the API in front of them are healthy."""

from __future__ import annotations

import random
from datetime import timedelta as td

from ._kit import (
    Story,
    container,
    counter,
    deployment,
    endpoints,
    event,
    http_probe,
    meta,
    namespace,
    parse,
    pod,
    pod_template,
    replicaset,
    series,
    service,
)

RELAY = "smtp.postwire-relay.net"
EGRESS = "35.204.77.19"


def build() -> Story:
    now = parse("2026-11-27T08:40:00Z")
    block = parse("2026-11-27T07:18:00Z")
    old = parse("2024-02-11T10:00:00Z")
    s = Story(
        id="confirmation-emails-late",
        title="Booking confirmation emails arriving late",
        now=now,
        report=(
            "customers are calling because booking confirmation emails arrive 1h+ late or not at all "
            "since early morning. sms and push are fine. mailer pods look green to me. is rabbit "
            "backed up? (fyi marketing sent the black friday newsletter at 7)"
        ),
        truth={
            "category": "dependency_failure",
            "culprit": {"kind": "Deployment", "namespace": "notifications", "name": "mailer"},
            "evidence": ["421 4.7.0 Too many connections from your IP", RELAY, "mail.outbound"],
            "fix": (
                "Ask the relay provider to lift the block / raise the connection limit for the egress IP, "
                "send marketing mail from a separate IP or relay pool, and let the mailer drain the queue "
                "with fewer parallel SMTP connections"
            ),
        },
    )
    s.add(namespace("notifications", old), namespace("messaging", old), namespace("bookings", old))
    nodes = ["pool-general-7f2kq", "pool-general-7f2kx", "pool-general-7f2m1"]
    m_tpl = pod_template(
        {"app": "mailer", "channel": "email"},
        [
            container(
                "mailer",
                "ghcr.io/kestrel-travel/mailer:4.17.0",
                cpu_req="200m",
                mem_req="256Mi",
                cpu_lim="1",
                mem_lim="512Mi",
                port=8080,
                readiness=http_probe("/health/ready", 8080),
                liveness=http_probe("/health/live", 8080),
                env=[
                    {"name": "Smtp__Host", "value": RELAY},
                    {"name": "Smtp__Port", "value": "587"},
                    {"name": "Smtp__MaxConnections", "value": "40"},
                    {"name": "Rabbit__Queue", "value": "mail.outbound"},
                    {"name": "ASPNETCORE_ENVIRONMENT", "value": "Production"},
                ],
            )
        ],
    )
    md = deployment("mailer", "notifications", old, m_tpl, 3, 27)
    s.add(md, replicaset(md, "7b6f9c8d5", now - td(days=6), 27, m_tpl, 3))
    mailers = [
        (f"mailer-7b6f9c8d5-{x}", nodes[i], f"10.244.{i}.{21 + i}")
        for i, x in enumerate(["4ghp2", "kx8vd", "t2rnw"])
    ]
    for name, n, ip in mailers:
        s.add(
            pod(
                name,
                "notifications",
                now - td(days=6),
                m_tpl,
                n,
                ip,
                "ReplicaSet",
                "mailer-7b6f9c8d5",
            )
        )
    s.add(
        service("mailer", "notifications", old, {"app": "mailer"}, 8080, 8080, "10.245.18.4"),
        endpoints(
            "mailer",
            "notifications",
            now - td(days=6),
            [(ip, name, n) for name, n, ip in mailers],
            [],
            8080,
        ),
    )
    for app, image, port, cnt in (
        ("notify-api", "ghcr.io/kestrel-travel/notify-api:2.9.3", 8080, 2),
        ("push-sender", "ghcr.io/kestrel-travel/push-sender:1.6.0", 8080, 2),
        ("sms-sender", "ghcr.io/kestrel-travel/sms-sender:1.11.2", 8080, 2),
    ):
        tpl = pod_template(
            {"app": app},
            [
                container(
                    app,
                    image,
                    cpu_req="100m",
                    mem_req="128Mi",
                    mem_lim="256Mi",
                    port=port,
                    readiness=http_probe("/health/ready", port),
                )
            ],
        )
        d = deployment(app, "notifications", old, tpl, cnt, 12)
        h = {"notify-api": "5c7d8f9b6", "push-sender": "6d8b7c9f4", "sms-sender": "8f9c6d7b5"}[app]
        s.add(d, replicaset(d, h, now - td(days=4), 12, tpl, cnt))
        for i in range(cnt):
            s.add(
                pod(
                    f"{app}-{h}-{'abcdef'[i]}{app[:2]}{i}q",
                    "notifications",
                    now - td(days=4),
                    tpl,
                    nodes[i],
                    f"10.244.{i}.{60 + i + len(app)}",
                    "ReplicaSet",
                    f"{app}-{h}",
                )
            )
    rb_tpl = pod_template(
        {"app.kubernetes.io/name": "rabbitmq"},
        [
            container(
                "rabbitmq",
                "rabbitmq:3.13.7-management",
                cpu_req="1",
                mem_req="2Gi",
                mem_lim="4Gi",
                port=5672,
            )
        ],
    )
    s.add(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": meta(
                "rabbitmq", "messaging", old, {"app.kubernetes.io/name": "rabbitmq"}, generation=3
            ),
            "spec": {
                "replicas": 3,
                "serviceName": "rabbitmq-nodes",
                "selector": {"matchLabels": {"app.kubernetes.io/name": "rabbitmq"}},
                "template": rb_tpl,
            },
            "status": {
                "replicas": 3,
                "readyReplicas": 3,
                "currentReplicas": 3,
                "updatedReplicas": 3,
                "availableReplicas": 3,
                "observedGeneration": 3,
            },
        }
    )
    for i in range(3):
        s.add(
            pod(
                f"rabbitmq-{i}",
                "messaging",
                now - td(days=20),
                rb_tpl,
                nodes[i],
                f"10.244.{i}.90",
                "StatefulSet",
                "rabbitmq",
            )
        )
    s.add(
        event(
            "messaging",
            "Pod",
            "rabbitmq-1",
            "Unhealthy",
            "Readiness probe failed: dial tcp 10.244.1.90:5672: i/o timeout",
            now - td(minutes=57),
            now - td(minutes=57),
            type_="Warning",
            host=nodes[1],
            field_path="spec.containers{rabbitmq}",
        ),
        event(
            "notifications",
            "Pod",
            "push-sender-6d8b7c9f4-apu0q",
            "Pulled",
            'Container image "ghcr.io/kestrel-travel/push-sender:1.6.0" already present on machine',
            now - td(minutes=30),
            now - td(minutes=30),
            host=nodes[0],
            field_path="spec.containers{push-sender}",
        ),
    )

    # ---- metrics
    rng = random.Random(8)
    start = now - td(days=1, hours=3)

    def inflow(t: object) -> float:
        h = t.hour  # type: ignore[attr-defined]
        return 3.5 + (4 if 6 <= h <= 21 else 0) + rng.random()

    def delivered(t: object) -> float:
        return inflow(t) if t < block else 0.35 + 0.3 * rng.random()  # type: ignore[operator]

    depth = [0.0]

    def queue(t: object) -> float:
        if t < block:  # type: ignore[operator]
            return float(rng.randint(0, 40))
        depth[0] += (inflow(t) - 0.5) * 60
        return depth[0]

    s.metric(
        "rabbitmq_queue_messages_ready",
        "gauge",
        "Messages ready to be delivered to consumers",
        {"namespace": "messaging", "vhost": "/", "queue": "mail.outbound"},
        series(start, now, 60, queue),
    )
    s.metric(
        "rabbitmq_queue_messages_ready",
        "gauge",
        "Messages ready to be delivered to consumers",
        {"namespace": "messaging", "vhost": "/", "queue": "sms.outbound"},
        series(start, now, 60, lambda t: float(rng.randint(0, 15))),
    )
    s.metric(
        "rabbitmq_queue_consumers",
        "gauge",
        "Consumers on a queue",
        {"namespace": "messaging", "vhost": "/", "queue": "mail.outbound"},
        series(start, now, 60, lambda t: 3),
    )
    s.metric(
        "mailer_smtp_replies",
        "counter",
        "SMTP replies from the relay by reply code.",
        {"namespace": "notifications", "service": "mailer", "code": "250"},
        counter(start, now, 60, delivered, base=4_810_000),
    )
    s.metric(
        "mailer_smtp_replies",
        "counter",
        "SMTP replies from the relay by reply code.",
        {"namespace": "notifications", "service": "mailer", "code": "421"},
        counter(start, now, 60, lambda t: 0.0 if t < block else 9 + 3 * rng.random(), base=17),
    )
    for name, _n, _ip in mailers:
        s.metric(
            "container_cpu_usage_seconds",
            "counter",
            "Cumulative cpu time consumed in seconds.",
            {"namespace": "notifications", "pod": name, "container": "mailer"},
            counter(start, now, 60, lambda t: 0.05 + 0.03 * rng.random(), integer=False),
        )

    # ---- logs
    t = block - td(hours=1)
    while t < now:
        name, n, ip = rng.choice(mailers)
        mid = f"{rng.getrandbits(48):012x}"
        if t < block:
            s.doc(
                t,
                "Information",
                "mailer",
                "notifications",
                name,
                "mailer",
                f"Delivered message {mid} to {RELAY}: 250 2.0.0 Ok: queued as {rng.getrandbits(40):010X}",
                labels={
                    "template": rng.choice(["booking-confirmation", "password-reset", "receipt"])
                },
            )
        else:
            r = rng.random()
            if r < 0.8:
                s.doc(
                    t,
                    "Warning",
                    "mailer",
                    "notifications",
                    name,
                    "mailer",
                    f"SMTP delivery deferred for message {mid}: 421 4.7.0 Too many connections from your IP "
                    f"({EGRESS}), try again later. Requeued with delay 300s (attempt {rng.randint(1, 9)})",
                    labels={
                        "template": rng.choice(
                            ["booking-confirmation", "booking-confirmation", "receipt"]
                        )
                    },
                    error__type="SmtpCommandException",
                )
            elif r < 0.9:
                s.doc(
                    t,
                    "Information",
                    "mailer",
                    "notifications",
                    name,
                    "mailer",
                    f"Delivered message {mid} to {RELAY}: 250 2.0.0 Ok: queued as {rng.getrandbits(40):010X}",
                )
            else:
                s.doc(
                    t,
                    "Information",
                    "notify-api",
                    "notifications",
                    "notify-api-5c7d8f9b6-ano0q",
                    "notify-api",
                    "POST /v1/notifications 202 channel=email template=booking-confirmation",
                    http__response__status_code=202,
                )
        t += td(seconds=rng.uniform(1, 8))
    name = mailers[0][0]
    lines = []
    t = now - td(minutes=20)
    while t < now:
        if rng.random() < 0.85:
            lines.append(
                f"[{t:%H:%M:%S} WRN] Kestrel.Mailer.Smtp.RelaySender: SMTP delivery deferred for message "
                f"{rng.getrandbits(48):012x}: 421 4.7.0 Too many connections from your IP ({EGRESS}), try again "
                f"later. Requeued with delay 300s"
            )
        else:
            lines.append(
                f"[{t:%H:%M:%S} INF] Kestrel.Mailer.Smtp.RelaySender: Delivered message {rng.getrandbits(48):012x} "
                f"to {RELAY}: 250 2.0.0 Ok"
            )
        if rng.random() < 0.1:
            lines.append(
                f"[{t:%H:%M:%S} INF] Microsoft.AspNetCore.Hosting.Diagnostics: Request finished HTTP/1.1 GET "
                "http://10.244.0.21:8080/health/ready - 200 null text/plain 0.8411ms"
            )
        t += td(seconds=rng.randint(2, 12))
    s.pod_log("notifications", name, "mailer", lines)
    return s
