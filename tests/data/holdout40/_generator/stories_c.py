"""Stories 5-6: a node whose disk fails (read-only filesystem); a managed Redis that hit
maxmemory under noeviction."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from . import kube as k
from .stories_b import _healthy
from .story import Story


def failing_disk_node() -> Story:
    now = datetime(2026, 11, 26, 20, 40, tzinfo=UTC)
    bad = "aks-general-31415926-vmss00000b"
    s = Story(
        id="segment-packager-origin-500s", title="Live streams stutter for some viewers",
        now=now,
        report="""live streams stuttering for part of the viewers since ~20:00, CDN team says
origin answers 500 on some segment requests, maybe 1 in 5. segment-packager got a release
yesterday, should we roll it back?""",
        truth={"category": "node_failure",
               "culprit": {"kind": "Node", "namespace": "", "name": bad},
               "evidence": ["ReadonlyFilesystem", "EXT4-fs error (device sdb1)",
                            "read-only file system"],
               "fix": f"Cordon and drain {bad} and replace it (its data disk fails with I/O "
                      "errors and the kernel remounted it read-only); segment-packager's "
                      "pods there will reschedule on healthy nodes"})
    rnd = random.Random(5)
    names = [f"aks-general-31415926-vmss00000{x}" for x in "9abc"]
    ro_ok = {"type": "ReadonlyFilesystem", "status": "False", "reason": "FilesystemIsNotReadOnly",
             "message": "Filesystem is not read-only", "lastHeartbeatTime": k.stamp(now, 1),
             "lastTransitionTime": k.stamp(now, 8000)}
    kd = {"type": "KernelDeadlock", "status": "False", "reason": "KernelHasNoDeadlock",
          "message": "kernel has no deadlock", "lastHeartbeatTime": k.stamp(now, 1),
          "lastTransitionTime": k.stamp(now, 8000)}
    ro_bad = dict(ro_ok, status="True", reason="FilesystemIsReadOnly",
                  message="Filesystem is read-only", lastTransitionTime=k.stamp(now, 41))
    s.add(k.namespace("default", "2025-05-01T00:00:00Z"),
          k.namespace("streaming", "2025-05-02T00:00:00Z"),
          k.namespace("logging", "2025-05-02T00:00:00Z"),
          *[k.node(n, "2026-10-20T06:00:00Z", now, zone=f"westeurope-{i % 3 + 1}",
                   instance="Standard_D8ds_v5", pool="general",
                   labels={"kubernetes.azure.com/agentpool": "general"},
                   extra_conditions=[kd, ro_bad if n == bad else ro_ok])
            for i, n in enumerate(names)])
    kern = "kernel-monitor"
    s.add(k.event("", "Node", bad, "IOError",
                  "kernel: [2391021.908314] blk_update_request: I/O error, dev sdb, sector "
                  "88342528 op 0x1:(WRITE) flags 0x800 phys_seg 1 prio class 0",
                  first=k.stamp(now, 44), last=k.stamp(now, 6), count=37, component=kern,
                  host=bad),
          k.event("", "Node", bad, "Ext4Error",
                  "kernel: [2391022.551928] EXT4-fs error (device sdb1): "
                  "ext4_journal_check_start:83: comm containerd: Detected aborted journal",
                  first=k.stamp(now, 41.2), last=k.stamp(now, 41.2), component=kern, host=bad),
          k.event("", "Node", bad, "FilesystemIsReadOnly",
                  'Node condition ReadonlyFilesystem is now: True, reason: '
                  'FilesystemIsReadOnly, message: "Filesystem is read-only"',
                  first=k.stamp(now, 41), last=k.stamp(now, 41), type_="Normal",
                  component=kern, host=bad))
    img = "streamcoacr.azurecr.io/streaming/segment-packager:7.3.0"
    c = k.container("packager", img, ports=[{"containerPort": 8080, "name": "http"}],
                    requests={"cpu": "1500m", "memory": "2Gi"},
                    limits={"cpu": "3", "memory": "3Gi"},
                    env=[{"name": "SCRATCH_DIR", "value": "/var/cache/packager"},
                         {"name": "ORIGIN_SHARDS", "value": "5"}],
                    volumeMounts=[{"name": "scratch", "mountPath": "/var/cache/packager"}],
                    readinessProbe=k.http_probe("/ready", "http"),
                    livenessProbe=k.http_probe("/healthz", "http", delay=20, period=15))
    t = k.pod_template({"app": "segment-packager"}, [c],
                       volumes=[{"name": "scratch", "emptyDir": {"sizeLimit": "20Gi"}}])
    h = "6d9f4c7b58"
    s.add(k.deployment("streaming", "segment-packager", "2025-05-10T09:00:00Z", t, replicas=5,
                       revision=41, status=k.deploy_status(
                           now, replicas=5, ready=4, updated=5, available=4, generation=44,
                           progressing=("True", "NewReplicaSetAvailable",
                                        f'ReplicaSet "segment-packager-{h}" has successfully '
                                        "progressed.", 1560))),
          k.replicaset("streaming", "segment-packager", h, k.stamp(now, 1580), t, revision=41,
                       replicas=5, ready=4))
    placement = [names[0], bad, names[2], names[3], bad]
    pods = []
    for i, n in enumerate(placement):
        pn = f"segment-packager-{h}-{k.suffix('sp' + str(i))}"
        pods.append(pn)
        ip = f"10.224.{names.index(n)}.{60 + i}"
        if i == 4:
            msg = ('failed to generate container "8c41e07f3b2d" spec: failed to mkdir '
                   f'"/var/lib/kubelet/pods/{k.uid("Pod", "streaming", pn)}/volumes/'
                   'kubernetes.io~empty-dir/scratch/.run": mkdir: read-only file system')
            last = k.terminated("Error", 2, k.stamp(now, 1570), k.stamp(now, 33))
            st = [k.waiting("packager", img, "CreateContainerError", msg, restarts=1, last=last)]
            s.add(k.pod("streaming", pn, k.stamp(now, 1575), t,
                        owner=("ReplicaSet", f"segment-packager-{h}"), node_name=n, ip=ip,
                        phase="Running", ready=False, statuses=st,
                        extra_labels={"pod-template-hash": h}),
                  k.event("streaming", "Pod", pn, "Failed", f"Error: {msg}",
                          first=k.stamp(now, 32.5), last=k.stamp(now, 0.8), count=131,
                          host=bad),
                  k.event("streaming", "Pod", pn, "Unhealthy",
                          "Liveness probe failed: HTTP probe failed with statuscode: 500",
                          first=k.stamp(now, 38), last=k.stamp(now, 33.3), count=3, host=bad),
                  k.event("streaming", "Pod", pn, "Killing",
                          "Container packager failed liveness probe, will be restarted",
                          first=k.stamp(now, 33.2), last=k.stamp(now, 33.2), type_="Normal",
                          host=bad))
        else:
            s.add(k.pod("streaming", pn, k.stamp(now, 1575), t,
                        owner=("ReplicaSet", f"segment-packager-{h}"), node_name=n, ip=ip,
                        phase="Running", ready=True,
                        statuses=[k.running("packager", img, k.stamp(now, 1574))],
                        extra_labels={"pod-template-hash": h}))
    ports = [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}]
    s.add(k.service("streaming", "segment-packager", "2025-05-10T09:00:00Z",
                    {"app": "segment-packager"}, ports, cluster_ip="10.0.88.14"),
          k.endpoints("streaming", "segment-packager", "2025-05-10T09:00:00Z",
                      [(f"10.224.{names.index(n)}.{60 + i}", pods[i], n)
                       for i, n in enumerate(placement) if i != 4],
                      [("10.224.1.64", pods[4], bad)],
                      [{"name": "http", "port": 8080, "protocol": "TCP"}]))
    # bystanders: stream-api (healthy, one pod on the bad node but it never writes locally),
    # fluent-bit on every node
    api_pods = _healthy(s, "streaming", "stream-api",
                        "streamcoacr.azurecr.io/streaming/stream-api:3.9.4", names, 4, 8000,
                        "10.224.3", revision=57, started_ago=6000, probe_path="/livez")
    fb_img = "cr.fluentbit.io/fluent/fluent-bit:3.1.9"
    fb_t = k.pod_template({"app": "fluent-bit"}, [k.container(
        "fluent-bit", fb_img, requests={"cpu": "50m", "memory": "64Mi"},
        limits={"memory": "256Mi"},
        volumeMounts=[{"name": "state", "mountPath": "/var/fluent-bit/state"}])],
        volumes=[{"name": "state", "hostPath": {"path": "/var/fluent-bit/state"}}],
        tolerations=[{"operator": "Exists"}])
    s.add({"apiVersion": "apps/v1", "kind": "DaemonSet",
           "metadata": k.metadata("DaemonSet", "logging", "fluent-bit", "2025-05-02T00:10:00Z",
                                  labels={"app": "fluent-bit"}),
           "spec": {"selector": {"matchLabels": {"app": "fluent-bit"}}, "template": fb_t},
           "status": {"currentNumberScheduled": 4, "desiredNumberScheduled": 4,
                      "numberAvailable": 4, "numberReady": 4, "updatedNumberScheduled": 4,
                      "numberMisscheduled": 0}})
    fb_bad = ""
    for n in names:
        pn = f"fluent-bit-{k.suffix('fb' + n)}"
        fb_bad = pn if n == bad else fb_bad
        s.add(k.pod("logging", pn, k.stamp(now, 8000), fb_t, owner=("DaemonSet", "fluent-bit"),
                    node_name=n, ip=f"10.224.{names.index(n)}.5", phase="Running", ready=True,
                    statuses=[k.running("fluent-bit", fb_img, k.stamp(now, 7999))]))
    s.add(k.event("streaming", "Pod", api_pods[2], "Unhealthy",
                  "Readiness probe failed: Get \"http://10.224.3.22:8000/livez\": context "
                  "deadline exceeded (Client.Timeout exceeded while awaiting headers)",
                  first=k.stamp(now, 55), last=k.stamp(now, 55), host=names[2]))
    fb_lines = []
    for m in range(41, 0, -1):
        moment = now - timedelta(minutes=m)
        text = ("[storage] [cio file] cannot write data to file "
                f"/var/fluent-bit/state/flb-storage/tail.0/1-{int(moment.timestamp())}."
                f"{rnd.randint(100000, 999999)}.flb: Read-only file system")
        fb_lines.append(f"[{moment.strftime('%Y/%m/%d %H:%M:%S')}] [error] {text}")
        if m % 4 == 0:
            s.log(m, text, "error", "fluent-bit", "logging", fb_bad, "fluent-bit")
    s.pod_log("logging", fb_bad, "fluent-bit", fb_lines)
    # the packager pod that still runs on the bad node: every segment write fails
    good = [p for i, p in enumerate(pods) if placement[i] != bad]
    live = pods[1]
    plines = []
    for m in range(60, 0, -1):
        for sec in (7, 29, 51):
            moment = now - timedelta(minutes=m, seconds=-sec)
            ago = (now - moment).total_seconds() / 60
            ch = rnd.choice([114, 131, 162, 208, 233, 251])
            seg = 481000 + int(moment.timestamp()) // 4 % 10000
            base = f"time={moment.strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3]}Z"
            if m <= 43:
                err = (f"open /var/cache/packager/live/ch-{ch}/seg_{seg}.m4s: "
                       "read-only file system")
                plines.append(f'{base} level=ERROR msg="package segment" channel=ch-{ch} '
                              f'seq={seg} err="{err}"')
                plines.append(f'{base} level=INFO msg="http" method=GET '
                              f'path=/live/ch-{ch}/seg_{seg}.m4s status=500 dur=2ms')
                s.log(ago, f"package segment failed: {err}", "error", "segment-packager",
                      "streaming", live, "packager", **{"error.type": "fs.PathError"})
                s.log(ago - 0.001, f"GET /live/ch-{ch}/seg_{seg}.m4s 500", "info",
                      "segment-packager", "streaming", live, "packager",
                      **{"http.response.status_code": 500})
            else:
                plines.append(f'{base} level=INFO msg="packaged segment" channel=ch-{ch} '
                              f'seq={seg} bytes={rnd.randint(900000, 2100000)}')
            for p in good:
                if rnd.random() < 0.3:
                    s.log(ago + rnd.random() * 0.2, f"packaged segment channel=ch-"
                          f"{rnd.randint(100, 260)} seq={seg}", "info", "segment-packager",
                          "streaming", p, "packager")
    s.pod_log("streaming", live, "packager", plines)
    s.pod_log("streaming", pods[4], "packager", [
        f'time={k.stamp(now, 40)} level=ERROR msg="scratch self-test failed" '
        'err="open /var/cache/packager/.selftest: read-only file system"',
        f'time={k.stamp(now, 33.2)} level=INFO msg="shutting down" signal=terminated'],
        previous=True)
    total: dict[tuple[str, str], float] = {}
    for m in range(60, -1, -1):
        for p in pods[:4]:
            for code in ("200", "500"):
                key = (p, code)
                rate = 0.0
                if p == live:
                    rate = 180.0 if (m > 43 and code == "200") else (180.0 if code == "500"
                                                                     and m <= 43 else 0.0)
                elif code == "200":
                    rate = 180.0 + rnd.randint(-10, 10)
                total[key] = total.get(key, 0.0) + rate
                s.metrics.add("http_requests", "counter", "HTTP requests by status",
                              {"namespace": "streaming", "service": "segment-packager",
                               "pod": p, "code": code}, [(s.unix(m), total[key])])
    for n in names:
        for m in range(60, -1, -5):
            s.metrics.add("node_filesystem_readonly", "gauge", "Filesystem read-only status.",
                          {"node": n, "device": "/dev/sdb1", "mountpoint": "/var/lib/kubelet",
                           "fstype": "ext4"}, [(s.unix(m), 1.0 if n == bad and m <= 41 else 0.0)])
            s.metrics.add("node_filesystem_avail_bytes", "gauge", "Filesystem space available",
                          {"node": n, "device": "/dev/sdb1", "mountpoint": "/var/lib/kubelet",
                           "fstype": "ext4"},
                          [(s.unix(m), (181 + names.index(n) * 7) * 2**30)])
    return s


def redis_maxmemory() -> Story:
    now = datetime(2026, 11, 28, 19, 15, tzinfo=UTC)
    s = Story(
        id="basket-add-item-fails", title="Customers cannot add items to their basket",
        now=now,
        report="""customers can't add to basket since ~7pm, they get the 'something went wrong'
toast. viewing the basket is fine. basket pods look healthy, no restarts. did someone deploy
something? it's black friday weekend ffs""",
        truth={"category": "dependency_failure",
               "culprit": {"kind": "Deployment", "namespace": "basket",
                           "name": "basket-service"},
               "evidence": ["OOM command not allowed when used memory > 'maxmemory'",
                            "basket-prod.ab12cd.ng.0001.euw1.cache.amazonaws.com"],
               "fix": "Free or grow the managed Redis basket-prod (scale the node type, or "
                      "switch maxmemory-policy to volatile-lru with TTLs on basket keys); the "
                      "basket-service pods are healthy and need no change"})
    rnd = random.Random(6)
    nodes = [f"ip-172-31-{a}-{b}.eu-west-1.compute.internal"
             for a, b in ((10, 21), (20, 144), (30, 87))]
    s.add(k.namespace("basket", "2024-08-01T10:00:00Z"),
          *[k.node(n, "2026-11-01T02:00:00Z", now, zone=f"eu-west-1{'abc'[i]}",
                   instance="c6i.4xlarge", cpu="16") for i, n in enumerate(nodes)])
    redis_host = "basket-prod.ab12cd.ng.0001.euw1.cache.amazonaws.com"
    s.add(k.service("basket", "basket-redis", "2024-08-01T10:05:00Z", {},
                    [{"name": "redis", "port": 6379, "protocol": "TCP"}], cluster_ip="",
                    kind="ExternalName", external=redis_host),
          {"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": k.metadata("ConfigMap", "basket", "basket-service-config",
                                  "2024-08-01T10:05:00Z", labels={"app": "basket-service"}),
           "data": {"application-prod.yaml": (
               "spring:\n  data:\n    redis:\n      host: basket-redis.basket.svc.cluster.local\n"
               "      port: 6379\n      timeout: 500ms\n      lettuce:\n        pool:\n"
               "          max-active: 32\nbasket:\n  ttl: P30D\n  max-items: 200\n")}})
    img = "602401143452.dkr.ecr.eu-west-1.amazonaws.com/basket/basket-service:2026.11.26-1"
    c = k.container("basket-service", img, ports=[{"containerPort": 8080, "name": "http"}],
                    requests={"cpu": "1", "memory": "1Gi"}, limits={"memory": "1536Mi"},
                    env=[{"name": "SPRING_PROFILES_ACTIVE", "value": "prod"},
                         {"name": "JAVA_TOOL_OPTIONS", "value": "-XX:MaxRAMPercentage=70"}],
                    volumeMounts=[{"name": "config", "mountPath": "/config"}],
                    readinessProbe=k.http_probe("/actuator/health/readiness", "http", delay=20),
                    livenessProbe=k.http_probe("/actuator/health/liveness", "http", delay=40))
    t = k.pod_template({"app": "basket-service"}, [c], volumes=[
        {"name": "config", "configMap": {"name": "basket-service-config"}}])
    h = "7b6d5f9c84"
    s.add(k.deployment("basket", "basket-service", "2024-08-01T10:05:00Z", t, replicas=6,
                       revision=31, status=k.deploy_status(
                           now, replicas=6, ready=6, updated=6, available=6, generation=35,
                           progressing=("True", "NewReplicaSetAvailable",
                                        f'ReplicaSet "basket-service-{h}" has successfully '
                                        "progressed.", 3100))),
          k.replicaset("basket", "basket-service", h, k.stamp(now, 3120), t, revision=31,
                       replicas=6, ready=6))
    pods = []
    for i in range(6):
        pn = f"basket-service-{h}-{k.suffix('bs' + str(i))}"
        pods.append(pn)
        s.add(k.pod("basket", pn, k.stamp(now, 3118), t,
                    owner=("ReplicaSet", f"basket-service-{h}"), node_name=nodes[i % 3],
                    ip=f"172.31.{(i % 3 + 1) * 10}.{100 + i}", phase="Running", ready=True,
                    statuses=[k.running("basket-service", img, k.stamp(now, 3117))],
                    extra_labels={"pod-template-hash": h}))
    ports = [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}]
    s.add(k.service("basket", "basket-service", "2024-08-01T10:05:00Z", {"app": "basket-service"},
                    ports, cluster_ip="10.100.12.40"))
    chk = _healthy(s, "basket", "checkout-bff",
                   "602401143452.dkr.ecr.eu-west-1.amazonaws.com/basket/checkout-bff:5.2.2",
                   nodes, 3, 3000, "172.31.20", revision=88, started_ago=7000)
    s.add(k.event("basket", "Pod", chk[0], "Unhealthy",
                  "Readiness probe failed: HTTP probe failed with statuscode: 503",
                  first=k.stamp(now, 50), last=k.stamp(now, 49), count=2, host=nodes[0]))
    # basket-service logs: Spring Boot default pattern
    start_fail = 22
    oom = ("OOM command not allowed when used memory > 'maxmemory'.")
    lines: dict[str, list[str]] = {p: [] for p in pods}
    for m in range(60, 0, -1):
        for p in pods:
            thread = f"nio-8080-exec-{rnd.randint(1, 40)}"
            moment = now - timedelta(minutes=m, seconds=-rnd.randint(0, 59))
            ago = (now - moment).total_seconds() / 60
            prefix = (f"{moment.strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3]}Z")
            basket = f"{rnd.getrandbits(48):012x}"
            if ago < start_fail and rnd.random() < 0.85:
                lines[p].append(f"{prefix} ERROR 1 --- [basket-service] [{thread}] "
                                f"c.s.basket.api.BasketController        : add item to basket "
                                f"{basket} failed")
                lines[p].append("org.springframework.data.redis.RedisSystemException: Error in "
                                f"execution; nested exception is io.lettuce.core."
                                f"RedisCommandExecutionException: {oom}")
                lines[p].append("\tat org.springframework.data.redis.connection.lettuce."
                                "LettuceExceptionConverter.convert(LettuceExceptionConverter."
                                "java:54)")
                s.log(ago, f"add item to basket {basket} failed: org.springframework.data.redis."
                      "RedisSystemException: Error in execution; nested exception is "
                      f"io.lettuce.core.RedisCommandExecutionException: {oom}", "error",
                      "basket-service", "basket", p, **{
                          "error.type": "org.springframework.data.redis.RedisSystemException",
                          "log.logger": "c.s.basket.api.BasketController",
                          "http.request.method": "POST", "http.response.status_code": 500})
            if rnd.random() < 0.7:
                lines[p].append(f"{prefix}  INFO 1 --- [basket-service] [{thread}] "
                                f"c.s.basket.api.AccessLog                : GET /api/baskets/"
                                f"{basket} 200 {rnd.randint(3, 18)}ms")
                s.log(ago, f"GET /api/baskets/{basket} 200", "info", "basket-service", "basket",
                      p, **{"http.request.method": "GET", "http.response.status_code": 200})
    lines[pods[2]].insert(len(lines[pods[2]]) // 3, f"{k.stamp(now, 41)[:-1]}.004Z  WARN 1 --- "
                          "[basket-service] [ioEventLoop-4-2] i.l.core.protocol.CommandHandler  "
                          "       : Reconnecting, last destination was "
                          f"{redis_host}/10.30.4.18:6379")
    for p in pods[:3]:
        s.pod_log("basket", p, "basket-service", lines[p])
    counts: dict[tuple[str, str, str], float] = {}
    for m in range(60, -1, -1):
        for p in pods:
            for method, uri, status in (("GET", "/api/baskets/{id}", "200"),
                                        ("POST", "/api/baskets/{id}/items", "201"),
                                        ("POST", "/api/baskets/{id}/items", "500")):
                rate = {"200": 540.0, "201": 150.0, "500": 0.0}[status]
                if m < start_fail and status == "201":
                    rate = 12.0
                if m < start_fail and status == "500":
                    rate = 138.0
                key = (p, uri, status)
                counts[key] = counts.get(key, 0.0) + rate * (1 + rnd.random() * 0.1)
                s.metrics.add("http_server_requests_seconds", "summary",
                              "Duration of HTTP server request handling",
                              {"namespace": "basket", "pod": p, "method": method, "uri": uri,
                               "status": status,
                               "outcome": "SUCCESS" if status < "300" else "SERVER_ERROR"},
                              [(s.unix(m), counts[key])], sample="_count")
            s.metrics.add("container_memory_working_set_bytes", "gauge",
                          "Current working set of the container in bytes",
                          {"namespace": "basket", "pod": p, "container": "basket-service"},
                          [(s.unix(m), (690 + rnd.randint(-20, 20)) * 2**20)])
        used = min(100.0, 93.0 + (60 - m) * 0.19) if m >= start_fail else 100.0
        s.metrics.add("aws_elasticache_database_memory_usage_percentage_average", "gauge",
                      "CloudWatch metric AWS/ElastiCache DatabaseMemoryUsagePercentage",
                      {"cache_cluster_id": "basket-prod-0001-001", "job": "cloudwatch"},
                      [(s.unix(m), round(used, 2))])
        s.metrics.add("aws_elasticache_evictions_sum", "gauge",
                      "CloudWatch metric AWS/ElastiCache Evictions",
                      {"cache_cluster_id": "basket-prod-0001-001", "job": "cloudwatch"},
                      [(s.unix(m), 0.0)])
    return s
