"""Language-learning app: evening streak reminders never arrived. streak-notifier (the
singleton that schedules the reminder pushes, Recreate strategy) was rolled from 3.5.2 to
3.6.0 at 18:11. The new revision adds an init container `schedule-migrate` with requests but
no limits; the namespace's LimitRange only defaults memory limits, and the ResourceQuota
lingo-compute has a limits.cpu line, so every pod of the new ReplicaSet is refused: "failed
quota: lingo-compute: must specify limits.cpu for: schedule-migrate". Recreate had already
removed the old pods, so no reminder has been sent since. Red herrings: lesson-api 8.14.0
rolled out 43 minutes before the onset in the same namespace, a canary whose readiness fails
on purpose (feature flag off), push-gateway's alarming FCM/APNs log lines and an old OOM
restart, the reporter suspecting Firebase, a probe blip in another namespace."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gauge, gke_nodes, set_times
from tests.data.holdout2._generator.kit import app_counter, cpu_seconds, deleted, requests
from tests.data.holdout3._generator.kit3 import (
    chatter,
    ghosts,
    ksm_deployment,
    log_pod,
    namespaces,
    quiet,
    steady,
)
from tests.scenario_tools.common import truth
from tests.scenario_tools.failures import probe_events
from tests.scenario_tools.kube import Ctr, Template, http_probe, iso, running
from tests.scenario_tools.parts import readiness_blip

from .kit27 import Incident, ghost_memory, limit_range, quota, rs_failure

ID = "streak-reminders-not-arriving"
NOW = datetime.fromisoformat("2028-03-14T18:52:00+00:00")
NS = "lingo"
REG = "europe-west1-docker.pkg.dev/parlo-prod/apps"
QUOTA = "lingo-compute"


def batch(t: int) -> float:
    """Reminders handed to the push gateway a second: the half-past batches."""
    return 9.5 if 1800 <= t % 3600 < 2700 else 0.4


def build() -> Incident:
    s = Incident(
        id=ID, title="Evening streak reminders not arriving", now=NOW,
        report="""\
Support is getting a lot of "I lost my streak because the app never reminded me" messages
from users in Spain, France and Italy tonight. Normally the Firebase console shows a big
spike of sends at 18:30 UTC, tonight there was nothing. Is FCM having problems again?
Parlo prod.
""",
        truth=truth(
            "quota_exceeded", "Deployment", NS, "streak-notifier",
            ["FailedCreate", "failed quota: lingo-compute",
             "must specify limits.cpu for: schedule-migrate", "streak-notifier:3.6.0"],
            "streak-notifier 3.6.0 (rolled out at 18:11 with the Recreate strategy) adds the "
            "init container schedule-migrate without a CPU limit; the ResourceQuota "
            "lingo-compute constrains limits.cpu and the LimitRange lingo-defaults gives no "
            "default CPU limit, so the ReplicaSet's pods are refused (FailedCreate: must "
            "specify limits.cpu for: schedule-migrate) and no notifier pod runs. Give "
            "schedule-migrate a CPU limit (or add a default CPU limit to lingo-defaults); "
            "then resend the missed 18:00 batches."))
    set_times(s, 3.0, 60)
    c = s.cluster
    namespaces(s, {"default": 540, "kube-system": 540, NS: 512, "messaging": 512,
                   "content": 470})
    nodes = gke_nodes(s, 4, project="parlo-prod", cluster="parlo-prod-ew1", pool="apps-n2d",
                      region="europe-west1", instance="n2d-standard-8",
                      kubelet="v1.32.4-gke.1106000",
                      cpu="8", memory="32880628Ki", alloc_cpu="7910m",
                      alloc_memory="29094388Ki", days=6.2)
    roll = NOW - timedelta(minutes=41, seconds=17)

    # ---- quota and defaults of the namespace
    quota(s, NS, QUOTA, {"limits.cpu": "24", "limits.memory": "48Gi", "pods": "60",
                         "requests.cpu": "12", "requests.memory": "32Gi"},
          {"limits.cpu": "13500m", "limits.memory": "21Gi", "pods": "17",
           "requests.cpu": "5150m", "requests.memory": "12544Mi"}, created=s.ago(days=301))
    limit_range(s, NS, "lingo-defaults", [{
        "type": "Container", "default": {"memory": "512Mi"},
        "defaultRequest": {"cpu": "100m", "memory": "256Mi"},
        "max": {"memory": "4Gi"}}], created=s.ago(days=301))

    # ---- streak-notifier: old pods gone (Recreate), new ones refused
    def notifier(version: str, init: bool) -> Template:
        ctr = Ctr("streak-notifier", f"{REG}/streak-notifier:{version}", port=8080,
                  requests={"cpu": "300m", "memory": "384Mi"},
                  limits={"cpu": "1", "memory": "768Mi"},
                  env={"PUSH_GATEWAY_URL": "http://push-gateway.messaging.svc:8080",
                       "PROGRESS_DB_HOST": "progress-db-rw.lingo.svc", "BATCH_SIZE": "500",
                       "LEADER_ELECTION": "true"},
                  readiness=http_probe("/ready", delay=5), liveness=http_probe(
                      "/live", delay=20, period=20))
        inits = [Ctr("schedule-migrate", f"{REG}/streak-notifier:{version}", port=None,
                     requests={"cpu": "100m", "memory": "128Mi"}, limits={},
                     command=["/app/bin/streak-notifier", "migrate", "--schedules"])] \
            if init else []
        return Template([ctr], init=inits, service_account="streak-notifier",
                        labels={"app.kubernetes.io/version": version},
                        annotations={"prometheus.io/scrape": "true",
                                     "prometheus.io/port": "8080"})
    old_tpl, new_tpl = notifier("3.5.2", False), notifier("3.6.0", True)
    work = c.workload("Deployment", NS, "streak-notifier", new_tpl, replicas=2,
                      created=s.ago(days=388), labels={"app.kubernetes.io/name":
                                                        "streak-notifier",
                                                        "app.kubernetes.io/part-of": "parlo"},
                      extra_spec={"strategy": {"type": "Recreate"}})
    old_at = s.ago(days=9, hours=3, minutes=26)
    old_rs = c.revision(work, 41, old_at, old_tpl, replicas=0)
    new_rs = c.revision(work, 42, roll, new_tpl, replicas=2)
    old_name, new_name = old_rs["metadata"]["name"], new_rs["metadata"]["name"]
    gone = roll - timedelta(seconds=6)
    olds = [deleted(s, NS, f"{old_name}-{c.token(5)}", nodes[i + 1]["metadata"]["name"],
                    old_at + timedelta(seconds=11 + 23 * i), gone + timedelta(seconds=i))
            for i in range(2)]
    msg = (f'pods "{new_name}-" is forbidden: failed quota: {QUOTA}: must specify limits.cpu '
           "for: schedule-migrate")
    work.progressing = ("ProgressDeadlineExceeded",
                        f'ReplicaSet "{new_name}" has timed out progressing.',
                        roll + timedelta(seconds=600))
    work.availability_changed = gone
    work.extra_conditions.append({
        "type": "ReplicaFailure", "status": "True", "reason": "FailedCreate", "message": msg,
        "lastUpdateTime": iso(roll + timedelta(seconds=1)),
        "lastTransitionTime": iso(roll + timedelta(seconds=1))})
    rs_failure(s, new_rs, msg, roll + timedelta(seconds=1))
    c.event(work.obj, "ScalingReplicaSet", f"Scaled down replica set {old_name} from 2 to 0",
            first=gone - timedelta(seconds=0.5), component="deployment-controller")
    c.event(old_rs, "SuccessfulDelete", f"Deleted pod: {olds[0]['metadata']['name']}",
            first=gone, component="replicaset-controller")
    c.event(old_rs, "SuccessfulDelete", f"Deleted pod: {olds[1]['metadata']['name']}",
            first=gone + timedelta(seconds=0.2), component="replicaset-controller")
    c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set {new_name} from 0 to 2",
            first=roll, component="deployment-controller")
    c.event(new_rs, "FailedCreate", f"Error creating: {msg}", first=roll + timedelta(seconds=1),
            last=NOW - timedelta(seconds=97), count=19, type_="Warning",
            component="replicaset-controller")
    ksm_deployment(s, NS, "streak-notifier", lambda t: 2.0,
                   lambda t: 2.0 if t < gone.timestamp() else 0.0,
                   lambda t: 0.0 if t < gone.timestamp() else 2.0)
    qlabels = {"namespace": NS, "resourcequota": QUOTA}
    for resource, hard, used in (("limits.cpu", 24.0, 13.5), ("requests.cpu", 12.0, 5.15)):
        gauge(s, "kube_resourcequota", {**qlabels, "resource": resource, "type": "hard"},
              lambda t, h=hard: h, "Information about resource quota.")
        gauge(s, "kube_resourcequota", {**qlabels, "resource": resource, "type": "used"},
              lambda t, u=used, k=(2.0 if resource == "limits.cpu" else 0.6):
              u + (k if t < gone.timestamp() else 0.0),
              "Information about resource quota.")
    for i, pod in enumerate(olds):
        ghost_memory(s, pod, "streak-notifier", 410)
        cpu_seconds(s, pod, "streak-notifier", lambda t: 0.12 + 0.25 * (
            1800 <= (t % 3600) < 2400))
        app_counter(s, "streak_reminders_sent_total", {"namespace": NS, "pod":
                                                       pod["metadata"]["name"]},
                    [t for t in s.times if t <= gone.timestamp()],
                    lambda t, k=i: batch(t) if k == 0 else 0.0,
                    "Streak reminder pushes handed to the push gateway.")
        log_pod(s, pod, "streak-notifier", "streak-notifier", [
            ("info", "leader lease streak-notifier renewed by this instance" if i == 0 else
             "not leader, standing by (leader: " + olds[0]["metadata"]["name"] + ")", {}),
            ("info", "progress-db pool stats: 4/20 in use", {}),
        ], 40, end=gone)
    lead = olds[0]
    for hour, zones in ((2, ("Europe/Istanbul", "Europe/Moscow", "Asia/Riyadh")),
                        (1, ("Europe/Athens", "Europe/Helsinki", "Europe/Kyiv"))):
        start = NOW.replace(minute=30, second=0) - timedelta(hours=hour)
        for k, tz in enumerate(zones):
            s.logs.add(start + timedelta(seconds=4 + 71 * k, milliseconds=137 * k), "info",
                       f"sent {s.rng.randrange(1800, 4200)} streak reminders for tz {tz}, "
                       f"local 19:30 batch", namespace=NS, pod=lead["metadata"]["name"],
                       container="streak-notifier", service="streak-notifier",
                       node=lead["spec"]["nodeName"])
    for k, pod in enumerate(olds):
        s.logs.add(gone - timedelta(seconds=1.4 - k), "info", "received SIGTERM, stopping "
                   "scheduler and releasing leader lease", namespace=NS,
                   pod=pod["metadata"]["name"], container="streak-notifier",
                   service="streak-notifier", node=pod["spec"]["nodeName"])

    # ---- push-gateway (messaging): sends fall, noisy but harmless provider lines
    gw = Ctr("push-gateway", f"{REG}/push-gateway:2.21.3", port=8080,
             requests={"cpu": "250m", "memory": "256Mi"}, limits={"memory": "512Mi"},
             readiness=http_probe("/healthz"))
    _, gws = steady(s, "messaging", "push-gateway", [gw], nodes=nodes, replicas=2,
                    revision=57, rollout=s.ago(days=6, hours=2), offset=1,
                    restarted={1: (s.ago(days=2, hours=7), "OOMKilled", 137)})
    quiet(s, gws, "push-gateway", 220)
    for pod in gws:
        cpu_seconds(s, pod, "push-gateway", lambda t: 0.09 + (0.18 if t < gone.timestamp()
                                                               else 0.0))
        requests(s, pod, "push-gateway", rps=lambda t: 1.1 + (
            batch(t) / 500 * 20 if t < gone.timestamp() else 0.0),
                 codes={"202": lambda t: 0.995, "429": lambda t: 0.005})
        for provider, share in (("fcm", 0.71), ("apns", 0.29)):
            app_counter(s, "push_notifications_sent_total", {
                "namespace": "messaging", "pod": pod["metadata"]["name"],
                "provider": provider}, [t for t in s.times if t >= s.ago(days=6).timestamp()],
                lambda t, k=share: k * (0.6 + (batch(t) / 2
                                                if t < gone.timestamp() else 0.0)),
                "Notifications accepted by the push provider.")
    chatter(s, gws, "push-gateway", "push-gateway", [
        ("info", "fcm batch accepted: 500 messages, 0 failures", {}),
        ("error", "fcm: 3 registration tokens returned UNREGISTERED, pruning from device table",
         {"error.type": "UNREGISTERED"}),
        ("warn", "apns: connection reset by peer (api.push.apple.com:443), reconnecting", {}),
        ("info", "apns batch accepted: 212 messages", {}),
    ], 90, end=gone)
    chatter(s, gws, "push-gateway", "push-gateway", [
        ("info", "fcm batch accepted: 14 messages, 0 failures (transactional)", {}),
        ("warn", "apns: connection reset by peer (api.push.apple.com:443), reconnecting", {}),
        ("error", "fcm: 1 registration tokens returned UNREGISTERED, pruning from device table",
         {"error.type": "UNREGISTERED"}),
        ("warn", "fcm: quota project parlo-prod at 0% of send budget; idle connection closed",
         {}),
    ], 40, start=gone)

    # ---- lesson-api 8.14.0, rolled out 43 minutes before the onset
    lroll = roll - timedelta(minutes=43, seconds=8)
    api = Ctr("lesson-api", f"{REG}/lesson-api:8.14.0", port=8080,
              requests={"cpu": "500m", "memory": "768Mi"}, limits={"cpu": "2", "memory": "1Gi"},
              readiness=http_probe("/ready"), liveness=http_probe("/live", delay=20))
    lwork, apis = steady(s, NS, "lesson-api", [api], nodes=nodes, replicas=3, revision=203,
                         rollout=lroll, offset=2,
                         old=(202, s.ago(days=4, hours=5), [Ctr(
                             "lesson-api", f"{REG}/lesson-api:8.13.2")]))
    old_api = ghosts(s, lwork.revisions[0], nodes, [s.ago(days=4, hours=5)] * 3,
                     [lroll + timedelta(seconds=35 * (i + 1)) for i in range(3)])
    quiet(s, apis, "lesson-api", 540)
    for pod in [*apis, *old_api]:
        if pod in old_api:
            ghost_memory(s, pod, "lesson-api", 520)
        cpu_seconds(s, pod, "lesson-api", lambda t: 0.31)
        requests(s, pod, "lesson-api", rps=lambda t: 21.0, codes={
            "200": lambda t: 0.991, "404": lambda t: 0.007, "500": lambda t: 0.002},
            median=lambda t: 0.042, buckets=(0.05, 0.1, 0.25, 0.5, 1.0))
    chatter(s, apis, "lesson-api", "lesson-api", [
        ("info", "lesson-api 8.14.0 ready: 1,184 lessons cached, 12 course packs", {}),
        ("info", "GET /v3/lessons/es-A2-17 200 38ms", {}),
        ("warn", "slow query 812ms: select * from lesson_attempts where user_id=$1", {}),
        ("info", "POST /v3/attempts 201 24ms", {}),
    ], 80, start=lroll)
    for pod in old_api:
        log_pod(s, pod, "lesson-api", "lesson-api", [
            ("info", "GET /v3/lessons/fr-B1-04 200 41ms", {}),
            ("info", "POST /v3/attempts 201 19ms", {})], 10)

    # ---- grammar-hints-canary: not ready on purpose (flag off)
    hints_at = s.ago(days=2, hours=4, minutes=10)
    hint = Ctr("grammar-hints", f"{REG}/grammar-hints:0.9.0-rc.3", port=8080,
               requests={"cpu": "200m", "memory": "512Mi"}, limits={"cpu": "1", "memory": "1Gi"},
               readiness=http_probe("/ready", delay=10, period=15))
    _, hints = steady(s, NS, "grammar-hints-canary", [hint], nodes=nodes[2:], replicas=1,
                      revision=3, rollout=hints_at, service=None)
    pod = hints[0]
    status = pod["status"]["containerStatuses"][0]
    status.update(running(hints_at + timedelta(seconds=9), ready=False))
    for cond in pod["status"]["conditions"]:
        if cond["type"] in ("Ready", "ContainersReady"):
            cond.update({"status": "False", "reason": "ContainersNotReady",
                         "message": "containers with unready status: [grammar-hints]"})
    probe_events(s, pod, "grammar-hints", "HTTP probe failed with statuscode: 503",
                 since=NOW - timedelta(minutes=59, seconds=40), period=15)
    quiet(s, hints, "grammar-hints", 300)
    chatter(s, hints, "grammar-hints", "grammar-hints", [
        ("warn", "feature flag grammar_hints_v2 is off for environment prod; /ready returns "
         "503", {}),
    ], 12)

    readiness_blip(s, "content", "cms-preview", f"{REG}/cms-preview:1.40.2", nodes,
                   minutes_ago=27)
    return s
