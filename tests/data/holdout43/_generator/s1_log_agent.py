# ruff: noqa: E501 - log lines, event messages and object literals are kept verbatim on one line
"""Fernhill Logistics: the log agent DaemonSet (no memory limit) leaks since its upgrade;
two nodes go under MemoryPressure and the kubelet evicts the dispatch pods."""

from __future__ import annotations

import math
import random
from datetime import timedelta as td

from ._kit import (
    Story,
    container,
    counter,
    deployment,
    endpoints,
    event,
    http_probe,
    namespace,
    node,
    parse,
    pod,
    pod_template,
    replicaset,
    running_status,
    series,
    service,
    terminated,
    ts,
    uid,
)

GI = 1024**3
MI = 1024**2


def build() -> Story:
    now = parse("2026-11-28T15:40:00Z")
    old = parse("2026-06-02T08:11:00Z")
    upgrade = now - td(days=6, hours=3, minutes=12)
    s = Story(
        id="dispatch-pods-evicted",
        title="Dispatch API losing pods in prod",
        now=now,
        report=(
            "dispatch-api keeps losing pods since ~3pm, drivers get 'route unavailable' in the app "
            "every few minutes. looks like dispatch is eating memory again (we had a leak in "
            "october), can someone check before the evening wave?"
        ),
        truth={
            "category": "node_failure",
            "culprit": {"kind": "Node", "namespace": "", "name": "ip-10-40-1-11"},
            "evidence": [
                "MemoryPressure",
                "The node was low on resource: memory",
                "logship-agent",
                "System OOM encountered, victim process: fluent-bit",
            ],
            "fix": (
                "Give logship-agent a memory limit (and a mem_buf_limit on its tail inputs), "
                "roll it back from 3.1.4 or restart it on ip-10-40-1-11 and ip-10-40-2-37; "
                "the evicted dispatch pods then reschedule"
            ),
        },
    )
    nodes = [
        ("ip-10-40-1-11", "eu-west-1a", True, now - td(minutes=48), old),
        ("ip-10-40-2-37", "eu-west-1b", False, None, old),
        ("ip-10-40-3-54", "eu-west-1c", False, None, old),
        ("ip-10-40-1-90", "eu-west-1a", False, None, now - td(hours=27)),
    ]
    s.add(
        namespace("routing", old, {"team": "dispatch"}),
        namespace("observability", old),
        namespace("ops", old),
    )
    for name, zone, pressure, since, created in nodes:
        nd = node(name, created, now, zone, mem_pressure=pressure, pressure_since=since)
        if name == "ip-10-40-2-37":
            nd["status"]["conditions"][0]["lastTransitionTime"] = ts(
                now - td(minutes=13) + td(seconds=50)
            )
        s.add(nd)

    # ---- the log agent
    agent_tpl = pod_template(
        {"app.kubernetes.io/name": "logship-agent", "app": "logship-agent"},
        [
            container(
                "logship-agent",
                "ghcr.io/fernhill/logship-agent:3.1.4",
                cpu_req="100m",
                mem_req="128Mi",
                port=2020,
                liveness=http_probe("/", 2020, period=30),
                env=[
                    {"name": "ES_HOST", "value": "logs-es.observability.svc"},
                    {"name": "MULTILINE_PARSERS", "value": "java,go,python"},
                ],
            )
        ],
        priorityClassName="system-node-critical",
        serviceAccountName="logship-agent",
        tolerations=[{"operator": "Exists"}],
        volumes=[{"name": "varlog", "hostPath": {"path": "/var/log", "type": ""}}],
    )
    s.add(
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {
                "name": "logship-agent",
                "namespace": "observability",
                "uid": uid("logship-agentobservability"),
                "creationTimestamp": ts(old),
                "generation": 9,
                "labels": {
                    "app.kubernetes.io/name": "logship-agent",
                    "app.kubernetes.io/version": "3.1.4",
                },
                "annotations": {"deprecated.daemonset.template.generation": "9"},
            },
            "spec": {
                "selector": {"matchLabels": {"app.kubernetes.io/name": "logship-agent"}},
                "updateStrategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
                },
                "revisionHistoryLimit": 10,
                "template": agent_tpl,
            },
            "status": {
                "currentNumberScheduled": 4,
                "desiredNumberScheduled": 4,
                "numberAvailable": 4,
                "numberMisscheduled": 0,
                "numberReady": 4,
                "observedGeneration": 9,
                "updatedNumberScheduled": 4,
            },
        }
    )
    sysoom = now - td(minutes=13)
    agent_start = {
        "ip-10-40-1-11": upgrade + td(minutes=1),
        "ip-10-40-2-37": sysoom + td(seconds=4),
        "ip-10-40-3-54": now - td(days=2, hours=5, minutes=40),  # node rebooted for a kernel patch
        "ip-10-40-1-90": now - td(hours=27) + td(minutes=2),
    }
    suffix = {
        "ip-10-40-1-11": "x7k2q",
        "ip-10-40-2-37": "m4pzt",
        "ip-10-40-3-54": "c9wdn",
        "ip-10-40-1-90": "h2rvb",
    }
    for i, (n, started) in enumerate(agent_start.items()):
        name = f"logship-agent-{suffix[n]}"
        if n == "ip-10-40-2-37":
            c = agent_tpl["spec"]["containers"][0]
            st = running_status(
                c,
                started,
                restarts=1,
                last=terminated("OOMKilled", 137, upgrade + td(minutes=3), sysoom),
            )
            s.add(
                pod(
                    name,
                    "observability",
                    upgrade + td(minutes=3) - td(seconds=5),
                    agent_tpl,
                    n,
                    f"10.41.{i}.12",
                    "DaemonSet",
                    "logship-agent",
                    started=started,
                    statuses=[st],
                )
            )
        else:
            s.add(
                pod(
                    name,
                    "observability",
                    started - td(seconds=5),
                    agent_tpl,
                    n,
                    f"10.41.{i}.12",
                    "DaemonSet",
                    "logship-agent",
                    started=started,
                )
            )

    surge = now - td(
        minutes=75
    )  # the log store starts refusing bulk writes: retries pile up in memory

    def backlog(since: object, t: object) -> float:
        """Chunks held for retry since the log store slowed down (no mem_buf_limit, no limit)."""
        begin = max(surge, since)  # type: ignore[type-var]
        return max(0.0, (t - begin).total_seconds() / 60) * 93 * MI  # type: ignore[operator]

    def agent_mem(n: str, t: object) -> float:
        st = agent_start[n]
        age_h = max(0.0, (t - st).total_seconds() / 3600)  # type: ignore[operator]
        return 160 * MI + age_h * 71 * MI + 12 * MI * math.sin(age_h) + backlog(st, t)

    start = now - td(days=7)
    first = dict(agent_start, **{"ip-10-40-2-37": upgrade + td(minutes=3)})

    def agent_mem_seen(n: str, t: object) -> float:
        if n == "ip-10-40-2-37" and t < sysoom:  # type: ignore[operator]
            hours = (t - first[n]).total_seconds() / 3600  # type: ignore[operator]
            return 160 * MI + hours * 71 * MI + backlog(first[n], t)
        return agent_mem(n, t)

    for n, started in first.items():
        pts = series(max(start, started), now, 600, lambda t, n=n: agent_mem_seen(n, t))
        s.metric(
            "container_memory_working_set_bytes",
            "gauge",
            "Current working set of the container in bytes",
            {
                "namespace": "observability",
                "pod": f"logship-agent-{suffix[n]}",
                "container": "logship-agent",
                "node": n,
            },
            pts,
        )
    # the agents before the upgrade: flat around 150 MiB
    for n in ("ip-10-40-1-11", "ip-10-40-2-37"):
        pts = series(
            start, upgrade, 300, lambda t: 150 * MI + 6 * MI * math.sin(t.timestamp() / 5000)
        )
        s.metric(
            "container_memory_working_set_bytes",
            "gauge",
            "Current working set of the container in bytes",
            {
                "namespace": "observability",
                "pod": f"logship-agent-old{suffix[n][:3]}",
                "container": "logship-agent",
                "node": n,
            },
            pts,
        )

    # ---- dispatch and neighbours
    disp_tpl = pod_template(
        {"app": "dispatch-api", "tier": "backend"},
        [
            container(
                "dispatch-api",
                "registry.fernhill.io/routing/dispatch-api:8.14.2",
                cpu_req="500m",
                mem_req="1Gi",
                mem_lim="2Gi",
                port=8080,
                readiness=http_probe("/ready", 8080),
                liveness=http_probe("/live", 8080, period=20),
            )
        ],
        priorityClassName="default-app",
    )
    eta_tpl = pod_template(
        {"app": "eta-calculator", "tier": "backend"},
        [
            container(
                "eta-calculator",
                "registry.fernhill.io/routing/eta-calculator:2.3.0",
                cpu_req="250m",
                mem_req="512Mi",
                mem_lim="1Gi",
                port=8080,
                readiness=http_probe("/healthz", 8080),
            )
        ],
    )
    disp_created = now - td(days=9)
    disp = deployment(
        "dispatch-api",
        "routing",
        disp_created,
        disp_tpl,
        6,
        31,
        ready=4,
        available=4,
        total_replicas=6,
    )
    s.add(disp, replicaset(disp, "6d8b9c7f5", disp_created, 31, disp_tpl, 6, ready=4))
    eta = deployment("eta-calculator", "routing", now - td(days=20), eta_tpl, 4, 12)
    s.add(eta, replicaset(eta, "54f7bd96c", now - td(days=20), 12, eta_tpl, 4))
    evicted = [
        (
            "dispatch-api-6d8b9c7f5-2wqlm",
            "ip-10-40-1-11",
            now - td(minutes=47),
            "1483Mi",
            "dispatch-api",
        ),
        (
            "dispatch-api-6d8b9c7f5-tn8fz",
            "ip-10-40-1-11",
            now - td(minutes=31),
            "1402Mi",
            "dispatch-api",
        ),
        (
            "dispatch-api-6d8b9c7f5-h6jvx",
            "ip-10-40-2-37",
            now - td(minutes=19),
            "1466Mi",
            "dispatch-api",
        ),
        (
            "eta-calculator-54f7bd96c-r2kcd",
            "ip-10-40-2-37",
            now - td(minutes=14),
            "744Mi",
            "eta-calculator",
        ),
    ]
    for name, n, t, used, cname in evicted:
        tpl = disp_tpl if cname == "dispatch-api" else eta_tpl
        req = "1Gi" if cname == "dispatch-api" else "512Mi"
        msg = (
            f"The node was low on resource: memory. Threshold quantity: 100Mi, available: "
            f"{random.Random(name).randint(61000, 99000)}Ki. Container {cname} was using {used}, request is "
            f"{req}, has larger consumption of memory. "
        )
        st = running_status(tpl["spec"]["containers"][0], disp_created, ready=False)
        st["state"] = terminated("Error", 143, disp_created + td(seconds=5), t + td(seconds=28))
        st["started"] = False
        rs = "dispatch-api-6d8b9c7f5" if cname == "dispatch-api" else "eta-calculator-54f7bd96c"
        p = pod(
            name,
            "routing",
            disp_created if cname == "dispatch-api" else now - td(days=20),
            tpl,
            n,
            None,
            "ReplicaSet",
            rs,
            phase="Failed",
            ready=False,
            statuses=[st],
            reason="Evicted",
            message=msg,
            conditions=[
                {
                    "type": "DisruptionTarget",
                    "status": "True",
                    "reason": "TerminationByKubelet",
                    "message": "The node was low on resource: memory. ",
                    "lastTransitionTime": ts(t),
                },
                {
                    "type": "Ready",
                    "status": "False",
                    "reason": "PodFailed",
                    "lastTransitionTime": ts(t),
                },
            ],
        )
        s.add(p)
        s.add(
            event("routing", "Pod", name, "Evicted", msg.strip(), t, t, type_="Warning", host=n),
            event(
                "routing",
                "Pod",
                name,
                "Killing",
                f"Stopping container {cname}",
                t,
                t,
                host=n,
                field_path=f"spec.containers{{{cname}}}",
            ),
        )
    running = [
        ("dispatch-api-6d8b9c7f5-9bxkt", "ip-10-40-3-54", disp_created, "10.41.2.31"),
        ("dispatch-api-6d8b9c7f5-lq4sd", "ip-10-40-3-54", disp_created, "10.41.2.32"),
        ("dispatch-api-6d8b9c7f5-z8mvw", "ip-10-40-2-37", disp_created, "10.41.1.40"),
        ("dispatch-api-6d8b9c7f5-vd5np", "ip-10-40-1-90", now - td(minutes=46), "10.41.3.17"),
        ("dispatch-api-6d8b9c7f5-f2hgc", "ip-10-40-1-90", now - td(minutes=30), "10.41.3.18"),
    ]
    ready_eps = []
    for name, n, created, ip in running:
        s.add(
            pod(
                name,
                "routing",
                created,
                disp_tpl,
                n,
                ip,
                "ReplicaSet",
                "dispatch-api-6d8b9c7f5",
                ready=name != "dispatch-api-6d8b9c7f5-f2hgc",
            )
        )
        if name != "dispatch-api-6d8b9c7f5-f2hgc":
            ready_eps.append((ip, name, n))
    pend = "dispatch-api-6d8b9c7f5-k7rtw"
    sched = (
        "0/4 nodes are available: 2 Insufficient memory, 2 node(s) had untolerated taint "
        "{node.kubernetes.io/memory-pressure: }. preemption: 0/4 nodes are available: "
        "2 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."
    )
    s.add(
        pod(
            pend,
            "routing",
            now - td(minutes=19),
            disp_tpl,
            None,
            None,
            "ReplicaSet",
            "dispatch-api-6d8b9c7f5",
            phase="Pending",
            ready=False,
            statuses=[],
            conditions=[
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": sched,
                    "lastTransitionTime": ts(now - td(minutes=19)),
                }
            ],
        )
    )
    s.add(
        event(
            "routing",
            "Pod",
            pend,
            "FailedScheduling",
            sched,
            now - td(minutes=19),
            now - td(minutes=2),
            count=9,
            type_="Warning",
            component="default-scheduler",
        )
    )
    s.add(
        event(
            "routing",
            "Pod",
            "dispatch-api-6d8b9c7f5-f2hgc",
            "Unhealthy",
            "Readiness probe failed: HTTP probe failed with statuscode: 503",
            now - td(minutes=29),
            now - td(minutes=27),
            count=6,
            type_="Warning",
            host="ip-10-40-1-90",
            field_path="spec.containers{dispatch-api}",
        )
    )
    for _name, _n, _, _ip in [(p[0], p[1], None, None) for p in running[:3]]:
        pass
    for i, (name, n, created) in enumerate(
        [
            ("eta-calculator-54f7bd96c-8hjwq", "ip-10-40-3-54", now - td(days=20)),
            ("eta-calculator-54f7bd96c-pp3zl", "ip-10-40-1-11", now - td(days=20)),
            ("eta-calculator-54f7bd96c-w9c2f", "ip-10-40-1-90", now - td(minutes=13)),
            ("eta-calculator-54f7bd96c-j5tkm", "ip-10-40-3-54", now - td(days=20)),
        ]
    ):
        s.add(
            pod(
                name,
                "routing",
                created,
                eta_tpl,
                n,
                f"10.41.5.{20 + i}",
                "ReplicaSet",
                "eta-calculator-54f7bd96c",
            )
        )
    s.add(
        service("dispatch-api", "routing", old, {"app": "dispatch-api"}, 80, 8080, "172.20.41.12"),
        endpoints(
            "dispatch-api",
            "routing",
            old,
            ready_eps,
            [("10.41.3.18", "dispatch-api-6d8b9c7f5-f2hgc", "ip-10-40-1-90")],
            8080,
        ),
    )
    for rs_name, t, cnt in (
        ("dispatch-api-6d8b9c7f5", now - td(minutes=19), 3),
        ("eta-calculator-54f7bd96c", now - td(minutes=14), 1),
    ):
        s.add(
            event(
                "routing",
                "ReplicaSet",
                rs_name,
                "SuccessfulCreate",
                f"Created pod: {rs_name}-{'k7rtw' if cnt == 3 else 'w9c2f'}",
                now - td(minutes=47),
                t,
                count=cnt,
                component="replicaset-controller",
            )
        )
    for n, since, until in (
        ("ip-10-40-1-11", now - td(minutes=48), now - td(minutes=3)),
        ("ip-10-40-2-37", now - td(minutes=22), sysoom - td(seconds=40)),
    ):
        s.add(
            event(
                "",
                "Node",
                n,
                "NodeHasInsufficientMemory",
                f"Node {n} status is now: NodeHasInsufficientMemory",
                since,
                since,
                host=n,
            ),
            event(
                "",
                "Node",
                n,
                "EvictionThresholdMet",
                "Attempting to reclaim memory",
                since,
                until,
                count=14 if n.endswith("11") else 5,
                type_="Warning",
                host=n,
            ),
        )
    s.add(
        event(
            "",
            "Node",
            "ip-10-40-2-37",
            "SystemOOM",
            "System OOM encountered, victim process: fluent-bit, pid: 2318771",
            sysoom,
            sysoom,
            type_="Warning",
            host="ip-10-40-2-37",
        ),
        event(
            "",
            "Node",
            "ip-10-40-2-37",
            "NodeHasSufficientMemory",
            "Node ip-10-40-2-37 status is now: NodeHasSufficientMemory",
            sysoom + td(seconds=50),
            sysoom + td(seconds=50),
            host="ip-10-40-2-37",
        ),
    )
    # bystanders: an ops console and an old unrelated warning
    ops_tpl = pod_template(
        {"app": "ops-console"},
        [
            container(
                "ops-console",
                "registry.fernhill.io/ops/console:1.9.7",
                cpu_req="100m",
                mem_req="256Mi",
                mem_lim="512Mi",
                port=3000,
            )
        ],
    )
    ops = deployment("ops-console", "ops", now - td(days=41), ops_tpl, 2, 7)
    s.add(
        ops,
        replicaset(ops, "7b5d9f6c8", now - td(days=41), 7, ops_tpl, 2),
        pod(
            "ops-console-7b5d9f6c8-4rj2x",
            "ops",
            now - td(days=41),
            ops_tpl,
            "ip-10-40-3-54",
            "10.41.2.50",
            "ReplicaSet",
            "ops-console-7b5d9f6c8",
        ),
        pod(
            "ops-console-7b5d9f6c8-qm8tn",
            "ops",
            now - td(days=2),
            ops_tpl,
            "ip-10-40-1-90",
            "10.41.3.51",
            "ReplicaSet",
            "ops-console-7b5d9f6c8",
        ),
    )
    s.add(
        event(
            "ops",
            "Pod",
            "ops-console-7b5d9f6c8-qm8tn",
            "BackOff",
            'Back-off pulling image "registry.fernhill.io/ops/console-sidecar:0.2"',
            now - td(minutes=58),
            now - td(minutes=41),
            count=3,
            type_="Warning",
            host="ip-10-40-1-90",
        )
    )

    # ---- node and app metrics
    released = {
        "ip-10-40-1-11": [(now - td(minutes=47), 1483 * MI), (now - td(minutes=31), 1402 * MI)],
        "ip-10-40-2-37": [(now - td(minutes=19), 1466 * MI), (now - td(minutes=14), 744 * MI)],
    }

    def avail(n: str, t: object) -> float:
        if n not in ("ip-10-40-1-11", "ip-10-40-2-37"):
            return 14 * GI - agent_mem(n, t) + 400 * MI * math.sin(t.timestamp() / 7000)  # type: ignore[attr-defined]
        onset = now - td(minutes=48) if n.endswith("11") else now - td(minutes=22)
        base = 98 * MI + agent_mem_seen(n, onset)
        freed = sum(
            size
            for when, size in released[n]
            if when <= t  # type: ignore[operator]
        )
        v = base - (agent_mem_seen(n, t) if t >= first[n] else 150 * MI) + freed  # type: ignore[operator]
        return max(70 * MI + 25 * MI * math.sin(t.timestamp() / 300), v)  # type: ignore[attr-defined]

    for n, *_ in nodes:
        created = now - td(hours=27) if n.endswith("90") else start
        s.metric(
            "node_memory_MemAvailable_bytes",
            "gauge",
            "Memory information field MemAvailable_bytes.",
            {"instance": n, "job": "node-exporter"},
            series(created, now, 600, lambda t, n=n: avail(n, t)),
        )
    for name, n, _created, _ in running[:3]:
        s.metric(
            "container_memory_working_set_bytes",
            "gauge",
            "Current working set of the container in bytes",
            {"namespace": "routing", "pod": name, "container": "dispatch-api", "node": n},
            series(
                start,
                now,
                300,
                lambda t, name=name: (
                    1.38 * GI + 60 * MI * math.sin(t.timestamp() / 3600 + len(name))
                ),
            ),
        )
    for name, n, t_ev, _, _cname in evicted[:3]:
        s.metric(
            "container_memory_working_set_bytes",
            "gauge",
            "Current working set of the container in bytes",
            {"namespace": "routing", "pod": name, "container": "dispatch-api", "node": n},
            series(
                start,
                t_ev,
                300,
                lambda t, name=name: (
                    1.40 * GI + 55 * MI * math.sin(t.timestamp() / 3600 + len(name))
                ),
            ),
        )
    rng = random.Random(1)

    def rate5xx(t: object) -> float:
        return 0.05 if t < now - td(minutes=48) else (3.5 + rng.random() * 3)  # type: ignore[operator]

    s.metric(
        "http_requests",
        "counter",
        "HTTP requests by status.",
        {"namespace": "routing", "service": "dispatch-api", "code": "503"},
        counter(start, now, 60, rate5xx),
    )
    s.metric(
        "http_requests",
        "counter",
        "HTTP requests by status.",
        {"namespace": "routing", "service": "dispatch-api", "code": "200"},
        counter(
            start, now, 60, lambda t: 180 + 40 * math.sin(t.timestamp() / 14000), base=88_000_000
        ),
    )

    # ---- logs
    agent = "logship-agent-x7k2q"
    lines = [
        "Fluent Bit v3.1.4 (logship-agent build 2026.11.22)",
        f"[{agent_start['ip-10-40-1-11']:%Y/%m/%d %H:%M:%S}] [ info] [fluent bit] version=3.1.4, commit=7a1e0c2, pid=1",
        f"[{agent_start['ip-10-40-1-11']:%Y/%m/%d %H:%M:%S}] [ info] [storage] ver=1.5.2, type=memory, sync=normal, checksum=off, max_chunks_up=128",
        f"[{agent_start['ip-10-40-1-11']:%Y/%m/%d %H:%M:%S}] [ info] [input:tail:tail.0] multiline core started",
        f"[{agent_start['ip-10-40-1-11']:%Y/%m/%d %H:%M:%S}] [ info] [output:es:es.0] worker #0 started",
    ]
    t = now - td(hours=3)
    r = random.Random(11)
    while t < now:
        k = r.random()
        if k < 0.5:
            lines.append(
                f"[{t:%Y/%m/%d %H:%M:%S}] [ info] [input:tail:tail.0] inotify_fs_add(): inode={r.randint(10**6, 9 * 10**6)} watch_fd={r.randint(30, 400)} name=/var/log/containers/{r.choice(['dispatch-api', 'eta-calculator', 'ops-console', 'coredns'])}-{r.randint(1000, 9999)}.log"
            )
        elif k < 0.8:
            lines.append(
                f"[{t:%Y/%m/%d %H:%M:%S}] [ info] [input:tail:tail.0] inode={r.randint(10**6, 9 * 10**6)} handle rotation(): /var/log/containers/dispatch-api-6d8b9c7f5.log"
            )
        else:
            lines.append(
                f"[{t:%Y/%m/%d %H:%M:%S}] [ warn] [engine] failed to flush chunk '1-{int(t.timestamp())}.{r.randint(100, 999)}.flb', retry in {r.choice([7, 9, 12])} seconds: task_id={r.randint(1, 400)}, input=tail.0 > output=es.0 (out_id=0)"
            )
        if t > surge:
            lines.append(
                f"[{t:%Y/%m/%d %H:%M:%S}] [error] [output:es:es.0] HTTP status=429 URI=/_bulk, response: "
                '{"error":{"type":"es_rejected_execution_exception","reason":"rejected execution of coordinating operation"}}'
            )
            lines.append(
                f"[{t:%Y/%m/%d %H:%M:%S}] [ warn] [engine] chunk '1-{int(t.timestamp())}.{r.randint(100, 999)}.flb' cannot be retried: "
                f"task_id={r.randint(1, 900)}, input=tail.0 > output=es.0, retries queued={r.randint(900, 4000) + int((t - surge).total_seconds())}"
            )
        t += td(seconds=r.randint(60, 400) if t < surge else r.randint(20, 90))
    s.pod_log("observability", agent, "logship-agent", lines)
    for name, _n, t_ev, _, _cname in evicted[:3]:
        lg = []
        t = t_ev - td(minutes=20)
        while t < t_ev:
            lg.append(
                f'{{"ts":"{t:%Y-%m-%dT%H:%M:%S}Z","lvl":"info","msg":"route assigned","driver":"D{r.randint(10000, 99999)}","stops":{r.randint(3, 18)},"ms":{r.randint(40, 190)}}}'
            )
            t += td(seconds=r.randint(15, 60))
        lg.append(
            f'{{"ts":"{t_ev:%Y-%m-%dT%H:%M:%S}Z","lvl":"warn","msg":"received SIGTERM, draining","inflight":{r.randint(3, 20)}}}'
        )
        lg.append(
            f'{{"ts":"{t_ev + td(seconds=27):%Y-%m-%dT%H:%M:%S}Z","lvl":"info","msg":"shutdown complete"}}'
        )
        s.pod_log("routing", name, "dispatch-api", lg)
    t = now - td(hours=2)
    while t < now:
        name = r.choice([p[0] for p in running[:4]])
        s.doc(
            t,
            "info",
            "dispatch-api",
            "routing",
            name,
            "dispatch-api",
            "route assigned",
            http__response__status_code=200,
            event__duration=r.randint(40, 190) * 1_000_000,
        )
        if t > now - td(minutes=48) and r.random() < 0.35:
            s.doc(
                t + td(seconds=1),
                "error",
                "driver-gateway",
                "routing",
                "driver-gateway-5c4f8d7b9-2xk8p",
                "gateway",
                "upstream dispatch-api returned 503: no healthy upstream",
                http__response__status_code=503,
            )
        if r.random() < 0.04:
            s.doc(
                t,
                "warn",
                "logship-agent",
                "observability",
                agent,
                "logship-agent",
                "[engine] failed to flush chunk, retry in 9 seconds: input=tail.0 > output=es.0",
            )
        t += td(seconds=r.randint(20, 70))
    return s
