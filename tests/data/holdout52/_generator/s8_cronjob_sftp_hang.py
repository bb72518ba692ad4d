"""Shape 8, dependency_failure: a Forbid CronJob's run hangs on an SFTP server; runs skip."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from . import _kit as k

SID = "ledger-balances-stale"
NOW = "2026-12-15T10:20:00Z"
HOST = "sftp.partnerbank.example.com"
HUNG = 185.0  # the hung run started this many minutes before now (07:15)


def job_name(st: k.Story, minutes_ago: float) -> str:
    return f"bank-statement-import-{int(st.ago(minutes_ago).timestamp() // 60)}"


def build(root: Path) -> None:
    st = k.Story(SID, NOW, seed=5208)
    nodes = k.standard_nodes(st, [f"ip-10-0-{i}-{101 + i * 3}.eu-west-1.compute.internal"
                                  for i in range(1, 5)])
    k.kube_system(st, nodes)
    for ns in ("finance", "web"):
        k.namespace(st, ns)

    jctr = k.container("importer", "registry.corp.example/finance/statement-importer:2.6.1",
                       cpu="200m", memory="256Mi", mem_limit="512Mi", port=None,
                       env={"SFTP_HOST": HOST, "SFTP_PORT": "22", "SFTP_USER": "acme-finance",
                            "LEDGER_DB": "postgres://ledger-db.finance:5432/ledger"})
    cj: k.Obj = {
        "apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": k.meta(st, "finance", "bank-statement-import", days=420,
                           labels={"app": "bank-statement-import"}),
        "spec": {"schedule": "*/15 * * * *", "timeZone": "Etc/UTC",
                 "concurrencyPolicy": "Forbid", "suspend": False,
                 "startingDeadlineSeconds": 300, "successfulJobsHistoryLimit": 3,
                 "failedJobsHistoryLimit": 1,
                 "jobTemplate": {"spec": {"backoffLimit": 2, "template": {
                     "metadata": {"labels": {"app": "bank-statement-import"}},
                     "spec": {"containers": [jctr], "restartPolicy": "Never"}}}}},
        "status": {"lastScheduleTime": st.ts(HUNG), "lastSuccessfulTime": st.ts(HUNG + 14.2)},
    }
    st.add(cj)

    def job(minutes_ago: float, done_after: float | None) -> tuple[k.Obj, k.Obj]:
        name = job_name(st, minutes_ago)
        j: k.Obj = {"apiVersion": "batch/v1", "kind": "Job",
                    "metadata": {"name": name, "namespace": "finance", "uid": st.uid(),
                                 "creationTimestamp": st.ts(minutes_ago),
                                 "labels": {"app": "bank-statement-import",
                                            "job-name": name},
                                 "ownerReferences": k.owner_ref(cj)},
                    "spec": {"parallelism": 1, "completions": 1, "backoffLimit": 2,
                             "template": cj["spec"]["jobTemplate"]["spec"]["template"]},
                    "status": {"startTime": st.ts(minutes_ago)}}
        p = k.pod(st, "finance", f"{name}-{st.suffix()}",
                  labels={"app": "bank-statement-import", "job-name": name}, containers=[jctr],
                  node_name=nodes[int(minutes_ago) % 4], owner=j, created=st.ago(minutes_ago))
        p["spec"]["restartPolicy"] = "Never"
        if done_after is None:
            j["status"].update({"active": 1, "ready": 1})
        else:
            end = st.ago(minutes_ago - done_after)
            j["status"].update({"succeeded": 1, "completionTime": k.iso(end), "conditions": [
                {"type": "Complete", "status": "True", "lastProbeTime": k.iso(end),
                 "lastTransitionTime": k.iso(end)}]})
            p["status"]["phase"] = "Succeeded"
            cs = p["status"]["containerStatuses"][0]
            cs["ready"] = False
            cs["started"] = False
            cs["state"] = {"terminated": {"exitCode": 0, "reason": "Completed",
                                          "startedAt": p["status"]["startTime"],
                                          "finishedAt": k.iso(end)}}
            for c in p["status"]["conditions"]:
                if c["type"] in ("Ready", "ContainersReady"):
                    c["status"] = "False"
                    c["reason"] = "PodCompleted"
        st.add(j, p)
        return j, p

    done = [job(HUNG + 15 * n, 0.7 + 0.05 * n) for n in (3, 2, 1)]
    hung_job, hung_pod = job(HUNG, None)
    cj["status"]["active"] = [{"apiVersion": "batch/v1", "kind": "Job", "namespace": "finance",
                               "name": hung_job["metadata"]["name"],
                               "uid": hung_job["metadata"]["uid"],
                               "resourceVersion": str(st.rng.randint(10**8, 10**9))}]
    for j, p in done:
        t = k.parse(p["metadata"]["creationTimestamp"]) + timedelta(seconds=3)
        n = st.rng.randint(9, 17)
        pn = p["metadata"]["name"]
        for dt, lvl, msg in (
                (0, "info", f"connecting to {HOST}:22 as acme-finance"),
                (1, "info", "SSH handshake complete (server: OpenSSH_8.9p1)"),
                (2, "info", f"listing /outgoing/acme: {n} new statement files"),
                (30, "info", f"downloaded {n} statements"),
                (38, "info", f"imported {n * 212} transactions into ledger, marking files done"),
                (40, "info", "done in 40s")):
            st.log(t + timedelta(seconds=dt), "finance", pn, "importer",
                   "bank-statement-import", lvl, msg)
        _ = j
    hp = hung_pod["metadata"]["name"]
    t = st.ago(HUNG) + timedelta(seconds=3)
    st.log(t, "finance", hp, "importer", "bank-statement-import", "info",
           f"connecting to {HOST}:22 as acme-finance")
    st.log(t + timedelta(seconds=1), "finance", hp, "importer", "bank-statement-import", "info",
           "TCP connected to 203.0.113.40:22, waiting for SSH server banner")
    st.keep_pod_logs(hung_pod, *(p for _, p in done))
    skipped = int(HUNG // 15)
    st.event(ns="finance", kind="CronJob", name="bank-statement-import", api_version="batch/v1",
             reason="JobAlreadyActive", component="cronjob-controller", count=skipped,
             first=st.ago(HUNG - 15), last=st.ago(5),
             message="Not starting job because prior execution is running and concurrency "
                     "policy is Forbid")
    k.pod_metrics(st, hung_pod, "importer", mem_mb=41, cpu_cores=0.0002)
    k.counter_fn(st, "container_network_receive_bytes", "Cumulative count of bytes received.",
                 {"namespace": "finance", "pod": hp, "interface": "eth0"}, lambda m: 0.0,
                 start=18422.0)
    lbl = {"namespace": "finance", "cronjob": "bank-statement-import"}
    k.gauge_fn(st, "kube_cronjob_status_active", "Active jobs of the cronjob.", lbl,
               lambda m: 1.0)
    k.gauge_fn(st, "kube_cronjob_status_last_schedule_time",
               "LastScheduleTime keeps information of when was the last time the job was "
               "successfully scheduled.", lbl, lambda m: float(int(st.ago(HUNG).timestamp())))
    k.gauge_fn(st, "kube_cronjob_status_last_successful_time",
               "LastSuccessfulTime keeps information of when was the last time the job was "
               "completed successfully.", lbl,
               lambda m: float(int(st.ago(HUNG + 14.2).timestamp())))
    k.gauge_fn(st, "kube_job_status_active", "The number of actively running pods.",
               {"namespace": "finance", "job_name": hung_job["metadata"]["name"]},
               lambda m: 1.0)
    k.gauge_fn(st, "ledger_statements_last_import_timestamp_seconds",
               "When the last bank statement was imported into the ledger.",
               {"namespace": "finance", "service": "ledger-api"},
               lambda m: float(int(st.ago(HUNG + 14.2).timestamp())))

    # --- downstream: reconcile-worker and ledger-api, blamed ------------------------------
    rw = k.app(st, "finance", "reconcile-worker",
               "registry.corp.example/finance/reconcile-worker:3.2.0", nodes=nodes, replicas=2,
               access_logs=False, http=False, with_service=False, rollout_hours=14, revision=33,
               restarts={1: {"count": 1, "started": st.ago(days=2, hours=3),
                             "last": {"terminated": {"exitCode": 1, "reason": "Error",
                                                     "startedAt": st.ts(days=2, hours=5),
                                                     "finishedAt": st.ts(days=2, hours=3)}}}})
    last_import = st.ago(HUNG + 14.2).strftime("%H:%M")
    for p in rw.pods:
        k.noise(st, p, "reconcile-worker", "reconcile-worker", "warn", [
            f"no new bank statements since {last_import} UTC, nothing to reconcile",
        ], every=300)
        k.noise(st, p, "reconcile-worker", "reconcile-worker", "info", [
            "reconcile cycle: 0 statements, 0 matched, 0 unmatched (took 12ms)",
        ], every=120)
    st.keep_pod_logs(*rw.pods)
    la = k.app(st, "finance", "ledger-api", "registry.corp.example/finance/ledger-api:5.9.4",
               nodes=nodes, replicas=3, rps=14, log_every=60, lat_ms=35,
               paths=("/v1/balances", "/v1/accounts/transactions"), revision=71)
    for p in la.pods:
        k.noise(st, p, "ledger-api", "ledger-api", "warn", [
            f"balances served with data as of {last_import} UTC (staleness > 2h)",
        ], every=240, start_min=60)
    db = k.app(st, "finance", "ledger-db", "docker.io/library/postgres:16.4", nodes=nodes[:1],
               replicas=1, port=5432, access_logs=False, http=False, mem_mb=2100,
               cpu="1", memory="4Gi", mem_limit="8Gi")
    k.noise(st, db.pods[0], "ledger-db", "ledger-db", "warn", [
        "LOG:  checkpoints are occurring too frequently (24 seconds apart)",
        "HINT:  Consider increasing the configuration parameter \"max_wal_size\".",
    ], every=400)
    k.app(st, "web", "finance-dashboard", "registry.corp.example/web/finance-dashboard:1.12.0",
          nodes=nodes, replicas=2, rps=3, log_every=120, lat_ms=210, paths=("/", "/ledger"))
    st.write(root, title="ledger balances stale since early morning", report=(
        "finance dashboard shows balances that are ~3h old, reconciliation hasn't moved since "
        "this morning. reconcile-worker keeps saying there's nothing to reconcile — we deployed "
        "reconcile-worker 3.2.0 last night, so maybe it broke reading statements? ledger-db also "
        "has warnings. please check reconcile-worker\n"),
        truth={"category": "dependency_failure",
               "culprit": {"kind": "CronJob", "namespace": "finance",
                           "name": "bank-statement-import"},
               "evidence": ["Not starting job because prior execution is running",
                            "waiting for SSH server banner", "concurrencyPolicy: Forbid"],
               "fix": f"The 07:15 import run hangs on {HOST}, which accepts TCP but never sends "
                      "its SSH banner; with concurrencyPolicy Forbid every later run is skipped. "
                      "Delete the hung Job, give the importer connect/banner timeouts and the "
                      "CronJob an activeDeadlineSeconds, and raise the SFTP outage with the bank. "
                      "reconcile-worker is only starved of input."})
