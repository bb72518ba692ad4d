"""Bakery chain: the pre-order release of this morning (preorder-api 4.13.0, with the new
pickup-time picker) was deployed with the tag mistyped as 4.31.0, which does not exist in
the registry. The two new pods sit in ImagePullBackOff ("not found"), the rollout is stuck
at one old pod removed, and the three old pods left carry the early-morning rush: the
feature is missing and ordering is slower, with a few 503s. The signal is in the cluster
state and events. Red herrings: pickup-display 6.0.1 rolled out 44 min earlier in the same
namespace (healthy), label-printer-bridge NotReady because the shop printers are switched
off before opening (harmless, by design), an old OOM restart of loyalty-points two days
ago, a slow-query warning in preorder-api itself, and a payment provider with a few
ordinary timeouts."""

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
from tests.scenario_tools.failures import image_pull_events, not_ready, probe_events
from tests.scenario_tools.kube import Ctr, ended, http_probe, running, waiting
from tests.scenario_tools.parts import neighbour, rollout, simple_deployment

from .kit14 import base, chatter

ID = "bakery-preorder-release-missing"
NOW = datetime(2028, 5, 3, 6, 41, tzinfo=UTC)
NS = "bakery"
ECR = "318274650912.dkr.ecr.eu-west-1.amazonaws.com/crumbhouse"
BAD = f"{ECR}/preorder-api:4.31.0"
ERR = (f'rpc error: code = NotFound desc = failed to pull and unpack image "{BAD}": failed '
       f'to resolve reference "{BAD}": {BAD}: not found')


def build() -> Story:
    s = Story(
        id=ID, title="Bakery pre-order release not live, ordering slow", now=NOW,
        report="""\
The pickup-time picker for pre-orders was supposed to go live at 06:00 but the app still
shows the old checkout. Shops also say pre-ordering got slow in the morning rush and a few
customers got "try again later". Can someone look at the bakery pre-order backend?
""",
        truth=truth(
            "image_pull", "Deployment", NS, "preorder-api",
            ["ImagePullBackOff", "preorder-api:4.31.0", "not found"],
            "The 06:00 release set preorder-api's image to preorder-api:4.31.0, a tag that does "
            "not exist (the release is 4.13.0). The new pods cannot pull it "
            "(ImagePullBackOff, not found) and the rollout is stuck with three old 4.12.2 pods "
            "carrying the traffic. Fix the tag to 4.13.0 (or roll back to revision 40)."),
        hours=3.0)
    at = NOW - timedelta(minutes=40, seconds=48)
    t0 = at.timestamp()
    node_list = base(s, [NS, "loyalty", "payments"], 4, subnet=63, instance="c6i.xlarge")

    def api(version: str) -> Ctr:
        return Ctr("preorder-api", f"{ECR}/preorder-api:{version}", port=8080,
                   requests={"cpu": "300m", "memory": "384Mi"}, limits={"memory": "768Mi"},
                   env={"DB_HOST": "preorders.cluster-c8kq2.eu-west-1.rds.amazonaws.com",
                        "PICKUP_PICKER": "true" if version != "4.12.2" else "false"},
                   readiness=http_probe("/ready", delay=5),
                   liveness=http_probe("/live", delay=20, period=20))

    def states(i: int, started: datetime, pod: str) -> dict:
        if i == 1:
            return {"preorder-api": waiting("ErrImagePull", ERR)}
        return {"preorder-api": waiting("ImagePullBackOff", f'Back-off pulling image "{BAD}"')}
    roll = rollout(s, NS, "preorder-api", api, old="4.12.2", new="4.31.0", at=at,
                   revision=41, replicas=4, node_list=node_list, statuses=states,
                   complete=False, pods_of_new=2, old_left=3)
    for i, pod in enumerate(roll.new_pods):
        created = at + timedelta(seconds=2 + 45 * i)
        image_pull_events(s, pod, "preorder-api", BAD, ERR, since=created + timedelta(seconds=2))
        s.metrics.gauge("kube_pod_container_status_waiting_reason",
                        {"namespace": NS, "pod": pod["metadata"]["name"],
                         "container": "preorder-api", "reason": "ImagePullBackOff"},
                        [(t, 1.0) for t in s.times if t >= created.timestamp() + 60],
                        "Describes the reason the container is currently in waiting state.")
    deployment_metrics(s, roll.work, available=lambda t: 4.0 if t < t0 + 45 else 3.0)

    def rush(t: int) -> float:  # orders per second: the morning rush from 05:30
        hour = (t % 86400) / 3600
        return 3.0 + 9.0 * max(0.0, min(1.0, (hour - 5.3) / 1.0))

    def serving(t: int) -> float:
        return 4.0 if t < t0 + 45 else 3.0

    live = [p for p in roll.old_pods if "_deleted" not in p["metadata"]]
    for pod in roll.old_pods:
        level = s.rng.uniform(330, 380) * MIB
        container_metrics(s, pod, "preorder-api", memory=lambda t, b=level: b,
                          cpu=lambda t: 0.05 + 0.035 * rush(t) / serving(t))
        http_metrics(s, "preorder-api", pod, rps=lambda t: rush(t) / serving(t), codes={
            "200": const(0.985), "409": const(0.01),
            "503": lambda t: 0.0005 if t < t0 else 0.004 + 0.02 * max(0.0, rush(t) - 8) / 4},
            median=lambda t: 0.09 if t < t0 else 0.09 + 0.05 * rush(t) / 3, histogram=True)
    chatter(s, live, "preorder-api", "preorder-api", [
        ("info", "pre-order po_55120 placed: shop=lindenstrasse pickup=07:15 items=4", {}),
        ("info", "pre-order po_55133 placed: shop=hafenmarkt pickup=07:30 items=2", {}),
        ("warn", "slow query 1.24s: SELECT ... FROM preorders WHERE shop_id=$1 AND pickup_day"
         "=$2", {"event.duration": 1240000000}),
        ("warn", "WARNING: stock reservation for 'Dinkelvollkorn 750g' below threshold at shop "
         "altstadt", {}),
    ], 180)
    chatter(s, live, "preorder-api", "preorder-api", [
        ("error", "POST /v1/preorders 503 worker pool busy (32/32), rejected",
         {"http.response.status_code": 503}),
        ("warn", "request queue wait 640ms above 500ms", {}),
    ], 40, start=at + timedelta(minutes=8))

    # ---- pickup-display: rolled out 44 min before, healthy
    disp_at = at - timedelta(minutes=44, seconds=10)

    def display(version: str) -> Ctr:
        return Ctr("pickup-display", f"{ECR}/pickup-display:{version}", port=8080,
                   requests={"cpu": "100m", "memory": "192Mi"}, limits={"memory": "256Mi"},
                   readiness=http_probe("/ready"))
    disp = rollout(s, NS, "pickup-display", display, old="6.0.0", new="6.0.1", at=disp_at,
                   revision=23, replicas=2, node_list=node_list)
    for pod in disp.new_pods + disp.old_pods:
        level = s.rng.uniform(120, 140) * MIB
        container_metrics(s, pod, "pickup-display", memory=lambda t, b=level: b)
    chatter(s, disp.new_pods, "pickup-display", "pickup-display", [
        ("info", "pickup-display 6.0.1 started", {}),
        ("info", "screen shop=hafenmarkt refreshed: 12 orders ready", {}),
        ("warn", "screen shop=altstadt last heartbeat 95s ago", {}),
    ], 40, start=disp_at)

    # ---- label-printer-bridge: NotReady until the shops switch their printers on
    printer = Ctr("label-printer-bridge", f"{ECR}/label-printer-bridge:2.2.0", port=9100,
                  requests={"cpu": "50m", "memory": "64Mi"}, limits={"memory": "128Mi"},
                  readiness=http_probe("/ready", delay=5, period=30))
    since = s.ago(hours=1, minutes=50)
    up = s.ago(days=3, hours=4)
    _, bridge = simple_deployment(s, NS, "label-printer-bridge", printer.image, replicas=1,
                                  node_list=node_list, revision=6, rollout=up, ctr=printer,
                                  restarts={0: not_ready(up + timedelta(seconds=30))})
    probe_events(s, bridge[0], "label-printer-bridge", "HTTP probe failed with statuscode: "
                 "503", since=since + timedelta(seconds=20), period=30)
    container_metrics(s, bridge[0], "label-printer-bridge", memory=const(41 * MIB))
    chatter(s, bridge, "label-printer-bridge", "label-printer-bridge", [
        ("warn", "no label printers connected (0/14), reporting not ready until shops open",
         {}),
        ("info", "printer scan: 0 of 14 shop printers reachable", {}),
    ], 40, start=since)

    # ---- elsewhere
    neighbour(s, "loyalty", "loyalty-points", f"{ECR}/loyalty-points:3.0.4", node_list,
              replicas=2, memory_mib=300, logs=[
                  ("info", "points credited: member m_8812 +12", {}),
                  ("info", "points credited: member m_1904 +4", {})],
              restarts={0: running(s.ago(days=2, hours=1), restarts=1, last=ended(
                  "OOMKilled", 137, s.ago(days=4, hours=9), s.ago(days=2, hours=1,
                                                                 seconds=12)))})
    neighbour(s, "payments", "checkout-psp", f"{ECR}/checkout-psp:9.1.0", node_list,
              replicas=2, memory_mib=210, rps=2.0, codes={"200": 0.994, "504": 0.006},
              logs=[("info", "payment captured for po_55101 (EUR 7.40)", {}),
                    ("warn", "PSP call timed out after 8s, retry succeeded",
                     {"error.type": "Timeout"})], n_logs=30)
    return s
