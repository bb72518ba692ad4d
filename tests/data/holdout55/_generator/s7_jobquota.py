"""Shape 7, quota_exceeded: a CronJob that runs every two minutes keeps 200 finished Jobs (no
ttlSecondsAfterFinished); they fill the namespace's count/jobs.batch quota and every other
CronJob's Jobs are refused; a new image of the stale report's job is blamed."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from . import _kit as k

SID = "etl-finance-export-stale"
QUOTA = 60
REG = "482913307715.dkr.ecr.eu-west-1.amazonaws.com"


def _cronjob(s: k.Story, name: str, schedule: str, image: str, *, keep_ok: int,
             keep_failed: int, created: datetime, last_schedule: datetime,
             last_success: datetime, args: list[str], cpu: str = "100m",
             mem: str = "256Mi") -> tuple[k.Obj, k.Obj]:
    c = k.container(name, image, cpu=cpu, mem=mem, mem_limit=mem, args=args)
    tmpl = k.template({"app.kubernetes.io/name": name}, [c])
    tmpl["spec"]["restartPolicy"] = "Never"
    cj = s.add({
        "apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": k.meta(name, "etl", created, s.uid(),
                           labels={"app.kubernetes.io/name": name,
                                   "app.kubernetes.io/part-of": "etl"}),
        "spec": {"schedule": schedule, "timeZone": "Etc/UTC", "concurrencyPolicy": "Forbid",
                 "suspend": False, "startingDeadlineSeconds": 120,
                 "successfulJobsHistoryLimit": keep_ok, "failedJobsHistoryLimit": keep_failed,
                 "jobTemplate": {"metadata": {"labels": {"app.kubernetes.io/name": name}},
                                 "spec": {"backoffLimit": 1, "activeDeadlineSeconds": 1800,
                                          "template": tmpl}}},
        "status": {"lastScheduleTime": k.iso(last_schedule),
                   "lastSuccessfulTime": k.iso(last_success)},
    })
    return cj, tmpl


def _job(s: k.Story, cj: k.Obj, tmpl: k.Obj, scheduled: datetime, secs: float,
         node: tuple[str, str]) -> k.Obj:
    name = f"{cj['metadata']['name']}-{int(scheduled.timestamp() // 60)}"
    uid = s.uid()
    start = scheduled + timedelta(seconds=s.rng.uniform(0.3, 1.5))
    end = start + timedelta(seconds=secs)
    labels = {"app.kubernetes.io/name": cj["metadata"]["name"],
              "batch.kubernetes.io/controller-uid": uid,
              "batch.kubernetes.io/job-name": name, "controller-uid": uid, "job-name": name}
    jt = {"metadata": {"labels": labels}, "spec": tmpl["spec"]}
    job = s.add({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": k.meta(name, "etl", scheduled, uid, labels=labels,
                           annotations={"batch.kubernetes.io/cronjob-scheduled-timestamp":
                                        k.iso(scheduled)},
                           owner=k.owner_ref("CronJob", cj["metadata"]["name"],
                                             cj["metadata"]["uid"], api="batch/v1")),
        "spec": {"backoffLimit": 1, "activeDeadlineSeconds": 1800, "completionMode":
                 "NonIndexed", "completions": 1, "parallelism": 1, "suspend": False,
                 "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}},
                 "template": jt},
        "status": {"startTime": k.iso(start), "completionTime": k.iso(end + timedelta(
            seconds=1)), "succeeded": 1, "ready": 0, "terminating": 0,
            "uncountedTerminatedPods": {},
            "conditions": [{"type": "Complete", "status": "True",
                            "lastProbeTime": k.iso(end + timedelta(seconds=1)),
                            "lastTransitionTime": k.iso(end + timedelta(seconds=1))}]},
    })
    c = tmpl["spec"]["containers"][0]
    st = {"name": c["name"], "image": c["image"], "imageID": k._image_id(c["image"]),
          "ready": False, "started": False, "restartCount": 0, "lastState": {},
          "state": {"terminated": k.terminated("Completed", 0, start + timedelta(seconds=1),
                                               end)}}
    conds = [{"type": "PodReadyToStartContainers", "status": "False",
              "lastTransitionTime": k.iso(end)},
             {"type": "Initialized", "status": "True", "lastTransitionTime": k.iso(start)},
             {"type": "Ready", "status": "False", "reason": "PodCompleted",
              "lastTransitionTime": k.iso(end)},
             {"type": "ContainersReady", "status": "False", "reason": "PodCompleted",
              "lastTransitionTime": k.iso(end)},
             {"type": "PodScheduled", "status": "True", "lastTransitionTime": k.iso(start)}]
    pod = k.make_pod(s, "etl", f"{name}-{s.suffix()}", jt,
                     k.owner_ref("Job", name, uid, api="batch/v1"), node[0], start,
                     statuses=[st], phase="Succeeded", conditions=conds, host_ip=node[1])
    job["pod"] = pod["metadata"]["name"]
    return job


def build(root: Path) -> None:
    s = k.Story(SID, "2026-10-05T10:12:00Z", seed=5507)
    old = s.ago(days=600)
    nodes = k.eks_nodes(s, [
        ("eu-west-1a", "m6i.xlarge", "4", "16011004Ki", "general-a"),
        ("eu-west-1b", "m6i.xlarge", "4", "16011004Ki", "general-b"),
        ("eu-west-1c", "m6i.xlarge", "4", "16011004Ki", "general-c"),
    ], old, s.ago(days=5, hours=20))
    k.standard_cluster(s, nodes, old, s.ago(days=5, hours=19))
    for ns, team in (("etl", "data"), ("reporting", "data"), ("ingress-nginx", "platform")):
        k.namespace(s, ns, old, {"team": team})

    full = s.now.replace(hour=9, minute=20, second=0)  # last Job the quota admitted

    # ----- CronJobs -----
    poller, ptmpl = _cronjob(
        s, "sftp-poller", "*/2 * * * *", f"{REG}/etl/sftp-poller:3.0.1", keep_ok=200,
        keep_failed=5, created=s.ago(days=300), last_schedule=full,
        last_success=full + timedelta(seconds=5),
        args=["--remote", "sftp.partner-bank.example:22", "--path", "/outbound",
              "--sink", "s3://etl-landing-prod/bank/"])
    poller["metadata"]["annotations"] = {"etl.example.com/ticket": "DATA-2291"}
    poller["metadata"]["generation"] = 9
    fin, ftmpl = _cronjob(
        s, "finance-export", "0 * * * *", f"{REG}/etl/finance-export:1.7.0", keep_ok=1,
        keep_failed=3, created=s.ago(days=400),
        last_schedule=s.now.replace(hour=9, minute=0, second=0),
        last_success=s.now.replace(hour=9, minute=0, second=0) + timedelta(minutes=4),
        args=["--since", "1h", "--target", "warehouse.finance.gl_entries"], cpu="500m",
        mem="1Gi")
    fin["metadata"]["generation"] = 14
    dbt, dtmpl = _cronjob(
        s, "dbt-run", "*/15 * * * *", f"{REG}/etl/dbt-runner:1.8.6", keep_ok=1, keep_failed=3,
        created=s.ago(days=200), last_schedule=s.now.replace(hour=9, minute=15, second=0),
        last_success=s.now.replace(hour=9, minute=15, second=0) + timedelta(minutes=3),
        args=["run", "--select", "tag:hourly"], cpu="500m", mem="1Gi")
    nightly, ntmpl = _cronjob(
        s, "nightly-rollup", "0 2 * * *", f"{REG}/etl/rollup:2.2.0", keep_ok=1, keep_failed=1,
        created=s.ago(days=500), last_schedule=s.now.replace(hour=2, minute=0, second=0),
        last_success=s.now.replace(hour=2, minute=0, second=0) + timedelta(minutes=22),
        args=["--day", "yesterday"], cpu="1", mem="2Gi")

    # ----- finished Jobs -----
    poller_jobs: list[k.Obj] = []
    n_poll = QUOTA - 3
    for i in range(n_poll):
        at = full - timedelta(minutes=2 * (n_poll - 1 - i))
        poller_jobs.append(_job(s, poller, ptmpl, at, s.rng.uniform(2.5, 6.0),
                                nodes[i % 3]))
    fin_at = s.now.replace(hour=9, minute=0, second=0)
    fin_job = _job(s, fin, ftmpl, fin_at, 231.0, nodes[1])
    dbt_at = s.now.replace(hour=9, minute=15, second=0)
    dbt_job = _job(s, dbt, dtmpl, dbt_at, 174.0, nodes[2])
    n_at = s.now.replace(hour=2, minute=0, second=0)
    _job(s, nightly, ntmpl, n_at, 1310.0, nodes[0]).pop("pod")

    # ----- the quota, a LimitRange, and the refusals -----
    s.add({"apiVersion": "v1", "kind": "ResourceQuota",
           "metadata": k.meta("etl-quota", "etl", s.ago(days=580), s.uid()),
           "spec": {"hard": {"count/jobs.batch": str(QUOTA), "pods": "40",
                             "requests.cpu": "12", "requests.memory": "48Gi",
                             "limits.memory": "64Gi"}},
           "status": {"hard": {"count/jobs.batch": str(QUOTA), "pods": "40",
                               "requests.cpu": "12", "requests.memory": "48Gi",
                               "limits.memory": "64Gi"},
                      "used": {"count/jobs.batch": str(QUOTA), "pods": "2",
                               "requests.cpu": "500m", "requests.memory": "1Gi",
                               "limits.memory": "2Gi"}}})
    s.add({"apiVersion": "v1", "kind": "LimitRange",
           "metadata": k.meta("etl-defaults", "etl", s.ago(days=580), s.uid()),
           "spec": {"limits": [{"type": "Container",
                                "default": {"cpu": "500m", "memory": "512Mi"},
                                "defaultRequest": {"cpu": "100m", "memory": "128Mi"},
                                "max": {"memory": "8Gi"}}]}})

    def refused(cj: k.Obj, at: datetime) -> str:
        name = f"{cj['metadata']['name']}-{int(at.timestamp() // 60)}"
        return (f'Error creating job: jobs.batch "{name}" is forbidden: exceeded quota: '
                f"etl-quota, requested: count/jobs.batch=1, used: count/jobs.batch={QUOTA}, "
                f"limited: count/jobs.batch={QUOTA}")

    first_refused = full + timedelta(minutes=2)
    n_refused = int((s.now - first_refused).total_seconds() // 120)
    last_refused = first_refused + timedelta(minutes=2 * (n_refused - 1))
    s.event("CronJob", "etl", "sftp-poller", "FailedCreate", refused(poller, last_refused),
            first=first_refused + timedelta(seconds=1), last=last_refused +
            timedelta(seconds=1), count=n_refused, type_="Warning",
            component="cronjob-controller", uid=poller["metadata"]["uid"],
            api_version="batch/v1")
    at = s.now.replace(minute=0, second=0)
    s.event("CronJob", "etl", "finance-export", "FailedCreate", refused(fin, at),
            first=at + timedelta(seconds=1), type_="Warning", component="cronjob-controller",
            uid=fin["metadata"]["uid"], api_version="batch/v1")
    s.event("CronJob", "etl", "dbt-run", "FailedCreate",
            refused(dbt, s.now.replace(minute=0, second=0)),
            first=s.now.replace(hour=9, minute=30, second=1),
            last=s.now.replace(minute=0, second=1), count=3, type_="Warning",
            component="cronjob-controller", uid=dbt["metadata"]["uid"],
            api_version="batch/v1")
    s.event("CronJob", "etl", "dbt-run", "SawCompletedJob",
            f"Saw completed job: {dbt_job['metadata']['name']}, condition: Complete",
            first=dbt_at + timedelta(seconds=176), component="cronjob-controller",
            uid=dbt["metadata"]["uid"], api_version="batch/v1")
    s.event("CronJob", "etl", "dbt-run", "SuccessfulDelete",
            f"Deleted job dbt-run-{int((dbt_at - timedelta(minutes=15)).timestamp() // 60)}",
            first=dbt_at + timedelta(seconds=177), component="cronjob-controller",
            uid=dbt["metadata"]["uid"], api_version="batch/v1")
    for j in poller_jobs[-5:]:
        at = k.parse(j["status"]["completionTime"])
        if s.now - at < timedelta(minutes=59):
            s.event("CronJob", "etl", "sftp-poller", "SawCompletedJob",
                    f"Saw completed job: {j['metadata']['name']}, condition: Complete",
                    first=at + timedelta(seconds=1), component="cronjob-controller",
                    uid=poller["metadata"]["uid"], api_version="batch/v1")

    # ----- logs of the jobs that ran -----
    for j in poller_jobs:
        t = k.parse(j["status"]["startTime"]) + timedelta(seconds=1.2)
        pn = j.pop("pod")
        files = 0 if s.rng.random() < 0.85 else s.rng.randint(1, 3)
        for off, lvl, msg in [
            (0.0, "info", "sftp-poller 3.0.1 connecting to sftp.partner-bank.example:22 as "
                          "etl-prod"),
            (0.9, "info", f"listed /outbound: {files} new file(s), 0 partial"),
            (1.8 + files, "info", f"uploaded {files} file(s) to s3://etl-landing-prod/bank/; "
                                  "done"),
        ]:
            s.log(t + timedelta(seconds=off), "etl", pn, "sftp-poller", "sftp-poller", lvl, msg)
        if s.rng.random() < 0.1:
            s.log(t + timedelta(seconds=0.5), "etl", pn, "sftp-poller", "sftp-poller", "warn",
                  "host key for sftp.partner-bank.example uses ssh-rsa (SHA-1); "
                  "deprecated algorithm")
    for j, svc, lines in [
        (fin_job, "finance-export", [
            (0, "info", "finance-export 1.7.0 starting (target warehouse.finance.gl_entries)"),
            (4, "warn", "snowflake: warehouse ETL_WH was suspended, auto-resume took 7.9s"),
            (90, "info", "extracted 18234 ledger rows since 2026-10-05T08:00:00Z"),
            (225, "info", "merged 18234 rows into warehouse.finance.gl_entries in 131.2s"),
            (229, "info", "export done, dashboard refresh triggered")]),
        (dbt_job, "dbt-run", [
            (0, "info", "Running with dbt=1.8.6"),
            (6, "info", "Found 214 models, 880 data tests, 41 sources"),
            (160, "warn", "1 of 37 WARN not_null_fct_orders_region ..... [WARN 3 in 2.11s]"),
            (170, "info", "Completed successfully"),
            (171, "info", "Done. PASS=36 WARN=1 ERROR=0 SKIP=0 TOTAL=37")]),
    ]:
        pn = j.pop("pod")
        t0 = k.parse(j["status"]["startTime"]) + timedelta(seconds=1)
        for off, lvl, msg in lines:
            s.log(t0 + timedelta(seconds=off), "etl", pn, svc, svc, lvl, msg)

    # ----- long-running services -----
    api = k.deployment(
        s, "etl", "pipeline-api",
        [k.container("pipeline-api", f"{REG}/etl/pipeline-api:0.12.4", port=8080, cpu="250m",
                     mem="512Mi", mem_limit="1Gi", readiness=k.http_probe("/ready", 8080))],
        replicas=2, nodes=nodes[:2], created=old, pods_since=s.ago(days=4), cpu=0.05,
        mem=260 * k.MiB)
    ast = api.pods[0]["status"]["containerStatuses"][0]
    ast["restartCount"] = 2
    ast["lastState"] = {"terminated": k.terminated("Error", 1, s.ago(days=4),
                                                   s.ago(days=3, hours=11))}
    api.recs[0].restarts = 2
    k.http_logs(s, api, "pipeline-api", s.ago(65), s.now, 40.0, [
        ("GET", "/v1/pipelines", 200, 50), ("GET", "/v1/pipelines/{id}/runs", 200, 40),
        ("POST", "/v1/pipelines/{id}/trigger", 202, 5)], fmt="{method} {path} {status} {ms}ms")
    k.service(s, "etl", "pipeline-api", {"app.kubernetes.io/name": "pipeline-api"}, 80, 8080,
              old, pods=api.pods)
    dash = k.deployment(
        s, "reporting", "finance-dashboard",
        [k.container("dashboard", f"{REG}/reporting/finance-dashboard:4.0.2", port=8088,
                     cpu="500m", mem="1Gi", readiness=k.http_probe("/health", 8088))],
        replicas=2, nodes=nodes[1:], created=old, pods_since=s.ago(days=2), cpu=0.1,
        mem=700 * k.MiB)
    for p in dash.pods:
        for t in s.spread(s.ago(65), s.now, 150.0):
            stale = (t - s.now.replace(hour=9, minute=4)).total_seconds() / 60
            lvl = "warn" if stale > 65 else "info"
            s.log(t, "reporting", p["metadata"]["name"], "dashboard", "finance-dashboard", lvl,
                  f"dataset gl_entries freshness {int(stale) + 4} min (threshold 65 min)")
    k.lines(s, dash, "finance-dashboard", s.ago(65), s.now, 120.0, [
        ("info", "query {hex} on gl_entries returned {n} rows in {ms}ms", 5),
        ("error", "chart 'FX exposure' failed: division by zero in metric fx_ratio", 1),
    ])
    k.service(s, "reporting", "finance-dashboard",
              {"app.kubernetes.io/name": "finance-dashboard"}, 80, 8088, old, pods=dash.pods)

    # ----- metrics -----
    s.pod_metrics()
    admitted = [k.parse(j["metadata"]["creationTimestamp"]) for j in poller_jobs]

    def used(t: datetime) -> float:
        return float(3 + len([a for a in admitted if a <= t]))

    s.gauge("kube_resourcequota", "Information about resource quota.",
            {"namespace": "etl", "resourcequota": "etl-quota", "resource": "count/jobs.batch",
             "type": "used"}, used)
    s.gauge("kube_resourcequota", "Information about resource quota.",
            {"namespace": "etl", "resourcequota": "etl-quota", "resource": "count/jobs.batch",
             "type": "hard"}, lambda t: float(QUOTA), every=2)
    s.gauge("kube_resourcequota", "Information about resource quota.",
            {"namespace": "etl", "resourcequota": "etl-quota", "resource": "pods",
             "type": "used"}, lambda t: 2.0, every=2)
    for cj, last_ok, keep in ((poller, full + timedelta(seconds=5), 200),
                              (fin, fin_at + timedelta(minutes=4), 1),
                              (dbt, dbt_at + timedelta(minutes=3), 1),
                              (nightly, n_at + timedelta(minutes=22), 1)):
        lab = {"namespace": "etl", "cronjob": cj["metadata"]["name"]}
        s.gauge("kube_cronjob_spec_successful_job_history_limit",
                "Successful job history limit tells the controller how many completed jobs "
                "should be preserved.", lab, lambda t, v=keep: float(v), every=5)
        s.gauge("kube_cronjob_status_last_successful_time",
                "LastSuccessfulTime keeps information of when was the last time the job was "
                "successfully completed.", lab,
                lambda t, lo=last_ok, c=cj: _last_ok(c, lo, t, poller_jobs, dbt_at, fin_at))
    s.gauge("kube_cronjob_status_active", "Active holds pointers to currently running jobs.",
            {"namespace": "etl", "cronjob": "sftp-poller"}, lambda t: 0.0, every=5)

    k.scenario(
        s, title="finance-export did not run, finance dashboard stale",
        report=(
            "finance dashboard is stale: finance-export didn't run at 10:00 and dbt-run hasn't "
            "produced anything since 09:15. I don't even see pods for them. We shipped "
            "finance-export 1.7.0 yesterday - could the new image be broken, or the "
            "CronJob spec from that release? Please check finance-export.\n"
        ),
        category="quota_exceeded", kind="CronJob", ns="etl", name="sftp-poller",
        evidence=["exceeded quota: etl-quota", f"count/jobs.batch={QUOTA}",
                  "successfulJobsHistoryLimit: 200"],
        fix=("sftp-poller runs every 2 minutes and keeps up to 200 finished Jobs (no "
             "ttlSecondsAfterFinished) since this morning's history-limit change; its 57 "
             "completed Jobs filled etl-quota's count/jobs.batch=60, so the API server refuses "
             "every new Job in etl (finance-export, dbt-run, and sftp-poller itself). Set "
             "successfulJobsHistoryLimit back to 3 and add ttlSecondsAfterFinished, delete the "
             "old sftp-poller Jobs; finance-export 1.7.0 ran fine at 09:00."),
    )
    s.write(root)
    k.check_evidence(s, root)


def _last_ok(cj: k.Obj, last_ok: datetime, t: datetime, poller_jobs: list[k.Obj],
             dbt_at: datetime, fin_at: datetime) -> float:
    name = cj["metadata"]["name"]
    if name == "sftp-poller":
        done = [k.parse(j["status"]["completionTime"]) for j in poller_jobs]
        prior = [d for d in done if d <= t]
        return float(int(max(prior).timestamp())) if prior else float(
            int(last_ok.timestamp()) - 7200)
    if name == "dbt-run" and t < last_ok:
        return float(int((dbt_at - timedelta(minutes=12)).timestamp()))
    if name == "finance-export" and t < last_ok:
        return float(int((fin_at - timedelta(minutes=56)).timestamp()))
    return float(int(last_ok.timestamp()))
