"""Car rental returns: the airport return kiosks hang at "Analysing photos". damage-inspector
decodes the kiosks' 48 MP damage photos in memory; with the Friday afternoon return peak each
pod decodes three or four photos at once and its working set outgrows the 384Mi limit: the
kernel kills it (OOMKilled, exit 137) every six to nine minutes since 15:52, and the kubelet
backs off between restarts. Nothing about the image changed (4.7.2 runs since four days).
Red herrings: return-kiosk-web 5.3.0 rolled out at 15:05 in the same namespace (and shows
the 502s it proxies from damage-inspector), invoice-renderer's OOM restart three days ago,
fleet telematics warnings about MQTT keepalives, a "photo-store slow" warning in the
inspector itself."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import crash_runs, eks_nodes, set_times
from tests.data.holdout2._generator.kit import (
    cpu_seconds,
    crash_events,
    deploy,
    kills,
    limit_series,
    requests,
    restarts_series,
    working_set,
)
from tests.data.holdout3._generator.kit3 import (
    chatter,
    ksm_deployment,
    log_pod,
    namespaces,
    quiet,
    steady,
)
from tests.data.holdout4._generator.kit4 import log_lines, ramp
from tests.scenario_tools.common import MIB, truth
from tests.scenario_tools.kube import Ctr, http_probe
from tests.scenario_tools.sim import container_status

from .kit22 import Incident, last_reason, mins, rolled

ID = "return-kiosk-photo-check-hanging"
NOW = datetime.fromisoformat("2028-04-21T16:44:00+00:00")
NS = "fleet-returns"
ECR = "318260417752.dkr.ecr.eu-central-1.amazonaws.com"
IMAGE = f"{ECR}/returns/damage-inspector:4.7.2"
LIMIT = 384 * MIB
ONSET = datetime.fromisoformat("2028-04-21T15:52:10+00:00")


def build() -> Incident:
    s = Incident(
        id=ID, title="Return kiosks hang at the photo damage check", now=NOW,
        report="""\
Airport return kiosks (MUC, FRA, HAM) hang at "Analysing photos" since about 15:50, agents
are doing the damage check by hand and the queues are long. Pickups and check-outs work
fine. The new kiosk web release went out this afternoon, could that be it?
""",
        truth=truth(
            "oom_killed", "Deployment", NS, "damage-inspector",
            ["OOMKilled", "384Mi", "48.8 MP", "decodes in flight"],
            "damage-inspector's containers are killed for exceeding their 384Mi memory "
            "limit: under the afternoon return peak each pod decodes several 48 MP photos "
            "at once. Raise the memory limit (about 1Gi) or cap DECODE_CONCURRENCY / "
            "downscale photos before decoding; return-kiosk-web 5.3.0 only proxies the "
            "errors."))
    set_times(s, 3.0, 60)
    c = s.cluster
    namespaces(s, {"default": 480, "kube-system": 480, NS: 402, "billing": 455,
                   "telematics": 311})
    nodes = eks_nodes(s, 4, region="eu-central-1", subnet=44, pool="apps-m7i",
                      instance="m7i.2xlarge", kubelet="v1.32.9-eks-0c1c2b4",
                      kernel="6.1.150-174.273.amzn2023.x86_64",
                      os_image="Amazon Linux 2023.9.20251014", cpu="8", memory="32386556Ki",
                      alloc_cpu="7910m", alloc_memory="31369724Ki", days=5.6)

    # ---- damage-inspector: OOMKilled since the peak started
    ctr = Ctr("damage-inspector", IMAGE, port=8080,
              requests={"cpu": "500m", "memory": "320Mi"}, limits={"memory": "384Mi"},
              env={"DECODE_CONCURRENCY": "4", "PHOTO_STORE_BUCKET": "rentals-return-photos",
                   "MODEL_PATH": "/models/dent-scratch-v9.onnx"},
              readiness=http_probe("/ready", delay=5, period=10),
              liveness=http_probe("/live", delay=20, period=15, timeout=2))
    rollout = s.ago(days=4, hours=2, minutes=37)
    first_death = [mins(ONSET, 0), mins(ONSET, 3.7), mins(ONSET, 6.2)]
    runs_of: dict[int, list] = {}

    def states(i: int, name: str, started: datetime) -> dict[str, dict]:
        runs = crash_runs(s, started, first_death[i],
                          lambda st: s.rng.uniform(370, 540))
        runs_of[i] = runs
        uid = c.uid("Pod", NS, name)
        return {"damage-inspector": container_status(runs, name, NS, "damage-inspector",
                                                     reason="OOMKilled", code=137, uid=uid,
                                                     ready=True)}
    _, pods = deploy(s, NS, "damage-inspector", [ctr], nodes=nodes[1:], replicas=3,
                        revision=18, rollout=rollout, statuses=states,
                        annotations={"prometheus.io/scrape": "true",
                                     "prometheus.io/port": "8080"},
                        old=(17, s.ago(days=11), [Ctr("damage-inspector",
                                                     f"{ECR}/returns/damage-inspector:4.7.1")]))
    for i, pod in enumerate(pods):
        runs = runs_of[i]
        if "waiting" in pod["status"]["containerStatuses"][0]["state"]:
            pod["status"]["containerStatuses"][0]["ready"] = False
        crash_events(s, pod, "damage-inspector", runs[1:], IMAGE)
        dead = [int(r.end.timestamp()) for r in runs if r.end is not None]

        def mem(t: int, runs: list = runs) -> float | None:
            for r in runs:
                start = r.start.timestamp()
                end = r.end.timestamp() if r.end else NOW.timestamp() + 400
                if start <= t < end:
                    base = 168 * MIB + 37 * MIB * ramp(t, r.start, 1.5)
                    climb = (LIMIT * 0.99 - base) * max(0.0, 1 - (end - t) / 420)
                    return min(LIMIT * 0.995, base + climb)
            return None
        working_set(s, pod, "damage-inspector", mem,
                    times=[t for t in s.times if mem(t) is not None])
        restarts_series(s, pod, "damage-inspector", 0, dead)
        limit_series(s, pod, "damage-inspector", LIMIT)
        cpu_seconds(s, pod, "damage-inspector",
                    lambda t: 0.31 + 0.45 * ramp(t, mins(ONSET, -25), 20),
                    resets=kills(runs))
        last_reason(s, pod, "damage-inspector", "OOMKilled", first_death[i])
        requests(s, pod, "damage-inspector", rps=lambda t: 0.9 + 0.8 * ramp(
            t, mins(ONSET, -25), 20), codes={"200": lambda t: 0.985, "422": lambda t: 0.015},
            resets=kills(runs), times=[t for t in s.times if mem(t) is not None])
        prev = [r for r in runs if r.end is not None][-1]
        log_lines(s, pod, "damage-inspector", [
            (prev.start + timedelta(seconds=0.4), "INFO  damage-inspector 4.7.2 starting "
             "(go1.22.8, onnxruntime 1.19.2)"),
            (prev.start + timedelta(seconds=2.9), "INFO  model dent-scratch-v9 loaded "
             "(112.4 MiB)"),
            (prev.start + timedelta(seconds=3.2), "INFO  listening on :8080, "
             "decode concurrency 4"),
            (prev.end - timedelta(seconds=71.2), "INFO  return R-7731904 (MUC): 12 photos "
             "analysed in 8.1s, 1 dent found"),
            (prev.end - timedelta(seconds=22.5), "WARN  photo-store GET rentals-return-photos/"
             "R-7731950/IMG_0007.jpg slow (2.3s), retrying"),
            (prev.end - timedelta(seconds=3.8), "INFO  decoding R-7731962/IMG_0004.jpg "
             "8064x6048 (48.8 MP), 3 decodes in flight"),
            (prev.end - timedelta(seconds=1.1), "INFO  decoding R-7731958/IMG_0011.jpg "
             "8064x6048 (48.8 MP), 4 decodes in flight"),
        ], previous=True)
        chatter(s, [pod], "damage-inspector", "damage-inspector", [
            ("info", "return R-7731022 (FRA): 9 photos analysed in 4.6s, no damage", {}),
            ("info", "return R-7731187 (HAM): 14 photos analysed in 7.9s, 2 scratches found",
             {}),
            ("info", "decoding IMG_0003.jpg 8064x6048 (48.8 MP), 2 decodes in flight", {}),
            ("warn", "photo-store GET rentals-return-photos slow (2.1s), retrying", {}),
        ], 130)
    ksm_deployment(s, NS, "damage-inspector", lambda t: 3.0,
                   lambda t: 3.0 if t < ONSET.timestamp() else 2.0 if t % 180 < 120 else 1.0,
                   lambda t: 0.0 if t < ONSET.timestamp() else 1.0 if t % 180 < 120 else 2.0)

    # ---- red herring: kiosk web rolled 47 min before the onset; proxies the 502s
    def kiosk(tag: str) -> Ctr:
        return Ctr("return-kiosk-web", f"{ECR}/returns/return-kiosk-web:{tag}", port=3000,
                   requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "512Mi"},
                   env={"INSPECTOR_URL": "http://damage-inspector.fleet-returns.svc",
                        "UPSTREAM_TIMEOUT": "30s"},
                   readiness=http_probe("/api/health", delay=5))
    roll = mins(ONSET, -47)
    _, kiosks, old_kiosks = rolled(s, NS, "return-kiosk-web", kiosk, old="5.2.4", new="5.3.0",
                                   at=roll, revision=41, replicas=2, nodes=nodes,
                                   old_since=s.ago(days=9, hours=3), service=80)

    def bad(t: int) -> float:
        return 0.0 if t < ONSET.timestamp() else 0.11 + 0.05 * ((t // 60) % 3 == 0)
    for pod in kiosks:
        quiet(s, [pod], "return-kiosk-web", 188)
        cpu_seconds(s, pod, "return-kiosk-web", lambda t: 0.08)
        requests(s, pod, "return-kiosk-web", rps=lambda t: 6.5, codes={
            "200": lambda t: 0.99 - bad(t), "502": lambda t: 0.002 + bad(t),
            "404": lambda t: 0.008})
    for pod in old_kiosks:
        log_pod(s, pod, "return-kiosk-web", "return-kiosk-web", [
            ("info", "GET /kiosk/MUC-04/state 200 12ms", {}),
            ("info", "POST /api/returns/R-7729915/photos 200 5.1s", {}),
        ], 20)
        requests(s, pod, "return-kiosk-web", rps=lambda t: 6.5, codes={
            "200": lambda t: 0.99, "502": lambda t: 0.002, "404": lambda t: 0.008})
    chatter(s, kiosks, "return-kiosk-web", "return-kiosk-web", [
        ("info", "return-kiosk-web 5.3.0 ready (node 20.18.1), new damage-diagram layout", {}),
        ("info", "GET /kiosk/FRA-11/state 200 9ms", {}),
        ("info", "POST /api/returns/R-7730412/photos 200 6.3s", {}),
    ], 60, start=roll, end=ONSET)
    chatter(s, kiosks, "return-kiosk-web", "return-kiosk-web", [
        ("info", "GET /kiosk/HAM-02/state 200 11ms", {}),
        ("error", "POST /api/returns/R-7731950/photos 502 upstream damage-inspector: "
         "socket hang up (ECONNRESET)", {"http.response.status_code": 502}),
        ("error", "POST /api/returns/R-7732013/photos 502 upstream damage-inspector: "
         "connect ECONNREFUSED 10.44.18.77:8080", {"http.response.status_code": 502}),
        ("info", "POST /api/returns/R-7731877/photos 200 7.7s", {}),
        ("warn", "kiosk MUC-07 retrying photo analysis (attempt 2/3)", {}),
    ], 150, start=ONSET)

    # ---- red herring: invoice renderer OOM three days ago, telematics MQTT noise
    inv = Ctr("invoice-renderer", f"{ECR}/billing/invoice-renderer:2.12.0", port=8080,
              requests={"cpu": "250m", "memory": "512Mi"}, limits={"memory": "768Mi"},
              readiness=http_probe("/healthz"))
    _, invs = steady(s, "billing", "invoice-renderer", [inv], nodes=nodes, replicas=2,
                     revision=33, rollout=s.ago(days=5, hours=1),
                     restarted={1: (s.ago(days=3, hours=4, minutes=12), "OOMKilled", 137)})
    quiet(s, invs, "invoice-renderer", 430)
    chatter(s, invs, "invoice-renderer", "invoice-renderer", [
        ("info", "rendered invoice INV-2028-0419877 (2 pages) in 340ms", {}),
        ("info", "rendered invoice INV-2028-0419880 (1 page) in 210ms", {}),
    ], 40)
    tel = Ctr("telematics-ingest", f"{ECR}/telematics/telematics-ingest:9.0.3", port=8080,
              requests={"cpu": "300m", "memory": "256Mi"}, limits={"memory": "512Mi"})
    _, tels = steady(s, "telematics", "telematics-ingest", [tel], nodes=nodes, replicas=3,
                     revision=52, rollout=s.ago(days=2, hours=19))
    quiet(s, tels, "telematics-ingest", 240)
    chatter(s, tels, "telematics-ingest", "telematics-ingest", [
        ("warn", "mqtt client car-WOB-88213 keepalive timeout, dropping session", {}),
        ("warn", "mqtt client car-M-RX4410 keepalive timeout, dropping session", {}),
        ("info", "batch of 512 positions written in 44ms", {}),
        ("error", "position from car-HH-QT771 rejected: timestamp 41s in the future", {}),
    ], 120)
    return s
