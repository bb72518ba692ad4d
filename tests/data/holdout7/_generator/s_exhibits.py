"""Museum: interactive exhibit kiosks in Hall B show "content unavailable" and the audio
guide drops out. The museum runs a three-box edge cluster (Spectro Cloud Palette). On one
box the host's CCTV recorder, nvr-recorder (a systemd service, not a pod), has been leaking
memory since a camera firmware push two hours ago: its resident memory grows from 1.2 GiB to
about 11 GiB, the node crosses the kubelet's hard eviction threshold (memory.available
< 500Mi) 26 minutes ago, reports MemoryPressure and evicts kiosk-backend, audio-guide and
finally exhibit-content pods; the exhibit-content replacement stays Pending because the other
two boxes lack memory. The culprit is the node. Red herrings: exhibit-content 3.0.0 rolled
out an hour ago with a bigger memory request (plausible alternative), the Pending pod's
"Insufficient memory", an old OOM restart of visitor-counter."""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import partial

from tests.data.holdout._generator.base import GIB, gauge, set_times
from tests.data.holdout2._generator.kit import NodeKind, working_set
from tests.data.holdout3._generator.kit3 import chatter, log_pod, namespaces, quiet, steady
from tests.scenario_tools.common import MIB, node_conditions, truth
from tests.scenario_tools.kube import Ctr, Obj, Workload, ended, http_probe, iso, running

from .kit7 import Incident, provider_nodes

ID = "exhibit-kiosks-going-blank"
NOW = datetime.fromisoformat("2027-06-05T15:33:00+00:00")
NS = "exhibits"
REG = "registry.museum-digital.example/exhibits"
TOTAL = 16231472 * 1024.0
OS_MIB, DAEMONS_MIB, NVR0 = 900.0, 640.0, 1210.0


def _wobble(base: float, period: int, steps: int, amount: float, t: int) -> float:
    return float(int(base * (1 + amount * ((t // period) % steps))))


def _since(when: float, t: int) -> float:
    return 1.0 if t >= when else 0.0


def build() -> Incident:
    s = Incident(
        id=ID, title="Exhibit kiosks going blank, audio guide dropping", now=NOW,
        report="""\
Front of house: the touch kiosks in Hall B keep going blank with "content unavailable",
and visitors say the audio guide app cuts out for a minute and comes back. Roughly the last
half hour. Hall A seems fine.
""",
        truth=truth(
            "node_failure", "Node", "", "", [], ""))
    set_times(s, 2.5, 60)
    c = s.cluster
    namespaces(s, {"default": 430, "kube-system": 430, NS: 415, "monitoring": 420})
    kind = NodeKind("nuc13-i7-16g", "16", "16231472Ki", "15500m", "15105072Ki",
                    "v1.30.9", "5.15.0-130-generic", "Palette Edge (Ubuntu 22.04.5 LTS)",
                    runtime="containerd://1.7.25", storage="479151136Ki",
                    alloc_storage="441579126146")
    nodes = provider_nodes(s, "palette", 3, kind, days=6.7)
    bad = nodes[1]
    BAD = bad["metadata"]["name"]
    s.truth = truth(
        "node_failure", "Node", "", BAD,
        ["MemoryPressure", "EvictionThresholdMet", "The node was low on resource: memory",
         "nvr-recorder.service"],
        f"On edge box {BAD} the host CCTV recorder nvr-recorder.service (not a pod) leaks "
        "memory since ~13:30 (1.2 GiB -> ~11 GiB resident); the node crossed the hard "
        "eviction threshold (memory.available < 500Mi), reports MemoryPressure and the "
        "kubelet evicted kiosk-backend, audio-guide and exhibit-content pods. Restart or "
        "memory-cap nvr-recorder (MemoryMax= in its unit) and roll back the camera "
        "firmware push; cordon the box until memory is back.")
    leak = NOW - timedelta(hours=1, minutes=58)
    ev = [NOW - timedelta(minutes=26, seconds=10), NOW - timedelta(minutes=19, seconds=5),
          NOW - timedelta(minutes=4, seconds=40)]

    # ---- workloads (pods on BAD: kiosk-backend #1, audio-guide #0, exhibit-content #0)
    kb = Ctr("kiosk-backend", f"{REG}/kiosk-backend:4.2.1", port=8080,
             requests={"cpu": "200m", "memory": "256Mi"}, limits={},
             readiness=http_probe("/ready"))
    kbw, kbs = steady(s, NS, "kiosk-backend", [kb], nodes=nodes, replicas=3, revision=37,
                      rollout=s.ago(days=5, hours=2))
    ag = Ctr("audio-guide", f"{REG}/audio-guide:2.9.4", port=8080,
             requests={"cpu": "100m", "memory": "128Mi"}, limits={},
             readiness=http_probe("/healthz"))
    agw, ags = steady(s, NS, "audio-guide", [ag], nodes=nodes, replicas=2, revision=19,
                      rollout=s.ago(days=4, hours=7), offset=1)
    ec_roll = NOW - timedelta(minutes=61)
    ec = Ctr("exhibit-content", f"{REG}/exhibit-content:3.0.0", port=8080,
             requests={"cpu": "250m", "memory": "2Gi"}, limits={"memory": "3Gi"},
             readiness=http_probe("/ready"))
    ecw, ecs = steady(s, NS, "exhibit-content", [ec], nodes=nodes, replicas=2, revision=12,
                      rollout=ec_roll, offset=1, old=(11, s.ago(days=6), [Ctr(
                          "exhibit-content", f"{REG}/exhibit-content:2.14.2", port=8080,
                          requests={"cpu": "250m", "memory": "1Gi"},
                          limits={"memory": "1536Mi"})]))
    vc = Ctr("visitor-counter", f"{REG}/visitor-counter:1.3.0", port=8080,
             requests={"cpu": "50m", "memory": "96Mi"}, limits={"memory": "128Mi"})
    _, vcs = steady(s, NS, "visitor-counter", [vc], nodes=nodes, replicas=1, revision=8,
                    rollout=s.ago(days=3, hours=1), offset=2,
                    restarted={0: (s.ago(days=1, hours=18), "OOMKilled", 137)})
    quiet(s, vcs, "visitor-counter", 80)
    victims: list[tuple[Workload, Obj, float, str, datetime]] = [
        (kbw, kbs[1], 612.0, "256Mi", ev[0]), (agw, ags[0], 452.0, "128Mi", ev[1]),
        (ecw, ecs[0], 1843.0, "2Gi", ev[2])]
    others = [n for n in nodes if n is not bad]
    pods_mib = sum(v[2] for v in victims)

    def freed(t: float) -> float:
        return sum(mib for _, _, mib, _, when in victims if t >= when.timestamp())

    start = TOTAL / MIB - OS_MIB - DAEMONS_MIB - pods_mib - NVR0
    segments = [(leak, start, ev[0], 470.0), (ev[0], 470.0 + 612, ev[1], 470.0),
                (ev[1], 470.0 + 452, ev[2], 475.0),
                (ev[2], 475.0 + 1843, NOW + timedelta(minutes=1), 475.0 + 1843 - 5.6 * 58)]

    def avail(t: float) -> float:
        if t < leak.timestamp():
            return float(int(start * MIB))
        for a, va, b, vb in segments:
            if a.timestamp() <= t < b.timestamp():
                x = (t - a.timestamp()) / (b.timestamp() - a.timestamp())
                return float(int((va + (vb - va) * x) * MIB))
        return float(int(segments[-1][3] * MIB))

    def nvr(t: float) -> float:
        return TOTAL - (OS_MIB + DAEMONS_MIB + pods_mib - freed(t)) * MIB - avail(t)

    # evictions, replacements
    c.event(bad, "NodeHasInsufficientMemory", f"Node {BAD} status is now: "
            "NodeHasInsufficientMemory", first=ev[0] - timedelta(seconds=3),
            component="kubelet", host=BAD)
    c.event(bad, "EvictionThresholdMet", "Attempting to reclaim memory",
            first=ev[0] - timedelta(seconds=2), last=ev[2] - timedelta(seconds=1), count=3,
            type_="Warning", component="kubelet", host=BAD)
    for k, (work, pod, mib, req, when) in enumerate(victims):
        name = work.name
        avail_ki = int(avail(when.timestamp() - 1) / 1024)
        msg = (f"The node was low on resource: memory. Threshold quantity: 500Mi, available: "
               f"{avail_ki}Ki. ")
        if k < 2:  # the kubelet names only containers above their request
            msg += (f"Container {name} was using {int(mib * 1024)}Ki, request is {req}, has "
                    "larger consumption of memory. ")
        status = pod["status"]
        cs = status["containerStatuses"][0]
        started = datetime.fromisoformat(cs["state"]["running"]["startedAt"].replace(
            "Z", "+00:00"))
        status.update({"phase": "Failed", "reason": "Evicted", "message": msg})
        cs.update({"ready": False, "started": False,
                   "state": ended("Error", 137, started, when + timedelta(seconds=1))})
        cs["state"]["terminated"]["containerID"] = cs["containerID"]
        for cond in status["conditions"]:
            if cond["type"] in ("Ready", "ContainersReady"):
                cond.update({"status": "False", "reason": "PodFailed",
                             "lastTransitionTime": iso(when + timedelta(seconds=1))})
                cond.pop("message", None)
            if cond["type"] == "PodReadyToStartContainers":
                cond.update({"status": "False",
                             "lastTransitionTime": iso(when + timedelta(seconds=2))})
        status["conditions"].insert(0, {"type": "DisruptionTarget", "status": "True",
                                        "reason": "TerminationByKubelet", "message": msg,
                                        "lastProbeTime": None, "lastTransitionTime": iso(when)})
        fp = f"spec.containers{{{name}}}"
        c.event(pod, "Evicted", msg, first=when, type_="Warning", host=BAD)
        c.event(pod, "Killing", f"Stopping container {name}", first=when + timedelta(seconds=1),
                field_path=fp, host=BAD)
        rs = work.revisions[-1]
        born = when + timedelta(seconds=1, milliseconds=300)
        if k < 2:
            target = others[k % 2]
            repl = c.pod(work, rs, node=target, created=born,
                         statuses={name: running(born + timedelta(seconds=4))})
            c.event(repl, "Scheduled", f"Successfully assigned {NS}/{repl['metadata']['name']} "
                    f"to {target['metadata']['name']}", first=born,
                    component="default-scheduler", host="")
            image = work.template.containers[0].image
            for reason, text in (("Pulled", f'Container image "{image}" already present on '
                                  "machine"),
                                 ("Created", f"Created container: {name}"),
                                 ("Started", f"Started container {name}")):
                c.event(repl, reason, text, first=born + timedelta(seconds=3), field_path=fp)
            quiet(s, [repl], name, mib * 0.9)
        else:
            sched = ("0/3 nodes are available: 1 node(s) had untolerated taint "
                     "{node.kubernetes.io/memory-pressure: }, 2 Insufficient memory. "
                     "preemption: 0/3 nodes are available: 1 Preemption is not helpful for "
                     "scheduling, 2 No preemption victims found for incoming pod.")
            repl = c.pod(work, rs, node=None, created=born, statuses={},
                         scheduled_message=sched)
            c.event(repl, "FailedScheduling", sched, first=born + timedelta(seconds=0.2),
                    last=NOW - timedelta(seconds=51), count=4, type_="Warning",
                    component="default-scheduler", host="")
        c.event(rs, "SuccessfulCreate", f"Created pod: {repl['metadata']['name']}",
                first=born, component="replicaset-controller")
        pod["metadata"]["_deleted"] = int(when.timestamp())
        working_set(s, pod, name, partial(_wobble, mib * MIB, 60, 5, 0.01))
        del pod["metadata"]["_deleted"]
        gauge(s, "kube_pod_status_reason", {"namespace": NS, "pod": pod["metadata"]["name"],
                                            "reason": "Evicted"},
              partial(_since, when.timestamp() + 5),
              "The pod status reasons")
    ecw.availability_changed = ev[2] + timedelta(seconds=2)
    for work, pods, mib in ((kbw, kbs, 612.0), (agw, ags, 452.0), (ecw, ecs, 1843.0)):
        quiet(s, [p for p in pods if p["status"].get("reason") != "Evicted"
                  and p["spec"].get("nodeName")], work.name, mib)

    # ---- the node: condition, taint, memory
    pressure = ev[0] - timedelta(seconds=3)
    for cond in bad["status"]["conditions"]:
        if cond["type"] == "MemoryPressure":
            cond.update({"status": "True", "reason": "KubeletHasInsufficientMemory",
                         "message": "kubelet has insufficient memory available",
                         "lastTransitionTime": iso(pressure)})
    bad["spec"]["taints"] = [{"key": "node.kubernetes.io/memory-pressure",
                              "effect": "NoSchedule", "timeAdded": iso(pressure)}]
    node_conditions(s, nodes, {(BAD, "MemoryPressure"): lambda t: t >= pressure.timestamp()})
    for n in nodes:
        name = n["metadata"]["name"]
        ip = n["status"]["addresses"][0]["address"]
        inst = {"instance": f"{ip}:9100", "node": name, "job": "node-exporter"}
        gauge(s, "node_memory_MemTotal_bytes", inst, lambda t: TOTAL,
              "Memory information field MemTotal_bytes.")
        if n is bad:
            gauge(s, "node_memory_MemAvailable_bytes", inst, avail,
                  "Memory information field MemAvailable_bytes.")
            gauge(s, "namedprocess_namegroup_memory_bytes", {
                "instance": f"{ip}:9256", "node": name, "job": "process-exporter",
                "groupname": "nvr-recorder", "memtype": "resident"}, nvr,
                "number of bytes of memory in use")
            gauge(s, "container_memory_working_set_bytes", {
                "id": "/system.slice/nvr-recorder.service", "node": name,
                "instance": f"{ip}:10250"}, lambda t: nvr(t) + 38 * MIB,
                "Current working set of the container in bytes")
        else:
            base = s.rng.uniform(1.6, 2.4) * GIB
            gauge(s, "node_memory_MemAvailable_bytes", inst,
                  partial(_wobble, base, 300, 3, 0.02),
                  "Memory information field MemAvailable_bytes.")
            gauge(s, "namedprocess_namegroup_memory_bytes", {
                "instance": f"{ip}:9256", "node": name, "job": "process-exporter",
                "groupname": "nvr-recorder", "memtype": "resident"},
                partial(_wobble, NVR0 * MIB, 600, 4, 0.01),
                "number of bytes of memory in use")

    # ---- what the halls see
    chatter(s, [p for p in kbs if p["status"].get("reason") != "Evicted"], "kiosk-backend",
            "kiosk-backend", [
                ("warn", "kiosk HB-07 lost session, reconnecting", {}),
                ("info", "GET /kiosks/HB-03/content 200 38ms", {}),
                ("warn", "upstream exhibit-content slow: 2.2s for /exhibits/ammonites", {}),
            ], 60, start=ev[0])
    log_pod(s, kbs[1], "kiosk-backend", "kiosk-backend", [
        ("info", "GET /kiosks/HB-05/content 200 41ms", {}),
        ("info", "GET /kiosks/HA-02/content 200 29ms", {}),
    ], 50, end=ev[0])
    chatter(s, [ecs[1]], "exhibit-content", "exhibit-content", [
        ("info", "exhibit-content 3.0.0: loaded 412 exhibits, 1.6 GiB media index", {}),
    ], 1, start=ec_roll, end=ec_roll + timedelta(minutes=2))
    chatter(s, [ecs[1]], "exhibit-content", "exhibit-content", [
        ("warn", "request queue 48 deep (single replica serving)", {}),
        ("info", "GET /exhibits/ammonites 200 182ms", {}),
    ], 30, start=ev[2])
    chatter(s, [ags[1]], "audio-guide", "audio-guide", [
        ("info", "stream track 214 (de) to device ****c3a1", {}),
        ("warn", "device ****77b0 resumed stream after 64s gap", {}),
    ], 40, start=ev[1])
    return s
