"""Public procurement: bidders' uploads are slow and some conversions fail. doc-converter
(Gotenberg) is the only workload that still pulls its image anonymously from Docker Hub.
At 09:02 its HPA asked for four replicas and the cluster autoscaler added two nodes; on the
new nodes the pull fails with 429 toomanyrequests (the unauthenticated rate limit of the
NAT gateway's address is used up by the CI runners behind the same address), so the two new
pods sit in ImagePullBackOff and the two old pods carry the closing-day load. Red herrings:
the HPA itself (below its maximum), the autoscaler's scale-up, tender-portal timeouts that
are only the symptom, and an antivirus scanner's signature update warnings."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gauge, set_times
from tests.data.holdout2._generator.kit import NodeKind, deploy, requests
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, http_probe, running, waiting

from .kit4 import Incident, hexof, hpa, pool, uuid_of

ID = "tender-uploads-slow"
NOW = datetime.fromisoformat("2027-09-30T09:48:00+00:00")
NS = "procurement"
SWR = "swr.ap-southeast-3.myhuaweicloud.com/etender"
IMAGE = "gotenberg/gotenberg:8.17.3"
LIMIT_MSG = ('Failed to pull image "gotenberg/gotenberg:8.17.3": failed to pull and unpack '
             'image "docker.io/gotenberg/gotenberg:8.17.3": failed to copy: httpReadSeeker: '
             "failed open: unexpected status code https://registry-1.docker.io/v2/gotenberg/"
             "gotenberg/manifests/sha256:6b0f2c7d9a41e3b85c1d27f04a9e6b3c8d5f12a7e90b4c6d3e18"
             "f5a2b7c90d41: 429 Too Many Requests - Server message: toomanyrequests: You have "
             "reached your unauthenticated pull rate limit. "
             "https://www.docker.com/increase-rate-limit")


def build() -> Incident:
    s = Incident(
        id=ID,
        title="Tender document uploads slow, some conversions fail",
        now=NOW,
        report="""\
Today is closing day for the bridge-maintenance tender and bidders complain that uploading
their documents takes minutes; some get "Die Umwandlung ist fehlgeschlagen, bitte später
erneut versuchen". tender-portal logs timeouts towards the converter. Started a bit after
09:00. We have until 12:00 when the tender closes. Please have a look.
""",
        truth=truth(
            "image_pull", "Deployment", NS, "doc-converter",
            ["ImagePullBackOff", "toomanyrequests", "429 Too Many Requests",
             "docker.io/gotenberg/gotenberg:8.17.3"],
            "The two new doc-converter pods cannot pull gotenberg/gotenberg:8.17.3 from "
            "Docker Hub: 429 toomanyrequests (unauthenticated pull rate limit of the NAT "
            "address). Mirror the image into SWR (or add Docker Hub credentials as an "
            "imagePullSecret) and point doc-converter at it; the HPA already wants four "
            "replicas."))
    set_times(s, 2.0, 60)
    c = s.cluster
    namespaces(s, {"default": 460, "kube-system": 460, NS: 380, "security": 300})
    kind = NodeKind("c7.2xlarge.2", "8", "16082700Ki", "7600m", "13219084Ki",
                    "v1.31.4-r0-31.0.2.1", "5.10.0-182.0.0.95.r2220_156.hce2.x86_64",
                    "Huawei Cloud EulerOS 2.0 (x86_64)", runtime="containerd://1.7.11",
                    pods="64")

    def namer(i: int) -> tuple[str, str]:
        ip = f"192.168.{i % 2}.{37 + 19 * i}"
        return ip, ip

    def labels(i: int, n: str) -> dict[str, str]:
        return {"node.kubernetes.io/instance-type": "c7.2xlarge.2",
                "node.cce.io/nodepool-id": "f3b1c8e2-9a47-11ef-8d2e-0255ac10004b",
                "os.name": "HCE_OS_2.0", "node.kubernetes.io/subnetid":
                uuid_of(s, "subnet")}
    old_nodes = pool(s, 3, kind=kind, namer=namer, days=6.2, region="ap-southeast-3",
                     zones=["ap-southeast-3a", "ap-southeast-3b"], labels=labels,
                     provider=lambda i, n: uuid_of(s, "ecs", n), cidr=lambda i: None)
    scale = NOW.replace(hour=9, minute=2, second=11)
    new_nodes = []
    for i, n in enumerate(pool(s, 2, kind=kind, namer=namer, days=0.0, region="ap-southeast-3",
                               zones=["ap-southeast-3a", "ap-southeast-3b"], labels=labels,
                               provider=lambda i, n: uuid_of(s, "ecs", n),
                               cidr=lambda i: None, first=3)):
        n["metadata"]["creationTimestamp"] = (scale + timedelta(seconds=74 + 9 * i)
                                              ).strftime("%Y-%m-%dT%H:%M:%SZ")
        for cond in n["status"]["conditions"]:
            cond["lastTransitionTime"] = (scale + timedelta(seconds=118 + 9 * i)
                                          ).strftime("%Y-%m-%dT%H:%M:%SZ")
        new_nodes.append(n)

    # ---- doc-converter: two old pods run, two new ones cannot pull
    conv = Ctr("gotenberg", IMAGE, port=3000, requests={"cpu": "1", "memory": "1Gi"},
               limits={"memory": "2Gi"},
               args=["gotenberg", "--api-timeout=120s", "--libreoffice-restart-after=50",
                     "--chromium-disable-javascript=true"],
               readiness=http_probe("/health", delay=5, period=10),
               liveness=http_probe("/health", delay=30, period=20, timeout=5))
    def states(i: int, name: str, started: datetime) -> dict[str, dict]:
        if i < 2:
            return {}
        return {"gotenberg": waiting("ImagePullBackOff", f'Back-off pulling image "{IMAGE}"')}

    def born(i: int) -> datetime:
        if i < 2:
            return s.ago(days=4, hours=2) + timedelta(seconds=21 * i)
        return scale + timedelta(seconds=3 + i)
    work, pods = deploy(s, NS, "doc-converter", [conv], replicas=4,
                        nodes=[old_nodes[0], old_nodes[1], old_nodes[2], old_nodes[0]],
                        revision=9, rollout=s.ago(days=4, hours=2, minutes=1), statuses=states,
                        born=born, service=3000)
    for i, pod in enumerate(pods[2:]):
        target = new_nodes[i]
        pod["spec"]["nodeName"] = target["metadata"]["name"]
        ip = target["status"]["addresses"][0]["address"]
        pod["status"]["hostIP"] = ip
        pod["status"]["hostIPs"] = [{"ip": ip}]
        pod["status"]["podIP"] = f"172.16.{8 + i}.{s.rng.randrange(10, 200)}"
        pod["status"]["podIPs"] = [{"ip": pod["status"]["podIP"]}]
        pod["status"]["startTime"] = (scale + timedelta(seconds=131 + 9 * i)
                                      ).strftime("%Y-%m-%dT%H:%M:%SZ")
        meta = pod["metadata"]
        created = scale + timedelta(seconds=3 + i)
        c.event(pod, "FailedScheduling", "0/3 nodes are available: 3 Insufficient cpu. "
                "preemption: 0/3 nodes are available: 3 No preemption victims found for "
                "incoming pod.", first=created, type_="Warning",
                component="default-scheduler", host="")
        c.event(pod, "TriggeredScaleUp", "pod triggered scale-up: [{general-c7 3->5 (max: 8)}]",
                first=created + timedelta(seconds=11), component="cluster-autoscaler", host="")
        c.event(pod, "Scheduled", f"Successfully assigned {NS}/{meta['name']} to "
                f"{target['metadata']['name']}", first=scale + timedelta(seconds=130 + 9 * i),
                component="default-scheduler", host="")
        first = scale + timedelta(seconds=133 + 9 * i)
        tries = 11 + i
        c.event(pod, "Pulling", f'Pulling image "{IMAGE}"', first=first, last=NOW -
                timedelta(seconds=s.rng.randrange(40, 200)), count=tries,
                field_path="spec.containers{gotenberg}")
        c.event(pod, "Failed", LIMIT_MSG, first=first + timedelta(seconds=1.3),
                last=NOW - timedelta(seconds=s.rng.randrange(30, 190)), count=tries,
                type_="Warning", field_path="spec.containers{gotenberg}")
        c.event(pod, "Failed", "Error: ErrImagePull", first=first + timedelta(seconds=1.3),
                last=NOW - timedelta(seconds=s.rng.randrange(30, 190)), count=tries,
                type_="Warning", field_path="spec.containers{gotenberg}")
        c.event(pod, "BackOff", f'Back-off pulling image "{IMAGE}"',
                first=first + timedelta(seconds=2), last=NOW - timedelta(seconds=8),
                count=181 + 7 * i, field_path="spec.containers{gotenberg}")
        c.event(pod, "Failed", "Error: ImagePullBackOff", first=first + timedelta(seconds=2),
                last=NOW - timedelta(seconds=8), count=181 + 7 * i, type_="Warning",
                field_path="spec.containers{gotenberg}")
        gauge(s, "kube_pod_container_status_waiting_reason",
              {"namespace": NS, "pod": meta["name"], "container": "gotenberg",
               "reason": "ImagePullBackOff"}, lambda t: 1.0,
              "Describes the reason the container is currently in waiting state.",
              times=[t for t in s.times if t >= first.timestamp() + 30])
    hpa(s, work, min_=2, max_=8, metrics=[{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}],
        current=[{"type": "Resource", "resource": {"name": "cpu", "current": {
            "averageUtilization": 96, "averageValue": "962m"}}}], replicas=4, desired=4,
        created=s.ago(days=200), last_scale=scale, conditions=[
            ("AbleToScale", "True", "ReadyForNewScale",
             "recommended size matches current size", scale + timedelta(minutes=5)),
            ("ScalingActive", "True", "ValidMetricFound", "the HPA was able to successfully "
             "calculate a replica count from cpu resource utilization (percentage of request)",
             s.ago(days=3)),
            ("ScalingLimited", "False", "DesiredWithinRange",
             "the desired count is within the acceptable range", s.ago(days=3))])
    c.event(work.obj, "SuccessfulRescale", "New size: 4; reason: cpu resource utilization "
            "(percentage of request) above target", first=scale - timedelta(seconds=1),
            component="horizontal-pod-autoscaler", host="")
    rs_name = work.revisions[-1]["metadata"]["name"]
    c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set {rs_name} from 2 to 4",
            first=scale, component="deployment-controller", host="")

    def load(t: int) -> float:
        return 1.0 + 1.7 * min(1.0, max(0.0, (t - scale.timestamp() + 900) / 2400))
    for pod in pods[:2]:
        quiet(s, [pod], "gotenberg", 760)
        requests(s, pod, "doc-converter", rps=lambda t: 0.9 * load(t), codes={
            "200": lambda t: 0.99 - 0.05 * max(0.0, load(t) - 2.0),
            "503": lambda t: 0.004 + 0.06 * max(0.0, load(t) - 2.0)})
        gauge(s, "gotenberg_libreoffice_queue_length", {"namespace": NS,
                                                       "pod": pod["metadata"]["name"]},
              lambda t: max(0.0, 18 * (load(t) - 1.6)) + s.rng.uniform(0, 2),
              "Current number of requests waiting for a LibreOffice process.")
    chatter(s, pods[:2], "gotenberg", "doc-converter", [
        ("info", "request to /forms/libreoffice/convert handled in 4.912s", {}),
        ("warn", "request to /forms/libreoffice/convert handled in 38.204s", {}),
        ("error", "convert to PDF: context deadline exceeded (api-timeout 120s)",
         {"http.response.status_code": 503}),
    ], 120, start=scale)
    chatter(s, pods[:2], "gotenberg", "doc-converter", [
        ("info", "request to /forms/libreoffice/convert handled in 2.120s", {}),
    ], 20, end=scale)

    # ---- tender-portal: the symptom
    portal = Ctr("tender-portal", f"{SWR}/tender-portal:11.4.0", port=8080,
                 requests={"cpu": "300m", "memory": "768Mi"}, limits={"memory": "1Gi"},
                 readiness=http_probe("/ready"))
    _, portals = steady(s, NS, "tender-portal", [portal], nodes=old_nodes, replicas=3,
                        revision=57, rollout=s.ago(days=2, hours=20), offset=1)
    quiet(s, portals, "tender-portal", 690)
    chatter(s, portals, "tender-portal", "tender-portal", [
        ("warn", "upload TND-2027-0412 lot 2: conversion via doc-converter timed out after "
         "120s, retry 1/2", {}),
        ("error", "upload TND-2027-0412 lot 1: conversion failed: 503 Service Unavailable "
         "from http://doc-converter.procurement.svc:3000", {}),
        ("info", "bid envelope sealed for TND-2027-0412 by bidder 40-118-227", {}),
    ], 160, start=scale + timedelta(minutes=8))
    clam = Ctr("clamav", f"{SWR}/clamav:1.4.2", port=3310, port_name="clamd",
               requests={"cpu": "200m", "memory": "1536Mi"}, limits={"memory": "3Gi"},
               readiness=None)
    _, clams = steady(s, "security", "upload-scanner", [clam], nodes=old_nodes, replicas=2,
                      revision=21, rollout=s.ago(days=5, hours=3), service=3310,
                      target="clamd", offset=2)
    quiet(s, clams, "clamav", 1350)
    chatter(s, clams, "clamav", "upload-scanner", [
        ("warn", "freshclam: Can't query current.cvd.clamav.net, mirror may be rate limited, "
         "retrying in 30 minutes", {}),
        ("info", "instream(10.0.1.14@52110): OK", {}),
    ], 40)
    for n in new_nodes:
        c.event(n, "RegisteredNode", f"Node {n['metadata']['name']} event: Registered Node "
                f"{n['metadata']['name']} in Controller", first=scale + timedelta(seconds=80),
                component="node-controller", host="")
    _ = (running, hexof)
    return s
