"""bad_rollout: a new revision compresses every response at the highest brotli quality."""

from __future__ import annotations

import random
from pathlib import Path

from . import _kit as k

SID = "feed-api-max-compression-rollout"
NOW = "2026-09-15T13:35:00Z"


def build(root: Path) -> None:
    c = k.Clock(NOW)
    old = c.s(days=420)
    nodes = [f"gke-media-prod-pool-c-{h}" for h in ("71ab-2kqd", "71ab-9wxm", "c04e-t6rf",
                                                     "c04e-h8np")]
    objs = [k.namespace(n, old) for n in ("media", "recs", "platform")]
    objs += [k.node(n, c.s(days=25), {"cloud.google.com/gke-nodepool": "pool-c"}, cpu="16",
                    mem="64Gi", ip=f"10.132.0.{50 + i}") for i, n in enumerate(nodes)]
    roll = c.ago(minutes=55)
    base_env = {"UPSTREAM_RECS": "http://recs.recs.svc:8080", "GOMAXPROCS": "4"}
    new_env = dict(base_env, RESPONSE_COMPRESSION="br,gzip", BROTLI_QUALITY="11",
                   GZIP_LEVEL="9", COMPRESSION_MIN_BYTES="0")
    ck = dict(cpu_req="1", mem_req="1Gi", cpu_lim="4", mem_lim="2Gi", ports=[8080],
              probe="/readyz")
    t_old = k.template({"app": "feed-api"}, [k.container(
        "feed-api", "us-docker.pkg.dev/pinwheel/media/feed-api:5.30.2", env=base_env, **ck)])
    t_new = k.template({"app": "feed-api"}, [k.container(
        "feed-api", "us-docker.pkg.dev/pinwheel/media/feed-api:5.31.0", env=new_env, **ck)])
    dep = k.deployment("media", "feed-api", c.s(days=400), 4, t_new, 64, updated=k.iso(roll))
    rs_old = k.replicaset(dep, 63, c.s(days=11), 0, t_old, ready=0)
    rs_new = k.replicaset(dep, 64, k.iso(roll), 4, t_new)
    objs += [dep, rs_old, rs_new]
    pods = []
    for i in range(4):
        pn = f"{rs_new['metadata']['name']}-{k.phash('feed', str(i), 64)[:5]}"
        p = k.pod(rs_new, pn, rs_new["spec"]["template"], nodes[i],
                  k.iso(roll + k.timedelta(seconds=40 * i)), ip=f"10.48.{i}.31")
        pods.append(p)
        objs.append(p)
    old_pods = [f"{rs_old['metadata']['name']}-{k.phash('feedold', str(i), 63)[:5]}"
                for i in range(4)]
    objs.append(k.event(dep, "ScalingReplicaSet", f"Scaled up replica set "
                        f"{rs_new['metadata']['name']} to 4 from 3", k.iso(roll),
                        k.iso(roll + k.timedelta(minutes=2)), count=3,
                        component="deployment-controller"))
    objs.append(k.event(dep, "ScalingReplicaSet", f"Scaled down replica set "
                        f"{rs_old['metadata']['name']} to 0 from 1",
                        k.iso(roll + k.timedelta(minutes=2)), k.iso(roll + k.timedelta(minutes=2)),
                        component="deployment-controller"))
    hpa = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
           "metadata": k.meta("HorizontalPodAutoscaler", "feed-api", "media", c.s(days=300)),
           "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                       "name": "feed-api"}, "minReplicas": 4, "maxReplicas": 20,
                    "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                        "type": "Utilization", "averageUtilization": 250}}}]},
           "status": {"currentReplicas": 4, "desiredReplicas": 4,
                      "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu",
                                          "current": {"averageUtilization": 171,
                                                      "averageValue": "1710m"}}}]}}
    objs.append(hpa)
    _, _, rp = k.simple_app(objs, "recs", "recs", old, 3, "us-docker.pkg.dev/pinwheel/recs/recs:"
                            "2.8.4", nodes, "10.48.7", c.s(days=3), revision=30, ports=[8080])
    rp[1]["status"]["containerStatuses"][0]["restartCount"] = 2
    rp[1]["status"]["containerStatuses"][0]["lastState"] = {"terminated": {
        "exitCode": 137, "reason": "OOMKilled", "startedAt": c.s(days=3),
        "finishedAt": c.s(days=2, hours=20)}}
    k.simple_app(objs, "platform", "envoy-edge", old, 2, "envoyproxy/envoy:v1.30.4", nodes,
                 "10.48.8", c.s(days=6), revision=15, ports=[8443])

    rnd = random.Random(508)
    logs = []
    for p in pods:
        logs.append(k.log(datetime_of(p), "feed-api", "media", p["metadata"]["name"],
                          "feed-api 5.31.0 listening on :8080; compression middleware "
                          "enabled: encodings=[br gzip] brotli_quality=11 gzip_level=9 "
                          "min_bytes=0"))
    for m in range(0, 180):
        t = c.ago(minutes=180 - m)
        new = t >= roll
        for i in range(4):
            if rnd.random() < 0.45:
                pn = pods[i]["metadata"]["name"] if new else old_pods[i]
                ms = rnd.randint(240, 900) if new else rnd.randint(45, 140)
                logs.append(k.log(t, "feed-api", "media", pn,
                                  f"GET /v3/feed?user={rnd.randint(10**6, 10**7)} 200 {ms}ms "
                                  f"bytes={rnd.randint(60, 180)}KB"
                                  + (" enc=br" if new else ""),
                                  **{"http.response.status_code": 200}))
        if m % 10 == 0:
            logs.append(k.log(t, "feed-api", "media",
                              (pods[m % 4]["metadata"]["name"] if new else old_pods[m % 4]),
                              f"upstream recs slow: {rnd.randint(280, 330)}ms > 250ms budget",
                              level="warn"))
            logs.append(k.log(t, "recs", "recs", rp[m % 3]["metadata"]["name"],
                              f"served {rnd.randint(1900, 2300)} rec requests/min "
                              f"p99={rnd.randint(250, 330)}ms", container_name="recs"))

    mx = k.Metrics()
    ts = k.steps(c, 3)
    rt = roll.timestamp()
    for i in range(4):
        cut = rt + 40 * i
        for pn, is_new in ((old_pods[i], False), (pods[i]["metadata"]["name"], True)):
            lab = {"namespace": "media", "pod": pn, "container": "feed-api"}
            cpu, per, thr = 5000.0, 2.0e5, 3.0
            cu, cp, ct = [], [], []
            for t in ts:
                if (t >= cut) != is_new:
                    continue
                cpu += (1.65 if t >= rt else 0.32) * 60 * (0.95 + rnd.random() * 0.1)
                per += 600
                thr += 1 if rnd.random() < 0.02 else 0
                cu.append((t, round(cpu, 2)))
                cp.append((t, per))
                ct.append((t, thr))
            mx.add("container_cpu_usage_seconds", "counter", "Cumulative cpu time consumed.",
                   "container_cpu_usage_seconds_total", lab, cu)
            mx.add("container_cpu_cfs_periods", "counter", "Number of elapsed enforcement "
                   "period intervals.", "container_cpu_cfs_periods_total", lab, cp)
            mx.add("container_cpu_cfs_throttled_periods", "counter", "Number of throttled "
                   "period intervals.", "container_cpu_cfs_throttled_periods_total", lab, ct)
    buckets = ["0.1", "0.25", "0.5", "1", "+Inf"]
    fam = "http_request_duration_seconds"
    for ver in ("5.30.2", "5.31.0"):
        acc = {b: 0.0 for b in buckets}
        cnt = tot = 0.0
        pts: dict[str, list[tuple[int, float]]] = {b: [] for b in buckets}
        csum, ccnt = [], []
        for t in ts:
            live = (t >= rt) == (ver == "5.31.0")
            n = 5200 if live else 0
            share = ([0.05, 0.3, 0.78, 0.97, 1.0] if ver == "5.31.0"
                     else [0.6, 0.98, 0.997, 1, 1])
            for bk, sh in zip(buckets, share, strict=True):
                acc[bk] += round(n * sh)
                pts[bk].append((t, acc[bk]))
            cnt += n
            tot += n * (0.41 if ver == "5.31.0" else 0.09)
            csum.append((t, round(tot, 1)))
            ccnt.append((t, cnt))
        lab = {"namespace": "media", "service": "feed-api", "version": ver}
        for bk in buckets:
            mx.add(fam, "histogram", "Request latency.", f"{fam}_bucket", {**lab, "le": bk},
                   pts[bk])
        mx.add(fam, "histogram", "", f"{fam}_sum", lab, csum)
        mx.add(fam, "histogram", "", f"{fam}_count", lab, ccnt)
    sc = {"id": SID, "title": "Feed is slow since lunchtime", "now": NOW,
          "report": "home feed p99 went from ~150ms to ~800ms since about 12:40. recs has been "
                    "laggy all week (feed logs complain about it), I think recs is the problem "
                    "again. no errors anywhere.\n",
          "truth": {"category": "bad_rollout",
                    "culprit": {"kind": "Deployment", "namespace": "media", "name": "feed-api"},
                    "evidence": ["brotli_quality=11", "5.31.0", "BROTLI_QUALITY",
                                 "container_cpu_usage_seconds_total"],
                    "fix": "Roll feed-api back to 5.30.2 (revision 63) or lower BROTLI_QUALITY "
                           "to 4-5 / GZIP_LEVEL to 5 and set a sane COMPRESSION_MIN_BYTES"}}
    k.write(root, SID, sc, objs, logs, mx)


def datetime_of(p: dict) -> k.datetime:
    return k.parse(p["status"]["startTime"])
