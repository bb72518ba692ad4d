"""Scenario 5: the nightly ledger-reconcile CronJob runs at a high priority and preempts web.

At 02:00 six 6-CPU pods with priorityClassName batch-critical arrive on a full cluster whose
autoscaler is at its maximum; the scheduler evicts priority-0 storefront/web pods to fit
them, and the web replacements stay Pending until the batch finishes.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ._k8s import (
    PodSpecBits,
    app,
    container,
    cstatus,
    deployment,
    meta,
    namespace,
    node,
    old_restart,
    owner_ref,
    pod,
    replicaset,
    terminated,
)
from ._kit import Obj, Story, accumulate, at, grid, iso, mins

REG = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
LIMG = f"{REG}/batch/ledger-reconcile:2.2.0"
Victim = tuple[str, str, datetime]


def _job_name(t: datetime) -> str:
    return f"ledger-reconcile-{int(t.timestamp() // 60)}"


def build() -> Story:
    """Build the scenario."""
    now = at("2026-09-17T02:35:00Z")
    run = at("2026-09-17T02:00:00Z")
    s = Story(
        "storefront-2am-latency", "Storefront slow and 503s around 2am", now,
        "storefront p99 is over 3s and we get some 503s, again around 2am like the last nights "
        "but worse tonight. probably the nightly pg-backup hammering the db again? web HPA "
        "says 16 replicas but only 10 are ready, and the cluster autoscaler is maxed out.",
        "unschedulable", {"kind": "CronJob", "namespace": "batch", "name": "ledger-reconcile"},
        ["Preempted by pod", "priorityClassName: batch-critical", "priority: 1000000",
         "PreemptionByScheduler", "No preemption victims found", "Insufficient cpu"],
        "Give ledger-reconcile a priority class below web's (or preemptionPolicy: Never), or "
        "run it on its own node group / with smaller requests, and raise the general node "
        "group's max size so the 02:00 batch does not evict storefront/web.",
        seed=5805)
    rng = s.rng
    for ns in ("storefront", "batch", "db", "kube-system", "default"):
        s.add(namespace(s, ns, now - timedelta(days=700)))
    ips: dict[str, str] = {}
    for i in range(8):
        ip = f"10.60.{16 * (i % 3)}.{rng.randint(10, 240)}"
        n = f"ip-{ip.replace('.', '-')}.ec2.internal"
        ips[n] = ip
        s.add(node(s, n, now - timedelta(days=30 + i), ip=ip, cpu="16", memory="64374872Ki",
                   labels={"eks.amazonaws.com/nodegroup": "general-m6i-4xl",
                           "node.kubernetes.io/instance-type": "m6i.4xlarge",
                           "topology.kubernetes.io/zone": f"us-east-1{'abc'[i % 3]}"}))
    nodes = list(ips)
    lc = container("reconcile", LIMG, port=None, cpu="6", memory="20Gi", probe_path=None,
                   args=["--partitions=6", "--ledger-date=yesterday"])
    pspec: Obj = {"restartPolicy": "Never", "priorityClassName": "batch-critical",
                  "containers": [lc]}
    cj_uid = s.uid()
    s.add({"apiVersion": "batch/v1", "kind": "CronJob",
           "metadata": meta("ledger-reconcile", "batch", now - timedelta(days=200), cj_uid,
                            {"app": "ledger-reconcile"}, generation=6),
           "spec": {"schedule": "0 2 * * *", "concurrencyPolicy": "Forbid",
                    "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1,
                    "jobTemplate": {"spec": {"parallelism": 6, "completions": 6,
                                             "completionMode": "Indexed", "backoffLimit": 2,
                                             "template": {"spec": pspec}}}},
           "status": {"lastScheduleTime": iso(run),
                      "lastSuccessfulTime": iso(run - timedelta(days=1) + mins(52)),
                      "active": [{"apiVersion": "batch/v1", "kind": "Job",
                                  "name": _job_name(run), "namespace": "batch"}]}})
    job_uid = ""
    for d in (3, 2, 1, 0):
        t = run - timedelta(days=d)
        job_uid = s.uid()
        status: Obj = {"startTime": iso(t), "active": 6, "ready": 6} if d == 0 else {
            "startTime": iso(t), "succeeded": 6,
            "completionTime": iso(t + mins(48 + rng.randint(0, 9))),
            "conditions": [{"type": "Complete", "status": "True",
                            "lastTransitionTime": iso(t + mins(50))}]}
        s.add({"apiVersion": "batch/v1", "kind": "Job",
               "metadata": meta(_job_name(t), "batch", t, job_uid, {"app": "ledger-reconcile"},
                                owner=owner_ref("CronJob", "ledger-reconcile", cj_uid,
                                                "batch/v1")),
               "spec": {"parallelism": 6, "completions": 6, "completionMode": "Indexed",
                        "template": {"spec": pspec}},
               "status": status})
    victims = _tonight(s, nodes, ips, run, lc, job_uid)
    _web(s, nodes, ips, run, victims)
    _noise(s, nodes, ips, run)
    _metrics(s, run)
    return s


def _tonight(s: Story, nodes: list[str], ips: dict[str, str], run: datetime, lc: Obj,
             job_uid: str) -> list[Victim]:
    """The six reconcile pods and scheduler events; returns the preempted web pods."""
    rng = s.rng
    job = _job_name(run)
    victims: list[Victim] = []
    for k in range(6):
        pn = f"{job}-{k}-{s.suffix()}"
        nd = nodes[(k * 3) % 8]
        st = run + timedelta(seconds=14 + 3 * k)
        p = pod(s, "batch", pn, PodSpecBits([lc], {"job-name": job,
                                                   "batch.kubernetes.io/job-completion-index":
                                                   str(k)},
                                            {"restartPolicy": "Never",
                                             "priorityClassName": "batch-critical",
                                             "priority": 1000000,
                                             "preemptionPolicy": "PreemptLowerPriority"}),
                node_name=nd, ip=f"10.60.{rng.randint(64, 95)}.{rng.randint(2, 250)}",
                start=st, host_ip=ips[nd], owner=owner_ref("Job", job, job_uid, "batch/v1"))
        s.add(p)
        puid = p["metadata"]["uid"]
        s.event("batch", "Pod", pn, "FailedScheduling", "0/8 nodes are available: 8 "
                "Insufficient cpu.", type_="Warning", first=run + timedelta(seconds=2 + k),
                last=run + timedelta(seconds=2 + k), component="default-scheduler")
        s.event("batch", "Pod", pn, "Scheduled", f"Successfully assigned batch/{pn} to {nd}",
                first=st, last=st, component="default-scheduler")
        s.event("batch", "Pod", pn, "Pulled", f'Container image "{LIMG}" already present on '
                "machine", first=st, last=st + timedelta(seconds=3), host=nd)
        s.event("batch", "Job", job, "SuccessfulCreate", f"Created pod: {pn}",
                first=run + timedelta(seconds=1), last=run + timedelta(seconds=1),
                component="job-controller", api="batch/v1")
        for v in range(1):
            victim = f"web-7c9f6d8b54-{s.suffix()}"
            vt = run + timedelta(seconds=6 + k + v)
            victims.append((victim, nd, vt))
            s.event("storefront", "Pod", victim, "Preempted", f"Preempted by pod {puid} on node "
                    f"{nd}", first=vt, last=vt, component="default-scheduler")
            s.event("storefront", "Pod", victim, "Killing", "Stopping container web",
                    first=vt + timedelta(seconds=1), last=vt + timedelta(seconds=1), host=nd)
        s.chatter("batch", [pn], "ledger-reconcile", "reconcile", st + mins(1), s.now, 40.0, [
            (6, "info", f"partition {k}/6: reconciled {{id}} ledger entries, {{n}} mismatches"),
            (1, "warning", f"partition {k}/6: settlement file late for acquirer {{n}}, retrying")])
    s.event("batch", "CronJob", "ledger-reconcile", "SuccessfulCreate", f"Created job {job}",
            first=run, last=run, component="cronjob-controller", api="batch/v1")
    ca = [f"cluster-autoscaler-5b8c7d9f6-{s.suffix()}"]
    s.chatter("kube-system", ca, "cluster-autoscaler", "cluster-autoscaler", run, s.now, 20.0, [
        (3, "info", "Pod storefront/web-7c9f6d8b54-{hex} is unschedulable"),
        (3, "warning", "Skipping node group eks-general-m6i-4xl-2ac5e1f0 - max size reached"),
        (1, "info", "No expansion options")])
    s.chatter("kube-system", ca, "cluster-autoscaler", "cluster-autoscaler",
              s.now - timedelta(hours=5), run, 120.0,
              [(1, "info", "Scale down status: unneededOnly=false lastScaleUpTime=... "
                           "scaleDownForbidden=false")])
    return victims


def _web(s: Story, nodes: list[str], ips: dict[str, str], run: datetime,
         victims: list[Victim]) -> None:
    """storefront/web: 10 of 16 ready, six Pending, the preempted pods; its HPA."""
    now, rng = s.now, s.rng
    img = f"{REG}/storefront/web:5.12.0"
    cs = [container("web", img, cpu="1500m", memory="2Gi")]
    rolled = at("2026-09-16T15:20:00Z")
    d, duid = deployment(s, "storefront", "web", labels={"app": "web"}, containers=cs,
                         replicas=16, ready=10, created=now - timedelta(days=600), revision=212,
                         generation=540, changed=run + mins(1))
    rs, rsuid = replicaset(s, "storefront", "web", duid, "7c9f6d8b54", containers=cs,
                           replicas=16, ready=10, revision=212, created=rolled, app="web")
    s.add(d, rs)
    bits = PodSpecBits(cs, {"app": "web", "pod-template-hash": "7c9f6d8b54"}, {"priority": 0})
    own = owner_ref("ReplicaSet", "web-7c9f6d8b54", rsuid)
    for i in range(16):
        pn = f"web-7c9f6d8b54-{s.suffix()}"
        if i < 10:
            nd = nodes[i % 8]
            s.add(pod(s, "storefront", pn, bits, node_name=nd,
                      ip=f"10.60.{rng.randint(96, 127)}.{rng.randint(2, 250)}",
                      start=rolled + mins(i), host_ip=ips[nd], owner=own))
            s.chatter("storefront", [pn], "web", "web", now - timedelta(hours=5), now, 60.0, [
                (8, "info", "GET /p/{id} 200 {ms}ms"), (2, "info", "GET /cart 200 {ms}ms")])
            s.chatter("storefront", [pn], "web", "web", run, now, 20.0, [
                (3, "warning", "GET /p/{id} 200 2{n}00ms upstream_queue_wait=1{n}00ms"),
                (1, "error", "GET /checkout 503 no capacity: worker pool exhausted (64/64 busy)")])
            continue
        st = run + timedelta(seconds=20 + i)
        s.add(pod(s, "storefront", pn, bits, node_name=None, ip=None, start=st, owner=own,
                  phase="Pending", ready=False, conditions=[{
                      "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                      "lastTransitionTime": iso(st),
                      "message": "0/8 nodes are available: 8 Insufficient cpu. preemption: 0/8 "
                                 "nodes are available: 8 No preemption victims found for "
                                 "incoming pod."}]))
        s.event("storefront", "Pod", pn, "FailedScheduling", "0/8 nodes are available: 8 "
                "Insufficient cpu. preemption: 0/8 nodes are available: 8 No preemption victims "
                "found for incoming pod.", type_="Warning", count=14 + i, first=st,
                last=s.ago(1), component="default-scheduler")
        s.event("storefront", "Pod", pn, "NotTriggerScaleUp", "pod didn't trigger scale-up: 1 "
                "max node group size reached", first=st + mins(1), last=s.ago(2), count=9,
                component="cluster-autoscaler")
    for vn, nd, vt in victims:
        start = rolled + mins(rng.randint(1, 40))
        s.add(pod(s, "storefront", vn, bits, node_name=nd, ip=None, start=start,
                  host_ip=ips[nd], owner=own, phase="Failed", ready=False,
                  statuses=[cstatus("web", img, terminated("Error", 143, start, vt + mins(0.5)),
                                    ready=False)],
                  conditions=[{"type": "DisruptionTarget", "status": "True",
                               "reason": "PreemptionByScheduler",
                               "message": "Kubernetes default-scheduler: preempting to "
                                          "accommodate a higher priority pod",
                               "lastTransitionTime": iso(vt)},
                              {"type": "Ready", "status": "False", "reason": "PodFailed",
                               "lastTransitionTime": iso(vt + mins(0.5))},
                              {"type": "PodScheduled", "status": "True",
                               "lastTransitionTime": iso(start)}]))
    s.add({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
           "metadata": meta("web", "storefront", now - timedelta(days=600), s.uid()),
           "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                       "name": "web"}, "minReplicas": 16, "maxReplicas": 40,
                    "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                        "type": "Utilization", "averageUtilization": 60}}}]},
           "status": {"currentReplicas": 16, "desiredReplicas": 16,
                      "lastScaleTime": iso(run - mins(170)),
                      "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu",
                                          "current": {"averageUtilization": 57,
                                                      "averageValue": "855m"}}}],
                      "conditions": [{"type": "AbleToScale", "status": "True",
                                      "reason": "ReadyForNewScale",
                                      "lastTransitionTime": iso(run - mins(170)),
                                      "message": "recommended size matches current size"},
                                     {"type": "ScalingLimited", "status": "False",
                                      "reason": "DesiredWithinRange",
                                      "lastTransitionTime": iso(run - timedelta(days=1)),
                                      "message": "the desired count is within the acceptable "
                                                 "range"}]}})


def _noise(s: Story, nodes: list[str], ips: dict[str, str], run: datetime) -> None:
    """redis's old restart, the nightly pg-backup, payment-provider timeouts."""
    now = s.now
    rd = app(s, "storefront", "redis-sessions", "public.ecr.aws/docker/library/redis:7.2.4",
             replicas=1, nodes=nodes[5:], node_ips=ips, created=now - timedelta(days=400),
             rolled=now - timedelta(days=6), port=6379,
             restarts={0: old_restart("Error", 1, now - timedelta(days=6),
                                      now - timedelta(days=4, hours=7))})
    s.chatter("storefront", rd.pods, "redis-sessions", "redis-sessions",
              now - timedelta(hours=5), now, 300.0,
              [(1, "info", "1:M 17 Sep 2026 0{n}:00:00.120 * 100 changes in 300 seconds. "
                           "Saving...")])
    bk = "pg-backup-29301810-q7x2m"
    t = run - mins(30)
    s.chatter("db", [bk], "pg-backup", "pg-backup", t, t + mins(34), 60.0, [
        (3, "info", "pg_basebackup: {n}% ({id} kB) copied"),
        (1, "warning", "pg_basebackup: throttling at 200MB/s")])
    s.log(t + mins(35), "db", bk, "pg-backup", "pg-backup", "info",
          "pg_basebackup: base backup completed, uploaded to s3://acme-pg-backups/orders")
    s.chatter("storefront", ["checkout-api-6d5c8f7b9-tq2lx"], "checkout-api", "checkout-api",
              now - timedelta(hours=5), now, 90.0, [
        (3, "warning", "payment provider braintree timeout after 8000ms, retry 1/2"),
        (5, "info", "order {id} placed")])


def _metrics(s: Story, run: datetime) -> None:
    """Three nights of availability dips, preemptions, latency, pg-backup activity."""
    now, rng = s.now, s.rng
    ts = grid(now - timedelta(days=3, hours=6), now, 300)

    def in_batch(t: datetime) -> bool:
        return any(run - timedelta(days=d) <= t < run - timedelta(days=d) + mins(50)
                   for d in range(4))

    def batch_start(t: datetime) -> bool:
        return any(run - timedelta(days=d) <= t < run - timedelta(days=d) + mins(10)
                   for d in range(4))

    def in_backup(t: datetime) -> bool:
        return any(run - timedelta(days=d) - mins(30) <= t < run - timedelta(days=d) + mins(5)
                   for d in range(4))
    def lost(t: datetime) -> float:
        """Web pods preempted and still Pending: three on earlier nights, six tonight."""
        if not in_batch(t):
            return 0.0
        return 6.0 if t >= run else 3.0

    def wanted(t: datetime) -> float:
        return 16.0 if t.hour < 7 or t.hour >= 23 else 22.0
    s.metrics.gauge("kube_deployment_status_replicas_available", "available", {
        "namespace": "storefront", "deployment": "web"},
        [(t, wanted(t) - lost(t)) for t in ts])
    s.metrics.gauge("kube_deployment_status_replicas_unavailable", "unavailable", {
        "namespace": "storefront", "deployment": "web"}, [(t, lost(t)) for t in ts])
    s.metrics.counter("scheduler_preemption_attempts_total", "preemption attempts", {
        "job": "kube-scheduler"}, accumulate(ts, lambda t: 0.03 if batch_start(t) else 0.0,
                                             311.0))
    s.metrics.gauge("kube_job_status_active", "active pods", {
        "namespace": "batch", "job_name": "ledger-reconcile"},
        [(t, 6.0 if in_batch(t) else 0.0) for t in ts])
    probe = {"job": "blackbox", "instance": "https://www.acme-shop.com/"}
    s.metrics.gauge("probe_duration_seconds", "probe duration", probe,
                    [(t, (0.35 + 0.45 * lost(t)) * (0.7 + 0.6 * rng.random())) for t in ts])
    s.metrics.gauge("pg_stat_activity_count", "connections", {
        "namespace": "db", "datname": "orders", "state": "active"},
        [(t, float(rng.randint(8, 14) + (22 if in_backup(t) else 0))) for t in ts])
