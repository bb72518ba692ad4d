"""Shape 5: a CronJob's nightly Job is OOM-killed on a larger-than-usual input.

revenue-report runs at 02:15 and mails the previous day's figures. Monday 30 November was
Cyber Monday: three times the usual order lines. The job's pivot step holds everything in
memory; each of its four attempts climbs to the 2Gi limit and is OOM-killed, the Job
fails with BackoffLimitExceeded, and no mail is sent. The events are long gone (an hour's
lifetime); the pods, their logs, the Job's status and the memory series remain. The
report blames the mail relay, which has an unrelated probe warning.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from . import kube
from .emit import Scenario, steps
from .fleet import app, basic_signals, chatter, make_nodes, memory_series, platform, simple

ID = "revenue-report-missing"
NOW = datetime.fromisoformat("2026-12-01T08:20:00+00:00")
NS = "finance"
IMAGE = "harbor.corp.example/finance/revenue-report:3.4.2"
LIMIT = 2 * 2**30
RUNS = {  # run date -> (scheduled minute of its job, order lines, peak share of the limit)
    "2026-11-27": (29930535, 2_410_776, 0.87),  # Black Friday: survived, barely
    "2026-11-28": (29931975, 1_401_967, 0.55),
    "2026-11-29": (29933415, 1_088_214, 0.46),
}
FAILED_MINUTE = 29934855
FAILED_LINES = 3_871_552


def _job_spec() -> dict:
    report = kube.container("report", IMAGE, requests={"cpu": "500m", "memory": "1Gi"},
                            limits={"cpu": "2", "memory": "2Gi"},
                            env={"REPORT_TZ": "UTC", "WAREHOUSE_DSN": "postgresql://report_ro@"
                                 "warehouse-replica.finance.svc:5432/dwh",
                                 "SMTP_HOST": "smtp-relay.platform.svc", "SMTP_PORT": "25",
                                 "REPORT_TO": "finance-daily@corp.example",
                                 "PYTHONUNBUFFERED": "1"},
                            command=["python", "-m", "revenue_report", "--date", "yesterday"])
    return {"backoffLimit": 3, "activeDeadlineSeconds": 7200, "completions": 1,
            "parallelism": 1,
            "template": {"metadata": {"labels": {"app": "revenue-report"}},
                         "spec": kube.pod_spec([report], restart="Never",
                                               service_account="revenue-report")}}


def build() -> Scenario:
    rng = random.Random(31_05)
    sc = Scenario(
        id=ID, title="Nightly revenue report did not arrive", now=NOW,
        report=(
            "finance says the nightly revenue report never showed up in their inbox this "
            "morning (they need it for the 9:30 cyber monday review). smtp-relay was acting "
            "up last week too - can someone check mail?\n"),
        truth={"category": "oom_killed",
               "culprit": {"kind": "CronJob", "namespace": NS, "name": "revenue-report"},
               "evidence": ["OOMKilled", "BackoffLimitExceeded", "2Gi",
                            "3,871,552 order lines"],
               "fix": "Raise revenue-report's memory limit for peak days (or stream the pivot "
                      "instead of loading the whole day), then re-run the job for 2026-11-30; "
                      "the mail relay is fine."})
    created = NOW - timedelta(days=600)
    sc.add(kube.namespace(NS, created, {"team": "finance-eng"}),
           kube.namespace("platform", created, {"team": "platform"}))
    nodes = make_nodes(sc, ["worker-prod-07", "worker-prod-08", "worker-prod-09", "worker-prod-11"],
                       created=NOW - timedelta(days=70), cpu="16", memory="64Gi",
                       labels={"node-role.kubernetes.io/worker": "",
                               "topology.kubernetes.io/zone": "dc2-row-b"})
    since = NOW - timedelta(days=6, hours=4)
    platform(sc, rng, nodes, created, since=since)

    job_spec = _job_spec()
    cron = {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": kube.meta("revenue-report", NS, created, labels={"app": "revenue-report"},
                                  generation=7),
            "spec": {"schedule": "15 2 * * *", "timeZone": "Etc/UTC",
                     "concurrencyPolicy": "Forbid", "startingDeadlineSeconds": 3600,
                     "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1,
                     "suspend": False,
                     "jobTemplate": {"metadata": {"labels": {"app": "revenue-report"}},
                                     "spec": job_spec}},
            "status": {"lastScheduleTime": kube.ts(_minute(FAILED_MINUTE)),
                       "lastSuccessfulTime": "set below"}}
    sc.add(cron)
    for run_date in RUNS:
        ended = _successful_run(sc, rng, run_date, nodes[rng.randint(0, 3)].name)
    cron["status"]["lastSuccessfulTime"] = kube.ts(ended)
    _failed_run(sc, rng, [n.name for n in nodes])

    mailer = app(sc, rng, "smtp-relay", "platform", replicas=2, nodes=nodes, created=created,
                 images=[("docker.io/boky/postfix:v4.3.0", NOW - timedelta(days=12))],
                 pod_started=since, port=25,
                 containers=simple("postfix", port=25, cpu="50m", memory="128Mi",
                                   limit_memory="256Mi", probe=None))
    replica = app(sc, rng, "warehouse-replica-proxy", NS, replicas=2, nodes=nodes,
                  created=created, pod_started=since, port=5432,
                  images=[("docker.io/bitnami/pgbouncer:1.23.1", NOW - timedelta(days=33))],
                  containers=simple("pgbouncer", port=5432, cpu="100m", memory="64Mi",
                                    limit_memory="128Mi", probe=None))
    ledger_sync = app(sc, rng, "invoice-sync", NS, replicas=1, nodes=nodes, created=created,
                      images=[("harbor.corp.example/finance/invoice-sync:2.0.8",
                               NOW - timedelta(days=3, hours=5))],
                      containers=simple("invoice-sync", cpu="100m", memory="256Mi",
                                        probe="/healthz"))
    _bystanders(sc, rng, mailer, replica, ledger_sync)
    return sc


def _minute(minute: int) -> datetime:
    return datetime.fromtimestamp(minute * 60, tz=NOW.tzinfo)


def _job(name: str, start: datetime, status: dict) -> dict:
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": kube.meta(name, NS, start, labels={"app": "revenue-report",
                                                           "batch.kubernetes.io/job-name": name},
                                  owner=("batch/v1", "CronJob", "revenue-report"),
                                  annotations={"batch.kubernetes.io/cronjob-scheduled-timestamp":
                                               kube.ts(start)}),
            "spec": {**_job_spec(), "selector": {"matchLabels": {
                "batch.kubernetes.io/controller-uid": kube.uid("Job", NS, name)}}},
            "status": status}


def _run_pod(name: str, job: str, node: str, started: datetime, finished: datetime,
             reason: str, code: int, ip: str) -> dict:
    spec = _job_spec()["template"]["spec"]
    phase = "Succeeded" if code == 0 else "Failed"
    status = kube.terminated("report", IMAGE, reason=reason, exit_code=code,
                             started=started + timedelta(seconds=2), finished=finished)
    why = "PodCompleted" if code == 0 else "PodFailed"
    done = [{"type": "Initialized", "status": "True", "lastTransitionTime": kube.ts(started)},
            {"type": "Ready", "status": "False", "reason": why,
             "lastTransitionTime": kube.ts(finished)},
            {"type": "ContainersReady", "status": "False",
             "reason": "PodCompleted" if code == 0 else "PodFailed",
             "lastTransitionTime": kube.ts(finished)},
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": kube.ts(started)}]
    pod_obj = kube.pod(name, NS, owner=("batch/v1", "Job", job),
                       labels={"app": "revenue-report", "batch.kubernetes.io/job-name": job,
                               "job-name": job}, spec=spec, created=started, node_name=node,
                       ip=ip, statuses=[status], phase=phase, conditions=done)
    pod_obj["status"]["qosClass"] = "Burstable"
    return pod_obj


def _log_run(sc: Scenario, pod: str, start: datetime, run_date: str, lines: int, rng: random.Random,
             *, killed_at: datetime | None) -> datetime:
    """The job's output; a killed run stops mid-pivot. Returns when it ended."""
    at = start + timedelta(seconds=3)

    def say(level: str, message: str) -> None:
        sc.both(at, service="revenue-report", ns=NS, pod=pod, container="report", level=level,
                message=message)

    say("info", f"revenue-report 3.4.2 run_date={run_date} tz=UTC")
    at += timedelta(seconds=2)
    say("info", "connecting to warehouse-replica.finance.svc:5432/dwh as report_ro")
    chunks = -(-lines // 250_000)
    loaded = 0
    for chunk in range(1, chunks + 1):
        at += timedelta(seconds=rng.randint(14, 26))
        loaded = min(lines, loaded + 250_000)
        say("info", f"fetched chunk {chunk} order_lines={loaded:,}")
    at += timedelta(seconds=4)
    say("info", f"fetched {loaded:,} order lines for {run_date}")
    at += timedelta(seconds=1)
    say("info", "building pivot merchant x sku x channel x hour")
    if killed_at is not None:
        return killed_at
    at += timedelta(minutes=rng.randint(7, 9), seconds=rng.randint(0, 59))
    say("info", "pivot done: 18,204 merchants, 402,117 skus")
    at += timedelta(seconds=40)
    say("info", f"rendered revenue-{run_date}.pdf (41 pages) and revenue-{run_date}.xlsx")
    at += timedelta(seconds=3)
    say("info", "mailed report to finance-daily@corp.example via smtp-relay.platform.svc:25 "
        "(250 2.0.0 Ok: queued)")
    return at + timedelta(seconds=1)


def _successful_run(sc: Scenario, rng: random.Random, run_date: str, node: str) -> datetime:
    """The Job of the night after `run_date`, its pod and its memory curve."""
    minute, lines, peak = RUNS[run_date]
    start = _minute(minute)
    job = f"revenue-report-{int(start.timestamp() // 60)}"
    pod = f"{job}-{kube.suffix(rng)}"
    end = _log_run(sc, pod, start, run_date, lines, rng, killed_at=None)
    sc.add(_job(job, start, {"startTime": kube.ts(start), "completionTime": kube.ts(end),
                             "succeeded": 1, "ready": 0, "terminating": 0,
                             "uncountedTerminatedPods": {},
                             "conditions": [{"type": "Complete", "status": "True",
                                             "lastProbeTime": kube.ts(end),
                                             "lastTransitionTime": kube.ts(end)}]}),
           _run_pod(pod, job, node, start, end, "Completed", 0,
                    f"10.42.{rng.randint(1, 4)}.{rng.randint(100, 200)}"))
    _memory(sc, pod, start, end, peak * LIMIT, killed=False)
    return end


def _failed_run(sc: Scenario, rng: random.Random, nodes: list[str]) -> None:
    start = _minute(FAILED_MINUTE)
    job = f"revenue-report-{FAILED_MINUTE}"
    at = start
    pods = []
    for attempt in range(4):
        pod = f"{job}-{kube.suffix(rng)}"
        killed = at + timedelta(minutes=7, seconds=rng.randint(10, 50))
        _log_run(sc, pod, at, "2026-11-30", FAILED_LINES, rng, killed_at=killed)
        pods.append(_run_pod(pod, job, nodes[(attempt + 1) % len(nodes)], at, killed,
                             "OOMKilled", 137, f"10.42.{attempt + 1}.{rng.randint(100, 200)}"))
        _memory(sc, pod, at, killed, LIMIT, killed=True)
        at = killed + timedelta(seconds=10 * 2**attempt + rng.randint(1, 4))
    failed_at = pods[-1]["status"]["containerStatuses"][0]["state"]["terminated"]["finishedAt"]
    sc.add(_job(job, start, {
        "startTime": kube.ts(start), "failed": 4, "ready": 0, "terminating": 0,
        "uncountedTerminatedPods": {},
        "conditions": [{"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded",
                        "message": "Job has reached the specified backoff limit",
                        "lastProbeTime": failed_at, "lastTransitionTime": failed_at},
                       {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                        "message": "Job has reached the specified backoff limit",
                        "lastProbeTime": failed_at, "lastTransitionTime": failed_at}]}), *pods)
    for at in steps(start, NOW, timedelta(minutes=5)):
        sc.sample("kube_job_status_failed", "gauge", {"namespace": NS, "job_name": job,
                                                      "reason": "BackoffLimitExceeded"}, at,
                  float(min(4, 1 + int((at - start).total_seconds() // 480))),
                  "The number of pods which reached Phase Failed and the reason for failure.")
    for pod_obj in pods:
        for at in steps(start + timedelta(minutes=40), NOW, timedelta(minutes=5)):
            sc.sample("kube_pod_container_status_last_terminated_reason", "gauge",
                      {"namespace": NS, "pod": pod_obj["metadata"]["name"], "container": "report",
                       "reason": "OOMKilled",
                       "uid": kube.uid("Pod", NS, pod_obj["metadata"]["name"])}, at, 1.0,
                      "Describes the last reason the container was in terminated state.")


def _memory(sc: Scenario, pod: str, start: datetime, end: datetime, peak: float, *,
            killed: bool) -> None:
    """Working set: ~180Mi while fetching, then the pivot climbs to `peak`."""
    times = steps(start + timedelta(seconds=15), end, timedelta(seconds=30))
    span = (end - start).total_seconds()

    def working_set(at: datetime) -> float:
        share = (at - start).total_seconds() / span
        ramp = min(1.0, share * (1.25 if killed else 1.6))
        value = 190 * 2**20 + (peak - 190 * 2**20) * ramp ** 1.3
        return min(value, LIMIT * 0.997) if killed else value

    memory_series(sc, NS, pod, "report", times, working_set, limit=LIMIT)


def _bystanders(sc: Scenario, rng: random.Random, mailer, replica, invoice) -> None:
    start = NOW - timedelta(hours=9)
    chatter(sc, mailer, start, NOW, timedelta(minutes=6), [
        ("info", "postfix/smtp[{n}]: {id}: to=<noreply-digest@corp.example>, "
                 "relay=mx1.corp.example[10.8.0.25]:25, delay=0.{n}, status=sent (250 2.0.0 Ok)"),
        ("info", "postfix/qmgr[{n}]: {id}: removed"),
        ("warn", "postfix/smtp[{n}]: {id}: to=<alerts@partner.example>, relay=none, delay=31, "
                 "status=deferred (connect to mx.partner.example[203.0.113.9]:25: Connection "
                 "timed out)"),
    ], rng, container="postfix")
    chatter(sc, replica, start, NOW, timedelta(minutes=10), [
        ("info", "stats: {n} xacts/s, {n} queries/s, in 5{n} B/s, out 91{n} B/s, xact {ms} us, "
                 "query {ms} us, wait 0 us"),
        ("info", "LOG C-0x{id}: dwh/report_ro@10.42.1.1{n}:4{n} login attempt: db=dwh "
                 "user=report_ro tls=no"),
    ], rng, container="pgbouncer")
    chatter(sc, invoice, start, NOW, timedelta(minutes=5), [
        ("info", "synced {n} invoices from billing"),
        ("warn", "billing API 429, backing off 2s"),
    ], rng)
    pod = mailer.pods[0]
    sc.add(kube.event("platform", kind="Pod", name=pod["metadata"]["name"], reason="Unhealthy",
                      type="Warning", host=pod["spec"]["nodeName"],
                      field_path="spec.containers{postfix}",
                      message=f"Liveness probe failed: dial tcp {pod['status']['podIP']}:25: "
                              "i/o timeout",
                      first=NOW - timedelta(minutes=26), last=NOW - timedelta(minutes=26)))
    basic_signals(sc, mailer, NOW - timedelta(hours=6), NOW, cores=0.01, mem_mib=60,
                  container="postfix")
    basic_signals(sc, invoice, NOW - timedelta(hours=6), NOW, cores=0.02, mem_mib=140)
