"""Shape 3: report-renderer writes temporary files to a memory-backed emptyDir with a
sizeLimit; cancelled jobs leave their files behind, the tmpfs fills and writes fail with
"No space left on device" while the pods stay Running (a tmpfs cannot outgrow its size,
so the kubelet evicts nothing). Exports fail; list and preview calls keep working."""

from __future__ import annotations

from datetime import datetime, timedelta

from .k8s import (
    GiB,
    MiB,
    PodState,
    Revision,
    backends,
    container,
    deployment,
    http_probe,
    namespace,
    node,
    service,
)
from .kit import World, iso_ms, parse
from .signals import bystander, container_metrics, daily, http_metrics, pod_series, timeline


def build() -> World:
    now = parse("2026-11-30T09:25:00Z")
    w = World(
        "monthly-exports-failing",
        "Monthly export downloads failing for customers",
        now,
        "customers can't download their monthly exports since this morning ('Export failed, "
        "try again later'). report-renderer pods are all Running, 0 restarts, no events. "
        "memory on them has been creeping up all week - leak?",
        {"category": "resource_exhaustion",
         "culprit": {"kind": "Deployment", "namespace": "reporting", "name": "report-renderer"},
         "evidence": ["[Errno 28] No space left on device", "/scratch", "sizeLimit: 512Mi",
                      "leaving /scratch/job-"],
         "fix": "The 512Mi memory-backed /scratch emptyDir is full of files left by cancelled "
                "jobs: restart the pods to empty it now, then delete a job's temp dir when it "
                "is cancelled (or raise the sizeLimit with a periodic clean-up)."},
        seed=3003,
    )
    long_ago = parse("2025-06-19T08:00:00Z")
    namespace(w, "reporting", long_ago)
    namespace(w, "default", parse("2024-02-01T10:00:00Z"))
    nodes = [f"gke-prod-pool-2-8f3a{c}-{s}" for c, s in (("1c", "x7kd"), ("2b", "q9mv"),
                                                          ("3a", "w2hp"))]
    for i, name in enumerate(nodes):
        node(w, name, now - timedelta(days=6, hours=3 * i), zone=f"europe-west4-{'abc'[i]}")
    w.event("", "Node", nodes[2], "FreeDiskSpaceFailed",
            "Failed to garbage collect required amount of images. Attempted to free 2147483648 "
            "bytes, but only found 0 bytes eligible to free.", first=now - timedelta(minutes=58),
            last=now - timedelta(minutes=13), count=4, type_="Warning", host=nodes[2])

    started = now - timedelta(days=4, hours=6, minutes=20)
    volumes = [{"name": "scratch", "emptyDir": {"medium": "Memory", "sizeLimit": "512Mi"}},
               {"name": "fonts", "configMap": {"name": "renderer-fonts"}}]
    mounts = [{"name": "scratch", "mountPath": "/scratch"},
              {"name": "fonts", "mountPath": "/usr/share/fonts/custom", "readOnly": True}]
    env = [{"name": "RENDER_SCRATCH_DIR", "value": "/scratch"},
           {"name": "RENDER_WORKERS", "value": "4"},
           {"name": "CHROMIUM_FLAGS", "value": "--headless --disable-gpu --no-sandbox"}]
    rev = Revision(17, started, [container(
        "report-renderer", "europe-docker.pkg.dev/acme-analytics/reporting/report-renderer:4.6.2",
        cpu="1", memory="2Gi", env=env, mounts=mounts,
        liveness=http_probe("/healthz", 8080, delay=20),
        readiness=http_probe("/ready", 8080, delay=5))], volumes=volumes,
        pods=[PodState(node=nodes[i], created=started + timedelta(seconds=45 * i))
              for i in range(3)])
    deployment(w, "reporting", "report-renderer", long_ago, [rev], replicas=3, team="analytics")
    service(w, "reporting", "report-renderer", long_ago, target=8080,
            backends=backends(w, "reporting", [rev]))
    w.add({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "renderer-fonts", "namespace": "reporting",
                        "creationTimestamp": "2025-06-19T08:00:00Z"},
           "data": {"fonts.conf": "<fontconfig><dir>/usr/share/fonts/custom</dir></fontconfig>"}})

    # When each pod's tmpfs became full; the third is at 460Mi and still renders.
    full_at = [now - timedelta(minutes=74), now - timedelta(minutes=27), None]
    for pod_name, state, full in zip(rev.pod_names, rev.pods, full_at, strict=True):
        def scratch(t: datetime, full: datetime | None = full) -> float:
            """Bytes in /scratch: a slow climb that stops at 512Mi."""
            if full is None:
                hours = (t - (now - timedelta(hours=3))).total_seconds() / 3600
                return 405 * MiB + hours * 18 * MiB
            remaining = (full - t).total_seconds() / 3600
            return max(0.0, min(512 * MiB, 512 * MiB - remaining * 19 * MiB))

        def failing(t: datetime, full: datetime | None = full) -> float:
            return 0.0 if full is None or t < full else 0.93
        s = pod_series(w, "reporting", pod_name, "report-renderer", state.node, state.created)
        container_metrics(w, s, memory=lambda t, f=scratch: 780 * MiB + f(t) + 90 * MiB *
                          daily(t), cpu=lambda t, f=failing: 0.55 * daily(t) * (1 - 0.5 * f(t)),
                          memory_limit=2 * GiB)
        http_metrics(w, s, rate=lambda t: 0.9 * daily(t), error_share=lambda t, f=failing:
                     0.004 + f(t) * 0.9, latency=lambda t: 6.5, handler="/v1/render",
                     error_code="500")
        http_metrics(w, s, rate=lambda t: 3.2 * daily(t), error_share=lambda t: 0.0005,
                     latency=lambda t: 0.04, handler="/v1/preview", histogram=False)
        labels = {"namespace": "reporting", "pod": pod_name}
        w.counter("render_jobs_total", {**labels, "result": "ok"}, s.times,
                  lambda t, f=failing: 0.9 * daily(t) * (1 - f(t)))
        w.counter("render_jobs_total", {**labels, "result": "failed"}, s.times,
                  lambda t, f=failing: 0.9 * daily(t) * f(t) + 0.002)
        w.counter("render_jobs_total", {**labels, "result": "cancelled"}, s.times,
                  lambda t: 0.04 * daily(t))

        lines = []
        for moment in timeline(w, now - timedelta(hours=3), 70):
            job = w.rng.randint(88000, 99999)
            pages = w.rng.randint(4, 160)
            if full is not None and moment > full and w.rng.random() < 0.93:
                target = w.rng.choice((f"/scratch/job-{job}/page-{w.rng.randint(1, pages):04d}"
                                       ".png", f"/scratch/job-{job}/chromium-profile/Default/"
                                       "Cache/data_1", f"/scratch/job-{job}/export.pdf"))
                text = (f"render job {job} failed after {w.rng.randint(1, pages)}/{pages} pages: "
                        f"OSError: [Errno 28] No space left on device: '{target}'")
                w.log(moment, "reporting", pod_name, "report-renderer", "report-renderer",
                      "error", text, error__type="OSError")
                w.log(moment + timedelta(milliseconds=4), "reporting", pod_name,
                      "report-renderer", "report-renderer", "error",
                      f"POST /v1/render 500 job={job}", http__response__status_code=500)
                lines.append(f"{iso_ms(moment)} ERROR [worker-{w.rng.randint(1, 4)}] {text}")
                lines.append(f"{iso_ms(moment)} ERROR [http] POST /v1/render 500 job={job}")
            else:
                took = w.rng.uniform(2.0, 14.0)
                text = f"render job {job} done: {pages} pages in {took:.1f}s"
                w.log(moment, "reporting", pod_name, "report-renderer", "report-renderer",
                      "info", text)
                lines.append(f"{iso_ms(moment)} INFO  [worker-{w.rng.randint(1, 4)}] {text}")
            if w.rng.random() < 0.05:
                gone = w.rng.randint(88000, 99999)
                text = (f"client disconnected, job {gone} cancelled; leaving /scratch/job-{gone}"
                        " for resume")
                w.log(moment + timedelta(seconds=3), "reporting", pod_name, "report-renderer",
                      "report-renderer", "warn", text)
                lines.append(f"{iso_ms(moment + timedelta(seconds=3))} WARN  [http] {text}")
        for moment in timeline(w, now - timedelta(hours=3), 15):
            w.log(moment, "reporting", pod_name, "report-renderer", "report-renderer", "info",
                  f"GET /v1/preview/{w.rng.randint(1000, 9999)} 200 {w.rng.randint(12, 80)}ms")
        w.pod_log("reporting", pod_name, "report-renderer", lines)

    # The API in front of it, and the neighbours.
    api = bystander(w, "reporting", "reporting-api", replicas=2, nodes=nodes,
                    image="europe-docker.pkg.dev/acme-analytics/reporting/reporting-api:2.9.0",
                    created=long_ago, rev_created=now - timedelta(days=2, hours=1),
                    memory_mib=350, memory_limit="768Mi", cpu_cores=0.1, rps=0, median_s=0.05,
                    team="analytics")
    for pod_name, state in zip(api.pod_names, api.pods, strict=True):
        s = pod_series(w, "reporting", pod_name, "reporting-api", state.node, state.created)
        http_metrics(w, s, rate=lambda t: 0.45 * daily(t), error_share=lambda t: 0.004 + (
            0.55 if t > full_at[1] else 0.31 if t > full_at[0] else 0.0), latency=lambda t: 7.0,
            handler="/api/exports", error_code="502", histogram=False)
        http_metrics(w, s, rate=lambda t: 9 * daily(t), error_share=lambda t: 0.0003,
                     latency=lambda t: 0.03, handler="/api/reports", histogram=False)
    for moment in timeline(w, now - timedelta(hours=3), 40):
        pod = w.rng.choice(api.pod_names)
        export = w.rng.randint(40000, 49999)
        if moment > full_at[0] and w.rng.random() < (0.6 if moment > full_at[1] else 0.33):
            w.log(moment, "reporting", pod, "reporting-api", "reporting-api", "error",
                  f"export {export} failed: report-renderer answered 500 Internal Server Error "
                  "(render failed), telling the customer to retry",
                  http__response__status_code=502)
        else:
            w.log(moment, "reporting", pod, "reporting-api", "reporting-api", "info",
                  f"export {export} ready: s3://acme-exports/2026-11/{export}.pdf")
    bystander(w, "reporting", "report-catalog", replicas=2, nodes=nodes[1:],
              image="europe-docker.pkg.dev/acme-analytics/reporting/report-catalog:1.3.7",
              created=long_ago, rev_created=now - timedelta(days=5, hours=9), memory_mib=210,
              memory_limit="512Mi", cpu_cores=0.03, rps=4, median_s=0.015, team="analytics",
              messages=[("cache refresh: {n} report definitions", "info")], log_every_s=600)
    return w
