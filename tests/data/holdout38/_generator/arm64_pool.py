"""Tidewater Media: a Graviton node pool and an image built for amd64 only.

The cost change replaced half the amd64 nodes with arm64 ones (no taint, so anything may
land there). thumbnailer's image was pushed for linux/amd64 only: its pods on the new
nodes cannot pull it, its pods on the old nodes keep working, and the growing queue is
blamed on the registry, which had a credential incident last month.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout38._generator import kube as k
from tests.data.holdout38._generator.story import Story

NOW = datetime(2026, 11, 19, 9, 5, 0)
NS = "media-pipeline"
APP = "thumbnailer"
IMAGE = "harbor.tidewater.media/pipeline/thumbnailer:2.31.0"
PULL_ERROR = (f'Failed to pull image "{IMAGE}": rpc error: code = NotFound desc = failed to '
              f'pull and unpack image "{IMAGE}": no matching manifest for linux/arm64/v8 in '
              "the manifest list entries")


def build() -> Story:
    story = Story(
        id="thumbnailer-amd64-only-image",
        title="Thumbnail backlog growing, some thumbnailer pods stuck",
        now=NOW,
        report="""
thumbnail backlog has been growing since last night, new uploads show grey placeholders.
a few thumbnailer pods are stuck pulling, is harbor acting up again? last time it was the
robot account token expiring. the other pods look fine
""",
        truth={"category": "image_pull",
               "culprit": {"kind": "Deployment", "namespace": NS, "name": APP},
               "evidence": ["no matching manifest for linux/arm64/v8",
                            "ImagePullBackOff", "kubernetes.io/arch: arm64"],
               "fix": "Publish thumbnailer as a multi-arch image (linux/amd64 and "
                      "linux/arm64), or pin it to amd64 nodes with a nodeSelector "
                      "kubernetes.io/arch=amd64 until then."})
    made = NOW - timedelta(days=400)
    story.add(k.namespace(NS, made, {"team": "media"}), k.namespace("default", made),
              k.namespace("logging", made))
    amd = [f"ip-10-60-{a}-{b}.us-east-2.compute.internal" for a, b in ((12, 9), (13, 140),
                                                                        (14, 77))]
    arm = [f"ip-10-60-{a}-{b}.us-east-2.compute.internal" for a, b in ((12, 201), (13, 33),
                                                                        (14, 118))]
    for i, name in enumerate(amd):
        story.add(k.node(name, NOW - timedelta(days=19, hours=i), cpu="7910m", memory="30Gi",
                         heartbeat=NOW - timedelta(seconds=14),
                         labels={"karpenter.sh/nodepool": "general",
                                 "node.kubernetes.io/instance-type": "m6i.2xlarge",
                                 "topology.kubernetes.io/zone": f"us-east-2{'abc'[i]}"}))
    for i, name in enumerate(arm):
        story.add(k.node(name, NOW - timedelta(hours=15, minutes=20 * i), arch="arm64",
                         cpu="7910m", memory="30Gi", heartbeat=NOW - timedelta(seconds=11),
                         labels={"karpenter.sh/nodepool": "graviton",
                                 "node.kubernetes.io/instance-type": "m7g.2xlarge",
                                 "topology.kubernetes.io/zone": f"us-east-2{'abc'[i]}"}))
    app = k.container(APP, IMAGE, cpu="1500m", memory="2Gi", memory_limit="2Gi",
                      env=[{"name": "AMQP_URL", "value": "amqp://rabbitmq.media-pipeline:5672"},
                           {"name": "WORKERS", "value": "3"},
                           {"name": "OUTPUT_BUCKET", "value": "tw-media-thumbs-prod"}],
                      ports=[{"containerPort": 9100, "name": "metrics"}],
                      imagePullPolicy="IfNotPresent")
    rolled = NOW - timedelta(days=4, hours=7)
    deploy = k.workload("Deployment", NS, APP, made, [app], replicas=8,
                        annotations={"deployment.kubernetes.io/revision": "58"},
                        pod_spec={"imagePullSecrets": [{"name": "harbor-robot-pipeline"}]},
                        status=k.deployment_status(8, 4, 8, at=NOW - timedelta(hours=9)))
    rs_hash = k.pod_hash(NS, APP, "58")
    rs = k.replicaset(deploy, rs_hash, 58, rolled, [app], replicas=8, ready=4)
    story.add(deploy, rs)
    for i in range(8):
        name = f"{APP}-{rs_hash}-{k.suffix(APP, str(i))}"
        if i < 4:
            host, created = amd[i % 3], rolled + timedelta(seconds=25 * i)
            story.add(k.pod(rs, name, host, created, {APP: k.running(created + timedelta(
                seconds=9))}, ip=f"10.60.{12 + i % 3}.{40 + i}"))
            _worker_logs(story, name)
            continue
        host = arm[i % 3]
        created = NOW - timedelta(hours=9, minutes=50 - 6 * i)
        story.add(k.pod(rs, name, host, created, {APP: k.waiting(
            "ImagePullBackOff", f'Back-off pulling image "{IMAGE}"')}, phase="Pending",
            ip=f"10.60.{12 + i % 3}.{210 + i}"))
        last = NOW - timedelta(minutes=2, seconds=17 * i)
        story.add(k.event(NS, "Pod", name, "Pulling", f'Pulling image "{IMAGE}"',
                          NOW - timedelta(minutes=52), last, count=118 - i, host=host),
                  k.event(NS, "Pod", name, "Failed", PULL_ERROR, NOW - timedelta(minutes=52),
                          last, count=118 - i, type_="Warning", host=host),
                  k.event(NS, "Pod", name, "Failed", "Error: ErrImagePull",
                          NOW - timedelta(minutes=52), last, count=118 - i, type_="Warning",
                          host=host),
                  k.event(NS, "Pod", name, "BackOff", f'Back-off pulling image "{IMAGE}"',
                          NOW - timedelta(minutes=55), NOW - timedelta(seconds=20 + 7 * i),
                          count=2610 - 30 * i, host=host),
                  k.event(NS, "Pod", name, "Failed", "Error: ImagePullBackOff",
                          NOW - timedelta(minutes=55), NOW - timedelta(seconds=20 + 7 * i),
                          count=2610 - 30 * i, type_="Warning", host=host))
    _bystanders(story, made, amd, arm)
    _queue(story)
    return story


def _worker_logs(story: Story, pod: str) -> None:
    rng = story.rng
    moment = NOW - timedelta(hours=3)
    lines = []
    while moment < NOW:
        size = rng.choice(["1080x1350", "4032x3024", "1920x1080", "3000x2000"])
        lines.append(f"{moment:%Y-%m-%dT%H:%M:%S}.{rng.randint(0, 999):03d}Z level=info "
                     "logger=thumbnailer.worker msg=\"job done\" "
                     f"job=tj-{rng.randint(10**6, 10**7)} source={size} variants=4 "
                     f"took_ms={rng.randint(350, 1900)}")
        if rng.random() < 0.05:
            lines.append(f"{moment:%Y-%m-%dT%H:%M:%S}.{rng.randint(0, 999):03d}Z level=warning "
                         "logger=thumbnailer.queue msg=\"backlog above threshold\" "
                         f"ready={rng.randint(9000, 42000)} consumers=12")
        if rng.random() < 0.01:
            lines.append(f"{moment:%Y-%m-%dT%H:%M:%S}.{rng.randint(0, 999):03d}Z level=error "
                         "logger=thumbnailer.decode msg=\"cannot decode source\" "
                         "error=\"PIL.UnidentifiedImageError: cannot identify image file\"")
        moment += timedelta(seconds=rng.randint(2, 9))
    story.log(NS, pod, APP, lines)
    story.mirror(NS, pod, APP, APP, every=3)


def _bystanders(story: Story, made: datetime, amd: list[str], arm: list[str]) -> None:
    story.add(*k.healthy_deployment(
        NS, "transcoder-api", "harbor.tidewater.media/pipeline/transcoder-api:5.2.4", made,
        NOW - timedelta(hours=14), [arm[0], amd[1], arm[2], amd[0]],
        ["10.60.12.231", "10.60.13.44", "10.60.14.190", "10.60.12.61"], replicas=4,
        cpu="500m", memory="1Gi", port=8080, revision=77))
    story.add(*k.healthy_deployment(
        NS, "upload-gateway", "harbor.tidewater.media/pipeline/upload-gateway:1.19.2", made,
        NOW - timedelta(days=3), [amd[2], arm[1], amd[0]],
        ["10.60.14.12", "10.60.13.222", "10.60.12.19"], replicas=3, cpu="250m",
        memory="512Mi", port=8080, revision=40))
    agent = k.container("fluent-bit", "cr.fluentbit.io/fluent/fluent-bit:3.1.9", cpu="50m",
                        memory="96Mi", memory_limit="192Mi")
    nodes = amd + arm
    ds = k.workload("DaemonSet", "logging", "fluent-bit", made, [agent],
                    status={"desiredNumberScheduled": 6, "currentNumberScheduled": 6,
                            "numberReady": 6, "updatedNumberScheduled": 6,
                            "numberAvailable": 6, "numberMisscheduled": 0})
    story.add(ds)
    for i, host in enumerate(nodes):
        name = f"fluent-bit-{k.suffix('fb', host)}"
        created = NOW - timedelta(days=6) if i < 3 else NOW - timedelta(hours=15, minutes=
                                                                          20 * (i - 3) - 1)
        story.add(k.pod(ds, name, host, created, {"fluent-bit": k.running(
            created + timedelta(seconds=4))}, owner_kind="DaemonSet",
            ip=f"10.60.{12 + i % 3}.{3 + i}"))
    story.add(k.event("logging", "Pod", f"fluent-bit-{k.suffix('fb', amd[1])}", "Unhealthy",
                      "Liveness probe failed: Get \"http://10.60.13.4:2020/api/v1/health\": "
                      "context deadline exceeded (Client.Timeout exceeded while awaiting "
                      "headers)", NOW - timedelta(minutes=33), count=1, type_="Warning",
                      host=amd[1]))
    story.add(k.event("", "Node", arm[2], "RegisteredNode",
                      f"Node {arm[2]} event: Registered Node {arm[2]} in Controller",
                      NOW - timedelta(minutes=48), component="node-controller"))


def _queue(story: Story) -> None:
    ready = 1800.0
    for at in story.steps(NOW - timedelta(hours=12), NOW, timedelta(minutes=2)):
        hour = at.hour + at.minute / 60
        arrivals = 2.4 if hour >= 6 or hour < 1 else 1.2
        capacity = 2.3 if at < NOW - timedelta(hours=9, minutes=52) else 1.2
        ready = max(ready + 120 * (arrivals - capacity) + story.rng.uniform(-40, 40), 300)
        story.sample("rabbitmq_queue_messages_ready", "gauge",
                     {"namespace": NS, "queue": "thumbnail-jobs", "vhost": "/"}, at, ready)
        story.sample("rabbitmq_queue_consumers", "gauge",
                     {"namespace": NS, "queue": "thumbnail-jobs", "vhost": "/"}, at,
                     24 if capacity > 2 else 12)
