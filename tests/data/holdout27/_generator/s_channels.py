"""Hotel channel manager: an OTA partner says availability updates stopped arriving. Karpenter
consolidated the node ip-10-41-7-213 at 10:17 (a replacement node came up at 10:10); two of
ari-pusher's three pods were recreated on the fresh node, which has no cached copy of
ari-pusher:4.2.1. ari-pusher pulls from GitLab's registry with the imagePullSecret
gitlab-deploy-token, whose token has expired: every pull fails with 401 Unauthorized and the
pods sit in ImagePullBackOff. The last pod, on an old node that still had the image, cannot
keep up, so the outbox backlog grows. Red herrings: rate-calendar 6.3.0 rolled out 35 minutes
before the onset in the same namespace, the node replacement itself, a few ordinary partner
504s, an old OOM restart of booking-ingest, a probe blip in another namespace."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import eks_nodes, gauge, set_times
from tests.data.holdout2._generator.kit import app_counter, cpu_seconds, deleted, deploy
from tests.data.holdout3._generator.kit3 import (
    chatter,
    ghosts,
    ksm_deployment,
    log_pod,
    namespaces,
    quiet,
    steady,
)
from tests.scenario_tools.common import truth
from tests.scenario_tools.failures import image_pull_events
from tests.scenario_tools.kube import Ctr, http_probe, waiting
from tests.scenario_tools.parts import readiness_blip

from .kit27 import Incident, ghost_memory

ID = "partner-availability-updates-stalled"
NOW = datetime.fromisoformat("2028-05-09T11:08:00+00:00")
NS = "channel"
ECR = "418227065310.dkr.ecr.eu-central-1.amazonaws.com"
IMAGE = "registry.gitlab.com/staybridge/channel/ari-pusher:4.2.1"
PULL_ERR = (f'rpc error: code = Unknown desc = failed to pull and unpack image "{IMAGE}": '
            f'failed to resolve reference "{IMAGE}": failed to authorize: failed to fetch oauth '
            "token: unexpected status from GET request to https://gitlab.com/jwt/auth?scope="
            "repository%3Astaybridge%2Fchannel%2Fari-pusher%3Apull&service=container_registry: "
            "401 Unauthorized")


def build() -> Incident:
    s = Incident(
        id=ID, title="Partner availability updates stalled", now=NOW,
        report="""\
TravelNest (our biggest OTA partner) pinged us: since roughly 10:15-10:20 UTC they receive
availability and rate updates for our hotels only in dribs and drabs, some properties show
rooms we sold an hour ago, so we are getting overbookings. Could their webhook endpoint be
rejecting us? Channel manager, prod.
""",
        truth=truth(
            "image_pull", "Deployment", NS, "ari-pusher",
            ["ImagePullBackOff", "401 Unauthorized", "gitlab-deploy-token",
             "ari-pusher:4.2.1"],
            "Karpenter replaced a node at 10:17 and two ari-pusher pods were recreated on the "
            "new node, which must pull registry.gitlab.com/.../ari-pusher:4.2.1; the "
            "imagePullSecret gitlab-deploy-token holds an expired deploy token, so every pull "
            "fails (failed to authorize: 401 Unauthorized) and the pods stay in "
            "ImagePullBackOff. Rotate the deploy token in gitlab-deploy-token (or mirror the "
            "image to ECR); the lone remaining pod cannot drain the outbox, so partner "
            "updates lag."))
    set_times(s, 3.0, 60)
    c = s.cluster
    namespaces(s, {"default": 610, "kube-system": 610, NS: 588, "extranet": 560,
                   "karpenter": 600})
    nodes = eks_nodes(s, 3, region="eu-central-1", subnet=41, pool="general-purpose",
                      instance="m7i.2xlarge", kubelet="v1.32.3-eks-473151a",
                      kernel="6.1.134-152.225.amzn2023.x86_64",
                      os_image="Amazon Linux 2023.7.20250512", cpu="8", memory="32386980Ki",
                      alloc_cpu="7910m", alloc_memory="31369124Ki", days=6.5)
    fresh = eks_nodes(s, 1, region="eu-central-1", subnet=41, pool="general-purpose",
                      instance="m7i.xlarge", kubelet="v1.32.3-eks-473151a",
                      kernel="6.1.134-152.225.amzn2023.x86_64",
                      os_image="Amazon Linux 2023.7.20250512", cpu="4", memory="15896308Ki",
                      alloc_cpu="3920m", alloc_memory="15155828Ki",
                      days=(58 / 1440))[0]
    for n in [*nodes, fresh]:
        n["metadata"]["labels"].update({"karpenter.sh/nodepool": "general-purpose",
                                        "karpenter.sh/capacity-type": "on-demand"})
        n["metadata"]["labels"].pop("eks.amazonaws.com/nodegroup", None)
    fname = fresh["metadata"]["name"]
    up = NOW - timedelta(minutes=58)
    c.event(fresh, "NodeReady", f"Node {fname} status is now: NodeReady",
            first=up + timedelta(seconds=41), host=fname)
    c.event(fresh, "RegisteredNode", f"Node {fname} event: Registered Node {fname} in "
            "Controller", first=up + timedelta(seconds=12), component="node-controller",
            host="")
    gone_node = "ip-10-41-7-213.eu-central-1.compute.internal"
    drain = NOW - timedelta(minutes=51, seconds=4)

    # ---- ari-pusher: one pod left on an old node, two stuck pulling on the fresh one
    ctr = Ctr("ari-pusher", IMAGE, port=8080, requests={"cpu": "500m", "memory": "512Mi"},
              limits={"memory": "1Gi"},
              env={"OUTBOX_DB_HOST": "channel-db.cluster-c7x.eu-central-1.rds.amazonaws.com",
                   "DELIVERY_CONCURRENCY": "16", "PARTNER_TIMEOUT": "10s"},
              readiness=http_probe("/healthz/ready"), liveness=http_probe("/healthz/live",
                                                                          delay=20))
    rollout = s.ago(days=5, hours=21, minutes=3)
    moved = [drain + timedelta(seconds=1.2 + 0.7 * i) for i in range(2)]

    def states(i: int, name: str, started: datetime) -> dict[str, dict]:
        if i == 0:
            return {}
        if i == 2:
            return {"ari-pusher": waiting("ErrImagePull", PULL_ERR)}
        return {"ari-pusher": waiting("ImagePullBackOff", f'Back-off pulling image "{IMAGE}"')}
    work, pods = deploy(s, NS, "ari-pusher", [ctr], replicas=3,
                        nodes=[nodes[1], fresh, fresh], revision=17, rollout=rollout,
                        born=lambda i: rollout + timedelta(seconds=8) if i == 0 else moved[i - 1],
                        statuses=states, pull_secrets=["gitlab-deploy-token"], service=8080,
                        annotations={"prometheus.io/scrape": "true",
                                     "prometheus.io/port": "8080"},
                        old=(16, s.ago(days=13), [Ctr("ari-pusher", IMAGE.replace(
                            "4.2.1", "4.1.9"))]))
    rs = work.revisions[-1]
    olds = [deleted(s, NS, f"{rs['metadata']['name']}-{c.token(5)}", gone_node,
                    rollout + timedelta(seconds=30 + 21 * i), drain) for i in range(2)]
    for pod in pods[1:]:
        meta = pod["metadata"]
        born = datetime.fromisoformat(meta["creationTimestamp"].replace("Z", "+00:00"))
        c.event(rs, "SuccessfulCreate", f"Created pod: {meta['name']}", first=born,
                component="replicaset-controller", host="")
        c.event(pod, "Scheduled", f"Successfully assigned {NS}/{meta['name']} to {fname}",
                first=born + timedelta(seconds=0.4), component="default-scheduler", host="")
        image_pull_events(s, pod, "ari-pusher", IMAGE, PULL_ERR.split("desc = ", 1)[1],
                          since=born + timedelta(seconds=2))
        gauge(s, "kube_pod_container_status_waiting_reason",
              {"namespace": NS, "pod": meta["name"], "container": "ari-pusher",
               "reason": "ImagePullBackOff"}, lambda t: 1.0,
              "Describes the reason the container is currently in waiting state.",
              times=[t for t in s.times if t >= born.timestamp() + 60])
    ksm_deployment(s, NS, "ari-pusher", lambda t: 3.0,
                   lambda t: 3.0 if t < drain.timestamp() else 1.0,
                   lambda t: 0.0 if t < drain.timestamp() else 2.0)
    live = pods[0]
    quiet(s, [live], "ari-pusher", 430)
    cpu_seconds(s, live, "ari-pusher", lambda t: 0.22 if t < drain.timestamp() else 0.61)
    for pod in olds:
        ghost_memory(s, pod, "ari-pusher", 430)
        cpu_seconds(s, pod, "ari-pusher", lambda t: 0.22)
    for pod in [live, *olds]:
        for outcome, rate in (("delivered", 6.1), ("retry", 0.03)):
            app_counter(s, "ari_webhook_deliveries_total", {
                "namespace": NS, "pod": pod["metadata"]["name"], "partner": "travelnest",
                "outcome": outcome},
                [t for t in s.times if t >= s.ago(days=5).timestamp()
                 and (pod is live or t <= drain.timestamp())],
                lambda t, r=rate: r * (1.0 if t < drain.timestamp() else 1.35),
                "Availability and rate messages delivered to partners.")

    def backlog(t: int) -> float:
        return 180.0 + max(0.0, t - drain.timestamp()) * (18.3 - 8.2)
    gauge(s, "ari_outbox_pending_messages", {"namespace": NS, "pod": live["metadata"]["name"],
                                             "partner": "travelnest"}, backlog,
          "Messages waiting in the outbox for delivery.")
    chatter(s, [live, *olds], "ari-pusher", "ari-pusher", [
        ("info", "delivered 50 ARI messages to travelnest in 0.41s (hotel 4471, 2028-05-12..)",
         {}),
        ("info", "outbox lag 3s, 162 pending", {}),
    ], 60, end=drain)
    chatter(s, [live], "ari-pusher", "ari-pusher", [
        ("warn", "outbox backlog growing: 9,812 pending, oldest 27m (concurrency 16/16)", {}),
        ("info", "delivered 50 ARI messages to travelnest in 0.47s (hotel 1209, 2028-06-02..)",
         {}),
        ("warn", "partner travelnest: 504 Gateway Timeout after 10.0s, retry 1/5 scheduled",
         {"http.response.status_code": 504}),
        ("warn", "outbox backlog growing: 21,470 pending, oldest 44m (concurrency 16/16)", {}),
    ], 70, start=drain + timedelta(minutes=2))
    chatter(s, [live, *olds], "ari-pusher", "ari-pusher", [
        ("warn", "partner travelnest: 504 Gateway Timeout after 10.0s, retry 1/5 scheduled",
         {"http.response.status_code": 504}),
    ], 6, end=drain)

    # ---- red herrings
    croll = drain - timedelta(minutes=35, seconds=12)
    cal = Ctr("rate-calendar", f"{ECR}/channel/rate-calendar:6.3.0", port=8080,
              requests={"cpu": "250m", "memory": "512Mi"}, limits={"memory": "768Mi"},
              readiness=http_probe("/ready"))
    cwork, cals = steady(s, NS, "rate-calendar", [cal], nodes=nodes, replicas=2, revision=88,
                         rollout=croll, offset=2,
                         old=(87, s.ago(days=3, hours=2), [Ctr(
                             "rate-calendar", f"{ECR}/channel/rate-calendar:6.2.4")]))
    gone_cals = ghosts(s, cwork.revisions[0], nodes, [s.ago(days=3, hours=2)] * 2,
                       [croll + timedelta(seconds=40 * (i + 1)) for i in range(2)])
    quiet(s, cals, "rate-calendar", 380)
    for pod in gone_cals:
        ghost_memory(s, pod, "rate-calendar", 360)
    chatter(s, cals, "rate-calendar", "rate-calendar", [
        ("info", "rate-calendar 6.3.0 started, 2,318 rate plans loaded", {}),
        ("info", "recomputed 365-day calendar for hotel 3318 in 212ms", {}),
        ("warn", "rate plan RP-88120 has no derived rates for 2028-12-31, using BAR", {}),
    ], 50, start=croll)
    for pod in gone_cals:
        log_pod(s, pod, "rate-calendar", "rate-calendar", [
            ("info", "recomputed 365-day calendar for hotel 2207 in 198ms", {})], 8)
    ing = Ctr("booking-ingest", f"{ECR}/channel/booking-ingest:2.8.0", port=8080,
              requests={"cpu": "200m", "memory": "384Mi"}, limits={"memory": "512Mi"})
    _, ings = steady(s, NS, "booking-ingest", [ing], nodes=nodes, replicas=2, revision=31,
                     rollout=s.ago(days=4, hours=9), offset=1,
                     restarted={0: (s.ago(days=2, hours=14), "OOMKilled", 137)})
    quiet(s, ings, "booking-ingest", 290)
    chatter(s, ings, "booking-ingest", "booking-ingest", [
        ("info", "reservation TN-88412093 imported for hotel 4471 (2 nights)", {}),
        ("info", "cancellation TN-88399120 applied for hotel 1209", {}),
    ], 60)
    readiness_blip(s, "extranet", "hotelier-portal", f"{ECR}/extranet/hotelier-portal:12.4.1",
                   nodes, minutes_ago=19)
    return s
