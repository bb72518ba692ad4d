"""Solar installer: roof survey reports for the sales team take ages since the Monday morning
rush (~08:10). roof-report-renderer's autoscaler asked for 6 replicas, but the namespace's
ResourceQuota surveys-compute (limits.memory 16Gi, 15Gi used) refuses every new pod: the
ReplicaSet's FailedCreate events say "exceeded quota: surveys-compute". Two pods carry the
morning load, the render queue grows. Red herrings: the HPA itself (well below its maximum of
10), survey-scheduler rolled out 50 min before the onset in the same namespace, the large
drone-photo-stitcher (the engineer blames it; it only holds its usual share of the quota)
with an OOM restart two days ago, and CRM sync timeouts in another namespace."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.scenario_tools.common import (
    MIB,
    Story,
    const,
    container_metrics,
    deployment_metrics,
    http_metrics,
    simple_deployment,
    truth,
)
from tests.scenario_tools.kube import Ctr, ended, http_probe, iso, running
from tests.scenario_tools.parts import app, hpa, neighbour, rollout

from .kit import base, chatter, namespaced

ID = "roof-survey-reports-backlog"
NOW = datetime.fromisoformat("2027-06-14T08:52:00+00:00")
NS = "surveys"
REG = "europe-west4-docker.pkg.dev/sunroof-prod/apps"


def build() -> Story:
    s = Story(
        id=ID, title="Roof survey reports take ages this morning", now=NOW,
        report="""\
Sales reps say the roof survey PDF takes 5-10 minutes instead of under a minute since the
Monday rush started, around 8ish. Booking surveys and the quote page work. The drone photo
stitching thing is hogging the cluster again I think?
""",
        truth=truth(
            "quota_exceeded", "Deployment", NS, "roof-report-renderer",
            ["exceeded quota: surveys-compute", "FailedCreate", "limits.memory=16Gi"],
            "roof-report-renderer's autoscaler wants 6 replicas for the Monday rush, but the "
            "ResourceQuota surveys-compute (limits.memory 16Gi, 15Gi used) forbids every new "
            "pod (2Gi limit each), so only 2 pods render and the queue grows. Raise the "
            "namespace quota (or lower the renderer's memory limit) so the autoscaler can "
            "scale out."))
    onset = NOW - timedelta(minutes=42)
    edge = onset.timestamp()
    nodes = base(s, [NS, "crm"], 5, subnet=77, region="eu-west-4", instance="n2-standard-8")

    def rush(t: int) -> float:  # 0 before the Monday rush, 1 in it
        return min(1.0, max(0.0, (t - edge) / 600))

    # ---- the renderer: two pods, the autoscaler wants six, the quota refuses
    work, pods = app(
        s, NS, "roof-report-renderer", f"{REG}/roof-report-renderer:3.4.1", nodes, replicas=2,
        revision=18, rps=lambda t: 0.6 + 1.4 * rush(t),
        codes={"200": lambda t: 0.995 - 0.05 * rush(t), "503": lambda t: 0.002 + 0.05 * rush(t),
               "400": const(0.003)},
        median=lambda t: 8.0 + 160 * rush(t), cpu=lambda t: 0.9 + 0.95 * rush(t),
        memory_mib=1380, limits={"cpu": "2", "memory": "2Gi"},
        requests={"cpu": "1", "memory": "1536Mi"},
        env={"RENDER_WORKERS": "2", "QUEUE_URL": "redis://report-queue.surveys.svc:6379/2"},
        readiness=http_probe("/ready"), rollout_at=NOW - timedelta(days=5, hours=1))
    rs = work.revisions[-1]
    for obj in (work.obj, rs):
        obj["spec"]["replicas"] = 6
    rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] = "6"
    rs["metadata"]["annotations"]["deployment.kubernetes.io/max-replicas"] = "8"
    work.replicas = 6
    work.availability_changed = onset + timedelta(seconds=31)
    scaled = onset + timedelta(seconds=30)
    msg = (f'Error creating: pods "{rs["metadata"]["name"]}-{{}}" is forbidden: exceeded quota: '
           "surveys-compute, requested: limits.memory=2Gi, used: limits.memory=15Gi, limited: "
           "limits.memory=16Gi")
    work.extra_conditions.append({
        "type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
        "message": msg.format(s.cluster.token(5)), "lastUpdateTime": iso(scaled),
        "lastTransitionTime": iso(scaled)})
    s.cluster.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set "
                    f"{rs['metadata']['name']} from 2 to 6", first=scaled,
                    component="deployment-controller")
    s.cluster.event(rs, "FailedCreate", msg.format(s.cluster.token(5)), first=scaled,
                    last=NOW - timedelta(seconds=38), count=23, type_="Warning",
                    component="replicaset-controller")
    hpa(s, work, minimum=2, maximum=10, current=2, desired=6, utilization=168, target=70,
        scaled=scaled)
    deployment_metrics(s, work, available=const(2),
                       spec=lambda t: 2 if t < scaled.timestamp() else 6)
    for pod in pods:
        s.metrics.gauge("report_render_queue_depth", {"namespace": NS, "pod": pod["metadata"][
            "name"]}, [(t, round(2 + 90 * rush(t) * ((t - edge) / 2520 if t > edge else 0)))
                       for t in s.times], "Survey report jobs waiting for a render worker.")
    chatter(s, pods, "roof-report-renderer", "roof-report-renderer", [
        ("info", "rendered survey SV-2027-118204 (14 pages, 3D shading) in 9.1s", {}),
        ("info", "rendered survey SV-2027-118219 (11 pages) in 7.4s", {}),
    ], 60, end=onset)
    chatter(s, pods, "roof-report-renderer", "roof-report-renderer", [
        ("info", "rendered survey SV-2027-118377 (12 pages, 3D shading) in 8.8s", {}),
        ("warn", "job SV-2027-118391 waited 312s in queue (workers busy 2/2)", {}),
        ("warn", "render queue depth 64, oldest job 6m12s", {}),
        ("error", "shading tile cache full, evicting 120 tiles", {"error.type": "CacheFull"}),
    ], 120, start=onset + timedelta(minutes=4))

    # ---- the quota (its usage summed from the namespace's pods at the end)
    quota_hard = {"limits.memory": "16Gi", "pods": "40", "requests.cpu": "14",
                  "requests.memory": "14Gi"}

    # ---- drone-photo-stitcher: big, blamed, innocent (OOM two days ago)
    last = ended("OOMKilled", 137, NOW - timedelta(days=2, hours=9),
                 NOW - timedelta(days=2, hours=1, minutes=40))
    stitch = Ctr("drone-photo-stitcher", f"{REG}/drone-photo-stitcher:1.22.0", port=8080,
                 requests={"cpu": "1500m", "memory": "3Gi"}, limits={"memory": "4Gi"},
                 readiness=http_probe("/ready"), liveness=http_probe("/healthz", delay=30))
    _, stitchers = simple_deployment(
        s, NS, "drone-photo-stitcher", stitch.image, replicas=2, node_list=nodes[2:], ctr=stitch,
        rollout=NOW - timedelta(days=3, hours=4), revision=41,
        restarts={1: running(NOW - timedelta(days=2, hours=1, minutes=39), restarts=1,
                             last=last)})
    for i, pod in enumerate(stitchers):
        container_metrics(s, pod, "drone-photo-stitcher",
                          memory=lambda t, i=i: (2900 + 300 * i) * MIB, restart_base=i)
    chatter(s, stitchers, "drone-photo-stitcher", "drone-photo-stitcher", [
        ("info", "stitched flight F-55102 (212 images) into orthomosaic in 141s", {}),
        ("warn", "image IMG_0412.JPG has no GPS EXIF, placed by feature matching", {}),
    ], 30)

    # ---- survey-scheduler: rolled out 50 min before the onset, healthy
    roll_at = onset - timedelta(minutes=50)
    sch = rollout(s, NS, "survey-scheduler", lambda v: Ctr(
        "survey-scheduler", f"{REG}/survey-scheduler:{v}",
        requests={"cpu": "200m", "memory": "384Mi"}, limits={"memory": "512Mi"},
        readiness=http_probe("/ready"), liveness=http_probe("/healthz", delay=15, period=20)),
        old="6.0.3", new="6.1.0", at=roll_at, revision=57, replicas=2, node_list=nodes)
    for pod in sch.new_pods + sch.old_pods:
        container_metrics(s, pod, "survey-scheduler", memory=lambda t: 260 * MIB)
        http_metrics(s, "survey-scheduler", pod, rps=const(1.6),
                     codes={"200": const(0.997), "409": const(0.003)}, median=const(0.07))
    chatter(s, sch.new_pods, "survey-scheduler", "survey-scheduler", [
        ("info", "survey-scheduler 6.1.0 started (route optimiser v2 enabled)", {}),
        ("info", "booked survey slot 2027-06-16 10:00 for lead L-77120 (crew north-3)", {}),
        ("warn", "crew south-1 has no slot left this week, offering next week", {}),
    ], 50, start=roll_at + timedelta(minutes=1))
    neighbour(s, NS, "quote-web", f"{REG}/quote-web:9.3.0", nodes, replicas=2,
              memory_mib=240, rps=5.0, logs=[
                  ("info", "GET /quote/Q-2027-44120 200", {"http.response.status_code": 200}),
                  ("info", "POST /quote/Q-2027-44133/accept 200",
                   {"http.response.status_code": 200}),
              ], n_logs=40)

    queue = Ctr("redis", "docker.io/library/redis:7.2.5-alpine", port=6379, port_name="redis",
                requests={"cpu": "200m", "memory": "1536Mi"}, limits={"memory": "1536Mi"},
                args=["--maxmemory", "1200mb", "--appendonly", "no"])
    _, queues = simple_deployment(s, NS, "report-queue", queue.image, replicas=1,
                                  node_list=nodes[1:], ctr=queue, revision=4,
                                  rollout=NOW - timedelta(days=6, hours=2), service=False)
    s.cluster.service(NS, "report-queue", {"app.kubernetes.io/name": "report-queue"},
                      port=6379, target="redis", created=NOW - timedelta(days=300))
    container_metrics(s, queues[0], "redis", memory=lambda t: (310 + 40 * rush(t)) * MIB)

    # ---- elsewhere: CRM sync with a few ordinary timeouts
    neighbour(s, "crm", "crm-sync", f"{REG}/crm-sync:2.7.5", nodes, replicas=1,
              memory_mib=180, logs=[
                  ("info", "pushed 38 lead updates to CRM", {}),
                  ("warn", "CRM API timeout after 15s on batch 2027-06-14T08:20, will retry",
                   {"error.type": "Timeout"}),
              ], n_logs=24)

    used = _usage(s)
    namespaced(s, "v1", "ResourceQuota", NS, "surveys-compute", NOW - timedelta(days=212),
               {"hard": quota_hard}, status={"hard": quota_hard, "used": used})
    return s


def _usage(s: Story) -> dict[str, str]:
    """What the quota controller counts: the namespace's running pods."""
    cpu = mem_req = mem_lim = 0.0
    count = 0
    for pod in s.cluster.objects_of("Pod"):
        if pod["metadata"]["namespace"] != NS:
            continue
        count += 1
        for ctr in pod["spec"]["containers"]:
            res = ctr.get("resources", {})
            cpu += _cpu(res.get("requests", {}).get("cpu", "0"))
            mem_req += _mib(res.get("requests", {}).get("memory", "0"))
            mem_lim += _mib(res.get("limits", {}).get("memory", "0"))
    return {"limits.memory": _mem(mem_lim), "pods": str(count),
            "requests.cpu": f"{round(cpu * 1000)}m", "requests.memory": _mem(mem_req)}


def _cpu(q: str) -> float:
    return float(q[:-1]) / 1000 if q.endswith("m") else float(q)


def _mib(q: str) -> float:
    return float(q[:-2]) * 1024 if q.endswith("Gi") else float(q.removesuffix("Mi") or 0)


def _mem(mib: float) -> str:
    return f"{mib / 1024:g}Gi" if mib % 1024 == 0 else f"{mib:g}Mi"
