"""Public transport: some ticket purchases fail with "fare currently unavailable". At 13:19
someone edited the ConfigMap fare-calculator-config with kubectl to prepare the 2027 tariff
model: zones.peak_multiplier became zones.peak.multiplier. Reloader saw the change and
rolled fare-calculator (revision 58: the same image, only Reloader's hash variable is new).
fare-calculator 4.8.2 validates its settings at start and needs zones.peak_multiplier: the
two new pods exit with a pydantic ValidationError and back off. The rollout is stuck with
one old pod gone (maxUnavailable), and the five left shed load at the lunch peak."""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import partial

from tests.data.holdout._generator.base import configmap, daemonset, gauge, set_times
from tests.data.holdout2._generator.kit import (
    NodeKind,
    app_counter,
    crash_events,
    deleted,
    deploy,
    kills,
    lines,
    requests,
    restarts_series,
    runs_from,
    up_at,
)
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, Obj, http_probe, iso, running
from tests.scenario_tools.sim import Run, container_status

from .kit3 import (
    Incident,
    autopilot_nodes,
    chatter,
    log_pod,
    namespaces,
    quiet,
    service_range,
    steady,
    times_of,
)

ID = "ticket-fares-unavailable"
NOW = datetime.fromisoformat("2027-03-25T13:47:00+00:00")
NS = "fares"
PROJECT = "transit-prod-4412"
AR = f"europe-west3-docker.pkg.dev/{PROJECT}/fares"
IMAGE = f"{AR}/fare-calculator:4.8.2"
OLD_CONFIG = """\
tariff: VBX-2026
currency: EUR
zones:
  base_fare: 2.10
  zone_count: 6
  peak_multiplier: 1.25
  off_peak_multiplier: 0.80
  peak_hours: ["06:30-09:00", "16:00-18:30"]
discounts:
  student: 0.5
  senior: 0.6
"""
NEW_CONFIG = """\
tariff: VBX-2026
currency: EUR
zones:
  base_fare: 2.10
  zone_count: 6
  peak:
    multiplier: 1.25
    hours: ["06:30-09:00", "16:00-18:30"]
  off_peak_multiplier: 0.80
discounts:
  student: 0.5
  senior: 0.6
"""


def _autopilot(pods: list[Obj], cpu: str, memory: str) -> None:
    for pod in pods:
        ann = pod["metadata"].setdefault("annotations", {})
        ann["autopilot.gke.io/resource-adjustment"] = (
            '{"input":{"containers":[{"limits":{"memory":"' + memory + '"},"requests":{"cpu":"'
            + cpu + '","memory":"' + memory + '"},"name":"' + pod["spec"]["containers"][0][
                "name"] + '"}]},"output":{"containers":[{"limits":{"cpu":"' + cpu
            + '","ephemeral-storage":"1Gi","memory":"' + memory + '"},"requests":{"cpu":"'
            + cpu + '","ephemeral-storage":"1Gi","memory":"' + memory + '"},"name":"'
            + pod["spec"]["containers"][0]["name"] + '"}]},"modified":true}')
        ann["autopilot.gke.io/warden-version"] = "3.1.76"


def build() -> Incident:
    s = Incident(
        id=ID,
        title="Ticket purchases fail with 'fare currently unavailable'",
        now=NOW,
        report="""\
Since around 13:20 UTC some ticket purchases in the app fail with "Fare currently
unavailable, please try again" - roughly one in twenty at the moment, more at the lunch
peak. Retrying usually works. The fares dashboard shows some fare-calculator pods
restarting. Can you figure out what is going on?
""",
        truth=truth(
            "crash_loop", "Deployment", NS, "fare-calculator",
            ["zones.peak_multiplier", "Field required", "ValidationError", "CrashLoopBackOff",
             "fare-calculator-config", "STAKATER_FARE_CALCULATOR_CONFIG_CONFIGMAP"],
            "The ConfigMap fare-calculator-config was edited at 13:19 (zones.peak_multiplier "
            "moved to zones.peak.multiplier) and Reloader rolled fare-calculator; 4.8.2 "
            "requires zones.peak_multiplier and its new pods exit at start: restore the key in "
            "the ConfigMap (keep the new block for 5.0 next to it), let the rollout finish, and "
            "version the config with the release instead of editing it live."))
    set_times(s, 2.0, 30)
    service_range(s, lambda a, b: f"34.118.{224 + a % 16}.{b}")
    c = s.cluster
    namespaces(s, {"default": 540, "kube-system": 540, NS: 512, "journeys": 512,
                   "reloader": 300, "gmp-system": 540})
    kind = NodeKind("e2-standard-4", "4", "16375420Ki", "3920m", "13184636Ki",
                    "v1.32.2-gke.1297002", "6.6.72+", "Container-Optimized OS from Google",
                    runtime="containerd://1.7.24", pods="32", storage="98831908Ki",
                    alloc_storage="47060071478")
    nodes = autopilot_nodes(s, [("pool-2", 3), ("nap-1g4ldk8c", 1)], project=PROJECT,
                            cluster="transit-prod", region="europe-west3", kind=kind,
                            days=5.5)
    t_edit = NOW - timedelta(minutes=27, seconds=48)  # 13:19:12
    t_rel = t_edit + timedelta(seconds=8.6)
    new_node_at = t_rel + timedelta(seconds=74)
    extra = autopilot_nodes(s, [("nap-1g4ldk8c", 1)], project=PROJECT, cluster="transit-prod",
                            region="europe-west3", kind=kind, days=0)
    late = extra[0]
    late["metadata"]["creationTimestamp"] = iso(new_node_at)
    for cond in late["status"]["conditions"]:
        cond["lastTransitionTime"] = iso(new_node_at + timedelta(seconds=38))
    nodes.append(late)

    # ---- the ConfigMap, edited by hand, and Reloader's rollout
    cm = configmap(s, NS, "fare-calculator-config", {"config.yaml": NEW_CONFIG},
                   created=s.ago(days=512), labels={"app.kubernetes.io/name":
                                                    "fare-calculator"},
                   edited=("kubectl-edit", t_edit))
    cm["metadata"]["managedFields"][0]["fieldsV1"] = {"f:data": {"f:config.yaml": {}}}
    configmap(s, NS, "zone-map", {"zones.geojson": '{"type":"FeatureCollection","features":'
                                  '[...6 zones, 2027-03 boundaries...]}'},
              created=s.ago(days=512), labels={"app.kubernetes.io/name": "fare-calculator"},
              edited=("zone-map-sync", s.ago(hours=20, minutes=11)))

    def calc(reloaded: bool) -> Ctr:
        env = {"CONFIG_PATH": "/etc/fare-calculator/config.yaml", "WEB_CONCURRENCY": "2",
               "MAX_IN_FLIGHT": "48"}
        if reloaded:
            env["STAKATER_FARE_CALCULATOR_CONFIG_CONFIGMAP"] = \
                "3f9c2b17d64e0a8b5c1d93e7f20a6b4c8d1e5f07"
        return Ctr("fare-calculator", IMAGE, port=8000,
                   requests={"cpu": "500m", "memory": "512Mi"},
                   limits={"cpu": "500m", "memory": "512Mi"}, env=env,
                   readiness=http_probe("/healthz", "http", delay=3, period=5),
                   liveness=http_probe("/healthz", "http", delay=10, period=15),
                   mounts=[{"name": "config", "mountPath": "/etc/fare-calculator",
                            "readOnly": True}])
    old_at = s.ago(days=4, hours=23, minutes=6)
    old_born = [old_at + timedelta(seconds=12 + 23 * i) for i in range(6)]
    new_born = [t_rel + timedelta(seconds=0.4), t_rel + timedelta(seconds=0.6)]
    sched_late = new_node_at + timedelta(seconds=41.3)  # the new node is Ready at +38 s
    plans: dict[str, list[Run]] = {}

    def states(i: int, name: str, started: datetime) -> dict[str, Obj]:
        if i < 5:
            return {"fare-calculator": running(old_born[i + 1] + timedelta(seconds=6))}
        first = new_born[i - 5] + timedelta(seconds=1.6 + 7.9) if i == 5 else \
            sched_late + timedelta(seconds=1.1 + 6.214 + 0.6)
        runs = runs_from(first, NOW, lambda st: s.rng.uniform(2.6, 3.4), pull=0.2,
                         jitter=lambda: s.rng.uniform(0, 0.7))
        plans[name] = runs
        return {"fare-calculator": container_status(runs, name, NS, "fare-calculator",
                                                    reason="Error", code=1,
                                                    uid=c.uid("Pod", NS, name), ready=False)}
    placed = [nodes[1], nodes[2], nodes[0], nodes[1], nodes[2], nodes[0], late]
    work, pods = deploy(
        s, NS, "fare-calculator", [calc(True)], replicas=7, nodes=placed, revision=58,
        rollout=t_rel, old=(57, old_at, [calc(False)]),
        born=lambda i: old_born[i + 1] if i < 5 else new_born[i - 5], statuses=states,
        labels={"app.kubernetes.io/name": "fare-calculator", "app.kubernetes.io/part-of":
                "ticketing"},
        volumes=[{"name": "config", "configMap": {"name": "fare-calculator-config"}}])
    rs_old, rs_new = work.revisions
    old_pods, new_pods = pods[:5], pods[5:]
    # the five old pods belong to the old ReplicaSet
    for pod in old_pods:
        pod["metadata"]["ownerReferences"] = [c.owner(rs_old)]
        hash_old = rs_old["metadata"]["labels"]["pod-template-hash"]
        pod["metadata"]["labels"]["pod-template-hash"] = hash_old
        pod["metadata"]["labels"].pop("app.kubernetes.io/version", None)
        new_name = f"{rs_old['metadata']['name']}-{pod['metadata']['name'].rsplit('-', 1)[1]}"
        pod["metadata"]["name"] = new_name
        pod["metadata"]["generateName"] = f"{rs_old['metadata']['name']}-"
        pod["spec"]["containers"][0]["env"] = [
            e for e in pod["spec"]["containers"][0]["env"]
            if not e["name"].startswith("STAKATER_")]
    ghost = deleted(s, NS, f"{rs_old['metadata']['name']}-{c.token(5)}",
                    nodes[0]["metadata"]["name"], old_born[0], t_rel + timedelta(seconds=0.5))
    work.replicas = 6
    work.obj["spec"]["replicas"] = 6
    rs_old["spec"]["replicas"] = 5
    rs_new["spec"]["replicas"] = 2
    for rs_ in (rs_old, rs_new):
        rs_["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] = "6"
        rs_["metadata"]["annotations"]["deployment.kubernetes.io/max-replicas"] = "8"
    work.progressing = ("ProgressDeadlineExceeded", f'ReplicaSet "{rs_new["metadata"]["name"]}" '
                        "has timed out progressing.", t_rel + timedelta(seconds=600))
    work.availability_changed = old_at + timedelta(seconds=160)
    _autopilot(pods, "500m", "512Mi")
    for cond in new_pods[1]["status"]["conditions"]:
        if cond["type"] == "PodScheduled":
            cond["lastTransitionTime"] = iso(sched_late)

    def annotate(objects: list[Obj]) -> None:
        work.obj["metadata"]["annotations"]["reloader.stakater.com/auto"] = "true"
    s.fixes.append(annotate)

    # controller and kubelet events
    c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set {rs_new['metadata']['name']} "
            "from 0 to 2", first=t_rel + timedelta(seconds=0.2),
            component="deployment-controller")
    c.event(work.obj, "ScalingReplicaSet", f"Scaled down replica set "
            f"{rs_old['metadata']['name']} from 6 to 5", first=t_rel + timedelta(seconds=0.3),
            component="deployment-controller")
    c.event(rs_old, "SuccessfulDelete", f"Deleted pod: {ghost['metadata']['name']}",
            first=t_rel + timedelta(seconds=0.4), component="replicaset-controller")
    mig = f"gk3-transit-prod-nap-1g4ldk8c-{c.hexid('mig', 'nap-1g4ldk8c', length=8)}-grp"
    for i, pod in enumerate(new_pods):
        name = pod["metadata"]["name"]
        born = new_born[i]
        c.event(rs_new, "SuccessfulCreate", f"Created pod: {name}", first=born,
                component="replicaset-controller")
        if i == 1:
            c.event(pod, "FailedScheduling", "0/4 nodes are available: 4 Insufficient cpu. "
                    "preemption: 0/4 nodes are available: 4 No preemption victims found for "
                    "incoming pod.", first=born + timedelta(seconds=0.2),
                    last=sched_late - timedelta(seconds=12), count=5, type_="Warning",
                    component="default-scheduler", host="")
            zone = late["metadata"]["labels"]["topology.kubernetes.io/zone"]
            c.event(pod, "TriggeredScaleUp", "pod triggered scale-up: [{https://www.googleapis."
                    f"com/compute/v1/projects/{PROJECT}/zones/{zone}/instanceGroups/"
                    f"{mig} 1->2 (max: 1000)}}]", first=born + timedelta(seconds=9),
                    component="cluster-autoscaler", host="")
        c.event(pod, "Scheduled", f"Successfully assigned {NS}/{name} to "
                f"{pod['spec']['nodeName']}",
                first=born + timedelta(seconds=0.1) if i == 0 else sched_late,
                component="default-scheduler", host="")
        crash_events(s, pod, "fare-calculator", plans[name], IMAGE, fresh_pull=i == 1,
                     pull_seconds=6.214, size=187_355_112)
    c.event(late, "RegisteredNode", f"Node {late['metadata']['name']} event: Registered Node "
            f"{late['metadata']['name']} in Controller", first=new_node_at + timedelta(
                seconds=21), component="node-controller", host="")

    # what the crashing instances print (each run the same), shipped per run
    def crash_text(start: datetime) -> list[str]:
        return lines(start, [
            (0.61, "INFO:     fare-calculator 4.8.2 starting (config /etc/fare-calculator/"
             "config.yaml)"),
            (2.31, "Traceback (most recent call last):"),
            (2.31, '  File "/app/fare_calculator/main.py", line 41, in <module>'),
            (2.31, "    settings = FareSettings.from_yaml(CONFIG_PATH)"),
            (2.31, '  File "/app/fare_calculator/settings.py", line 88, in from_yaml'),
            (2.31, "    return cls.model_validate(raw)"),
            (2.32, "pydantic_core._pydantic_core.ValidationError: 1 validation error for "
             "FareSettings"),
            (2.32, "zones.peak_multiplier"),
            (2.32, "  Field required [type=missing, input_value={'base_fare': 2.1, "
             "'zone_count': 6, 'peak': {'multiplier': 1.25, 'hours': ['06:30-09:00', "
             "'16:00-18:30']}, 'off_peak_multiplier': 0.8}, input_type=dict]"),
            (2.32, "    For further information visit https://errors.pydantic.dev/2.10/v/"
             "missing")])
    for pod in new_pods:
        name = pod["metadata"]["name"]
        runs = plans[name]
        done = [r for r in runs if r.end is not None]
        if runs[-1].end is None:  # an instance runs right now: its first lines
            current = [x for x in crash_text(runs[-1].start)
                       if x[:23] <= NOW.strftime("%Y-%m-%dT%H:%M:%S.999")]
            s.pod_log(pod, "fare-calculator", current)
            s.pod_log(pod, "fare-calculator", crash_text(done[-1].start), previous=True)
        else:
            s.pod_log(pod, "fare-calculator", crash_text(done[-1].start))
            s.pod_log(pod, "fare-calculator", crash_text(done[-2].start), previous=True)
        for r in done:
            text = crash_text(r.start)
            s.logs.add(r.start + timedelta(seconds=0.61), "info", text[0].split(" ", 1)[1]
                       .removeprefix("INFO:     "), namespace=NS, pod=name,
                       container="fare-calculator", service="fare-calculator",
                       node=pod["spec"]["nodeName"])
            s.logs.add(r.start + timedelta(seconds=2.32), "error", "\n".join(
                x.split(" ", 1)[1] for x in text[1:]), namespace=NS, pod=name,
                container="fare-calculator", service="fare-calculator",
                node=pod["spec"]["nodeName"],
                **{"error.type": "pydantic_core._pydantic_core.ValidationError"})
        restarts_series(s, pod, "fare-calculator", 0, kills(runs))
        gauge(s, "kube_pod_container_status_waiting_reason", {
            "namespace": NS, "pod": name, "container": "fare-calculator",
            "reason": "CrashLoopBackOff"},
            partial(_backing_off, runs),
            "Describes the reason the container is currently in waiting state.",
            times=times_of(s, pod))

    # ---- the serving pods: the lunch peak on five pods instead of six
    def traffic(t: int) -> float:
        hour = (t % 86400) / 3600
        return 60.0 + 70.0 * max(0.0, 1 - abs(hour - 12.2) / 2.2)

    cut = t_rel.timestamp()

    def shed(t: int) -> float:  # the share of requests a pod answers with 503
        if t < cut:
            return 0.0005
        per_pod = traffic(t) / 5
        return min(0.12, max(0.0005, (per_pod - 21.0) * 0.012))

    for pod in [ghost, *old_pods]:
        times = times_of(s, pod)
        requests(s, pod, "fare-calculator", times=times,
                 rps=lambda t: traffic(t) / (6 if t < cut else 5), codes={
                     "200": lambda t: 1 - shed(t), "503": shed})
    for pod in old_pods:
        log_pod(s, pod, "fare-calculator", "fare-calculator", [
            ("info", "POST /v1/fares/quote zones=1-3 product=single 200 18ms", {}),
            ("info", "POST /v1/fares/quote zones=2 product=day-pass 200 14ms", {}),
            ("warn", "POST /v1/fares/quote 422: unknown zone '7'", {}),
        ], 28, start=NOW - timedelta(hours=2))
        log_pod(s, pod, "fare-calculator", "fare-calculator", [
            ("warn", "in-flight limit 48 reached, answering 503 to POST /v1/fares/quote", {}),
            ("info", "POST /v1/fares/quote zones=1-2 product=single 200 211ms", {}),
        ], 16, start=t_rel + timedelta(minutes=6))
    gauge(s, "kube_deployment_status_replicas_available", {"namespace": NS,
                                                           "deployment": "fare-calculator"},
          lambda t: 6.0 if t < cut else 5.0, "The number of available replicas per "
          "deployment.")
    gauge(s, "kube_deployment_status_replicas_unavailable", {"namespace": NS,
                                                             "deployment": "fare-calculator"},
          lambda t: 0.0 if t < cut else 2.0, "The number of unavailable replicas per "
          "deployment.")

    # ---- ticket-wallet: the app's backend, calling fare-calculator
    wallet = Ctr("ticket-wallet", f"{AR}/ticket-wallet:3.3.0", port=8080,
                 requests={"cpu": "250m", "memory": "512Mi"},
                 limits={"cpu": "250m", "memory": "512Mi"},
                 readiness=http_probe("/ready", "http", delay=5))
    _, wallets = steady(s, NS, "ticket-wallet", [wallet], nodes=nodes[:4], replicas=3,
                        revision=77, rollout=s.ago(days=3, hours=4, minutes=40), offset=1)
    _autopilot(wallets, "250m", "512Mi")
    chatter(s, wallets, "ticket-wallet", "ticket-wallet", [
        ("info", "ticket T-88120412 issued (single, zones 1-3, EUR 3.40)", {}),
        ("warn", "APNs push token for device d8c1.. invalid, removing", {}),
        ("info", "payment intent pi_3Q.. succeeded", {}),
    ], 60)
    chatter(s, wallets, "ticket-wallet", "ticket-wallet", [
        ("error", "fare quote failed: 503 Service Unavailable from fare-calculator, showing "
         "'fare currently unavailable'", {"http.response.status_code": 503}),
    ], 26, start=t_rel + timedelta(minutes=7))
    app_counter(s, "tickets_issued_total", {"namespace": NS}, s.times,
                lambda t: traffic(t) * 0.18 * (1 - shed(t)), "Tickets issued.")

    # ---- Reloader noticed the edit
    rl = Ctr("reloader-reloader", "ghcr.io/stakater/reloader:v1.3.0", port=9090,
             port_name="http", requests={"cpu": "10m", "memory": "64Mi"},
             limits={"cpu": "100m", "memory": "256Mi"})
    _, rls = steady(s, "reloader", "reloader-reloader", [rl], nodes=nodes[:4], replicas=1,
                    revision=5, rollout=s.ago(days=5, hours=1), service=None,
                    labels={"app": "reloader-reloader"})
    _autopilot(rls, "50m", "256Mi")
    for off, level, msg in (
            (-71000.0, "info", "Changes detected in 'zone-map' of type 'CONFIGMAP' in "
             "namespace 'fares', no workload has reloader annotation for it"),
            (0.0, "info", "Changes detected in 'fare-calculator-config' of type 'CONFIGMAP' "
             "in namespace 'fares'"),
            (0.1, "info", "Updated 'fare-calculator' of type 'Deployment' in namespace "
             "'fares'")):
        when = t_rel + timedelta(seconds=off - 0.2)
        if when < NOW - timedelta(hours=2):
            continue
        s.logs.add(when, level, msg, namespace="reloader", pod=rls[0]["metadata"]["name"],
                   container="reloader-reloader", service="reloader",
                   node=rls[0]["spec"]["nodeName"])
    chatter(s, rls, "reloader-reloader", "reloader", [
        ("info", "Starting Controller to watch resource type: configMaps", {}),
    ], 2)

    # ---- journeys: the planner restarted days ago; noisy but fine
    planner = Ctr("journey-planner", f"{AR.rsplit('/', 1)[0]}/journeys/journey-planner:"
                  "11.2.0", port=8080, requests={"cpu": "1", "memory": "3Gi"},
                  limits={"cpu": "1", "memory": "3Gi"},
                  readiness=http_probe("/otp/actuators/health", "http", delay=60))
    _, planners = steady(s, "journeys", "journey-planner", [planner], nodes=nodes[:4],
                         replicas=2, revision=19, rollout=s.ago(days=4, hours=7),
                         restarted={0: (s.ago(days=2, hours=17), "OOMKilled", 137)}, offset=2)
    _autopilot(planners, "1", "3Gi")
    quiet(s, planners, "journey-planner", 2410)
    chatter(s, planners, "journey-planner", "journey-planner", [
        ("info", "plan from 50.1109,8.6821 to 50.0379,8.5622: 4 itineraries in 212ms", {}),
        ("warn", "GTFS-RT feed trip updates stale (age 94s), using schedule", {}),
    ], 40)
    gmp = Ctr("prometheus", "gke.gcr.io/prometheus-engine/prometheus:v2.45.3-gmp.9-gke.0",
              port=19090, port_name="web", requests={"cpu": "4m", "memory": "32M"},
              limits={"memory": "2G"})
    _, gmps = daemonset(s, "gmp-system", "collector", [gmp], node_list=nodes,
                        generation=8, since=s.ago(days=5.45), labels={"app": "managed-prometheus-"
                                                                      "collector"})
    chatter(s, gmps, "prometheus", "collector", [
        ("warn", "ts=2027-03-25 level=warn component=\"scrape manager\" msg=\"append failed\" "
         "err=\"out of order sample\"", {}),
    ], 8)
    return s


def _backing_off(runs: list[Run], t: int) -> float:
    """1 while the kubelet waits to restart a container of `runs` after its first death."""
    return 0.0 if up_at(runs, t) or t < (runs[0].end or NOW).timestamp() else 1.0
