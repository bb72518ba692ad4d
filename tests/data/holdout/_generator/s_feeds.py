"""Merchandising: partner product feeds stop refreshing. The partner-feed-sync CronJob was
moved to image 3.5.0, whose binary is no longer called feed-sync; the job's shell command
exits 127 ('not found') at once, every run hits its backoff limit."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.scenario_tools.common import Story, truth
from tests.scenario_tools.kube import Ctr, Obj, Template, Workload, ended, http_probe, iso, running

from .base import (
    aks_nodes,
    daemonset,
    deployment,
    gauge,
    host_network,
    http_series,
    logs_for,
    quiet_container,
    set_times,
)

ID = "partner-feed-stale"
NOW = datetime.fromisoformat("2027-01-16T09:52:30+00:00")
ACR = "acrmerchprod.azurecr.io/merch"
NS = "merchandising"
SUB = "5d8e2c14-0b6f-4f1e-9a3d-7c21e48b90f3"
GROUP = "rg-merch-prod_aks-merch-prod_westeurope"
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)


def build() -> Story:
    s = Story(
        id=ID,
        title="Partner product feeds not refreshing",
        now=NOW,
        report="""\
Google Shopping and two affiliate partners report that our product feed hasn't changed since
around 08:00 UTC, prices in it are stale (we had a price drop at 09:00 that isn't there).
The feed should refresh every 15 minutes. feed-api itself is up and serving. Can you check?
""",
        truth=truth(
            "crash_loop", "CronJob", NS, "partner-feed-sync",
            ["exit code 127", "exec: feed-sync: not found", "BackoffLimitExceeded", "3.5.0"],
            "The command of the partner-feed-sync CronJob still runs 'feed-sync', which image "
            "3.5.0 no longer ships under that name: fix the command for 3.5.0 (or roll the "
            "CronJob back to 3.4.2) and trigger a run by hand to refresh the feeds."),
        nested_logs=True)
    set_times(s, 3.0, 60)
    c = s.cluster
    for ns, days in (("default", 520), ("kube-system", 520), (NS, 301), ("ingress-nginx", 498)):
        c.namespace(ns, s.ago(days=days))
    system = aks_nodes(s, 2, pool="system", region="westeurope", instance="Standard_D4ds_v5",
                       kubelet="v1.30.6", cpu="4", memory="16365456Ki", alloc_cpu="3860m",
                       alloc_memory="12880784Ki", subscription=SUB, group=GROUP,
                       days=6.6)
    apps = aks_nodes(s, 3, pool="apps", region="westeurope", instance="Standard_D8ds_v5",
                     kubelet="v1.30.6", cpu="8", memory="32863272Ki", alloc_cpu="7820m",
                     alloc_memory="28263464Ki", subscription=SUB, group=GROUP,
                     days=5.2, first=3)
    nodes = system + apps
    changed = NOW - timedelta(hours=1, minutes=44, seconds=50)  # 08:07:40

    # ---- the CronJob
    def feed_ctr(version: str) -> Ctr:
        return Ctr("feed-sync", f"{ACR}/feed-sync:{version}", port=None,
                   requests={"cpu": "500m", "memory": "512Mi"}, limits={"memory": "1Gi"},
                   command=["/bin/sh", "-c",
                            "exec feed-sync --partners=all --since=20m --out=blob://partner-feeds/"],
                   env={"FEED_DB_HOST": "merch-pg-prod.postgres.database.azure.com",
                        "AZURE_STORAGE_ACCOUNT": "stmerchfeedsprod", "LOG_FORMAT": "text"},
                   env_from=[{"configMapRef": {"name": "feed-sync-config"}}])
    cj_labels = {"app.kubernetes.io/name": "partner-feed-sync", "app.kubernetes.io/part-of":
                 "merchandising"}
    new_tpl = Template([feed_ctr("3.5.0")], service_account="feed-sync", labels=dict(cj_labels))
    old_tpl = Template([feed_ctr("3.4.2")], service_account="feed-sync", labels=dict(cj_labels))
    cron_created = s.ago(days=211)
    cj_meta = c.meta("CronJob", "partner-feed-sync", NS, cron_created, cj_labels, generation=9,
                     annotations={"argocd.argoproj.io/tracking-id":
                                  "merch-batch:batch/CronJob:merchandising/partner-feed-sync"})

    def job_spec(tpl: Template) -> Obj:
        spec = tpl.spec()
        spec["restartPolicy"] = "Never"
        return {"backoffLimit": 2, "activeDeadlineSeconds": 900,
                "template": {"metadata": {"labels": dict(tpl.labels)}, "spec": spec}}
    cron = c.add({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": cj_meta,
                  "spec": {"schedule": "*/15 * * * *", "concurrencyPolicy": "Forbid",
                           "startingDeadlineSeconds": 300, "successfulJobsHistoryLimit": 3,
                           "failedJobsHistoryLimit": 3, "suspend": False,
                           "jobTemplate": {"metadata": {"labels": dict(cj_labels)},
                                           "spec": job_spec(new_tpl)}},
                  "status": {}})
    c.add({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": c.meta("ConfigMap", "feed-sync-config", NS, s.ago(days=211), cj_labels),
           "data": {"PARTNERS": "google-shopping,awin,tradetracker,idealo",
                    "FEED_FORMAT": "xml.gz", "PRICE_SOURCE": "pricing.merch.svc:9000"}})

    first_slot = NOW.replace(minute=0, second=0) - timedelta(hours=3)
    slots = []
    t = first_slot
    while t <= NOW:
        if t >= NOW - timedelta(hours=3, minutes=15):
            slots.append(t)
        t += timedelta(minutes=15)
    fail_slots = [x for x in slots if x > changed]
    ok_slots = [x for x in slots if x <= changed]
    kept_ok, kept_fail = ok_slots[-3:], fail_slots[-3:]
    hour_ago = NOW - timedelta(hours=1)
    job_results: list[tuple[str, datetime, datetime, bool, bool]] = []  # name, start, end, ok, kept
    cron_ref = c.owner(cron)
    cron_ref.pop("blockOwnerDeletion")
    cron_ref["blockOwnerDeletion"] = True
    runs_ok = s.rng

    def job_name(slot: datetime) -> str:
        return f"partner-feed-sync-{int(slot.timestamp()) // 60}"

    plans = {}
    for slot in slots:  # every run's timeline, kept or not: (created, [(born, start, end)])
        good = slot <= changed
        created = slot + timedelta(milliseconds=s.rng.randrange(80, 900))
        born, attempts = created + timedelta(milliseconds=40), []
        for a in range(1 if good else 3):
            started = born + timedelta(seconds=1.4 + s.rng.uniform(0, 0.7))
            if good:
                finished = started + timedelta(seconds=runs_ok.uniform(38, 57))
            else:
                finished = started + timedelta(milliseconds=s.rng.randrange(15, 70))
            attempts.append((born, started, finished))
            born = finished + timedelta(seconds=10 * 2 ** a + s.rng.uniform(0.5, 1.5))
        plans[slot] = (created, attempts)
        end = attempts[-1][2] + timedelta(seconds=1)
        job_results.append((job_name(slot), created, end, good,
                            slot in kept_ok or slot in kept_fail))

    for slot in slots:
        name = job_name(slot)
        good = slot <= changed
        created, attempts = plans[slot]
        keep = slot in kept_ok or slot in kept_fail
        if not keep:
            continue
        tpl = old_tpl if good else new_tpl
        juid = c.uid("Job", NS, name)
        jlabels = {"batch.kubernetes.io/controller-uid": juid, "batch.kubernetes.io/job-name":
                   name, "controller-uid": juid, "job-name": name}
        jmeta = c.meta("Job", name, NS, created, {**cj_labels, **jlabels},
                       annotations={"batch.kubernetes.io/cronjob-scheduled-timestamp":
                                    iso(slot), "batch.kubernetes.io/job-tracking": ""},
                       ownerReferences=[cron_ref], generation=1)
        jspec = job_spec(tpl)
        jspec["template"]["metadata"]["labels"] = {**jspec["template"]["metadata"]["labels"],
                                                   **jlabels}
        jspec.update({"completionMode": "NonIndexed", "completions": 1, "parallelism": 1,
                      "manualSelector": False, "podReplacementPolicy": "TerminatingOrFailed",
                      "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": juid}},
                      "suspend": False})
        job = c.add({"apiVersion": "batch/v1", "kind": "Job", "metadata": jmeta, "spec": jspec,
                     "status": {}})
        tpl_labels = {**tpl.labels, **jlabels}
        jtpl = Template(list(tpl.containers), service_account="feed-sync", labels=tpl_labels)
        work = Workload(job, jtpl, 1)
        node_pick = apps[(int(slot.timestamp()) // 900) % len(apps)]
        pods = []
        for a, (pstart, started, finished) in enumerate(attempts):
            pname = f"{name}-{c.token(5)}"
            node = apps[(apps.index(node_pick) + a) % len(apps)]
            if good:
                term = ended("Completed", 0, started, finished)
            else:
                term = ended("Error", 127, started, finished)
            status = {"state": term, "ready": False, "started": False, "restartCount": 0,
                      "lastState": {}}
            pod = c.pod(work, None, node=node, created=pstart, statuses={"feed-sync": status},
                        name=pname, phase="Succeeded" if good else "Failed")
            pod["metadata"]["generateName"] = f"{name}-"
            pod["metadata"]["annotations"] = {"batch.kubernetes.io/job-tracking": ""}
            pod["spec"]["restartPolicy"] = "Never"
            why = "PodCompleted" if good else "PodFailed"
            for cond in pod["status"]["conditions"]:
                if cond["type"] in ("Ready", "ContainersReady"):
                    cond.update({"status": "False", "reason": why,
                                 "lastTransitionTime": iso(finished + timedelta(seconds=1))})
                    cond.pop("message", None)
                if cond["type"] == "PodReadyToStartContainers":
                    cond.update({"status": "False",
                                 "lastTransitionTime": iso(finished + timedelta(seconds=2))})
            pods.append((pod, pstart, started, finished))
            if good:
                s.pod_log(pod, "feed-sync", _good_run(s, started, finished))
            else:
                s.pod_log(pod, "feed-sync", ["/bin/sh: 1: exec: feed-sync: not found"])
            _ship(s, pod, started, finished, good)
        final = pods[-1][3] + timedelta(seconds=1)
        if good:
            job["status"] = {"completionTime": iso(final), "conditions": [
                {"type": "Complete", "status": "True", "lastProbeTime": iso(final),
                 "lastTransitionTime": iso(final)}], "ready": 0, "startTime": iso(created),
                "succeeded": 1, "terminating": 0, "uncountedTerminatedPods": {}}
        else:
            job["status"] = {"conditions": [
                {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                 "message": "Job has reached the specified backoff limit",
                 "lastProbeTime": iso(final), "lastTransitionTime": iso(final)}],
                "failed": 3, "ready": 0, "startTime": iso(created), "terminating": 0,
                "uncountedTerminatedPods": {}}
        if created >= hour_ago:
            for pod, born, started, _ in pods:
                c.event(job, "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}",
                        first=born, component="job-controller")
                field = "spec.containers{feed-sync}"
                c.event(pod, "Scheduled", f"Successfully assigned {NS}/{pod['metadata']['name']} "
                        f"to {pod['spec']['nodeName']}", first=born, component="default-scheduler",
                        host="")
                c.event(pod, "Pulled", f'Container image "{ACR}/feed-sync:3.5.0" already present '
                        "on machine", first=started - timedelta(seconds=1), field_path=field)
                c.event(pod, "Created", "Created container: feed-sync",
                        first=started - timedelta(seconds=1), field_path=field)
                c.event(pod, "Started", "Started container feed-sync", first=started,
                        field_path=field)
            if not good:
                c.event(job, "BackoffLimitExceeded", "Job has reached the specified backoff limit",
                        first=final, type_="Warning", component="job-controller")
    # CronJob controller events of the hour
    failed_order: list[str] = []
    ok_order: list[str] = []
    for name, created, end, good, _ in job_results:
        (ok_order if good else failed_order).append(name)
        if created >= hour_ago:
            c.event(cron, "SuccessfulCreate", f"Created job {name}", first=created,
                    component="cronjob-controller")
        if end >= hour_ago and end <= NOW:
            c.event(cron, "SawCompletedJob", f"Saw completed job: {name}, status: "
                    f"{'Complete' if good else 'Failed'}", first=end,
                    component="cronjob-controller")
            history = ok_order if good else failed_order
            if len(history) > 3:
                c.event(cron, "SuccessfulDelete", f"Deleted job {history[-4]}", first=end,
                        component="cronjob-controller")
    last_ok = [r for r in job_results if r[3]][-1]
    cron["status"] = {"lastScheduleTime": iso(slots[-1]), "lastSuccessfulTime": iso(last_ok[2])}

    # ---- kube-state-metrics of the jobs and the CronJob
    for name, created, end, good, keep in job_results:
        deleted = None
        if not keep:  # deleted when a later run of the same outcome finished
            later = [r for r in job_results if r[3] == good and r[1] > created]
            deleted = later[2][2].timestamp() if len(later) >= 3 else None
        alive_from = created.timestamp() + 15
        for metric, value in (("kube_job_status_failed", 0 if good else 3),
                              ("kube_job_status_succeeded", 1 if good else 0)):
            gauge(s, metric, {"namespace": NS, "job_name": name},
                  lambda t, v=value, e=end, a=alive_from, d=deleted: None
                  if t < a or (d and t > d) else (v if t >= e.timestamp() else 0.0),
                  "The number of pods which reached Phase Failed." if metric.endswith("failed")
                  else "The number of pods which reached Phase Succeeded.")
    gauge(s, "kube_cronjob_status_last_successful_time", {"namespace": NS,
                                                         "cronjob": "partner-feed-sync"},
          lambda t: max((r[2].timestamp() for r in job_results if r[3] and r[2].timestamp() <= t),
                        default=(first_slot - timedelta(minutes=15, seconds=-49)).timestamp()),
          "LastSuccessfulTime keeps information of when was the last time the job was "
          "completed successfully.")
    gauge(s, "kube_cronjob_status_last_schedule_time", {"namespace": NS,
                                                       "cronjob": "partner-feed-sync"},
          lambda t: max(x.timestamp() for x in [*slots, first_slot - timedelta(minutes=15)]
                        if x.timestamp() <= t),
          "LastScheduleTime keeps information of when was the last time the job was "
          "successfully scheduled.")

    # ---- feed-api serves the last good snapshot
    last_good_end = last_ok[2]
    api = Ctr("feed-api", f"{ACR}/feed-api:2.8.3", port=8080,
              requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "512Mi"},
              readiness=http_probe("/health/ready", delay=5), liveness=http_probe(
                  "/health/live", delay=15, period=20))
    _, apis = deployment(s, NS, "feed-api", [api], replicas=2, node_list=apps, revision=27,
                         rollout=s.ago(days=3, hours=8))
    for pod in apis:
        quiet_container(s, pod, "feed-api", 188, cpu=0.07, limit_mib=512)
        http_series(s, pod, "feed-api", rps=lambda t: 3.2,
                    codes={"200": lambda t: 0.97, "304": lambda t: 0.025,
                           "404": lambda t: 0.005}, median=lambda t: 0.021, buckets=BUCKETS)
        for partner in ("google-shopping", "awin", "tradetracker", "idealo"):
            gauge(s, "feed_snapshot_age_seconds", {"namespace": NS, "service": "feed-api",
                                                   "pod": pod["metadata"]["name"],
                                                   "partner": partner},
                  lambda t: t - max([r[2].timestamp() for r in job_results
                                     if r[3] and r[2].timestamp() <= t]
                                    + [(first_slot - timedelta(minutes=14)).timestamp()]),
                  "Age of the feed snapshot being served, in seconds.")
    stale_from = last_good_end + timedelta(minutes=30)
    logs_for(s, apis, "feed-api", "feed-api", [
        ("info", "GET /feeds/google-shopping.xml.gz 200 (18.4 MB)", {"http.response.status_code":
                                                                     200, "url.path":
                                                                     "/feeds/google-shopping.xml.gz"}),
        ("info", "GET /feeds/awin.csv.gz 304", {"http.response.status_code": 304}),
        ("info", "loaded snapshot from blob://partner-feeds/", {}),
    ], 90, start=NOW - timedelta(hours=3), end=NOW)
    logs_for(s, apis, "feed-api", "feed-api", [
        ("warn", f"no new snapshot in blob://partner-feeds/ since {iso(last_good_end)}, "
         "serving the previous one", {}),
    ], 12, start=stale_from, end=NOW)

    # ---- red herrings
    pw = Ctr("price-watcher", f"{ACR}/price-watcher:1.22.0", port=8080,
             requests={"cpu": "100m", "memory": "192Mi"}, limits={"memory": "384Mi"},
             readiness=http_probe("/ready", delay=5))
    old = s.ago(days=2, hours=5, minutes=31)

    def pw_states(i: int, started: datetime) -> dict:
        if i:
            return {}
        return {"price-watcher": running(old, restarts=1, last=ended("Error", 1, started,
                                                                     old - timedelta(seconds=9)))}
    _, pws = deployment(s, NS, "price-watcher", [pw], replicas=2, node_list=apps, revision=14,
                        rollout=s.ago(days=4, hours=1), statuses=pw_states, node_offset=1)
    for pod in pws:
        quiet_container(s, pod, "price-watcher", 121, cpu=0.05, limit_mib=384)
    logs_for(s, pws, "price-watcher", "price-watcher", [
        ("warn", "competitor API returned 429 Too Many Requests, retrying in 2s (source=pricespy)",
         {"http.response.status_code": 429}),
        ("info", "checked 500 SKUs against pricespy, 14 below our price", {}),
        ("error", "scrape of source=geizhals failed: ReadTimeout after 10s", {"error.type":
                                                                             "ReadTimeout"}),
        ("info", "published 14 price alerts to merch.price-alerts", {}),
    ], 110, start=NOW - timedelta(hours=3), end=NOW)
    # a warm-up CronJob whose one failed run two days ago is still in its history
    warm_tpl = Template([Ctr("image-cache-warmup", f"{ACR}/cdn-tools:0.6.1", port=None,
                             requests={"cpu": "100m", "memory": "128Mi"},
                             limits={"memory": "256Mi"},
                             command=["python", "-m", "cdn_tools.warmup", "--top=2000"])],
                        service_account="default", labels={"app.kubernetes.io/name":
                                                           "image-cache-warmup"})
    wmeta = c.meta("CronJob", "image-cache-warmup", NS, s.ago(days=160),
                   {"app.kubernetes.io/name": "image-cache-warmup"}, generation=2)
    wspec = warm_tpl.spec()
    wspec["restartPolicy"] = "OnFailure"
    warm = c.add({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": wmeta,
                  "spec": {"schedule": "20 * * * *", "concurrencyPolicy": "Allow",
                           "successfulJobsHistoryLimit": 1, "failedJobsHistoryLimit": 1,
                           "suspend": False, "jobTemplate": {"spec": {
                               "backoffLimit": 1, "template": {"metadata": {"labels": dict(
                                   warm_tpl.labels)}, "spec": wspec}}}},
                  "status": {"lastScheduleTime": iso(NOW.replace(minute=20, second=0)),
                             "lastSuccessfulTime": iso(NOW.replace(minute=21, second=47))}})
    wslot = NOW.replace(minute=20, second=0) - timedelta(days=2, hours=3)
    wname = f"image-cache-warmup-{int(wslot.timestamp()) // 60}"
    wuid = c.uid("Job", NS, wname)
    wl = {"batch.kubernetes.io/controller-uid": wuid, "batch.kubernetes.io/job-name": wname,
          "controller-uid": wuid, "job-name": wname}
    wjob = c.add({"apiVersion": "batch/v1", "kind": "Job",
                  "metadata": c.meta("Job", wname, NS, wslot, {**warm_tpl.labels, **wl},
                                     ownerReferences=[c.owner(warm)], generation=1),
                  "spec": {"backoffLimit": 1, "completions": 1, "parallelism": 1,
                           "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid":
                                                        wuid}},
                           "template": {"metadata": {"labels": {**warm_tpl.labels, **wl}},
                                        "spec": wspec}},
                  "status": {"conditions": [{
                      "type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                      "message": "Job has reached the specified backoff limit",
                      "lastProbeTime": iso(wslot + timedelta(minutes=3, seconds=12)),
                      "lastTransitionTime": iso(wslot + timedelta(minutes=3, seconds=12))}],
                      "failed": 1, "ready": 0, "startTime": iso(wslot), "terminating": 0,
                      "uncountedTerminatedPods": {}}})
    wwork = Workload(wjob, Template(list(warm_tpl.containers), labels={**warm_tpl.labels, **wl}), 1)
    wstart = wslot + timedelta(seconds=3)
    wpod = c.pod(wwork, None, node=apps[0], created=wslot + timedelta(seconds=1),
                 name=f"{wname}-{c.token(5)}", phase="Failed",
                 statuses={"image-cache-warmup": {
                     "state": ended("Error", 1, wstart + timedelta(seconds=95),
                                    wstart + timedelta(minutes=3, seconds=9)),
                     "ready": False, "started": False, "restartCount": 1,
                     "lastState": ended("Error", 1, wstart, wstart + timedelta(seconds=84))}})
    wpod["spec"]["restartPolicy"] = "OnFailure"
    for cond in wpod["status"]["conditions"]:
        if cond["type"] in ("Ready", "ContainersReady"):
            cond.update({"status": "False", "reason": "PodFailed"})
            cond.pop("message", None)
    s.pod_log(wpod, "image-cache-warmup", [
        "INFO warming 2000 most viewed product images on cdn-merch.azureedge.net",
        "ERROR requests.exceptions.ConnectionError: ('Connection aborted.', "
        "ConnectionResetError(104, 'Connection reset by peer'))"])
    # ingress-nginx with its ordinary noise
    ing = Ctr("controller", "registry.k8s.io/ingress-nginx/controller:v1.11.3", port=80,
              requests={"cpu": "100m", "memory": "90Mi"}, limits={},
              args=["/nginx-ingress-controller", "--election-id=ingress-nginx-leader",
                    "--controller-class=k8s.io/ingress-nginx"],
              readiness=http_probe("/healthz", 10254, delay=10))
    _, ings = deployment(s, "ingress-nginx", "ingress-nginx-controller", [ing], replicas=2,
                         node_list=system, revision=5, rollout=s.ago(days=6, hours=2),
                         labels={"app.kubernetes.io/name": "ingress-nginx",
                                 "app.kubernetes.io/component": "controller"},
                         sa="ingress-nginx")
    for pod in ings:
        quiet_container(s, pod, "controller", 236, cpu=0.04)
    logs_for(s, ings, "controller", "ingress-nginx", [
        ("info", '20.54.12.9 - - "GET /feeds/google-shopping.xml.gz HTTP/1.1" 200 19301822 "-" '
         '"Google-Shopping-Feed/1.0"', {"http.response.status_code": 200}),
        ("info", '81.4.110.2 - - "GET /feeds/awin.csv.gz HTTP/1.1" 304 0', {}),
        ("warn", '185.191.171.4 - - "GET /wp-login.php HTTP/1.1" 404 146', {
            "http.response.status_code": 404}),
        ("warn", 'Error obtaining Endpoints for Service "merchandising/legacy-feeds": no object '
         'matching key "merchandising/legacy-feeds" in local store', {}),
    ], 80, start=NOW - timedelta(hours=3), end=NOW)
    # kube-system
    dns = Ctr("coredns", "mcr.microsoft.com/oss/v2/kubernetes/coredns:v1.9.4-5", port=53,
              port_name="dns", requests={"cpu": "100m", "memory": "70Mi"},
              limits={"memory": "500Mi"}, args=["-conf", "/etc/coredns/Corefile"],
              readiness=http_probe("/ready", 8181, delay=0))
    _, dnss = deployment(s, "kube-system", "coredns", [dns], replicas=2, node_list=system,
                         revision=3, rollout=s.ago(days=6.4),
                         labels={"k8s-app": "kube-dns", "kubernetes.io/cluster-service": "true"},
                         selector={"k8s-app": "kube-dns", "version": "v20"}, service=None)
    for pod in dnss:
        quiet_container(s, pod, "coredns", 31)
    cnm = Ctr("cloud-node-manager", "mcr.microsoft.com/oss/kubernetes/azure-cloud-node-manager:"
              "v1.30.7", port=None, requests={"cpu": "50m", "memory": "50Mi"},
              limits={"memory": "512Mi"}, command=["cloud-node-manager",
                                                   "--node-name=$(NODE_NAME)",
                                                   "--wait-routes=false"])
    _, cnms = daemonset(s, "kube-system", "cloud-node-manager", [cnm], node_list=nodes,
                        generation=4, since=s.ago(days=6.7),
                        labels={"component": "cloud-node-manager",
                                "kubernetes.azure.com/managedby": "aks"})
    host_network(cnms)
    for pod in cnms:
        quiet_container(s, pod, "cloud-node-manager", 17)
    return s


def _good_run(s: Story, started: datetime, finished: datetime) -> list[str]:
    lines, t = [], started
    out = [("INFO", "feed-sync 3.4.2 starting: partners=all since=20m out=blob://partner-feeds/")]
    for partner, n in (("google-shopping", 18422), ("awin", 9310), ("tradetracker", 9288),
                       ("idealo", 12007)):
        count = n + s.rng.randrange(-40, 40)
        out.append(("INFO", f"exported {count} offers for partner={partner}"))
        out.append(("INFO", f"uploaded blob://partner-feeds/{partner}/"
                    f"{started.strftime('%Y-%m-%dT%H%M')}.xml.gz"))
    out.append(("INFO", f"done in {(finished - started).total_seconds():.1f}s"))
    step = (finished - started) / len(out)
    for level, msg in out:
        lines.append(f"{t.strftime('%Y-%m-%dT%H:%M:%SZ')} {level} {msg}")
        t += step
    return lines


def _ship(s: Story, pod: Obj, started: datetime, finished: datetime, good: bool) -> None:
    """What Fluent Bit shipped from a run of the job."""
    meta = pod["metadata"]
    common = {"namespace": NS, "pod": meta["name"], "container": "feed-sync",
              "service": "partner-feed-sync", "node": pod["spec"]["nodeName"]}
    if not good:
        s.logs.add(finished - timedelta(milliseconds=3), "error",
                   "/bin/sh: 1: exec: feed-sync: not found", stream="stderr", **common)
        return
    for line in _good_run(s, started, finished):
        stamp, level, msg = line.split(" ", 2)
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00")) + timedelta(
            milliseconds=s.rng.randrange(0, 999))
        s.logs.add(min(when, finished), level.lower(), msg, stream="stdout", **common)
