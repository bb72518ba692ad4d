"""An hourly CronJob whose Jobs never get a pod: a LimitRange the platform team applied
yesterday caps a container's memory at 1Gi and the export asks for 2Gi, so the job
controller's pod creations are refused at admission. Each Job then dies of its deadline,
which reads like a slow or hung export; the CronJob itself looks fine.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from tests.data.holdout29._generator.common import (
    Obj,
    Scenario,
    cond,
    container,
    event,
    healthy,
    iso,
    meta,
    namespace,
    node,
    pod,
    pod_ip,
    resources,
    suffix,
    template,
    terminated,
)

NOW = "2026-03-12T07:25:00Z"
NS = "billing"
CJ = "invoice-export"
LIMIT_MSG = "maximum memory usage per Container is 1Gi, but limit is 2Gi"


def job_name(at: datetime) -> str:
    return f"{CJ}-{int(at.timestamp()) // 60}"


def job_template() -> Obj:
    c = container("exporter", "registry.internal/billing/invoice-export:4.2.0",
                  resources("500m", "1536Mi", "1", "2Gi"), None,
                  {"EXPORT_BUCKET": "s3://nw-finance-exports/invoices", "EXPORT_FORMAT": "csv",
                   "JAVA_TOOL_OPTIONS": "-XX:MaxRAMPercentage=75"},
                  args=["--since=last-run", "--upload"])
    return template({"app": CJ, "team": "billing"}, [c], restartPolicy="Never",
                    serviceAccountName="invoice-export")


def job(sc: Scenario, at: datetime, outcome: str) -> None:
    name = job_name(at)
    tmpl = job_template()
    tmpl["metadata"]["labels"] = {**tmpl["metadata"]["labels"], "job-name": name}
    status: Obj = {"startTime": iso(at + timedelta(seconds=1))}
    if outcome == "done":
        done = at + timedelta(minutes=4, seconds=12)
        status |= {"succeeded": 1, "completionTime": iso(done), "conditions": [
            cond("Complete", "True", None, None, done, probe=True)]}
    elif outcome == "deadline":
        end = at + timedelta(seconds=3300)
        status |= {"failed": 0, "conditions": [
            cond("Failed", "True", "DeadlineExceeded",
                 "Job was active longer than specified deadline", end, probe=True)]}
    else:
        status |= {"active": 0, "ready": 0}
    sc.add({"apiVersion": "batch/v1", "kind": "Job",
            "metadata": meta("Job", name, NS, at, {"app": CJ, "job-name": name},
                             owner=("CronJob", CJ), api="batch/v1"),
            "spec": {"parallelism": 1, "completions": 1, "backoffLimit": 2,
                     "activeDeadlineSeconds": 3300, "template": tmpl},
            "status": status})
    if outcome == "done":
        pname = f"{name}-{suffix(name)}"
        sc.add(pod(NS, pname, at, tmpl, "ip-10-0-2-17.eu-west-1.compute.internal",
                   [{"name": "exporter", "ready": False, "restartCount": 0, "started": False,
                     "state": {"terminated": terminated("Completed", 0, at + timedelta(
                         seconds=6), at + timedelta(minutes=4, seconds=10))}}],
                   ("Job", name), phase="Succeeded", ip="10.0.2.181", api="batch/v1"))
        day = (at - timedelta(hours=1)).strftime("%Y-%m-%dT%H:00:00Z")
        sc.pod_log(NS, pname, "exporter", [
            f"{iso(at + timedelta(seconds=7))} INFO  export starting, since={day}",
            f"{iso(at + timedelta(seconds=9))} INFO  connected to billing-db (replica) in 212ms",
            f"{iso(at + timedelta(minutes=3, seconds=40))} INFO  rendered 1843 invoices "
            "(peak heap 1.31GiB)",
            f"{iso(at + timedelta(minutes=4, seconds=8))} INFO  uploaded invoices-"
            f"{at.strftime('%Y%m%d%H')}.csv.gz to s3://nw-finance-exports/invoices",
            f"{iso(at + timedelta(minutes=4, seconds=9))} INFO  export done"])


def build() -> Path:
    sc = Scenario("invoice-export-runs-nothing", NOW)
    long_ago = sc.ago(days=190)
    nodes = [f"ip-10-0-{a}.eu-west-1.compute.internal" for a in ("2-17", "3-88", "5-140")]
    for i, name in enumerate(nodes):
        sc.add(node(name, sc.ago(days=23 + i), "general", "4", "16231240Ki", sc.ago(seconds=14),
                    zone=("eu-west-1a", "eu-west-1b", "eu-west-1c")[i]))
    for ns in (NS, "finance-reporting", "ingress-nginx"):
        sc.add(namespace(ns, long_ago))

    limitrange_at = datetime.fromisoformat("2026-03-11T16:05:41+00:00")
    sc.add({"apiVersion": "v1", "kind": "LimitRange",
            "metadata": meta("LimitRange", "container-bounds", NS, limitrange_at,
                             {"app.kubernetes.io/managed-by": "platform-guardrails",
                              "guardrails.northwind.io/policy": "tenant-defaults-v3"}),
            "spec": {"limits": [{"type": "Container",
                                 "default": {"cpu": "500m", "memory": "512Mi"},
                                 "defaultRequest": {"cpu": "100m", "memory": "256Mi"},
                                 "max": {"cpu": "2", "memory": "1Gi"},
                                 "min": {"cpu": "10m", "memory": "16Mi"}}]}})
    sc.add({"apiVersion": "v1", "kind": "ResourceQuota",
            "metadata": meta("ResourceQuota", "billing-quota", NS, long_ago),
            "spec": {"hard": {"requests.cpu": "16", "requests.memory": "48Gi",
                              "limits.memory": "64Gi", "pods": "60"}},
            "status": {"hard": {"requests.cpu": "16", "requests.memory": "48Gi",
                                "limits.memory": "64Gi", "pods": "60"},
                       "used": {"requests.cpu": "2350m", "requests.memory": "5376Mi",
                                "limits.memory": "9472Mi", "pods": "9"}}})

    hour = sc.now.replace(minute=0, second=0)
    done_runs = [datetime.fromisoformat(f"2026-03-11T{h}:00:00+00:00") for h in (14, 15, 16)]
    failed_runs = [hour - timedelta(hours=h) for h in (3, 2, 1)]
    current = hour
    sc.add({"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": meta("CronJob", CJ, NS, sc.ago(days=96), {"app": CJ, "team": "billing"},
                             {"owner": "billing-platform@northwind.io"}, api="batch/v1"),
            "spec": {"schedule": "0 * * * *", "timeZone": "Etc/UTC",
                     "concurrencyPolicy": "Forbid", "suspend": False,
                     "startingDeadlineSeconds": 600, "successfulJobsHistoryLimit": 3,
                     "failedJobsHistoryLimit": 3,
                     "jobTemplate": {"spec": {"backoffLimit": 2, "activeDeadlineSeconds": 3300,
                                              "template": job_template()}}},
            "status": {"active": [{"kind": "Job", "namespace": NS, "name": job_name(current),
                                   "apiVersion": "batch/v1",
                                   "uid": f"job-{job_name(current)}"}],
                       "lastScheduleTime": iso(current),
                       "lastSuccessfulTime": iso(done_runs[-1] + timedelta(minutes=4,
                                                                           seconds=12))}})
    for at in done_runs:
        job(sc, at, "done")
    for at in failed_runs:
        job(sc, at, "deadline")
    job(sc, current, "active")

    # The rest of the namespace is healthy; their limits sit under the new max.
    pods = healthy(sc, NS, "billing-api", "registry.internal/billing/billing-api:7.4.2", 3,
                   nodes, resources("250m", "512Mi", "1", "768Mi"), sc.ago(days=180),
                   revision=41, rollout_at=sc.ago(days=3, hours=5))
    hooks = healthy(sc, NS, "payment-webhooks",
                    "registry.internal/billing/payment-webhooks:1.19.0", 2, nodes,
                    resources("100m", "256Mi", "500m", "384Mi"), sc.ago(days=150),
                    revision=12, rollout_at=sc.ago(days=8))
    healthy(sc, "finance-reporting", "report-portal",
            "registry.internal/finance/report-portal:2.3.7", 2, nodes[1:],
            resources("100m", "256Mi", "500m", "512Mi"), sc.ago(days=120), revision=9,
            rollout_at=sc.ago(days=12))
    # A small CronJob of the same namespace keeps running: its 512Mi fits.
    recon_at = hour + timedelta(minutes=10)
    rtmpl = template({"app": "ledger-reconcile"}, [container(
        "reconcile", "registry.internal/billing/ledger-reconcile:1.4.1",
        resources("100m", "256Mi", "500m", "512Mi"), None)], restartPolicy="OnFailure")
    sc.add({"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": meta("CronJob", "ledger-reconcile", NS, sc.ago(days=60),
                             {"app": "ledger-reconcile"}, api="batch/v1"),
            "spec": {"schedule": "10 * * * *", "concurrencyPolicy": "Forbid",
                     "successfulJobsHistoryLimit": 1, "failedJobsHistoryLimit": 1,
                     "jobTemplate": {"spec": {"template": rtmpl}}},
            "status": {"lastScheduleTime": iso(recon_at),
                       "lastSuccessfulTime": iso(recon_at + timedelta(seconds=48))}})
    rjob = f"ledger-reconcile-{int(recon_at.timestamp()) // 60}"
    sc.add({"apiVersion": "batch/v1", "kind": "Job",
            "metadata": meta("Job", rjob, NS, recon_at, {"app": "ledger-reconcile"},
                             owner=("CronJob", "ledger-reconcile"), api="batch/v1"),
            "spec": {"backoffLimit": 6, "template": rtmpl},
            "status": {"succeeded": 1, "startTime": iso(recon_at),
                       "completionTime": iso(recon_at + timedelta(seconds=48)),
                       "conditions": [cond("Complete", "True", None, None,
                                           recon_at + timedelta(seconds=48), probe=True)]}})
    rpod = f"{rjob}-{suffix(rjob)}"
    sc.add(pod(NS, rpod, recon_at, rtmpl, nodes[2], [{
        "name": "reconcile", "ready": False, "restartCount": 0, "started": False,
        "state": {"terminated": terminated("Completed", 0, recon_at + timedelta(seconds=4),
                                           recon_at + timedelta(seconds=47))}}],
               ("Job", rjob), phase="Succeeded", ip="10.0.5.61", api="batch/v1"))
    sc.pod_log(NS, rpod, "reconcile", [
        f"{iso(recon_at + timedelta(seconds=5))} reconcile window 06:00-07:00: 412 ledger rows",
        f"{iso(recon_at + timedelta(seconds=46))} reconcile ok: 0 mismatches"])

    # Events of the last hour.
    cur = job_name(current)
    refused = f'Error creating: pods "{cur}-{suffix(cur + "x")}" is forbidden: {LIMIT_MSG}'
    sc.add(event(NS, "CronJob", CJ, "SawCompletedJob",
                 f"Saw completed job: {job_name(failed_runs[-1])}, status: Failed",
                 failed_runs[-1] + timedelta(seconds=3301), component="cronjob-controller",
                 api="batch/v1"))
    sc.add(event(NS, "CronJob", CJ, "SuccessfulDelete",
                 f"Deleted job {job_name(failed_runs[0] - timedelta(hours=1))}",
                 failed_runs[-1] + timedelta(seconds=3302), component="cronjob-controller",
                 api="batch/v1"))
    sc.add(event(NS, "Job", job_name(failed_runs[-1]), "DeadlineExceeded",
                 "Job was active longer than specified deadline",
                 failed_runs[-1] + timedelta(seconds=3300), type_="Warning",
                 component="job-controller", api="batch/v1"))
    sc.add(event(NS, "CronJob", CJ, "SuccessfulCreate", f"Created job {cur}", current,
                 component="cronjob-controller", api="batch/v1"))
    sc.add(event(NS, "Job", cur, "FailedCreate", refused, current + timedelta(seconds=1),
                 sc.ago(minutes=2, seconds=40), count=17, type_="Warning",
                 component="job-controller", api="batch/v1"))
    sc.add(event(NS, "Job", rjob, "SuccessfulCreate", f"Created pod: {rpod}", recon_at,
                 component="job-controller", api="batch/v1"))
    sc.add(event(NS, "Job", rjob, "Completed", "Job completed", recon_at + timedelta(
        seconds=48), component="job-controller", api="batch/v1"))
    sc.add(event(NS, "CronJob", "ledger-reconcile", "SawCompletedJob",
                 f"Saw completed job: {rjob}, status: Complete",
                 recon_at + timedelta(seconds=49), component="cronjob-controller",
                 api="batch/v1"))
    bapi = "billing-api"
    sc.add(event(NS, "Pod", pods[0], "Unhealthy",
                 f"Readiness probe failed: Get \"http://{pod_ip(pods[0])}:8080/healthz\": "
                 "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
                 sc.ago(minutes=41), type_="Warning", host=nodes[0],
                 field=f"spec.containers{{{bapi}}}"))

    # billing-api is where the finance team sees it: the latest export is missing.
    start = sc.ago(hours=18)
    for i in range(0, 18 * 60, 7):
        at = start + timedelta(minutes=i)
        p = pods[i % len(pods)]
        sc.log(at, bapi, NS, p, "info", f"GET /v1/invoices?page={i % 9 + 1} 200 {38 + i % 23}ms",
               **{"http.response.status_code": 200})
        if at > datetime.fromisoformat("2026-03-11T17:10:00+00:00") and i % 28 == 0:
            sc.log(at + timedelta(seconds=3), bapi, NS, p, "warn",
                   "export freshness: latest invoice export is invoices-2026031116.csv.gz, "
                   f"{int((at - done_runs[-1]).total_seconds() // 3600)}h old (SLO 2h)")
        if i % 95 == 0:
            sc.log(at + timedelta(seconds=11), bapi, NS, p, "error",
                   "GET /v1/exports/latest 404 no export newer than 2026-03-11T16:00:00Z",
                   **{"http.response.status_code": 404})
        if i % 130 == 0:
            sc.log(at + timedelta(seconds=17), "payment-webhooks", NS, hooks[i % 2],
                   "warn", "stripe webhook retry 2/5 for evt_3Ox8 (upstream 502)")
    for at in done_runs:
        pname = f"{job_name(at)}-{suffix(job_name(at))}"
        sc.log(at + timedelta(minutes=4, seconds=9), CJ, NS, pname, "info", "export done",
               container="exporter")

    return sc.write({
        "title": "Overnight invoice exports missing",
        "report": "finance says none of the invoice exports landed in the bucket since "
                  "yesterday afternoon. the invoice-export cronjob is still being scheduled "
                  "every hour but the jobs just sit there and then fail after ~55 min. did "
                  "the S3 creds rotate again? nothing changed in the job itself\n",
        "truth": {"category": "quota_exceeded",
                  "culprit": {"kind": "CronJob", "namespace": NS, "name": CJ},
                  "evidence": ["FailedCreate", LIMIT_MSG, "container-bounds"],
                  "fix": "Lower invoice-export's memory limit to 1Gi or less (and its heap "
                         "with it), or have the platform team raise the billing LimitRange "
                         "max or exempt the export; the LimitRange container-bounds applied "
                         "2026-03-11 16:05 refuses its 2Gi pods at admission."},
    })
