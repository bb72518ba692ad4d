"""Logistics: dispatchers' route planning crawls. The road graph published overnight grew
(new DACH coverage); the route-planner's init container that loads it and builds the
contraction hierarchy now needs more than its 1536Mi limit. The four pods that loaded last
week's graph still serve; the three the HPA added at the morning peak are OOM-killed in
their init container over and over and never start."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from tests.data.holdout._generator.base import (
    alive,
    daemonset,
    fix_pod_ips,
    gauge,
    logs_for,
    set_times,
)
from tests.scenario_tools.common import MIB, truth
from tests.scenario_tools.kube import Ctr, Obj, ended, http_probe, iso, running, waiting
from tests.scenario_tools.sim import Run, container_status, restart_events

from .kit import (
    Incident,
    NodeKind,
    after,
    cpu_seconds,
    deploy,
    drift,
    limit_series,
    lines,
    node,
    plain,
    requests,
    restarts_series,
    runs_from,
    scraped,
    summary,
    up_at,
    working_set,
)

ID = "route-planning-slow"
NOW = datetime.fromisoformat("2027-02-09T06:52:00+00:00")
PROJECT = "parcelnet-prod-eu"
REG = f"europe-west1-docker.pkg.dev/{PROJECT}/routing"
NS = "logistics"
LIMIT = 1536 * MIB
GRAPH = "gs://parcelnet-routing-graphs/benelux-dach/latest.osmgraph"


def build() -> Incident:
    s = Incident(
        id=ID,
        title="Route planning for tomorrow's tours is very slow",
        now=NOW,
        report="""\
Dispatchers say planning tomorrow's delivery tours is painfully slow since about 06:05, many
get "calculation timed out" in the planner UI and have to retry. It's the usual Tuesday
morning rush but it has never been this bad. route-planner dashboard shows p95 solve times
above 20s. Can you take a look?
""",
        truth=truth(
            "oom_killed", "Deployment", NS, "route-planner",
            ["OOMKilled", "graph-loader", "1536Mi", "Init:CrashLoopBackOff",
             "Memory cgroup out of memory"],
            "The init container graph-loader of route-planner is OOM-killed while it builds the "
            "contraction hierarchy of the larger road graph published at 02:47 (41M nodes "
            "instead of 29M): raise its memory limit (about 3Gi) so that the three pods the HPA "
            "added can start, or pin GRAPH_URL to last week's graph until then."))
    set_times(s, 2.0, 60)
    c = s.cluster
    for ns, days in (("default", 610), ("kube-system", 610), (NS, 388),
                     ("customer-notify", 240)):
        c.namespace(ns, s.ago(days=days))

    general = NodeKind("e2-standard-4", "4", "16393916Ki", "3920m", "13174972Ki",
                       "v1.31.6-gke.1020000", "6.1.112+", "Container-Optimized OS from Google")
    highmem = NodeKind("n2-highmem-4", "4", "32880512Ki", "3920m", "29094272Ki",
                       "v1.31.6-gke.1020000", "6.1.112+", "Container-Optimized OS from Google")
    nodes: list[Obj] = []
    for pool, kind, count, group, first_ip in (("default-pool", general, 2, "8c1f3a2e", 14),
                                                 ("routing-pool", highmem, 4, "d07b59e4", 31)):
        for i in range(count):
            zone = f"europe-west1-{'bcd'[i % 3]}"
            name = f"gke-parcelnet-prod-{pool}-{group}-{c.token(4)}"
            cidr = f"10.108.{len(nodes) * 2}.0/24"
            nodes.append(node(
                s, name, ip=f"10.132.0.{first_ip + i * 3}", kind=kind,
                created=s.ago(days=4.6 - len(nodes) * 0.31), region="europe-west1", zone=zone,
                labels={"cloud.google.com/gke-nodepool": pool,
                        "cloud.google.com/gke-os-distribution": "cos",
                        "cloud.google.com/gke-boot-disk": "pd-balanced",
                        "cloud.google.com/machine-family": kind.instance.split("-")[0],
                        "topology.gke.io/zone": zone},
                provider_id=f"gce://{PROJECT}/{zone}/{name}", pod_cidr=cidr))
    default_pool, routing = nodes[:2], nodes[2:]

    # ---- route-planner: 4 pods since last week's rollout, 3 added by the HPA at 06:04
    t_scale = NOW - timedelta(minutes=47, seconds=31)  # 06:04:29
    rollout = s.ago(days=2, hours=20, minutes=40)
    loader = Ctr("graph-loader", f"{REG}/graph-loader:2.6.0", port=None,
                 requests={"cpu": "2", "memory": "1Gi"}, limits={"memory": "1536Mi"},
                 command=["/usr/local/bin/graph-loader"],
                 args=["--source=$(GRAPH_URL)", "--out=/graph", "--build-ch", "--threads=4"],
                 env_from=[{"configMapRef": {"name": "route-planner-graph"}}],
                 mounts=[{"mountPath": "/graph", "name": "graph"}])
    planner = Ctr("route-planner", f"{REG}/route-planner:5.12.3", port=8080,
                  requests={"cpu": "1500m", "memory": "6Gi"}, limits={"memory": "8Gi"},
                  env={"JAVA_TOOL_OPTIONS": "-XX:MaxRAMPercentage=70 -XX:+UseG1GC",
                       "GRAPH_DIR": "/graph", "SOLVER_THREADS": "4",
                       "SOLVE_DEADLINE_SECONDS": "30"},
                  readiness=http_probe("/v1/health/ready", delay=20, period=10),
                  liveness=http_probe("/v1/health/live", delay=60, period=20),
                  mounts=[{"mountPath": "/graph", "name": "graph", "readOnly": True}])
    old_born = [rollout + timedelta(seconds=14 + 95 * i) for i in range(4)]
    new_born = [t_scale + timedelta(seconds=1.3 + 0.4 * k) for k in range(3)]
    plans: dict[str, list] = {}

    def loader_runs(k: int) -> list:
        first = new_born[k] + timedelta(seconds=3.5 + s.rng.uniform(0, 1.5))
        return runs_from(first, NOW, lambda st: s.rng.uniform(71, 94), pull=0.9,
                         jitter=lambda: s.rng.uniform(0, 0.8))

    def states(i: int, name: str, started: datetime) -> dict[str, Obj]:
        if i < 4:
            return {}
        return {"route-planner": waiting("PodInitializing")}

    def init_states(i: int, name: str, started: datetime) -> dict[str, Obj]:
        if i < 4:
            done = old_born[i] + timedelta(seconds=4)
            return {"graph-loader": {"state": ended("Completed", 0, done, done + timedelta(
                seconds=61 + 4 * i)), "ready": True, "restartCount": 0, "lastState": {}}}
        runs = loader_runs(i - 4)
        plans[name] = runs
        status = container_status(runs, name, NS, "graph-loader", reason="OOMKilled", code=137,
                                  uid=c.uid("Pod", NS, name), ready=False)
        return {"graph-loader": status}

    work, pods = deploy(
        s, NS, "route-planner", [planner], init=[loader], replicas=7, nodes=routing,
        revision=37, rollout=rollout, statuses=states, init_statuses=init_states,
        born=lambda i: old_born[i] if i < 4 else new_born[i - 4],
        labels={"app.kubernetes.io/name": "route-planner", "app.kubernetes.io/part-of":
                "dispatch"},
        node_selector={"cloud.google.com/gke-nodepool": "routing-pool"},
        volumes=[{"name": "graph", "emptyDir": {"sizeLimit": "6Gi"}}],
        annotations={"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"})
    fix_pod_ips(s)
    old_pods, new_pods = pods[:4], pods[4:]
    for pod in new_pods:
        pod["status"]["phase"] = "Pending"
        for cond in pod["status"]["conditions"]:
            if cond["type"] == "Initialized":
                cond["lastTransitionTime"] = pod["metadata"]["creationTimestamp"]
    ready_since = [old_born[i] + timedelta(seconds=97) for i in range(4)]
    for pod, when in zip(old_pods, ready_since, strict=True):
        for cond in pod["status"]["conditions"]:
            if cond["type"] in ("Ready", "ContainersReady"):
                cond["lastTransitionTime"] = iso(when)
            if cond["type"] == "Initialized":
                cond["lastTransitionTime"] = iso(when - timedelta(seconds=28))
        status = pod["status"]["containerStatuses"][0]
        status["state"]["running"]["startedAt"] = iso(when - timedelta(seconds=26))
    work.obj["metadata"]["annotations"] = {"deployment.kubernetes.io/revision": "37"}

    c.add({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": c.meta("ConfigMap", "route-planner-graph", NS, s.ago(days=388),
                              {"app.kubernetes.io/name": "route-planner"}),
           "data": {"GRAPH_URL": GRAPH, "GRAPH_PROFILE": "van-3.5t",
                    "CH_WITNESS_SEARCH_LIMIT": "500"}})
    hpa_meta = c.meta("HorizontalPodAutoscaler", "route-planner", NS, s.ago(days=301),
                      {"app.kubernetes.io/name": "route-planner"})
    hpa = c.add({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": hpa_meta,
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                    "name": "route-planner"},
                 "minReplicas": 4, "maxReplicas": 12,
                 "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                     "type": "Utilization", "averageUtilization": 65}}}],
                 "behavior": {"scaleDown": {"stabilizationWindowSeconds": 900}}},
        "status": {"currentReplicas": 7, "desiredReplicas": 7, "lastScaleTime": iso(t_scale),
                   "currentMetrics": [{"type": "Resource", "resource": {
                       "name": "cpu", "current": {"averageUtilization": 93,
                                                  "averageValue": "1397m"}}}],
                   "conditions": [
                       {"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale",
                        "message": "recommended size matches current size",
                        "lastTransitionTime": iso(t_scale + timedelta(seconds=15))},
                       {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound",
                        "message": "the HPA was able to successfully calculate a replica count "
                        "from cpu resource utilization (percentage of request)",
                        "lastTransitionTime": iso(s.ago(days=4, hours=2))},
                       {"type": "ScalingLimited", "status": "False",
                        "reason": "DesiredWithinRange",
                        "message": "the desired count is within the acceptable range",
                        "lastTransitionTime": iso(s.ago(days=4, hours=2))}]}})
    c.event(hpa, "SuccessfulRescale", "New size: 7; reason: cpu resource utilization "
            "(percentage of request) above target", first=t_scale,
            component="horizontal-pod-autoscaler")
    rs = work.revisions[-1]
    c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set {rs['metadata']['name']} "
            "from 4 to 7", first=t_scale, component="deployment-controller")
    image = loader.image
    oom_by_node: dict[str, list[datetime]] = {}
    for pod, born in zip(new_pods, new_born, strict=True):
        name = pod["metadata"]["name"]
        c.event(rs, "SuccessfulCreate", f"Created pod: {name}", first=born,
                component="replicaset-controller")
        c.event(pod, "Scheduled", f"Successfully assigned {NS}/{name} to "
                f"{pod['spec']['nodeName']}", first=born, component="default-scheduler",
                host="")
        restart_events(s, pod, "graph-loader", plans[name], now=NOW, image=image, init=True)
        for r in plans[name]:
            if r.end is not None:
                oom_by_node.setdefault(pod["spec"]["nodeName"], []).append(r.end)
    by_name = {n["metadata"]["name"]: n for n in nodes}
    for node_name, deaths in oom_by_node.items():
        deaths.sort()
        c.event(by_name[node_name], "OOMKilling", "Memory cgroup out of memory: Killed process "
                f"{s.rng.randrange(30000, 90000)} (graph-loader) total-vm:2301548kB, "
                "anon-rss:1563204kB, file-rss:11872kB, shmem-rss:0kB, UID:65532 "
                "pgtables:3360kB oom_score_adj:-997", first=deaths[0], last=deaths[-1],
                count=len(deaths), type_="Warning", component="kernel-monitor", host=node_name)

    # graph-loader output: what each instance printed before the kernel killed it
    def loader_lines(start: datetime, end: datetime | None) -> list[tuple[float, str]]:
        out = [(0.02, "INFO graph-loader 2.6.0 (go1.23.4) threads=4 out=/graph"),
               (0.31, f"INFO downloading {GRAPH}"),
               (0.58, "INFO object generation 1738982866104558, size 2.31 GiB, graph version "
                "2027-02-09 (regions: benelux, de, at, ch)"),
               (31.4, "INFO download complete in 30.8s (75.0 MiB/s)"),
               (44.9, "INFO parsed 41207331 nodes, 83911204 edges, 12874 turn restrictions"),
               (46.2, "INFO profile van-3.5t: 38944019 routable nodes after filtering"),
               (46.3, "INFO building contraction hierarchy: 4 threads, witness limit 500")]
        span = (end - start).total_seconds() if end else (NOW - start).total_seconds()
        t, level = 52.0, 5
        while t < span - 3:
            out.append((t, f"INFO contraction {level}% ({level * 389440} nodes contracted, "
                        f"heap {int(980 + level * 14.5)} MiB)"))
            t += s.rng.uniform(5.5, 8.5)
            level += 5
        return [x for x in out if x[0] < span]

    for pod in new_pods:
        name = pod["metadata"]["name"]
        runs = plans[name]
        s.pod_log(pod, "graph-loader", lines(runs[-1].start,
                                             loader_lines(runs[-1].start, runs[-1].end)))
        s.pod_log(pod, "graph-loader", lines(runs[-2].start,
                                             loader_lines(runs[-2].start, runs[-2].end)),
                  previous=True)
        for r in runs:
            for offset, text in loader_lines(r.start, r.end):
                level, msg = text.split(" ", 1)
                s.logs.add(r.start + timedelta(seconds=offset), level.lower(), msg,
                           namespace=NS, pod=name, container="graph-loader",
                           service="route-planner", node=pod["spec"]["nodeName"])

    # ---- metrics of route-planner
    edge = t_scale.timestamp()

    def load(t: int) -> float:
        ramp = min(1.0, max(0.0, (t - (edge - 1500)) / 2400))
        return 0.35 + 0.65 * ramp  # share of the morning peak

    def p95(t: int) -> float:
        return 2.1 + 1.6 * load(t) if t < edge + 200 else 6.5 + 15 * min(1.0, (t - edge) / 1500)

    for pod in old_pods:
        name = pod["metadata"]["name"]
        working_set(s, pod, "route-planner", drift(s, 5230 * MIB, 0.02))
        cpu_seconds(s, pod, "route-planner", lambda t: 0.42 + 1.02 * load(t) + (
            0.0 if t < edge else 0.12) * s.rng.uniform(0.9, 1.1))
        requests(s, pod, "route-planner", rps=lambda t: 3.8 * load(t), codes={
            "200": lambda t: 0.975 if t < edge + 300 else 0.78,
            "400": lambda t: 0.02,
            "504": lambda t: 0.001 if t < edge + 300 else 0.2,
        })
        summary(s, "route_solve_duration_seconds", "Time to solve one tour planning request.",
                {"namespace": NS, "service": "route-planner", "pod": name}, alive(s, pod),
                lambda t: 3.8 * load(t), {"0.95": p95},
                lambda t: p95(t) * 0.45)

    for pod in new_pods:
        name = pod["metadata"]["name"]
        runs = plans[name]

        def mem(t: int, rs: list = runs) -> float | None:
            r = up_at(rs, t)
            if r is None or t - r.start.timestamp() < 5:
                return None
            age = t - r.start.timestamp()
            if age < 32:
                return (60 + 4 * age) * MIB
            return min(LIMIT * 0.995, (180 + 1400 * ((age - 32) / 50) ** 1.2) * MIB)
        working_set(s, pod, "graph-loader", mem, times=scraped(s, runs, pod, grace=5))
        restarts_series(s, pod, "graph-loader", 0, [int(r.end.timestamp()) + 1 for r in runs
                                                    if r.end is not None], init=True)
        limit_series(s, pod, "graph-loader", LIMIT, init=True)
        first_kill = runs[0].end.timestamp() if runs[0].end else float("inf")
        gauge(s, "kube_pod_init_container_status_last_terminated_reason",
              {"namespace": NS, "pod": name, "container": "graph-loader", "reason": "OOMKilled"},
              after(first_kill),
              "Describes the last reason the init container was in terminated state.",
              times=alive(s, pod))
        gauge(s, "kube_pod_init_container_status_waiting_reason",
              {"namespace": NS, "pod": name, "container": "graph-loader",
               "reason": "CrashLoopBackOff"},
              _backing_off(runs),
              "Describes the reason the init container is currently in waiting state.",
              times=alive(s, pod))
    gauge(s, "kube_deployment_spec_replicas", {"namespace": NS, "deployment": "route-planner"},
          lambda t: 4.0 if t < edge else 7.0, "Number of desired pods for a deployment.")
    gauge(s, "kube_deployment_status_replicas_available", {"namespace": NS, "deployment":
                                                           "route-planner"},
          lambda t: 4.0, "The number of available replicas per deployment.")
    for metric, value, help_ in (
            ("kube_horizontalpodautoscaler_status_current_replicas",
             lambda t: 4.0 if t < edge else 7.0, "Current number of replicas of pods managed "
             "by this autoscaler."),
            ("kube_horizontalpodautoscaler_status_desired_replicas",
             lambda t: 4.0 if t < edge - 30 else 7.0, "Desired number of replicas of pods "
             "managed by this autoscaler."),
            ("kube_horizontalpodautoscaler_spec_max_replicas", lambda t: 12.0,
             "Upper limit for the number of pods that can be set by the autoscaler; cannot be "
             "smaller than MinReplicas.")):
        gauge(s, metric, {"namespace": NS, "horizontalpodautoscaler": "route-planner"}, value,
              help_)

    # ---- route-planner logs (the four serving pods)
    start = NOW - timedelta(hours=2)
    logs_for(s, old_pods, "route-planner", "route-planner", [
        ("info", "POST /v1/tours/solve depot=NL-UTR-02 stops=212 vehicles=14 solved in 1.9s",
         {"http.response.status_code": 200}),
        ("info", "POST /v1/tours/solve depot=DE-DUS-01 stops=388 vehicles=27 solved in 3.1s",
         {"http.response.status_code": 200}),
        ("warn", "stop 4471-22 geocode outside graph bounds, snapped 1.2km", {}),
        ("info", "GET /v1/tours/plan/88213 200", {"http.response.status_code": 200}),
        ("warn", "POST /v1/tours/solve 400: vehicle capacity 0 for vehicle VAN-1182",
         {"http.response.status_code": 400}),
    ], 96, start=start, end=NOW)
    logs_for(s, old_pods, "route-planner", "route-planner", [
        ("warn", "solve queue depth 23 (solver threads 4 busy), request waited 9.4s",
         {}),
        ("error", "POST /v1/tours/solve depot=BE-ANR-01 504: solve deadline of 30s exceeded "
         "(queued 17.2s)", {"http.response.status_code": 504, "error.type":
                            "SolveDeadlineExceeded"}),
        ("info", "POST /v1/tours/solve depot=DE-KRE-03 stops=301 vehicles=22 solved in 14.8s",
         {"http.response.status_code": 200}),
    ], 90, start=t_scale + timedelta(minutes=4), end=NOW)

    # ---- the publisher of the graph (ran fine at night; its Job is gone after its TTL)
    pub = Ctr("graph-publisher", f"{REG}/graph-publisher:1.8.1", port=None,
              requests={"cpu": "4", "memory": "24Gi"}, limits={"memory": "28Gi"},
              args=["--regions=benelux,de,at,ch", f"--publish={GRAPH}"])
    pub_spec = {"containers": [pub.spec()], "restartPolicy": "Never",
                "serviceAccountName": "graph-publisher",
                "nodeSelector": {"cloud.google.com/gke-nodepool": "routing-pool"}}
    c.add({"apiVersion": "batch/v1", "kind": "CronJob",
           "metadata": c.meta("CronJob", "graph-publisher", NS, s.ago(days=388),
                              {"app.kubernetes.io/name": "graph-publisher"}, generation=6),
           "spec": {"schedule": "30 1 * * *", "timeZone": "Europe/Amsterdam",
                    "concurrencyPolicy": "Forbid", "suspend": False,
                    "successfulJobsHistoryLimit": 1, "failedJobsHistoryLimit": 1,
                    "jobTemplate": {"spec": {"backoffLimit": 1, "ttlSecondsAfterFinished": 3600,
                                             "template": {"metadata": {"labels": {
                                                 "app.kubernetes.io/name": "graph-publisher"}},
                                                 "spec": pub_spec}}}},
           "status": {"lastScheduleTime": iso(NOW.replace(hour=0, minute=30, second=0)),
                      "lastSuccessfulTime": iso(NOW.replace(hour=2, minute=47, second=12))}})

    # ---- red herrings
    portal = Ctr("depot-portal", f"{REG}/depot-portal:2027.2.3", port=3000,
                 requests={"cpu": "200m", "memory": "384Mi"}, limits={"memory": "768Mi"},
                 readiness=http_probe("/api/health", delay=5))
    bad = s.ago(days=1, hours=19, minutes=12)

    def portal_states(i: int, name: str, started: datetime) -> dict[str, Obj]:
        if i != 1:
            return {}
        return {"depot-portal": running(bad, restarts=1, last=ended(
            "Error", 1, started, bad - timedelta(seconds=6)))}
    _, portals = deploy(s, NS, "depot-portal", [portal], replicas=2, nodes=default_pool,
                        revision=88, rollout=s.ago(days=3, hours=1), statuses=portal_states)
    restarts_series(s, portals[1], "depot-portal", 1, [])
    logs_for(s, portals, "depot-portal", "depot-portal", [
        ("info", "GET /depots/NL-UTR-02/tours 200", {"http.response.status_code": 200}),
        ("warn", "session expired for user d.vermeulen, redirecting to SSO", {}),
        ("warn", "GET /favicon-32.png 404", {"http.response.status_code": 404}),
    ], 32, start=start, end=NOW)
    logs_for(s, portals, "depot-portal", "depot-portal", [
        ("error", "planner call failed: 504 Gateway Timeout from route-planner "
         "(/v1/tours/solve)", {"http.response.status_code": 502}),
    ], 18, start=t_scale + timedelta(minutes=5), end=NOW)
    sms = Ctr("sms-sender", f"europe-west1-docker.pkg.dev/{PROJECT}/notify/sms-sender:0.19.2",
              port=8080, requests={"cpu": "100m", "memory": "128Mi"}, limits={"memory": "256Mi"},
              readiness=http_probe("/ready", delay=5, timeout=1))
    _, smss = deploy(s, "customer-notify", "sms-sender", [sms], replicas=2, nodes=default_pool,
                     revision=14, rollout=s.ago(days=5, hours=4), offset=1)
    for pod in smss:
        plain(s, pod, "sms-sender", 97)
    blip = NOW - timedelta(minutes=36, seconds=12)
    ip = smss[0]["status"]["podIP"]
    c.event(smss[0], "Unhealthy", f'Readiness probe failed: Get "http://{ip}:8080/ready": '
            "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            first=blip, last=blip + timedelta(seconds=10), count=2, type_="Warning",
            field_path="spec.containers{sms-sender}")
    logs_for(s, smss, "sms-sender", "sms-sender", [
        ("info", "delivered ETA notice to +31******12 (parcel 3S7Q..)", {}),
        ("warn", "provider messagebird returned 429 Too Many Requests, retry after 2s",
         {"http.response.status_code": 429}),
        ("info", "delivery receipt DELIVERED for msg 7f1c...", {}),
    ], 30, start=start, end=NOW)
    fb = Ctr("fluentbit", "gke.gcr.io/fluent-bit:v1.8.12-gke.37", port=None,
             requests={"cpu": "50m", "memory": "100Mi"}, limits={"memory": "250Mi"})
    _, fbs = daemonset(s, "kube-system", "fluentbit-gke", [fb], node_list=nodes, generation=9,
                       since=s.ago(days=4.7), labels={"k8s-app": "fluentbit-gke",
                                                      "addonmanager.kubernetes.io/mode":
                                                      "Reconcile"})
    logs_for(s, fbs, "fluentbit", "fluentbit-gke", [
        ("warn", "[engine] failed to flush chunk '1-1738983311.482910.flb', retry in 7 seconds: "
         "task_id=3, input=tail.0 > output=stackdriver.0", {}),
        ("info", "[input:tail:tail.0] inotify_fs_add(): inode=1048712 watch_fd=41 "
         "name=/var/log/containers/route-planner.log", {}),
    ], 36, start=start, end=NOW)
    return s



def _backing_off(runs: list[Run]) -> Callable[[int], float]:
    """1 while the kubelet waits to restart a container of `runs` after its first death."""
    first = runs[0].end.timestamp() if runs[0].end else float("inf")
    return lambda t: 0.0 if up_at(runs, t) or t < first else 1.0
