"""Sailing regatta live tracking: the live leaderboard freezes and jumps during the
offshore race. race-tracker is a Kafka Streams application run as a StatefulSet (RocksDB
state stores on claims). Its JVM has -Xmx1536m inside a 2Gi memory limit, which left room
enough on training days; with 140 boats sending GPS fixes every 2 s since the start at
11:30, the off-heap RocksDB block cache and memtables grow on top of the full heap and the
kernel kills each member every 30-35 minutes (OOMKilled, exit 137, no Java
OutOfMemoryError). Every kill triggers a consumer-group rebalance and a state restore, during
which the leaderboard does not move. Red herrings: results-web 9.3.0 rolled out 2 h ago in
the same namespace, the Kafka rebalance warnings themselves, a few normal timeouts of the
weather-overlay API, a readiness blip of the sponsor CMS in another namespace."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import alive, gauge, set_times
from tests.data.holdout2._generator.kit import (
    cpu_seconds,
    crash_events,
    requests,
    restarts_series,
    statefulset,
    storage_class,
    working_set,
)
from tests.data.holdout3._generator.kit3 import chatter, log_pod, namespaces, quiet, steady
from tests.scenario_tools.common import MIB, truth
from tests.scenario_tools.kube import Ctr, Obj, Template, ended, http_probe, running
from tests.scenario_tools.sim import Run

from .kit12 import Incident, NodeKind, provider_nodes, secs

ID = "regatta-leaderboard-freezing"
NOW = datetime.fromisoformat("2028-07-08T14:05:00+00:00")
NS = "regatta-live"
REG = "quay.io/seatrack"
IMAGE = f"{REG}/race-tracker:4.6.2"
LIMIT = 2048 * MIB
KILLS = ([118.3, 84.9, 52.2, 20.7], [104.6, 71.1, 39.8, 8.9], [127.2, 93.4, 61.0, 29.6, 2.1])


def build() -> Incident:
    s = Incident(
        id=ID, title="Regatta live leaderboard freezing", now=NOW,
        report="""\
The live leaderboard on the regatta site and in the app keeps freezing during today's
offshore race, positions stop updating for a minute or two and then jump. Started
around noon, commentators on the live stream noticed it too. Site itself loads fine.
""",
        truth=truth(
            "oom_killed", "StatefulSet", NS, "race-tracker",
            ["OOMKilled", "137", "2Gi", "-Xmx1536m"],
            "The race-tracker members are killed by the kernel for exceeding their 2Gi "
            "memory limit every 30-35 minutes since the race started: the JVM heap alone may "
            "take 1.5 GiB (-Xmx1536m) and RocksDB's off-heap caches grow on top of it with "
            "the race-day GPS volume. Each kill forces a rebalance and a state restore, so "
            "the leaderboard stalls. Raise the limit to 4Gi (or lower -Xmx and bound the "
            "RocksDB block cache with a RocksDBConfigSetter) and restart the members one by "
            "one."))
    set_times(s, 3.0, 60)
    c = s.cluster
    namespaces(s, {"default": 410, "kube-system": 410, "openshift-monitoring": 410, NS: 380,
                   "sponsors": 300})
    kind = NodeKind("m6i.2xlarge", "8", "32386544Ki", "7500m", "30103024Ki",
                    "v1.31.6", "5.14.0-427.55.1.el9_4.x86_64",
                    "Red Hat Enterprise Linux CoreOS 418.94.202503121149-0",
                    runtime="cri-o://1.31.6-2.rhaos4.18.git6b2a3c1.el9", pods="250")
    nodes = provider_nodes(s, "rosa", 4, kind, days=6.4, group="workers")
    start = NOW - timedelta(hours=2, minutes=35)
    storage_class(s, "gp3-csi", "ebs.csi.aws.com", {"type": "gp3", "encrypted": "true"},
                  created=s.ago(days=400), mode="WaitForFirstConsumer", default=True)

    def race(t: int) -> float:
        return 1.0 if t >= start.timestamp() else 0.0

    # ---- race-tracker: Kafka Streams members killed for memory
    tracker = Ctr("race-tracker", IMAGE, port=8080,
                  requests={"cpu": "1", "memory": "2Gi"}, limits={"memory": "2Gi"},
                  env={"JAVA_TOOL_OPTIONS": "-Xms1536m -Xmx1536m -XX:+UseG1GC",
                       "KAFKA_BOOTSTRAP": "b-1.seatrack-msk.kafka.eu-central-1.amazonaws.com"
                       ":9098",
                       "APPLICATION_ID": "race-tracker", "STATE_DIR": "/var/lib/streams",
                       "NUM_STREAM_THREADS": "4"},
                  mounts=[{"name": "state", "mountPath": "/var/lib/streams"}],
                  readiness=http_probe("/health/ready", delay=20, period=10),
                  liveness=http_probe("/health/live", delay=60, period=20, timeout=3))
    tpl = Template([tracker], service_account="race-tracker",
                   labels={"app.kubernetes.io/component": "streams"})
    created = s.ago(days=3, hours=4)
    runs_of: dict[int, list[Run]] = {}

    def states(i: int, started: datetime) -> dict[str, Obj]:
        runs, begin = [], started
        for m in KILLS[i]:
            death = NOW - timedelta(minutes=m)
            runs.append(Run(begin, death))
            begin = secs(death, 11.6 + 0.3 * i)
        runs.append(Run(begin, None))
        runs_of[i] = runs
        last = runs[-2]
        assert last.end is not None
        return {"race-tracker": running(runs[-1].start, restarts=len(KILLS[i]),
                                        last=ended("OOMKilled", 137, last.start, last.end))}
    work, pods = statefulset(
        s, NS, "race-tracker", tpl, replicas=3, nodes=nodes[1:],
        revisions=[(1, created, tpl)], pod_revision=lambda i: 1,
        born=lambda i: created + timedelta(seconds=52 * i + 1), statuses=states,
        claim=("state", "50Gi", "gp3-csi"), labels={"app.kubernetes.io/name": "race-tracker",
                                                    "app.kubernetes.io/part-of": "seatrack"},
        created=created, service="race-tracker-headless")
    for i, pod in enumerate(pods):
        runs = runs_of[i]
        meta = pod["metadata"]
        host = pod["spec"]["nodeName"]
        crash_events(s, pod, "race-tracker", runs[1:], IMAGE)
        kills = [int(r.end.timestamp()) for r in runs if r.end is not None]
        restarts_series(s, pod, "race-tracker", 0, kills)
        # the working set: flat before the race, then climbing to the limit in each run

        def mem(t: int, runs: list[Run] = runs) -> float | None:
            for r in runs:
                a = r.start.timestamp()
                b = r.end.timestamp() if r.end else None
                if t < a + 20 or (b is not None and t >= b):
                    continue
                if t < start.timestamp():
                    return 1090 * MIB
                a = max(a, start.timestamp())
                life = (b or a + 33 * 60) - a
                return 1180 * MIB + (t - a) / life * (LIMIT * 0.992 - 1180 * MIB)
            return None
        working_set(s, pod, "race-tracker", mem)
        gauge(s, "jvm_memory_used_bytes", {"namespace": NS, "pod": meta["name"],
                                           "area": "heap"},
              lambda t: (880 + 520 * race(t) * s.rng.uniform(0.7, 1.0)) * MIB,
              "The amount of used memory", times=alive(s, pod))
        gauge(s, "jvm_memory_max_bytes", {"namespace": NS, "pod": meta["name"],
                                          "area": "heap"}, lambda t: 1536 * MIB,
              "The maximum amount of memory in bytes that can be used for memory management",
              times=alive(s, pod))
        gauge(s, "kube_pod_container_status_last_terminated_reason",
              {"namespace": NS, "pod": meta["name"], "container": "race-tracker",
               "reason": "OOMKilled"}, lambda t, k=kills: 1.0 if t >= k[0] else None,
              "Describes the last reason the container was in terminated state.",
              times=alive(s, pod))
        gauge(s, "kube_pod_container_resource_limits",
              {"namespace": NS, "pod": meta["name"], "container": "race-tracker",
               "resource": "memory", "unit": "byte"}, lambda t: LIMIT,
              "The number of requested limit resource by a container.", times=alive(s, pod))
        cpu_seconds(s, pod, "race-tracker", lambda t: 0.3 + 0.9 * race(t), resets=kills)
        for k in kills:
            at = datetime.fromtimestamp(k, NOW.tzinfo)
            for off, lvl, msg in (
                    (13.5, "info", "Starting race-tracker 4.6.2 on Java 21.0.5 with PID 1"),
                    (19.2, "info", "stream-client [race-tracker-" + meta["name"][-1] + "] "
                     "State transition from CREATED to REBALANCING"),
                    (24.0, "warn", "Restoring state store boat-positions (changelog "
                     "race-tracker-boat-positions-changelog, partition "
                     f"{3 * i + 1}): 1 482 301 records to restore"),
                    (71.0, "info", "State transition from REBALANCING to RUNNING")):
                s.logs.add(secs(at, off), lvl, msg, namespace=NS, pod=meta["name"],
                           container="race-tracker", service="race-tracker", node=host)
        log_pod(s, pod, "race-tracker", "race-tracker", [
            ("info", "leaderboard snapshot published: 140 boats, leg 2 (Fastnet Rock)", {}),
            ("info", "committed offsets for 6 partitions of gps-fixes in 41ms", {}),
            ("warn", "late GPS fix from boat GBR-4417 (38s old), applied out of order", {}),
        ], 45)
        prev = runs[-2]
        assert prev.end is not None
        lived = (prev.end - prev.start).total_seconds()
        s.pod_log(pod, "race-tracker", [
            f"{prev.start:%Y-%m-%d %H:%M:%S}.104  INFO 1 --- [main] RaceTrackerApplication "
            ": Starting RaceTrackerApplication v4.6.2 using Java 21.0.5 with PID 1",
            f"{secs(prev.start, 1):%Y-%m-%d %H:%M:%S}.220  INFO 1 --- [main] "
            "RaceTrackerApplication : JVM heap: init=1536m max=1536m",
            f"{secs(prev.start, 6):%Y-%m-%d %H:%M:%S}.733  INFO 1 --- [main] KafkaStreams "
            ": stream-client State transition from CREATED to REBALANCING",
            f"{secs(prev.start, 58):%Y-%m-%d %H:%M:%S}.012  INFO 1 --- [StreamThread-2] "
            "KafkaStreams : State transition from REBALANCING to RUNNING",
            *[f"{secs(prev.start, 60 + 97 * j):%Y-%m-%d %H:%M:%S}.5{j % 10}1  INFO 1 --- "
              f"[StreamThread-{j % 4 + 1}] LeaderboardPublisher : snapshot published: 140 "
              "boats" for j in range(int((lived - 90) // 97))],
            f"{secs(prev.end, -4):%Y-%m-%d %H:%M:%S}.870  WARN 1 --- [StreamThread-3] "
            "GcMonitor : G1 Young Generation pause 412ms (heap 1491M/1536M)"],
            previous=True)

    # ---- kafka lag as the exporter sees it: spikes after each rebalance
    every_kill = sorted(k for r in runs_of.values() for k in
                        [int(x.end.timestamp()) for x in r if x.end is not None])

    def lag(t: int) -> float:
        base = 300 + 2200 * race(t)
        for k in every_kill:
            if 0 <= t - k < 240:
                base += 52_000 * (1 - (t - k) / 240)
        return base
    gauge(s, "kafka_consumergroup_lag_sum", {"namespace": "kafka-exporter",
                                             "consumergroup": "race-tracker",
                                             "topic": "gps-fixes"}, lag,
          "Current approximate lag of a consumer group at topic for all partitions")

    # ---- red herrings
    roll = NOW - timedelta(hours=2, minutes=3)
    web = Ctr("results-web", f"{REG}/results-web:9.3.0", port=3000,
              requests={"cpu": "300m", "memory": "384Mi"}, limits={"memory": "768Mi"},
              readiness=http_probe("/api/health"))
    _, webs = steady(s, NS, "results-web", [web], nodes=nodes, replicas=3, revision=66,
                     rollout=roll, service=80,
                     old=(65, s.ago(days=4), [Ctr("results-web", f"{REG}/results-web:9.2.7")]))
    quiet(s, webs, "results-web", 310)
    for pod in webs:
        requests(s, pod, "results-web", rps=lambda t: 6.0 + 31.0 * race(t), codes={
            "200": lambda t: 0.995, "304": lambda t: 0.004, "404": lambda t: 0.001},
            median=lambda t: 0.045, buckets=(0.05, 0.1, 0.25, 0.5, 1.0))
    chatter(s, webs, "results-web", "results-web", [
        ("info", "results-web 9.3.0 ready (new: split times at Fastnet Rock)", {}),
        ("info", "GET /live/offshore-2028 200 38ms", {"http.response.status_code": 200}),
        ("warn", "leaderboard snapshot unchanged for 94s, serving cached", {}),
        ("warn", "weather-overlay: GET api.windgrid.example/v2/tiles timed out after 3s",
         {"error.type": "TimeoutError"}),
    ], 90)
    cms = Ctr("sponsor-cms", f"{REG}/sponsor-cms:2.14.1", port=8080,
              requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "512Mi"},
              readiness=http_probe("/healthz", delay=10))
    _, cmss = steady(s, "sponsors", "sponsor-cms", [cms], nodes=nodes, replicas=1,
                     revision=9, rollout=s.ago(days=5, hours=3), offset=2)
    quiet(s, cmss, "sponsor-cms", 198)
    first = NOW - timedelta(minutes=44)
    ip = cmss[0]["status"]["podIP"]
    c.event(cmss[0], "Unhealthy", f'Readiness probe failed: Get "http://{ip}:8080/healthz": '
            "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            first=first, last=secs(first, 10), count=2, type_="Warning",
            field_path="spec.containers{sponsor-cms}")
    chatter(s, cmss, "sponsor-cms", "sponsor-cms", [
        ("info", "banner rotation: 6 sponsors, slot leaderboard-top", {}),
        ("warn", "image cache miss for sponsor logo helly-2028.webp", {}),
    ], 15)
    _ = work
    return s
