"""Game studio: ranked queue times climb on the evening the new season goes live. Ticket
traffic to the matchmaking service match-broker rises fivefold from 18:00; its autoscaler
scaled it from 4 to 12 replicas by 18:13 and sits at its maximum of 12 (ScalingLimited,
TooManyReplicas) with CPU at 84% of requests against a 65% target: it would need 16. The
twelve pods are saturated, so tickets wait and match requests queue. There is no CPU limit
(no throttling) and the nodes have room. Red herrings: party-service 4.9.0 rolled out in the
same namespace 40 minutes before the launch (the report suspects it), anti-cheat ban lines in
match-broker's log, an old OOM restart of the leaderboard, noisy chat-gateway warnings and a
store-catalog readiness blip."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from tests.scenario_tools.common import (
    MIB,
    Story,
    const,
    container_metrics,
    deployment_metrics,
    http_metrics,
    kube_system,
    namespaces,
    nodes,
    noise_logs,
    simple_deployment,
    truth,
)
from tests.scenario_tools.kube import Ctr, Obj, Template, ended, http_probe, running
from tests.scenario_tools.parts import hpa, neighbour, readiness_blip, rollout, scale_out

from .kit import between, ship

ID = "ranked-queue-times-climbing"
NOW = datetime(2027, 5, 21, 19, 12, tzinfo=UTC)
NS = "matchmaking"
REG = "europe-west4-docker.pkg.dev/emberfall-prod/games"
LAUNCH = NOW - timedelta(minutes=72)


def demand(t: int) -> float:
    """Match tickets per second over all regions: a fivefold climb after the launch."""
    x = (t - LAUNCH.timestamp()) / 60
    if x <= 3:
        return 118.0
    return 118.0 + 532.0 * (1 - math.exp(-(x - 3) / 14))


def build() -> Story:
    s = Story(ID, "Ranked queue times climbing after the season launch", NOW, """\
Season 9 went live at 18:00 and ranked queue times are terrible: players in EU report 3-5
minutes to find a match instead of the usual ~40s, and the "Find match" button sometimes
errors out. Social media is blowing up. party-service was deployed right before launch, could
that be it? Casual queues seem a bit slow too.
""", truth("autoscaling_limit", "Deployment", NS, "match-broker",
           ["ScalingLimited", "TooManyReplicas", "maxReplicas: 12",
            "the desired replica count is more than the maximum replica count"],
           "match-broker's HorizontalPodAutoscaler is at its maximum of 12 replicas while the "
           "season-launch load keeps CPU at 84% of requests (target 65%): raise maxReplicas "
           "to at least 18 (the nodes have room) and review the launch-day capacity plan."),
              hours=2.5)
    c = s.cluster
    namespaces(s, NS, "ranked-stats", "social", "store")
    node_list = nodes(s, 5, subnet=61, region="europe-west4", instance="c6i.4xlarge",
                      cpu="16", memory="32Gi", allocatable_cpu="15890m",
                      allocatable_memory="29876Mi", days=4.2)
    kube_system(s, node_list)

    ctr = Ctr("match-broker", f"{REG}/match-broker:2.31.4", port=7070,
              requests={"cpu": "1", "memory": "1Gi"}, limits={"memory": "2Gi"},
              env={"REGIONS": "eu-west,eu-central,eu-north", "WORKERS": "32",
                   "TICKET_STORE": "redis://tickets-redis.matchmaking.svc:6379"},
              readiness=http_probe("/ready", delay=5), liveness=http_probe("/live", delay=20,
                                                                           period=15))
    work, base_pods = simple_deployment(s, NS, "match-broker", "", replicas=4,
                                        node_list=node_list, revision=44,
                                        rollout=s.ago(days=2, hours=21),
                                        template=Template([ctr], service_account="match-broker"))
    steps = [(LAUNCH + timedelta(minutes=4, seconds=15), 6),
             (LAUNCH + timedelta(minutes=8, seconds=30), 9),
             (LAUNCH + timedelta(minutes=13, seconds=5), 12)]
    times, have = [], 4
    for when, size in steps:
        times += [when + timedelta(seconds=2 + 3 * k) for k in range(size - have)]
        have = size
    added = scale_out(s, work, node_list, times)
    rs = work.revisions[-1]
    hpa_obj = hpa(s, work, minimum=4, maximum=12, current=12, desired=12, utilization=84,
                  target=65, scaled=steps[-1][0])
    last, prev = steps[-1][0], steps[-2][1]
    c.event(hpa_obj, "SuccessfulRescale", "New size: 12; reason: cpu resource utilization "
            "(percentage of request) above target", first=last,
            component="horizontal-pod-autoscaler")
    c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set {rs['metadata']['name']} "
            f"from {prev} to 12", first=last + timedelta(seconds=1),
            component="deployment-controller")
    for pod in added:
        created = datetime.fromisoformat(pod["metadata"]["creationTimestamp"]
                                         .replace("Z", "+00:00"))
        if created >= NOW - timedelta(hours=1):
            _started(s, pod, created)
    pods = [*base_pods, *added]
    born = {p["metadata"]["name"]: datetime.fromisoformat(
        p["metadata"]["creationTimestamp"].replace("Z", "+00:00")).timestamp() + 12
        for p in pods}

    def count(t: int) -> int:
        return sum(1 for b in born.values() if b <= t)

    def per_pod(t: int) -> float:
        return demand(t) / max(count(t), 1)

    def busy(t: int) -> float:  # cores one pod burns; 32 workers top out near 0.9 core
        return min(0.016 * per_pod(t), 0.9) * 0.97

    def median(t: int) -> float:
        load = per_pod(t) / 46.0
        return 0.07 if load < 0.8 else 0.07 + 1.6 * (load - 0.8) ** 1.6

    def shed(t: int) -> float:
        load = per_pod(t) / 46.0
        return 0.0005 if load < 1.0 else 0.0005 + min(0.05, (load - 1.0) * 0.3)

    for pod in pods:
        container_metrics(s, pod, "match-broker", memory=lambda t: (690 + 0.9 * per_pod(t))
                          * MIB, cpu=busy, limit_memory=2048 * MIB)
        http_metrics(s, "match-broker", pod, rps=per_pod,
                     codes={"200": lambda t: 0.999 - shed(t), "429": shed,
                            "409": const(0.001)}, median=median, histogram=True)
    deployment_metrics(s, work, available=lambda t: float(count(t)),
                       spec=lambda t: float(4 if t < steps[0][0].timestamp() else
                                            max(n for w, n in steps if w.timestamp() <= t)))
    _hpa_metrics(s, steps, count, busy)
    _queue_metrics(s, per_pod)
    _broker_logs(s, pods, per_pod, born)
    _herrings(s, node_list)
    return s


def _started(s: Story, pod: Obj, created: datetime) -> None:
    c = s.cluster
    name, node = pod["metadata"]["name"], pod["spec"]["nodeName"]
    c.event(pod, "Scheduled", f"Successfully assigned {NS}/{name} to {node}", first=created,
            component="default-scheduler", host="")
    field = "spec.containers{match-broker}"
    c.event(pod, "Pulled", f'Container image "{REG}/match-broker:2.31.4" already present on '
            "machine", first=created + timedelta(seconds=2), field_path=field)
    c.event(pod, "Created", "Created container: match-broker",
            first=created + timedelta(seconds=2), field_path=field)
    c.event(pod, "Started", "Started container match-broker",
            first=created + timedelta(seconds=3), field_path=field)


def _hpa_metrics(s: Story, steps: list, count, busy) -> None:
    labels = {"namespace": NS, "horizontalpodautoscaler": "match-broker"}

    def current(t: int) -> float:
        return float(4 if t < steps[0][0].timestamp() else
                     max(n for w, n in steps if w.timestamp() <= t))

    def desired(t: int) -> float:
        want = math.ceil(current(t) * busy(t) / 0.65)
        return float(min(12, max(4, want)))

    m = s.metrics
    m.gauge("kube_horizontalpodautoscaler_spec_max_replicas", labels,
            [(t, 12.0) for t in s.times], "Upper limit for the number of pods that can be set "
            "by the autoscaler; cannot be smaller than MinReplicas.")
    m.gauge("kube_horizontalpodautoscaler_spec_min_replicas", labels,
            [(t, 4.0) for t in s.times], "Lower limit for the number of pods that can be set "
            "by the autoscaler, default 1.")
    m.gauge("kube_horizontalpodautoscaler_status_current_replicas", labels,
            [(t, current(t)) for t in s.times], "Current number of replicas of pods managed "
            "by this autoscaler.")
    m.gauge("kube_horizontalpodautoscaler_status_desired_replicas", labels,
            [(t, desired(t)) for t in s.times], "Desired number of replicas of pods managed "
            "by this autoscaler.")
    m.gauge("kube_horizontalpodautoscaler_status_condition",
            {**labels, "condition": "ScalingLimited", "status": "true"},
            [(t, 1.0 if busy(t) / 0.65 * current(t) > 12 else 0.0) for t in s.times],
            "The condition of this autoscaler.")


def _queue_metrics(s: Story, per_pod) -> None:
    for region, share in (("eu-west", 0.46), ("eu-central", 0.38), ("eu-north", 0.16)):
        def waiting(t: int, k: float = share) -> float:
            over = max(0.0, per_pod(t) / 46.0 - 0.95)
            return round(k * (260 + 52_000 * over))
        s.metrics.gauge("matchmaker_tickets_waiting", {"namespace": NS, "queue": "ranked",
                                                       "region": region},
                        [(t, waiting(t)) for t in s.times],
                        "Match tickets waiting for a match.")


def _broker_logs(s: Story, pods: list[Obj], per_pod, born: dict[str, float]) -> None:
    calm = [("info", "match formed queue=ranked-5v5 region=eu-west avg_mmr=1840 wait_s=31", {}),
            ("info", "match formed queue=casual-5v5 region=eu-central wait_s=12", {}),
            ("info", "match formed queue=ranked-5v5 region=eu-north avg_mmr=2210 wait_s=44", {}),
            ("error", "anti-cheat verdict BANNED for player 7731902 (ticket tk-88f1c2), "
             "ticket removed from queue", {"event.action": "ticket-removed"})]
    busy = [("warn", "worker pool busy 32/32, deferring ticket batch of 64", {}),
            ("warn", "ticket tk-1f93ab waited 212s queue=ranked-5v5 region=eu-west "
             "(target p95 45s)", {}),
            ("warn", "POST /v1/tickets 429 Too Many Requests: admission queue full",
             {"http.response.status_code": 429}),
            ("info", "match formed queue=ranked-5v5 region=eu-west avg_mmr=1790 wait_s=187",
             {}),
            ("error", "anti-cheat verdict BANNED for player 5510488 (ticket tk-0c7de1), "
             "ticket removed from queue", {"event.action": "ticket-removed"})]
    hot = LAUNCH + timedelta(minutes=24)
    for pod in pods:
        start = datetime.fromtimestamp(born[pod["metadata"]["name"]], UTC)
        if start < hot:
            noise_logs(s, pod, "match-broker", "match-broker", calm, 14,
                       start=max(start, s.ago(hours=2.5)), end=hot)
        noise_logs(s, pod, "match-broker", "match-broker", busy, 26, start=max(start, hot))


def _herrings(s: Story, node_list: list[Obj]) -> None:
    at = LAUNCH - timedelta(minutes=40, seconds=25)
    roll = rollout(s, NS, "party-service", lambda v: Ctr(
        "party-service", f"{REG}/party-service:{v}", port=8080,
        requests={"cpu": "300m", "memory": "384Mi"}, limits={"memory": "512Mi"},
        readiness=http_probe("/ready")), old="4.8.2", new="4.9.0", at=at, revision=63,
        replicas=3, node_list=node_list)
    for pod in roll.new_pods:
        container_metrics(s, pod, "party-service", memory=const(236 * MIB), cpu=const(0.12))
        http_metrics(s, "party-service", pod, rps=lambda t: 21.0 + demand(t) * 0.04,
                     codes={"200": const(0.997), "404": const(0.003)}, median=const(0.03))
        noise_logs(s, pod, "party-service", "party-service", [
            ("info", "party p-55102 created leader=4410721 size=1", {}),
            ("info", "invite accepted party=p-55098 member=9912004", {}),
            ("warn", "invite to player 2210331 expired after 60s", {}),
            ("info", "party p-55064 entered queue ranked-5v5 size=3", {})], 40,
            start=at + timedelta(minutes=1))
    neighbour(s, "ranked-stats", "leaderboard", f"{REG}/leaderboard:1.12.0", node_list,
              replicas=2, memory_mib=1300, revision=18,
              restarts={1: running(s.ago(days=2, hours=9), restarts=1, last=ended(
                  "OOMKilled", 137, s.ago(days=4, hours=2), s.ago(days=2, hours=9,
                                                                  seconds=9)))})
    _, chats = neighbour(s, "social", "chat-gateway", f"{REG}/chat-gateway:3.3.7", node_list,
                         replicas=3, memory_mib=520, revision=91)
    for when in between(s, s.ago(hours=2, minutes=20), NOW, 45):
        pod = s.rng.choice(chats)
        msg = s.rng.choice(["websocket close 1006 from client 10.61.3.12: abnormal closure",
                            "client sent malformed frame (opcode 0x3), dropping connection",
                            "rate limit: player 3310287 exceeded 12 msg/5s in channel "
                            "global-eu"])
        ship(s, pod, "chat-gateway", when, "warn", msg)
    readiness_blip(s, "store", "store-catalog", f"{REG}/store-catalog:7.0.2", node_list,
                   port=8080, path="/healthz", minutes_ago=33)
