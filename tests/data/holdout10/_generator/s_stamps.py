"""Coffee shop loyalty: stamp cards do not load in the app. stamp-api (two replicas,
Recreate strategy) was released as 2.9.0 31 minutes ago. Its init container migrate
(golang-migrate) ran migration 20280510141200_add_stamp_expiry on the first new pod and
failed half-way: the unique index on (customer_id, cafe_id) could not be built because of
duplicate rows. golang-migrate marks the schema dirty, and since then every start of the
init container on both pods exits 1 at once ("Dirty database version 20280510141200. Fix
and force version."). With Recreate the old pods were already gone: no stamp-api pod is
ready and stamp-web answers 502. Red herrings: stamp-web 5.2.0 rolled out 1 h 15 min ago,
slow-query warnings of the old stamp-api pods, push-notifier warnings in another
namespace."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gauge, set_times
from tests.data.holdout2._generator.kit import (
    deleted,
    kills,
    requests,
    restarts_series,
    runs_from,
)
from tests.data.holdout3._generator.kit3 import chatter, log_pod, namespaces, quiet, steady
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, Template, http_probe, waiting
from tests.scenario_tools.sim import container_status, restart_events

from .kit10 import Incident, NodeKind, provider_nodes, secs

ID = "loyalty-stamp-cards-down"
NOW = datetime.fromisoformat("2028-05-10T09:47:00+00:00")
NS = "stampcard"
REG = "harbor.beanline.lan/stampcard"
VERSION = "20280510141200"
DIRTY = f"error: Dirty database version {VERSION}. Fix and force version."
FAILED = ("error: migration failed in line 0: CREATE UNIQUE INDEX CONCURRENTLY "
          "stamp_cards_customer_cafe_key ON stamp_cards (customer_id, cafe_id); (details: pq: "
          "could not create unique index \"stamp_cards_customer_cafe_key\")")


def _ctrs(version: str) -> tuple[Ctr, Ctr]:
    image = f"{REG}/stamp-api:{version}"
    env = {"DATABASE_URL_FILE": "/run/secrets/db/url", "CARD_CACHE_TTL": "30s",
           "LOG_FORMAT": "json"}
    init = Ctr("migrate", image, port=None, requests={"cpu": "100m", "memory": "64Mi"},
               limits={"memory": "128Mi"}, command=["/app/stamp-api"],
               args=["migrate", "up", "--path=/app/migrations"], env=env,
               mounts=[{"mountPath": "/run/secrets/db", "name": "db-url", "readOnly": True}])
    app = Ctr("stamp-api", image, port=8080, requests={"cpu": "250m", "memory": "256Mi"},
              limits={"memory": "384Mi"}, env=env, args=["serve"],
              readiness=http_probe("/health/ready", delay=3),
              liveness=http_probe("/health/live", delay=10, period=20),
              mounts=[{"mountPath": "/run/secrets/db", "name": "db-url", "readOnly": True}])
    return init, app


def build() -> Incident:
    s = Incident(
        id=ID, title="Loyalty stamp cards not loading", now=NOW,
        report="""\
The coffee loyalty app shows "We couldn't load your stamp card" for everyone since about
9:15, baristas can't add stamps at the till either. The app itself opens fine. Can someone
look at the stampcard stuff in prod?
""",
        truth=truth(
            "crash_loop", "Deployment", NS, "stamp-api",
            ["CrashLoopBackOff", "Dirty database version", VERSION, "migrate",
             "could not create unique index"],
            "The migrate init container of stamp-api 2.9.0 failed half-way through migration "
            f"{VERSION} (duplicate rows block the new unique index) and left the schema "
            "dirty; every later start exits 1 with 'Dirty database version ... Fix and force "
            "version.' With the Recreate strategy no old pod is left, so stamp-api has no "
            "ready pod. Roll back to 2.8.3 now (after `migrate force` to the previous "
            "version and dropping the half-built index), de-duplicate stamp_cards, then "
            "re-release 2.9.0."))
    set_times(s, 2.5, 30)
    c = s.cluster
    namespaces(s, {"default": 800, "kube-system": 800, NS: 610, "messaging": 580,
                   "ingress-nginx": 800})
    kind = NodeKind("pve-vm-8c-24g", "8", "24582904Ki", "7800m", "23456504Ki", "v1.31.6",
                    "6.8.0-57-generic", "Ubuntu 24.04.2 LTS", runtime="containerd://1.7.27")
    nodes = provider_nodes(s, "proxmox", 3, kind, days=6.6, group="bean")
    rollout = NOW - timedelta(minutes=31, seconds=18)

    # ---- stamp-api: revision 41 (2.9.0) replaced 2.8.3 with Recreate and never came up
    old_init, old_app = _ctrs("2.8.3")
    new_init, new_app = _ctrs("2.9.0")
    volumes = [{"name": "db-url", "csi": {"driver": "secrets-store.csi.k8s.io",
                                          "readOnly": True, "volumeAttributes": {
                                              "secretProviderClass": "stamp-api-db"}}}]
    tpl = Template([new_app], init=[new_init], service_account="stamp-api", volumes=volumes)
    work = c.workload("Deployment", NS, "stamp-api", tpl, replicas=2, created=s.ago(days=600),
                      labels={"app.kubernetes.io/name": "stamp-api",
                              "app.kubernetes.io/part-of": "stampcard"},
                      extra_spec={"strategy": {"type": "Recreate"}})
    old_made = s.ago(days=4, hours=22, minutes=5)
    old_rs = c.revision(work, 40, old_made, Template([old_app], init=[old_init],
                                                     service_account="stamp-api",
                                                     volumes=volumes), replicas=0)
    new_rs = c.revision(work, 41, rollout, replicas=2)
    olds = [deleted(s, NS, f"{old_rs['metadata']['name']}-{c.token(5)}",
                    nodes[i]["metadata"]["name"], secs(old_made, 2 + 3 * i),
                    rollout - timedelta(seconds=3)) for i in range(2)]
    field_ = "spec.initContainers{migrate}"
    pods, all_runs = [], []
    for i in range(2):
        born = secs(rollout, 0.6 + 0.3 * i)
        name = f"{new_rs['metadata']['name']}-{c.token(5)}"
        runs = runs_from(secs(born, 4.1 + i), NOW,
                         lambda t, i=i: (7.9 if t < secs(rollout, 6) and i == 0 else
                                         s.rng.uniform(0.9, 1.4)),
                         pull=0.2, jitter=lambda: s.rng.uniform(0, 0.7))
        state = container_status(runs, name, NS, "migrate", reason="Error", code=1,
                                 uid=c.uid("Pod", NS, name), ready=False)
        pod = c.pod(work, new_rs, node=nodes[(i + 1) % 3], created=born, name=name,
                    statuses={"stamp-api": waiting("PodInitializing")},
                    init_statuses={"migrate": state})
        pods.append(pod)
        all_runs.append(runs)
        host = pod["spec"]["nodeName"]
        c.event(new_rs, "SuccessfulCreate", f"Created pod: {name}", first=born,
                component="replicaset-controller")
        c.event(pod, "Scheduled", f"Successfully assigned {NS}/{name} to {host}", first=born,
                component="default-scheduler", host="")
        c.event(pod, "Pulling", f'Pulling image "{new_init.image}"', first=secs(born, 0.5),
                field_path=field_)
        c.event(pod, "Pulled", f'Successfully pulled image "{new_init.image}" in 2.904s '
                "(2.904s including waiting). Image size: 38121774 bytes.",
                first=runs[0].start - timedelta(seconds=0.4), field_path=field_)
        restart_events(s, pod, "migrate", runs, now=NOW, image=new_init.image, init=True)
        restarts_series(s, pod, "migrate", 0, kills(runs), init=True)
        gauge(s, "kube_pod_init_container_status_waiting_reason",
              {"namespace": NS, "pod": name, "container": "migrate",
               "reason": "CrashLoopBackOff"},
              lambda t, r=runs: 1.0 if t > r[1].start.timestamp() else 0.0,
              "Describes the reason the init container is currently in waiting state.",
              times=[t for t in s.times if t >= born.timestamp() + 25])
        for j, run in enumerate(runs):
            first = i == 0 and j == 0
            lines = [("info", "migrate: connecting to postgres at stampcard-pg.cluster-"
                      "c9x2.eu-central-1.rds.amazonaws.com:5432/stampcard", {})]
            if first:
                lines += [("info", f"migrate: applying {VERSION}/u add_stamp_expiry", {}),
                          ("error", FAILED, {"error.type": "migrate.ErrDirty"})]
            else:
                lines += [("error", DIRTY, {"error.type": "migrate.ErrDirty"})]
            for k, (level, msg, extra) in enumerate(lines):
                when = secs(run.start, 0.15 + 0.2 * k + (6.5 if first and k == 2 else 0))
                if when <= NOW:
                    s.logs.add(when, level, msg, namespace=NS, pod=name, container="migrate",
                               service="stamp-api", node=host, **extra)
        last = runs[-2] if runs[-1].end is None else runs[-1]
        s.pod_log(pod, "migrate", [
            f'{{"level":"info","time":"{last.start:%Y-%m-%dT%H:%M:%S}Z","msg":"migrate: '
            'connecting to postgres at stampcard-pg.cluster-c9x2.eu-central-1.rds.amazonaws.'
            'com:5432/stampcard"}',
            f'{{"level":"error","time":"{last.start:%Y-%m-%dT%H:%M:%S}Z","msg":"{DIRTY}"}}'],
            previous=runs[-1].end is None)
        if runs[-1].end is None:
            s.pod_log(pod, "migrate", [
                f'{{"level":"info","time":"{runs[-1].start:%Y-%m-%dT%H:%M:%S}Z","msg":'
                '"migrate: connecting to postgres at stampcard-pg.cluster-c9x2.eu-central-1.'
                'rds.amazonaws.com:5432/stampcard"}'])
    work.availability_changed = rollout - timedelta(seconds=3)
    work.progressing = ("ProgressDeadlineExceeded", f'ReplicaSet "{new_rs["metadata"]["name"]}"'
                        " has timed out progressing.", secs(rollout, 600))
    c.event(work.obj, "ScalingReplicaSet", f"Scaled down replica set "
            f"{old_rs['metadata']['name']} from 2 to 0", first=rollout - timedelta(seconds=4),
            component="deployment-controller")
    for ghost in olds:
        c.event(old_rs, "SuccessfulDelete", f"Deleted pod: {ghost['metadata']['name']}",
                first=rollout - timedelta(seconds=4), component="replicaset-controller")
    c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set {new_rs['metadata']['name']}"
            " from 0 to 2", first=rollout, component="deployment-controller")
    svc = c.service(NS, "stamp-api", {"app.kubernetes.io/name": "stamp-api"}, port=80,
                    created=s.ago(days=600))
    vip = svc["spec"]["clusterIP"]
    gone = rollout.timestamp()
    labels = {"namespace": NS, "deployment": "stamp-api"}
    s.metrics.gauge("kube_deployment_status_replicas_available", labels,
                    [(t, 2.0 if t < gone else 0.0) for t in s.times],
                    "The number of available replicas per deployment.")
    s.metrics.gauge("kube_deployment_status_replicas_unavailable", labels,
                    [(t, 0.0 if t < gone else 2.0) for t in s.times],
                    "The number of unavailable replicas per deployment.")
    for ghost in olds:
        requests(s, ghost, "stamp-api", rps=lambda t: 11.5, codes={
            "200": lambda t: 0.991, "404": lambda t: 0.008, "500": lambda t: 0.001})
        log_pod(s, ghost, "stamp-api", "stamp-api", [
            ("info", "GET /v1/cards/customer/88213 200 in 12ms",
             {"http.response.status_code": 200}),
            ("info", "POST /v1/stamps 201 cafe=17 card=C-55120 in 21ms",
             {"http.response.status_code": 201}),
            ("warn", "slow query 1.21s: SELECT ... FROM stamp_cards WHERE customer_id = $1",
             {}),
            ("info", "GET /v1/cafes/17/rewards 200 in 6ms", {"http.response.status_code": 200}),
        ], 80)

    # ---- stamp-web: the BFF the app talks to, healthy, rolled 1 h 15 min ago
    web_roll = NOW - timedelta(hours=1, minutes=15)
    web = Ctr("stamp-web", f"{REG}/stamp-web:5.2.0", port=3000,
              requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "512Mi"},
              env={"STAMP_API_URL": "http://stamp-api.stampcard.svc"},
              readiness=http_probe("/api/healthz"))
    _, webs = steady(s, NS, "stamp-web", [web], nodes=nodes, replicas=3, revision=88,
                     rollout=web_roll,
                     old=(87, s.ago(days=3), [Ctr("stamp-web", f"{REG}/stamp-web:5.1.9")]))
    quiet(s, webs, "stamp-web", 171)
    for pod in webs:
        requests(s, pod, "stamp-web", rps=lambda t: 7.6, codes={
            "200": lambda t: 0.993 if t < gone else 0.31,
            "502": lambda t: 0.0005 if t < gone else 0.68,
            "304": lambda t: 0.0065})
    chatter(s, webs, "stamp-web", "stamp-web", [
        ("info", "stamp-web 5.2.0 listening on :3000", {}),
        ("info", "GET /card 200 in 31ms", {"http.response.status_code": 200}),
        ("info", "GET /rewards 200 in 18ms", {"http.response.status_code": 200}),
    ], 90, start=web_roll)
    chatter(s, webs, "stamp-web", "stamp-web", [
        ("error", "GET /card 502: upstream http://stamp-api.stampcard.svc/v1/cards/customer/"
         f"40971: connect ECONNREFUSED {vip}:80", {"http.response.status_code": 502,
                                                         "error.type": "ECONNREFUSED"}),
        ("error", "POST /stamp 502: upstream http://stamp-api.stampcard.svc/v1/stamps: connect "
         f"ECONNREFUSED {vip}:80", {"http.response.status_code": 502,
                                          "error.type": "ECONNREFUSED"}),
        ("info", "GET /static/app.7f3a.js 200 in 2ms", {"http.response.status_code": 200}),
    ], 210, start=secs(rollout, 2))

    # ---- red herrings elsewhere
    push = Ctr("push-notifier", f"{REG}/push-notifier:1.6.4", port=8080,
               requests={"cpu": "100m", "memory": "128Mi"}, limits={"memory": "256Mi"})
    _, pushes = steady(s, "messaging", "push-notifier", [push], nodes=nodes, replicas=2,
                       revision=12, rollout=s.ago(days=2, hours=9), service=None)
    quiet(s, pushes, "push-notifier", 97)
    chatter(s, pushes, "push-notifier", "push-notifier", [
        ("warn", "APNs 410 Unregistered for device token 7c1f...e2, dropping", {}),
        ("info", "sent 14 notifications (reward-ready) in 120ms", {}),
        ("warn", "FCM quota window 80% used, slowing batch size to 200", {}),
    ], 60)
    return s
