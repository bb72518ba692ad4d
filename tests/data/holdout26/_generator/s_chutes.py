"""Logistics: at the hub's night sort, parcels go to the reject chute instead of their
destination chutes. chute-planner keeps the current wave's whole sort plan in memory; the
22:30 trunk wave is the week's largest (Black Week pre-orders), its working set climbs from
~300 MiB to the 768Mi limit in ten to fifteen minutes and the kernel OOM-kills the container
(exit 137) again and again; while a pod restarts and reloads the plan, sort-controller's
chute requests fail and parcels are diverted to the reject chute. Red herrings: a scan-ingest
release in the same namespace 38 minutes before the onset, a "PLC heartbeat missed" error the
planner has logged for days, the report's suspicion of the conveyor controller, an old crash
of the label printer bridge, a dock-scheduler readiness blip and a few normal carrier API
timeouts in eta-publisher."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise

from tests.scenario_tools.common import (
    MIB,
    Story,
    const,
    container_metrics,
    deployment_metrics,
    http_metrics,
    kube_system,
    namespaces,
    nodes,
    noise_logs,
    truth,
)
from tests.scenario_tools.kube import Ctr, Obj, Template, ended, http_probe, running
from tests.scenario_tools.parts import neighbour, readiness_blip, rollout
from tests.scenario_tools.sim import Run, container_status, deaths, lifecycle, restart_events
from tests.scenario_tools.stories.memory import Leak
from tests.scenario_tools.telemetry import integrate

from .kit import between, line, ship

ID = "night-sort-parcels-to-reject-chute"
NOW = datetime(2027, 10, 14, 23, 18, tzinfo=UTC)
NS = "hub-ops"
REG = "registry.gitlab.com/transcargo/hub"
WAVE = NOW - timedelta(minutes=48)  # 22:30, the trunk wave's sort plan starts loading
IMAGE = f"{REG}/chute-planner:3.6.1"


def volume(t: float) -> float:
    """Parcels per second entering the sort plan (inducts of the current wave)."""
    if t < WAVE.timestamp():
        return 14.0
    return 14.0 + min(1.0, (t - WAVE.timestamp()) / 420) * 61.0


def build() -> Story:
    s = Story(ID, "Night sort sending parcels to the reject chute", NOW, """\
Hub Venlo night sort: since roughly 22:45 lots of parcels are ending up on the reject chute
instead of their destination chutes, the manual rework team can't keep up and the 01:30
trunk departures are at risk. It comes in bursts of a few minutes. Is the conveyor controller
acting up again like last month?
""", truth("oom_killed", "Deployment", NS, "chute-planner",
           ["OOMKilled", "768Mi", "137", "chute-planner"],
           "chute-planner holds the whole wave's sort plan in memory: tonight's trunk wave "
           "pushes it past its 768Mi limit and it is OOM-killed every 10-15 minutes. Raise the "
           "memory limit (e.g. 1536Mi) now, and make the planner page the plan instead of "
           "loading the full wave."), hours=2.5)
    namespaces(s, NS, "yard", "tracking")
    node_list = nodes(s, 4, subnet=88, region="eu-central-1", instance="m6a.2xlarge", cpu="8",
                      memory="32Gi", allocatable_cpu="7910m", allocatable_memory="30310Mi",
                      days=6.0)
    kube_system(s, node_list)

    ctr = Ctr("chute-planner", IMAGE, port=8080, requests={"cpu": "500m", "memory": "512Mi"},
              limits={"memory": "768Mi"},
              env={"HUB": "VNL1", "PARCEL_DB_DSN": "postgres://planner@parcel-db.hub-ops.svc/"
                   "parcels?sslmode=require", "PLAN_CACHE": "in-memory", "GOMEMLIMIT": ""},
              readiness=http_probe("/readyz", delay=5, period=5),
              liveness=http_probe("/livez", delay=20, period=20))
    ctr.env.pop("GOMEMLIMIT")
    rolled = s.ago(days=4, hours=7, minutes=12)
    work = s.cluster.workload("Deployment", NS, "chute-planner",
                              Template([ctr], service_account="chute-planner"), replicas=3,
                              created=s.ago(days=300))
    s.cluster.revision(work, 26, s.ago(days=11))
    rs = s.cluster.revision(work, 27, rolled, replicas=3)
    s.cluster.service(NS, "chute-planner", {"app.kubernetes.io/name": "chute-planner"},
                      created=s.ago(days=300))
    plans: list[tuple[Obj, list[Run]]] = []
    for i, share in enumerate((1.08, 0.97, 0.91)):
        leak = Leak(s.ago(hours=3), NOW, 300 * MIB, 768 * MIB,
                    lambda t, k=share: volume(t) * k * 0.0061 * MIB)
        created = rolled + timedelta(seconds=6 + 31 * i)
        runs = lifecycle(created + timedelta(seconds=7), NOW, leak.life)
        name = f"{rs['metadata']['name']}-{s.cluster.token(5)}"
        status = container_status(runs, name, NS, "chute-planner", reason="OOMKilled",
                                  code=137, uid=s.cluster.uid("Pod", NS, name))
        pod = s.cluster.pod(work, rs, node=node_list[i], created=created, name=name,
                            statuses={"chute-planner": status},
                            ready_since=runs[-1].start + timedelta(seconds=9))
        ip = pod["status"]["podIP"]
        restart_events(s, pod, "chute-planner", runs, now=NOW, image=IMAGE,
                       probe_message=f'Readiness probe failed: Get "http://{ip}:8080/readyz": '
                       "dial tcp " + ip + ":8080: connect: connection refused")
        kills = [int(d.timestamp()) for d in deaths(runs)]
        inside = [k for k in kills if k >= s.times[0]]
        container_metrics(s, pod, "chute-planner", memory=leak.memory(runs),
                          cpu=lambda t, k=share: 0.08 + volume(t) * k * 0.004,
                          restarts=inside, restart_base=len(kills) - len(inside),
                          limit_memory=768 * MIB)
        http_metrics(s, "chute-planner", pod, rps=lambda t, k=share: volume(t) * k / 3,
                     codes={"200": const(0.999), "404": const(0.001)}, median=const(0.012),
                     resets=inside, histogram=True)
        plans.append((pod, runs))
        _planner_logs(s, pod, runs)
    down = [(r.end, nxt) for _, runs in plans for r, nxt in pairwise(runs)
            if r.end is not None]
    down = [(a.timestamp(), b.start.timestamp() + 9) for a, b in down]

    def available(t: int) -> float:
        return 3.0 - sum(1 for a, b in down if a <= t < b)
    deployment_metrics(s, work, available)
    unready = [runs[-1].end for _, runs in plans if runs[-1].end is not None]
    work.availability_changed = max(unready) if unready else None
    _sorter(s, node_list, [a for a, _ in down], available)
    _herrings(s, node_list)
    return s


def _planner_logs(s: Story, pod: Obj, runs: list[Run]) -> None:
    def instance(run: Run) -> list[str]:
        t0 = run.start + timedelta(milliseconds=210)
        out = [line(t0, "info", "main", "chute-planner 3.6.1 (go1.23.2) starting, hub=VNL1"),
               line(t0 + timedelta(seconds=1.4), "info", "plan", "loading sort plan for "
                    "wave W-2231 TRUNK-NIGHT from parcel-db: 61,884 parcels, 236 "
                    "destinations")]
        end = run.end or NOW
        for k in range(1, 9):
            when = run.start + (end - run.start) * k / 9
            parcel = s.rng.randrange(10**9, 10**10)
            out.append(line(when, "info", "assign", f"parcel JJD00{parcel} -> chute "
                            f"{s.rng.randrange(1, 120)}"))
        return out
    done = [r for r in runs if r.end is not None]
    if done:
        s.pod_log(pod, "chute-planner", instance(done[-1]), previous=True)
    for run in runs:
        end = run.end or NOW
        if end.timestamp() < s.times[0]:
            continue
        begin = max(run.start, s.ago(hours=2.5))
        if run.start >= begin:
            ship(s, pod, "chute-planner", run.start + timedelta(milliseconds=210), "info",
                 "chute-planner 3.6.1 (go1.23.2) starting, hub=VNL1")
            ship(s, pod, "chute-planner", run.start + timedelta(seconds=1.4), "info",
                 "loading sort plan for wave W-2231 TRUNK-NIGHT from parcel-db: 61,884 "
                 "parcels, 236 destinations")
        noise_logs(s, pod, "chute-planner", "chute-planner", [
            ("info", "parcel assigned to destination chute", {"labels.chute": "41"}),
            ("info", "parcel assigned to destination chute", {"labels.chute": "87"}),
            ("info", "wave plan delta applied: 412 parcels added", {})],
            max(3, int((end - begin).total_seconds() / 240)), start=begin, end=end)
        for when in between(s, begin, end, max(1, int((end - begin).total_seconds() / 2400))):
            ship(s, pod, "chute-planner", when, "error", "PLC heartbeat missed on sorter S2 "
                 "(line 3) for 2 cycles, using cached chute map", error__type="plc.Heartbeat")


def _sorter(s: Story, node_list: list[Obj], kills: list[float], available) -> None:
    _, ctl = neighbour(s, NS, "sort-controller", f"{REG}/sort-controller:11.0.4", node_list,
                       replicas=2, memory_mib=260, revision=52)
    for pod in ctl:
        noise_logs(s, pod, "sort-controller", "sort-controller", [
            ("info", "induct S1 parcel scanned, chute assigned", {}),
            ("info", "induct S2 parcel scanned, chute assigned", {}),
            ("warn", "parcel no-read at induct S1 (label damaged), routed to reject chute R1",
             {})], 40)
    for kill in kills:
        if kill < s.times[0]:
            continue
        start = datetime.fromtimestamp(kill, UTC)
        for when in between(s, start, start + timedelta(seconds=40), s.rng.randrange(5, 9)):
            pod = s.rng.choice(ctl)
            ship(s, pod, "sort-controller", when, "error", "chute request failed: POST "
                 "http://chute-planner.hub-ops.svc/v2/assign: connection refused; parcel "
                 "routed to reject chute R1", http__response__status_code=503,
                 error__type="ECONNREFUSED")
    labels = {"namespace": NS, "hub": "VNL1", "chute": "R1"}

    def rejects(t: int) -> float:
        hit = any(k <= t < k + 75 for k in kills)
        return volume(t) * (0.62 if hit else 0.006) * (1 + 0.5 * (3 - available(t)))
    s.metrics.counter("sorter_parcels_rejected_total", labels,
                      integrate(s.times, rejects, start=211_040, rng=s.rng),
                      "Parcels diverted to a reject chute.")


def _herrings(s: Story, node_list: list[Obj]) -> None:
    at = NOW - timedelta(minutes=33 + 38, seconds=12)
    roll = rollout(s, NS, "scan-ingest", lambda v: Ctr(
        "scan-ingest", f"{REG}/scan-ingest:{v}", port=8080,
        requests={"cpu": "250m", "memory": "256Mi"}, limits={"memory": "512Mi"},
        readiness=http_probe("/readyz")), old="8.1.9", new="8.2.0", at=at, revision=140,
        replicas=2, node_list=node_list)
    for pod in roll.new_pods:
        container_metrics(s, pod, "scan-ingest", memory=const(190 * MIB), cpu=const(0.2))
        noise_logs(s, pod, "scan-ingest", "scan-ingest", [
            ("info", "scan event batch flushed: 500 events", {}),
            ("warn", "duplicate scan JJD0012998… within 2s ignored", {}),
            ("info", "handheld HS-0412 reconnected (firmware 5.8.1)", {})], 30,
            start=at + timedelta(minutes=1))
    neighbour(s, NS, "label-printer-bridge", f"{REG}/label-printer-bridge:2.2.0", node_list,
              replicas=1, memory_mib=90, revision=9,
              restarts={0: running(s.ago(days=2, hours=3), restarts=1, last=ended(
                  "Error", 2, s.ago(days=4, hours=11), s.ago(days=2, hours=3, seconds=6)))})
    readiness_blip(s, "yard", "dock-scheduler", f"{REG}/dock-scheduler:5.4.3", node_list,
                   port=8080, path="/health", minutes_ago=57)
    _, eta = neighbour(s, "tracking", "eta-publisher", f"{REG}/eta-publisher:1.30.0",
                       node_list, replicas=2, memory_mib=210, revision=71, logs=[
                           ("info", "ETA update published for 120 shipments", {}),
                           ("info", "ETA update published for 96 shipments", {})], n_logs=40)
    for when in between(s, s.ago(hours=2, minutes=10), NOW, 5):
        ship(s, s.rng.choice(eta), "eta-publisher", when, "warn", "carrier API DPD timeout "
             "after 5s on /tracking/v2/events, retry 1 succeeded", error__type="timeout")
