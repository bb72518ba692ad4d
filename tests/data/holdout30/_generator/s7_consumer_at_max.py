"""Shape 7: a campaign publishes faster than ten email-sender consumers can send; the HPA
sits at maxReplicas 10 while the queue backlog keeps growing. The consumers are healthy
and busy. Elsewhere a CronJob's Job failed (unrelated)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from .k8s import (
    MiB,
    PodState,
    Revision,
    container,
    deployment,
    hpa,
    http_probe,
    namespace,
    node,
)
from .kit import World, iso, iso_ms, parse
from .signals import bystander, daily, ramp, revision_metrics, timeline

QUEUE = "email.outbound"
PER_POD = 24.0          # messages a consumer sends per second (SMTP relay sessions)


def build() -> World:
    now = parse("2026-11-29T11:15:00Z")
    campaign = now - timedelta(hours=2, minutes=15)
    w = World(
        "emails-arriving-late",
        "Password-reset emails arriving 30+ minutes late",
        now,
        "customers say password reset and order confirmation emails arrive 30-60 min late. "
        "email-sender pods look fine, no errors in the logs. rabbit isn't down either. "
        "did the smtp relay start throttling us?",
        {"category": "autoscaling_limit",
         "culprit": {"kind": "Deployment", "namespace": "notifications", "name": "email-sender"},
         "evidence": ["ScalingLimited", "TooManyReplicas", "rabbitmq_queue_messages_ready",
                      "current 10", "max 10"],
         "fix": "Raise email-sender's HPA maxReplicas (the relay allows more sessions) or "
                "throttle the campaign publisher / give transactional mail its own queue: ten "
                "consumers send ~240 msg/s while ~265 msg/s are published."},
        seed=3007,
    )
    long_ago = parse("2024-11-18T09:00:00Z")
    for ns in ("notifications", "crm"):
        namespace(w, ns, long_ago)
    nodes = [f"gke-prod-default-7c1e{k}" for k in ("-b2qz", "-f8lm", "-k3vn", "-p6tw", "-x1dr")]
    for i, name in enumerate(nodes):
        node(w, name, now - timedelta(days=5, hours=3 * i), zone=f"us-east1-{'bcd'[i % 3]}",
             cpu="8", memory="32Gi", allocatable_memory="29600Mi")

    # email-sender: two long-running pods, eight added by the HPA after the campaign began.
    started = now - timedelta(days=3, hours=6)
    scale_times = [campaign + timedelta(minutes=m) for m in (4, 4, 9, 9, 9, 9, 16, 16)]
    pods = [PodState(node=nodes[i], created=started + timedelta(seconds=40 * i))
            for i in range(2)]
    pods += [PodState(node=nodes[(i + 2) % 5], created=t + timedelta(seconds=3 * i))
             for i, t in enumerate(scale_times)]
    rev = Revision(12, started, [container(
        "email-sender", "us-docker.pkg.dev/acme-comms/notifications/email-sender:1.27.0",
        port=9102, port_name="metrics", cpu="1", memory="512Mi",
        env=[{"name": "AMQP_QUEUE", "value": QUEUE}, {"name": "PREFETCH", "value": "100"},
             {"name": "SMTP_RELAY", "value": "smtp-relay.acme-comms.example:587"},
             {"name": "SMTP_SESSIONS", "value": "8"}],
        liveness=http_probe("/healthz", 9102, delay=10))], pods=pods)
    deployment(w, "notifications", "email-sender", long_ago, [rev], replicas=10,
               team="comms")
    at_max = scale_times[-1]
    ready_msgs = _backlog(campaign, now)
    hpa(w, "notifications", "email-sender", long_ago, target="email-sender", minimum=2,
        maximum=10, current=10, desired=10,
        metrics=[_queue_metric(QUEUE, "500")],
        current_metrics=[{"type": "External", "external": {
            "metric": {"name": "rabbitmq_queue_messages_ready",
                       "selector": {"matchLabels": {"queue": QUEUE}}},
            "current": {"averageValue": str(int(ready_msgs(now) / 10))}}}],
        last_scale=at_max,
        conditions=[("AbleToScale", "True", "ReadyForNewScale",
                     "recommended size matches current size"),
                    ("ScalingActive", "True", "ValidMetricFound",
                     "the HPA was able to successfully calculate a replica count from external "
                     "metric rabbitmq_queue_messages_ready(&LabelSelector{MatchLabels:map[string]"
                     "string{queue: email.outbound,},MatchExpressions:[]LabelSelectorRequirement"
                     "{},})"),
                    ("ScalingLimited", "True", "TooManyReplicas",
                     "the desired replica count is more than the maximum replica count")])

    def live(t: datetime) -> int:
        return 2 + sum(1 for m in scale_times if m <= t)
    revision_metrics(w, "notifications", "email-sender", [rev],
                     memory=lambda t: 210 * MiB, memory_limit=512 * MiB,
                     cpu=lambda t: 0.035 * min(PER_POD, _published(campaign, t) / live(t)))
    for pod_name, state in zip(rev.pod_names, rev.pods, strict=True):
        times = w.steps(start=max(state.created, now - timedelta(hours=3)))
        w.counter("email_sender_messages_sent_total", {"namespace": "notifications",
                  "pod": pod_name, "queue": QUEUE}, times,
                  lambda t: min(PER_POD, _published(campaign, t) / live(t)) * w.rng.uniform(
                      0.95, 1.05))
        w.counter("email_sender_messages_failed_total", {"namespace": "notifications",
                  "pod": pod_name, "queue": QUEUE}, times, lambda t: 0.004)
    for moment in timeline(w, now - timedelta(hours=3), 14):
        candidates = [n for n, s in zip(rev.pod_names, rev.pods, strict=True)
                      if s.created < moment]
        pod = w.rng.choice(candidates)
        lag = max(0.0, ready_msgs(moment) / 240 / 60)
        w.log(moment, "notifications", pod, "email-sender", "email-sender", "info",
              f"sent batch of 100 via smtp-relay in {w.rng.uniform(3.9, 4.4):.1f}s "
              f"(8 sessions busy, oldest message {lag:.0f}m old)")
    for moment in timeline(w, now - timedelta(hours=3), 900):
        w.log(moment, "notifications", w.rng.choice(rev.pod_names[:2]), "email-sender",
              "email-sender", "warn", "smtp-relay answered 421 4.7.0 Try again later for 1 "
              "message, requeued")
    for pod_name, state in zip(rev.pod_names, rev.pods, strict=True):
        boot = state.created + timedelta(seconds=6)
        w.pod_log("notifications", pod_name, "email-sender", [
            f"{iso_ms(boot)} INFO  email-sender 1.27.0 consuming {QUEUE} (prefetch 100, 8 SMTP "
            "sessions)",
            *(f"{iso_ms(m)} INFO  sent batch of 100 via smtp-relay in "
              f"{w.rng.uniform(3.9, 4.4):.1f}s (8 sessions busy)"
              for m in timeline(w, max(boot, now - timedelta(minutes=20)), 40))])

    # The broker is managed (outside the cluster); its exporter runs here.
    exporter = bystander(w, "notifications", "rabbitmq-exporter", replicas=1, nodes=nodes[:1],
                         image="docker.io/kbudde/rabbitmq-exporter:1.0.0", created=long_ago,
                         rev_created=now - timedelta(days=6), memory_mib=35,
                         memory_limit="128Mi", cpu_cores=0.01, rps=0, median_s=0.01,
                         port=9419, team="comms")
    exp_pod = exporter.pod_names[0]
    times = w.steps()
    base = {"namespace": "notifications", "pod": exp_pod, "vhost": "/",
            "cluster": "rabbit@b-4f1c.mq.us-east-1.amazonaws.com"}
    for queue, ready, published in (
            (QUEUE, ready_msgs, lambda t: _published(campaign, t)),
            ("push.outbound", lambda t: 40 + 25 * w.rng.random(), lambda t: 55 * daily(t)),
            ("sms.outbound", lambda t: 3 + 4 * w.rng.random(), lambda t: 4 * daily(t))):
        w.gauge("rabbitmq_queue_messages_ready", {**base, "queue": queue}, times,
                lambda t, f=ready: round(f(t)))
        w.counter("rabbitmq_queue_messages_published_total", {**base, "queue": queue}, times,
                  published)
        w.gauge("rabbitmq_queue_consumers", {**base, "queue": queue}, times,
                lambda t, q=queue: float(live(t)) if q == QUEUE else 3.0)

    bystander(w, "notifications", "push-sender", replicas=3, nodes=nodes[2:],
                     image="us-docker.pkg.dev/acme-comms/notifications/push-sender:2.2.3",
                     created=long_ago, rev_created=now - timedelta(days=4, hours=2),
                     memory_mib=160, memory_limit="256Mi", cpu_cores=0.2, rps=0, median_s=0.01,
                     port=9102, team="comms",
                     messages=[("delivered {n} push notifications via FCM", "info")])
    hpa(w, "notifications", "push-sender", long_ago, target="push-sender", minimum=3,
        maximum=10, current=3, desired=3, metrics=[_queue_metric("push.outbound", "200")],
        current_metrics=[{"type": "External", "external": {
            "metric": {"name": "rabbitmq_queue_messages_ready",
                       "selector": {"matchLabels": {"queue": "push.outbound"}}},
            "current": {"averageValue": "17"}}}], last_scale=now - timedelta(days=1),
        conditions=[("AbleToScale", "True", "ReadyForNewScale",
                     "recommended size matches current size"),
                    ("ScalingLimited", "True", "TooFewReplicas",
                     "the desired replica count is less than the minimum replica count")])
    campaign_pub = bystander(w, "notifications", "campaign-dispatcher", replicas=1,
                             nodes=nodes[4:], image="us-docker.pkg.dev/acme-comms/"
                             "notifications/campaign-dispatcher:0.14.2", created=long_ago,
                             rev_created=now - timedelta(days=2), memory_mib=300,
                             memory_limit="1Gi", cpu_cores=0.05, rps=0, median_s=0.01,
                             team="crm-growth")
    for moment in timeline(w, campaign, 300):
        sent = int((moment - campaign).total_seconds() * 262)
        w.log(moment, "notifications", campaign_pub.pod_names[0], "campaign-dispatcher",
              "campaign-dispatcher", "info",
              f"campaign black-friday-weekend-2: published {sent}/2140000 messages to {QUEUE}")

    _failed_cronjob(w, now, long_ago)
    return w


def _queue_metric(queue: str, per_pod: str) -> dict[str, object]:
    return {"type": "External", "external": {
        "metric": {"name": "rabbitmq_queue_messages_ready",
                   "selector": {"matchLabels": {"queue": queue}}},
        "target": {"type": "AverageValue", "averageValue": per_pod}}}


def _published(campaign: datetime, t: datetime) -> float:
    """Messages published per second: transactional mail, plus the campaign."""
    return 38 * daily(t) + (227.0 * ramp(campaign, 2)(t))


def _backlog(campaign: datetime, now: datetime) -> Callable[[datetime], float]:
    """Messages waiting: published minus what the consumers of the moment can send."""
    scale = [campaign + timedelta(minutes=m) for m in (4, 4, 9, 9, 9, 9, 16, 16)]
    table: list[tuple[datetime, float]] = []
    ready, moment = 120.0, now - timedelta(hours=3, minutes=5)
    while moment <= now + timedelta(minutes=1):
        consumers = 2 + sum(1 for m in scale if m <= moment)
        ready = max(60.0, ready + 60 * (_published(campaign, moment) - PER_POD * consumers))
        table.append((moment, ready))
        moment += timedelta(seconds=60)

    def at(t: datetime) -> float:
        value = table[0][1]
        for moment, level in table:
            if moment > t:
                break
            value = level
        return value
    return at


def _failed_cronjob(w: World, now: datetime, long_ago: datetime) -> None:
    """crm's nightly export failed this morning: a Warning with nothing to do with mail."""
    job_name = "crm-contacts-export-29410935"
    w.add({"apiVersion": "batch/v1", "kind": "CronJob",
           "metadata": {"name": "crm-contacts-export", "namespace": "crm",
                        "creationTimestamp": iso(long_ago)},
           "spec": {"schedule": "15 10 * * *", "concurrencyPolicy": "Forbid",
                    "jobTemplate": {"spec": {"backoffLimit": 2, "template": {"spec": {
                        "restartPolicy": "Never", "containers": [{
                            "name": "export", "image": "us-docker.pkg.dev/acme-comms/crm/"
                            "contacts-export:3.1.0"}]}}}}},
           "status": {"lastScheduleTime": iso(now - timedelta(hours=1))}})
    w.add({"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": job_name, "namespace": "crm",
                        "creationTimestamp": iso(now - timedelta(hours=1)),
                        "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob",
                                             "name": "crm-contacts-export", "controller": True}]},
           "spec": {"backoffLimit": 2, "template": {"spec": {"restartPolicy": "Never",
                    "containers": [{"name": "export", "image": "us-docker.pkg.dev/acme-comms/"
                                    "crm/contacts-export:3.1.0"}]}}},
           "status": {"failed": 3, "startTime": iso(now - timedelta(hours=1)),
                      "conditions": [{"type": "Failed", "status": "True",
                                      "reason": "BackoffLimitExceeded",
                                      "message": "Job has reached the specified backoff limit",
                                      "lastTransitionTime": iso(now - timedelta(minutes=52))}]}})
    w.event("crm", "Job", job_name, "BackoffLimitExceeded",
            "Job has reached the specified backoff limit", first=now - timedelta(minutes=52),
            type_="Warning", component="job-controller")
