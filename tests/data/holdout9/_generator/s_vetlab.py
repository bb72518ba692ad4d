"""Veterinary diagnostic lab: clinics get no lab-result PDFs since the morning. The hourly
CronJob result-pdf-export (runs at :05) was edited at 07:41 with `kubectl edit` to request
3Gi of memory (was 1Gi) for larger histology reports. The namespace's ResourceQuota
vetlab-compute allows requests.memory=20Gi and 18Gi are in use, so the 08:05 Job cannot
create its pod ("exceeded quota: vetlab-compute, requested: requests.memory=3Gi"); it stays
active without pods, and with concurrencyPolicy Forbid the 09:05 run is skipped. The cause is
visible in cluster state and events. Red herrings: slide-scanner-ingest 6.0.1 rolled out at
07:55 in the same namespace (healthy, it fits the quota), a few routine pdf-render timeouts
in the successful runs' logs, an old OOM restart of sample-tracker, a LimitRange that is not
violated."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gauge, set_times
from tests.data.holdout2._generator.kit import working_set
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.data.holdout5._generator.kit5 import cronjob, job, never_restart
from tests.scenario_tools.common import MIB, truth
from tests.scenario_tools.kube import Ctr, Template, ended, http_probe, iso

from .kit9 import Incident, NodeKind, provider_nodes, quota

ID = "lab-result-pdfs-not-sent"
NOW = datetime.fromisoformat("2028-09-14T09:48:00+00:00")
NS = "vetlab"
REG = "registry.petpath-labs.eu/vetlab"
GIB = 1024 * MIB
QUOTA = "vetlab-compute"


def export_ctr(memory: str) -> Ctr:
    return Ctr("result-pdf-export", f"{REG}/result-pdf-export:2.6.4", port=None,
               requests={"cpu": "500m", "memory": memory}, limits={"memory": memory},
               env={"RESULTS_DB_URL": "postgresql://results-db.vetlab.svc:5432/results",
                    "PDF_RENDER_URL": "http://pdf-render.vetlab.svc:3000",
                    "SMTP_RELAY": "smtp-relay.vetlab.svc:587", "BATCH_SIZE": "250"},
               command=["/app/result-pdf-export"], args=["--since-last-run"])


def build() -> Incident:
    s = Incident(
        id=ID, title="Clinics not receiving lab result PDFs", now=NOW,
        report="""\
Several clinics called: no lab result PDFs have arrived since about 8 this morning. The
export normally emails them every hour. The portal still shows results as "pending
delivery". This is vetlab production.
""",
        truth=truth(
            "quota_exceeded", "CronJob", NS, "result-pdf-export",
            ["exceeded quota: vetlab-compute", "requested: requests.memory=3Gi",
             "limited: requests.memory=20Gi", "FailedCreate", "JobAlreadyActive"],
            "result-pdf-export's job template was edited at 07:41 to request 3Gi of memory; "
            "with 18Gi of the namespace's 20Gi requests.memory quota in use the 08:05 Job "
            "cannot create its pod (FailedCreate: exceeded quota vetlab-compute) and, with "
            "concurrencyPolicy Forbid, blocks the later runs. Lower the request back to ~1Gi "
            "(or raise vetlab-compute's requests.memory), delete the stuck Job and trigger a "
            "run with kubectl create job --from=cronjob/result-pdf-export."))
    set_times(s, 2.0, 60)
    c = s.cluster
    namespaces(s, {"default": 540, "kube-system": 540, NS: 512, "clinic-portal": 480})
    kind = NodeKind("m1.xlarge-8c32g", "8", "32888332Ki", "7800m", "30181740Ki",
                    "v1.30.7", "6.8.0-49-generic", "Ubuntu 24.04.1 LTS",
                    runtime="containerd://1.7.22")
    nodes = provider_nodes(s, "magnum", 4, kind, days=5.8, group="k8s-prod-vetlab")

    # ---- the quota and the neighbours that use it (18Gi of requests.memory)
    quota(s, NS, QUOTA, {"pods": "40", "requests.cpu": "12", "requests.memory": "20Gi"},
          {"pods": "11", "requests.cpu": "6400m", "requests.memory": "18Gi"},
          created=s.ago(days=420))
    lr_meta = c.meta("LimitRange", "vetlab-defaults", NS, s.ago(days=420))
    c.add({"apiVersion": "v1", "kind": "LimitRange", "metadata": lr_meta,
           "spec": {"limits": [{"type": "Container", "max": {"memory": "8Gi", "cpu": "4"},
                                "default": {"memory": "512Mi"},
                                "defaultRequest": {"cpu": "100m", "memory": "256Mi"}}]}})
    roll = NOW - timedelta(minutes=113)
    sc = Ctr("slide-scanner-ingest", f"{REG}/slide-scanner-ingest:6.0.1", port=8080,
             requests={"cpu": "1", "memory": "2Gi"}, limits={"memory": "3Gi"},
             readiness=http_probe("/healthz"))
    _, scs = steady(s, NS, "slide-scanner-ingest", [sc], nodes=nodes, replicas=4, revision=18,
                    rollout=roll, old=(17, s.ago(days=9), [Ctr(
                        "slide-scanner-ingest", f"{REG}/slide-scanner-ingest:5.9.3")]))
    quiet(s, scs, "slide-scanner-ingest", 1450)
    chatter(s, scs, "slide-scanner-ingest", "slide-scanner-ingest", [
        ("info", "slide-scanner-ingest 6.0.1 started (tiler libvips 8.15.3)", {}),
        ("info", "ingested slide HS-2028-44172 (40x, 1.9 GB) in 48s", {}),
        ("warn", "slide HS-2028-44180 has no barcode on label, matched by scanner queue "
         "position", {}),
    ], 60, start=roll + timedelta(minutes=1))
    api = Ctr("case-api", f"{REG}/case-api:11.2.0", port=8080,
              requests={"cpu": "500m", "memory": "2Gi"}, limits={"memory": "2Gi"},
              readiness=http_probe("/ready"))
    _, apis = steady(s, NS, "case-api", [api], nodes=nodes, replicas=3, revision=57,
                     rollout=s.ago(days=3, hours=20), offset=1)
    quiet(s, apis, "case-api", 1300)
    chatter(s, apis, "case-api", "case-api", [
        ("info", "GET /cases/VL-2028-118233 200 38ms", {}),
        ("info", "PATCH /cases/VL-2028-118190/results 200 71ms (3 analytes final)", {}),
        ("warn", "analyzer IDEXX-07 sent result for unknown accession 28-0913-771, parked", {}),
    ], 80)
    st = Ctr("sample-tracker", f"{REG}/sample-tracker:4.0.7", port=8080,
             requests={"cpu": "250m", "memory": "1Gi"}, limits={"memory": "1Gi"},
             readiness=http_probe("/ready"))
    _, sts = steady(s, NS, "sample-tracker", [st], nodes=nodes, replicas=2, revision=22,
                    rollout=s.ago(days=6, hours=1), offset=2,
                    restarted={0: (s.ago(days=3, hours=7), "OOMKilled", 137)})
    quiet(s, sts, "sample-tracker", 610)
    chatter(s, sts, "sample-tracker", "sample-tracker", [
        ("info", "tube 28-0914-0412 scanned at bench HEM-2", {}),
        ("info", "courier run R-11 checked in 46 samples", {}),
    ], 40)
    pr = Ctr("pdf-render", "docker.io/gotenberg/gotenberg:8.12.0", port=3000,
             requests={"cpu": "200m", "memory": "1Gi"}, limits={"memory": "1536Mi"},
             readiness=http_probe("/health"))
    _, prs = steady(s, NS, "pdf-render", [pr], nodes=nodes, replicas=2, revision=6,
                    rollout=s.ago(days=5, hours=3), offset=3, service=3000)
    quiet(s, prs, "pdf-render", 420)
    chatter(s, prs, "pdf-render", "pdf-render", [
        ("info", "request to /forms/chromium/convert/html handled in 812ms", {}),
        ("warn", "chromium: font 'Frutiger' not found, falling back to 'DejaVu Sans'", {}),
    ], 40)
    portal = Ctr("clinic-portal", f"{REG}/clinic-portal:9.1.2", port=8080,
                 requests={"cpu": "200m", "memory": "512Mi"}, limits={"memory": "768Mi"},
                 readiness=http_probe("/health"))
    _, ports = steady(s, "clinic-portal", "clinic-portal", [portal], nodes=nodes, replicas=2,
                      revision=40, rollout=s.ago(days=4, hours=9), offset=1)
    quiet(s, ports, "clinic-portal", 380)
    chatter(s, ports, "clinic-portal", "clinic-portal", [
        ("info", "GET /results?clinic=C-1021 200 54ms (12 pending delivery)", {}),
        ("info", "login clinic C-0447 user reception-2", {}),
    ], 50)

    # ---- the CronJob, its good runs and the stuck 08:05 run
    labels = {"app.kubernetes.io/name": "result-pdf-export"}
    cron = cronjob(s, NS, "result-pdf-export",
                   Template([export_ctr("3Gi")], service_account="result-pdf-export",
                            labels=dict(labels)),
                   schedule="5 * * * *", created=s.ago(days=300), last=s.ago(minutes=103))
    edit = NOW - timedelta(minutes=127)
    cron["metadata"]["generation"] = 2
    cron["metadata"]["managedFields"] = [
        {"apiVersion": "batch/v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {
            "f:jobTemplate": {"f:spec": {"f:template": {"f:spec": {"f:containers": {
                'k:{"name":"result-pdf-export"}': {"f:resources": {
                    "f:limits": {"f:memory": {}}, "f:requests": {"f:memory": {}}}}}}}}}}},
         "manager": "kubectl-edit", "operation": "Update", "time": iso(edit)}]
    first_run = NOW.replace(minute=5, second=0) - timedelta(hours=4)  # 05:05
    good = []
    for k in range(3):
        sched = first_run + timedelta(hours=k)
        work = job(s, cron, sched, Template([export_ctr("1Gi")],
                                            service_account="result-pdf-export",
                                            labels=dict(labels)))
        start = sched + timedelta(seconds=4 + k)
        took = 131 + 17 * k
        done = start + timedelta(seconds=took)
        pod = c.pod(work, None, node=nodes[k % 4], created=sched + timedelta(seconds=1),
                    phase="Succeeded", statuses={"result-pdf-export": {
                        "state": ended("Completed", 0, start, done), "ready": False,
                        "started": False, "restartCount": 0, "lastState": {}}})
        never_restart([pod])
        for cond in pod["status"]["conditions"]:
            if cond["type"] in ("Ready", "ContainersReady"):
                cond.update({"status": "False", "reason": "PodCompleted",
                             "lastTransitionTime": iso(done)})
                cond.pop("message", None)
        work.obj["status"] = {
            "conditions": [
                {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached",
                 "message": "Reached expected number of succeeded pods",
                 "lastProbeTime": iso(done + timedelta(seconds=1)),
                 "lastTransitionTime": iso(done + timedelta(seconds=1))},
                {"type": "Complete", "status": "True", "reason": "CompletionsReached",
                 "message": "Reached expected number of succeeded pods",
                 "lastProbeTime": iso(done + timedelta(seconds=1)),
                 "lastTransitionTime": iso(done + timedelta(seconds=1))}],
            "completionTime": iso(done + timedelta(seconds=1)), "ready": 0,
            "startTime": iso(sched + timedelta(seconds=1)), "succeeded": 1, "terminating": 0,
            "uncountedTerminatedPods": {}}
        good.append((pod, start, done))
        sent = 388 + 41 * k
        lines = [
            (0.4, "info", f"run started, results finalised since {iso(sched - timedelta(hours=1))}"
                          f": {sent + 3}"),
            (37.0, "warn", "pdf-render POST /forms/chromium/convert/html timed out after 30s "
                           f"(accession 28-0914-0{210 + 9 * k}), retry 1/3"),
            (took - 9.0, "info", f"rendered {sent + 3} PDFs, emailed {sent} to "
                                 f"{61 + k} clinics, 3 held (no clinic e-mail on file)"),
            (took - 0.5, "info", "run finished, exit 0"),
        ]
        for off, level, msg in lines:
            s.logs.add(start + timedelta(seconds=off), level, msg, namespace=NS,
                       pod=pod["metadata"]["name"], container="result-pdf-export",
                       service="result-pdf-export", node=pod["spec"]["nodeName"])
        s.pod_log(pod, "result-pdf-export", [
            (start + timedelta(seconds=off)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] +
            f"Z {level.upper():<5} {msg}" for off, level, msg in lines])
        working_set(s, pod, "result-pdf-export", lambda t: 610 * MIB,
                    times=[t for t in s.times if start.timestamp() + 20 <= t <= done.timestamp()])
    stuck_at = first_run + timedelta(hours=3)  # 08:05
    stuck = job(s, cron, stuck_at, Template([export_ctr("3Gi")],
                                            service_account="result-pdf-export",
                                            labels=dict(labels)))
    stuck.obj["status"] = {"ready": 0, "startTime": iso(stuck_at), "terminating": 0,
                           "uncountedTerminatedPods": {}}
    jmeta = stuck.obj["metadata"]
    cron["status"] = {"active": [{"apiVersion": "batch/v1", "kind": "Job", "name": jmeta["name"],
                                  "namespace": NS, "resourceVersion": jmeta["resourceVersion"],
                                  "uid": jmeta["uid"]}],
                      "lastScheduleTime": iso(stuck_at),
                      "lastSuccessfulTime": iso(good[-1][2] + timedelta(seconds=1))}
    refused = (f'pods "{jmeta["name"]}-{c.token(5)}" is forbidden: exceeded quota: {QUOTA}, '
               "requested: requests.memory=3Gi, used: requests.memory=18Gi, limited: "
               "requests.memory=20Gi")
    c.event(stuck.obj, "FailedCreate", f"(combined from similar events): Error creating: "
            f"{refused}", first=stuck_at + timedelta(seconds=1),
            last=NOW - timedelta(seconds=212), count=27, type_="Warning",
            component="job-controller", host="")
    skipped = stuck_at + timedelta(hours=1)
    c.event(cron, "JobAlreadyActive", "Not starting job because prior execution is running and "
            "concurrency policy is Forbid", first=skipped, type_="Normal",
            component="cronjob-controller", host="")

    # ---- kube-state-metrics
    def q(resource: str, kind_: str, value: float) -> None:
        gauge(s, "kube_resourcequota", {"namespace": NS, "resourcequota": QUOTA,
                                        "resource": resource, "type": kind_},
              lambda t: value, "Information about resource quota.")
    q("requests.memory", "hard", 20 * GIB)
    gauge(s, "kube_resourcequota", {"namespace": NS, "resourcequota": QUOTA,
                                    "resource": "requests.memory", "type": "used"},
          lambda t: 20 * GIB if roll.timestamp() <= t < roll.timestamp() + 200 else 18 * GIB,
          "Information about resource quota.")
    q("requests.cpu", "hard", 12.0)
    q("requests.cpu", "used", 6.4)
    q("pods", "hard", 40.0)
    q("pods", "used", 11.0)
    jl = {"namespace": NS, "job_name": jmeta["name"]}
    gauge(s, "kube_job_status_active", jl, lambda t: 0.0,
          "The number of actively running pods.", times=[t for t in s.times
                                                          if t >= stuck_at.timestamp()])
    gauge(s, "kube_job_status_start_time", jl, lambda t: stuck_at.timestamp(),
          "StartTime represents time when the job was acknowledged by the Job Manager.",
          times=[t for t in s.times if t >= stuck_at.timestamp()])
    gauge(s, "kube_cronjob_status_active", {"namespace": NS, "cronjob": "result-pdf-export"},
          lambda t: 1.0 if t >= stuck_at.timestamp() else 0.0,
          "Active holds pointers to currently running jobs.")
    gauge(s, "kube_cronjob_status_last_successful_time",
          {"namespace": NS, "cronjob": "result-pdf-export"},
          lambda t: float(int((good[-1][2] + timedelta(seconds=1)).timestamp()))
          if t >= good[-1][2].timestamp() + 1 else float(int(
              (good[-2][2] + timedelta(seconds=1)).timestamp())),
          "LastSuccessfulTime keeps information of when was the last time the job was "
          "successfully completed.")
    gauge(s, "kube_cronjob_next_schedule_time", {"namespace": NS, "cronjob": "result-pdf-export"},
          lambda t: float((t // 3600) * 3600 + 300 + (3600 if t % 3600 >= 300 else 0)),
          "Next time the cronjob should be scheduled. The time after lastScheduleTime, or "
          "after the cron job's creation time if it's never been scheduled. Use this to "
          "determine if the job is delayed.")
    return s
