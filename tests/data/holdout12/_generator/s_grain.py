"""Grain co-operative: the hourly price sheet for member farms stopped going out after
06:05. The CronJob price-sheet-publish reads its SFTP credentials with envFrom from the
Secret sftp-credentials; at 06:40 the secrets operator re-synced that Secret from the vault
with the keys renamed to lower case (sftp-private-key, sftp-user), so every run since 07:05
exits within two seconds: "required setting SFTP_PRIVATE_KEY is not set" (exit 2). Each
Job fails its five attempts and hits its backoff limit. Red herrings: price-api 2.9.0 rolled
out 1 h 30 min ago, weather-ingest timeouts against a public weather API, an old OOM
restart of member-portal in another namespace, the exchange feed's ordinary reconnects."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from tests.data.holdout._generator.base import gauge, set_times
from tests.data.holdout2._generator.kit import requests
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.data.holdout5._generator.kit5 import cronjob, job, never_restart
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, Template, ended, http_probe, iso

from .kit12 import Incident, NodeKind, provider_nodes, secs

ID = "grain-price-sheets-not-sent"
NOW = datetime.fromisoformat("2028-03-14T09:48:00+00:00")
NS = "grain-ops"
REG = "123456789012.dkr.ecr.us-east-2.amazonaws.com/coop"
IMAGE = f"{REG}/price-sheet-publish:1.8.3"
FATAL = ("FATAL config: required setting SFTP_PRIVATE_KEY is not set (expected from secret "
         "sftp-credentials)")


def build() -> Incident:
    s = Incident(
        id=ID, title="Hourly grain price sheets not reaching members", now=NOW,
        report="""\
Member farms haven't received the hourly grain price sheet since early this morning, the
last one they got was the 6 o'clock sheet. The prices on the website look current. Elevator
managers are phoning in for bids, can someone check?
""",
        truth=truth(
            "crash_loop", "CronJob", NS, "price-sheet-publish",
            ["SFTP_PRIVATE_KEY is not set", "BackoffLimitExceeded", "sftp-credentials",
             "exit code 2"],
            "Every run of the CronJob price-sheet-publish since 07:05 exits at start because "
            "SFTP_PRIVATE_KEY is missing: the Secret sftp-credentials, re-synced at 06:40, "
            "now carries lower-case keys (sftp-private-key, sftp-user) so envFrom no longer "
            "provides the expected variables. Map the keys explicitly with secretKeyRef (or "
            "restore the upper-case keys in the vault template), then trigger a run with "
            "kubectl create job --from=cronjob/price-sheet-publish."))
    set_times(s, 4.0, 60)
    c = s.cluster
    namespaces(s, {"default": 510, "kube-system": 510, "external-secrets": 480, NS: 470,
                   "members": 450})
    kind = NodeKind("dell-r650-16c-64g", "32", "65536000Ki", "31500m", "62914560Ki",
                    "v1.31.5-eks-5d632ec", "6.8.0-1019-aws",
                    "Ubuntu 24.04.1 LTS", runtime="containerd://1.7.24")
    nodes = provider_nodes(s, "hybrid", 4, kind, days=6.1)

    # ---- the CronJob and today's failing Job
    app = Ctr("price-sheet-publish", IMAGE, port=None,
              requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "512Mi"},
              env={"SHEET_TEMPLATE": "/templates/bids-v4.xlsx",
                   "PRICES_URL": "http://price-api.grain-ops.svc/api/v2/bids",
                   "SFTP_HOST": "sftp.members.coop-grain.example"},
              env_from=[{"secretRef": {"name": "sftp-credentials"}}],
              command=["/app/publish"], args=["--market", "all", "--format", "xlsx,pdf"])
    labels = {"app.kubernetes.io/name": "price-sheet-publish"}
    cron = cronjob(s, NS, "price-sheet-publish", Template([app], service_account="publisher",
                                                          labels=dict(labels)),
                   schedule="5 * * * *", created=s.ago(days=300), last=NOW, history=(1, 1))
    sched = NOW.replace(minute=5, second=0)
    cron["status"]["lastScheduleTime"] = iso(sched)
    cron["status"]["lastSuccessfulTime"] = iso(sched.replace(hour=6) + timedelta(
        seconds=58))
    good = sched.replace(hour=6)
    done = job(s, cron, good, Template([app], service_account="publisher",
                                       labels=dict(labels)))
    g_start, g_end = secs(good, 3.1), secs(good, 58.2)
    gpod = c.pod(done, None, node=nodes[2], created=secs(good, 0.5), phase="Succeeded",
                 statuses={"price-sheet-publish": {
                     "state": ended("Completed", 0, g_start, g_end), "ready": False,
                     "started": False, "restartCount": 0, "lastState": {}}})
    never_restart([gpod])
    done.obj["status"] = {
        "conditions": [
            {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached",
             "message": "Reached expected number of succeeded pods",
             "lastProbeTime": iso(secs(g_end, 1)), "lastTransitionTime": iso(secs(g_end, 1))},
            {"type": "Complete", "status": "True", "reason": "CompletionsReached",
             "message": "Reached expected number of succeeded pods",
             "lastProbeTime": iso(secs(g_end, 1)), "lastTransitionTime": iso(secs(g_end, 1))}],
        "succeeded": 1, "ready": 0, "startTime": iso(secs(good, 0.5)),
        "completionTime": iso(secs(g_end, 1)), "terminating": 0,
        "uncountedTerminatedPods": {}}
    work = job(s, cron, sched, Template([app], service_account="publisher",
                                        labels=dict(labels)))
    jname = work.obj["metadata"]["name"]
    begin, pods, lives = secs(sched, 0.6), [], []
    for k, delay in enumerate((10, 20, 40, 80, 0)):
        run_start = secs(begin, 2.8 + 0.3 * k)
        died = secs(run_start, 1.4 + 0.1 * k)
        pod = c.pod(work, None, node=nodes[k % 4], created=begin, phase="Failed",
                    statuses={"price-sheet-publish": {
                        "state": ended("Error", 2, run_start, died), "ready": False,
                        "started": False, "restartCount": 0, "lastState": {}}})
        never_restart([pod])
        pods.append(pod)
        lives.append((run_start, died))
        begin = secs(died, delay + 0.9)
    failed_at = secs(lives[-1][1], 1)
    work.obj["status"] = {
        "conditions": [
            {"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded",
             "message": "Job has reached the specified backoff limit",
             "lastProbeTime": iso(failed_at), "lastTransitionTime": iso(failed_at)},
            {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
             "message": "Job has reached the specified backoff limit",
             "lastProbeTime": iso(failed_at), "lastTransitionTime": iso(failed_at)}],
        "failed": 5, "ready": 0, "startTime": iso(secs(sched, 0.6)), "terminating": 0,
        "uncountedTerminatedPods": {}}
    c.event(cron, "SuccessfulCreate", f"Created job {jname}", first=sched,
            component="cronjob-controller")
    c.event(cron, "SawCompletedJob", f"Saw completed job: {jname}, condition: Failed",
            first=secs(failed_at, 0.4), component="cronjob-controller")
    c.event(cron, "SuccessfulDelete", "Deleted job price-sheet-publish-"
            f"{int((sched - timedelta(hours=1)).timestamp() // 60)}",
            first=secs(failed_at, 0.5), component="cronjob-controller")
    c.event(work.obj, "BackoffLimitExceeded", "Job has reached the specified backoff limit",
            first=failed_at, type_="Warning", component="job-controller")
    for pod, (a, _) in zip(pods, lives, strict=True):
        name = pod["metadata"]["name"]
        born = parse_born(pod)
        c.event(work.obj, "SuccessfulCreate", f"Created pod: {name}", first=born,
                component="job-controller")
        c.event(pod, "Scheduled", f"Successfully assigned {NS}/{name} to "
                f"{pod['spec']['nodeName']}", first=born, component="default-scheduler",
                host="")
        fp = "spec.containers{price-sheet-publish}"
        c.event(pod, "Pulled", f'Container image "{IMAGE}" already present on machine',
                first=secs(a, -0.6), field_path=fp)
        c.event(pod, "Created", "Created container: price-sheet-publish",
                first=secs(a, -0.2), field_path=fp)
        c.event(pod, "Started", "Started container price-sheet-publish", first=a,
                field_path=fp)
        s.pod_log(pod, "price-sheet-publish", _lines(a))
    # every run since 07:05 failed the same way: the logs of the deleted pods remain
    for hour in (7, 8, 9):
        run = sched.replace(hour=hour)
        jn = f"price-sheet-publish-{int(run.timestamp() // 60)}"
        t = secs(run, 3.4)
        for k, delay in enumerate((10, 20, 40, 80, 0)):
            pod_name = f"{jn}-{s.cluster.token(5)}" if hour < 9 else \
                pods[k]["metadata"]["name"]
            if hour == 9:
                t = lives[k][0]
            _log(s, t, pod_name, nodes[(k + hour) % 4]["metadata"]["name"])
            t = secs(t, 1.5 + delay + 3.7)
    for hour in range(6, 7):  # the last good run
        run = sched.replace(hour=hour)
        pod_name = gpod["metadata"]["name"]
        for off, msg in ((0.4, "price-sheet-publish 1.8.3 starting: markets=all"),
                         (1.9, "fetched 214 bids from price-api (corn, soybeans, wheat, "
                          "sorghum) for 38 elevators"),
                         (31.2, "rendered 312 sheets (xlsx,pdf)"),
                         (55.8, "uploaded 312 sheets to sftp.members.coop-grain.example:/out "
                          "as coop-publisher")):
            s.logs.add(secs(run, 3 + off), "info", msg, namespace=NS, pod=pod_name,
                       container="price-sheet-publish", service="price-sheet-publish",
                       node=nodes[2]["metadata"]["name"])
    gauge(s, "kube_job_status_failed", {"namespace": NS, "job_name": jname},
          lambda t: float(sum(1 for _, b in lives if b.timestamp() <= t)),
          "The number of pods which reached Phase Failed.",
          times=[t for t in s.times if t >= sched.timestamp() + 30])
    gauge(s, "kube_cronjob_status_last_successful_time",
          {"namespace": NS, "cronjob": "price-sheet-publish"},
          lambda t: float(int(sched.replace(hour=6).timestamp()) + 58)
          if t >= sched.replace(hour=6).timestamp() + 60 else
          float(int(sched.replace(hour=5).timestamp()) + 61),
          "LastSuccessfulTime keeps information of when was the last time the job was "
          "successfully completed.")

    # ---- the secrets operator re-synced the Secret (a clue, in its own logs)
    eso = Ctr("external-secrets", "ghcr.io/external-secrets/external-secrets:v0.14.3",
              port=8080, requests={"cpu": "50m", "memory": "128Mi"},
              limits={"memory": "256Mi"})
    _, esos = steady(s, "external-secrets", "external-secrets", [eso], nodes=nodes,
                     replicas=1, revision=6, rollout=s.ago(days=5, hours=7), service=None)
    quiet(s, esos, "external-secrets", 92)
    synced = sched.replace(hour=6, minute=40, second=11)
    s.logs.add(synced, "info", "reconciled secret", namespace="external-secrets",
               pod=esos[0]["metadata"]["name"], container="external-secrets",
               service="external-secrets", node=esos[0]["spec"]["nodeName"],
               **{"ExternalSecret": f"{NS}/sftp-credentials", "labels.keys":
                  "sftp-private-key,sftp-user"})
    chatter(s, esos, "external-secrets", "external-secrets", [
        ("info", "reconciled secret", {}),
    ], 20)

    # ---- red herrings
    roll = NOW - timedelta(hours=1, minutes=30)
    api = Ctr("price-api", f"{REG}/price-api:2.9.0", port=8080,
              requests={"cpu": "250m", "memory": "384Mi"}, limits={"memory": "512Mi"},
              readiness=http_probe("/ready"))
    _, apis = steady(s, NS, "price-api", [api], nodes=nodes, replicas=2, revision=37,
                     rollout=roll, offset=1,
                     old=(36, s.ago(days=6), [Ctr("price-api", f"{REG}/price-api:2.8.4")]))
    quiet(s, apis, "price-api", 240)
    for pod in apis:
        requests(s, pod, "price-api", rps=lambda t: 4.2, codes={
            "200": lambda t: 0.997, "404": lambda t: 0.003})
    chatter(s, apis, "price-api", "price-api", [
        ("info", "price-api 2.9.0 started (basis now per delivery period)", {}),
        ("info", "CME feed: ZCK28 436'2 ZSK28 1082'4 ZWK28 598'0", {}),
        ("warn", "CME feed reconnect after 15s idle (normal outside RTH)", {}),
    ], 60)
    wx = Ctr("weather-ingest", f"{REG}/weather-ingest:0.9.7", port=8080,
             requests={"cpu": "100m", "memory": "192Mi"}, limits={"memory": "256Mi"})
    _, wxs = steady(s, NS, "weather-ingest", [wx], nodes=nodes, replicas=1, revision=8,
                    rollout=s.ago(days=3, hours=11), service=None, offset=3)
    quiet(s, wxs, "weather-ingest", 120)
    chatter(s, wxs, "weather-ingest", "weather-ingest", [
        ("warn", "GET api.weather.gov/gridpoints/DMX/73,49/forecast timed out after 10s, "
         "retrying", {"error.type": "ReadTimeout"}),
        ("info", "stored 48h forecast for 38 elevator sites", {}),
    ], 25)
    portal = Ctr("member-portal", f"{REG}/member-portal:5.0.2", port=3000,
                 requests={"cpu": "200m", "memory": "384Mi"}, limits={"memory": "512Mi"},
                 readiness=http_probe("/api/health"))
    _, portals = steady(s, "members", "member-portal", [portal], nodes=nodes, replicas=2,
                        revision=21, rollout=s.ago(days=4, hours=1), service=80,
                        restarted={1: (s.ago(days=2, hours=5), "OOMKilled", 137)})
    quiet(s, portals, "member-portal", 280)
    chatter(s, portals, "member-portal", "member-portal", [
        ("info", "GET /bids 200 45ms", {"http.response.status_code": 200}),
        ("info", "GET /settlements/2028-02 200 212ms", {"http.response.status_code": 200}),
    ], 40)
    return s


def parse_born(pod: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(pod["metadata"]["creationTimestamp"].replace("Z", "+00:00"))


def _lines(a: datetime) -> list[str]:
    return [f"{a:%Y-%m-%dT%H:%M:%S}.{a.microsecond // 1000:03d}Z INFO price-sheet-publish "
            "1.8.3 starting: markets=all",
            f"{secs(a, 0.9):%Y-%m-%dT%H:%M:%S}.{secs(a, 0.9).microsecond // 1000:03d}Z "
            f"{FATAL}",
            f"{secs(a, 0.9):%Y-%m-%dT%H:%M:%S}.{secs(a, 0.9).microsecond // 1000:03d}Z "
            "exit code 2"]


def _log(s: Incident, a: datetime, pod: str, node: str) -> None:
    for off, lvl, msg in ((0.0, "info", "price-sheet-publish 1.8.3 starting: markets=all"),
                          (0.9, "fatal", FATAL), (0.9, "error", "exit code 2")):
        s.logs.add(secs(a, off), lvl, msg, namespace=NS, pod=pod,
                   container="price-sheet-publish", service="price-sheet-publish", node=node)
