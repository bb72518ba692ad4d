"""oom_killed: a huge new tenant lands on one cache shard; only that shard's pods die."""

from __future__ import annotations

from pathlib import Path

from . import _kit as k

SID = "tenant-cache-shard-oom"
NOW = "2026-02-17T15:20:00Z"
GI = 1024**3


def build(root: Path) -> None:
    c = k.Clock(NOW)
    old = c.s(days=80)
    nodes = [f"ip-10-20-{i}-{40 + i}.eu-west-1.compute.internal" for i in range(1, 5)]
    objs = [k.namespace(n, old) for n in ("cache", "platform", "edge", "billing")]
    objs += [k.node(n, old, {"eks.amazonaws.com/nodegroup": "general"}, cpu="8", mem="32Gi",
                    ip=f"10.20.{i + 1}.{41 + i}") for i, n in enumerate(nodes)]
    env = {"SHARD_COUNT": "3", "SHARD_OF": "ordinal % SHARD_COUNT",
           "CACHE_MAX_ENTRIES": "0", "WARM_ON_START": "true"}
    tmpl = k.template({"app": "tenant-cache"}, [k.container(
        "cache", "registry.quillmark.io/tenant-cache:3.4.2", cpu_req="500m", mem_req="1536Mi",
        cpu_lim="2", mem_lim="2Gi", env=env, ports=[7070], probe="/ready")])
    sts = k.statefulset("cache", "tenant-cache", c.s(days=41), 6, tmpl, ready=4)
    objs.append(sts)
    last_term = {"terminated": {"exitCode": 137, "reason": "OOMKilled",
                                "startedAt": "", "finishedAt": ""}}
    for i in range(6):
        pname = f"tenant-cache-{i}"
        node = nodes[i % 4]
        if i % 3 == 1:
            fin = c.ago(minutes=4 + i)
            lt = {"terminated": dict(last_term["terminated"],
                                     startedAt=k.iso(fin - k.timedelta(minutes=9)),
                                     finishedAt=k.iso(fin))}
            st = {"waiting": {"reason": "CrashLoopBackOff", "message":
                              f"back-off 5m0s restarting failed container=cache pod={pname}"
                              f"_cache({k.uid('Pod', 'cache', pname)})"}}
            p = k.pod(sts, pname, tmpl, node, c.s(days=5), ready=False, restarts=9 - i // 3,
                      state=st, last=lt, ip=f"10.20.{i % 4 + 1}.{100 + i}",
                      extra_labels={"statefulset.kubernetes.io/pod-name": pname})
            objs.append(p)
            objs.append(k.event(p, "BackOff", f"Back-off restarting failed container cache in "
                                f"pod {pname}_cache({p['metadata']['uid']})", c.s(minutes=118),
                                c.s(minutes=3), count=41, etype="Warning", host=node))
            objs.append(k.event(p, "Pulled", 'Container image "registry.quillmark.io/tenant-cache'
                                ':3.4.2" already present on machine', c.s(minutes=58),
                                c.s(minutes=15), count=7, host=node))
            objs.append(k.event(
                {"apiVersion": "v1", "kind": "Node", "metadata": {
                    "name": node, "uid": k.uid("Node", "", node)}},
                "OOMKilling", f"Memory cgroup out of memory: Killed process {31000 + i * 7} "
                f"(tenant-cache) total-vm:3318204kB, anon-rss:2093112kB, file-rss:20968kB, "
                f"shmem-rss:0kB, UID:10001 pgtables:4412kB oom_score_adj:985", c.s(minutes=57),
                c.s(minutes=14), count=6, etype="Warning", component="kernel-monitor",
                host=node))
        else:
            objs.append(k.pod(sts, pname, tmpl, node, c.s(days=5),
                              ip=f"10.20.{i % 4 + 1}.{100 + i}",
                              extra_labels={"statefulset.kubernetes.io/pod-name": pname}))
    svc = k.service("cache", "tenant-cache", old, {"app": "tenant-cache"}, 7070, 7070,
                     "172.20.14.9", clusterIP="None")
    svc["spec"]["clusterIPs"] = ["None"]
    objs.append(svc)
    objs.append(k.endpoints(svc, old, [(f"10.20.{i % 4 + 1}.{100 + i}", f"tenant-cache-{i}",
                                        nodes[i % 4]) for i in (0, 2, 3, 5)],
                            [(f"10.20.{i % 4 + 1}.{100 + i}", f"tenant-cache-{i}",
                              nodes[i % 4]) for i in (1, 4)]))
    gw, gw_rs, gw_pods = k.simple_app(objs, "edge", "api-gateway", old, 3,
                                      "registry.quillmark.io/api-gateway:2.19.0", nodes,
                                      "10.20.9", c.s(hours=5, minutes=10), revision=14,
                                      cpu_lim="1", mem_lim="512Mi", ports=[8080])
    objs.append(k.event(gw, "ScalingReplicaSet", f"Scaled up replica set "
                        f"{gw_rs['metadata']['name']} to 3", c.s(minutes=59), c.s(minutes=59),
                        component="deployment-controller"))
    _, _, adm_pods = k.simple_app(objs, "platform", "tenant-admin", old, 2,
                                    "registry.quillmark.io/tenant-admin:1.12.4", nodes,
                                    "10.20.8", c.s(days=4), revision=6, ports=[8000])
    _, _, bw_pods = k.simple_app(objs, "billing", "billing-worker", old, 1,
                                      "registry.quillmark.io/billing-worker:5.0.1", nodes,
                                      "10.20.7", c.s(days=6), revision=31)
    bw_pods[0]["status"]["containerStatuses"][0]["restartCount"] = 1
    bw_pods[0]["status"]["containerStatuses"][0]["lastState"] = {"terminated": {
        "exitCode": 1, "reason": "Error", "startedAt": c.s(days=6),
        "finishedAt": c.s(days=5, hours=2)}}

    logs = []
    onboard = c.ago(hours=2, minutes=15)
    logs.append(k.log(onboard, "tenant-admin", "platform", adm_pods[0]["metadata"]["name"],
                      "tenant onboarded tenant_id=t-88213 slug=orbital-freight plan=enterprise "
                      "seats=52000 catalog_items=4120000 shard=1"))
    logs.append(k.log(onboard, "tenant-admin", "platform", adm_pods[0]["metadata"]["name"],
                      "published cache warm request tenant=t-88213 shard=1 "
                      "owners=tenant-cache-1,tenant-cache-4"))
    import random
    rnd = random.Random(50_1)
    for m in range(0, 180, 2):
        t = c.ago(minutes=180 - m)
        for i in (0, 2, 3, 5):
            if rnd.random() < 0.4:
                logs.append(k.log(t, "tenant-cache", "cache", f"tenant-cache-{i}",
                                  f"shard={i % 3} tenants=1{i}4 entries={318000 + m * 91 + i} "
                                  f"heap_used={910 + (m % 17)}MiB evictions=0",
                                  container_name="cache"))
        if m % 6 == 0:
            logs.append(k.log(t, "api-gateway", "edge", gw_pods[m % 3]["metadata"]["name"],
                              "config reload: 212 routes, 0 changed", container_name="api-gateway"))
    for r in range(7):
        for i in (1, 4):
            t0 = c.ago(minutes=120 - r * 16 - i)
            pn = f"tenant-cache-{i}"
            logs.append(k.log(t0, "tenant-cache", "cache", pn, "starting tenant-cache 3.4.2 "
                              "shard=1 of 3 max_heap=unbounded", container_name="cache"))
            for j, (n, mib) in enumerate([(1200000, 1180), (2600000, 1610), (3900000, 1990)]):
                logs.append(k.log(t0 + k.timedelta(minutes=2 + 3 * j), "tenant-cache", "cache",
                                  pn, f"warming tenant=t-88213 (orbital-freight) loaded={n} "
                                  f"of 4120000 heap_used={mib}MiB", container_name="cache",
                                  level="warn" if mib > 1500 else "info"))
            logs.append(k.log(t0 + k.timedelta(minutes=5), "api-gateway", "edge",
                              gw_pods[r % 3]["metadata"]["name"],
                              f"upstream {pn}.tenant-cache.cache:7070 connect: connection "
                              f"refused; returning 503 tenant=t-88213", level="error",
                              container_name="api-gateway", **{"http.response.status_code": 503}))
    logs.append(k.log(c.ago(minutes=62), "api-gateway", "edge", gw_pods[0]["metadata"]["name"],
                      "rolled out api-gateway 2.19.0: route table unchanged, "
                      "added header X-Request-Region", container_name="api-gateway"))

    mx = k.Metrics()
    ts = k.steps(c, 3)
    for i in range(6):
        pts = []
        rst = []
        n = 0
        for t in ts:
            age = (int(c.now.timestamp()) - t) / 60
            if i % 3 == 1 and age < 122:
                phase = (122 - age + i) % 16
                v = (700 + phase * 95) * 1024**2
                if phase < 1:
                    n += 1
            else:
                v = (950 + (t // 60 + i * 7) % 40) * 1024**2
            pts.append((t, float(min(v, 2 * GI - 3 * 1024**2))))
            rst.append((t, float(n if i % 3 == 1 else 0)))
        lab = {"namespace": "cache", "pod": f"tenant-cache-{i}", "container": "cache"}
        mx.add("container_memory_working_set_bytes", "gauge", "Current working set in bytes.",
               "container_memory_working_set_bytes", lab, pts)
        mx.add("kube_pod_container_status_restarts", "counter",
               "The number of container restarts per container.",
               "kube_pod_container_status_restarts_total", lab, rst)
        mx.add("kube_pod_container_resource_limits", "gauge", "The number of requested limit "
               "resource by a container.", "kube_pod_container_resource_limits",
               {**lab, "resource": "memory", "unit": "byte"}, [(t, float(2 * GI)) for t in ts])
    sc = {"id": SID, "title": "Some tenants get 503s from the dashboard API", "now": NOW,
          "report": "dashboards for some customers return 503 since early afternoon, others "
                    "are fine. api-gateway got a release this morning, probably that. can "
                    "you check edge?\n",
          "truth": {"category": "oom_killed",
                    "culprit": {"kind": "StatefulSet", "namespace": "cache",
                                "name": "tenant-cache"},
                    "evidence": ["OOMKilled", "2Gi", "orbital-freight", "shard=1"],
                    "fix": "Give tenant-cache shard 1 more memory (raise the 2Gi limit) or "
                           "split the orbital-freight tenant across shards / cap cache entries"}}
    k.write(root, SID, sc, objs, logs, mx)
