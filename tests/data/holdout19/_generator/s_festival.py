"""Festival ticketing: the seat picker crawls after the on-sale opened at 09:00. The
HorizontalPodAutoscaler of boxoffice/seat-reservation went 3 -> 6 -> 8 within three minutes
and has sat at its maxReplicas of 8 since 09:03 (ScalingLimited, TooManyReplicas) while CPU
utilisation stays near 170% of the request against a 65% target; latency climbs and the
reservation queue sheds load with 503. The nodes have room: only the autoscaler's ceiling
holds it. Red herrings: checkout 12.4.0 rolled out 45 minutes before the on-sale, the payment
provider's few normal timeouts in checkout, an old OOM restart of ticket-mailer, and a
readiness blip of promo-codes."""

from __future__ import annotations

from datetime import datetime, timedelta

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
    truth,
)
from tests.scenario_tools.kube import Ctr, ended, http_probe, running
from tests.scenario_tools.parts import (
    _pod_start_events,
    app,
    hpa,
    neighbour,
    readiness_blip,
    rollout,
    scale_out,
)
from tests.scenario_tools.telemetry import spread

from .kit19 import lines

ID = "festival-seat-picker-crawling"
NOW = datetime.fromisoformat("2027-06-04T07:38:00+00:00")
REG = "ghcr.io/pulsotickets"
NS = "boxoffice"


def build() -> Story:
    s = Story(
        id=ID, title="Seat picker slow during the festival on-sale", now=NOW,
        report="""\
Sonar Norte tickets went on sale at 09:00 CEST and the seat picker has been spinning
since a few minutes after. Some fans get "very high demand, please retry". Queue page and
login are OK. The payment provider had a status page incident this morning, maybe that?
Checkout was also deployed earlier today.
""",
        truth=truth(
            "autoscaling_limit", "Deployment", NS, "seat-reservation",
            ["TooManyReplicas", "the desired replica count is more than the maximum replica "
             "count", "maxReplicas", "503"],
            "The on-sale raised seat-reservation's load about fivefold; its HPA scaled 3 -> 8 "
            "by 07:03 UTC and has been pinned at maxReplicas 8 since, with CPU at ~170% of "
            "the request against a 65% target, so requests queue and the reservation queue "
            "sheds load with 503. The nodes have spare capacity. Raise maxReplicas (e.g. 20) "
            "and pre-scale before the next on-sale."))
    c = s.cluster
    namespaces(s, NS, "payments-edge")
    pool = nodes(s, 6, subnet=52, region="eu-west-3", instance="c7i.2xlarge", days=3.2,
                 cpu="8", memory="16Gi", allocatable_cpu="7910m",
                 allocatable_memory="14900Mi")
    kube_system(s, pool)
    sale = NOW - timedelta(minutes=38)
    grow1 = sale + timedelta(minutes=1, seconds=34)
    grow2 = sale + timedelta(minutes=3, seconds=6)

    def load(t: int) -> float:  # requests per second over all pods
        if t < sale.timestamp():
            return 24.0
        ramp = min(1.0, (t - sale.timestamp()) / 240)
        return 24.0 + 290.0 * ramp

    def pods_at(t: int) -> int:
        return 3 if t < grow1.timestamp() + 20 else (6 if t < grow2.timestamp() + 20 else 8)

    def per_pod(t: int) -> float:
        return load(t) / pods_at(t)

    def cpu(t: int) -> float:  # cores per pod: 27 ms of CPU per request, tops at 0.87
        return min(0.87, 0.03 + per_pod(t) * 0.027)

    def util(t: int) -> float:
        return cpu(t) / 0.5

    def median(t: int) -> float:
        over = max(0.0, util(t) - 1.2)
        return 0.085 + over * 2.6

    def shed(t: int) -> float:
        return 0.0 if util(t) < 1.6 else 0.11

    work, first = app(
        s, NS, "seat-reservation", f"{REG}/seat-reservation:3.7.2", pool, replicas=3,
        revision=41, rps=lambda t: per_pod(t) * 3,
        codes={"200": lambda t: 0.985 - shed(t), "409": const(0.015), "503": shed},
        median=median, cpu=cpu, memory_mib=540,
        requests={"cpu": "500m", "memory": "768Mi"}, limits={"memory": "1Gi"},
        env={"HOLD_SECONDS": "480", "QUEUE_MAX_DEPTH": "400", "WORKERS": "8"},
        rollout_at=s.ago(days=2, hours=4))
    born = [grow1 + timedelta(seconds=1 + 2 * i) for i in range(3)] + \
        [grow2 + timedelta(seconds=1 + 2 * i) for i in range(2)]
    more = scale_out(s, work, pool[3:] + pool[:3], born)
    rs_name = work.revisions[-1]["metadata"]["name"]
    for pod in more:
        _pod_start_events(s, pod)
        c.event(work.revisions[-1], "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}",
                first=datetime.fromisoformat(pod["metadata"]["creationTimestamp"].replace(
                    "Z", "+00:00")), component="replicaset-controller", host="")
        container_metrics(s, pod, "seat-reservation",
                          memory=lambda t: 505 * MIB * s.rng.uniform(0.97, 1.03),
                          cpu=lambda t: cpu(t) * s.rng.uniform(0.95, 1.05),
                          limit_memory=1024 * MIB)
        http_metrics(s, "seat-reservation", pod, rps=per_pod,
                     codes={"200": lambda t: 0.985 - shed(t), "409": const(0.015),
                            "503": shed}, median=median, histogram=True)
    c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set {rs_name} from 3 to 6",
            first=grow1, component="deployment-controller", host="")
    c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set {rs_name} from 6 to 8",
            first=grow2, component="deployment-controller", host="")
    scaler = hpa(s, work, minimum=3, maximum=8, current=8, desired=8, utilization=171,
                 target=65, scaled=grow2)
    c.event(scaler, "SuccessfulRescale", "New size: 6; reason: cpu resource utilization "
            "(percentage of request) above target", first=grow1,
            component="horizontal-pod-autoscaler", host="")
    c.event(scaler, "SuccessfulRescale", "New size: 8; reason: cpu resource utilization "
            "(percentage of request) above target", first=grow2,
            component="horizontal-pod-autoscaler", host="")
    deployment_metrics(s, work, available=lambda t: float(pods_at(t)),
                       spec=lambda t: float(pods_at(t)))
    hl = {"namespace": NS, "horizontalpodautoscaler": "seat-reservation"}
    s.metrics.gauge("kube_horizontalpodautoscaler_spec_max_replicas", hl,
                    [(t, 8.0) for t in s.times], "Upper limit for the number of pods that can "
                    "be set by the autoscaler.")
    s.metrics.gauge("kube_horizontalpodautoscaler_spec_min_replicas", hl,
                    [(t, 3.0) for t in s.times], "Lower limit for the number of pods that can "
                    "be set by the autoscaler.")
    s.metrics.gauge("kube_horizontalpodautoscaler_status_current_replicas", hl,
                    [(t, float(pods_at(t))) for t in s.times],
                    "Current number of replicas of pods managed by this autoscaler.")
    s.metrics.gauge("kube_horizontalpodautoscaler_status_desired_replicas", hl,
                    [(t, float(pods_at(t))) for t in s.times],
                    "Desired number of replicas of pods managed by this autoscaler.")
    everyone = first + more
    for when in spread(s.rng, sale + timedelta(minutes=5), NOW - timedelta(seconds=15), 110):
        pod = s.rng.choice(everyone)
        depth = s.rng.randrange(360, 401)
        msg, level, code = (
            (f"reservation queue full ({depth}/400), rejecting hold request with 503", "warn",
             503) if depth > 396 else
            (f"hold SEC-{s.rng.randrange(100, 140)}-ROW-{s.rng.randrange(1, 40)} granted after "
             f"{s.rng.uniform(1.4, 4.8):.1f}s in queue (depth {depth})", "info", 200))
        s.logs.add(when, level, msg, namespace=NS, pod=pod["metadata"]["name"],
                   container="seat-reservation", service="seat-reservation",
                   node=pod["spec"]["nodeName"], http__response__status_code=code,
                   event__dataset="seat-reservation.app")
    lines(s, first, "seat-reservation", "seat-reservation", [
        ("info", "hold SEC-112-ROW-7 released after 480s (not paid)", {}),
        ("info", "seat map sonar-norte-2027 cached (41812 seats)", {}),
    ], 40, end=sale)

    # ---- red herring: checkout rolled out 45 minutes before the on-sale
    def checkout(version: str) -> Ctr:
        return Ctr("checkout", f"{REG}/checkout:{version}", port=8080,
                   requests={"cpu": "250m", "memory": "512Mi"}, limits={"memory": "768Mi"},
                   readiness=http_probe("/ready"),
                   liveness=http_probe("/healthz", delay=15, period=20))
    roll = rollout(s, NS, "checkout", checkout, old="12.3.4", new="12.4.0",
                   at=sale - timedelta(minutes=45), revision=88, replicas=3, node_list=pool)
    for pod in roll.new_pods:
        http_metrics(s, "checkout", pod, rps=lambda t: 3.5 if t > sale.timestamp() else 0.6,
                     codes={"200": const(0.991), "402": const(0.006), "504": const(0.003)},
                     median=const(0.42))
    lines(s, roll.new_pods, "checkout", "checkout", [
        ("info", "checkout 12.4.0 ready (apple-pay express enabled)", {}),
        ("warn", "payment provider timeout after 10s on /v1/payment_intents, retrying "
         "(attempt 1/3)", {"error.type": "ReadTimeout"}),
        ("info", "order ORD-4A7XK2 paid, 2 tickets issued", {}),
        ("info", "order ORD-4A7XQ9 paid, 4 tickets issued", {}),
        ("error", "payment declined by issuer: insufficient_funds (order ORD-4A81B3)",
         {"http.response.status_code": 402}),
    ], 120, start=sale - timedelta(minutes=44))

    # ---- red herrings: an old OOM restart, a readiness blip elsewhere
    oom_at = s.ago(days=3, hours=1)
    neighbour(s, NS, "ticket-mailer", f"{REG}/ticket-mailer:2.0.9", pool, replicas=2,
              memory_mib=290, restarts={1: running(oom_at + timedelta(seconds=14), restarts=1,
                                                   last=ended("OOMKilled", 137, oom_at
                                                              - timedelta(hours=20), oom_at))},
              logs=[("info", "sent e-ticket bundle for ORD-4A7XK2 (2 PDFs)", {}),
                    ("warn", "wallet pass signing took 1.8s", {})], n_logs=40)
    readiness_blip(s, "payments-edge", "promo-codes", f"{REG}/promo-codes:1.4.1", pool,
                   minutes_ago=31)
    return s
