"""Regional air-quality network: the public map shows readings half an hour old during a
wildfire smoke episode. When PM2.5 passes 55 µg/m³ the sensors switch to one-minute
reporting, so from about 14:20 sensor-ingest receives four times its usual volume. Its pods
are capped at one CPU each (limits.cpu 1, no autoscaler): they sit at the limit, the CFS
throttles most periods, batch writes slow down and the ingest queue lags further and
further, which the map shows as stale data. The nodes have plenty of idle CPU. Red
herrings: readings-api 5.0.2 rolled out 41 minutes before the onset (the map's direct
upstream), the map's own stale-data errors, the report blaming the CDN, a few ordinary
timeseries write timeouts, an old OOM restart of station-registry."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gauge, set_times
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.data.holdout4._generator.kit4 import ramp
from tests.scenario_tools.common import const, container_metrics, http_metrics, truth
from tests.scenario_tools.common import nodes as plain_nodes
from tests.scenario_tools.kube import Ctr, http_probe
from tests.scenario_tools.parts import app, rollout

from .kit27 import Incident

ID = "air-quality-map-stale"
NOW = datetime.fromisoformat("2028-08-17T15:14:00+00:00")
NS = "airwatch"
REG = "harbor.luftdaten-nrw.example/airwatch"


def build() -> Incident:
    s = Incident(
        id=ID, title="Air-quality map showing stale readings", now=NOW,
        report="""\
The public air-quality map (luft.nrw) shows readings that are 20-40 minutes old, right in
the middle of the smoke episode, and the press office is getting calls. Started sometime
after 14:15 UTC. Probably the CDN caching the tiles again? Please check the airwatch
platform.
""",
        truth=truth(
            "cpu_throttling", "Deployment", NS, "sensor-ingest",
            ["container_cpu_cfs_throttled_periods_total", "cpu: '1'",
             "ingest_queue_lag_seconds", "high-frequency mode"],
            "The smoke episode switched ~1,900 sensors to one-minute reporting, quadrupling "
            "sensor-ingest's load; its pods are limited to 1 CPU and have no autoscaler, so "
            "they run at the limit with most CFS periods throttled, batch writes slow down and "
            "the ingest queue lags by tens of minutes. Raise sensor-ingest's CPU limit (or "
            "remove it) and add replicas/an HPA for episodes; the map recovers as the queue "
            "drains."))
    set_times(s, 3.0, 60)
    namespaces(s, {"default": 820, "kube-system": 820, NS: 790, "public-web": 760})
    nodes = plain_nodes(s, 4, subnet=52, region="eu-central-1", pool="workers",
                        instance="c7i.4xlarge", days=6.1)
    for n in nodes:
        n["status"]["capacity"]["cpu"] = "16"
        n["status"]["capacity"]["memory"] = "32386980Ki"
        n["status"]["allocatable"]["cpu"] = "15890m"
        n["status"]["allocatable"]["memory"] = "31369124Ki"
    onset = NOW - timedelta(minutes=54)

    def load(t: int) -> float:  # sensor posts relative to normal
        return 1.0 + 3.1 * ramp(t, onset, 16)

    def demand(t: int) -> float:  # cores one ingest pod would use without a limit
        return 0.29 * load(t)

    def used(t: int) -> float:
        return min(demand(t), 0.985)

    def throttled(t: int) -> float:
        d = demand(t)
        return 0.015 if d < 0.7 else min(0.83, 0.015 + 0.62 * (d - 0.7) / 0.6)

    def lag(t: int) -> float:
        if t < onset.timestamp() + 420:
            return 4.0 + 2.0 * ((t // 60) % 3)
        return 4.0 + (t - onset.timestamp() - 420) * 0.71

    def median(t: int) -> float:
        return 0.034 + 1.6 * max(0.0, (demand(t) - 0.7) / 0.6)

    _, ingests = app(
        s, NS, "sensor-ingest", f"{REG}/sensor-ingest:3.11.4", nodes, replicas=3, revision=46,
        rps=lambda t: 96.0 * load(t),
        codes={"202": lambda t: 0.997 - (0.012 if demand(t) > 1.0 else 0.0),
               "400": lambda t: 0.003, "503": lambda t: 0.012 if demand(t) > 1.0 else 0.0},
        median=median, cpu=used, memory_mib=340, throttle=throttled,
        limits={"cpu": "1", "memory": "768Mi"}, requests={"cpu": "500m", "memory": "512Mi"},
        env={"TSDB_URL": "http://tsdb-writer.airwatch.svc:8428", "BATCH_SIZE": "500",
             "WORKERS": "8"},
        rollout_at=s.ago(days=5, hours=5))
    for pod in ingests:
        gauge(s, "ingest_queue_lag_seconds", {"namespace": NS, "pod": pod["metadata"]["name"],
                                              "queue": "readings"},
              lambda t: lag(t) * s.rng.uniform(0.95, 1.05),
              "Age of the oldest reading waiting to be written.")
    gauge(s, "airwatch_sensors_high_frequency", {"namespace": NS, "network": "nrw"},
          lambda t: 1912.0 * ramp(t, onset, 16) + 14.0,
          "Sensors currently in one-minute reporting mode.")
    chatter(s, ingests, "sensor-ingest", "sensor-ingest", [
        ("info", "wrote batch of 500 readings in 182ms", {}),
        ("info", "sensor DE-NRW-0412 reported pm25=9.1 pm10=14.0", {}),
    ], 90, end=onset + timedelta(minutes=6))
    chatter(s, ingests, "sensor-ingest", "sensor-ingest", [
        ("info", "high-frequency mode active for 1,874 sensors (pm25 > 55)", {}),
        ("warn", "batch of 500 readings took 2.91s (budget 1s), queue lag 1240s", {}),
        ("warn", "worker pool busy 8/8, 41,220 readings buffered", {}),
        ("info", "wrote batch of 500 readings in 2604ms", {}),
        ("warn", "batch of 500 readings took 3.37s (budget 1s), queue lag 1885s", {}),
    ], 150, start=onset + timedelta(minutes=7))

    # ---- tsdb-writer: healthy, a few ordinary timeouts
    tsdb = Ctr("tsdb-writer", "docker.io/victoriametrics/vminsert:v1.118.0-cluster", port=8428,
               requests={"cpu": "1", "memory": "1Gi"}, limits={"memory": "2Gi"},
               readiness=http_probe("/health"))
    _, tsdbs = steady(s, NS, "tsdb-writer", [tsdb], nodes=nodes, replicas=2, revision=9,
                      rollout=s.ago(days=6, hours=3), offset=1, service=8428)
    for pod in tsdbs:
        container_metrics(s, pod, "tsdb-writer", memory=lambda t: 610 * 1024 ** 2,
                          cpu=lambda t: 0.41)
    chatter(s, tsdbs, "tsdb-writer", "tsdb-writer", [
        ("info", "flushed 48211 rows to vmstorage-0 in 31ms", {}),
        ("warn", "cannot send 1022 rows to vmstorage-2: timeout after 5s; retrying", {}),
        ("info", "flushed 50027 rows to vmstorage-1 in 29ms", {}),
    ], 40)

    # ---- readings-api 5.0.2, rolled out 41 minutes before the onset
    def api(version: str) -> Ctr:
        return Ctr("readings-api", f"{REG}/readings-api:{version}", port=8080,
                   requests={"cpu": "250m", "memory": "384Mi"}, limits={"memory": "512Mi"},
                   readiness=http_probe("/ready"))
    roll = rollout(s, NS, "readings-api", api, old="4.9.7", new="5.0.2",
                   at=onset - timedelta(minutes=41, seconds=20), revision=61, replicas=2,
                   node_list=nodes)
    for pod in roll.new_pods:
        container_metrics(s, pod, "readings-api", memory=lambda t: 290 * 1024 ** 2,
                          cpu=lambda t: 0.12)
        http_metrics(s, "readings-api", pod, rps=const(14.0), codes={
            "200": const(0.994), "304": const(0.004), "500": const(0.002)},
            median=const(0.021))
    chatter(s, roll.new_pods, "readings-api", "readings-api", [
        ("info", "readings-api 5.0.2 started (tile index v3, 2,408 stations)", {}),
        ("info", "GET /v2/stations/latest 200 18ms", {}),
        ("warn", "station DE-NRW-1177 has no reading for 1800s, marking stale", {}),
    ], 60, start=onset - timedelta(minutes=40))

    # ---- the map (victim): stale-data errors
    web = Ctr("aq-map-web", f"{REG}/aq-map-web:2.3.0", port=3000,
              requests={"cpu": "100m", "memory": "192Mi"}, limits={"memory": "256Mi"},
              readiness=http_probe("/api/health"))
    _, webs = steady(s, "public-web", "aq-map-web", [web], nodes=nodes, replicas=2,
                     revision=33, rollout=s.ago(days=4, hours=7), offset=2, service=3000)
    quiet(s, webs, "aq-map-web", 150)
    chatter(s, webs, "aq-map-web", "aq-map-web", [
        ("error", "ALERT data freshness: newest reading is 1520s old (threshold 900s)", {}),
        ("info", "GET /tiles/9/268/172.png 200 (cache HIT)", {}),
        ("warn", "readings-api /v2/stations/latest returned 212 stale stations", {}),
    ], 60, start=onset + timedelta(minutes=22))
    chatter(s, webs, "aq-map-web", "aq-map-web", [
        ("info", "GET /tiles/9/268/172.png 200 (cache HIT)", {}),
        ("info", "GET /api/stations 200 22ms", {}),
    ], 40, end=onset + timedelta(minutes=22))

    # ---- station-registry: an old OOM restart
    reg = Ctr("station-registry", f"{REG}/station-registry:1.7.2", port=8080,
              requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "384Mi"})
    _, regs = steady(s, NS, "station-registry", [reg], nodes=nodes, replicas=1, revision=14,
                     rollout=s.ago(days=6, hours=2), offset=3,
                     restarted={0: (s.ago(days=3, hours=11), "OOMKilled", 137)})
    quiet(s, regs, "station-registry", 210)
    return s
