"""Publishing: pods evicted one after another. On one worker (the only one on a newer kernel)
unreclaimable slab memory grows by ~10 GiB an hour outside every pod; the node reaches its
hard eviction threshold, gets MemoryPressure, and the kubelet evicts pods to reclaim memory."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from tests.scenario_tools.common import MIB, Story, container_metrics, node_conditions, truth
from tests.scenario_tools.kube import Ctr, ended, http_probe, iso, running

from .base import (
    GIB,
    alive,
    daemonset,
    deployment,
    gauge,
    host_network,
    http_series,
    logs_for,
    metal_nodes,
    parse,
    quiet_container,
    set_times,
)

ID = "publishing-pods-evicted"
NOW = datetime.fromisoformat("2027-01-27T14:09:00+00:00")
REG = "harbor.dc2.pressgroup.internal"
BAD = "k8s-wrk-07"
THRESHOLD = 500 * MIB
TOTAL_KI = 131890396
BUCKETS = (0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0)


def build() -> Story:
    s = Story(
        id=ID,
        title="Publishing pods getting evicted",
        now=NOW,
        report="""\
Lots of Evicted pods in publishing in the last half hour (and one in ads). The midday
newsletter send got interrupted and paywall-api had a short burst of 503s. Pods come back on
their own but it keeps happening. Is one of our apps misbehaving?
""",
        truth=truth(
            "node_failure", "Node", "", BAD,
            ["MemoryPressure", "EvictionThresholdMet", "The node was low on resource: memory",
             "node_memory_SUnreclaim_bytes", "5.15.0-131-generic"],
            f"Cordon and drain {BAD}: unreclaimable kernel slab memory keeps growing on it "
            "(outside any pod, only on the node running kernel 5.15.0-131), so the kubelet "
            "evicts pods; reboot it into the previous kernel (5.15.0-126) like the other "
            "workers and report the leak."))
    set_times(s, 2.0, 30)
    c = s.cluster
    for ns, days in (("default", 900), ("kube-system", 900), ("publishing", 640),
                     ("ads", 412), ("monitoring", 870), ("ci", 300)):
        c.namespace(ns, s.ago(days=days))
    names = ["k8s-wrk-05", "k8s-wrk-06", BAD, "k8s-wrk-08"]
    nodes = metal_nodes(s, names, ips=["10.30.4.15", "10.30.4.16", "10.30.4.17", "10.30.4.18"],
                        kubelet="v1.31.4", kernel="5.15.0-126-generic", cpu="32",
                        memory=f"{TOTAL_KI}Ki", alloc_cpu="31500m", alloc_memory="128745668Ki",
                        rack="r14", days=6.6)
    by = {n["metadata"]["name"]: n for n in nodes}
    bad = by[BAD]
    rebooted = s.ago(days=6, hours=9, minutes=12)
    bad["status"]["nodeInfo"]["kernelVersion"] = "5.15.0-131-generic"
    for n in nodes:
        n["metadata"]["labels"]["hardware/class"] = "r650-128g"
        n["metadata"]["annotations"] = {
            "kubeadm.alpha.kubernetes.io/cri-socket": "unix:///var/run/containerd/containerd.sock",
            "node.alpha.kubernetes.io/ttl": "0",
            "projectcalico.org/IPv4Address": n["status"]["addresses"][0]["address"] + "/24",
            "volumes.kubernetes.io/controller-managed-attach-detach": "true"}
    t0 = NOW - timedelta(minutes=33, seconds=20)  # MemoryPressure since
    for cond in bad["status"]["conditions"]:
        if cond["type"] == "MemoryPressure":
            cond.update({"status": "True", "reason": "KubeletHasInsufficientMemory",
                         "message": "kubelet has insufficient memory available",
                         "lastTransitionTime": iso(t0)})
        elif cond["type"] == "Ready":
            cond["lastTransitionTime"] = iso(rebooted + timedelta(minutes=3))
        else:
            cond["lastTransitionTime"] = iso(rebooted + timedelta(minutes=3))
    bad["spec"]["taints"] = [{"key": "node.kubernetes.io/memory-pressure", "effect":
                              "NoSchedule", "timeAdded": iso(t0)}]

    # ---- workloads; index 0 of each evicted one sits on the bad node
    others = [by["k8s-wrk-05"], by["k8s-wrk-06"], by["k8s-wrk-08"]]
    victims = []  # (work, pod, container, ws_bytes, request text)

    def app(ns: str, name: str, image: str, replicas: int, mem_req: str, mem_lim: str,
            ws_mib: float, on_bad: bool, *, port: int = 8080, rev: int = 9,
            days: float = 3.0, service: int | None = 80, extra_env: dict | None = None,
            cpu: float = 0.1) -> tuple:
        ctr = Ctr(name, f"{REG}/{ns}/{name}:{image}", port=port if service else None,
                  requests={"cpu": "250m", "memory": mem_req}, limits={"memory": mem_lim},
                  env=extra_env or {}, readiness=http_probe("/healthz", delay=5)
                  if service else None)
        node_list = [bad, *others] if on_bad else others
        work, pods = deployment(s, ns, name, [ctr], replicas=replicas, node_list=node_list,
                                revision=rev, rollout=s.ago(days=days, hours=s.rng.random() * 5),
                                service=service,
                                labels={"app.kubernetes.io/name": name,
                                        "app.kubernetes.io/part-of": ns})
        for pod in pods:
            if pod is pods[0] and on_bad:
                victims.append((work, pod, name, ws_mib * MIB, mem_req))
            else:
                quiet_container(s, pod, name, ws_mib * s.rng.uniform(0.93, 1.05), cpu=cpu)
        return work, pods
    _, renderers = app("publishing", "article-renderer", "2027.1.9", 3, "1Gi", "4Gi", 2054, True,
                       rev=61, days=1.2, cpu=0.8)
    _, bids = app("ads", "bid-gateway", "5.2.1", 3, "768Mi", "2Gi", 1630, True, rev=133,
                  days=2.4, cpu=0.6)
    _, letters = app("publishing", "newsletter-worker", "3.0.4", 2, "512Mi", "1536Mi", 1130,
                     True, rev=22, days=4.1, service=None)
    _, paywalls = app("publishing", "paywall-api", "1.17.2", 3, "512Mi", "1Gi", 705, True,
                      rev=48, days=3.3, cpu=0.25)
    _, comments = app("publishing", "comments-api", "0.44.0", 2, "384Mi", "768Mi", 455, True,
                      rev=17, days=5.0)
    _, editors = app("publishing", "editor-ui", "2027.1.3", 2, "256Mi", "512Mi", 190, False,
                     rev=90, days=2.0)
    # the bad node also runs pods that stay within their requests (never chosen)
    _, searches = app("publishing", "search-indexer", "7.1.0", 1, "6Gi", "8Gi", 4800, False,
                      rev=12, days=5.5, service=None)
    # ---- the slab leak and the kubelet's evictions
    pods_ws = sum(v[3] for v in victims)
    resident = 2.6 * GIB  # system daemons, kubelet, page cache floor
    total = TOTAL_KI * 1024.0
    rate = 2.87 * MIB  # bytes a second (~10 GiB an hour)
    slab_t0 = total - pods_ws - resident - THRESHOLD
    evictions = []  # (time, victim)
    ends: dict[str, datetime] = {}
    replacements: dict[str, list] = {}
    alive_ws = pods_ws
    free_at = t0.timestamp()
    order = list(victims)
    t = t0.timestamp() + 8
    while order and t <= NOW.timestamp():
        slab = slab_t0 + rate * (t - t0.timestamp())
        avail = total - slab - alive_ws - resident
        if avail < THRESHOLD and t >= free_at:
            v = order.pop(0)
            evictions.append((t, v, avail))
            alive_ws -= v[3]
            free_at = t + 20
        t += 10

    def slab_at(t: float) -> float:
        return slab_t0 + rate * (t - t0.timestamp())

    def avail_at(t: float) -> float:
        ws = pods_ws - sum(v[3] for when, v, _ in evictions if when <= t)
        return max(total - slab_at(t) - ws - resident, 0.72 * THRESHOLD)
    hour_ago = NOW - timedelta(hours=1)
    c.event(bad, "NodeHasInsufficientMemory", f"Node {BAD} status is now: "
            "NodeHasInsufficientMemory", first=t0, component="kubelet", host=BAD)
    c.event(bad, "EvictionThresholdMet", "Attempting to reclaim memory",
            first=t0 + timedelta(seconds=2), last=datetime.fromtimestamp(
                evictions[-1][0], NOW.tzinfo) - timedelta(seconds=1), count=len(evictions) + 3,
            type_="Warning", component="kubelet", host=BAD)
    for when_ts, (work, pod, name, ws, req), avail in evictions:
        when = datetime.fromtimestamp(when_ts, NOW.tzinfo)
        msg = (f"The node was low on resource: memory. Threshold quantity: 500Mi, available: "
               f"{int(avail / 1024)}Ki. Container {name} was using {int(ws / 1024)}Ki, request is "
               f"{req}, has larger consumption of its request. ")
        started = parse(pod["status"]["containerStatuses"][0]["state"]["running"]["startedAt"])
        status = pod["status"]
        status["phase"] = "Failed"
        status["reason"] = "Evicted"
        status["message"] = msg
        status["containerStatuses"][0].update({
            "ready": False, "started": False,
            "state": ended("Error", 137, started, when + timedelta(seconds=1))})
        status["containerStatuses"][0]["state"]["terminated"]["containerID"] = \
            status["containerStatuses"][0]["containerID"]
        for cond in status["conditions"]:
            if cond["type"] in ("Ready", "ContainersReady"):
                cond.update({"status": "False", "reason": "PodFailed",
                             "lastTransitionTime": iso(when + timedelta(seconds=1))})
                cond.pop("message", None)
            if cond["type"] == "PodReadyToStartContainers":
                cond.update({"status": "False", "lastTransitionTime": iso(when +
                                                                           timedelta(seconds=2))})
        status["conditions"].insert(0, {"type": "DisruptionTarget", "status": "True",
                                        "reason": "TerminationByKubelet", "message": msg,
                                        "lastProbeTime": None, "lastTransitionTime": iso(when)})
        field = f"spec.containers{{{name}}}"
        c.event(pod, "Evicted", msg, first=when, type_="Warning", host=BAD)
        c.event(pod, "Killing", f"Stopping container {name}", first=when + timedelta(seconds=1),
                field_path=field, host=BAD)
        rs = work.revisions[-1]
        target = others[(len(evictions) + int(when_ts)) % len(others)]
        repl_born = when + timedelta(seconds=1, milliseconds=400)
        repl = c.pod(work, rs, node=target, created=repl_born,
                     statuses={name: running(repl_born + timedelta(seconds=4))})
        c.event(rs, "SuccessfulCreate", f"Created pod: {repl['metadata']['name']}",
                first=repl_born, component="replicaset-controller")
        c.event(repl, "Scheduled", f"Successfully assigned {work.namespace}/"
                f"{repl['metadata']['name']} to {target['metadata']['name']}", first=repl_born,
                component="default-scheduler", host="")
        for reason, text in (("Pulled", f'Container image "{pod["spec"]["containers"][0]["image"]}"'
                              " already present on machine"),
                             ("Created", f"Created container: {name}"),
                             ("Started", f"Started container {name}")):
            c.event(repl, reason, text, first=repl_born + timedelta(seconds=3), field_path=field)
        ends[pod["metadata"]["name"]] = when
        replacements.setdefault(name, []).append(repl)
        pod["metadata"]["_deleted"] = int(when_ts)
        container_metrics(s, pod, name, memory=lambda t, w=ws: w * (1 + 0.01 * math.sin(t / 300)))
        pod["metadata"].pop("_deleted")
        quiet_container(s, repl, name, ws / MIB * 0.96, cpu=0.2)
        gauge(s, "kube_pod_status_reason", {"namespace": work.namespace,
                                            "pod": pod["metadata"]["name"], "reason": "Evicted"},
              lambda t, w=when_ts: 1.0 if t >= w + 5 else 0.0,
              "The pod status reasons", times=alive(s, pod))
    del hour_ago

    # ---- node-exporter: the slab of the bad node grows, its pods do not
    for n in nodes:
        name = n["metadata"]["name"]
        inst = {"instance": n["status"]["addresses"][0]["address"] + ":9100", "node": name,
                "job": "node-exporter"}
        if name == BAD:
            gauge(s, "node_memory_MemAvailable_bytes", inst, lambda t: avail_at(t),
                  "Memory information field MemAvailable_bytes.")
        else:
            base = s.rng.uniform(58, 83) * GIB
            gauge(s, "node_memory_MemAvailable_bytes", inst,
                  lambda t, b=base: b * (1 + 0.01 * math.sin(t / 800)),
                  "Memory information field MemAvailable_bytes.")
    for n in nodes:
        name = n["metadata"]["name"]
        inst = {"instance": n["status"]["addresses"][0]["address"] + ":9100", "node": name,
                "job": "node-exporter"}
        gauge(s, "node_memory_MemTotal_bytes", inst, lambda t: total,
              "Memory information field MemTotal_bytes.")
    for n in nodes:
        name = n["metadata"]["name"]
        inst = {"instance": n["status"]["addresses"][0]["address"] + ":9100", "node": name,
                "job": "node-exporter"}
        if name == BAD:
            gauge(s, "node_memory_SUnreclaim_bytes", inst, lambda t: slab_at(t),
                  "Memory information field SUnreclaim_bytes.")
        else:
            sb = s.rng.uniform(1.1, 1.6) * GIB
            gauge(s, "node_memory_SUnreclaim_bytes", inst,
                  lambda t, b=sb: b * (1 + 0.004 * math.sin(t / 500)),
                  "Memory information field SUnreclaim_bytes.")
    node_conditions(s, nodes, {(BAD, "MemoryPressure"): lambda t: t >= t0.timestamp()})
    for n in nodes:
        name = n["metadata"]["name"]
        gauge(s, "kube_node_spec_taint", {"node": name, "key":
                                          "node.kubernetes.io/memory-pressure",
                                          "value": "", "effect": "NoSchedule"},
              lambda t: 1.0 if t >= t0.timestamp() else None, "The taint of a cluster node.") \
            if name == BAD else None

    # ---- the apps' own view
    first_pay = [e for e in evictions if e[1][2] == "paywall-api"]
    pay_edge = first_pay[0][0] if first_pay else 0
    for pod in paywalls:
        http_series(s, pod, "paywall-api", rps=lambda t: 31.0,
                    codes={"200": lambda t: 0.97, "402": lambda t: 0.028,
                           "503": lambda t: 0.001 + (0.18 if pay_edge <= t < pay_edge + 90
                                                     else 0.0)},
                    median=lambda t: 0.022, buckets=BUCKETS)
    start = NOW - timedelta(hours=2)
    logs_for(s, paywalls + replacements.get("paywall-api", []), "paywall-api", "paywall-api", [
                 ("info", "GET /v1/entitlements 200 8ms", {"http.response.status_code": 200}),
                 ("info", "metered article view counted for anonymous reader", {}),
                 ("warn", "subscription lookup slow (612ms) for account 88112", {}),
             ], 150, start=start, end=NOW, ends=ends)
    workers = letters + replacements.get("newsletter-worker", [])
    logs_for(s, workers, "newsletter-worker", "newsletter-worker", [
                 ("info", "sending batch 'morning-briefing' chunk 212/480 (1000 recipients)", {}),
                 ("info", "sending batch 'midday-deals' chunk 96/480 (1000 recipients)", {}),
                 ("warn", "SES throttled (Maximum sending rate exceeded), backing off 2s", {}),
             ], 60, start=start, end=NOW, ends=ends)
    letter_evictions = [e for e in evictions if e[1][2] == "newsletter-worker"]
    for when_ts, *_ in letter_evictions:
        when = datetime.fromtimestamp(when_ts, NOW.tzinfo)
        repl = replacements["newsletter-worker"][-1]
        s.logs.add(when + timedelta(seconds=19), "warn", "resuming batch 'midday-deals' from "
                   "chunk 131/480: previous worker stopped without releasing its lease",
                   namespace="publishing", pod=repl["metadata"]["name"],
                   container="newsletter-worker", service="newsletter-worker",
                   node=repl["spec"]["nodeName"])
    pages = renderers + replacements.get("article-renderer", [])
    logs_for(s, pages, "article-renderer", "article-renderer", [
                 ("info", "rendered /politics/2027/01/27/budget-vote in 143ms", {}),
                 ("warn", "template cache miss storm: 412 misses in 10s", {}),
                 ("info", "GC: heap 1.71GiB after full collection", {}),
             ], 90, start=start, end=NOW, ends=ends)

    # ---- kube-system, monitoring, ci: ordinary neighbours and noise
    calico = Ctr("calico-node", "quay.io/calico/node:v3.29.1", port=None,
                 requests={"cpu": "250m", "memory": "256Mi"}, limits={"memory": "1Gi"})
    _, calicos = daemonset(s, "kube-system", "calico-node", [calico], node_list=nodes,
                           generation=5, since=s.ago(days=6.6), labels={"k8s-app": "calico-node"})
    exporter = Ctr("node-exporter", "quay.io/prometheus/node-exporter:v1.8.2", port=9100,
                   port_name="metrics", requests={"cpu": "50m", "memory": "64Mi"},
                   limits={"memory": "180Mi"}, args=["--path.rootfs=/host/root",
                                                    "--collector.meminfo"])
    _, exps = daemonset(s, "monitoring", "node-exporter", [exporter], node_list=nodes,
                        generation=3, since=s.ago(days=6.6),
                        labels={"app.kubernetes.io/name": "node-exporter"})
    host_network(calicos)
    for pod in calicos:
        quiet_container(s, pod, "calico-node", 188)
    host_network(exps)
    for pod in exps:
        quiet_container(s, pod, "node-exporter", 31)
    logs_for(s, calicos, "calico-node", "calico-node", [
        ("info", "Summarising 18 dataplane reconciliation loops over 1m2.4s: avg=4ms "
         "longest=31ms", {}),
        ("warn", "Failed to update route for 10.233.70.0/24, will retry: file exists", {}),
    ], 40, start=start, end=NOW)
    runner = Ctr("gitlab-runner", "registry.gitlab.com/gitlab-org/gitlab-runner:alpine-v17.7.0",
                 port=9252, port_name="metrics", requests={"cpu": "100m", "memory": "128Mi"},
                 limits={"memory": "256Mi"})
    old_restart = s.ago(days=3, hours=7)

    def runner_state(i: int, started: datetime) -> dict:
        return {"gitlab-runner": running(old_restart, restarts=2, last=ended(
            "Error", 1, started, old_restart - timedelta(seconds=10)))}
    _, runners = deployment(s, "ci", "gitlab-runner", [runner], replicas=1, node_list=others,
                            revision=14, rollout=s.ago(days=4, hours=2), statuses=runner_state,
                            service=None)
    quiet_container(s, runners[0], "gitlab-runner", 74)
    logs_for(s, runners, "gitlab-runner", "gitlab-runner", [
        ("info", "Checking for jobs... received job=884120 repo_url=https://gitlab.pressgroup."
         "internal/web/article-renderer.git", {}),
        ("error", "Job failed: command terminated with non-zero exit code: exit code 1 "
         "duration_s=212.4 job=884117", {}),
        ("warn", "Appending trace to coordinator... failed code=502 job=884121", {}),
    ], 50, start=start, end=NOW)
    del comments, editors, searches, bids
    return s
