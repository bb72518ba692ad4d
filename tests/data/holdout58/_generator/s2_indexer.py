"""Scenario 2: catalog-indexer on JDK 8u172 after the search pool moved to a cgroup v2 OS.

``-XX:+UseCGroupMemoryLimitForHeap`` only reads cgroup v1 files; on Amazon Linux 2023 the
JVM falls back to the host's 64 GiB, sizes a 31 GiB max heap in a 3Gi container and is
OOMKilled whenever a reindex burst lets the heap grow.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ._k8s import (
    PodSpecBits,
    app,
    container,
    cstatus,
    deployment,
    namespace,
    node,
    owner_ref,
    pod,
    replicaset,
    running,
    terminated,
)
from ._kit import Obj, Story, at, grid, iso, mins

NS = "search"
IMG = "registry.acme.io/search/catalog-indexer:3.14.2"
JAVA_OPTS = ("-XX:+UnlockExperimentalVMOptions -XX:+UseCGroupMemoryLimitForHeap "
             "-XX:MaxRAMFraction=2 -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError")


def _nodes(s: Story, migrated: datetime) -> tuple[dict[str, str], list[str], list[str]]:
    """Three new AL2023 search nodes and six older AL2 general nodes."""
    rng, now = s.rng, s.now
    ips: dict[str, str] = {}
    new_nodes, gen_nodes = [], []
    for i in range(3):
        ip = f"10.30.{64 + i * 16}.{rng.randint(10, 240)}"
        n = f"ip-{ip.replace('.', '-')}.eu-central-1.compute.internal"
        s.add(node(s, n, migrated + mins(6 * i), ip=ip, memory="65023492Ki",
                   labels={"eks.amazonaws.com/nodegroup": "search-al2023", "workload": "search",
                           "node.kubernetes.io/instance-type": "r6i.2xlarge",
                           "topology.kubernetes.io/zone": f"eu-central-1{'abc'[i]}"},
                   os_image="Amazon Linux 2023.4.20240528", kernel="6.1.91-99.172.amzn2023.x86_64",
                   kubelet="v1.29.3-eks-ae9a62a", runtime="containerd://1.7.11"))
        ips[n] = ip
        new_nodes.append(n)
    for i in range(6):
        ip = f"10.30.{8 + i * 8}.{rng.randint(10, 240)}"
        n = f"ip-{ip.replace('.', '-')}.eu-central-1.compute.internal"
        s.add(node(s, n, now - timedelta(days=40 + i), ip=ip,
                   labels={"eks.amazonaws.com/nodegroup": "general-m6i", "workload": "general",
                           "node.kubernetes.io/instance-type": "m6i.2xlarge",
                           "topology.kubernetes.io/zone": f"eu-central-1{'abc'[i % 3]}"},
                   kubelet="v1.29.3-eks-ae9a62a"))
        ips[n] = ip
        gen_nodes.append(n)
    return ips, new_nodes, gen_nodes


def build() -> Story:
    """Build the scenario."""
    now = at("2026-06-03T14:10:00Z")
    s = Story(
        "search-results-hours-stale", "Search results hours out of date", now,
        "search results are hours behind the catalogue again, merchandising changed prices at "
        "9 and search still shows the old ones. consumer lag on catalog-changes keeps growing. "
        "is kafka ok? query-api had a release this afternoon too",
        "oom_killed", {"kind": "Deployment", "namespace": NS, "name": "catalog-indexer"},
        ["OOMKilled", "exit code 137", "max heap 30.96 GiB", "1.8.0_172",
         "Amazon Linux 2023", "UseCGroupMemoryLimitForHeap"],
        "catalog-indexer's JDK 8u172 cannot see cgroup v2 limits on the new AL2023 search pool, "
        "so it sizes its heap from the node's 64 GiB. Set an explicit -Xmx (about 2g for the 3Gi "
        "limit) or move to JDK 8u372+/11+ with -XX:MaxRAMPercentage; then let it catch up.",
        seed=5802)
    migrated = now - timedelta(days=3, hours=2)
    ips, new_nodes, gen_nodes = _nodes(s, migrated)
    for ns in (NS, "default", "kafka", "opensearch"):
        s.add(namespace(s, ns, now - timedelta(days=700)))
    env = [{"name": "JAVA_OPTS", "value": JAVA_OPTS},
           {"name": "KAFKA_TOPIC", "value": "catalog-changes"},
           {"name": "OPENSEARCH_URL", "value": "https://opensearch.search.svc:9200"}]
    cs = [container("catalog-indexer", IMG, port=8081, cpu="1", memory="3Gi", env=env,
                    probe_path="/actuator/health")]
    extra = {"nodeSelector": {"workload": "search"}}
    d, duid = deployment(s, NS, "catalog-indexer", labels={"app": "catalog-indexer"},
                         containers=cs, replicas=2, ready=2, created=now - timedelta(days=600),
                         revision=58, generation=58, changed=now - timedelta(days=6, hours=3),
                         pod_extra=extra)
    rs, rsuid = replicaset(s, NS, "catalog-indexer", duid, "7b5d9c4f8d", containers=cs,
                           replicas=2, ready=2, revision=58, app="catalog-indexer",
                           created=now - timedelta(days=6, hours=3), pod_extra=extra)
    s.add(d, rs)
    ts = grid(now - timedelta(days=4), now, 300)
    _before(s, migrated, ts)
    for k in range(2):
        _indexer_pod(s, k, new_nodes[k], ips, migrated, ts, cs, extra,
                     owner_ref("ReplicaSet", rs["metadata"]["name"], rsuid))
    _rest(s, ips, gen_nodes, new_nodes, migrated, ts)
    return s


def _before(s: Story, migrated: datetime, ts: list[datetime]) -> None:
    """The pods that ran on the old AL2 (cgroup v1) pool until the migration."""
    rng, now = s.rng, s.now
    for _ in range(2):
        op = f"catalog-indexer-7b5d9c4f8d-{s.suffix()}"
        pts = [t for t in ts if t < migrated]
        s.metrics.gauge("container_memory_working_set_bytes", "working set", {
            "namespace": NS, "pod": op, "container": "catalog-indexer"},
            [(t, 1.62e9 + 1.1e8 * rng.random()) for t in pts])
        s.metrics.gauge("jvm_memory_bytes_max", "JVM max memory", {
            "namespace": NS, "pod": op, "area": "heap"}, [(t, 1610612736.0) for t in pts])
        start = now - timedelta(days=6, hours=3)
        s.log(start + mins(1), NS, op, "catalog-indexer", "catalog-indexer", "info",
              "catalog-indexer 3.14.2 starting on OpenJDK 64-Bit Server VM 1.8.0_172-b11")
        s.log(start + mins(1.01), NS, op, "catalog-indexer", "catalog-indexer", "info",
              "JVM memory: max heap 1.50 GiB, committed 0.19 GiB, available processors 2")
        s.chatter(NS, [op], "catalog-indexer", "catalog-indexer", migrated - timedelta(hours=18),
                  migrated, 240.0, [(5, "info", "indexed batch of 500 products in {ms}ms, lag "
                                                "{n} messages")])


def _indexer_pod(s: Story, k: int, nd: str, ips: dict[str, str], migrated: datetime,
                 ts: list[datetime], cs: list[Obj], extra: Obj, owner: Obj) -> None:
    """One indexer pod on the new pool: boots with a 31 GiB heap, OOMKilled repeatedly."""
    rng, now = s.rng, s.now
    limit = 3 * 1024**3
    pn = f"catalog-indexer-7b5d9c4f8d-{s.suffix()}"
    start = migrated + mins(9 + 4 * k)
    kills: list[datetime] = []
    t = start + mins(50)
    while t < now - mins(4):
        kills.append(t)
        t += mins(rng.randint(35, 70) if 7 <= t.hour < 20 else rng.randint(150, 260))
    st = [cstatus("catalog-indexer", IMG, running(kills[-1] + timedelta(seconds=2)),
                  ready=True, restarts=len(kills),
                  last=terminated("OOMKilled", 137, kills[-2] + timedelta(seconds=2), kills[-1]))]
    s.add(pod(s, NS, pn, PodSpecBits(cs, {"app": "catalog-indexer",
                                          "pod-template-hash": "7b5d9c4f8d"}, extra),
              node_name=nd, ip=f"10.30.{70 + k * 16}.{rng.randint(10, 240)}", start=start,
              owner=owner, statuses=st, host_ip=ips[nd]))
    boots = [start, *[x + timedelta(seconds=2) for x in kills]]
    for j, b in enumerate(boots):
        lines = [f"{iso(b)} INFO  c.a.s.i.Main - catalog-indexer 3.14.2 starting on OpenJDK "
                 "64-Bit Server VM 1.8.0_172-b11 (Zulu 8.30.0.1-linux64)",
                 f"{iso(b)} INFO  c.a.s.i.Main - JVM memory: max heap 30.96 GiB, committed "
                 "1.00 GiB, available processors 8",
                 f"{iso(b)} INFO  o.a.k.c.c.KafkaConsumer - [Consumer clientId=indexer-{k}, "
                 "groupId=catalog-indexer] Subscribed to topic(s): catalog-changes"]
        for ln in lines:
            s.log(b, NS, pn, "catalog-indexer", "catalog-indexer", "info", ln.split(" - ")[1])
        end = kills[j] if j < len(kills) else now
        heap, body, t = 0.9, [], b + mins(2)
        while t < end:
            heap = min(heap + rng.uniform(0.05, 0.22), 3.05)
            msg = (f"indexed batch of 500 products in {rng.randint(900, 4200)}ms, lag "
                   f"{rng.randint(40000, 190000)} messages, heap used {heap:.2f} GiB")
            body.append(f"{iso(t)} INFO  c.a.s.i.BatchWriter - {msg}")
            s.log(t, NS, pn, "catalog-indexer", "catalog-indexer", "info", msg)
            t += mins(rng.uniform(2.5, 6))
        if j == len(boots) - 1:
            s.pod_log(NS, pn, "catalog-indexer", lines + body)
        elif j == len(boots) - 2:
            s.pod_log(NS, pn, "catalog-indexer", lines + body, previous=True)
    pts = [t for t in ts if t >= start]
    s.metrics.gauge("jvm_memory_bytes_max", "JVM max memory", {
        "namespace": NS, "pod": pn, "area": "heap"}, [(t, 33243028275.0) for t in pts])
    ws = []
    for t in pts:
        prev = max([b for b in boots if b <= t], default=start)
        ws.append((t, min(limit * 0.995, 1.1e9 + (t - prev).total_seconds() * 9.5e5
                          * (1.0 if 7 <= t.hour < 20 else 0.35))))
    s.metrics.gauge("container_memory_working_set_bytes", "working set", {
        "namespace": NS, "pod": pn, "container": "catalog-indexer"}, ws)
    s.metrics.gauge("kube_pod_container_resource_limits", "limits", {
        "namespace": NS, "pod": pn, "container": "catalog-indexer", "resource": "memory",
        "unit": "byte"}, [(t, float(limit)) for t in pts])
    s.metrics.counter("kube_pod_container_status_restarts", "restarts", {
        "namespace": NS, "pod": pn, "container": "catalog-indexer"},
        [(t, float(sum(1 for x in kills if x <= t))) for t in pts])
    for x in [x for x in kills if x > now - mins(60)]:
        s.event("default", "Node", nd, "SystemOOM", "System OOM encountered, victim "
                f"process: java, pid: {rng.randint(100000, 900000)}", type_="Warning",
                first=x, last=x, host=nd)
    s.event(NS, "Pod", pn, "Pulled", f'Container image "{IMG}" already present on machine',
            count=len(kills) + 1, first=start, last=boots[-1], host=nd)
    s.event(NS, "Pod", pn, "Started", "Started container catalog-indexer",
            count=len(kills) + 1, first=start, last=boots[-1], host=nd)


def _rest(s: Story, ips: dict[str, str], gen: list[str], new: list[str], migrated: datetime,
          ts: list[datetime]) -> None:
    """Kafka lag and broker noise, query-api release, stale search-api, a Pending Job pod."""
    now, rng = s.now, s.rng
    lag, pts = 200.0, []
    for t in ts:
        if t > migrated + mins(60):
            lag = max(0.0, lag + rng.uniform(-900, 1900) * (1.0 if 7 <= t.hour < 20 else 0.2))
        else:
            lag = rng.uniform(50, 900)
        pts.append((t, lag))
    s.metrics.gauge("kafka_consumergroup_lag", "consumer group lag", {
        "consumergroup": "catalog-indexer", "topic": "catalog-changes", "partition": "0"}, pts)
    brokers = [f"kafka-{i}" for i in range(3)]
    s.chatter("kafka", brokers, "kafka", "kafka", now - timedelta(hours=30), now, 300.0, [
        (3, "info", "[Partition catalog-changes-{n} broker=1] Shrinking ISR from 1,2,3 to 1,3. "
                    "Leader: (highWatermark: {id}, endOffset: {id})"),
        (3, "info", "[Partition catalog-changes-{n} broker=1] Expanding ISR from 1,3 to 1,2,3"),
        (2, "warning", "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Error sending "
                       "fetch request (sessionId={id}) to node 1: java.io.IOException: "
                       "Connection to 1 was disconnected before the response was read")])
    q = app(s, NS, "query-api", "registry.acme.io/search/query-api:2.9.0", replicas=3,
            nodes=gen, node_ips=ips, created=now - timedelta(days=500), rolled=s.ago(130),
            revision=77)
    s.event(NS, "Deployment", "query-api", "ScalingReplicaSet",
            f"Scaled up replica set {q.pods[0].rsplit('-', 1)[0]} to 3 from 2",
            component="deployment-controller", last=s.ago(57), api="apps/v1")
    s.chatter(NS, q.pods, "query-api", "query-api", now - timedelta(hours=8), now, 20.0, [
        (8, "info", "GET /v2/search?q=... 200 {ms}ms hits={n}"),
        (1, "warning", "opensearch query took {n}00ms (slow log threshold 500ms)")])
    sa = app(s, NS, "search-api", "registry.acme.io/search/search-api:5.2.4", replicas=3,
             nodes=gen, node_ips=ips, created=now - timedelta(days=500),
             rolled=now - timedelta(days=5), revision=40)
    s.chatter(NS, sa.pods, "search-api", "search-api", migrated, now, 400.0, [
        (3, "warning", "catalog index freshness {n}m behind source of truth (threshold 15m)"),
        (5, "info", "served {id} searches in the last minute")])
    s.chatter("opensearch", ["opensearch-data-0", "opensearch-data-1", "opensearch-data-2"],
              "opensearch", "opensearch", now - timedelta(hours=20), now, 400.0, [
        (4, "info", "[gc][{id}] overhead, spent [{ms}ms] collecting in the last [1s]"),
        (2, "warning", "[o.o.i.s.IndexShard] [catalog-v41][{n}] slow indexing, took[{ms}ms]")])
    job = "synonyms-builder-28631040"
    pn = f"{job}-{s.suffix()}"
    c = container("synonyms-builder", "registry.acme.io/search/synonyms-builder:1.3.0",
                  port=None, probe_path=None)
    s.add(pod(s, NS, pn, PodSpecBits([c], {"job-name": job},
                                     {"nodeSelector": {"workload": "search-legacy"}}),
              node_name=None, ip=None, start=s.ago(50), owner=None, phase="Pending",
              ready=False, conditions=[{
                  "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                  "lastTransitionTime": iso(s.ago(50)),
                  "message": "0/9 nodes are available: 9 node(s) didn't match Pod's node "
                             "affinity/selector."}]))
    s.event(NS, "Pod", pn, "FailedScheduling", "0/9 nodes are available: 9 node(s) didn't "
            "match Pod's node affinity/selector. preemption: 0/9 nodes are available: 9 "
            "Preemption is not helpful for scheduling.", type_="Warning", count=11,
            first=s.ago(50), last=s.ago(5), component="default-scheduler")
    for n in new:
        s.metrics.gauge("node_memory_MemAvailable_bytes", "available memory", {
            "instance": ips[n] + ":9100", "node": n},
            [(t, 5.1e10 + 3e9 * rng.random()) for t in ts if t >= migrated + mins(10)])
