"""oom_killed in other shapes: a JVM heap as large as its container limit, and a logging
sidecar whose limit was cut below what it needs at peak."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

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
    story,
    truth,
)
from tests.scenario_tools.kube import Ctr, Obj, Template, ended, http_probe, running
from tests.scenario_tools.parts import neighbour, readiness_blip, rollout
from tests.scenario_tools.sim import Run, container_status, deaths, lifecycle, restart_events
from tests.scenario_tools.stories.memory import Leak

GIB = 1024 * MIB


@story
def indexer_jvm_heap() -> Story:
    s = Story("indexer-jvm-heap", "Nightly reindex not finishing",
              datetime(2026, 12, 17, 2, 10, tzinfo=UTC),
              "the nightly reindex hasn't finished, indexer pods keep restarting since about "
              "01:00 and search results are stale",
              truth("oom_killed", "StatefulSet", "search", "indexer",
                    ["OOMKilled", "exit code 137", "-Xmx2g", "2Gi"],
                    "The JVM heap (-Xmx2g) is as large as the 2Gi container limit, so heap plus "
                    "metaspace, threads and buffers exceed it during the reindex: raise the "
                    "limit to ~2.75Gi or size the heap with -XX:MaxRAMPercentage=70"),
              hours=2.5, interventions=[{"after_step": 2, "text": "ignore the opensearch "
                                         "disk watermark warnings, that data node is replaced "
                                         "tomorrow"}])
    namespaces(s, "search", "catalog")
    node_list = nodes(s, 3, subnet=62, region="eu-west-3", instance="r6i.xlarge",
                      memory="32Gi", allocatable_memory="30310Mi")
    kube_system(s, node_list)
    c = s.cluster
    image = "ghcr.io/acme-search/indexer:5.2.1"
    tpl = Template([Ctr("indexer", image, port=8080, requests={"cpu": "1", "memory": "2Gi"},
                        limits={"memory": "2Gi"},
                        env={"JAVA_TOOL_OPTIONS": "-Xms2g -Xmx2g -XX:+UseG1GC "
                             "-Xlog:gc:stdout:time,level,tags",
                             "OPENSEARCH_URL": "https://opensearch.search.svc:9200",
                             "REINDEX_BATCH": "5000"},
                        readiness=http_probe("/health/ready", delay=30),
                        liveness=http_probe("/health/live", delay=60, period=20))],
                   service_account="indexer")
    work = c.workload("StatefulSet", "search", "indexer", tpl, replicas=3,
                      created=s.ago(days=500), labels={"app.kubernetes.io/name": "indexer"})
    rev = c.revision(work, 12, s.ago(days=9))
    reindex = s.ago(hours=1, minutes=10)
    start = reindex.timestamp()
    for i in range(3):
        born = s.ago(days=5, hours=4, minutes=3 * i)
        rate = (1.1, 0.95, 0.85)[i]
        leak = Leak(born, s.now, 1.2 * GIB, 2 * GIB,
                    lambda t, r=rate: (0.0 if t < start else 0.85 * r) * MIB)
        runs = lifecycle(born + timedelta(seconds=20), s.now, leak.life)
        name = f"indexer-{i}"
        status = container_status(runs, name, "search", "indexer", reason="OOMKilled",
                                  code=137, uid=c.uid("Pod", "search", name))
        pod = c.pod(work, rev, node=node_list[i], created=born, name=name,
                    statuses={"indexer": status},
                    ready_since=runs[-1].start + timedelta(seconds=35))
        _indexer_pod(s, pod, runs, leak, image)
    _search_neighbours(s, node_list)
    return s


def _indexer_pod(s: Story, pod: Obj, runs: list[Run], leak: Leak, image: str) -> None:
    ip = pod["status"]["podIP"]
    restart_events(s, pod, "indexer", runs, now=s.now, image=image,
                   probe_message=f'Readiness probe failed: Get "http://{ip}:8080/health/ready": '
                   f"dial tcp {ip}:8080: connect: connection refused")
    kills = [int(d.timestamp()) for d in deaths(runs) if d.timestamp() >= s.times[0]]
    before = len(deaths(runs)) - len(kills)
    container_metrics(s, pod, "indexer", memory=leak.memory(runs), cpu=const(0.9),
                      restarts=kills, restart_base=before, limit_memory=2 * GIB)
    labels = {"namespace": "search", "pod": pod["metadata"]["name"], "area": "heap",
              "id": "G1 Old Gen"}
    heap = leak.memory(runs)
    s.metrics.gauge("jvm_memory_used_bytes", labels, [
        (t, round(min(2 * GIB * 0.97, v * 0.93))) for t in s.times
        if (v := heap(t)) is not None], "The amount of used memory")
    s.metrics.gauge("jvm_memory_max_bytes", labels, [(t, 2 * GIB) for t in s.times],
                    "The maximum amount of memory in bytes that can be used for memory "
                    "management")

    def gc_lines(run: Run) -> list[str]:
        end = run.end or s.now
        out = [f"[{_jvm(run.start)}][info][gc] Using G1",
               f"[{_jvm(run.start + timedelta(seconds=3))}][info][gc,init] Heap Max Capacity: "
               "2G", f"[{_jvm(run.start + timedelta(seconds=9))}][info][reindex] resuming "
               f"reindex at offset {s.rng.randrange(10**6, 9 * 10**6)}"]
        span = (end - run.start).total_seconds()
        for k in range(1, 12):
            when = run.start + timedelta(seconds=span * k / 12)
            used = min(2040, 1250 + 790 * k / 11)
            kind = "Pause Full (G1 Compaction Pause)" if k > 9 else \
                "Pause Young (Normal) (G1 Evacuation Pause)"
            out.append(f"[{_jvm(when)}][info][gc] GC({400 + 7 * k}) {kind} {int(used)}M->"
                       f"{int(used * 0.96)}M(2048M) {s.rng.uniform(20, 60) if k <= 9 else 1200:.3f}"
                       "ms")
        return out
    s.pod_log(pod, "indexer", gc_lines(runs[-1]))
    died = [r for r in runs if r.end is not None]
    if died:
        s.pod_log(pod, "indexer", gc_lines(died[-1]), previous=True)
    for run in died[-4:]:
        for line in gc_lines(run)[-3:]:
            when = datetime.fromisoformat(line[1:line.index("]")])
            s.logs.add(when, "info", line[line.index("[gc]") + 5:], namespace="search",
                       pod=pod["metadata"]["name"], container="indexer", service="indexer",
                       node=pod["spec"]["nodeName"], log__logger="gc")


def _jvm(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}+0000"


def _search_neighbours(s: Story, node_list: list[Obj]) -> None:
    neighbour(s, "search", "opensearch-dashboards", "docker.io/opensearchproject/"
              "opensearch-dashboards:2.18.0", node_list, replicas=1, memory_mib=400, port=5601,
              logs=[("warn", "[cluster:monitor/health] high disk watermark [90%] exceeded on "
                     "[opensearch-data-2] free: 41gb[9.6%], shards will be relocated away from "
                     "this node", {})], n_logs=12)
    neighbour(s, "search", "search-api", "ghcr.io/acme-search/search-api:2.15.3", node_list,
              memory_mib=1800, logs=[
                  ("warn", "index alias 'products' points at products-20261216, reindex "
                   "pending", {}), ("info", "GET /search 200", {}),
                  ("warn", "GET /search 400 query too long", {})],
              n_logs=30, rps=60, codes={"200": 0.99, "400": 0.01}, revision=57)
    neighbour(s, "catalog", "catalog-events", "ghcr.io/acme-search/catalog-events:1.0.9",
              node_list, replicas=1, memory_mib=220, logs=[
                  ("error", "document version conflict for product 88213, skipping", {}),
                  ("info", "published 200 change events", {})], n_logs=15,
              restarts={0: running(s.ago(days=4, hours=3), restarts=1, last=ended(
                  "Error", 1, s.ago(days=5), s.ago(days=4, hours=3, seconds=8)))})


@story
def push_api_sidecar_oom() -> Story:
    s = Story("push-api-sidecar-oom", "push-api restarting, pushes failing",
              datetime(2026, 12, 18, 19, 25, tzinfo=UTC),
              "push-api pods show lots of restarts since this evening and mobile push sends "
              "fail intermittently with 503",
              truth("oom_killed", "Deployment", "notifications", "push-api",
                    ["OOMKilled", "log-shipper", "64Mi"],
                    "The log-shipper sidecar is OOMKilled at its 64Mi limit (cut from 128Mi in "
                    "revision 29) when evening traffic raises log volume: restore 128Mi or set "
                    "fluent-bit's Mem_Buf_Limit below the container limit"),
              hours=2.5)
    namespaces(s, "notifications", "logging")
    node_list = nodes(s, 3, subnet=27, region="us-east-1", instance="m6i.xlarge")
    kube_system(s, node_list)
    at = s.ago(hours=5, minutes=40)
    peak = s.ago(hours=1, minutes=50).timestamp()

    def app_ctr(version: str) -> Ctr:
        return Ctr("push-api", f"ghcr.io/acme-notify/push-api:{version}",
                   requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "384Mi"},
                   readiness=http_probe("/ready"), liveness=http_probe("/healthz", delay=10),
                   mounts=[{"name": "app-logs", "mountPath": "/var/log/app"}])

    def shipper(version: str) -> list[Ctr]:
        memory = "64Mi" if version == "4.8.1" else "128Mi"
        return [Ctr("log-shipper", "cr.fluentbit.io/fluent/fluent-bit:3.1.9", port=2020,
                    port_name="metrics", requests={"cpu": "20m", "memory": memory},
                    limits={"memory": memory},
                    mounts=[{"name": "app-logs", "mountPath": "/var/log/app",
                             "readOnly": True}])]

    runs_of: dict[str, tuple[list[Run], Leak]] = {}

    def states(i: int, started: datetime, pod_name: str) -> dict[str, Obj]:
        leak = Leak(started, s.now, 22 * MIB, 64 * MIB, lambda t: (
            0.004 if t < peak else 0.09 * (1.08, 0.97, 0.9)[i]) * MIB)
        runs = lifecycle(started + timedelta(seconds=1), s.now, leak.life)
        runs_of[pod_name] = (runs, leak)
        status = container_status(runs, pod_name, "notifications", "log-shipper",
                                  reason="OOMKilled", code=137,
                                  uid=s.cluster.uid("Pod", "notifications", pod_name))
        return {"push-api": running(started), "log-shipper": status}

    roll = rollout(s, "notifications", "push-api", app_ctr, old="4.8.0", new="4.8.1", at=at,
                   revision=29, replicas=3, node_list=node_list, sidecars=shipper,
                   statuses=states, template_extra={"volumes": [{"name": "app-logs",
                                                                 "emptyDir": {}}]})
    for pod in roll.new_pods:
        runs, leak = runs_of[pod["metadata"]["name"]]
        _push_pod(s, pod, runs, leak)
    for pod in roll.old_pods:
        container_metrics(s, pod, "push-api", memory=lambda t: 190 * MIB, cpu=const(0.1))
    deployment_metrics(s, roll.work)
    neighbour(s, "notifications", "push-scheduler", "ghcr.io/acme-notify/push-scheduler:2.2.0",
              node_list, replicas=1, memory_mib=150, logs=[
                  ("warn", "APNs rejected token: BadDeviceToken (device unregistered)", {}),
                  ("info", "scheduled campaign batch 500", {})], n_logs=20)
    neighbour(s, "logging", "log-gateway", "cr.fluentbit.io/fluent/fluent-bit:3.1.9",
              node_list, memory_mib=90, port=24224, logs=[
                  ("warn", "[output:es:es.0] HTTP status=429 URI=/_bulk, retrying", {}),
                  ("info", "[engine] flush chunk succeeded", {})], n_logs=14)
    readiness_blip(s, "logging", "kibana", "docker.elastic.co/kibana/kibana:8.15.3", node_list,
                   port=5601, path="/api/status", minutes_ago=33)
    return s


def _push_pod(s: Story, pod: Obj, runs: list[Run], leak: Leak) -> None:
    """The app container runs on; the sidecar is killed each time its buffer fills, and the
    pod drops out of the Service while it restarts."""
    image = "cr.fluentbit.io/fluent/fluent-bit:3.1.9"
    restart_events(s, pod, "log-shipper", runs, now=s.now, image=image)
    kills = [int(d.timestamp()) for d in deaths(runs) if d.timestamp() >= s.times[0]]
    container_metrics(s, pod, "log-shipper", memory=leak.memory(runs), cpu=const(0.02),
                      restarts=kills, restart_base=len(deaths(runs)) - len(kills),
                      limit_memory=64 * MIB)
    container_metrics(s, pod, "push-api", memory=lambda t: 205 * MIB, cpu=const(0.12),
                      limit_memory=384 * MIB)
    down = [(r.end.timestamp(), runs[i + 1].start.timestamp() + 5 if i + 1 < len(runs)
             else 1e12) for i, r in enumerate(runs) if r.end is not None]

    def failing(t: int) -> float:
        return 0.35 if any(a - 30 <= t <= b for a, b in down) else 0.0
    http_metrics(s, "push-api", pod, rps=const(14.0), codes={
        "202": lambda t: 0.99 - failing(t), "400": const(0.01), "503": failing},
        median=const(0.04))
    noise_logs(s, pod, "push-api", "push-api", [
        ("info", "push accepted", {}), ("warn", "FCM returned UNREGISTERED for token", {})], 14)

    def shipper_lines(run: Run) -> list[str]:
        stamp = run.start.strftime("%Y/%m/%d %H:%M:%S")
        return [f"[{stamp}] [ info] [fluent bit] version=3.1.9, commit=431fa79ae2, pid=1",
                f"[{stamp}] [ info] [storage] ver=1.5.2, type=memory, sync=normal, "
                "checksum=off, max_chunks_up=128",
                f"[{stamp}] [ info] [input:tail:tail.0] initializing",
                f"[{stamp}] [ info] [output:forward:forward.0] worker #0 started",
                f"[{stamp}] [ info] [sp] stream processor started"]
    died = [r for r in runs if r.end is not None]
    s.pod_log(pod, "log-shipper", shipper_lines(runs[-1]))
    if died:
        s.pod_log(pod, "log-shipper", shipper_lines(died[-1]), previous=True)
