"""Fernhill Freight: route-planner's heap fits, the container does not.

-Xmx1792m in a 2Gi container leaves 256Mi for everything the JVM keeps off the heap:
Netty's direct buffers, metaspace, code cache, thread stacks. The evening load raises the
direct buffers and the thread count, the cgroup goes over 2Gi and the kernel kills java
(exit 137, OOMKilled). The JVM never throws OutOfMemoryError, so its logs end mid-request,
the heap dashboard looks comfortable, and the node's SystemOOM event points at the node.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout38._generator import kube as k
from tests.data.holdout38._generator.story import Story

NOW = datetime(2026, 11, 27, 19, 40, 0)
NS = "dispatch"
APP = "route-planner"
IMAGE = "registry.fernhill.io/dispatch/route-planner:7.4.2"
GI = 2**30
MI = 2**20


def build() -> Story:
    story = Story(
        id="route-planner-offheap-oom",
        title="route-planner restarting through the evening peak, no errors in its logs",
        now=NOW,
        report="""
route-planner in dispatch keeps restarting since the evening peak started (~17:30).
nothing in the logs, no exceptions at all, and the heap panel in grafana never goes
above ~75%. one of the nodes logged some OOM thing, is ip-10-20-2-37 bad? drivers are
getting "route unavailable" in the app
""",
        truth={"category": "oom_killed",
               "culprit": {"kind": "Deployment", "namespace": NS, "name": APP},
               "evidence": ["OOMKilled", "exit code 137", "-Xmx1792m", "2Gi"],
               "fix": "Size the JVM for the container: lower -Xmx (or use "
                      "-XX:MaxRAMPercentage=70) and bound direct memory "
                      "(-XX:MaxDirectMemorySize) and metaspace, or raise route-planner's "
                      "memory limit so heap plus off-heap fit under it."})
    zones = ["eu-central-1a", "eu-central-1b", "eu-central-1c"]
    nodes = [f"ip-10-20-{z}-{n}.eu-central-1.compute.internal"
             for z, n in ((1, 11), (2, 37), (3, 52), (1, 84))]
    made = NOW - timedelta(days=41)
    story.add(k.namespace(NS, made - timedelta(days=300), {"team": "dispatch"}),
              k.namespace("tracking", made - timedelta(days=300)),
              k.namespace("default", made - timedelta(days=400)))
    for i, name in enumerate(nodes):
        story.add(k.node(name, made + timedelta(hours=i), cpu="3920m", memory="15432Mi",
                         heartbeat=NOW - timedelta(seconds=31 + i),
                         labels={"topology.kubernetes.io/zone": zones[i % 3],
                                 "node.kubernetes.io/instance-type": "m6i.xlarge",
                                 "eks.amazonaws.com/nodegroup": "general-v5"}))

    java_opts = ("-Xms1792m -Xmx1792m -XX:+UseG1GC -XX:MaxGCPauseMillis=200 "
                 "-XX:+ExitOnOutOfMemoryError -Xlog:gc:stdout:time,uptime "
                 "-Dio.netty.allocator.type=pooled")
    app = k.container(
        "app", IMAGE, cpu="1", memory="2Gi", cpu_limit="2", memory_limit="2Gi",
        ports=[{"containerPort": 8080, "name": "http"}, {"containerPort": 9464, "name": "metrics"}],
        env=[{"name": "JAVA_TOOL_OPTIONS", "value": java_opts},
             {"name": "SPRING_PROFILES_ACTIVE", "value": "prod,eu"},
             {"name": "GEO_GRPC_TARGET", "value": "dns:///geo-index.dispatch:9090"},
             {"name": "ROUTING_WORKER_THREADS", "value": "96"},
             {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {
                 "name": "route-planner-db", "key": "password"}}}],
        readinessProbe=k.http_probe("/actuator/health/readiness", 8080, initialDelaySeconds=20),
        livenessProbe=k.http_probe("/actuator/health/liveness", 8080, initialDelaySeconds=60,
                                   failureThreshold=5))
    rolled = NOW - timedelta(days=5, hours=3, minutes=12)
    deploy = k.workload("Deployment", NS, APP, made, [app], replicas=6,
                        labels={"team": "dispatch", "tier": "backend"},
                        annotations={"deployment.kubernetes.io/revision": "14"},
                        status=k.deployment_status(6, 4, 6, at=NOW - timedelta(minutes=3)))
    rs_hash = k.pod_hash(NS, APP, "14")
    rs = k.replicaset(deploy, rs_hash, 14, rolled, [app], replicas=6, ready=4)
    old_app = {**app, "image": IMAGE.replace("7.4.2", "7.4.1")}
    old_rs = k.replicaset(deploy, k.pod_hash(NS, APP, "13"), 13, rolled - timedelta(days=9),
                          [old_app], replicas=0, ready=0)
    story.add(deploy, rs, old_rs)

    peak = NOW.replace(hour=17, minute=31)
    ips = ["10.20.1.141", "10.20.2.73", "10.20.3.19", "10.20.1.206", "10.20.2.158", "10.20.3.88"]
    # (restarts, minutes ago the last kill finished, currently ready)
    fates = [(7, 4, False), (6, 11, True), (5, 19, True), (6, 2, False), (4, 27, True),
             (5, 36, True)]
    pods = []
    for i, (restarts, killed, ready) in enumerate(fates):
        name = f"{APP}-{rs_hash}-{k.suffix(APP, str(i))}"
        node_name = nodes[[1, 0, 2, 1, 3, 2][i]]
        finished = NOW - timedelta(minutes=killed, seconds=13 * i)
        started_last = finished - timedelta(minutes=17 + 3 * i)
        restart_at = finished + timedelta(seconds=2)
        last = k.terminated("OOMKilled", 137, started_last, finished)
        pods.append((name, node_name, ips[i], finished, started_last))
        story.add(k.pod(rs, name, node_name, rolled + timedelta(seconds=40 * i),
                        {"app": k.running(restart_at, ready=ready, restarts=restarts, last=last)},
                        ip=ips[i]))
        story.add(k.event(NS, "Pod", name, "Pulled",
                          f'Container image "{IMAGE}" already present on machine',
                          restart_at, count=1, host=node_name),
                  k.event(NS, "Pod", name, "Started", "Started container app", restart_at,
                          host=node_name))
        if not ready:
            story.add(k.event(NS, "Pod", name, "Unhealthy",
                              "Readiness probe failed: Get \"http://" + ips[i] +
                              ":8080/actuator/health/readiness\": dial tcp " + ips[i] +
                              ":8080: connect: connection refused",
                              restart_at + timedelta(seconds=10), count=3, type_="Warning",
                              host=node_name))
        _java_logs(story, name, started_last, finished, restart_at, i)
    story.add(k.event("", "Node", nodes[1], "SystemOOM",
                      "System OOM encountered, victim process: java, pid: 41873",
                      NOW - timedelta(minutes=42), NOW - timedelta(minutes=4), count=3,
                      type_="Warning", host=nodes[1]))
    story.add(k.event(NS, "HorizontalPodAutoscaler", APP, "SuccessfulRescale",
                      "New size: 6; reason: cpu resource utilization (percentage of request) "
                      "above target", NOW - timedelta(minutes=55)))
    story.add({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
               "metadata": {"name": APP, "namespace": NS, "creationTimestamp": k.ts(made)},
               "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                           "name": APP},
                        "minReplicas": 4, "maxReplicas": 14,
                        "metrics": [{"type": "Resource", "resource": {
                            "name": "cpu", "target": {"type": "Utilization",
                                                      "averageUtilization": 70}}}]},
               "status": {"currentReplicas": 6, "desiredReplicas": 6,
                          "currentMetrics": [{"type": "Resource", "resource": {
                              "name": "cpu", "current": {"averageUtilization": 61}}}]}})
    story.add(*k.healthy_deployment(
        NS, "geo-index", "registry.fernhill.io/dispatch/geo-index:2.19.0", made,
        NOW - timedelta(days=6, hours=2), nodes, ["10.20.1.31", "10.20.3.201", "10.20.2.12"],
        replicas=3, cpu="500m", memory="1Gi", port=9090, revision=9))
    story.add(*k.healthy_deployment(
        NS, "eta-notifier", "registry.fernhill.io/dispatch/eta-notifier:1.8.3", made,
        NOW - timedelta(days=2, hours=6), nodes, ["10.20.2.99", "10.20.1.57"],
        replicas=2, cpu="200m", memory="512Mi", port=8080, revision=22))
    story.add(*k.healthy_deployment(
        "tracking", "shipment-tracker", "registry.fernhill.io/tracking/shipment-tracker:5.0.7",
        made, NOW - timedelta(days=1, hours=2), nodes, ["10.20.3.140", "10.20.1.77",
                                                        "10.20.2.211"],
        replicas=3, cpu="500m", memory="768Mi", port=8080, revision=31))
    story.add(k.event("tracking", "Deployment", "shipment-tracker", "ScalingReplicaSet",
                      "Scaled up replica set shipment-tracker-7d9b5c6f8 to 3",
                      NOW - timedelta(minutes=58)))
    _metrics(story, pods, peak)
    return story


def _java_logs(story: Story, pod: str, started: datetime, finished: datetime,
               restart_at: datetime, index: int) -> None:
    rng = story.rng

    def lines(begin: datetime, end: datetime, uptime0: float) -> list[str]:
        out = [f"{begin:%Y-%m-%dT%H:%M:%S}.412Z  INFO 1 --- [           main] "
               "c.f.dispatch.RoutePlannerApplication   : Starting RoutePlannerApplication "
               "v7.4.2 using Java 17.0.12 with PID 1",
               f"{begin + timedelta(seconds=14):%Y-%m-%dT%H:%M:%S}.077Z  INFO 1 --- "
               "[           main] "
               "o.s.b.web.embedded.netty.NettyWebServer  : Netty started on port 8080",
               f"{begin + timedelta(seconds=15):%Y-%m-%dT%H:%M:%S}.301Z  INFO 1 --- "
               "[           main] "
               "c.f.dispatch.RoutePlannerApplication   : Started RoutePlannerApplication in "
               "14.862 seconds (process running for 15.9)"]
        moment, gc = begin + timedelta(seconds=30), 1
        while moment < end:
            before = rng.randint(1180, 1460)
            after = rng.randint(610, 820)
            uptime = uptime0 + (moment - begin).total_seconds()
            out.append(f"[{moment:%Y-%m-%dT%H:%M:%S}.{rng.randint(100, 999)}+0000][{uptime:.3f}s] "
                       f"GC({gc}) Pause Young (Normal) (G1 Evacuation Pause) "
                       f"{before}M->{after}M(1792M) {rng.uniform(11, 38):.3f}ms")
            for _ in range(rng.randint(2, 4)):
                at = moment + timedelta(seconds=rng.randint(1, 40))
                if at >= end:
                    break
                worker = rng.randint(1, 96)
                stops = rng.randint(3, 41)
                out.append(f"{at:%Y-%m-%dT%H:%M:%S}.{rng.randint(100, 999)}Z  INFO 1 --- "
                           f"[routing-{worker:02d}] c.f.d.routing.PlanService              : "
                           f"plan computed depot=DE-{rng.choice(['HAM', 'BER', 'MUC', 'CGN'])} "
                           f"stops={stops} took={rng.randint(180, 2400)}ms")
            if rng.random() < 0.15 and moment + timedelta(seconds=44) < end:
                out.append(f"{moment + timedelta(seconds=44):%Y-%m-%dT%H:%M:%S}.018Z  WARN 1 --- "
                           "[routing-17] c.f.d.geo.GeoIndexClient               : geo-index "
                           "deadline 800ms exceeded, retrying once")
            moment += timedelta(seconds=rng.randint(45, 75))
            gc += 1
        return out

    story.log(NS, pod, "app", lines(started, finished, 0.9), previous=True)
    story.log(NS, pod, "app", lines(restart_at, NOW, 0.9))
    story.mirror(NS, pod, "app", APP, previous=True)
    story.mirror(NS, pod, "app", APP)


def _metrics(story: Story, pods: list[tuple[str, str, str, datetime, datetime]],
             peak: datetime) -> None:
    start = NOW - timedelta(hours=3)
    rng = story.rng
    for i, (pod, _node, _ip, finished, _started_last) in enumerate(pods):
        labels = {"namespace": NS, "pod": pod, "container": "app"}
        kills = [finished - timedelta(minutes=m) for m in (0, 23, 47, 71, 98, 121, 140)][
            : (7, 6, 5, 6, 4, 5)[i]]
        kills = [kill for kill in kills if kill > peak + timedelta(minutes=12)]
        restarts, requests, cpu = float((7, 6, 5, 6, 4, 5)[i] - len(kills)), 0.0, 0.0
        since_start = 0
        for at in story.steps(start, NOW, timedelta(seconds=60)):
            if any(0 <= (at - kill).total_seconds() < 60 for kill in kills):
                restarts += 1
                since_start = 0
            load = 1.0 if at >= peak else 0.45
            since_start += 1
            direct = min(96 + 9 * since_start * load, 360) * MI
            threads = 140 + int(150 * load) + rng.randint(-6, 6)
            heap = rng.uniform(650, 1050) * MI
            nonheap = (205 + min(since_start, 10) * 1.5) * MI
            working = heap + direct + nonheap + threads * 1.1 * MI + 96 * MI
            working = min(working, 2 * GI - rng.randint(1, 9) * MI)
            if at < peak:
                working = min(working, 1.62 * GI + rng.uniform(-30, 30) * MI)
            story.sample("container_memory_working_set_bytes", "gauge", labels, at, working)
            story.sample("jvm_memory_used_bytes", "gauge",
                         {**labels, "area": "heap", "id": "G1 Old Gen+Eden"}, at, heap)
            story.sample("jvm_memory_max_bytes", "gauge",
                         {**labels, "area": "heap", "id": "G1 Old Gen+Eden"}, at, 1792 * MI)
            story.sample("jvm_memory_used_bytes", "gauge",
                         {**labels, "area": "nonheap", "id": "Metaspace+CodeCache"}, at, nonheap)
            story.sample("jvm_buffer_memory_used_bytes", "gauge", {**labels, "id": "direct"},
                         at, direct)
            story.sample("jvm_threads_live_threads", "gauge", labels, at, threads)
            story.sample("kube_pod_container_resource_limits", "gauge",
                         {**labels, "resource": "memory", "unit": "byte"}, at, 2 * GI)
            story.sample("kube_pod_container_status_restarts_total", "counter", labels, at,
                         restarts)
            cpu += 60 * (0.35 + 0.9 * load) * rng.uniform(0.85, 1.15)
            story.sample("container_cpu_usage_seconds_total", "counter", labels, at, cpu)
            requests += 60 * (9 + 21 * load) * rng.uniform(0.9, 1.1)
            story.sample("http_server_requests_seconds_count", "summary",
                         {"namespace": NS, "pod": pod, "uri": "/v2/plans", "status": "200",
                          "method": "POST"}, at, requests)
        story.sample("kube_pod_container_status_last_terminated_reason", "gauge",
                     {**labels, "reason": "OOMKilled"}, NOW, 1)
