"""Payouts: the hourly payout file for the bank stops going out. The Harbor robot account
that pulls the payouts images was rotated at 09:37; the rotator updated the pull secret of
payouts-staging and ci but skipped payouts. The CronJob's image is pulled on every run
(imagePullPolicy Always) with the stale secret: 401 from Harbor's token service, the 10:00
run hit its active deadline in ImagePullBackOff, the 11:00 run is stuck the same way."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import alive, gauge, logs_for, set_times
from tests.scenario_tools.common import truth
from tests.scenario_tools.failures import image_pull_events
from tests.scenario_tools.kube import (
    Ctr,
    Obj,
    Template,
    Workload,
    ended,
    http_probe,
    iso,
    running,
    waiting,
)

from .kit import (
    Incident,
    NodeKind,
    after,
    deploy,
    lines,
    node,
    plain,
    requests,
    restarts_series,
    set_condition,
)

ID = "payout-file-missing"
NOW = datetime.fromisoformat("2027-02-16T11:24:00+00:00")
NS = "payouts"
HARBOR = "harbor.paywell.eu"
IMAGE = f"{HARBOR}/payouts/payout-file-builder:1.9-stable"
PULL_ERROR = (f'failed to pull and unpack image "{IMAGE}": failed to resolve reference '
              f'"{IMAGE}": failed to authorize: failed to fetch oauth token: unexpected status '
              f"from GET request to https://{HARBOR}/service/token?scope=repository%3Apayouts%2F"
              "payout-file-builder%3Apull&service=harbor-registry: 401 Unauthorized")


def build() -> Incident:
    s = Incident(
        id=ID,
        title="Hourly payout file to the bank not delivered",
        now=NOW,
        report="""\
Treasury says the hourly merchant payout file didn't reach the bank at 10:00 and 11:00 UTC
(the 09:00 one arrived). Merchants are starting to ask where their money is. We didn't
deploy anything in payouts today. Please find out why the payout runs aren't happening.
""",
        truth=truth(
            "image_pull", "CronJob", NS, "merchant-payout-file",
            ["401 Unauthorized", "ImagePullBackOff", "harbor-payouts-pull",
             "failed to fetch oauth token", "DeadlineExceeded"],
            "The pull secret harbor-payouts-pull in payouts still holds the Harbor robot token "
            "that was rotated at 09:37 (the rotator skipped the namespace): update the secret "
            "with the new token of robot$payouts+puller (and label the namespace for the "
            "rotator), then start a run by hand (kubectl create job --from=cronjob/"
            "merchant-payout-file) to send the missing payouts."))
    set_times(s, 3.0, 60)
    c = s.cluster
    for ns, days in (("default", 455), ("kube-system", 455), (NS, 420), ("kyc", 300),
                     ("platform-ops", 440)):
        c.namespace(ns, s.ago(days=days))
    flavor = NodeKind("b3-32", "8", "32863400Ki", "7800m", "31712424Ki", "v1.31.4",
                      "6.8.0-49-generic", "Ubuntu 24.04.1 LTS", runtime="containerd://1.7.23",
                      storage="194314260Ki", alloc_storage="179080254236")
    workers: list[Obj] = []
    for i in range(4):
        name = f"paywell-prod-ams-md-0-6d8f9b7c5d-{c.token(5)}"
        uid = c.uid("server", name)
        workers.append(node(
            s, name, ip=f"10.40.16.{31 + i * 7}", kind=flavor,
            created=s.ago(days=5.8 - i * 0.4), region="ams", zone=f"ams-az{i % 2 + 1}",
            labels={"cluster.x-k8s.io/cluster-name": "paywell-prod-ams",
                    "cluster.x-k8s.io/deployment-name": "paywell-prod-ams-md-0",
                    "node-role.kubernetes.io/worker": ""},
            provider_id=f"openstack:///{uid}", pod_cidr=f"192.168.{64 + i}.0/24"))

    # ---- the CronJob and its Jobs
    labels = {"app.kubernetes.io/name": "merchant-payout-file", "app.kubernetes.io/part-of":
              "payouts"}
    builder = Ctr("payout-file-builder", IMAGE, port=None,
                  requests={"cpu": "500m", "memory": "768Mi"}, limits={"memory": "1536Mi"},
                  args=["build-and-send", "--window=PT1H", "--format=pain.001.001.09",
                        "--sftp=sftp.corpbank-gateway.example:2222", "--dry-run=false"],
                  env={"PAYOUTS_DB_HOST": "payouts-db.int.paywell.eu", "TZ": "UTC"},
                  env_from=[{"configMapRef": {"name": "payout-file"}}])
    tpl = Template([builder], service_account="payout-file-builder", labels=dict(labels),
                   image_pull_secrets=["harbor-payouts-pull"])

    def pod_spec() -> Obj:
        spec = tpl.spec()
        spec["containers"][0]["imagePullPolicy"] = "Always"
        spec["restartPolicy"] = "Never"
        return spec
    cron = c.add({"apiVersion": "batch/v1", "kind": "CronJob",
                  "metadata": c.meta("CronJob", "merchant-payout-file", NS, s.ago(days=402),
                                     labels, generation=4),
                  "spec": {"schedule": "0 * * * *", "timeZone": "Etc/UTC",
                           "concurrencyPolicy": "Forbid", "startingDeadlineSeconds": 600,
                           "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 3,
                           "suspend": False,
                           "jobTemplate": {"metadata": {"labels": dict(labels)}, "spec": {
                               "activeDeadlineSeconds": 2400, "backoffLimit": 2,
                               "template": {"metadata": {"labels": dict(labels)},
                                            "spec": pod_spec()}}}},
                  "status": {}})
    c.add({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": c.meta("ConfigMap", "payout-file", NS, s.ago(days=402), labels),
           "data": {"DEBTOR_IBAN": "NL91CBGW0417164300", "DEBTOR_BIC": "CBGWNL2A",
                    "SFTP_DIR": "/in/pain001", "MAX_TRANSFERS_PER_FILE": "5000"}})
    hour = NOW.replace(minute=0, second=0)
    slots = [hour - timedelta(hours=k) for k in (3, 2, 1, 0)]  # 08:00 .. 11:00
    pods_kept: list[tuple[Obj, datetime, datetime]] = []
    jobs: list[tuple[str, datetime, datetime | None, str]] = []  # name, start, end, result
    node_of = {slot: workers[(int(slot.timestamp()) // 3600) % len(workers)] for slot in slots}
    sched_lag = {slot: timedelta(milliseconds=s.rng.randrange(60, 700)) for slot in slots}
    stuck: Obj | None = None
    for slot in slots:
        made: Obj | None = None
        jname = f"merchant-payout-file-{int(slot.timestamp()) // 60}"
        created = slot + sched_lag[slot]
        juid = c.uid("Job", NS, jname)
        jl = {"batch.kubernetes.io/controller-uid": juid, "batch.kubernetes.io/job-name": jname,
              "controller-uid": juid, "job-name": jname}
        spec = {"activeDeadlineSeconds": 2400, "backoffLimit": 2, "completionMode":
                "NonIndexed", "completions": 1, "manualSelector": False, "parallelism": 1,
                "podReplacementPolicy": "TerminatingOrFailed",
                "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": juid}},
                "suspend": False,
                "template": {"metadata": {"labels": {**labels, **jl}}, "spec": pod_spec()}}
        job = c.add({"apiVersion": "batch/v1", "kind": "Job",
                     "metadata": c.meta("Job", jname, NS, created, {**labels, **jl},
                                        annotations={
                                            "batch.kubernetes.io/cronjob-scheduled-timestamp":
                                            iso(slot), "batch.kubernetes.io/job-tracking": ""},
                                        ownerReferences=[c.owner(cron)], generation=1),
                     "spec": spec, "status": {}})
        work = Workload(job, Template([builder], service_account="payout-file-builder",
                                      labels={**labels, **jl},
                                      image_pull_secrets=["harbor-payouts-pull"]), 1)
        born = created + timedelta(milliseconds=s.rng.randrange(30, 90))
        pname = f"{jname}-{c.token(5)}"
        where = node_of[slot]
        if slot <= hour - timedelta(hours=2):  # 08:00 and 09:00: done in a few minutes
            started = born + timedelta(seconds=3.6 + s.rng.uniform(0, 1.5))
            finished = started + timedelta(seconds=s.rng.uniform(190, 260))
            state = {"state": ended("Completed", 0, started, finished), "ready": False,
                     "started": False, "restartCount": 0, "lastState": {}}
            pod = c.pod(work, None, node=where, created=born, name=pname, phase="Succeeded",
                        statuses={"payout-file-builder": state})
            for cond in ("Ready", "ContainersReady"):
                set_condition(pod, cond, status="False", reason="PodCompleted", message=None,
                              lastTransitionTime=iso(finished + timedelta(seconds=1)))
            set_condition(pod, "PodReadyToStartContainers", status="False",
                          lastTransitionTime=iso(finished + timedelta(seconds=2)))
            end = finished + timedelta(seconds=1)
            job["status"] = {"completionTime": iso(end), "conditions": [
                {"type": "SuccessCriteriaMet", "status": "True", "lastProbeTime": iso(end),
                 "lastTransitionTime": iso(end)},
                {"type": "Complete", "status": "True", "lastProbeTime": iso(end),
                 "lastTransitionTime": iso(end)}], "ready": 0, "startTime": iso(created),
                "succeeded": 1, "terminating": 0, "uncountedTerminatedPods": {}}
            pods_kept.append((pod, started, finished))
            made = pod
            jobs.append((jname, created, end, "Complete"))
        elif slot == hour - timedelta(hours=1):  # 10:00: stuck pulling until the deadline
            end = created + timedelta(seconds=2400)
            job["status"] = {"conditions": [
                {"type": "FailureTarget", "status": "True", "reason": "DeadlineExceeded",
                 "message": "Job was active longer than specified deadline",
                 "lastProbeTime": iso(end), "lastTransitionTime": iso(end)},
                {"type": "Failed", "status": "True", "reason": "DeadlineExceeded",
                 "message": "Job was active longer than specified deadline",
                 "lastProbeTime": iso(end), "lastTransitionTime": iso(end)}],
                "failed": 1, "ready": 0, "startTime": iso(created), "terminating": 0,
                "uncountedTerminatedPods": {}}
            c.event(job, "SuccessfulDelete", f"Deleted pod: {pname}", first=end,
                    component="job-controller")
            c.event(job, "DeadlineExceeded", "Job was active longer than specified deadline",
                    first=end, type_="Warning", component="job-controller")
            c.event(cron, "SawCompletedJob", f"Saw completed job: {jname}, status: Failed",
                    first=end + timedelta(seconds=1), component="cronjob-controller")
            jobs.append((jname, created, end, "Failed"))
        else:  # 11:00: the pod waits for its image
            pod = c.pod(work, None, node=where, created=born, name=pname,
                        statuses={"payout-file-builder": waiting(
                            "ImagePullBackOff", f'Back-off pulling image "{IMAGE}"')})
            c.event(job, "SuccessfulCreate", f"Created pod: {pname}", first=born,
                    component="job-controller")
            c.event(cron, "SuccessfulCreate", f"Created job {jname}", first=created,
                    component="cronjob-controller")
            c.event(pod, "Scheduled", f"Successfully assigned {NS}/{pname} to "
                    f"{where['metadata']['name']}", first=born, component="default-scheduler",
                    host="")
            image_pull_events(s, pod, "payout-file-builder", IMAGE, PULL_ERROR,
                              since=born + timedelta(seconds=1))
            job["status"] = {"active": 1, "ready": 0, "startTime": iso(created),
                             "terminating": 0, "uncountedTerminatedPods": {}}
            jobs.append((jname, created, None, "Active"))
            made = stuck = pod
        if made is not None:
            made["metadata"]["generateName"] = f"{jname}-"
            made["metadata"]["annotations"] = {"batch.kubernetes.io/job-tracking": ""}
            made["spec"]["containers"][0]["imagePullPolicy"] = "Always"
            made["spec"]["restartPolicy"] = "Never"
    assert stuck is not None
    last_ok = [j for j in jobs if j[3] == "Complete"][-1]
    cron["status"] = {"active": [{"apiVersion": "batch/v1", "kind": "Job", "name": jobs[-1][0],
                                  "namespace": NS, "uid": c.uid("Job", NS, jobs[-1][0])}],
                      "lastScheduleTime": iso(slots[-1]),
                      "lastSuccessfulTime": iso(last_ok[2] or NOW)}
    for pod, started, finished in pods_kept:
        batch = started.strftime("%Y-%m-%dT%H")
        n = s.rng.randrange(1100, 1500)
        total = s.rng.uniform(1.6e6, 2.4e6)
        text = lines(started, [
            (0.2, f"INFO payout-file-builder 1.9.4 window=PT1H batch={batch}"),
            (1.1, "INFO connected to payouts-db.int.paywell.eu:5432 (payouts)"),
            (4.8, f"INFO selected {n} settled transfers for payout batch {batch}"),
            (31.0, f"INFO wrote pain.001.001.09 file PW-{batch}.xml ({n} transactions, EUR "
             f"{total:,.2f})"),
            (32.4, "INFO signing file with key id payouts-2026-q4"),
            ((finished - started).total_seconds() - 9.0, "INFO uploaded to sftp.corpbank-"
             f"gateway.example:2222/in/pain001/PW-{batch}.xml"),
            ((finished - started).total_seconds() - 0.4, f"INFO batch {batch} marked as sent"),
        ])
        s.pod_log(pod, "payout-file-builder", text)
        for line in text:
            stamp, level, msg = line.split(" ", 2)
            s.logs.add(datetime.fromisoformat(stamp.replace("Z", "+00:00")), level.lower(), msg,
                       namespace=NS, pod=pod["metadata"]["name"],
                       container="payout-file-builder", service="merchant-payout-file",
                       node=pod["spec"]["nodeName"])

    # ---- kube-state-metrics of the CronJob, its Jobs and the waiting pod
    for jname, created, finish, result in jobs:
        ok = result == "Complete"
        done = finish.timestamp() if finish is not None else float("inf")
        for metric, value, help_ in (
                ("kube_job_status_active", after(done, 1.0, 0.0),
                 "The number of actively running pods."),
                ("kube_job_status_failed", after(done, 0.0, 0.0 if ok or finish is None else 1.0),
                 "The number of pods which reached Phase Failed and the reason for failure."),
                ("kube_job_status_succeeded", after(done, 0.0, 1.0 if ok else 0.0),
                 "The number of pods which reached Phase Succeeded.")):
            gauge(s, metric, {"namespace": NS, "job_name": jname}, value, help_,
                  times=[t for t in s.times if t >= created.timestamp() + 20])
    ends = sorted(e.timestamp() for _, _, e, r in jobs if r == "Complete" and e)
    before = (slots[0] - timedelta(hours=1) + timedelta(minutes=4, seconds=12)).timestamp()
    gauge(s, "kube_cronjob_status_last_successful_time", {"namespace": NS, "cronjob":
                                                         "merchant-payout-file"},
          lambda t: max([e for e in ends if e <= t], default=before),
          "LastSuccessfulTime keeps information of when was the last time the job was "
          "completed successfully.")
    gauge(s, "kube_cronjob_status_last_schedule_time", {"namespace": NS, "cronjob":
                                                       "merchant-payout-file"},
          lambda t: max(x.timestamp() for x in [slots[0] - timedelta(hours=1), *slots]
                        if x.timestamp() <= t),
          "LastScheduleTime keeps information of when was the last time the job was "
          "successfully scheduled.")
    gauge(s, "kube_pod_container_status_waiting_reason",
          {"namespace": NS, "pod": stuck["metadata"]["name"],
           "container": "payout-file-builder", "reason": "ImagePullBackOff"},
          lambda t: 1.0, "Describes the reason the container is currently in waiting state.",
          times=alive(s, stuck))

    # ---- payout-api: same registry, its image already on the nodes; it sees the backlog
    api = Ctr("payout-api", f"{HARBOR}/payouts/payout-api:3.22.1", port=8080,
              requests={"cpu": "250m", "memory": "512Mi"}, limits={"memory": "1Gi"},
              env={"SPRING_PROFILES_ACTIVE": "prod"},
              readiness=http_probe("/actuator/health/readiness", delay=20, timeout=2),
              liveness=http_probe("/actuator/health/liveness", delay=60, period=20))
    _, apis = deploy(s, NS, "payout-api", [api], replicas=3, nodes=workers, revision=73,
                     rollout=s.ago(days=2, hours=5), pull_secrets=["harbor-payouts-pull"])
    last_sent = ends[-1]
    for pod in apis:
        plain(s, pod, "payout-api", 611, 0.14)
        requests(s, pod, "payout-api", rps=lambda t: 7.5, codes={
            "200": lambda t: 0.962, "201": lambda t: 0.031, "404": lambda t: 0.005,
            "409": lambda t: 0.002})
    gauge(s, "payouts_settled_unsent_transfers", {"namespace": NS, "service": "payout-api"},
          lambda t: 40 + 0.34 * ((t - last_sent) if t > last_sent else (t % 3600)),
          "Settled transfers not yet included in a payout file sent to the bank.")
    start = NOW - timedelta(hours=3)
    logs_for(s, apis, "payout-api", "payout-api", [
        ("info", "GET /v1/merchants/{id}/payouts 200 22ms", {"http.response.status_code": 200}),
        ("info", "POST /v1/payout-schedules 201", {"http.response.status_code": 201}),
        ("warn", "merchant m_48213 payout held: KYC status REVIEW", {}),
        ("info", "settlement batch S-2027-02-16-0412 settled 213 transfers", {}),
    ], 90, start=start, end=NOW)
    logs_for(s, apis, "payout-api", "payout-api", [
        ("warn", "settled transfers older than 70 min not yet sent to the bank: 1284 "
         "(oldest settled 09:58:12)", {}),
    ], 8, start=slots[2] + timedelta(minutes=70), end=NOW)
    blip = NOW - timedelta(minutes=51, seconds=20)
    ip = apis[2]["status"]["podIP"]
    c.event(apis[2], "Unhealthy", f'Readiness probe failed: Get "http://{ip}:8080/actuator/'
            'health/readiness": context deadline exceeded (Client.Timeout exceeded while '
            "awaiting headers)", first=blip, last=blip + timedelta(seconds=20), count=3,
            type_="Warning", field_path="spec.containers{payout-api}")
    imp = Ctr("bank-statement-importer", f"{HARBOR}/payouts/bank-statement-importer:2.4.0",
              port=8080, requests={"cpu": "100m", "memory": "256Mi"},
              limits={"memory": "512Mi"}, readiness=http_probe("/ready", delay=5))
    _, imps = deploy(s, NS, "bank-statement-importer", [imp], replicas=1, nodes=workers,
                     revision=19, rollout=s.ago(days=4, hours=2), offset=2, service=None,
                     pull_secrets=["harbor-payouts-pull"])
    plain(s, imps[0], "bank-statement-importer", 188)
    logs_for(s, imps, "bank-statement-importer", "bank-statement-importer", [
        ("warn", "MT940 statement for NL91CBGW0417164300 not yet available on SFTP, retry in "
         "5m", {}),
        ("info", "imported camt.053 statement 2027-02-16-07 (412 entries)", {}),
        ("error", "entry 118 of camt.053 2027-02-16-08 has unknown end-to-end id "
         "PW-2027-02-15T22-0091, parked for manual matching", {"error.type":
                                                                "UnmatchedEntry"}),
    ], 30, start=start, end=NOW)

    # the rotator that changed the robot token (its Job is gone; its logs remain)
    rot_at = NOW.replace(hour=9, minute=37, second=2)
    for offset, level, msg in (
            (0.0, "info", "harbor-robot-rotator 0.4.1: 6 robot accounts due (expiry < 7d)"),
            (1.3, "info", "rotated robot$payouts+puller, new expiry 2027-05-17T09:37:03Z"),
            (1.9, "info", "updated secret harbor-payouts-pull in namespace payouts-staging"),
            (2.2, "info", "updated secret harbor-payouts-pull in namespace ci"),
            (2.3, "warn", "namespace payouts has no label harbor.paywell.eu/pull-sync=enabled,"
             " skipped"),
            (3.0, "info", "rotated robot$kyc+puller, new expiry 2027-05-17T09:37:05Z"),
            (3.5, "info", "updated secret harbor-kyc-pull in namespace kyc"),
            (6.1, "info", "done: 6 rotated, 9 secrets updated, 1 namespace skipped")):
        s.logs.add(rot_at + timedelta(seconds=offset), level, msg, namespace="platform-ops",
                   pod="harbor-robot-rotator-29000697-q7h2x", container="rotator",
                   service="harbor-robot-rotator", node=workers[3]["metadata"]["name"])
    rot = Ctr("rotator", f"{HARBOR}/platform/harbor-robot-rotator:0.4.1", port=None,
              requests={"cpu": "50m", "memory": "64Mi"}, limits={"memory": "128Mi"})
    rot_spec = Template([rot], service_account="harbor-robot-rotator").spec()
    rot_spec["restartPolicy"] = "OnFailure"
    c.add({"apiVersion": "batch/v1", "kind": "CronJob",
           "metadata": c.meta("CronJob", "harbor-robot-rotator", "platform-ops",
                              s.ago(days=380), {"app.kubernetes.io/name":
                                                "harbor-robot-rotator"}),
           "spec": {"schedule": "37 9 * * 2", "concurrencyPolicy": "Forbid", "suspend": False,
                    "successfulJobsHistoryLimit": 0, "failedJobsHistoryLimit": 1,
                    "jobTemplate": {"spec": {"backoffLimit": 0, "template": {
                        "metadata": {"labels": {"app.kubernetes.io/name":
                                                "harbor-robot-rotator"}},
                        "spec": rot_spec}}}},
           "status": {"lastScheduleTime": iso(rot_at - timedelta(seconds=2)),
                      "lastSuccessfulTime": iso(rot_at + timedelta(seconds=8))}})

    # ---- kyc: a neighbour with an old OOM kill and ordinary warnings
    ver = Ctr("document-verifier", f"{HARBOR}/kyc/document-verifier:5.0.3", port=8080,
              requests={"cpu": "500m", "memory": "1Gi"}, limits={"memory": "1536Mi"},
              readiness=http_probe("/healthz", delay=15))
    oom = s.ago(days=3, hours=6, minutes=41)

    def ver_states(i: int, name: str, started: datetime) -> dict[str, Obj]:
        if i:
            return {}
        return {"document-verifier": running(oom + timedelta(seconds=1), restarts=1,
                                             last=ended("OOMKilled", 137, started, oom))}
    _, vers = deploy(s, "kyc", "document-verifier", [ver], replicas=2, nodes=workers,
                     revision=40, rollout=s.ago(days=5, hours=1), statuses=ver_states, offset=1,
                     pull_secrets=["harbor-kyc-pull"])
    for k, pod in enumerate(vers):
        plain(s, pod, "document-verifier", 905, 0.33)
        restarts_series(s, pod, "document-verifier", 1 - k, [])
    logs_for(s, vers, "document-verifier", "document-verifier", [
        ("info", "passport check OK doc=d_7f1a... score=0.97", {}),
        ("warn", "image too blurry (laplacian var 41.2 < 60), asking customer to retake", {}),
        ("warn", "MRZ checksum mismatch on line 2, falling back to OCR of the visual zone", {}),
    ], 36, start=start, end=NOW)
    return s
