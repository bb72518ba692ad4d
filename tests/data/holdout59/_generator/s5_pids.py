"""thumbnail-fork-failures: a converter that forks per request runs into the pod PID limit.

thumbnail-api runs ImageMagick's ``magick`` once per request. Each child starts one
OpenMP thread per host CPU (16 on the new c6i.4xlarge pool, MAGICK_THREAD_LIMIT unset),
and the kubelet caps every pod at 512 PIDs. A burst of HEIC uploads keeps ~30 children
alive, the cgroup hits pids.max and fork/exec fails with EAGAIN; CPU and memory are far
from their limits.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from ._kit import Container, Workload
from ._scene import Line, Scene
from ._signals import restarted

SID = "thumbnail-fork-failures"
NODES = [f"ip-10-61-{a}-{b}.ap-southeast-2.compute.internal"
         for a, b in ((2, 17), (3, 145), (4, 78))]


def build(root: Path) -> None:
    """Write the scenario."""
    s = Scene(SID, "2026-07-14T03:25:00Z", seed=5905)
    burst = s.ago(37)
    s.nodes(NODES, itype="c6i.4xlarge", cpu="16", pool="compute-c6i")
    s.namespaces("media", "gateway", "kube-system")

    def oom(i: int, pod: dict[str, object]) -> None:
        if i == 1:
            restarted(pod, count=1, finished=s.ago(60 * 24 * 4 + 200), reason="OOMKilled",
                      exit_code=137)

    th_c = Container("thumbnail-api", "ghcr.io/pixelcart/thumbnail-api:1.31.0", port=8080,
                     cpu_req="1", cpu_lim="4", mem_req="1Gi", mem_lim="3Gi",
                     env={"CONVERT_BIN": "/usr/bin/magick", "CONVERT_TIMEOUT": "45s",
                          "MAX_INFLIGHT": "0", "TMPDIR": "/scratch"},
                     mounts=[{"name": "scratch", "mountPath": "/scratch"}])
    thumbs = s.cluster.workload(Workload(
        "media", "thumbnail-api", [th_c], NODES, s.ago(60 * 24 * 260), replicas=3, revision=19,
        rollout_at=s.ago(60 * 24 * 5), mutate_pod=oom,
        pod_spec_extra={"volumes": [{"name": "scratch", "emptyDir": {"sizeLimit": "10Gi"}}]}))
    gw_roll = s.ago(57)
    gw = s.cluster.workload(Workload(
        "gateway", "media-gateway",
        [Container("nginx", "docker.io/library/nginx:1.27.3-alpine", port=80,
                   cpu_req="200m", cpu_lim="1", mem_req="128Mi", mem_lim="256Mi")],
        NODES, s.ago(60 * 24 * 400), replicas=2, revision=31, rollout_at=gw_roll,
        template_annotations={"checksum/config": "5be0c1d9a7e4f2b3"},
        previous_images={"nginx": "docker.io/library/nginx:1.27.3-alpine"}))
    purger = s.cluster.workload(Workload(
        "media", "cdn-purger",
        [Container("cdn-purger", "ghcr.io/pixelcart/cdn-purger:0.6.2", port=None)],
        NODES[2:], s.ago(60 * 24 * 200), replicas=1, rollout_at=s.ago(60 * 24 * 6),
        service_port=None))
    s.pending_pod("media", "video-transcode-29205810-rk2xd", "video-transcode",
                  "ghcr.io/pixelcart/transcoder:2.4.0", cpu="4", memory="8Gi", since=s.ago(50),
                  node_selector={"karpenter.sh/nodepool": "gpu-g5"},
                  message="0/3 nodes are available: 3 node(s) didn't match Pod's node "
                  "affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is "
                  "not helpful for scheduling.")

    for i, ref in enumerate(thumbs):
        s.cluster.event("media", "Pod", ref.pod, "Unhealthy", "Liveness probe failed: Get "
                        f"\"http://{ref.ip}:8080/healthz\": context deadline exceeded "
                        "(Client.Timeout exceeded while awaiting headers)",
                        first=s.ago(30 - 2 * i), last=s.ago(4 + i), count=3, type_="Warning",
                        host=ref.node)
    s.cluster.event("gateway", "Deployment", "media-gateway", "ScalingReplicaSet",
                    f"Scaled up replica set {gw[0].pod.rsplit('-', 1)[0]} to 2",
                    first=gw_roll, component="deployment-controller")

    # --- logs
    for i, ref in enumerate(thumbs):
        s.logs.add(s.ago(60 * 24 * 5) + timedelta(seconds=41 + 17 * i), ref, "info",
                   "thumbnail-api 1.31.0 starting: converter=/usr/bin/magick (ImageMagick "
                   "7.1.1-41 Q16-HDRI, OpenMP 4.5), host CPUs=16, MAGICK_THREAD_LIMIT=unset, "
                   "max inflight conversions=unlimited")

    def th_line(t: datetime) -> Line | None:
        r = s.rng.random()
        key = f"u/{s.rng.randrange(10**7, 10**8)}.{s.pick(['heic', 'jpg', 'png', 'heic'])}"
        if t >= burst and r < 0.5:
            msg = s.pick([
                f"convert {key} failed: fork/exec /usr/bin/magick: resource temporarily "
                "unavailable",
                f"convert {key} failed: fork/exec /usr/bin/magick: resource temporarily "
                "unavailable",
                f"convert {key} failed: magick: pthread_create: Resource temporarily "
                "unavailable",
                f"convert {key} failed: fork/exec /usr/bin/magick: cannot allocate memory",
            ])
            return ("error", msg, {"http.response.status_code": 500,
                                   "error.type": "*fs.PathError", "url.path": "/v1/thumbs"})
        if r < 0.8:
            ms = s.rng.randrange(300, 2500) if key.endswith("heic") else s.rng.randrange(40, 300)
            return ("info", f"POST /v1/thumbs {key} 200 sizes=160,480,1080 {ms}ms",
                    {"http.response.status_code": 200, "url.path": "/v1/thumbs"})
        if r < 0.9:
            return ("warn", f"S3 PutObject thumbs/{key} SlowDown, retry 1 succeeded", {})
        return ("info", f"scratch cleanup removed {s.rng.randrange(1, 40)} temp files", {})

    for ref in thumbs:
        s.chatter(ref, th_line, every_s=8, minutes=150)

    def gw_line(t: datetime) -> Line | None:
        code = 500 if t >= burst and s.rng.random() < 0.45 else 200
        return ("info", f'10.61.{s.rng.randrange(1, 5)}.{s.rng.randrange(2, 250)} - - '
                f'"POST /thumbs HTTP/1.1" {code} {s.rng.randrange(80, 4000)} "okhttp/4.12.0" '
                f'rt={s.rng.uniform(0.05, 2.4):.3f} upstream=thumbnail-api.media:80',
                {"http.response.status_code": code})

    for ref in gw:
        s.logs.add(gw_roll + timedelta(seconds=45), ref, "info", "nginx: configuration "
                   "file /etc/nginx/nginx.conf test is successful (client_max_body_size 40m)")
        s.chatter(ref, gw_line, every_s=10, minutes=140)
    s.chatter(purger[0], lambda t: s.pick([
        ("error", "purge batch failed: cloudfront CreateInvalidation: "
         "TooManyInvalidationsInProgress, will retry", {}),
        ("info", f"purged {s.rng.randrange(1, 60)} paths", {})]), every_s=90, minutes=160)

    # --- metrics
    def procs(t: datetime) -> float:
        if t < burst - timedelta(minutes=20):
            return 40 + s.rng.randrange(0, 60)
        if t < burst:
            return 200 + (t - burst + timedelta(minutes=20)).total_seconds() / 4
        return 508 + s.rng.randrange(0, 5)

    for ref in thumbs:
        lab = {"namespace": "media", "pod": ref.pod, "container": "thumbnail-api"}
        s.gauge("container_threads", "Number of threads running inside the container", lab,
                procs)
        s.gauge("container_threads_max", "Maximum number of threads allowed inside the "
                "container, infinity if value is zero", lab, lambda t: 512)
        s.gauge("container_processes", "Number of processes running inside the container",
                lab, lambda t: round(procs(t) / 17))
        s.usage(ref, lambda t: 1.1 if t >= burst else 0.7, lambda t: 640e6 if t >= burst
                else 410e6, cpu_limit=4, throttle=lambda t: 0.01)
        s.http(ref, "/v1/thumbs", lambda t: 9.0, lambda t: 0.48 if t >= burst else 0.002,
               lambda t: 0.6, method="POST", code="500")
    s.restarts(thumbs[1], lambda t: 1)
    for ref in gw:
        s.usage(ref, 0.08, 40e6, cpu_limit=1)

    s.write(root, title="Thumbnails fail while the service looks idle",
            report="Half the thumbnail requests are failing with 500s since ~3am. CPU and "
            "memory on thumbnail-api look totally fine. media-gateway got a config change an "
            "hour ago (body size limit) - could that be it?",
            category="resource_exhaustion", culprit=("Deployment", "media", "thumbnail-api"),
            evidence=["fork/exec /usr/bin/magick: resource temporarily unavailable",
                      "container_threads_max", "MAGICK_THREAD_LIMIT=unset"],
            fix="Cap concurrency and threads in thumbnail-api (MAX_INFLIGHT, "
            "MAGICK_THREAD_LIMIT=1 or a worker pool) so children stay below the pod PID "
            "limit, or raise the kubelet podPidsLimit for the pool.")
