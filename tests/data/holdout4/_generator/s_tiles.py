"""Maps: the tile-renderer release stalls. Revision 8 (same image) set the memory request
equal to the new 6Gi limit (it was 1536Mi) to get the Guaranteed QoS class. No worker has
6Gi of unrequested memory left, so the surge pod stays Pending with "Insufficient memory";
the cluster has no autoscaler. Red herrings: a cordoned node (kernel maintenance), a
memory-hungry osm-importer neighbour, and the slow high-zoom tiles that the three old pods
render while a burst of cache misses comes in."""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import partial

from tests.data.holdout._generator.base import gauge, set_times
from tests.data.holdout2._generator.kit import NodeKind, requests
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.scenario_tools.common import MIB, truth
from tests.scenario_tools.kube import Ctr, Template, http_probe, running

from .kit4 import Incident, pool, uuid_of

ID = "map-tiles-rollout-stalled"
NOW = datetime.fromisoformat("2027-10-19T14:12:00+00:00")
NS = "geodata"
REG = "cr.de-fra.ionos.com/kartenwerk"


def _renderer(request: str) -> Ctr:
    return Ctr("tile-renderer", f"{REG}/tile-renderer:2.31.0", port=8080,
               requests={"cpu": "1", "memory": request}, limits={"memory": "6Gi"},
               env={"MAPNIK_THREADS": "4", "METATILE_SIZE": "8",
                    "STYLE": "/styles/kartenwerk-day.xml"},
               readiness=http_probe("/ready", delay=15),
               liveness=http_probe("/live", delay=60, period=30, timeout=3))


def build() -> Incident:
    s = Incident(
        id=ID,
        title="tile-renderer rollout not progressing",
        now=NOW,
        report="""\
The tile-renderer change we merged at lunch (request tuning, no code change) still shows
1 of 3 updated in Argo CD after 40 minutes, and the map at zoom 15+ feels slower than usual
today. Is the rollout broken, or is something else going on with the renderers?
""",
        truth=truth(
            "unschedulable", "Deployment", NS, "tile-renderer",
            ["FailedScheduling", "Insufficient memory", "6Gi", "Pending"],
            "Revision 8 of tile-renderer requests 6Gi of memory per pod (was 1536Mi) and no "
            "worker has 6Gi unrequested, so the new pod stays Pending (Insufficient memory); "
            "set the request back near the real working set (~1.3Gi) or add a larger node "
            "pool, and uncordon the worker once its maintenance is done."))
    set_times(s, 2.0, 60)
    c = s.cluster
    namespaces(s, {"default": 600, "kube-system": 600, NS: 520, "osm-import": 410})
    kind = NodeKind("CUBE-XL", "8", "16380244Ki", "7800m", "14143828Ki", "v1.31.5",
                    "6.8.0-52-generic", "Ubuntu 24.04.1 LTS", runtime="containerd://1.7.25")

    def namer(i: int) -> tuple[str, str]:
        return f"kw-prod-general-{['7mxq2', 'b4nt8', 'hz2pw', 'r9cdk'][i]}", f"10.7.222.{11 + i}"

    nodes = pool(s, 4, kind=kind, namer=namer, days=6.6, region="de/fra",
                 zones=["ZONE_1", "ZONE_2"],
                 labels=lambda i, n: {"enterprise.cloud.ionos.com/nodepool":
                                      uuid_of(s, "np"),
                                      "enterprise.cloud.ionos.com/datacenter":
                                      uuid_of(s, "dc"),
                                      "node.kubernetes.io/instance-type": "CUBE-XL"},
                 provider=lambda i, n: f"ionos://{uuid_of(s, 'vm', n)}",
                 cidr=lambda i: f"10.210.{i}.0/24")
    cordoned = nodes[3]
    cordoned["spec"]["unschedulable"] = True
    cordoned["spec"]["taints"] = [{"effect": "NoSchedule",
                                   "key": "node.kubernetes.io/unschedulable",
                                   "timeAdded": (NOW - timedelta(hours=3, minutes=4)).strftime(
                                       "%Y-%m-%dT%H:%M:%SZ")}]
    c.event(cordoned, "NodeNotSchedulable", f"Node {cordoned['metadata']['name']} status is "
            "now: NodeNotSchedulable", first=NOW - timedelta(minutes=58, seconds=40),
            component="kubelet", host=cordoned["metadata"]["name"])

    # ---- tile-renderer: revision 7 runs, revision 8 cannot schedule
    started = NOW - timedelta(minutes=41, seconds=12)
    work = c.workload("Deployment", NS, "tile-renderer", Template([_renderer("6Gi")],
                      service_account="tile-renderer"), replicas=3, created=s.ago(days=300),
                      labels={"app.kubernetes.io/name": "tile-renderer",
                              "app.kubernetes.io/part-of": "kartenwerk"})
    old_rs = c.revision(work, 7, s.ago(days=5, hours=19), Template(
        [_renderer("1536Mi")], service_account="tile-renderer"), replicas=3)
    new_rs = c.revision(work, 8, started, replicas=1)
    olds = []
    for i in range(3):
        born = s.ago(days=5, hours=19) + timedelta(seconds=5 + 33 * i)
        olds.append(c.pod(work, old_rs, node=nodes[i], created=born,
                          statuses={"tile-renderer": running(born + timedelta(seconds=9))}))
    msg = ("0/4 nodes are available: 1 node(s) were unschedulable, 3 Insufficient memory. "
           "preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, "
           "3 No preemption victims found for incoming pod.")
    pending = c.pod(work, new_rs, node=None, created=started + timedelta(seconds=0.3),
                    statuses={}, scheduled_message=msg)
    c.service(NS, "tile-renderer", {"app.kubernetes.io/name": "tile-renderer"}, port=80,
              created=s.ago(days=300))
    c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set {new_rs['metadata']['name']}"
            " from 0 to 1", first=started, component="deployment-controller", host="")
    c.event(new_rs, "SuccessfulCreate", f"Created pod: {pending['metadata']['name']}",
            first=started + timedelta(seconds=0.3), component="replicaset-controller", host="")
    c.event(pending, "FailedScheduling", msg, first=started + timedelta(seconds=0.4),
            last=NOW - timedelta(seconds=s.rng.randrange(20, 90)), count=9, type_="Warning",
            component="default-scheduler", host="")
    work.progressing = ("ReplicaSetUpdated", f'ReplicaSet "{new_rs["metadata"]["name"]}" is '
                        "progressing.", started)
    gauge(s, "kube_pod_status_phase", {"namespace": NS, "pod": pending["metadata"]["name"],
                                       "phase": "Pending"}, lambda t: 1.0,
          "The pods current phase.", times=[t for t in s.times if t >= started.timestamp() + 20])
    gauge(s, "kube_pod_container_resource_requests",
          {"namespace": NS, "pod": pending["metadata"]["name"], "container": "tile-renderer",
           "resource": "memory", "unit": "byte"}, lambda t: 6 * 1024 * MIB,
          "The number of requested request resource by a container.",
          times=[t for t in s.times if t >= started.timestamp() + 20])

    def misses(t: int) -> float:
        return 1.0 + 0.8 * max(0.0, min(1.0, (t - (NOW.timestamp() - 3300)) / 1500))
    for pod in olds:
        quiet(s, [pod], "tile-renderer", 1320)
        requests(s, pod, "tile-renderer", rps=lambda t: 22 * misses(t), codes={
            "200": lambda t: 0.996, "404": lambda t: 0.003, "504": lambda t: 0.0007 * misses(t)},
            median=lambda t: 0.09 * misses(t) ** 1.5, buckets=(0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
                                                               5.0))
    chatter(s, olds, "tile-renderer", "tile-renderer", [
        ("info", "rendered metatile z15/17504/10752 in 412ms", {}),
        ("info", "rendered metatile z17/70016/43008 in 1380ms", {}),
        ("warn", "rendered metatile z16/35008/21504 in 3120ms (slow: 2194 features)", {}),
        ("warn", "font 'Noto Sans Ethiopic Regular' not found, falling back", {}),
    ], 150)

    # ---- neighbours that hold the memory requests
    imp = Ctr("osm-importer", f"{REG}/osm-importer:0.18.2", port=8080,
              requests={"cpu": "2", "memory": "9Gi"}, limits={"memory": "11Gi"},
              readiness=None)
    _, imps = steady(s, "osm-import", "osm-importer", [imp], nodes=nodes[:3], replicas=3,
                     revision=12, rollout=s.ago(days=3, hours=4), service=None)
    quiet(s, imps, "osm-importer", 8200)
    chatter(s, imps, "osm-importer", "osm-importer", [
        ("info", "applied replication diff 006/412/118: 18211 nodes, 2210 ways", {}),
        ("warn", "way 1190231188 references missing node 11004412911, skipped", {}),
    ], 60)
    cache = Ctr("tile-cache", f"{REG}/varnish:7.6.1", port=6081,
                requests={"cpu": "250m", "memory": "2Gi"}, limits={"memory": "2Gi"},
                readiness=http_probe("/healthz"))
    _, caches = steady(s, NS, "tile-cache", [cache], nodes=nodes[:3], replicas=2,
                       revision=5, rollout=s.ago(days=6, hours=2), offset=1)
    quiet(s, caches, "tile-cache", 1900)
    chatter(s, caches, "tile-cache", "tile-cache", [
        ("info", "cache hit ratio 0.87 over 60s (MISS 1322)", {}),
        ("warn", "cache hit ratio 0.71 over 60s (MISS 4080): style kartenwerk-day v41 "
         "invalidated z14-z18", {}),
    ], 40)
    for n in nodes:
        name = n["metadata"]["name"]
        used = 0.71 if n is not cordoned else 0.04
        gauge(s, "kube_node_status_allocatable", {"node": name, "resource": "memory",
                                                   "unit": "byte"},
              lambda t: 14143828 * 1024.0, "The allocatable for different resources of a node.")
        gauge(s, "node_memory_MemAvailable_bytes", {"instance": name},
              partial(_available, s, used),
              "Memory information field MemAvailable_bytes.")
    return s


def _available(s: Incident, used: float, t: int) -> float:
    return 16380244 * 1024.0 * (1 - used) * s.rng.uniform(0.97, 1.03)
