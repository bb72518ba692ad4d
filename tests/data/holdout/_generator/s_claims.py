"""Claims: the attachments tab fails after a StatefulSet rollout. claims-store 2.14.0 (all five
pods updated an hour ago) cannot serialise java.time.Instant in the attachments DTO, so that
one endpoint answers 500; every other endpoint and the previous revision were fine."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from tests.scenario_tools.common import MIB, Story, container_metrics, truth
from tests.scenario_tools.failures import image_pull_events, image_pull_status
from tests.scenario_tools.kube import Ctr, Template, http_probe, iso, running
from tests.scenario_tools.telemetry import gauge_points, integrate

from .base import (
    PCtr,
    alive,
    deployment,
    eks_nodes,
    http_series,
    logs_for,
    quiet_container,
    set_times,
)

ID = "claims-attachments-errors"
NOW = datetime.fromisoformat("2027-01-22T19:41:00+00:00")
REGION = "ca-central-1"
ECR = f"598014377251.dkr.ecr.{REGION}.amazonaws.com"
OLD, NEW = "2.13.4", "2.14.0"
BUCKETS = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0)
ATTACH = "/api/v2/claims/{id}/attachments"
JACKSON = ("com.fasterxml.jackson.databind.exc.InvalidDefinitionException: Java 8 date/time type "
           "`java.time.Instant` not supported by default: add Module \"com.fasterxml.jackson."
           "datatype:jackson-datatype-jsr310\" to enable handling (through reference chain: "
           "java.util.ArrayList[0]->com.northwind.claims.api.AttachmentDto[\"uploadedAt\"])")


def build() -> Story:
    s = Story(
        id=ID,
        title="Claim attachments tab failing for adjusters",
        now=NOW,
        report="""\
Adjusters say the claim screen shows "Something went wrong" as soon as they open the
Attachments tab, since about 18:45 UTC. Everything else on the claim screen loads. The 5xx
alert for claims fired but only at ~6%. Can you find out why?
""",
        truth=truth(
            "bad_rollout", "StatefulSet", "claims", "claims-store",
            [NEW, "InvalidDefinitionException", "java.time.Instant",
             f"GET {ATTACH} 500"],
            f"Roll claims-store back to {OLD} (kubectl rollout undo statefulset/claims-store) "
            "and register the JavaTimeModule (jackson-datatype-jsr310) in the ObjectMapper of "
            f"{NEW} before shipping it again."))
    set_times(s, 3.0, 60)
    c = s.cluster
    t0 = NOW - timedelta(minutes=57, seconds=20)
    for ns, days in (("default", 530), ("kube-system", 530), ("claims", 366),
                     ("finance-staging", 88)):
        c.namespace(ns, s.ago(days=days))
    nodes = eks_nodes(s, 4, region=REGION, subnet=88, pool="br-general", instance="r6i.xlarge",
                      kubelet="v1.32.9-eks-5e0f2a3", kernel="6.1.141",
                      os_image="Bottlerocket OS 1.48.0 (aws-k8s-1.32)", cpu="4",
                      memory="32386408Ki", alloc_cpu="3920m", alloc_memory="31369576Ki",
                      pods="58", days=6.1, runtime="containerd://1.7.27+bottlerocket",
                      zones="abd")
    c.add({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
           "metadata": c.meta("StorageClass", "gp3", "", s.ago(days=530), annotations={
               "storageclass.kubernetes.io/is-default-class": "true"}),
           "provisioner": "ebs.csi.aws.com", "parameters": {"type": "gp3", "encrypted": "true"},
           "reclaimPolicy": "Delete", "volumeBindingMode": "WaitForFirstConsumer",
           "allowVolumeExpansion": True})

    # ---- claims-store: a 5-pod StatefulSet rolled from OLD to NEW, highest ordinal first
    labels = {"app.kubernetes.io/name": "claims-store", "app.kubernetes.io/part-of": "claims"}

    def ctr(version: str) -> PCtr:
        return PCtr("claims-store", f"{ECR}/claims/claims-store:{version}", port=None,
                    requests={"cpu": "500m", "memory": "2Gi"}, limits={"memory": "3Gi"},
                    env={"JAVA_TOOL_OPTIONS": "-XX:MaxRAMPercentage=70", "SPRING_PROFILES_ACTIVE":
                         "prod", "SHARD_COUNT": "5", "ROCKSDB_PATH": "/data/rocksdb"},
                    readiness=http_probe("/actuator/health/readiness", 8080, delay=20, period=5),
                    liveness=http_probe("/actuator/health/liveness", 8080, delay=90, period=15),
                    mounts=[{"mountPath": "/data", "name": "data"}],
                    ports=[("http", 8080, "TCP"), ("mgmt", 8081, "TCP")])
    tpl_old = Template([ctr(OLD)], service_account="claims-store",
                       labels={"app.kubernetes.io/version": OLD})
    tpl_new = Template([ctr(NEW)], service_account="claims-store",
                       labels={"app.kubernetes.io/version": NEW})
    sts = c.workload("StatefulSet", "claims", "claims-store", tpl_new, replicas=5,
                     created=s.ago(days=366), labels=labels)
    sts.obj["metadata"]["generation"] = 23
    sts.obj["spec"].update({
        "serviceName": "claims-store-headless", "podManagementPolicy": "OrderedReady",
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
        "revisionHistoryLimit": 10,
        "volumeClaimTemplates": [{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                  "metadata": {"name": "data"},
                                  "spec": {"accessModes": ["ReadWriteOnce"], "resources": {
                                      "requests": {"storage": "100Gi"}},
                                      "storageClassName": "gp3", "volumeMode": "Filesystem"}}]})
    old_at = s.ago(days=4, hours=6, minutes=12)
    c.revision(sts, 22, old_at, tpl_old)
    rev_new = c.revision(sts, 23, t0, tpl_new)
    ghosts, pods, swaps = [], [], {}
    for i in (4, 3, 2, 1, 0):
        swaps[i] = t0 + timedelta(seconds=(4 - i) * 52 + s.rng.uniform(0, 6))
    for i in range(5):
        node = nodes[i % len(nodes)]
        old_born = old_at + timedelta(seconds=(4 - i) * 55)
        gone = swaps[i]
        ip_old = ".".join(node["status"]["addresses"][0]["address"].split(".")[:3]) + \
            f".{s.rng.randrange(10, 250)}"
        ghosts.append({"metadata": {"name": f"claims-store-{i}", "namespace": "claims",
                                    "creationTimestamp": iso(old_born),
                                    "_deleted": int(gone.timestamp())},
                       "spec": {"nodeName": node["metadata"]["name"]}, "_ip": ip_old})
        born = gone + timedelta(seconds=1.2)
        started = born + timedelta(seconds=5)
        pod = c.pod(sts, rev_new, node=node, created=born, name=f"claims-store-{i}",
                    statuses={"claims-store": running(started)},
                    ready_since=started + timedelta(seconds=44))
        pod["metadata"]["labels"]["apps.kubernetes.io/pod-index"] = str(i)
        pod["spec"]["hostname"] = f"claims-store-{i}"
        pod["spec"]["subdomain"] = "claims-store-headless"
        pod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {
            "claimName": f"data-claims-store-{i}"}}]
        pods.append(pod)
        c.add({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
               "metadata": c.meta("PersistentVolumeClaim", f"data-claims-store-{i}", "claims",
                                  s.ago(days=366) + timedelta(minutes=i), labels,
                                  annotations={"pv.kubernetes.io/bind-completed": "yes",
                                               "pv.kubernetes.io/bound-by-controller": "yes",
                                               "volume.kubernetes.io/selected-node":
                                               node["metadata"]["name"],
                                               "volume.kubernetes.io/storage-provisioner":
                                               "ebs.csi.aws.com"},
                                  finalizers=["kubernetes.io/pvc-protection"]),
               "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {
                   "storage": "100Gi"}}, "storageClassName": "gp3", "volumeMode": "Filesystem",
                   "volumeName": f"pvc-{c.uid('pv', str(i))}"},
               "status": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "100Gi"},
                          "phase": "Bound"}})
        # controller and kubelet events of the rollout (all within the hour)
        c.event(sts.obj, "SuccessfulDelete", f"delete Pod claims-store-{i} in StatefulSet "
                "claims-store successful", first=gone, component="statefulset-controller")
        c.event(sts.obj, "SuccessfulCreate", f"create Pod claims-store-{i} in StatefulSet "
                "claims-store successful", first=born, component="statefulset-controller")
        c.event(pod, "Scheduled", f"Successfully assigned claims/claims-store-{i} to "
                f"{node['metadata']['name']}", first=born, component="default-scheduler", host="")
        field = "spec.containers{claims-store}"
        image = f"{ECR}/claims/claims-store:{NEW}"
        if i == 4 or i == 0:
            c.event(pod, "Pulling", f'Pulling image "{image}"', first=born + timedelta(seconds=1),
                    field_path=field)
            c.event(pod, "Pulled", f'Successfully pulled image "{image}" in 2.87s (2.87s '
                    "including waiting). Image size: 187342211 bytes.", first=started -
                    timedelta(seconds=1), field_path=field)
        else:
            c.event(pod, "Pulled", f'Container image "{image}" already present on machine',
                    first=started - timedelta(seconds=1), field_path=field)
        c.event(pod, "Created", "Created container: claims-store", first=started -
                timedelta(seconds=1), field_path=field)
        c.event(pod, "Started", "Started container claims-store", first=started,
                field_path=field)
        ip = pod["status"]["podIP"]
        n = s.rng.randrange(3, 6)
        c.event(pod, "Unhealthy", f'Readiness probe failed: Get "http://{ip}:8080/actuator/'
                f'health/readiness": dial tcp {ip}:8080: connect: connection refused',
                first=started + timedelta(seconds=21), last=started + timedelta(seconds=21 + 5 * (
                    n - 1)), count=n, type_="Warning", field_path=field)
        c.event(pod, "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: "
                "503", first=started + timedelta(seconds=36), last=started + timedelta(
                    seconds=41), count=2, type_="Warning", field_path=field)
    headless = {"app.kubernetes.io/name": "claims-store"}
    c.service("claims", "claims-store", headless, port=80, target="http", created=s.ago(days=366))

    # ---- metrics: old and new instances are different series (instance, image)
    def instance_metrics(pod: dict, ip: str, version: str) -> None:
        name = pod["metadata"]["name"]
        image = f"{ECR}/claims/claims-store:{version}"
        times = alive(s, pod)
        base = s.rng.uniform(1480, 1620) * MIB
        mlabels = {"namespace": "claims", "pod": name, "container": "claims-store",
                   "image": image}
        s.metrics.gauge("container_memory_working_set_bytes", mlabels, gauge_points(
            times, lambda t: base * (1 + 0.02 * math.sin(t / 900)), s.rng, 0.005),
            "Current working set of the container in bytes")
        s.metrics.counter("container_cpu_usage_seconds_total", mlabels, integrate(
            times, lambda t: 0.38 * _day(t), start=s.rng.uniform(10, 40) if version == NEW
            else s.rng.uniform(20000, 60000), rng=s.rng, whole=False),
            "Cumulative cpu time consumed in seconds.")
        def err(t: int, v=version) -> float:
            return 0.0585 if v == NEW else 0.0
        http_series(s, pod, "claims-store", extra={"instance": f"{ip}:8080"},
                    rps=lambda t: 11 * _day(t),
                    codes={"200": lambda t, e=err: 0.955 - e(t), "201": lambda t: 0.03,
                           "404": lambda t: 0.012, "500": lambda t, e=err: 0.0002 + e(t)},
                    median=lambda t: 0.024, buckets=BUCKETS)
    for g in ghosts:
        instance_metrics(g, g["_ip"], OLD)
    for pod in pods:
        instance_metrics(pod, pod["status"]["podIP"], NEW)
    restarts_fam = s.metrics.family("kube_pod_container_status_restarts", "counter",
                                    "The number of container restarts per container.")
    for g, pod in zip(ghosts, pods, strict=True):
        lab = {"namespace": "claims", "pod": pod["metadata"]["name"], "container": "claims-store"}
        restarts_fam.add(lab, [(t, 0) for t in s.times if t in set(alive(s, g)) or t in set(
            alive(s, pod))])

    # ---- logs: old revision serves attachments, new one fails on them
    start = NOW - timedelta(hours=3)
    common = [
        ("info", "GET /api/v2/claims/{id} 200 18ms", {"http.response.status_code": 200,
                                                       "url.path": "/api/v2/claims/{id}"}),
        ("info", "GET /api/v2/claims/{id}/notes 200 9ms", {"http.response.status_code": 200,
                                                            "url.path":
                                                            "/api/v2/claims/{id}/notes"}),
        ("info", "POST /api/v2/claims/{id}/notes 201 27ms", {"http.response.status_code": 201}),
        ("warn", "shard 2 compaction took 1840 ms", {}),
        ("info", "GET /api/v2/claims?status=OPEN&adjuster=... 200 64ms", {}),
    ]
    for g in ghosts:
        gone = datetime.fromtimestamp(g["metadata"]["_deleted"], NOW.tzinfo)
        _logs(s, g, common + [("info", f"GET {ATTACH} 200 22ms", {
            "http.response.status_code": 200, "url.path": ATTACH})] * 1, 60, start, gone, OLD)
    for pod in pods:
        born = datetime.fromisoformat(pod["status"]["containerStatuses"][0]["state"]["running"]
                                      ["startedAt"].replace("Z", "+00:00")) + timedelta(seconds=45)
        _logs(s, pod, common, 45, born, NOW, NEW)
        _logs(s, pod, [("error", f"GET {ATTACH} 500 11ms", {
            "http.response.status_code": 500, "url.path": ATTACH,
            "error.type": "com.fasterxml.jackson.databind.exc.InvalidDefinitionException",
            "error.message": JACKSON}),
            ("error", "Servlet.service() for servlet [dispatcherServlet] in context with path [] "
             "threw exception [Request processing failed: org.springframework.http.converter."
             f"HttpMessageConversionException: Type definition error: [simple type, class "
             f"com.northwind.claims.api.AttachmentDto]] with root cause {JACKSON}",
             {"error.type": "org.springframework.http.converter.HttpMessageConversionException",
              "url.path": ATTACH})], 22, born, NOW, NEW)

    # ---- red herrings
    ocr = Ctr("document-ocr", f"{ECR}/claims/document-ocr:0.8.2", port=8080,
              requests={"cpu": "1", "memory": "1Gi"}, limits={"cpu": "1", "memory": "2Gi"},
              readiness=http_probe("/ready", delay=10))
    _, ocrs = deployment(s, "claims", "document-ocr", [ocr], replicas=2, node_list=nodes,
                         revision=15, rollout=s.ago(days=3, hours=2), node_offset=1)
    for pod in ocrs:
        container_metrics(s, pod, "document-ocr", memory=lambda t: 1130 * MIB,
                          cpu=lambda t: 0.93 * s.rng.uniform(0.9, 1.05),
                          limit_memory=2048 * MIB, limit_cpu=1.0, throttle=lambda t: 0.22)
    logs_for(s, ocrs, "document-ocr", "document-ocr", [
        ("info", "OCR done claim=CL-{id} pages=4 in 2.9s", {}),
        ("warn", "low confidence (0.41) on page 3 of upload, flagged for manual review", {}),
        ("warn", "OCR queue depth 37, processing time 8.4s", {}),
    ], 60, start=start, end=NOW)
    notif = Ctr("notifications", f"{ECR}/claims/notifications:1.3.0", port=8080,
                requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "512Mi"},
                readiness=http_probe("/ready", delay=5))
    _, notifs = deployment(s, "claims", "notifications", [notif], replicas=1, node_list=nodes,
                           revision=9, rollout=s.ago(days=5, hours=7), node_offset=2)
    quiet_container(s, notifs[0], "notifications", 201)
    logs_for(s, notifs, "notifications", "notifications", [
        ("info", "sent 'claim status changed' email", {}),
        ("error", "SMTP send failed: 421 4.7.0 Try again later, closing connection. "
         "(smtp.sendgrid.net), will retry", {"error.type": "SMTPServerDisconnected"}),
    ], 40, start=start, end=NOW)
    img = "598014377251.dkr.ecr.ca-central-1.amazonaws.com/finance/report-builder:1.9.0-rc3"
    rb = Ctr("report-builder", img, port=8080, requests={"cpu": "200m", "memory": "512Mi"},
             limits={"memory": "1Gi"})
    since = NOW - timedelta(minutes=34, seconds=12)

    def rb_state(i: int, started: datetime) -> dict:
        return {"report-builder": image_pull_status("ImagePullBackOff", img)}
    _, rbs = deployment(s, "finance-staging", "report-builder", [rb], replicas=1,
                        node_list=nodes, revision=41, rollout=since, statuses=rb_state,
                        node_offset=3)
    image_pull_events(s, rbs[0], "report-builder", img, f'rpc error: code = NotFound desc = '
                      f'failed to pull and unpack image "{img}": failed to resolve reference '
                      f'"{img}": {img}: not found', since=since + timedelta(seconds=4))
    return s


def _day(t: int) -> float:
    hour = (t % 86400) / 3600
    return 1 + 0.2 * math.cos((hour - 17) / 24 * 2 * math.pi)


def _logs(s: Story, pod: dict, entries: list, n: int, start: datetime, end: datetime,
          version: str) -> None:
    span = (end - start).total_seconds()
    for _ in range(n):
        level, message, fields = s.rng.choice(entries)
        when = start + timedelta(milliseconds=int(s.rng.uniform(0, span) * 1000))
        s.logs.add(when, level, message, namespace="claims", pod=pod["metadata"]["name"],
                   container="claims-store", service="claims-store",
                   node=pod["spec"]["nodeName"], service__version=version,
                   trace__id=s.cluster.hexid("trace", str(when.timestamp()), length=32), **fields)
