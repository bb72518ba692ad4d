"""Shape 8: a host agent outside Kubernetes grows on one node until memory.available falls
under the kubelet's eviction threshold; the kubelet evicts the BestEffort pods of three
workloads of three teams, who each see their service "failing"."""

from __future__ import annotations

from datetime import datetime, timedelta

from .k8s import (
    GiB,
    MiB,
    PodState,
    Revision,
    backends,
    container,
    deployment,
    http_probe,
    namespace,
    node,
    service,
    terminated,
)
from .kit import World, parse
from .signals import (
    Http,
    bystander,
    container_metrics,
    daily,
    pod_series,
    revision_metrics,
    timeline,
)

HOT = "ip-10-70-88-14.eu-west-1.compute.internal"


def build() -> World:
    now = parse("2026-11-30T16:45:00Z")
    pressure = now - timedelta(minutes=38)
    w = World(
        "three-services-flaky",
        "Thumbnails, feed indexing and webhooks flaky at the same time",
        now,
        "thumbnails, feed indexing and outgoing webhooks all got flaky in the last ~40 min, "
        "pods keep dying and coming back. three teams, three services - bad shared deploy? "
        "or the shared redis again?",
        {"category": "node_failure",
         "culprit": {"kind": "Node", "namespace": "", "name": HOT},
         "evidence": ["MemoryPressure", "The node was low on resource: memory",
                      "Evicted", "node.kubernetes.io/memory-pressure"],
         "fix": f"Drain and replace {HOT} (or restart the runaway osquery-agent host service "
                "that holds ~6Gi outside any pod) and reserve system memory "
                "(systemReserved) so host daemons cannot starve pods; give the BestEffort "
                "workloads memory requests."},
        seed=3008,
    )
    long_ago = parse("2025-02-03T09:00:00Z")
    for ns in ("media", "search", "integrations", "ml", "default"):
        namespace(w, ns, long_ago)
    others = [f"ip-10-70-{n}.eu-west-1.compute.internal" for n in ("12-201", "47-6", "63-90")]
    for i, name in enumerate(others):
        node(w, name, now - timedelta(days=4, hours=5 * i), zone=f"eu-west-1{'abc'[i]}",
             cpu="8", memory="32Gi", allocatable_memory="31200Mi")
    node(w, HOT, now - timedelta(days=3, hours=2), zone="eu-west-1b", cpu="8", memory="32Gi",
         allocatable_memory="31200Mi",
         conditions={"MemoryPressure": ("True", "KubeletHasInsufficientMemory",
                                        "kubelet has insufficient memory available")},
         taints=[{"key": "node.kubernetes.io/memory-pressure", "effect": "NoSchedule",
                  "timeAdded": pressure.strftime("%Y-%m-%dT%H:%M:%SZ")}])
    for obj in w.objects:
        if obj["kind"] == "Node" and obj["metadata"]["name"] == HOT:
            for cond in obj["status"]["conditions"]:
                if cond["type"] == "MemoryPressure":
                    cond["lastTransitionTime"] = pressure.strftime("%Y-%m-%dT%H:%M:%SZ")
    w.event("default", "Node", HOT, "NodeHasInsufficientMemory",
            f"Node {HOT} status is now: NodeHasInsufficientMemory", first=pressure, host=HOT)
    w.event("default", "Node", HOT, "EvictionThresholdMet", "Attempting to reclaim memory",
            first=pressure + timedelta(seconds=10), last=now - timedelta(minutes=6), count=5,
            type_="Warning", host=HOT)

    # Three BestEffort workloads with a pod (or two) on the hot node.
    evictions = {
        ("media", "thumbnailer"): [pressure + timedelta(minutes=2),
                                   pressure + timedelta(minutes=17)],
        ("search", "feed-indexer"): [pressure + timedelta(minutes=3)],
        ("integrations", "webhook-relay"): [pressure + timedelta(minutes=16)],
    }
    using = {"thumbnailer": ["612Mi", "588Mi"], "feed-indexer": ["1204Mi"],
             "webhook-relay": ["301Mi"]}
    images = {"thumbnailer": "ghcr.io/acme-media/thumbnailer:3.4.1",
              "feed-indexer": "ghcr.io/acme-search/feed-indexer:2.0.7",
              "webhook-relay": "ghcr.io/acme-int/webhook-relay:1.11.0"}
    for (ns, name), moments in evictions.items():
        started = now - timedelta(days=2, hours=3 + len(name) % 5)
        spec = container(name, images[name], cpu=None, memory=None,
                         liveness=http_probe("/healthz", 8080, delay=10))
        healthy = [PodState(node=others[i % 3], created=started + timedelta(seconds=30 * i))
                   for i in range(2)]
        gone = []
        replacements = []
        for k, moment in enumerate(moments):
            gone.append(PodState(
                node=HOT, created=started + timedelta(seconds=90 + 20 * k), ready=False,
                phase="Failed", reason="Evicted",
                message=f"The node was low on resource: memory. Threshold quantity: 100Mi, "
                        f"available: {w.rng.randint(61000, 98000)}Ki. Container {name} was "
                        f"using {using[name][k]}, request is 0, has larger consumption of "
                        "memory.",
                terminated=terminated("Error", 137, started + timedelta(seconds=100), moment)))
            replacements.append(PodState(node=others[(k + 1) % 3],
                                         created=moment + timedelta(seconds=1)))
        rev = Revision(5 + len(name), started, [spec], pods=healthy + gone + replacements)
        deployment(w, ns, name, long_ago, [rev], replicas=2 + len(moments), team=ns)
        service(w, ns, name, long_ago, target=8080, backends=backends(w, ns, [rev]))
        names = dict(zip(map(id, rev.pods), rev.pod_names, strict=True))
        for state in gone:
            pod_name = names[id(state)]
            moment = state.terminated["finishedAt"] if state.terminated else ""
            when = parse(moment)
            w.event(ns, "Pod", pod_name, "Evicted", state.message or "", first=when,
                    type_="Warning", host=HOT)
            w.event(ns, "Pod", pod_name, "Killing", f"Stopping container {name}", first=when,
                    host=HOT, field_path=f"spec.containers{{{name}}}")
            s = pod_series(w, ns, pod_name, name, HOT, state.created, end=when)
            peak = float(using[name][gone.index(state)].rstrip("Mi")) * MiB
            container_metrics(w, s, memory=lambda t, p=peak: p * daily(t, 0.97, 1.0),
                              cpu=lambda t: 0.15, memory_limit=None)
            for t in timeline(w, when - timedelta(minutes=40), 30, end=when):
                w.log(t, ns, pod_name, name, name, "info", _busy_line(w, name))
            w.log(when - timedelta(milliseconds=200), ns, pod_name, name, name, "warn",
                  "received SIGTERM, draining in-flight work (0s grace)")
        for state in replacements:
            pod_name = names[id(state)]
            w.event(ns, "Pod", pod_name, "Scheduled",
                    f"Successfully assigned {ns}/{pod_name} to {state.node}", first=state.created,
                    component="default-scheduler")
            w.event(ns, "Pod", pod_name, "Started", f"Started container {name}",
                    first=state.created + timedelta(seconds=8), host=state.node,
                    field_path=f"spec.containers{{{name}}}")
        for t in timeline(w, now - timedelta(hours=3), 25):
            pool = [names[id(s)] for s in healthy + replacements if s.created < t]
            w.log(t, ns, w.rng.choice(pool), name, name, "info", _busy_line(w, name))
        for moment in moments:
            for k in range(w.rng.randint(5, 12)):
                w.log(moment + timedelta(seconds=2 + 3 * k), ns, names[id(healthy[0])], name,
                      name, "error", _fallout(w, name))
        revision_metrics(w, ns, name, [Revision(rev.number, rev.created, rev.containers,
                                                pods=healthy + replacements,
                                                pod_names=[names[id(s)] for s in
                                                           healthy + replacements])],
                         memory=lambda t, n=name: float(using[n][0].rstrip("Mi")) * MiB,
                         cpu=lambda t: 0.15 * daily(t), memory_limit=0,
                         http=Http(rate=lambda t: 6 * daily(t), errors=lambda t: 0.002,
                                   latency=lambda t: 0.09, handler="/", histogram=False))

    # The big, well-behaved tenant of the node (Guaranteed, within its request).
    store = Revision(14, now - timedelta(days=3), [container(
        "feature-store", "ghcr.io/acme-ml/feature-store:0.31.2", cpu="3", cpu_limit="3",
        memory="12Gi", memory_limit="12Gi",
        readiness=http_probe("/ready", 8080))], pods=[
        PodState(node=HOT, created=now - timedelta(days=3)),
        PodState(node=others[2], created=now - timedelta(days=3))])
    deployment(w, "ml", "feature-store", long_ago, [store], replicas=2, team="ml")
    service(w, "ml", "feature-store", long_ago, backends=backends(w, "ml", [store]))
    revision_metrics(w, "ml", "feature-store", [store], memory=lambda t: 10.4 * GiB,
                     cpu=lambda t: 1.1 * daily(t), memory_limit=12 * GiB, cpu_limit=3.0)
    bystander(w, "media", "image-api", replicas=3, nodes=others, image="ghcr.io/acme-media/"
              "image-api:8.1.0", created=long_ago, rev_created=now - timedelta(days=5),
              memory_mib=400, memory_limit="1Gi", cpu_cores=0.2, rps=45, median_s=0.03,
              team="media", messages=[("GET /img/{n}.webp 200 {ms}ms", "info")], log_every_s=60)

    # Node memory: MemAvailable falls while the pods' working sets stay flat; the growth
    # is a host service's cgroup (cAdvisor's system.slice series).
    times = w.steps()
    for name in [*others, HOT]:
        total = 32 * GiB
        base = _agent(now, pressure) + 95 * MiB if name == HOT else w.rng.uniform(14, 19) * GiB
        labels = {"instance": name, "job": "node-exporter", "node": name}
        w.gauge("node_memory_MemTotal_bytes", labels, times, lambda t, v=total: v)

        def available(t: datetime, n: str = name, b: float = base) -> float:
            if n != HOT:
                return b * w.rng.uniform(0.98, 1.02)
            if t < pressure:
                return b - _agent(now, t)
            return w.rng.uniform(84, 260) * MiB  # the kubelet keeps reclaiming at the edge
        w.gauge("node_memory_MemAvailable_bytes", labels, times, available)
        agent_labels = {"id": "/system.slice/osquery-agent.service", "node": name,
                        "instance": name}
        w.gauge("container_memory_working_set_bytes", agent_labels, times,
                lambda t, n=name: (_agent(now, t) if n == HOT else 0) + 310 * MiB)
    return w


def _agent(now: datetime, t: datetime) -> float:
    """Bytes the runaway host agent gained since three hours ago (about 2Gi an hour)."""
    hours = max(0.0, (t - (now - timedelta(hours=3))).total_seconds() / 3600)
    return min(hours, 2.9) * 2.05 * GiB


def _busy_line(w: World, name: str) -> str:
    if name == "thumbnailer":
        asset = w.rng.randint(10**6, 10**7)
        return f"thumbnail 512x512 for asset {asset} in {w.rng.randint(40, 300)}ms"
    if name == "feed-indexer":
        return f"indexed feed chunk {w.rng.randint(1000, 9999)} ({w.rng.randint(200, 900)} docs)"
    event = f"evt_{w.rng.getrandbits(40):010x}"
    return f"delivered webhook {event} -> 200 in {w.rng.randint(40, 900)}ms"


def _fallout(w: World, name: str) -> str:
    if name == "thumbnailer":
        return "lost worker lease for batch, requeueing 14 assets (peer connection reset)"
    if name == "feed-indexer":
        return "shard writer peer gone: broken pipe, retrying chunk"
    return "delivery attempt aborted: upstream connection reset by peer, will retry in 30s"
