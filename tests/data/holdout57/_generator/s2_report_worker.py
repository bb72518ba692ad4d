"""oom_killed: a pool sized by os.cpu_count() forks 64 workers on the new 64-core nodes."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from ._kit import App, Obj, Scenario, crashed_status, rollout_events, rs_hash, worker_nodes

SID = "analytics-report-worker-restarts"
NOW = "2026-05-06T07:45:00Z"
LIMIT = 2147483648


def build(root: Path) -> None:
    s = Scenario(SID, NOW, 5702)
    general = worker_nodes(s, 3, pool="general")
    compute = worker_nodes(s, 3, pool="compute-c6i-16xl", first=90, cpu="64", memory="128Gi",
                           instance="c6i.16xlarge", created_days=1.6,
                           labels={"workload-class": "batch-compute"})
    s.background(general, ["analytics", "web"])
    n_all = len(general) + len(compute)

    c: Obj = {"name": "report-worker", "image": "registry.internal/analytics/report-worker:3.14.2",
              "command": ["python", "-m", "reportworker"],
              "env": [{"name": "REPORTS_DB_DSN", "value": "postgresql://reports-db.analytics"
                                                         ".svc:5432/reports"},
                      {"name": "QUEUE_URL", "value": "redis://report-queue.analytics.svc:6379/0"},
                      {"name": "LOG_LEVEL", "value": "info"}],
              "resources": {"requests": {"cpu": "2", "memory": "2Gi"},
                            "limits": {"cpu": "4", "memory": "2Gi"}}}
    tpl = s.template("report-worker", [c],
                     extra_spec={"nodeSelector": {"workload-class": "batch-compute"}})
    s.deployment("analytics", "report-worker", tpl, replicas=3, ready=1, updated=3, revision=19,
                 unavailable=2, progressed_min=2290,
                 conditions=[{"type": "Available", "status": "False",
                              "reason": "MinimumReplicasUnavailable",
                              "message": "Deployment does not have minimum availability.",
                              "lastUpdateTime": s.t(3), "lastTransitionTime": s.t(3)},
                             {"type": "Progressing", "status": "True",
                              "reason": "NewReplicaSetAvailable",
                              "message": "ReplicaSet has successfully progressed.",
                              "lastUpdateTime": s.t(5000), "lastTransitionTime": s.t(5000)}])
    rs = s.replicaset("analytics", "report-worker", 19, tpl, replicas=3, ready=1,
                      created_min=12 * 1440)
    pods: list[tuple[str, str, list[float]]] = []
    for i, node in enumerate(compute):
        t = 1.2 + 2.5 * i
        starts: list[float] = []
        while t < 62:
            starts.insert(0, t)
            t += 3.7 + 5.05 + 0.4 * i
        running = i == 0
        name = s.pod_name(rs, str(i))
        cs = crashed_status(s, c, "analytics", name, starts, reason="OOMKilled", code=137,
                            running=running)
        cs["restartCount"] = 58 + 3 * i + len(starts) - 1
        p, _ = s.pod("analytics", rs, "report-worker", tpl, node, created_min=2285 - i,
                     key=str(i), statuses=[cs], ready=running)
        pods.append((p, node, starts))
        s.event("analytics", "Pod", p, "BackOff",
                "Back-off restarting failed container report-worker in pod "
                f"{p}_analytics({s.uid('analytics/' + p)})", type_="Warning", count=310 + 17 * i,
                first=59, last=1 + i, host=node, container="report-worker")
        s.event("analytics", "Pod", p, "Pulled",
                'Container image "registry.internal/analytics/report-worker:3.14.2" already '
                "present on machine", count=61 + 3 * i, first=58, last=starts[-1], host=node,
                container="report-worker")
        s.event("", "Node", node, "OOMKilling",
                f"Memory cgroup out of memory: Killed process {41200 + 97 * i} (python) "
                f"total-vm:1893412kB, anon-rss:33980kB, file-rss:6124kB, shmem-rss:0kB, UID:0 "
                f"pgtables:412kB oom_score_adj:-997", type_="Warning", count=len(starts) + 50,
                first=58, last=min(x - 3.6 for x in starts if x > 3.7),
                component="kernel-monitor", host=node)

        for k, st in enumerate(starts):
            t0 = s.ago(st)
            lines = [
                ("info", "report-worker 3.14.2 starting (python 3.11.9, pid 1)"),
                ("info", "connected to queue redis://report-queue.analytics.svc:6379/0"),
                ("info", "sizing worker pool from os.cpu_count()=64 (WORKER_PROCESSES unset)"),
                ("info", "starting multiprocessing pool processes=64 maxtasksperchild=200"),
                ("info", "pool ready: 64 worker processes forked in 2.84s"),
            ]
            txt = []
            for j, (lvl, msg) in enumerate(lines):
                dt = t0 + timedelta(seconds=0.3 + 0.6 * j)
                s.log(dt, lvl, "report-worker", "analytics", p, "report-worker", msg)
                txt.append(f"{dt.strftime('%Y-%m-%d %H:%M:%S,%f')[:-3]} {lvl.upper()} {msg}")
            life = 3.6 if (k < len(starts) - 1 or not running) else min(st, 3.6)
            sec = 8.0
            w = 0
            while sec < life * 60 - 5:
                dt = t0 + timedelta(seconds=sec)
                job = f"rpt-{s.rng.randint(100000, 999999)}"
                if s.rng.random() < 0.7:
                    msg = (f"[worker-{w % 64:02d}] job {job} loading tenant dataset "
                           f"({s.rng.randint(40, 900)}k rows)")
                    lvl = "info"
                elif s.rng.random() < 0.5:
                    msg = (f"[worker-{w % 64:02d}] reports-db slow query "
                           f"{s.rng.randint(1100, 2600)}ms: SELECT ... FROM report_runs")
                    lvl = "warning"
                else:
                    msg = f"[worker-{w % 64:02d}] job {job} rendered {s.rng.randint(2, 40)} pages"
                    lvl = "info"
                s.log(dt, lvl, "report-worker", "analytics", p, "report-worker", msg)
                txt.append(f"{dt.strftime('%Y-%m-%d %H:%M:%S,%f')[:-3]} {lvl.upper()} {msg}")
                w += 7
                sec += s.rng.uniform(4, 9)
            if k == len(starts) - (2 if running else 1):
                s.pod_log("analytics", p, "report-worker", txt, previous=True)
            if running and k == len(starts) - 1:
                s.pod_log("analytics", p, "report-worker", txt)

        lab = {"namespace": "analytics", "pod": p, "container": "report-worker"}

        def mem(m: float, starts: list[float] = starts) -> float | None:
            for st in starts:
                if st >= m and st - m < 3.6:
                    return 380e6 + (st - m) * 470e6
            return None
        s.gauge("container_memory_working_set_bytes", "Current working set in bytes.", lab, mem)
        s.gauge("kube_pod_container_resource_limits", "Container limits.",
                {**lab, "resource": "memory", "unit": "byte"}, lambda m: LIMIT)
        s.gauge("kube_pod_container_status_restarts_total", "Restarts of the container.", lab,
                lambda m, starts=starts, i=i: 58 + 3 * i + sum(1 for x in starts[1:] if x >= m))
        s.gauge("kube_pod_container_status_last_terminated_reason", "Last termination reason.",
                {**lab, "reason": "OOMKilled"}, lambda m: 1)
    for node in general + compute:
        s.gauge("kube_node_status_capacity", "Node capacity.",
                {"node": node, "resource": "cpu", "unit": "core"},
                lambda m, node=node: 64 if node in compute else 8)
    s.gauge("report_queue_depth", "Jobs waiting in the report queue.",
            {"namespace": "analytics", "queue": "reports"}, lambda m: 4100 + 38 * (60 - m))

    # --- bystanders --------------------------------------------------------------------
    api = s.app("analytics", "report-api", "registry.internal/analytics/report-api:2.2.0",
                general[:2], revision=41, created_min=33,
                prev_image="registry.internal/analytics/report-api:2.1.7")
    rollout_events(s, "analytics", "report-api", api.rs,
                   "report-api-" + rs_hash("analyticsreport-api40"), 33, 2)
    s.chatter(api, [("info", "GET /v1/reports/{id} 200 {ms}ms"),
                    ("info", "GET /v1/reports?tenant=t-{n} 200 {ms}ms"),
                    ("warning", "report {id} still queued after {n}s, returning 202")], every_s=18)
    s.pod_basics(api, cpu=lambda m, i: 0.15, mem_mb=lambda m, i: 260.0,
                 rps=lambda m, i: 9.0, err=lambda m, i: 0.02)
    db = s.app("analytics", "reports-db-proxy", "bitnami/pgbouncer:1.22.1", general[1:3],
               port=6432, revision=4, created_min=5 * 1440)
    s.chatter(db, [("info", "stats: 41 xact/s, 88 query/s, in 61234 B/s, out 402113 B/s, "
                            "xact 2311 us, query 1020 us, wait {ms} us"),
                   ("warning", "C-0x{id}: reports/report_worker@10.244.5.{n}:{rnd} closing "
                               "because: client unexpected eof (age=214s)")], every_s=60)
    s.pod_basics(db, cpu=lambda m, i: 0.05, mem_mb=lambda m, i: 40.0)
    q = s.app("analytics", "report-queue", "redis:7.2.4-alpine", general[2:3], port=6379,
              revision=2, created_min=5 * 1440)
    s.pod_basics(q, cpu=lambda m, i: 0.04, mem_mb=lambda m, i: 180.0)
    web = s.app("web", "dashboard", "registry.internal/web/dashboard:8.3.1", general,
                revision=12, created_min=4 * 1440)
    s.chatter(web, [("info", "GET /dashboards/{n} 200 {ms}ms"),
                    ("error", "widget 'scheduled-reports' timed out fetching /v1/reports "
                              "(5000ms)")], every_s=35)
    s.pod_basics(web, cpu=lambda m, i: 0.1, mem_mb=lambda m, i: 220.0, rps=lambda m, i: 4.0)
    assert isinstance(api, App) and n_all == 6

    s.scenario_yaml = {
        "id": SID,
        "title": "report-worker restarting all night, scheduled reports late",
        "now": NOW,
        "report": "report-worker pods in analytics keep restarting since last night and the "
                  "scheduled reports are hours behind. Nobody deployed report-worker (last "
                  "deploy was 12 days ago). I see lots of reports-db slow query warnings, is "
                  "the reports DB acting up again? report-api went out this morning too.\n",
        "truth": {
            "category": "oom_killed",
            "culprit": {"kind": "Deployment", "namespace": "analytics",
                        "name": "report-worker"},
            "evidence": ["OOMKilled", "os.cpu_count()=64", "processes=64", "2Gi"],
            "fix": "The node pool moved to 64-core c6i.16xlarge nodes; report-worker sizes its "
                   "multiprocessing pool by os.cpu_count(), which ignores the 4-CPU limit, so it "
                   "forks 64 workers inside an unchanged 2Gi memory limit and is OOM-killed. Set "
                   "WORKER_PROCESSES (e.g. 4) or size the pool from the cgroup CPU quota; raise "
                   "the memory limit only if more workers are really wanted.",
        },
    }
    s.write(root)
