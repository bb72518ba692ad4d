"""Allotment society: pods evicted on one worker. pve-k8s-w3 was rebuilt from a template whose
kubelet config sets containerLogMaxSize to 10Gi (meant 10Mi): container logs are never
rotated there, /var/log/pods fills the root disk, the kubelet reports DiskPressure, taints
the node and evicts pods (ephemeral-storage). Red herrings: booking-api (named in the report)
losing pods, image GC failures, a noisy plot-map rollout yesterday."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gauge, set_times
from tests.data.holdout2._generator.kit import NodeKind
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.scenario_tools.common import MIB, truth
from tests.scenario_tools.kube import Ctr, ended, http_probe, iso

from .kit5 import Incident, provider_nodes

ID = "allotment-bookings-flapping"
NOW = datetime.fromisoformat("2027-05-03T14:48:00+00:00")
NS = "allotments"
REG = "ghcr.io/greenplots"
GIB = 1024 * MIB


def build() -> Incident:
    s = Incident(
        id=ID, title="booking-api pods keep getting evicted", now=NOW,
        report="""\
booking-api in allotments keeps losing pods: they show Evicted and new ones come up, plot
bookings fail now and then since about 14:00. Did the last booking-api release break
something?
""",
        truth=truth(
            "node_failure", "Node", "", "pve-k8s-w3",
            ["DiskPressure", "ephemeral-storage", "Evicted", "containerLogMaxSize"],
            "pve-k8s-w3 is under DiskPressure: its kubelet (rebuilt from a template with "
            "containerLogMaxSize 10Gi instead of 10Mi) never rotates container logs, "
            "/var/log/pods filled the root disk and the kubelet evicts pods. Cordon and drain "
            "the node, fix the kubelet config (containerLogMaxSize: 10Mi), truncate the logs, "
            "then uncordon."))
    set_times(s, 2.0, 60)
    c = s.cluster
    namespaces(s, {"default": 300, "kube-system": 300, NS: 280, "plot-map": 200})
    kind = NodeKind("", "6", "24609384Ki", "5800m", "22464104Ki", "v1.30.4",
                    "6.1.0-25-amd64", "Debian GNU/Linux 12 (bookworm)",
                    storage="61611820Ki", alloc_storage="56781107412")
    nodes = provider_nodes(s, "proxmox", 4, kind, days=6.0)
    bad = nodes[2]
    bad_name = bad["metadata"]["name"]
    bad["metadata"]["creationTimestamp"] = iso(s.ago(days=3, hours=4))
    pressure = NOW.replace(hour=13, minute=57, second=40)
    bad["spec"]["taints"] = [{"key": "node.kubernetes.io/disk-pressure", "effect": "NoSchedule",
                              "timeAdded": iso(pressure)}]
    for cond in bad["status"]["conditions"]:
        if cond["type"] == "DiskPressure":
            cond.update({"status": "True", "reason": "KubeletHasDiskPressure",
                         "message": "kubelet has disk pressure",
                         "lastTransitionTime": iso(pressure)})
    total = 58.7 * GIB

    def avail(t: int) -> float:
        start = (NOW - timedelta(hours=2)).timestamp()
        v = 9.4 * GIB - (t - start) * 1.05 * MIB
        if t >= pressure.timestamp():
            v = 0.095 * total + ((t // 240) % 3) * 0.01 * total
        return max(v, 0.08 * total)
    gauge(s, "node_filesystem_avail_bytes", {"instance": bad_name, "mountpoint": "/",
                                             "fstype": "ext4", "device": "/dev/sda1"},
          avail, "Filesystem space available to non-root users in bytes.")
    gauge(s, "node_filesystem_size_bytes", {"instance": bad_name, "mountpoint": "/",
                                            "fstype": "ext4", "device": "/dev/sda1"},
          lambda t: total, "Filesystem size in bytes.")
    for n in nodes:
        nm = n["metadata"]["name"]
        gauge(s, "kube_node_status_condition", {"node": nm, "condition": "DiskPressure",
                                                "status": "true"},
              (lambda t: 1.0 if t >= pressure.timestamp() else 0.0) if n is bad
              else (lambda t: 0.0),
              "The condition of a cluster node.")
    app = Ctr("booking-api", f"{REG}/booking-api:3.6.1", port=8080,
              requests={"cpu": "250m", "memory": "384Mi"}, limits={"memory": "512Mi"},
              readiness=http_probe("/healthz"))
    work, pods = steady(s, NS, "booking-api", [app], nodes=[nodes[0], nodes[1], nodes[3]],
                        replicas=3, revision=21, rollout=s.ago(days=2, hours=6))
    quiet(s, pods, "booking-api", 260)
    pm = Ctr("plot-map", f"{REG}/plot-map:2.0.0", port=8080,
             requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "512Mi"})
    pwork, pms = steady(s, "plot-map", "plot-map", [pm], nodes=[nodes[0], nodes[3]],
                        replicas=2, revision=9, rollout=s.ago(hours=20))
    quiet(s, pms, "plot-map", 190)
    evictions = [pressure + timedelta(minutes=m) for m in (1, 14, 29)]
    for k, (when, owner) in enumerate(zip(evictions, (work, pwork, work), strict=True)):
        who = owner.name
        born = s.ago(hours=16 - 3 * k)
        msg = ("The node was low on resource: ephemeral-storage. Threshold quantity: "
               f"6154407411, available: 5876212Ki. Container {who} was using 48Ki, request "
               "is 0, has larger consumption of ephemeral-storage.")
        pod = c.pod(owner, owner.revisions[-1], node=bad, created=born, phase="Failed",
                    reason="Evicted", message=msg, statuses={who: {
                        "state": ended("ContainerStatusUnknown", 137, born +
                                       timedelta(seconds=9), when), "ready": False,
                        "started": False, "restartCount": 0, "lastState": {}}})
        for cond in pod["status"]["conditions"]:
            if cond["type"] in ("Ready", "ContainersReady"):
                cond.update({"status": "False", "lastTransitionTime": iso(when)})
        pod["status"]["conditions"].append({
            "type": "DisruptionTarget", "status": "True", "reason": "TerminationByKubelet",
            "message": msg, "lastProbeTime": None, "lastTransitionTime": iso(when)})
        if when >= NOW - timedelta(hours=1):
            c.event(pod, "Evicted", msg, first=when, type_="Warning", host=bad_name)
            c.event(pod, "Killing", f"Stopping container {who}", first=when +
                    timedelta(seconds=1), field_path=f"spec.containers{{{who}}}")
        s.logs.add(when - timedelta(minutes=3), "info", "GET /plots/available 200 31ms",
                   namespace=owner.namespace, pod=pod["metadata"]["name"], container=who,
                   service=who, node=bad_name)
    node_ev = {"apiVersion": "v1", "kind": "Node", "metadata": {
        "name": bad_name, "uid": bad["metadata"]["uid"],
        "resourceVersion": bad["metadata"]["resourceVersion"]}, "spec": {}}
    c.event(node_ev, "EvictionThresholdMet", "Attempting to reclaim ephemeral-storage",
            first=NOW - timedelta(minutes=58), last=NOW - timedelta(minutes=2), count=11,
            type_="Warning", host=bad_name)
    c.event(node_ev, "FreeDiskSpaceFailed", "Failed to garbage collect required amount of "
            "images. Attempted to free 5338421248 bytes, but only found 402118656 bytes "
            "eligible to free.", first=NOW - timedelta(minutes=55), last=NOW -
            timedelta(minutes=5), count=11, type_="Warning", host=bad_name)
    c.event(node_ev, "NodeHasDiskPressure", f"Node {bad_name} status is now: "
            "NodeHasDiskPressure", first=NOW - timedelta(minutes=50), host=bad_name)
    gauge(s, "kubelet_evictions", {"node": bad_name, "eviction_signal": "nodefs.available"},
          lambda t: float(sum(1 for e in evictions if e.timestamp() <= t)),
          "Cumulative number of pod evictions by eviction signal")
    chatter(s, pods, "booking-api", "booking-api", [
        ("info", "plot B-17 booked by member 4471 for season 2027", {}),
        ("warn", "upstream waitlist-worker unavailable, retry 1/3", {}),
    ], 120)
    chatter(s, pms, "plot-map", "plot-map", [
        ("warn", "tile cache miss rate 41% after release 2.0.0", {}),
        ("info", "rendered site map GREENLANE-N in 220ms", {}),
    ], 60)
    return s
