"""Shape 2, oom_killed: the render cache moved to an emptyDir with medium: Memory; the tmpfs
pages count against the 1Gi limit while the Go heap and RSS stay flat; a leak is blamed."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from . import _kit as k

SID = "media-thumbnailer-memory"

BASE = 300 * k.MiB  # process RSS
LIMIT = 1024 * k.MiB
GROWTH = 10.2 * k.MiB  # tmpfs growth per minute at afternoon traffic


def build(root: Path) -> None:
    s = k.Story(SID, "2026-05-06T15:20:00Z", seed=5502)
    old = s.ago(days=310)
    nodes = k.eks_nodes(s, [
        ("eu-west-1a", "m6i.2xlarge", "8", "32386132Ki", "general-a"),
        ("eu-west-1b", "m6i.2xlarge", "8", "32386132Ki", "general-b"),
        ("eu-west-1c", "m6i.2xlarge", "8", "32386132Ki", "general-c"),
        ("eu-west-1b", "m6i.2xlarge", "8", "32386132Ki", "general-b"),
        ("eu-west-1c", "g5.xlarge", "4", "16029692Ki", "gpu-c"),
    ], old, s.ago(days=6, hours=2))
    gpu_node = nodes[4]
    nodes = nodes[:4]
    k.standard_cluster(s, nodes, old, s.ago(days=6, hours=1))
    for ns, team in (("media", "media"), ("web", "web"), ("ingress-nginx", "platform")):
        k.namespace(s, ns, old, {"team": team})
    reg = "482913307715.dkr.ecr.eu-west-1.amazonaws.com"

    # ----- thumbnailer: 2.8.0 since Sunday, tmpfs cache since yesterday -----
    def thumb(tag: str) -> k.Obj:
        return k.container(
            "thumbnailer", f"{reg}/media/thumbnailer:{tag}", port=8080, cpu="500m",
            mem="768Mi", cpu_limit="2", mem_limit="1Gi",
            env=[{"name": "GOMEMLIMIT", "value": "800MiB"},
                 {"name": "THUMB_CACHE_DIR", "value": "/var/cache/thumbs"},
                 {"name": "THUMB_CACHE_MAX_ENTRIES", "value": "60000"},
                 {"name": "THUMB_SOURCE_BUCKET", "value": "media-originals-prod"},
                 {"name": "VIPS_CONCURRENCY", "value": "2"}],
            readiness=k.http_probe("/readyz", 8080, delay=3, period=5),
            liveness=k.http_probe("/healthz", 8080, delay=10, period=10),
            mounts=[{"name": "render-cache", "mountPath": "/var/cache/thumbs"}])

    disk_vol = [{"name": "render-cache", "emptyDir": {"sizeLimit": "4Gi"}}]
    mem_vol = [{"name": "render-cache", "emptyDir": {"medium": "Memory"}}]
    cut = s.ago(hours=26, minutes=14)
    tw = k.deployment(
        s, "media", "thumbnailer", [thumb("2.8.0")], replicas=3, nodes=nodes[:3], created=old,
        pods_since=cut, revision=15, volumes=mem_vol, sa="thumbnailer",
        labels={"app.kubernetes.io/name": "thumbnailer", "app.kubernetes.io/part-of": "media"},
        old_revisions=[(13, s.ago(days=12), [thumb("2.7.4")]),
                       (14, s.ago(days=3, hours=2), [thumb("2.8.0")])],
        annotations={"meta.helm.sh/release-name": "thumbnailer",
                     "meta.helm.sh/release-namespace": "media"},
        tmpl_annotations={"prometheus.io/scrape": "true", "prometheus.io/port": "8080"})
    # revision 14 had the disk-backed cache; fix the old ReplicaSets' volumes
    for rs in tw.rs[:-1]:
        rs["spec"]["template"]["spec"]["volumes"] = disk_vol
    tw.obj["metadata"]["labels"]["app.kubernetes.io/version"] = "2.8.0"

    phases = [52.0, 23.0, 64.0]  # minutes ago of each pod's last OOM kill
    totals = [11, 12, 10]
    for p, rec, last_kill, total in zip(tw.pods, tw.recs, phases, totals, strict=True):
        cycle = (LIMIT - BASE) / GROWTH  # minutes
        kills: list[datetime] = []
        t = s.ago(last_kill, seconds=s.rng.randint(0, 50))
        while t > s.ago(hours=4):
            kills.append(t)
            t -= timedelta(minutes=cycle * s.rng.uniform(0.93, 1.05))
        kills.sort()
        last = kills[-1]
        before = kills[-2]
        st = p["status"]["containerStatuses"][0]
        st["restartCount"] = total
        st["state"] = {"running": {"startedAt": k.iso(last + timedelta(seconds=1))}}
        st["lastState"] = {"terminated": k.terminated("OOMKilled", 137,
                                                      before + timedelta(seconds=1), last)}
        rec.restarts = total
        rec.restart_times = kills
        rec.limit_mem = LIMIT
        rec.cpu = 0.45
        rec.mem_fn = _wss(s, kills)
        pname = p["metadata"]["name"]
        nd = p["spec"]["nodeName"]
        for kt in [x for x in kills if x > s.ago(59)]:
            s.event("Pod", "media", pname, "Pulled",
                    f'Container image "{reg}/media/thumbnailer:2.8.0" already present on '
                    "machine", first=kt + timedelta(seconds=1), host=nd,
                    uid=p["metadata"]["uid"], field_path="spec.containers{thumbnailer}")
            s.event("Pod", "media", pname, "Created", "Created container thumbnailer",
                    first=kt + timedelta(seconds=1), host=nd, uid=p["metadata"]["uid"],
                    field_path="spec.containers{thumbnailer}")
            s.event("Pod", "media", pname, "Started", "Started container thumbnailer",
                    first=kt + timedelta(seconds=2), host=nd, uid=p["metadata"]["uid"],
                    field_path="spec.containers{thumbnailer}")
        # app lines: startup after each kill in the log window, cache stats, requests
        for kt in [x for x in kills if x > s.ago(100)]:
            purged = int((LIMIT - BASE) / (17.8 * 1024))
            for i, (lvl, msg) in enumerate([
                ("info", "thumbnailer 2.8.0 (go1.22.5, libvips 8.15.2) starting"),
                ("info", "GOMEMLIMIT=800MiB GOMAXPROCS=2"),
                ("info", f"render cache: removed {purged} stale entries from "
                         "/var/cache/thumbs at start"),
                ("info", "source bucket media-originals-prod reachable (region eu-west-1)"),
                ("info", "listening on :8080"),
            ]):
                s.log(kt + timedelta(seconds=1.3, milliseconds=37 * i), "media", pname,
                      "thumbnailer", "thumbnailer", lvl, msg, service__version="2.8.0")
        for t in s.spread(s.ago(65), s.now, 300.0):
            prev = max(x for x in kills if x <= t) if any(x <= t for x in kills) else before
            mins = (t - prev).total_seconds() / 60
            used = GROWTH * mins / k.MiB
            entries = int(used * 1024 / 17.8)
            heap = s.rng.uniform(168, 196)
            s.log(t, "media", pname, "thumbnailer", "thumbnailer", "info",
                  f"stats: heap_inuse={heap:.1f}MiB goroutines={s.rng.randint(38, 61)} "
                  f"render_cache entries={entries} size={used:.1f}MiB dir=/var/cache/thumbs",
                  service__version="2.8.0")
    k.http_logs(s, tw, "thumbnailer", s.ago(65), s.now, 35.0, [
        ("GET", "/t/480x480/{id}.webp", 200, 50), ("GET", "/t/1080w/{id}.avif", 200, 25),
        ("GET", "/t/96x96/{id}.webp", 200, 20), ("GET", "/t/480x480/{id}.webp", 404, 2),
        ("GET", "/t/1080w/{id}.avif", 422, 1)],
        fmt="{method} {path} status={status} dur={ms}ms cache=miss")
    k.lines(s, tw, "thumbnailer", s.ago(65), s.now, 150.0, [
        ("warn", "source image {hex}.jpg is 52MP, downscaling before decode", 4),
        ("error", "decode failed for {hex}.heic: VipsForeignLoad: unexpected end of file", 2),
        ("warn", "s3 GetObject slow: {ms}00ms for originals/{hex}.png", 1),
    ])
    k.service(s, "media", "thumbnailer", {"app.kubernetes.io/name": "thumbnailer"}, 80, 8080,
              old, pods=tw.pods)
    s.add({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": k.meta("thumbnailer", "media", old, s.uid()),
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                    "name": "thumbnailer"},
                 "minReplicas": 3, "maxReplicas": 8,
                 "metrics": [{"type": "Resource", "resource": {
                     "name": "cpu", "target": {"type": "Utilization",
                                               "averageUtilization": 70}}}]},
        "status": {"currentReplicas": 3, "desiredReplicas": 3,
                   "lastScaleTime": k.iso(s.ago(hours=20)),
                   "currentMetrics": [{"type": "Resource", "resource": {
                       "name": "cpu", "current": {"averageUtilization": 41,
                                                  "averageValue": "206m"}}}],
                   "conditions": [
                       {"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale",
                        "message": "recommended size matches current size",
                        "lastTransitionTime": k.iso(s.ago(hours=20))},
                       {"type": "ScalingActive", "status": "True",
                        "reason": "ValidMetricFound",
                        "message": "the HPA was able to successfully calculate a replica "
                                   "count from cpu resource utilization (percentage of "
                                   "request)", "lastTransitionTime": k.iso(s.ago(days=5))},
                       {"type": "ScalingLimited", "status": "True", "reason": "TooFewReplicas",
                        "message": "the desired replica count is less than the minimum "
                                   "replica count", "lastTransitionTime":
                                   k.iso(s.ago(hours=20))}]},
    })

    # ----- upload-api: rolled out 40 minutes ago, brief noise, healthy -----
    up_roll = s.ago(40)
    up = k.deployment(
        s, "media", "upload-api",
        [k.container("upload-api", f"{reg}/media/upload-api:1.19.0", port=8080, cpu="250m",
                     mem="256Mi", mem_limit="512Mi", readiness=k.http_probe("/ready", 8080))],
        replicas=2, nodes=nodes[1:3], created=old, pods_since=up_roll, revision=31,
        old_revisions=[(30, s.ago(days=8),
                        [k.container("upload-api", f"{reg}/media/upload-api:1.18.2",
                                     port=8080)])], cpu=0.08, mem=150 * k.MiB)
    uh = up.rs[-1]["metadata"]["name"].rsplit("-", 1)[1]
    oh = up.rs[0]["metadata"]["name"].rsplit("-", 1)[1]
    for i, msg in enumerate([f"Scaled up replica set upload-api-{uh} to 1",
                             f"Scaled down replica set upload-api-{oh} to 1 from 2",
                             f"Scaled up replica set upload-api-{uh} to 2 from 1",
                             f"Scaled down replica set upload-api-{oh} to 0 from 1"]):
        s.event("Deployment", "media", "upload-api", "ScalingReplicaSet", msg,
                first=up_roll + timedelta(seconds=14 * i), component="deployment-controller")
    k.http_logs(s, up, "upload-api", up_roll, s.now, 35.0, [
        ("POST", "/v2/uploads", 201, 30), ("PUT", "/v2/uploads/{id}/parts/{n}", 200, 60),
        ("POST", "/v2/uploads/{id}/complete", 200, 10), ("PUT", "/v2/uploads/{id}/parts/{n}",
                                                         408, 1)],
        fmt="{method} {path} -> {status} ({ms} ms)")
    for p in up.pods:
        for i in range(3):
            s.log(up_roll + timedelta(seconds=9 + i * 2), "media", p["metadata"]["name"],
                  "upload-api", "upload-api", "warn",
                  "multipart session cache cold, re-reading 214 open sessions from dynamodb")
    k.service(s, "media", "upload-api", {"app.kubernetes.io/name": "upload-api"}, 80, 8080, old,
              pods=up.pods)

    # ----- video-transcoder: a GPU pod Pending on the gpu node that is full -----
    vt_c = k.container("transcoder", f"{reg}/media/video-transcoder:0.14.1", cpu="3",
                       mem="12Gi", mem_limit="12Gi")
    vt_c["resources"]["limits"]["nvidia.com/gpu"] = "1"
    vt_c["resources"]["requests"]["nvidia.com/gpu"] = "1"
    vt = k.deployment(s, "media", "video-transcoder", [vt_c], replicas=2, nodes=[gpu_node],
                      created=s.ago(days=40), pods_since=s.ago(days=2), cpu=2.1,
                      mem=7 * k.GiB,
                      pod_extra={"nodeSelector": {"eks.amazonaws.com/nodegroup": "gpu-c"},
                                 "tolerations": [{"key": "nvidia.com/gpu",
                                                  "operator": "Exists",
                                                  "effect": "NoSchedule"}]})
    vt.obj["spec"]["replicas"] = 2
    pend = vt.pods[1]
    pend["spec"].pop("nodeName")
    pend["status"] = {"phase": "Pending", "qosClass": "Guaranteed", "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
         "lastTransitionTime": k.iso(s.ago(minutes=33)),
         "message": "0/5 nodes are available: 1 Insufficient nvidia.com/gpu, 4 node(s) "
                    "didn't match Pod's node affinity/selector. preemption: 0/5 nodes are "
                    "available: 1 No preemption victims found for incoming pod, 4 Preemption "
                    "is not helpful for scheduling."}]}
    pend["metadata"]["creationTimestamp"] = k.iso(s.ago(minutes=33))
    vt.recs[1].metrics = False
    vt.obj["status"].update({"readyReplicas": 1, "availableReplicas": 1,
                             "unavailableReplicas": 1})
    vt.rs[-1]["status"].update({"readyReplicas": 1, "availableReplicas": 1})
    s.event("Pod", "media", pend["metadata"]["name"], "FailedScheduling",
            pend["status"]["conditions"][0]["message"], first=s.ago(33), last=s.ago(4),
            count=9, type_="Warning", component="default-scheduler",
            uid=pend["metadata"]["uid"])
    k.lines(s, vt.pods[:1], "video-transcoder", s.ago(65), s.now, 90.0, [
        ("info", "job {id}: encoded 1080p rendition in {n}s (nvenc)", 4),
        ("warn", "job {id}: source has variable frame rate, forcing 30fps", 1),
    ])

    # ----- web frontend with an old restart -----
    fe = k.deployment(
        s, "web", "storefront-web",
        [k.container("web", f"{reg}/web/storefront-web:9.4.1", port=3000, cpu="200m",
                     mem="384Mi", mem_limit="768Mi", readiness=k.http_probe("/api/health", 3000))],
        replicas=3, nodes=nodes, created=old, pods_since=s.ago(days=5), cpu=0.15,
        mem=310 * k.MiB)
    fst = fe.pods[2]["status"]["containerStatuses"][0]
    fst["restartCount"] = 1
    fst["lastState"] = {"terminated": k.terminated("Error", 1, s.ago(days=5),
                                                   s.ago(days=4, hours=6))}
    fst["state"] = {"running": {"startedAt": k.iso(s.ago(days=4, hours=6, seconds=-3))}}
    fe.recs[2].restarts = 1
    k.http_logs(s, fe, "storefront-web", s.ago(65), s.now, 80.0, [
        ("GET", "/p/{id}", 200, 60), ("GET", "/c/shoes", 200, 20), ("GET", "/p/{id}", 404, 2),
        ("GET", "/api/health", 200, 5)], fmt="{method} {path} {status} - {ms} ms")
    k.lines(s, fe, "storefront-web", s.ago(65), s.now, 240.0, [
        ("warn", "image CDN returned 504 for thumbnail {hex}, rendering placeholder", 3),
        ("error", "Hydration failed because the initial UI does not match what was rendered "
                  "on the server", 1),
    ])
    k.service(s, "web", "storefront-web", {"app.kubernetes.io/name": "storefront-web"}, 80,
              3000, old, pods=fe.pods)

    # ----- metrics -----
    s.pod_metrics()
    for p, rec in zip(tw.pods, tw.recs, strict=True):
        lab = {"namespace": "media", "pod": p["metadata"]["name"], "container": "thumbnailer"}
        wss = rec.mem_fn
        assert wss is not None
        kills = rec.restart_times
        s.gauge("container_memory_rss", "Size of RSS in bytes.", lab,
                lambda t: float(int(BASE * s.rng.uniform(0.96, 1.02))))
        s.gauge("container_memory_cache", "Number of bytes of page cache memory.", lab,
                lambda t, w=wss: float(int(max(0.0, w(t) - BASE * 0.99))))
        first = s.grid()[0]
        n0 = len([x for x in kills if x <= first])
        s.metrics.add("container_oom_events_total", "counter",
                      "Count of out of memory events observed for the container", lab,
                      [(t, float(rec.restarts - len(kills) + n0 +
                                 len([x for x in kills if first < x <= t])))
                       for t in s.grid()])
        app = {"namespace": "media", "pod": p["metadata"]["name"], "job": "thumbnailer"}
        s.gauge("process_resident_memory_bytes", "Resident memory size in bytes.", app,
                lambda t: float(int(BASE * s.rng.uniform(0.95, 1.0))))
        s.gauge("go_memstats_heap_inuse_bytes",
                "Number of bytes in use by the heap.", app,
                lambda t: float(int(182 * k.MiB * s.rng.uniform(0.92, 1.08))))
        s.gauge("go_goroutines", "Number of goroutines that currently exist.", app,
                lambda t: float(s.rng.randint(38, 61)))
        s.gauge("kube_pod_container_status_last_terminated_reason",
                "Describes the last reason the container was in terminated state.",
                {"namespace": "media", "pod": p["metadata"]["name"],
                 "container": "thumbnailer", "reason": "OOMKilled"}, lambda t: 1.0, every=2)
        s.counter("http_requests_total", "Total HTTP requests.",
                  {**app, "code": "200", "handler": "/t/"}, lambda t: 4.2)
        s.counter("http_requests_total", "Total HTTP requests.",
                  {**app, "code": "502", "handler": "/t/"},
                  lambda t, ks=kills: 0.6 if any(x <= t < x + timedelta(seconds=60)
                                                 for x in ks) else 0.0, start=41)
    s.latency("thumbnailer", "media", {}, lambda t: 12.0, lambda t: 0.085)

    k.scenario(
        s, title="thumbnailer OOMKilled repeatedly",
        report=(
            "thumbnailer in media keeps getting OOMKilled since yesterday, memory climbs "
            "steadily on every pod until it hits the 1Gi limit, then it restarts and starts "
            "climbing again. Smells like a leak in 2.8.0 (shipped Sunday), probably in the "
            "libvips/cgo path since pprof heap looked boring. Can you confirm so we roll back "
            "to 2.7.4? Thumbnails intermittently 502 on the site.\n"
        ),
        category="oom_killed", kind="Deployment", ns="media", name="thumbnailer",
        evidence=["OOMKilled", "medium: Memory", "container_memory_cache"],
        fix=("Revision 15 moved the render-cache emptyDir to medium: Memory; tmpfs pages are "
             "charged to the container, so the cache (bounded by entry count only) pushes the "
             "working set to the 1Gi limit while heap and RSS stay flat. Put the cache back "
             "on a disk-backed emptyDir (sizeLimit 4Gi) or give the tmpfs a sizeLimit and raise "
             "the memory limit to cover it; rolling back 2.8.0 would not help."),
    )
    s.write(root)
    k.check_evidence(s, root)


def _wss(s: k.Story, kills: list[datetime]) -> Callable[[datetime], float]:
    def fn(t: datetime) -> float:
        prev = [x for x in kills if x <= t]
        start = prev[-1] if prev else kills[0] - timedelta(minutes=70)
        mins = (t - start).total_seconds() / 60
        v = BASE + GROWTH * mins
        return min(v, LIMIT * 0.998) * s.rng.uniform(0.995, 1.005)

    return fn
