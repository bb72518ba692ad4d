"""Cinema chain: snack pre-orders in the app slow and failing since the evening shows
started. At 18:22 the HPA of snack-orders scaled it from 3 to 7 for the evening peak; the
four new pods landed on nodes that never ran snack-orders, so their kubelets must pull
snack-orders:3.14.2 from the chain's Harbor registry, and the robot account in the pull
secret harbor-robot-concessions expired: "401 Unauthorized", ErrImagePull then
ImagePullBackOff. The three old pods (image cached since the rollout three days ago) carry
the whole peak: queueing, slow orders and some 503s. Red herrings: the HPA itself (below its
maximum, working as designed), menu-board 6.0.1 rolled out 40 min before the onset in the
same namespace, a readiness blip of the loyalty points API, a payment latency warning in
the victim's own logs."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gauge, gke_nodes, set_times
from tests.data.holdout2._generator.kit import cpu_seconds, deploy, requests
from tests.data.holdout3._generator.kit3 import chatter, ksm_deployment, namespaces, quiet
from tests.data.holdout4._generator.kit4 import hpa, ramp
from tests.scenario_tools.common import truth
from tests.scenario_tools.failures import image_pull_events
from tests.scenario_tools.kube import Ctr, http_probe, waiting
from tests.scenario_tools.parts import readiness_blip

from .kit22 import Incident, rolled

ID = "cinema-snack-preorders-failing"
NOW = datetime.fromisoformat("2028-05-26T18:58:00+00:00")
NS = "concessions"
REG = "harbor.kinoplex-group.de"
IMAGE = f"{REG}/concessions/snack-orders:3.14.2"
SCALE = datetime.fromisoformat("2028-05-26T18:22:31+00:00")
PULL_ERR = (f'failed to pull and unpack image "{IMAGE}": failed to resolve reference '
            f'"{IMAGE}": unexpected status from HEAD request to https://{REG}/v2/concessions/'
            "snack-orders/manifests/3.14.2: 401 Unauthorized")


def build() -> Incident:
    s = Incident(
        id=ID, title="Cinema snack pre-orders slow and failing", now=NOW,
        report="""\
Snack pre-orders in the Kinoplex app are super slow since the evening shows started
(around 18:20) and a lot of guests get "Your order could not be placed". Ticket booking is
fine. Shouldn't autoscaling handle the Friday rush? Looks like it isn't scaling enough.
""",
        truth=truth(
            "image_pull", "Deployment", NS, "snack-orders",
            ["ImagePullBackOff", "401 Unauthorized", "harbor-robot-concessions",
             "snack-orders:3.14.2"],
            "The HPA scaled snack-orders from 3 to 7 at 18:22, but the four new pods cannot "
            "pull snack-orders:3.14.2 from Harbor: the registry answers 401 Unauthorized "
            "because the robot account behind the pull secret harbor-robot-concessions "
            "expired. Renew the robot account's token and update the secret; the three "
            "old pods (image cached) are overloaded until the new ones start."))
    set_times(s, 3.0, 30)
    c = s.cluster
    namespaces(s, {"default": 530, "kube-system": 530, NS: 488, "loyalty": 377,
                   "signage": 261})
    nodes = gke_nodes(s, 6, project="kinoplex-prod-7731", cluster="kx-prod-euw3",
                      pool="app-pool-n2d", region="europe-west3", instance="n2d-standard-8",
                      kubelet="v1.32.6-gke.1125000", cpu="8", memory="32880804Ki",
                      alloc_cpu="7910m", alloc_memory="29258404Ki", days=6.3)

    # ---- snack-orders: three pods of the rollout, four of the scale-out that cannot pull
    ctr = Ctr("snack-orders", IMAGE, port=8080, requests={"cpu": "600m", "memory": "512Mi"},
              limits={"memory": "768Mi"},
              env={"PAYMENT_PROVIDER": "adyen", "KITCHEN_QUEUE": "amqp://kitchen-bus.concessions"
                   ".svc:5672", "ORDER_TIMEOUT": "8s"},
              readiness=http_probe("/health/ready", delay=5, period=5),
              liveness=http_probe("/health/live", delay=20, period=15, timeout=2))
    rollout = s.ago(days=3, hours=5, minutes=8)
    born_new = [SCALE + timedelta(seconds=0.6 + 0.3 * k) for k in range(4)]

    def born(i: int) -> datetime:
        return rollout + timedelta(seconds=6 + 23 * i) if i < 3 else born_new[i - 3]

    def states(i: int, name: str, started: datetime) -> dict[str, dict]:
        if i < 3:
            return {}
        if i == 5:
            return {"snack-orders": waiting("ErrImagePull", PULL_ERR)}
        return {"snack-orders": waiting("ImagePullBackOff",
                                        f'Back-off pulling image "{IMAGE}"')}
    work, pods = deploy(s, NS, "snack-orders", [ctr], replicas=7,
                        nodes=[nodes[0], nodes[1], nodes[2], nodes[3], nodes[4], nodes[5],
                               nodes[3]], revision=27, rollout=rollout, born=born,
                        statuses=states, pull_secrets=["harbor-robot-concessions"],
                        annotations={"prometheus.io/scrape": "true",
                                     "prometheus.io/port": "8080"},
                        old=(26, s.ago(days=10), [Ctr("snack-orders",
                                                      f"{REG}/concessions/snack-orders:3.14.1")]))
    work.availability_changed = SCALE + timedelta(seconds=1)
    rs = work.revisions[-1]
    c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set {rs['metadata']['name']} "
            "from 3 to 7", first=SCALE, component="deployment-controller")
    for pod, when in zip(pods[3:], born_new, strict=True):
        c.event(rs, "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}", first=when,
                component="replicaset-controller")
        c.event(pod, "Scheduled", f"Successfully assigned {NS}/{pod['metadata']['name']} to "
                f"{pod['spec']['nodeName']}", first=when + timedelta(seconds=0.2),
                component="default-scheduler", host="")
        image_pull_events(s, pod, "snack-orders", IMAGE, PULL_ERR,
                          since=when + timedelta(seconds=1.4))
        gauge(s, "kube_pod_container_status_waiting_reason",
              {"namespace": NS, "pod": pod["metadata"]["name"], "container": "snack-orders",
               "reason": "ImagePullBackOff"}, lambda t: 1.0,
              "Describes the reason the container is currently in waiting state.",
              times=[t for t in s.times if t >= when.timestamp() + 45])
    scaler = hpa(s, work, min_=3, max_=12, metrics=[{
        "type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": 65}}}],
        current=[{"type": "Resource", "resource": {"name": "cpu", "current": {
            "averageValue": "701m", "averageUtilization": 117}}}],
        replicas=7, desired=7, created=s.ago(days=210), last_scale=SCALE,
        conditions=[
            ("AbleToScale", "True", "ReadyForNewScale",
             "recommended size matches current size", SCALE + timedelta(minutes=5)),
            ("ScalingActive", "True", "ValidMetricFound",
             "the HPA was able to successfully calculate a replica count from cpu resource "
             "utilization (percentage of request)", s.ago(days=6, hours=2)),
            ("ScalingLimited", "False", "DesiredWithinRange",
             "the desired count is within the acceptable range", s.ago(days=1, hours=7))])
    c.event(scaler, "SuccessfulRescale", "New size: 7; reason: cpu resource utilization "
            "(percentage of request) above target", first=SCALE - timedelta(seconds=0.8),
            component="horizontal-pod-autoscaler", host="")
    gauge(s, "kube_horizontalpodautoscaler_status_current_replicas",
          {"namespace": NS, "horizontalpodautoscaler": "snack-orders"},
          lambda t: 3.0 if t < SCALE.timestamp() else 7.0,
          "Current number of replicas of pods managed by this autoscaler.")
    gauge(s, "kube_horizontalpodautoscaler_spec_max_replicas",
          {"namespace": NS, "horizontalpodautoscaler": "snack-orders"}, lambda t: 12.0,
          "Upper limit for the number of pods that can be set by the autoscaler.")
    ksm_deployment(s, NS, "snack-orders", lambda t: 3.0 if t < SCALE.timestamp() else 7.0,
                   lambda t: 3.0, lambda t: 0.0 if t < SCALE.timestamp() else 4.0)

    def rush(t: int) -> float:  # the evening rush: orders a second over all pods
        return 5.0 + 16.0 * ramp(t, SCALE - timedelta(minutes=14), 22)

    def share503(t: int) -> float:
        return 0.001 + 0.07 * ramp(t, SCALE + timedelta(minutes=2), 10)
    for pod in pods[:3]:
        quiet(s, [pod], "snack-orders", 350)
        cpu_seconds(s, pod, "snack-orders", lambda t: 0.25 + rush(t) / 3 * 0.055)
        requests(s, pod, "snack-orders", rps=lambda t: rush(t) / 3, codes={
            "200": lambda t: 0.985 - share503(t), "503": share503,
            "402": lambda t: 0.014}, median=lambda t: 0.14 + 1.6 * ramp(
                t, SCALE, 12), buckets=(0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 8.0))
    chatter(s, pods[:3], "snack-orders", "snack-orders", [
        ("info", "order SO-55120938 placed: 2x nachos, 1x cola L (Kino 4, show 17:45)", {}),
        ("info", "order SO-55120941 placed: 1x popcorn sweet M (Kino 2, show 18:00)", {}),
        ("warn", "payment provider adyen latency 1.9s above SLO (1.5s)", {}),
    ], 90, end=SCALE)
    chatter(s, pods[:3], "snack-orders", "snack-orders", [
        ("info", "order SO-55123307 placed: 1x popcorn salty L (Kino 7, show 19:15)", {}),
        ("warn", "request queue depth 212 (limit 256), shedding below priority 3", {}),
        ("warn", "payment provider adyen latency 1.9s above SLO (1.5s)", {}),
        ("error", "POST /v1/orders 503 queue full, order rejected",
         {"http.response.status_code": 503}),
        ("warn", "kitchen-bus publish took 1.2s (queue backlog)", {}),
    ], 210, start=SCALE + timedelta(minutes=2))

    # ---- red herrings: menu-board rollout 40 min before, a loyalty probe blip
    def board(tag: str) -> Ctr:
        return Ctr("menu-board", f"{REG}/concessions/menu-board:{tag}", port=8080,
                   requests={"cpu": "100m", "memory": "192Mi"}, limits={"memory": "256Mi"},
                   readiness=http_probe("/healthz"))
    roll = SCALE - timedelta(minutes=40)
    _, boards, _ = rolled(s, NS, "menu-board", board, old="6.0.0", new="6.0.1", at=roll,
                          revision=15, replicas=2, nodes=nodes[4:], old_since=s.ago(days=12),
                          pull_secrets=["harbor-robot-signage"])
    quiet(s, boards, "menu-board", 120)
    chatter(s, boards, "menu-board", "menu-board", [
        ("info", "menu-board 6.0.1 started, 41 screens subscribed", {}),
        ("info", "pushed price list v2028.21 to screen KX-DUS-foyer-03", {}),
        ("warn", "screen KX-KOE-foyer-01 heartbeat missed (last seen 95s ago)", {}),
    ], 50, start=roll)
    readiness_blip(s, "loyalty", "points-api", f"{REG}/loyalty/points-api:8.3.0", nodes[:3],
                   port=8080, path="/q/health/ready", minutes_ago=51)
    sign = Ctr("foyer-signage-sync", f"{REG}/signage/foyer-signage-sync:1.9.4", port=8080,
               requests={"cpu": "50m", "memory": "96Mi"}, limits={"memory": "128Mi"})
    _, signs = deploy(s, "signage", "foyer-signage-sync", [sign], replicas=1, nodes=nodes[2:],
                      revision=9, rollout=s.ago(days=4, hours=11))
    quiet(s, signs, "foyer-signage-sync", 70)
    chatter(s, signs, "foyer-signage-sync", "foyer-signage-sync", [
        ("error", "CDN purge for trailer-loop-2028-21.mp4 failed: 429 Too Many Requests", {}),
        ("info", "synced 112 assets to 41 screens", {}),
    ], 30)
    return s
