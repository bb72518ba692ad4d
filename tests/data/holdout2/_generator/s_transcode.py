"""Video: uploads take half an hour to be processed. A creator campaign at 19:28 tripled the
uploads; KEDA's HPA on the SQS queue scaled transcode-worker from 4 to its maximum of 16
within ten minutes (Karpenter added two nodes for it) and has sat at 16 since, wanting far
more: the queue and the age of its oldest message keep growing. Every worker is healthy and
busy; nothing fails, there are just not enough of them."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from tests.data.holdout._generator.base import alive, gauge, logs_for, set_times
from tests.scenario_tools.common import MIB, truth
from tests.scenario_tools.kube import Ctr, Obj, ended, http_probe, iso, running

from .kit import (
    Incident,
    NodeKind,
    app_counter,
    cpu_seconds,
    deploy,
    drift,
    node,
    plain,
    requests,
    restarts_series,
    set_condition,
    start_events,
    working_set,
)

ID = "video-processing-backlog"
NOW = datetime.fromisoformat("2027-03-12T20:26:00+00:00")
NS = "video"
REGION = "us-east-1"
ECR = f"730335211874.dkr.ecr.{REGION}.amazonaws.com"
QUEUE = "video-transcode-jobs"
METRIC = f"s0-aws-sqs-queue-{QUEUE}"
JOB_SECONDS = 150.0
MAX = 16


def _karpenter_node(s: Incident, ip: str, zone: str, pool: str, kind: NodeKind,
                    created: datetime, capacity: str, taints: Sequence[Obj] = ()) -> Obj:
    name = f"ip-{ip.replace('.', '-')}.ec2.internal"
    family = kind.instance.split(".")[0]
    return node(s, name, ip=ip, kind=kind, created=created, region=REGION, zone=zone,
                labels={"karpenter.sh/nodepool": pool, "karpenter.sh/capacity-type": capacity,
                        "karpenter.sh/initialized": "true", "karpenter.sh/registered": "true",
                        "karpenter.k8s.aws/instance-family": family,
                        "karpenter.k8s.aws/instance-cpu": kind.cpu,
                        "karpenter.k8s.aws/ec2nodeclass": "default",
                        "karpenter.k8s.aws/instance-generation": family[1]},
                provider_id=f"aws:///{zone}/i-0{s.cluster.hexid('ec2', name, length=16)}",
                taints=taints)


def build() -> Incident:
    s = Incident(
        id=ID,
        title="Uploaded videos stuck in processing",
        now=NOW,
        report="""\
Since around 19:40 uploaded videos stay in "processing" for 30+ minutes (normally 2-3
minutes). Creators are complaining on socials, there's a big creator campaign running
tonight. Nothing is crashing as far as I can tell, the transcode workers look busy but fine.
What's holding things up?
""",
        truth=truth(
            "autoscaling_limit", "Deployment", NS, "transcode-worker",
            ["ScalingLimited", "TooManyReplicas", "keda-hpa-transcode-worker", "maxReplicas",
             "ApproximateAgeOfOldestMessage"],
            "transcode-worker sits at the HPA's maximum of 16 replicas while the SQS backlog "
            "grows: raise maxReplicaCount of the ScaledObject (the HPA "
            "keda-hpa-transcode-worker) to about 40 — Karpenter's transcode pool has room — "
            "and keep it high until the backlog is gone."))
    set_times(s, 2.0, 60)
    c = s.cluster
    for ns, days in (("default", 660), ("kube-system", 660), (NS, 540), ("creator-studio", 330),
                     ("karpenter", 420), ("keda", 420)):
        c.namespace(ns, s.ago(days=days))
    gen = NodeKind("m7i.xlarge", "4", "15896588Ki", "3920m", "14879756Ki",
                   "v1.32.9-eks-5e0f2a3", "6.1.158-180.294.amzn2023.x86_64",
                   "Amazon Linux 2023.9.20260203", runtime="containerd://1.7.27", pods="58")
    big = NodeKind("c7i.4xlarge", "16", "31960592Ki", "15890m", "30943760Ki",
                   "v1.32.9-eks-5e0f2a3", "6.1.158-180.294.amzn2023.x86_64",
                   "Amazon Linux 2023.9.20260203", runtime="containerd://1.7.27", pods="234")
    general = [_karpenter_node(s, f"10.12.{k * 32 + 3}.{s.rng.randrange(10, 250)}",
                               f"{REGION}{'abd'[k]}", "general", gen,
                               s.ago(days=5.6 - k * 0.7), "on-demand") for k in range(3)]
    taint = [{"effect": "NoSchedule", "key": "workload", "value": "transcode"}]
    c1 = NOW.replace(hour=19, minute=37, second=3)
    c2 = NOW.replace(hour=19, minute=39, second=31)
    tn = [_karpenter_node(s, f"10.12.{k * 32 + 9}.{s.rng.randrange(10, 250)}",
                          f"{REGION}{'abd'[k % 3]}", "transcode", big, when, "spot", taint)
          for k, when in enumerate((s.ago(days=2, hours=3), s.ago(days=1, hours=6),
                                    c1 + timedelta(seconds=46), c2 + timedelta(seconds=44)))]

    # ---- the workload: 4 replicas for days, scaled to 16 between 19:33 and 19:39
    campaign = NOW.replace(hour=19, minute=28, second=0)
    scale = [NOW.replace(hour=19, minute=34, second=10), NOW.replace(hour=19, minute=36,
                                                                     second=55),
             NOW.replace(hour=19, minute=39, second=25)]
    old = s.ago(days=1, hours=6) + timedelta(minutes=4)
    born = [old + timedelta(seconds=30 * i) for i in range(4)]
    born += [scale[0] + timedelta(seconds=1 + 0.2 * i) for i in range(4)]
    born += [scale[1] + timedelta(seconds=1 + 0.2 * i) for i in range(5)]
    born += [scale[2] + timedelta(seconds=1 + 0.2 * i) for i in range(3)]
    where = [tn[0], tn[0], tn[1], tn[1], tn[0], tn[0], tn[0], tn[1], tn[1], tn[1], tn[2],
             tn[2], tn[2], tn[2], tn[2], tn[3]]
    node_up = {id(tn[2]): c1 + timedelta(seconds=46 + 41), id(tn[3]): c2 + timedelta(
        seconds=44 + 41)}
    pulls = {10: 21.4, 11: 22.9, 12: 24.1, 15: 19.8}
    starts: list[datetime] = []
    sched: list[datetime] = []
    for i, b in enumerate(born):
        ready_node = node_up.get(id(where[i]))
        at = max(b, ready_node) + timedelta(seconds=1.5) if ready_node else b + timedelta(
            seconds=0.5)
        sched.append(at)
        pull = pulls.get(i, 0.0) if i >= 4 else 0.0
        starts.append(at + timedelta(seconds=1.2 + pull + (2.0 if i >= 4 and not pull else 0)))

    ff = Ctr("transcode-worker", f"{ECR}/video/transcode-worker:3.11.2", port=9090,
             port_name="metrics", requests={"cpu": "3", "memory": "4Gi"},
             limits={"cpu": "4", "memory": "6Gi"},
             env={"SQS_QUEUE_URL": f"https://sqs.{REGION}.amazonaws.com/730335211874/{QUEUE}",
                  "FFMPEG_THREADS": "4", "OUTPUT_BUCKET": "s3://clipwave-renditions-prod",
                  "LADDER": "1080p,720p,480p,240p", "VISIBILITY_TIMEOUT": "900"},
             liveness=http_probe("/healthz", "metrics", delay=10, period=20))
    work, pods = deploy(
        s, NS, "transcode-worker", [ff], replicas=16, nodes=where, revision=23,
        rollout=old - timedelta(minutes=4), born=lambda i: born[i],
        statuses=lambda i, name, started: {"transcode-worker": running(starts[i])},
        labels={"app.kubernetes.io/name": "transcode-worker", "app.kubernetes.io/part-of":
                "video-pipeline"}, service=None,
        node_selector={"karpenter.sh/nodepool": "transcode"},
        tolerations=[{"effect": "NoSchedule", "key": "workload", "operator": "Equal",
                      "value": "transcode"}])
    for i, pod in enumerate(pods):
        set_condition(pod, "PodScheduled", lastTransitionTime=iso(sched[i]))
        for kind in ("Ready", "ContainersReady"):
            set_condition(pod, kind, lastTransitionTime=iso(starts[i] + timedelta(seconds=1)))
        set_condition(pod, "PodReadyToStartContainers",
                      lastTransitionTime=iso(sched[i] + timedelta(seconds=1)))
        set_condition(pod, "Initialized", lastTransitionTime=iso(sched[i] + timedelta(
            seconds=1)))
        pod["status"]["startTime"] = iso(sched[i])
    rs = work.revisions[-1]
    counts = [(4, 8), (8, 13), (13, 16)]
    hpa_name = "keda-hpa-transcode-worker"
    hpa = c.add({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": c.meta("HorizontalPodAutoscaler", hpa_name, NS, s.ago(days=212), {
            "app.kubernetes.io/managed-by": "keda-operator", "app.kubernetes.io/name":
            hpa_name, "app.kubernetes.io/part-of": "transcode-worker",
            "app.kubernetes.io/version": "2.16.1", "scaledobject.keda.sh/name":
            "transcode-worker"}),
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                    "name": "transcode-worker"},
                 "minReplicas": 4, "maxReplicas": MAX,
                 "metrics": [{"type": "External", "external": {
                     "metric": {"name": METRIC, "selector": {"matchLabels": {
                         "scaledobject.keda.sh/name": "transcode-worker"}}},
                     "target": {"type": "AverageValue", "averageValue": "5"}}}],
                 "behavior": {"scaleDown": {"stabilizationWindowSeconds": 600, "policies": [
                     {"type": "Percent", "value": 25, "periodSeconds": 60}]}}},
        "status": {}})
    for (low, high), when in zip(counts, scale, strict=True):
        c.event(hpa, "SuccessfulRescale", f"New size: {high}; reason: external metric "
                f"{METRIC}(&LabelSelector{{MatchLabels:map[string]string{{scaledobject.keda.sh/"
                "name: transcode-worker,},MatchExpressions:[]LabelSelectorRequirement{},}) "
                "above target", first=when, component="horizontal-pod-autoscaler")
        c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set "
                f"{rs['metadata']['name']} from {low} to {high}", first=when,
                component="deployment-controller")
    for i in range(4, 16):
        pod = pods[i]
        c.event(rs, "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}",
                first=born[i], component="replicaset-controller")
        if id(where[i]) in node_up and born[i] < node_up[id(where[i])]:
            claim = "transcode-7q2xk" if where[i] is tn[2] else "transcode-m4d9s"
            c.event(pod, "FailedScheduling", "0/6 nodes are available: 2 Insufficient cpu, 3 "
                    "node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated"
                    " taint {karpenter.sh/unregistered: }. preemption: 0/6 nodes are available: "
                    "2 No preemption victims found for incoming pod, 4 Preemption is not helpful "
                    "for scheduling.", first=born[i], last=sched[i] - timedelta(seconds=3),
                    count=2, type_="Warning", component="default-scheduler", host="")
            c.event(pod, "Nominated", f"Pod should schedule on: nodeclaim/{claim}",
                    first=born[i] + timedelta(seconds=2), component="karpenter", host="")
        start_events(s, pod, scheduled=sched[i], started=starts[i],
                     pull=pulls.get(i), size=1_288_412_705)
    for k, when in ((2, c1), (3, c2)):
        claim = "transcode-7q2xk" if k == 2 else "transcode-m4d9s"
        name = tn[k]["metadata"]["name"]
        c.event(tn[k], "RegisteredNode", f"Node {name} event: Registered Node {name} in "
                "Controller", first=when + timedelta(seconds=47), component="node-controller",
                host="")
        c.event(tn[k], "NodeReady", f"Node {name} status is now: NodeReady",
                first=when + timedelta(seconds=87), component="kubelet", host=name)
        c.event(tn[k], "Launched", f"Status condition transitioned, Type: Launched, Status: "
                f"True, Reason: Launched (nodeclaim/{claim})", first=when + timedelta(
                    seconds=9), component="karpenter", host="")

    # ---- the queue, simulated minute by minute, and what the HPA saw
    def arrivals(t: int) -> float:
        if t < campaign.timestamp():
            return 1.55 / 60
        ramp = min(1.0, (t - campaign.timestamp()) / 300)
        return (1.55 + 9.9 * ramp + 0.6 * math.sin(t / 530)) / 60

    def workers(t: int) -> int:
        return sum(1 for st in starts if st.timestamp() <= t)
    queue: dict[int, float] = {}
    q = 2.0
    for t in s.times:
        q = max(1.0 + s.rng.random() * 2, q + (arrivals(t) - workers(t) / JOB_SECONDS) * 60)
        queue[t] = q
    edge = scale[2].timestamp()

    def status_replicas(t: int) -> float:
        return float(4 + sum(hi - lo for (lo, hi), w in zip(counts, scale, strict=True)
                             if w.timestamp() <= t))
    for metric, value, help_ in (
            ("kube_horizontalpodautoscaler_status_current_replicas", status_replicas,
             "Current number of replicas of pods managed by this autoscaler."),
            ("kube_horizontalpodautoscaler_status_desired_replicas", status_replicas,
             "Desired number of replicas of pods managed by this autoscaler."),
            ("kube_horizontalpodautoscaler_spec_max_replicas", lambda t: float(MAX),
             "Upper limit for the number of pods that can be set by the autoscaler; cannot be "
             "smaller than MinReplicas."),
):
        gauge(s, metric, {"namespace": NS, "horizontalpodautoscaler": hpa_name}, value, help_)
    gauge(s, "kube_horizontalpodautoscaler_status_condition",
          {"namespace": NS, "horizontalpodautoscaler": hpa_name, "condition": "ScalingLimited",
           "status": "true"}, lambda t: 1.0 if t >= edge + 60 else 0.0,
          "The condition of this autoscaler.")
    gauge(s, "keda_scaler_metrics_value", {"namespace": NS, "scaledObject": "transcode-worker",
                                           "scaler": "awsSqsQueueScaler", "scalerIndex": "0",
                                           "metric": METRIC, "type": "ScaledObject"},
          lambda t: queue[t], "The current value for each scaler's metric that would be used "
          "by the HPA in computing the target average.")
    cw = {"job": "cloudwatch", "queue_name": QUEUE}
    gauge(s, "aws_sqs_approximate_number_of_messages_visible_average", cw,
          lambda t: queue.get(t - 120, queue[s.times[0]]),
          "CloudWatch metric AWS/SQS ApproximateNumberOfMessagesVisible Dimensions: "
          "[QueueName] Statistic: Average Unit: Count")
    gauge(s, "aws_sqs_approximate_age_of_oldest_message_maximum", cw,
          lambda t: 40 + queue.get(t - 120, 2.0) / max(1, workers(t - 120)) * JOB_SECONDS,
          "CloudWatch metric AWS/SQS ApproximateAgeOfOldestMessage Dimensions: [QueueName] "
          "Statistic: Maximum Unit: Seconds")
    last_q, last_w = queue[s.times[-1]], workers(s.times[-1])
    hpa["status"] = {
        "currentReplicas": MAX, "desiredReplicas": MAX, "lastScaleTime": iso(scale[2]),
        "currentMetrics": [{"type": "External", "external": {
            "metric": {"name": METRIC, "selector": {"matchLabels": {
                "scaledobject.keda.sh/name": "transcode-worker"}}},
            "current": {"averageValue": f"{int(last_q / last_w * 1000)}m"}}}],
        "conditions": [
            {"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale",
             "message": "recommended size matches current size",
             "lastTransitionTime": iso(scale[2] + timedelta(seconds=15))},
            {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound",
             "message": "the HPA was able to successfully calculate a replica count from "
             f"external metric {METRIC}(&LabelSelector{{MatchLabels:map[string]string{{"
             "scaledobject.keda.sh/name: transcode-worker,},MatchExpressions:[]"
             "LabelSelectorRequirement{},})", "lastTransitionTime": iso(s.ago(days=5))},
            {"type": "ScalingLimited", "status": "True", "reason": "TooManyReplicas",
             "message": "the desired replica count is more than the maximum replica count",
             "lastTransitionTime": iso(scale[2] + timedelta(seconds=75))}]}

    # ---- the workers: busy, healthy
    for i, pod in enumerate(pods):
        name = pod["metadata"]["name"]
        times = [t for t in alive(s, pod) if t >= starts[i].timestamp() + 15]
        working_set(s, pod, "transcode-worker", drift(s, 2900 * MIB, 0.12, 400), times=times)
        cpu_seconds(s, pod, "transcode-worker", _busy(s, arrivals, workers), times=times)
        app_counter(s, "transcode_jobs_completed_total", {"namespace": NS, "pod": name},
                    times, _per_worker(arrivals, workers), "Transcode jobs finished.",
                    start=s.rng.randrange(3000, 9000) if i < 4 else 0)
    start = NOW - timedelta(hours=2)
    logs_for(s, pods, "transcode-worker", "transcode-worker", [
        ("info", "job v_9QkT2m: 1080p,720p,480p,240p done in 143.8s (source 4m12s, h264)", {}),
        ("info", "job v_9QkT31: received (source 2.1 GB, 3840x2160 hevc), queue wait 2m03s",
         {}),
        ("warn", "job v_9Qk0aa: source has variable frame rate, forcing cfr 30", {}),
        ("info", "uploaded renditions of v_9QkT2m to s3://clipwave-renditions-prod", {}),
    ], 102, start=start, end=NOW)
    logs_for(s, pods, "transcode-worker", "transcode-worker", [
        ("info", "job v_A01xq3: received (source 380 MB, 1920x1080 h264), queue wait 27m41s",
         {}),
        ("info", "job v_A01xq3: 1080p,720p,480p,240p done in 151.2s", {}),
    ], 60, start=scale[2] + timedelta(minutes=20), end=NOW)

    # ---- upload-api: enqueues the jobs, fine
    up = Ctr("upload-api", f"{ECR}/video/upload-api:8.2.0", port=8080,
             requests={"cpu": "500m", "memory": "512Mi"}, limits={"memory": "1Gi"},
             readiness=http_probe("/ready", delay=5), liveness=http_probe("/live", delay=15))
    _, ups = deploy(s, NS, "upload-api", [up], replicas=3, nodes=general, revision=61,
                    rollout=s.ago(days=3, hours=1))
    for pod in ups:
        plain(s, pod, "upload-api", 304)
        requests(s, pod, "upload-api", rps=lambda t: arrivals(t) * 9 / 3, codes={
            "201": lambda t: 0.96, "200": lambda t: 0.03, "413": lambda t: 0.01})
    logs_for(s, ups, "upload-api", "upload-api", [
        ("info", "POST /v1/uploads 201 video=v_9QkT2m size=412MB", {}),
        ("info", "enqueued transcode job v_9QkT2m to video-transcode-jobs", {}),
        ("warn", "S3 multipart part 14 of v_9Qk7zz got 503 SlowDown, retrying", {}),
        ("warn", "POST /v1/uploads 413 file exceeds 10 GB limit", {"http.response.status_code":
                                                                  413}),
    ], 66, start=start, end=NOW)

    # ---- red herrings
    cap = Ctr("caption-worker", f"{ECR}/video/caption-worker:1.6.0", port=9090,
              port_name="metrics", requests={"cpu": "1", "memory": "3Gi"},
              limits={"memory": "4Gi"})
    oom = s.ago(days=2, hours=20, minutes=5)

    def cap_states(i: int, name: str, started: datetime) -> dict[str, Obj]:
        return {"caption-worker": running(oom + timedelta(seconds=1), restarts=1, last=ended(
            "OOMKilled", 137, started, oom))} if i == 0 else {}
    _, caps = deploy(s, NS, "caption-worker", [cap], replicas=2, nodes=general, revision=15,
                     rollout=s.ago(days=4, hours=2), statuses=cap_states, service=None,
                     offset=1)
    for k, pod in enumerate(caps):
        plain(s, pod, "caption-worker", 2450)
        restarts_series(s, pod, "caption-worker", 1 - k, [])
    logs_for(s, caps, "caption-worker", "caption-worker", [
        ("info", "captions for v_9QkT2m: 612 segments, language en (p=0.98)", {}),
        ("warn", "audio track missing for v_9Qk0ab, skipping captions", {}),
    ], 36, start=start, end=NOW)
    sw = Ctr("studio-web", f"{ECR}/creator-studio/studio-web:2027.10.2", port=3000,
             requests={"cpu": "200m", "memory": "384Mi"}, limits={"memory": "768Mi"},
             readiness=http_probe("/api/health", delay=5, timeout=1))
    _, sws = deploy(s, "creator-studio", "studio-web", [sw], replicas=2, nodes=general,
                    revision=310, rollout=s.ago(days=1, hours=2), offset=2)
    blip = NOW - timedelta(minutes=12, seconds=31)
    ip = sws[1]["status"]["podIP"]
    c.event(sws[1], "Unhealthy", f'Readiness probe failed: Get "http://{ip}:3000/api/health": '
            "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            first=blip, last=blip + timedelta(seconds=20), count=3, type_="Warning",
            field_path="spec.containers{studio-web}")
    logs_for(s, sws, "studio-web", "studio-web", [
        ("info", "GET /studio/videos 200", {}),
        ("warn", "video v_9QkT31 still processing after 25m, showing placeholder", {}),
    ], 36, start=scale[2] + timedelta(minutes=10), end=NOW)
    kc = Ctr("controller", "public.ecr.aws/karpenter/controller:1.3.3", port=8080,
             port_name="http-metrics", requests={"cpu": "500m", "memory": "1Gi"},
             limits={"memory": "1Gi"})
    _, kcs = deploy(s, "karpenter", "karpenter", [kc], replicas=2, nodes=general, revision=12,
                    rollout=s.ago(days=5, hours=4), service=8080, target="http-metrics",
                    labels={"app.kubernetes.io/name": "karpenter"})
    for off, msg in ((c1, 'found provisionable pod(s) {"Pods":"video/transcode-worker-… and '
                      '2 other(s)","duration":"41.2ms"}'),
                     (c1 + timedelta(seconds=1), 'created nodeclaim {"NodePool":{"name":'
                      '"transcode"},"NodeClaim":{"name":"transcode-7q2xk"},"requests":{"cpu":'
                      '"9310m","memory":"12776Mi","pods":"6"},"instance-types":"c7i.4xlarge, '
                      'c6i.4xlarge, c7a.4xlarge and 9 other(s)"}'),
                     (c2, 'found provisionable pod(s) {"Pods":"video/transcode-worker-…",'
                      '"duration":"37.9ms"}'),
                     (c2 + timedelta(seconds=1), 'created nodeclaim {"NodePool":{"name":'
                      '"transcode"},"NodeClaim":{"name":"transcode-m4d9s"}}')):
        s.logs.add(off, "info", msg, namespace="karpenter", pod=kcs[0]["metadata"]["name"],
                   container="controller", service="karpenter",
                   node=kcs[0]["spec"]["nodeName"])
    logs_for(s, kcs, "controller", "karpenter", [
        ("info", 'disrupting nodeclaim(s) via delete, terminating 1 nodes (0 pods) '
         '{"reason":"empty","NodePool":{"name":"general"}}', {}),
        ("info", 'computed new nodeclaim(s) to fit pod(s) {"nodeclaims":0,"pods":0}', {}),
    ], 8, start=start, end=campaign)
    return s


def _busy(s: Incident, arrivals: Callable[[int], float],
          workers: Callable[[int], int]) -> Callable[[int], float]:
    """A worker's cores: ffmpeg uses up to 3.9 of its 4 while it has a job."""
    def cores(t: int) -> float:
        load = min(1.0, arrivals(t) * JOB_SECONDS / max(1, workers(t)))
        return (0.15 + 3.75 * load) * s.rng.uniform(0.92, 1.05)
    return cores


def _per_worker(arrivals: Callable[[int], float],
                workers: Callable[[int], int]) -> Callable[[int], float]:
    def rate(t: int) -> float:
        return min(arrivals(t) / max(1, workers(t)), 1 / JOB_SECONDS)
    return rate
