"""Recipe app: a third of the users cannot open their saved recipes since about 13:05. At
13:05 the favourites-store StatefulSet (three shards, each owning a third of the users)
was updated to 5.0.0 with MANAGEMENT_SERVER_PORT=8081: Spring Boot now serves its
actuator on 8081, but the readiness and liveness probes still ask the `http` port (8080)
for /actuator/health/*, which answers 404. The rolling update starts at the highest
ordinal: favourites-store-2 never becomes Ready, the liveness probe kills it every minute
or so and it is in CrashLoopBackOff; the update halts there (OrderedReady). Its headless
DNS name is not published while unready, so recipe-api cannot reach shard 2. Culprit:
the StatefulSet cookbook/favourites-store (probe_failure).

Red herrings: recipe-api 8.4.0 rolled out 45 minutes before the onset (healthy), its
ERROR lines about the trending list refresh all day, an image resizer's old OOMKilled
restart, a meal planner's noisy deprecation warnings."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import add_endpoints, add_service, gauge, set_times
from tests.data.holdout2._generator.kit import (
    NodeKind,
    cpu_seconds,
    crash_events,
    deploy,
    kills,
    lines,
    requests,
    restarts_series,
    runs_from,
    scraped,
    statefulset,
    working_set,
)
from tests.data.holdout3._generator.kit3 import (
    chatter,
    ghosts,
    hetzner_nodes,
    log_pod,
    namespaces,
    quiet,
    steady,
)
from tests.scenario_tools.common import MIB, truth
from tests.scenario_tools.kube import Ctr, Obj, Template, http_probe, iso
from tests.scenario_tools.sim import container_status

from .kit import Incident, ramp

ID = "saved-recipes-missing"
NOW = datetime.fromisoformat("2028-07-02T13:52:00+00:00")
NS = "cookbook"
REG = "ghcr.io/panfresh"
STORE = "favourites-store"


def _store(version: str, env: dict[str, str]) -> Template:
    ctr = Ctr(STORE, f"{REG}/{STORE}:{version}", port=8080,
              requests={"cpu": "500m", "memory": "1536Mi"}, limits={"memory": "2Gi"},
              env={"SHARD_COUNT": "3", "ROCKSDB_PATH": "/data/rocksdb",
                   "JAVA_TOOL_OPTIONS": "-XX:MaxRAMPercentage=70", **env},
              readiness=http_probe("/actuator/health/readiness", delay=20, period=10),
              liveness=http_probe("/actuator/health/liveness", delay=30, period=10,
                                  failures=3),
              mounts=[{"mountPath": "/data", "name": "data"}])
    return Template([ctr], service_account=STORE)


def build() -> Incident:
    s = Incident(
        id=ID, title="Saved recipes missing for some users", now=NOW,
        report="""\
Lots of app reviews and support chats saying "my saved recipes are gone" / the Favourites
tab shows an error, started a bit after 1pm. Not everyone is affected, my own account
works. recipe-api went out late morning, could that be it?
""",
        truth=truth(
            "probe_failure", "StatefulSet", NS, STORE,
            ["Liveness probe failed: HTTP probe failed with statuscode: 404",
             "MANAGEMENT_SERVER_PORT", "CrashLoopBackOff", "favourites-store-2"],
            "favourites-store 5.0.0 moved the actuator to the management port 8081 "
            "(MANAGEMENT_SERVER_PORT), but the StatefulSet's readiness and liveness probes "
            "still request /actuator/health/* on the http port 8080, which answers 404. "
            "favourites-store-2, the first pod updated, never becomes Ready and is killed by "
            "its liveness probe in a loop, so shard 2's users get errors. Point the probes at "
            "port 8081 (or drop the env) and let the rolling update continue."))
    set_times(s, 2.0, 60)
    c = s.cluster
    namespaces(s, {"default": 333, "kube-system": 333, NS: 301, "media": 280})
    kind = NodeKind("ccx33", "8", "31868964Ki", "7800m", "31254564Ki", "v1.31.9+k3s1",
                    "6.8.0-60-generic", "Ubuntu 24.04.2 LTS", runtime="containerd://2.0.5-k3s1")
    nodes = hetzner_nodes(s, 3, cluster="panfresh-prod", pool="agents", kind=kind,
                          location="fsn1", subnet=2, days=6.4)
    update = NOW - timedelta(minutes=47, seconds=8)

    # ---- favourites-store: shards 0 and 1 on 4.9.2, shard 2 updated to 5.0.0
    old_tpl = _store("4.9.2", {})
    new_tpl = _store("5.0.0", {"MANAGEMENT_SERVER_PORT": "8081"})
    created = s.ago(days=240)
    old_since = s.ago(days=5, hours=5)
    ss, shards = statefulset(
        s, NS, STORE, new_tpl, replicas=3, nodes=nodes,
        revisions=[(6, old_since, old_tpl), (7, update, new_tpl)],
        pod_revision=lambda i: 7 if i == 2 else 6,
        born=lambda i: update + timedelta(seconds=6) if i == 2 else old_since + timedelta(
            seconds=70 * i + 5),
        claim=("data", "40Gi", "hcloud-volumes"), created=created, service=STORE,
        statuses=None)
    pod2 = shards[2]
    started = update + timedelta(seconds=14)
    runs = runs_from(started, NOW, lambda st: 52 + s.rng.uniform(0, 4), pull=0.8)
    uid = pod2["metadata"]["uid"]
    status = container_status(runs, pod2["metadata"]["name"], NS, STORE, reason="Error",
                              code=143, uid=uid, ready=False)
    status["ready"] = False
    pod2_status = next(x for x in pod2["status"]["containerStatuses"] if x["name"] == STORE)
    for key in ("state", "lastState", "restartCount", "ready", "started"):
        pod2_status.pop(key, None)
    pod2_status.update(status)
    if "waiting" in status["state"]:
        pod2_status["started"] = False
    for cond in pod2["status"]["conditions"]:
        if cond["type"] in ("Ready", "ContainersReady"):
            cond.update({"status": "False", "reason": "ContainersNotReady",
                         "message": f"containers with unready status: [{STORE}]",
                         "lastTransitionTime": iso(update + timedelta(seconds=7))})
    new_rev = ss.revisions[-1]["metadata"]["name"]
    old_rev = ss.revisions[0]["metadata"]["name"]

    def fix(objects: list[Obj]) -> None:
        for obj in objects:
            if obj["kind"] == "StatefulSet" and obj["metadata"]["name"] == STORE:
                obj["metadata"]["generation"] = 7
                obj["status"].update({"availableReplicas": 2, "currentReplicas": 2,
                                      "currentRevision": old_rev, "observedGeneration": 7,
                                      "readyReplicas": 2, "replicas": 3,
                                      "updateRevision": new_rev, "updatedReplicas": 1})
    s.fixes.append(fix)
    headless = add_service(s, NS, STORE, {"app.kubernetes.io/name": STORE},
                           [{"name": "http", "port": 8080, "protocol": "TCP",
                             "targetPort": "http"}], created=created, headless=True)
    add_endpoints(s, headless, shards, [{"name": "http", "port": 8080, "protocol": "TCP"}])
    field_ = f"spec.containers{{{STORE}}}"
    crash_events(s, pod2, STORE, runs, f"{REG}/{STORE}:5.0.0", fresh_pull=True,
                 pull_seconds=6.2, size=211_384_920)
    c.event(pod2, "Scheduled", f"Successfully assigned {NS}/{STORE}-2 to "
            f"{pod2['spec']['nodeName']}", first=update + timedelta(seconds=6),
            component="default-scheduler", host="")
    c.event(ss.obj, "SuccessfulDelete", f"delete Pod {STORE}-2 in StatefulSet {STORE} "
            "successful", first=update - timedelta(seconds=31),
            component="statefulset-controller", host="")
    c.event(ss.obj, "SuccessfulCreate", f"create Pod {STORE}-2 in StatefulSet {STORE} "
            "successful", first=update + timedelta(seconds=6),
            component="statefulset-controller", host="")
    live_fails = [r.start + timedelta(seconds=30 + 10 * k) for r in runs for k in range(3)
                  if r.end is not None]
    c.event(pod2, "Unhealthy", "Liveness probe failed: HTTP probe failed with statuscode: 404",
            first=live_fails[0], last=live_fails[-1], count=len(live_fails), type_="Warning",
            field_path=field_)
    ready_fails = sum(max(1, int(((r.end or NOW) - r.start).total_seconds() - 20) // 10)
                      for r in runs)
    probes = [r.start + timedelta(seconds=20) for r in runs
              if r.start + timedelta(seconds=20) <= NOW]
    c.event(pod2, "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: "
            "404", first=probes[0], last=probes[-1] + timedelta(seconds=20),
            count=ready_fails, type_="Warning", field_path=field_)
    deaths = [r.end for r in runs if r.end is not None]
    c.event(pod2, "Killing", f"Container {STORE} failed liveness probe, will be restarted",
            first=deaths[0], last=deaths[-1], count=len(deaths), type_="Normal",
            field_path=field_)
    boot = [(0.0, "  .   ____          _            __ _ _"),
            (0.9, "INFO  c.p.f.FavouritesStoreApplication - Starting FavouritesStoreApplication "
                  "v5.0.0 using Java 21.0.7 with PID 1"),
            (4.1, "INFO  c.p.f.shard.ShardManager - shard 2/3 opened RocksDB at /data/rocksdb "
                  "(1,884,210 keys)"),
            (6.3, "INFO  o.s.b.w.embedded.tomcat.TomcatWebServer - Tomcat started on port "
                  "8080 (http) with context path '/'"),
            (6.6, "INFO  o.s.b.a.e.web.EndpointLinksResolver - Exposing 3 endpoints beneath "
                  "base path '/actuator'"),
            (6.8, "INFO  o.s.b.w.embedded.tomcat.TomcatWebServer - Tomcat started on port "
                  "8081 (http) with context path '/'"),
            (7.0, "INFO  c.p.f.FavouritesStoreApplication - Started FavouritesStoreApplication "
                  "in 7.4 seconds (process running for 8.1)")]
    prev = runs[-2] if runs[-1].end is None else runs[-1]
    s.pod_log(pod2, STORE, lines(prev.start, [
        *boot, (51.0, "INFO  o.s.b.w.e.tomcat.GracefulShutdown - Commencing graceful "
                "shutdown. Waiting for active requests to complete"),
        (51.3, "INFO  o.s.b.w.e.tomcat.GracefulShutdown - Graceful shutdown complete"),
        (51.5, "INFO  c.p.f.shard.ShardManager - shard 2/3 RocksDB closed cleanly")]),
        previous=True)
    if runs[-1].end is None:
        s.pod_log(pod2, STORE, lines(runs[-1].start, boot))
    restarts_series(s, pod2, STORE, 0, kills(runs))
    working_set(s, pod2, STORE, lambda t: 610 * MIB, times=scraped(s, runs, pod2))
    for i, pod in enumerate(shards[:2]):
        quiet(s, [pod], STORE, 1180 + 40 * i)
        requests(s, pod, STORE, rps=lambda t: 14.0, codes={"200": lambda t: 0.997,
                                                          "404": lambda t: 0.003},
                 median=lambda t: 0.006, buckets=(0.005, 0.025, 0.1, 0.5, 2.5))
        cpu_seconds(s, pod, STORE, lambda t: 0.21)
    chatter(s, shards[:2], STORE, STORE, [
        ("info", "compaction finished for column family favourites (L1->L2, 38 MiB)", {}),
        ("info", "PUT /v1/users/u-5521093/favourites/r-88120 204 in 3ms", {}),
        ("info", "GET /v1/users/u-1180227/favourites 200 in 5ms", {})], 60)
    ready = {"namespace": NS, "statefulset": STORE}
    gauge(s, "kube_statefulset_status_replicas_ready", ready,
          lambda t: 3.0 if t < update.timestamp() - 30 else 2.0,
          "The number of ready replicas per StatefulSet.")
    gauge(s, "kube_statefulset_replicas", ready, lambda t: 3.0,
          "Number of desired pods for a StatefulSet.")

    # ---- recipe-api: the report's suspect, rolled at 12:20
    roll = update - timedelta(minutes=45)
    api = Ctr("recipe-api", f"{REG}/recipe-api:8.4.0", port=8080,
              requests={"cpu": "300m", "memory": "512Mi"}, limits={"memory": "768Mi"},
              env={"FAVOURITES_SHARDS": "favourites-store-{0..2}.favourites-store.cookbook."
                   "svc.cluster.local:8080", "TRENDING_URL": "http://trending.cookbook.svc"},
              readiness=http_probe("/ready"), liveness=http_probe("/live", delay=15))
    work, apis = deploy(s, NS, "recipe-api", [api], replicas=4, nodes=nodes, revision=112,
                        rollout=roll, born=lambda i: roll + timedelta(seconds=5 + 33 * i),
                        old=(111, s.ago(days=3, hours=4), [Ctr(
                            "recipe-api", f"{REG}/recipe-api:8.3.2")]))
    gone = ghosts(s, work.revisions[0], nodes, [s.ago(days=3, hours=4) + timedelta(
        seconds=20 * i) for i in range(4)], [roll + timedelta(seconds=40 + 33 * i)
                                            for i in range(4)])
    hit = ramp(update - timedelta(seconds=30), 0.5)
    for pod in apis + gone:
        requests(s, pod, "recipe-api", rps=lambda t: 11.0, codes={
            "200": lambda t: 0.993 - 0.09 * hit(t), "503": lambda t: 0.001 + 0.09 * hit(t),
            "404": lambda t: 0.006}, median=lambda t: 0.045,
            buckets=(0.005, 0.025, 0.1, 0.5, 2.5))
        cpu_seconds(s, pod, "recipe-api", lambda t: 0.18)
        if pod in apis:
            quiet(s, [pod], "recipe-api", 344)
    trend = ("error", "failed to refresh trending list: upstream timeout after 2s (will "
             "retry in 60s)", {"error.type": "TrendingRefreshFailed"})
    normal = [("info", "GET /api/v2/recipes/r-40117 200 in 31ms", {}),
              ("info", "GET /api/v2/users/u-5521093/favourites 200 in 22ms", {}), trend]
    for ghost in gone:
        log_pod(s, ghost, "recipe-api", "recipe-api", normal, 10)
    chatter(s, apis, "recipe-api", "recipe-api", normal, 70)
    chatter(s, apis, "recipe-api", "recipe-api", [
        ("error", "GET /api/v2/users/u-7730112/favourites 503: shard 2 unavailable: dial tcp: "
         "lookup favourites-store-2.favourites-store.cookbook.svc.cluster.local on "
         "10.43.0.10:53: no such host", {"http.response.status_code": 503,
                                          "error.type": "ShardUnavailable"}),
        ("warn", "favourites shard 2 circuit open, failing fast for 30s", {}),
        ("info", "GET /api/v2/users/u-1180227/favourites 200 in 19ms", {})],
        80, start=update + timedelta(seconds=10))

    # ---- neighbours
    tr = Ctr("trending", f"{REG}/trending:1.6.0", port=8080,
             requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "384Mi"})
    _, trs = steady(s, NS, "trending", [tr], nodes=nodes, replicas=1, revision=9,
                    rollout=s.ago(days=5, hours=3), offset=2)
    quiet(s, trs, "trending", 160)
    chatter(s, trs, "trending", "trending", [
        ("info", "trending window recomputed: 500 recipes, took 2.6s", {}),
        ("warn", "recompute took longer than 2s, readers may time out", {})], 20)
    mp = Ctr("meal-planner", f"{REG}/meal-planner:3.1.4", port=8080,
             requests={"cpu": "200m", "memory": "384Mi"}, limits={"memory": "512Mi"})
    _, mps = steady(s, NS, "meal-planner", [mp], nodes=nodes, replicas=2, revision=47,
                    rollout=s.ago(days=1, hours=20), offset=1)
    quiet(s, mps, "meal-planner", 260)
    chatter(s, mps, "meal-planner", "meal-planner", [
        ("warn", "DEPRECATION: /api/v1/plans is deprecated and will be removed in 4.0", {}),
        ("info", "weekly plan generated for household h-22104 (5 dinners)", {})], 50)
    ir = Ctr("image-resizer", f"{REG}/image-resizer:2.2.1", port=8080,
             requests={"cpu": "500m", "memory": "768Mi"}, limits={"memory": "1Gi"})
    _, irs = steady(s, "media", "image-resizer", [ir], nodes=nodes, replicas=2, revision=33,
                    rollout=s.ago(days=4, hours=11),
                    restarted={1: (s.ago(days=2, hours=8), "OOMKilled", 137)})
    quiet(s, irs, "image-resizer", 590)
    chatter(s, irs, "image-resizer", "image-resizer", [
        ("info", "resized r-40117/hero.jpg to 4 variants in 310ms", {}),
        ("warn", "source image r-39001/step3.png is 9.8 MP, downscaling first", {})], 40)
    return s
