"""Ski resort: the turnstiles of the chairlift C valley station fall back to offline mode.
The resort runs k3s on four fanless boxes in the lift control room. Box hochalm-edge-03,
which carries the RS-485 adapter of the lift C gate bus, was drained and deleted at 08:12
for a fan swap and re-joined at 08:31 as hochalm-edge-04 with a new hostname; the hand-set
node label hochalm.at/rs485-bus=c that the gate bridge selects was not put back. The
turnstile-bridge-c pod, recreated at 08:12, stays Pending (node affinity/selector mismatch)
and gate-api validates lift C passes offline (slow, no revocation check). Red herrings:
pass-sync rolled out at 07:31 in the same namespace (the report suspects it), the signage
weather kiosk fails its readiness (the weather API rate-limits it), gate-api's periodic
"clock offset" warnings, and the new node itself (Ready, empty)."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gauge, set_times
from tests.data.holdout2._generator.kit import cpu_seconds, deleted, deploy, requests
from tests.data.holdout3._generator.kit3 import (
    chatter,
    ghosts,
    ksm_deployment,
    log_pod,
    namespaces,
    quiet,
    steady,
)
from tests.data.holdout4._generator.kit4 import between
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, Template, http_probe, iso, running, tcp_probe

from .kit import Incident, NodeKind, k3s_nodes, logfmt

ID = "lift-c-gates-offline"
NOW = datetime.fromisoformat("2028-02-12T09:04:00+00:00")
NS = "gates"
REG = "registry.hochalm.at"
SCHED = ("0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. "
         "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")


def build() -> Incident:
    s = Incident(
        id=ID, title="Chairlift C turnstiles in offline mode", now=NOW,
        report="""\
Lift staff at the Sesselbahn C valley station say the turnstiles show the yellow "OFFLINE
VALIDATION" light since about 08:15 and every scan takes 3-4 seconds, long queue forming.
Other lifts are fine. Did this morning's pass-sync update break something? Please check
the gates backend on the edge cluster.
""",
        truth=truth(
            "unschedulable", "Deployment", NS, "turnstile-bridge-c",
            ["FailedScheduling", "didn't match Pod's node affinity/selector",
             "hochalm.at/rs485-bus", "Pending"],
            "turnstile-bridge-c selects nodes labelled hochalm.at/rs485-bus=c; the only such "
            "node, hochalm-edge-03, was deleted at 08:12 and re-joined as hochalm-edge-04 "
            "without the hand-set label, so the recreated pod has been Pending since. Label "
            "the node that holds the lift C RS-485 adapter (kubectl label node "
            "hochalm-edge-04 hochalm.at/rs485-bus=c) and keep the label in the node's k3s "
            "config (node-label in config.yaml) so that a re-join keeps it."))
    set_times(s, 2.0, 60)
    c = s.cluster
    namespaces(s, {"default": 410, "kube-system": 410, "kube-public": 410,
                   "kube-node-lease": 410, NS: 405, "signage": 380})
    box = NodeKind("k3s", "8", "32661828Ki", "8", "32661828Ki", "v1.31.6+k3s1",
                   "6.8.0-52-generic", "Ubuntu 24.04.1 LTS",
                   runtime="containerd://1.7.23-k3s2", storage="479596204Ki",
                   alloc_storage="466556302398")
    olds = k3s_nodes(s, ["hochalm-edge-01", "hochalm-edge-02"], kind=box, days=61,
                     site="talstation")
    olds[0]["metadata"]["labels"]["hochalm.at/rs485-bus"] = "a"
    for n in olds:  # the boxes were rebooted for the k3s upgrade on Monday night
        for cond in n["status"]["conditions"]:
            cond["lastTransitionTime"] = iso(s.ago(days=5, hours=3, minutes=2))
    olds[1]["metadata"]["labels"]["hochalm.at/rs485-bus"] = "b"
    gone = NOW - timedelta(minutes=52, seconds=11)   # 08:11:49: edge-03 drained, deleted
    joined = NOW - timedelta(minutes=33, seconds=20)
    new = k3s_nodes(s, ["hochalm-edge-04"], kind=box,
                    days=(NOW - joined).total_seconds() / 86400, site="talstation",
                    first=3, server=-1)[0]
    new_name = new["metadata"]["name"]
    for reason, message, off in (
            ("Starting", "Starting kubelet.", 0),
            ("NodeHasSufficientMemory",
             f"Node {new_name} status is now: NodeHasSufficientMemory", 1),
            ("NodeAllocatableEnforced", "Updated Node Allocatable limit across pods", 1),
            ("NodeReady", f"Node {new_name} status is now: NodeReady", 38)):
        c.event(new, reason, message, first=joined + timedelta(seconds=off), host=new_name)
    c.event(new, "RegisteredNode", f"Node {new_name} event: Registered Node {new_name} in "
            "Controller", first=joined + timedelta(seconds=4), component="node-controller",
            host="")
    c.event(new, "Synced", "Node synced successfully", first=joined + timedelta(seconds=40),
            component="cloud-node-controller", host="")

    # ---- kube-system: what a k3s server runs
    dns = Ctr("coredns", "rancher/mirrored-coredns-coredns:1.12.0", port=53, port_name="dns",
              requests={"cpu": "100m", "memory": "70Mi"}, limits={"memory": "170Mi"},
              readiness=http_probe("/ready", 8181, period=2))
    _, dnss = steady(s, "kube-system", "coredns", [dns], nodes=olds[:1], replicas=1,
                     revision=3, rollout=s.ago(days=5, hours=3), service=None,
                     labels={"k8s-app": "kube-dns"})
    quiet(s, dnss, "coredns", 21)
    trf = Ctr("traefik", "rancher/mirrored-library-traefik:3.3.2", port=8000, port_name="web",
              requests={}, limits={}, readiness=http_probe("/ping", 9000))
    _, trfs = steady(s, "kube-system", "traefik", [trf], nodes=olds[1:], replicas=1,
                     revision=4, rollout=s.ago(days=5, hours=3), service=None,
                     labels={"app.kubernetes.io/name": "traefik",
                             "app.kubernetes.io/instance": "traefik-kube-system"})
    quiet(s, trfs, "traefik", 48)

    # ---- the bridges of the gate buses: one pod each, pinned to the box with the adapter
    def bridge(bus: str, image: str) -> Template:
        ctr = Ctr(f"turnstile-bridge-{bus}", image, port=7400, port_name="grpc",
                  requests={"cpu": "50m", "memory": "48Mi"}, limits={"memory": "96Mi"},
                  env={"GATE_BUS": bus, "SERIAL_DEVICE": "/dev/ttyRS485",
                       "GATE_API": "gate-api.gates.svc:7000"},
                  readiness=tcp_probe("grpc"), liveness=tcp_probe("grpc", delay=15),
                  mounts=[{"name": "serial", "mountPath": "/dev/ttyRS485"}])
        return Template([ctr], service_account="turnstile-bridge",
                        node_selector={"hochalm.at/rs485-bus": bus},
                        volumes=[{"name": "serial", "hostPath": {
                            "path": "/dev/ttyUSB0", "type": "CharDevice"}}])
    b_image = f"{REG}/gates/turnstile-bridge:2.4.1"
    for i, bus in enumerate(("a", "b")):
        tpl = bridge(bus, b_image)
        _, bp = steady(s, NS, f"turnstile-bridge-{bus}", tpl.containers, nodes=[olds[i]],
                       replicas=1, revision=9, rollout=s.ago(days=5, hours=3 - i),
                       service=None, sa="turnstile-bridge", volumes=tpl.volumes,
                       node_selector=tpl.node_selector)
        quiet(s, bp, f"turnstile-bridge-{bus}", 22)
        talk(s, bp, f"turnstile-bridge-{bus}", f"turnstile-bridge-{bus}", [
            ("info", logfmt("info", "scan forwarded", bus=bus, gate=f"{bus.upper()}{g}",
                            rtt="41ms"), {}) for g in (1, 2, 4)] + [
            ("debug", logfmt("debug", "bus poll", bus=bus, devices=6), {})], 70)

    tpl_c = bridge("c", b_image)
    bc = c.workload("Deployment", NS, "turnstile-bridge-c", tpl_c, replicas=1,
                    created=s.ago(days=200), labels={"app.kubernetes.io/name":
                                                     "turnstile-bridge-c"})
    rs_c = c.revision(bc, 9, s.ago(days=5, hours=2), replicas=1)
    born = s.ago(days=2, hours=20)  # restarted with the box on Sunday
    ghost = deleted(s, NS, f"{rs_c['metadata']['name']}-{c.token(5)}", "hochalm-edge-03",
                    born, gone)
    recreated = gone + timedelta(seconds=1)
    pend = c.pod(bc, rs_c, node=None, created=recreated, statuses={},
                 scheduled_message=SCHED)
    c.event(rs_c, "SuccessfulCreate", f"Created pod: {pend['metadata']['name']}",
            first=recreated, component="replicaset-controller", host="")
    minutes = (NOW - recreated).total_seconds() / 60
    c.event(pend, "FailedScheduling", SCHED, first=recreated + timedelta(seconds=1),
            last=NOW - timedelta(seconds=37), count=int(minutes / 5) + 3, type_="Warning",
            component="default-scheduler", host="")
    bc.progressing = ("NewReplicaSetAvailable", f'ReplicaSet "{rs_c["metadata"]["name"]}" '
                      "has successfully progressed.", s.ago(days=5, hours=2) +
                      timedelta(seconds=20))
    bc.availability_changed = recreated
    log_pod(s, ghost, "turnstile-bridge-c", "turnstile-bridge-c", [
        ("info", logfmt("info", "scan forwarded", bus="c", gate=f"C{g}", rtt="39ms"), {})
        for g in (1, 2, 3, 5)], 55)
    gone_t = gone - timedelta(seconds=3)
    s.logs.add(gone_t, "info", logfmt("info", "received SIGTERM, closing serial bus", bus="c"),
               namespace=NS, pod=ghost["metadata"]["name"], container="turnstile-bridge-c",
               node="hochalm-edge-03")
    ksm_deployment(s, NS, "turnstile-bridge-c", lambda t: 1.0,
                   lambda t: 0.0 if t >= gone.timestamp() else 1.0,
                   lambda t: 1.0 if t >= gone.timestamp() else 0.0)
    gauge(s, "kube_pod_status_phase", {"namespace": NS, "pod": pend["metadata"]["name"],
                                       "phase": "Pending"}, lambda t: 1.0,
          "The pods current phase.", times=[t for t in s.times if t >= recreated.timestamp()
                                            + 20])
    gauge(s, "kube_pod_status_unschedulable", {"namespace": NS, "pod": pend["metadata"]["name"]},
          lambda t: 1.0, "Describes the unschedulable status for the pod.",
          times=[t for t in s.times if t >= recreated.timestamp() + 20])

    # ---- gate-api: validates every scan; lift C falls back to offline validation
    api = Ctr("gate-api", f"{REG}/gates/gate-api:5.9.3", port=7000, port_name="grpc",
              requests={"cpu": "200m", "memory": "192Mi"}, limits={"memory": "384Mi"},
              env={"PASS_SYNC_URL": "http://pass-sync.gates.svc:8080",
                   "OFFLINE_FALLBACK_AFTER": "2s", "LOG_FORMAT": "logfmt"},
              readiness=http_probe("/readyz", 7001), liveness=http_probe("/livez", 7001,
                                                                         delay=10))
    _, apis = steady(s, NS, "gate-api", [api], nodes=olds, replicas=2, revision=31,
                     rollout=s.ago(days=6, hours=5), service=7000, target="grpc")
    quiet(s, apis, "gate-api", 140)
    for pod in apis:
        cpu_seconds(s, pod, "gate-api", lambda t: 0.09 * s.rng.uniform(0.8, 1.2))
        for lift, rate in (("A", 0.55), ("B", 0.42), ("C", 0.61), ("D", 0.3)):
            def online(t: int, lift: str = lift, rate: float = rate) -> float:
                return 0.0 if lift == "C" and t >= gone.timestamp() + 30 else rate / 2
            s.metrics.counter("gate_validations_total", {
                "namespace": NS, "pod": pod["metadata"]["name"], "lift": lift,
                "mode": "online"}, _counter(s, pod, online),
                "Pass validations by lift and mode.")
            if lift == "C":
                s.metrics.counter("gate_validations_total", {
                    "namespace": NS, "pod": pod["metadata"]["name"], "lift": lift,
                    "mode": "offline"}, _counter(s, pod, lambda t, r=rate: r / 2 if
                                                 t >= gone.timestamp() + 30 else 0.0, 0),
                    "Pass validations by lift and mode.")
    talk(s, apis, "gate-api", "gate-api", [
        ("info", logfmt("info", "pass validated", lift="A", gate="A3", result="ok",
                        took="38ms"), {}),
        ("info", logfmt("info", "pass validated", lift="B", gate="B1", result="ok",
                        took="44ms"), {}),
        ("info", logfmt("info", "pass validated", lift="D", gate="D2", result="ok",
                        took="41ms"), {}),
        ("info", logfmt("info", "pass validated", lift="A", gate="A1", result="denied",
                        reason="day_pass_expired"), {}),
        ("warn", logfmt("warn", "CRITICAL clock offset to ntp above threshold",
                        offset="1.21s", threshold="1s", source="pool.ntp.org"), {}),
    ], 240)
    talk(s, apis, "gate-api", "gate-api", [
        ("info", logfmt("info", "pass validated", lift="C", gate="C2", result="ok",
                        took="40ms"), {}),
        ("info", logfmt("info", "pass validated", lift="C", gate="C5", result="ok",
                        took="36ms"), {})], 60, end=gone)
    talk(s, apis, "gate-api", "gate-api", [
        ("warn", logfmt("warn", "no bridge registered for bus, validating offline",
                        lift="C", gate="C1", wait="2s"), {}),
        ("warn", logfmt("warn", "no bridge registered for bus, validating offline",
                        lift="C", gate="C3", wait="2s"), {}),
        ("info", logfmt("info", "pass validated", lift="C", gate="C4", result="ok",
                        mode="offline", took="2.9s"), {}),
        ("warn", logfmt("warn", "offline validation skips revocation list", lift="C",
                        gate="C2"), {}),
    ], 130, start=gone + timedelta(seconds=30))

    # ---- pass-sync: rolled out at 07:31 (the report's suspect), healthy since
    roll = NOW - timedelta(minutes=93)
    img = f"{REG}/gates/pass-sync:3.2.0"
    ps = Ctr("pass-sync", img, port=8080, requests={"cpu": "100m", "memory": "128Mi"},
             limits={"memory": "256Mi"}, env={"SHOP_API": "https://shop.hochalm.at/api/v2",
                                              "SYNC_INTERVAL": "60s"},
             readiness=http_probe("/readyz"))
    old_born = [s.ago(days=5, hours=3)]
    psw, pss = steady(s, NS, "pass-sync", [ps], nodes=[olds[1]], replicas=1, revision=18,
                      rollout=roll, service=8080,
                      old=(17, s.ago(days=9, hours=2, minutes=1),
                           [Ctr("pass-sync", f"{REG}/gates/pass-sync:3.1.4", port=8080)]))
    old_rs = psw.revisions[0]
    old_pods = ghosts(s, old_rs, [olds[0]], old_born, [roll + timedelta(seconds=41)])
    quiet(s, pss, "pass-sync", 61)
    for pod in [*old_pods, *pss]:
        requests(s, pod, "pass-sync", rps=lambda t: 1.1, codes={
            "200": lambda t: 0.995, "304": lambda t: 0.004, "502": lambda t: 0.001})
    log_pod(s, old_pods[0], "pass-sync", "pass-sync", [
        ("info", logfmt("info", "sync done", passes_added=14, passes_revoked=0), {})], 20)
    talk(s, pss, "pass-sync", "pass-sync", [
        ("info", logfmt("info", "sync done", passes_added=37, passes_revoked=1), {}),
        ("info", logfmt("info", "sync done", passes_added=52, passes_revoked=0), {}),
        ("warn", logfmt("warn", "shop api slow", took="4.1s", endpoint="/passes/delta"), {}),
    ], 70, start=roll + timedelta(seconds=20))
    s.logs.add(roll + timedelta(seconds=14), "info",
               logfmt("info", "pass-sync starting", version="3.2.0", schema="v7"),
               namespace=NS, pod=pss[0]["metadata"]["name"], container="pass-sync",
               node=pss[0]["spec"]["nodeName"])

    # ---- signage: the weather kiosk is not ready (the weather API rate-limits it)
    kiosk = Ctr("weather-kiosk", f"{REG}/signage/weather-kiosk:1.8.0", port=3000,
                requests={"cpu": "50m", "memory": "96Mi"}, limits={"memory": "192Mi"},
                readiness=http_probe("/health", delay=5, period=30))
    blind = NOW - timedelta(minutes=47)

    def ks(i: int, name: str, started: datetime) -> dict[str, dict]:
        return {"weather-kiosk": running(started, ready=False)}
    _, kps = deploy(s, "signage", "weather-kiosk", [kiosk], replicas=1, nodes=olds[1:],
                    revision=4, rollout=s.ago(days=5, hours=3), statuses=ks, service=3000)
    for cond in kps[0]["status"]["conditions"]:
        if cond["type"] in ("Ready", "ContainersReady"):
            cond["lastTransitionTime"] = blind.strftime("%Y-%m-%dT%H:%M:%SZ")
    c.event(kps[0], "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: "
            "503", first=blind, last=NOW - timedelta(seconds=14),
            count=int((NOW - blind).total_seconds() / 30), type_="Warning",
            field_path="spec.containers{weather-kiosk}")
    quiet(s, kps, "weather-kiosk", 74)
    talk(s, kps, "weather-kiosk", "weather-kiosk", [
        ("warn", logfmt("warn", "forecast fetch failed", status=429,
                        provider="api.bergwetter.example", retry_after="900s"), {}),
        ("info", logfmt("info", "serving cached forecast", age="52m"), {})], 40, start=blind)
    ksm_deployment(s, "signage", "weather-kiosk", lambda t: 1.0,
                   lambda t: 0.0 if between(t, blind) else 1.0)
    return s


def talk(s: Incident, pods: list, container: str, service: str, entries: list, count: int,
         *, start: datetime | None = None, end: datetime | None = None) -> None:
    """Ordinary log lines of running pods over the story's window (or from `start`)."""
    chatter(s, pods, container, service, entries, count,
            start=start or s.ago(hours=s.hours), end=end)


def _counter(s: Incident, pod: dict, rate, start: float | None = None) -> list:
    from tests.data.holdout._generator.base import alive
    from tests.scenario_tools.telemetry import integrate

    return integrate(alive(s, pod), rate, start=s.rng.randrange(2000, 40000)
                     if start is None else start, rng=s.rng)
