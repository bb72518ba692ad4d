"""Music publishing: the monthly royalty statement run never finished. The CronJob
royalty-statement-run starts a Job on the 1st at 02:00; its single pod loads every usage
line of the period into memory. September brought a new streaming partner feed (2.4x the
usual lines), so each attempt grows past its 3Gi limit and is OOMKilled after ~7 minutes;
the Job retries with a new pod until its backoffLimit of 4 and fails (BackoffLimitExceeded).
Red herrings: slow queries warned by the read replica, S3 multipart retries, an old restart
of the artist portal, a node with memory at 70 %."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gauge, set_times
from tests.data.holdout2._generator.kit import NodeKind, requests, working_set
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.scenario_tools.common import MIB, truth
from tests.scenario_tools.kube import Ctr, Template, ended, http_probe, iso

from .kit5 import Incident, cronjob, job, never_restart, provider_nodes

GIB = 1024 * MIB
ID = "artist-statements-missing"
NOW = datetime.fromisoformat("2027-10-01T03:06:00+00:00")
NS = "royalties"
REG = "registry.gcore.example/tunepay"


def build() -> Incident:
    s = Incident(
        id=ID, title="Monthly artist royalty statements not delivered", now=NOW,
        report="""\
Artists and their managers are emailing support that the September royalty statements are
not in the portal. They are normally there by 03:00 UTC on the 1st. Nothing was released
this week as far as I know. Can someone look?
""",
        truth=truth(
            "oom_killed", "CronJob", NS, "royalty-statement-run",
            ["OOMKilled", "3Gi", "BackoffLimitExceeded", "usage lines"],
            "Every pod of the September run of the CronJob royalty-statement-run is "
            "OOMKilled at its 3Gi memory limit while it loads all usage lines of the period "
            "(2.4x the usual volume since the new streaming partner feed), and the Job failed "
            "after its backoffLimit. Raise the limit (e.g. 8Gi) or stream the usage lines in "
            "chunks, then re-run the job (kubectl create job --from=cronjob/"
            "royalty-statement-run)."))
    set_times(s, 2.0, 60)
    c = s.cluster
    namespaces(s, {"default": 700, "kube-system": 700, NS: 610, "artist-portal": 540})
    kind = NodeKind("g2-standard-8-32", "8", "32863784Ki", "7800m", "30471720Ki", "v1.30.6",
                    "6.1.0-27-cloud-amd64", "Debian GNU/Linux 12 (bookworm)")
    nodes = provider_nodes(s, "gcore", 3, kind, days=6.5)
    app = Ctr("statement-builder", f"{REG}/statement-builder:11.4.2", port=None,
              requests={"cpu": "1", "memory": "3Gi"}, limits={"memory": "3Gi"},
              env={"PERIOD": "previous-month", "JAVA_TOOL_OPTIONS": "-XX:MaxRAMPercentage=80",
                   "USAGE_DB_URL": "jdbc:postgresql://usage-replica.royalties.svc:5432/usage"},
              command=["java", "-jar", "/app/statement-builder.jar"], args=["run"])
    tpl = Template([app], service_account="statement-builder",
                   labels={"app.kubernetes.io/name": "royalty-statement-run"})
    sched = NOW.replace(hour=2, minute=0, second=0)
    cron = cronjob(s, NS, "royalty-statement-run", tpl, schedule="0 2 1 * *",
                   created=s.ago(days=520), last=sched)
    work = job(s, cron, sched, Template([app], service_account="statement-builder",
                                        labels={"app.kubernetes.io/name":
                                                "royalty-statement-run"}))
    jname = work.obj["metadata"]["name"]
    start, pods, lives = sched + timedelta(seconds=1), [], []
    for k, delay in enumerate((10, 20, 40, 80, 0)):
        life = s.rng.uniform(400, 470)
        run_start = start + timedelta(seconds=3.5)
        died = run_start + timedelta(seconds=life)
        pod = c.pod(work, None, node=nodes[k % 3], created=start, phase="Failed",
                    statuses={"statement-builder": {
                        "state": ended("OOMKilled", 137, run_start, died), "ready": False,
                        "started": False, "restartCount": 0, "lastState": {}}})
        never_restart([pod])
        pods.append(pod)
        lives.append((run_start, died))
        start = died + timedelta(seconds=delay + s.rng.uniform(0.5, 2))
    failed_at = lives[-1][1] + timedelta(seconds=1)
    work.obj["status"] = {
        "conditions": [
            {"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded",
             "message": "Job has reached the specified backoff limit",
             "lastProbeTime": iso(failed_at), "lastTransitionTime": iso(failed_at)},
            {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
             "message": "Job has reached the specified backoff limit",
             "lastProbeTime": iso(failed_at), "lastTransitionTime": iso(failed_at)}],
        "failed": 5, "ready": 0, "startTime": iso(sched + timedelta(seconds=1)),
        "terminating": 0, "uncountedTerminatedPods": {}}
    cron["status"]["lastScheduleTime"] = iso(sched)
    hour = NOW - timedelta(hours=1)
    for pod, (a, b) in zip(pods, lives, strict=True):
        name = pod["metadata"]["name"]
        born = a - timedelta(seconds=3.5)
        if born >= hour:
            c.event(work.obj, "SuccessfulCreate", f"Created pod: {name}", first=born,
                    component="job-controller")
            c.event(pod, "Scheduled", f"Successfully assigned {NS}/{name} to "
                    f"{pod['spec']['nodeName']}", first=born, component="default-scheduler",
                    host="")
            fp = "spec.containers{statement-builder}"
            c.event(pod, "Pulled", f'Container image "{app.image}" already present on machine',
                    first=a - timedelta(seconds=0.6), field_path=fp)
            c.event(pod, "Created", "Created container: statement-builder",
                    first=a - timedelta(seconds=0.2), field_path=fp)
            c.event(pod, "Started", "Started container statement-builder", first=a,
                    field_path=fp)
        times = [t for t in s.times if a.timestamp() + 20 <= t <= b.timestamp()]
        span = (b - a).total_seconds()
        def grow(t: int, a: datetime = a, span: float = span) -> float:
            return (0.45 + 0.54 * min(1.0, (t - a.timestamp()) / span) ** 1.4) * 3 * GIB
        working_set(s, pod, "statement-builder", grow, times=times)
        s.pod_log(pod, "statement-builder", [
            f"{a:%Y-%m-%dT%H:%M:%S}.412Z INFO  StatementRun - period 2027-09, 18 412 payees, "
            "partners: spotify,apple,deezer,amazon,tidal,soundwave",
            f"{a + timedelta(seconds=21):%Y-%m-%dT%H:%M:%S}.090Z INFO  UsageLoader - loading "
            "usage lines for 2027-09 (estimated 61 870 112 rows)",
            f"{a + timedelta(seconds=span * 0.6):%Y-%m-%dT%H:%M:%S}.533Z INFO  UsageLoader - "
            "loaded 38 000 000 usage lines (heap 2.31 GiB)",
            f"{a + timedelta(seconds=span * 0.9):%Y-%m-%dT%H:%M:%S}.118Z WARN  UsageLoader - "
            "GC overhead 41% over the last 30s"])
        for off, lvl, msg in ((21, "info", "loading usage lines for 2027-09 (estimated "
                                           "61 870 112 rows, last period 25 730 418)"),
                              (span * 0.6, "info", "loaded 38 000 000 usage lines "
                                                   "(heap 2.31 GiB)"),
                              (span * 0.9, "warn", "GC overhead 41% over the last 30s")):
            s.logs.add(a + timedelta(seconds=off), lvl, msg, namespace=NS, pod=name,
                       container="statement-builder", service="royalty-statement-run",
                       node=pod["spec"]["nodeName"])
        s.logs.add(a + timedelta(seconds=span * 0.4), "warn", "usage-replica slow query "
                   "2840ms: SELECT * FROM usage_line WHERE period = $1 ORDER BY partner_id",
                   namespace=NS, pod=name, container="statement-builder",
                   service="royalty-statement-run", node=pod["spec"]["nodeName"])
        gauge(s, "kube_pod_container_status_last_terminated_reason",
              {"namespace": NS, "pod": name, "container": "statement-builder",
               "reason": "OOMKilled"}, lambda t: 1.0, "Describes the last reason the "
              "container was in terminated state.",
              times=[t for t in s.times if t >= b.timestamp() + 30])
        gauge(s, "kube_pod_container_resource_limits",
              {"namespace": NS, "pod": name, "container": "statement-builder",
               "resource": "memory", "unit": "byte"}, lambda t: 3.0 * GIB,
              "The number of requested limit resource by a container.",
              times=[t for t in s.times if t >= a.timestamp() + 20])
        for k, (at, ms) in enumerate(((0.7, 1203), (0.85, 3110))):
            s.logs.add(a + timedelta(seconds=span * at + k), "warn", "S3 multipart upload "
                       f"part 3 of statements-2027-08-archive.tar retried after {ms}ms "
                       "(SlowDown)", namespace=NS, pod=name, container="statement-builder",
                       service="royalty-statement-run", node=pod["spec"]["nodeName"])
    fail_times = [t for t in s.times if t >= sched.timestamp()]
    gauge(s, "kube_job_status_failed", {"namespace": NS, "job_name": jname},
          lambda t: float(sum(1 for _, b in lives if b.timestamp() <= t)),
          "The number of pods which reached Phase Failed.", times=fail_times)
    if failed_at >= hour:
        c.event(work.obj, "BackoffLimitExceeded", "Job has reached the specified backoff "
                "limit", first=failed_at, type_="Warning", component="job-controller")
    # ---- the read replica and the portal
    pg = Ctr("postgres", f"{REG}/postgres:16.4", port=5432, port_name="pg",
             requests={"cpu": "1", "memory": "4Gi"}, limits={"memory": "4Gi"})
    _, pgs = steady(s, NS, "usage-replica", [pg], nodes=nodes, replicas=1, revision=9,
                    rollout=s.ago(days=4, hours=3), service=5432, target="pg", offset=1)
    quiet(s, pgs, "postgres", 3350)
    chatter(s, pgs, "postgres", "usage-replica", [
        ("warn", "duration: 2840.114 ms  statement: SELECT * FROM usage_line WHERE period = "
         "'2027-09' ORDER BY partner_id", {}),
        ("info", "checkpoint complete: wrote 18211 buffers (13.9%); write=269.8 s", {}),
        ("info", "started streaming WAL from primary at 4B1/2E000000 on timeline 3", {}),
    ], 40)
    web = Ctr("artist-portal", f"{REG}/artist-portal:6.2.0", port=3000,
              requests={"cpu": "250m", "memory": "384Mi"}, limits={"memory": "512Mi"},
              readiness=http_probe("/api/health"))
    _, webs = steady(s, "artist-portal", "artist-portal", [web], nodes=nodes, replicas=2,
                     revision=58, rollout=s.ago(days=2, hours=9), service=80,
                     restarted={1: (s.ago(days=1, hours=3), "Error", 1)})
    quiet(s, webs, "artist-portal", 301)
    for pod in webs:
        requests(s, pod, "artist-portal", rps=lambda t: 3.0 + 2.5 * (t > NOW.timestamp() -
                                                                     2400),
                 codes={"200": lambda t: 0.97, "404": lambda t: 0.03})
    chatter(s, webs, "artist-portal", "artist-portal", [
        ("info", "GET /statements?period=2027-09 200 (0 statements)", {}),
        ("warn", "statement for payee P-88120 period 2027-09 not found", {}),
        ("info", "login ok payee P-10394", {}),
    ], 120)
    gauge(s, "node_memory_MemAvailable_bytes", {"instance": nodes[0]["metadata"]["name"]},
          lambda t: 9400 * MIB * s.rng.uniform(0.97, 1.03), "Memory information field "
          "MemAvailable_bytes.")
    return s
