"""Charity telethon: the donation page crawls and sometimes fails during the live TV
appeal. pledge-intake has an HPA (4-10 pods, 60% of a 500m CPU request, no CPU limit). The
appeal went on air at 19:20; the autoscaler scaled out to 10 pods by 19:31 and has sat at
its maximum since (ScalingLimited: TooManyReplicas) with the pods at ~140% of their CPU
request: latency up twentyfold, 503s when the worker queue is full. Nodes have room, no
throttling (no CPU limit), no restarts. Red herrings: receipt-mailer 2.3.0 rolled out 38
minutes before the surge in the same namespace, an old OOM restart of one pledge-intake
pod three days ago, Gift Aid lookup timeouts in pledge-intake's own logs all evening, and
a card gateway with a few declines."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import eks_nodes, set_times
from tests.data.holdout2._generator.kit import cpu_seconds, requests
from tests.data.holdout3._generator.kit3 import ksm_deployment
from tests.data.holdout4._generator.kit4 import hpa, ramp
from tests.scenario_tools.common import node_conditions, truth
from tests.scenario_tools.kube import Ctr, http_probe, running

from .kit15 import Incident, chatter, coredns, namespaces, neighbour, quiet, rolled, steady

ID = "telethon-donations-crawling"
NOW = datetime.fromisoformat("2028-10-02T19:58:00+00:00")
NS = "giving"
ECR = "418265770912.dkr.ecr.eu-west-2.amazonaws.com/giving"
AIR = NOW - timedelta(minutes=38)  # 19:20
SCALES = [(AIR + timedelta(minutes=4, seconds=12), 6),
          (AIR + timedelta(minutes=7, seconds=40), 8),
          (AIR + timedelta(minutes=11, seconds=3), 10)]
FULL = SCALES[-1][0]


def build() -> Incident:
    s = Incident(
        id=ID, title="Donation page slow during the TV appeal", now=NOW,
        report="""\
Donate page is really slow since the appeal went live on TV tonight, some people get
"something went wrong" and give up. Phones are fine. We're live until 22:00 - this is
costing us money!!
""",
        truth=truth(
            "autoscaling_limit", "Deployment", NS, "pledge-intake",
            ["ScalingLimited", "TooManyReplicas", "maxReplicas: 10",
             "the desired replica count is more than the maximum replica count"],
            "pledge-intake's HorizontalPodAutoscaler has been at its maximum of 10 replicas "
            "since 19:31 while the pods run at ~140% of their CPU request; it wants more but "
            "may not. Raise maxReplicas (the nodes have room) for the appeal, and keep the "
            "ceiling in line with the expected peak next time."))
    set_times(s, 3.0, 60)
    namespaces(s, {"default": 900, "kube-system": 900, NS: 700, "payments": 690})
    nodes = eks_nodes(s, 5, region="eu-west-2", subnet=44, pool="apps-c6i",
                      instance="c6i.2xlarge", kubelet="v1.32.3-eks-473151a",
                      kernel="6.1.132-147.221.amzn2023.x86_64",
                      os_image="Amazon Linux 2023.7.20250414", cpu="8",
                      memory="15896740Ki", alloc_cpu="7910m", alloc_memory="14879908Ki",
                      days=5.2)
    node_conditions(s, nodes)
    coredns(s, nodes[:2], "602401143452.dkr.ecr.eu-west-2.amazonaws.com/eks/coredns:"
            "v1.11.4-eksbuild.14")
    c = s.cluster

    # ---- pledge-intake and its autoscaler
    image = f"{ECR}/pledge-intake:6.2.0"
    ctr = Ctr("pledge-intake", image, port=8080,
              requests={"cpu": "500m", "memory": "384Mi"}, limits={"memory": "768Mi"},
              env={"CARD_GATEWAY_URL": "http://card-gateway.payments.svc:8080",
                   "GIFTAID_API": "https://api.giftaid-check.example.org/v2",
                   "WORKER_QUEUE": "64"},
              readiness=http_probe("/ready", delay=5),
              liveness=http_probe("/healthz", delay=20, period=20, timeout=3))
    work, pods = steady(s, NS, "pledge-intake", [ctr], nodes=nodes, replicas=4, revision=58,
                        rollout=s.ago(days=3, hours=22, minutes=40),
                        restarted={2: (s.ago(days=3, hours=1, minutes=17), "OOMKilled", 137)})
    rs = work.revisions[-1]
    added = []
    for when, size in SCALES:
        for k in range(2):
            born = when + timedelta(seconds=1 + k)
            name = f"{rs['metadata']['name']}-{c.token(5)}"
            started = born + timedelta(seconds=6)
            pod = c.pod(work, rs, node=nodes[(len(added) + 1) % len(nodes)], created=born,
                        statuses={"pledge-intake": running(started)}, name=name)
            added.append(pod)
            c.event(rs, "SuccessfulCreate", f"Created pod: {name}", first=born,
                    component="replicaset-controller", host="")
            c.event(pod, "Scheduled", f"Successfully assigned {NS}/{name} to "
                    f"{pod['spec']['nodeName']}", first=born, component="default-scheduler",
                    host="")
            field_ = "spec.containers{pledge-intake}"
            c.event(pod, "Pulled", f'Container image "{image}" already present on machine',
                    first=started - timedelta(seconds=1), field_path=field_)
            c.event(pod, "Created", "Created container: pledge-intake",
                    first=started - timedelta(seconds=0.5), field_path=field_)
            c.event(pod, "Started", "Started container pledge-intake", first=started,
                    field_path=field_)
        c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set "
                f"{rs['metadata']['name']} from {size - 2} to {size}", first=when,
                component="deployment-controller", host="")
    work.replicas = 10
    work.obj["spec"]["replicas"] = 10
    rs["spec"]["replicas"] = 10
    rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] = "10"
    rs["metadata"]["annotations"]["deployment.kubernetes.io/max-replicas"] = "13"
    pods = [*pods, *added]
    auto = hpa(s, work, min_=4, max_=10,
               metrics=[{"type": "Resource", "resource": {"name": "cpu", "target": {
                   "type": "Utilization", "averageUtilization": 60}}}],
               current=[{"type": "Resource", "resource": {"name": "cpu", "current": {
                   "averageUtilization": 138, "averageValue": "691m"}}}],
               replicas=10, desired=10, created=s.ago(days=240), last_scale=FULL,
               conditions=[
                   ("AbleToScale", "True", "ReadyForNewScale",
                    "recommended size matches current size", FULL + timedelta(minutes=5)),
                   ("ScalingActive", "True", "ValidMetricFound",
                    "the HPA was able to successfully calculate a replica count from cpu "
                    "resource utilization (percentage of request)", s.ago(days=6)),
                   ("ScalingLimited", "True", "TooManyReplicas",
                    "the desired replica count is more than the maximum replica count",
                    FULL)])
    for when, size in SCALES:
        c.event(auto, "SuccessfulRescale", f"New size: {size}; reason: cpu resource "
                "utilization (percentage of request) above target", first=when -
                timedelta(seconds=1), component="horizontal-pod-autoscaler", host="")

    def total(t: int) -> float:  # donations API requests per second, all pods
        return 22.0 + 238.0 * ramp(t, AIR, 12)

    def active(t: int) -> int:
        return 4 + sum(2 for when, _ in SCALES if t >= when.timestamp() + 20)

    def util(t: int) -> float:  # share of the 500m request, per pod
        return min(1.45, 0.0265 * total(t) / active(t) / 0.5)

    def saturated(t: int) -> float:
        return ramp(t, FULL, 3)

    hpa_labels = {"namespace": NS, "horizontalpodautoscaler": "pledge-intake"}
    for metric, value, help_ in (
            ("kube_horizontalpodautoscaler_spec_max_replicas", lambda t: 10.0,
             "Upper limit for the number of pods that can be set by the autoscaler."),
            ("kube_horizontalpodautoscaler_spec_min_replicas", lambda t: 4.0,
             "Lower limit for the number of pods that can be set by the autoscaler."),
            ("kube_horizontalpodautoscaler_status_current_replicas",
             lambda t: float(active(t)), "Current number of replicas of pods managed by "
             "this autoscaler."),
            ("kube_horizontalpodautoscaler_status_desired_replicas",
             lambda t: float(min(10, active(t) + (2 if util(t) > 0.66 else 0))),
             "Desired number of replicas of pods managed by this autoscaler.")):
        s.metrics.gauge(metric, hpa_labels, [(t, value(t)) for t in s.times], help_)
    ksm_deployment(s, NS, "pledge-intake", lambda t: float(active(t)),
                   lambda t: float(active(t)), lambda t: 0.0)
    for pod in pods:
        quiet(s, [pod], "pledge-intake", 231)
        cpu_seconds(s, pod, "pledge-intake", lambda t: 0.5 * util(t))
        s.metrics.gauge("kube_pod_container_resource_requests",
                        {"namespace": NS, "pod": pod["metadata"]["name"],
                         "container": "pledge-intake", "resource": "cpu", "unit": "core"},
                        [(t, 0.5) for t in s.times if t >= _born(pod) + 25],
                        "The number of requested request resource by a container.")
        requests(s, pod, "pledge-intake", rps=lambda t: total(t) / active(t),
                 codes={"201": lambda t: 0.985 - 0.06 * saturated(t),
                        "402": lambda t: 0.012,
                        "503": lambda t: 0.003 + 0.06 * saturated(t)},
                 median=lambda t: 0.085 + 0.6 * ramp(t, AIR + timedelta(minutes=3), 8)
                 + 1.1 * saturated(t), buckets=(0.1, 0.25, 0.5, 1.0, 2.5, 5.0))
    chatter(s, pods[:4], "pledge-intake", "pledge-intake", [
        ("info", "pledge PL-8841203 accepted amount=25.00 GBP giftaid=yes", {}),
        ("info", "pledge PL-8841229 accepted amount=10.00 GBP giftaid=no", {}),
        ("warn", "card declined for pledge PL-8841240 (do_not_honour)",
         {"http.response.status_code": 402}),
    ], 80, start=s.ago(hours=3), end=AIR)
    chatter(s, pods, "pledge-intake", "pledge-intake", [
        ("info", "pledge PL-8852911 accepted amount=20.00 GBP giftaid=yes", {}),
        ("info", "pledge PL-8853370 accepted amount=5.00 GBP giftaid=no", {}),
        ("warn", "worker queue 61/64, request waited 1.42s for a worker", {}),
        ("error", "POST /v1/pledges 503 worker queue full (64/64), shedding request",
         {"http.response.status_code": 503}),
        ("info", "pledge PL-8853412 accepted amount=50.00 GBP giftaid=yes", {}),
    ], 300, start=FULL + timedelta(minutes=1))
    chatter(s, pods[:4], "pledge-intake", "pledge-intake", [
        ("error", "gift aid lookup timed out after 3000ms, declaration queued for retry",
         {"error.type": "TimeoutError"}),
    ], 16, start=s.ago(hours=3))

    # ---- red herrings
    def mailer(version: str) -> Ctr:
        return Ctr("receipt-mailer", f"{ECR}/receipt-mailer:{version}", port=8080,
                   requests={"cpu": "100m", "memory": "192Mi"}, limits={"memory": "384Mi"},
                   readiness=http_probe("/ready"),
                   liveness=http_probe("/healthz", delay=20, period=20))
    rolled(s, NS, "receipt-mailer", mailer, nodes, old="2.2.4", new="2.3.0",
           at=AIR - timedelta(minutes=38, seconds=20), revision=19, replicas=2, mib=140,
           logs_old=[("info", "receipt sent for PL-8840011", {})],
           logs_new=[("info", "receipt-mailer 2.3.0 started, template set 2028-10", {}),
                     ("info", "receipt sent for PL-8852911", {}),
                     ("warn", "receipt for PL-8853001 deferred: SES throttled, retry in 5s",
                      {})], n_logs=60)
    neighbour(s, "payments", "card-gateway", f"{ECR}/card-gateway:9.0.2", nodes, replicas=3,
              revision=44, rollout=s.ago(days=1, hours=19), mib=290, cpu=0.25, rps=30.0,
              codes={"200": 0.986, "402": 0.013, "502": 0.001}, logs=[
                  ("info", "authorised txn 7f3c91 amount=25.00 GBP", {}),
                  ("info", "declined txn 7f3d02 reason=do_not_honour", {}),
                  ("warn", "acquirer latency 2.1s for txn 7f3e44", {}),
              ], n_logs=90, offset=1)
    return s


def _born(pod: dict) -> float:
    return datetime.fromisoformat(pod["metadata"]["creationTimestamp"]
                                  .replace("Z", "+00:00")).timestamp()
