"""Holiday parks: guests arriving tomorrow got no gate-pass e-mail. The CronJob
arrival-passes (06:00 daily) renders the passes and queues the e-mails. Yesterday evening
its memory limit was raised from 1Gi to 2Gi (the batch had grown); the namespace's
ResourceQuota caps limits.memory at 24Gi and the running services already use 23Gi, so
this morning's Job cannot create its pod: "exceeded quota: campsites-compute" every few
minutes since 06:00. Nothing crashes, nothing restarts; the cause is in the events and the
quota's status. Red herrings: booking-api 12.6.1 rolled out at 05:21 in the same namespace,
guest-notify (the mailer) logging an SMTP 451 retry, availability-search with a few
weather API timeouts, an old OOM restart of pitch-map, and yesterday's arrival-passes
Job, which succeeded."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import metal_nodes, set_times
from tests.data.holdout2._generator.kit import app_counter
from tests.data.holdout5._generator.kit5 import cronjob, job
from tests.scenario_tools.common import node_conditions, truth
from tests.scenario_tools.kube import Ctr, Template, ended, http_probe, iso

from .kit15 import Incident, coredns, namespaces, neighbour, rolled

ID = "gate-pass-emails-missing"
NOW = datetime.fromisoformat("2028-08-14T06:52:00+00:00")
NS = "campsites"
REG = "harbor.pinecrest-parks.internal/parks"
RUN = datetime.fromisoformat("2028-08-14T06:00:00+00:00")
EDIT = datetime.fromisoformat("2028-08-13T17:42:19+00:00")
QUOTA = "campsites-compute"


def build() -> Incident:
    s = Incident(
        id=ID, title="Gate pass e-mails not sent this morning", now=NOW,
        report="""\
Guests arriving tomorrow haven't received their gate pass emails. They normally go out
at 6am, nothing in the sent log today. Reception at Lakeside and Dunes already getting
calls. Can someone look?
""",
        truth=truth(
            "quota_exceeded", "CronJob", NS, "arrival-passes",
            ["exceeded quota: campsites-compute", "limits.memory=2Gi",
             "limited: limits.memory=24Gi", "FailedCreate"],
            "Since its memory limit was raised to 2Gi yesterday, the arrival-passes Job "
            "no longer fits the campsites-compute ResourceQuota (limits.memory 23Gi of 24Gi "
            "used), so the 06:00 Job cannot create its pod. Raise the quota's limits.memory "
            "(or lower arrival-passes' limit back / trim other services' limits), then "
            "re-run the job for today's arrivals."))
    set_times(s, 3.0, 60)
    namespaces(s, {"default": 800, "kube-system": 800, NS: 610, "monitoring": 600})
    names = [f"k8s-wrk-{i:02d}.pinecrest.lan" for i in range(1, 5)]
    nodes = metal_nodes(s, names, ips=[f"10.31.8.{21 + i}" for i in range(4)],
                        kubelet="v1.30.9", kernel="6.8.0-51-generic", cpu="32",
                        memory="131858752Ki", alloc_cpu="31500m",
                        alloc_memory="129658752Ki", rack="r07", days=6.6)
    node_conditions(s, nodes)
    coredns(s, nodes[:2], "registry.k8s.io/coredns/coredns:v1.11.3")
    c = s.cluster

    # ---- the namespace's services (their limits fill the quota: 23Gi of 24Gi)
    def booking(version: str) -> Ctr:
        return Ctr("booking-api", f"{REG}/booking-api:{version}", port=8080,
                   requests={"cpu": "500m", "memory": "1Gi"},
                   limits={"memory": "1536Mi"}, readiness=http_probe("/ready"),
                   liveness=http_probe("/healthz", delay=20, period=20))
    rolled(s, NS, "booking-api", booking, nodes, old="12.6.0", new="12.6.1",
           at=datetime.fromisoformat("2028-08-14T05:21:37+00:00"), revision=212,
           replicas=4, mib=820, cpu=0.2, rps=6.0,
           logs_old=[("info", "POST /bookings 201 pitch=LK-114 nights=3", {}),
                     ("info", "GET /bookings/BK-4471290 200", {})],
           logs_new=[("info", "booking-api 12.6.1 started (migrations: none pending)", {}),
                     ("info", "POST /bookings 201 pitch=DN-031 nights=7", {}),
                     ("info", "GET /bookings/BK-4471822 200", {}),
                     ("warn", "deposit capture retried for BK-4471790 (card issuer slow)",
                      {})], n_logs=80)
    neighbour(s, NS, "availability-search", f"{REG}/availability-search:5.0.3", nodes,
              replicas=6, revision=67, rollout=s.ago(days=2, hours=14), mib=1400, cpu=0.3,
              rps=14.0, codes={"200": 0.998, "504": 0.002},
              reqs={"cpu": "500m", "memory": "1280Mi"}, limits={"memory": "2Gi"}, logs=[
                  ("info", "search park=lakeside from=2028-08-21 nights=4 hits=37 in 84ms", {}),
                  ("info", "search park=dunes from=2028-08-15 nights=2 hits=5 in 61ms", {}),
                  ("warn", "weather API timeout after 1500ms for park=highmoor, serving cached "
                           "forecast", {}),
              ], n_logs=110)
    neighbour(s, NS, "pitch-map", f"{REG}/pitch-map:2.2.0", nodes, replicas=2, revision=14,
              rollout=s.ago(days=4, hours=2), mib=380, cpu=0.02,
              reqs={"cpu": "100m", "memory": "512Mi"}, limits={"memory": "1Gi"},
              restarted={1: (s.ago(days=1, hours=16, minutes=5), "OOMKilled", 137)}, logs=[
                  ("info", "tile cache warm: 1840 tiles", {}),
                  ("warn", "tile cache miss z=18 x=130221 y=84120, rendering", {}),
              ], n_logs=30, offset=1)
    _, mailers = neighbour(s, NS, "guest-notify", f"{REG}/guest-notify:4.7.2", nodes,
                           replicas=2, revision=31, rollout=s.ago(days=5, hours=20), mib=260,
                           cpu=0.03, reqs={"cpu": "200m", "memory": "768Mi"},
                           limits={"memory": "1536Mi"}, logs=[
                               ("info", "outbox poll: 0 pending", {}),
                               ("info", "sent booking-confirmation to g***@gmail.com", {}),
                               ("warn", "SMTP relay answered 451 4.7.1 try again later, "
                                        "retrying in 60s", {}),
                           ], n_logs=60, offset=2)
    for pod in mailers:
        app_counter(s, "guest_notify_emails_sent", {
            "namespace": NS, "pod": pod["metadata"]["name"], "template": "arrival-pass"},
            s.times, lambda t: 0.0, "E-mails sent by template.")
        app_counter(s, "guest_notify_emails_sent", {
            "namespace": NS, "pod": pod["metadata"]["name"],
            "template": "booking-confirmation"}, s.times, lambda t: 0.012,
            "E-mails sent by template.")

    # ---- the quota
    hard = {"limits.memory": "24Gi", "pods": "30", "requests.cpu": "12",
            "requests.memory": "16Gi"}
    used = {"limits.memory": "23Gi", "pods": "14", "requests.cpu": "5600m",
            "requests.memory": "14Gi"}
    c.add({"apiVersion": "v1", "kind": "ResourceQuota",
           "metadata": c.meta("ResourceQuota", QUOTA, NS, s.ago(days=300),
                              {"app.kubernetes.io/managed-by": "platform-tenants"}),
           "spec": {"hard": hard}, "status": {"hard": hard, "used": used}})
    for resource, value in (("limits.memory", 24 * 2**30), ("pods", 30.0),
                            ("requests.cpu", 12.0), ("requests.memory", 16 * 2**30)):
        for kind, amount in (("hard", value), ("used", {
                "limits.memory": 23 * 2**30, "pods": 14.0, "requests.cpu": 5.6,
                "requests.memory": 14 * 2**30}[resource])):
            s.metrics.gauge("kube_resourcequota", {"namespace": NS, "resourcequota": QUOTA,
                                                    "resource": resource, "type": kind},
                            [(t, float(amount)) for t in s.times],
                            "Information about resource quota.")

    # ---- the CronJob and its Jobs
    def passes(memory: str) -> Template:
        return Template([Ctr("arrival-passes", f"{REG}/arrival-passes:1.9.0", port=None,
                             requests={"cpu": "250m", "memory": "768Mi"},
                             limits={"memory": memory},
                             command=["python", "-m", "passes.render", "--for", "tomorrow"],
                             env={"OUTBOX_URL": "http://guest-notify.campsites.svc/outbox",
                                  "PDF_WORKERS": "4"})],
                        labels={"app.kubernetes.io/name": "arrival-passes"},
                        service_account="arrival-passes")
    cron = cronjob(s, NS, "arrival-passes", passes("2Gi"), schedule="0 6 * * *",
                   created=s.ago(days=400), last=RUN)
    cron["metadata"]["generation"] = 7
    fields: dict = {"f:memory": {}}
    for key in ("f:limits", "f:resources", 'k:{"name":"arrival-passes"}', "f:containers",
                "f:spec", "f:template", "f:spec", "f:jobTemplate", "f:spec"):
        fields = {key: fields}
    cron["metadata"]["managedFields"] = [{
        "apiVersion": "batch/v1", "fieldsType": "FieldsV1", "fieldsV1": fields,
        "manager": "kubectl-edit", "operation": "Update", "time": iso(EDIT)}]
    yesterday = RUN - timedelta(days=1)
    old = job(s, cron, yesterday, passes("1Gi"))
    old.obj["status"] = {
        "completionTime": iso(yesterday + timedelta(minutes=3, seconds=12)),
        "conditions": [
            {"type": "SuccessCriteriaMet", "status": "True", "lastProbeTime":
             iso(yesterday + timedelta(minutes=3, seconds=12)), "lastTransitionTime":
             iso(yesterday + timedelta(minutes=3, seconds=12))},
            {"type": "Complete", "status": "True", "lastProbeTime":
             iso(yesterday + timedelta(minutes=3, seconds=12)), "lastTransitionTime":
             iso(yesterday + timedelta(minutes=3, seconds=12))}],
        "ready": 0, "startTime": iso(yesterday), "succeeded": 1,
        "terminating": 0, "uncountedTerminatedPods": {}}
    pod = c.pod(old, None, node=nodes[2], created=yesterday + timedelta(seconds=1),
                name=f"{old.name}-{c.token(5)}", phase="Succeeded",
                statuses={"arrival-passes": {
                    "state": ended("Completed", 0, yesterday + timedelta(seconds=6),
                                   yesterday + timedelta(minutes=3, seconds=10)),
                    "ready": False, "started": False, "restartCount": 0, "lastState": {}}})
    pod["spec"]["restartPolicy"] = "Never"
    today = job(s, cron, RUN, passes("2Gi"))
    today.obj["status"] = {"active": 0, "ready": 0, "startTime": iso(RUN), "terminating": 0,
                           "uncountedTerminatedPods": {}}
    cron["status"] = {"active": [{"apiVersion": "batch/v1", "kind": "Job",
                                  "name": today.name, "namespace": NS,
                                  "resourceVersion": today.obj["metadata"]["resourceVersion"],
                                  "uid": today.obj["metadata"]["uid"]}],
                      "lastScheduleTime": iso(RUN),
                      "lastSuccessfulTime": iso(yesterday + timedelta(minutes=3, seconds=12))}
    c.event(cron, "SuccessfulCreate", f"Created job {today.name}", first=RUN,
            component="cronjob-controller", host="")
    message = (f'Error creating: pods "{today.name}-{c.token(5)}" is forbidden: exceeded '
               f"quota: {QUOTA}, requested: limits.memory=2Gi, used: limits.memory=23Gi, "
               "limited: limits.memory=24Gi")
    c.event(today.obj, "FailedCreate", message, first=RUN + timedelta(seconds=1),
            last=NOW - timedelta(minutes=3, seconds=41), count=17, type_="Warning",
            component="job-controller", host="")
    for metric, value, help_ in (("kube_job_status_active", 0.0, "The number of actively "
                                  "running pods."),
                                 ("kube_job_status_succeeded", 0.0, "The number of pods "
                                  "which reached Phase Succeeded."),
                                 ("kube_job_status_failed", 0.0, "The number of pods which "
                                  "reached Phase Failed.")):
        s.metrics.gauge(metric, {"namespace": NS, "job_name": today.name},
                        [(t, value) for t in s.times if t >= RUN.timestamp() + 30], help_)
    s.metrics.gauge("kube_cronjob_status_last_schedule_time",
                    {"namespace": NS, "cronjob": "arrival-passes"},
                    [(t, float(RUN.timestamp() if t >= RUN.timestamp() else
                               yesterday.timestamp())) for t in s.times],
                    "LastScheduleTime keeps information of when was the last time the job "
                    "was successfully scheduled.")
    return s
