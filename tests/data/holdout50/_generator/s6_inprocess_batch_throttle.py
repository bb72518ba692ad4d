"""cpu_throttling: a nightly batch runs inside the API process and hits the CPU limit."""

from __future__ import annotations

import random
from pathlib import Path

from . import _kit as k

SID = "catalog-api-inprocess-batch-throttle"
NOW = "2026-07-22T02:50:00Z"


def build(root: Path) -> None:
    c = k.Clock(NOW)
    old = c.s(days=365)
    nodes = [f"ip-10-70-{i}-{60 + i}.us-east-2.compute.internal" for i in range(1, 5)]
    objs = [k.namespace(n, old) for n in ("catalog", "search", "monitoring")]
    objs += [k.node(n, c.s(days=20), {"karpenter.sh/nodepool": "default"}, cpu="8", mem="32Gi",
                    ip=f"10.70.{i + 1}.{61 + i}") for i, n in enumerate(nodes)]
    env = {"SCHEDULER_ENABLED": "true", "FACET_REBUILD_CRON": "0 2 * * *",
           "GUNICORN_WORKERS": "4", "GUNICORN_THREADS": "8"}
    _, _, pods = k.simple_app(objs, "catalog", "catalog-api", c.s(days=250), 4,
                                 "ghcr.io/brightcart/catalog-api:8.14.1", nodes,
                                 "10.70.30", c.s(days=4, hours=7), revision=52, cpu_req="500m",
                                 cpu_lim="1", mem_req="1Gi", mem_lim="2Gi", env=env,
                                 ports=[8000], probe="/healthz")
    jt = k.template({"app": "catalog-export"}, [k.container(
        "export", "ghcr.io/brightcart/catalog-export:2.0.4", cpu_req="250m", mem_req="512Mi")],
        restartPolicy="OnFailure")
    cj = {"apiVersion": "batch/v1", "kind": "CronJob",
          "metadata": k.meta("CronJob", "catalog-export", "catalog", c.s(days=200)),
          "spec": {"schedule": "0 2 * * *", "concurrencyPolicy": "Forbid",
                   "jobTemplate": {"spec": {"template": jt}}},
          "status": {"lastScheduleTime": c.s(minutes=50), "lastSuccessfulTime": c.s(minutes=41)}}
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": k.meta("Job", "catalog-export-29219640", "catalog", c.s(minutes=50),
                              ownerReferences=[k.owner(cj)]),
           "spec": {"backoffLimit": 6, "completions": 1, "parallelism": 1, "template": jt},
           "status": {"succeeded": 1, "startTime": c.s(minutes=50),
                      "completionTime": c.s(minutes=41),
                      "conditions": [{"type": "Complete", "status": "True",
                                      "lastProbeTime": c.s(minutes=41),
                                      "lastTransitionTime": c.s(minutes=41)}]}}
    jp = k.pod(job, "catalog-export-29219640-7wzkc", jt, nodes[3], c.s(minutes=50),
               phase="Succeeded", ready=False,
               state={"terminated": {"exitCode": 0, "reason": "Completed",
                                     "startedAt": c.s(minutes=50),
                                     "finishedAt": c.s(minutes=41)}})
    objs += [cj, job, jp]
    objs.append(k.event(job, "Completed", "Job completed", c.s(minutes=41), c.s(minutes=41),
                        component="job-controller"))
    for p in pods[:2]:
        objs.append(k.event(p, "Unhealthy", "Readiness probe failed: Get \"http://"
                            f"{p['status']['podIP']}:8000/healthz\": context deadline exceeded "
                            "(Client.Timeout exceeded while awaiting headers)", c.s(minutes=44),
                            c.s(minutes=6), count=5, etype="Warning", host=p["spec"]["nodeName"]))
    k.simple_app(objs, "search", "opensearch-proxy", old, 2,
                 "ghcr.io/brightcart/os-proxy:1.3.0", nodes, "10.70.31", c.s(days=6), revision=9)
    k.simple_app(objs, "monitoring", "kube-state-metrics", old, 1,
                 "registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.12.0", nodes,
                 "10.70.32", c.s(days=6), revision=7)

    rnd = random.Random(506)
    start = c.ago(minutes=50)
    logs = []
    for p in pods:
        pn = p["metadata"]["name"]
        logs.append(k.log(start, "catalog-api", "catalog", pn,
                          'Running job "rebuild_search_facets (trigger: cron[month=\'*\', '
                          "day='*', day_of_week='*', hour='2', minute='0'], next run at: "
                          '2026-07-23 02:00:00 UTC)" (scheduled at 2026-07-22 02:00:00+00:00)',
                          container_name="catalog-api", **{"log.logger":
                                                           "apscheduler.executors.default"}))
        for j in range(1, 10):
            logs.append(k.log(start + k.timedelta(minutes=5 * j), "catalog-api", "catalog", pn,
                              f"facet rebuild progress: {j * 9}% categories={j * 410}/4100 "
                              f"products={j * 210000}", container_name="catalog-api"))
    for m in range(0, 180):
        t = c.ago(minutes=180 - m)
        batch = t >= start
        for p in pods:
            if rnd.random() < 0.3:
                ms = rnd.randint(900, 3400) if batch else rnd.randint(30, 110)
                logs.append(k.log(t, "catalog-api", "catalog", p["metadata"]["name"],
                                  f'"GET /v2/products/{rnd.randint(1000, 99999)} HTTP/1.1" 200 '
                                  f"{ms}ms", level="warn" if ms > 1000 else "info",
                                  container_name="catalog-api",
                                  **{"http.response.status_code": 200}))
        if batch and m % 3 == 0:
            logs.append(k.log(t, "catalog-api", "catalog", pods[m % 4]["metadata"]["name"],
                              "WARNING [gunicorn.error] Worker timeout "
                              f"(pid:{rnd.randint(40, 90)}) handling request, slow response",
                              level="warn",
                              container_name="catalog-api"))
    for j in range(8):
        logs.append(k.log(start + k.timedelta(minutes=j + 1), "catalog-export", "catalog",
                          jp["metadata"]["name"], f"exported page {j + 1}/8 to "
                          "s3://brightcart-exports/catalog/2026-07-22/", container_name="export"))

    mx = k.Metrics()
    ts = k.steps(c, 3)
    st = start.timestamp()
    for p in pods:
        lab = {"namespace": "catalog", "pod": p["metadata"]["name"], "container": "catalog-api"}
        cpu, per, thr = 31000.0, 9.0e5, 1200.0
        cu, cp, ct = [], [], []
        for t in ts:
            b = t >= st
            cpu += (0.99 if b else 0.28 + rnd.random() * 0.05) * 60
            per += 600
            thr += rnd.randint(310, 420) if b else rnd.randint(0, 3)
            cu.append((t, round(cpu, 2)))
            cp.append((t, per))
            ct.append((t, float(thr)))
        mx.add("container_cpu_usage_seconds", "counter", "Cumulative cpu time consumed.",
               "container_cpu_usage_seconds_total", lab, cu)
        mx.add("container_cpu_cfs_periods", "counter", "Number of elapsed enforcement period "
               "intervals.", "container_cpu_cfs_periods_total", lab, cp)
        mx.add("container_cpu_cfs_throttled_periods", "counter", "Number of throttled period "
               "intervals.", "container_cpu_cfs_throttled_periods_total", lab, ct)
        mx.add("kube_pod_container_resource_limits", "gauge", "The number of requested limit "
               "resource by a container.", "kube_pod_container_resource_limits",
               {**lab, "resource": "cpu", "unit": "core"}, [(t, 1.0) for t in ts[::5]])
    buckets = ["0.1", "0.25", "0.5", "1", "2.5", "+Inf"]
    acc = {b: 0.0 for b in buckets}
    cnt = 0.0
    tot = 0.0
    pts: dict[str, list[tuple[int, float]]] = {b: [] for b in buckets}
    csum, ccnt = [], []
    for t in ts:
        b = t >= st
        n = 2400
        share = [0.2, 0.35, 0.55, 0.7, 0.93, 1.0] if b else [0.91, 0.985, 0.995, 0.999, 1, 1]
        for bk, sh in zip(buckets, share, strict=True):
            acc[bk] += round(n * sh)
            pts[bk].append((t, acc[bk]))
        cnt += n
        tot += n * (1.1 if b else 0.07)
        csum.append((t, round(tot, 1)))
        ccnt.append((t, cnt))
    fam = "http_request_duration_seconds"
    for bk in buckets:
        mx.add(fam, "histogram", "Request latency.", f"{fam}_bucket",
               {"namespace": "catalog", "service": "catalog-api", "le": bk}, pts[bk])
    mx.add(fam, "histogram", "", f"{fam}_sum", {"namespace": "catalog", "service": "catalog-api"},
           csum)
    mx.add(fam, "histogram", "", f"{fam}_count",
           {"namespace": "catalog", "service": "catalog-api"}, ccnt)
    sc = {"id": SID, "title": "Catalog API slow every night around 2am", "now": NOW,
          "report": "catalog API p99 jumped from ~100ms to 2-3s at 2am and pages are firing. "
                    "the catalog-export cronjob runs at 2 too, I think it hammers the "
                    "database. can we just move it?\n",
          "truth": {"category": "cpu_throttling",
                    "culprit": {"kind": "Deployment", "namespace": "catalog",
                                "name": "catalog-api"},
                    "evidence": ["container_cpu_cfs_throttled_periods_total",
                                 "rebuild_search_facets", "limits: cpu: 1"],
                    "fix": "Move the facet rebuild out of the API pods (a separate CronJob, "
                           "SCHEDULER_ENABLED=false on the API) or raise catalog-api's CPU "
                           "limit"}}
    k.write(root, SID, sc, objs, logs, mx)
