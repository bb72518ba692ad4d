# ruff: noqa: E501  (verbatim log lines and Kubernetes messages are kept whole)
"""Scenario 8: pdf-thumbnailer 1.9.0 replaced its tini entrypoint with a `/bin/sh -c` loop.
Its render helpers fork ghostscript children; when `timeout` kills a helper, the orphans
are reparented to the shell (PID 1 of the container), which never reaps them. Zombies pile
up on the one node it runs on until the kubelet reports PIDPressure and evicts the
lower-priority pods there: report-builder and etl-loader, which now look sick.
"""

from __future__ import annotations

from datetime import datetime

from .k8s import (
    Clock,
    Obj,
    container,
    cstatus,
    deployment,
    event,
    namespace,
    node,
    pod,
    pod_hash,
    replicaset,
    running,
    suffix,
    template,
    terminated,
)
from .out import Metrics, ecs, healthy_app, write

SID = "nightly-reports-evicted"
NOW = "2026-12-01T03:40:00Z"
BAD = "k8s-w-b07.dc2.saltmarsh.lan"
PRESSURE = 27  # minutes ago PIDPressure turned True
EVICT_MSG = "The node was low on resource: pids. Threshold quantity: 3276, available: {}. "
SHELL_LOOP = (
    'while true; do for f in $(/opt/thumb/claim-batch --max 6); do timeout 90 /opt/thumb/render.sh "$f" & '
    "done; sleep 2; done"
)


def build() -> None:
    c = Clock(NOW)
    names = [f"k8s-w-b0{i}.dc2.saltmarsh.lan" for i in (3, 4, 5, 6, 7)]
    objs: list[Obj] = [namespace(n, c.at(60 * 24 * 900)) for n in ("default", "docs", "reports", "etl", "kube-system")]
    for n in names:
        if n == BAD:
            objs.append(
                node(
                    c,
                    n,
                    "dc2-row-b",
                    "batch",
                    region="dc2",
                    instance="r640",
                    cpu="15890m",
                    memory="65112872Ki",
                    kubelet="v1.29.10",
                    pressure={
                        "PIDPressure": (
                            "True",
                            "KubeletHasInsufficientPID",
                            "kubelet has insufficient PID available",
                            PRESSURE,
                        )
                    },
                    taints=[
                        {"key": "node.kubernetes.io/pid-pressure", "effect": "NoSchedule", "timeAdded": c.at(PRESSURE)}
                    ],
                )
            )
        else:
            objs.append(
                node(
                    c,
                    n,
                    "dc2-row-b",
                    "batch",
                    region="dc2",
                    instance="r640",
                    cpu="15890m",
                    memory="65112872Ki",
                    kubelet="v1.29.10",
                )
            )
    objs += [
        event(
            c,
            "",
            "Node",
            BAD,
            "NodeHasInsufficientPID",
            f"Node {BAD} status is now: NodeHasInsufficientPID",
            first_min=PRESSURE,
            last_min=PRESSURE,
            host=BAD,
        ),
        event(
            c,
            "",
            "Node",
            BAD,
            "EvictionThresholdMet",
            "Attempting to reclaim pids",
            first_min=PRESSURE - 0.1,
            last_min=3.5,
            count=7,
            type_="Warning",
            host=BAD,
        ),
        event(
            c,
            "",
            "Node",
            names[0],
            "FreeDiskSpaceFailed",
            "Failed to garbage collect required amount of images. "
            "Attempted to free 2254857011 bytes, but only found 0 bytes eligible to free.",
            first_min=52,
            last_min=47,
            count=2,
            type_="Warning",
            host=names[0],
        ),
    ]
    objs += _thumbnailer(c)
    objs += _evicted_app(
        c,
        "reports",
        "report-builder",
        "harbor.saltmarsh.lan/reports/report-builder:3.2.1",
        names,
        replicas=4,
        evicted=[(PRESSURE - 4, 2911), (PRESSURE - 11, 2790)],
        port=8000,
    )
    objs += _evicted_app(
        c,
        "etl",
        "etl-loader",
        "harbor.saltmarsh.lan/etl/etl-loader:2024.11.3",
        names,
        replicas=3,
        evicted=[(PRESSURE - 8, 2702)],
        port=None,
    )
    objs += healthy_app(
        c,
        "reports",
        "report-api",
        "harbor.saltmarsh.lan/reports/report-api:3.2.1",
        replicas=2,
        nodes=names[:3],
        ip_prefix="10.244.3",
        cluster_ip="10.96.30.12",
        port=8000,
    )
    objs += healthy_app(
        c,
        "etl",
        "etl-scheduler",
        "harbor.saltmarsh.lan/etl/etl-scheduler:2024.11.3",
        replicas=1,
        nodes=names[1:2],
        ip_prefix="10.244.4",
        cluster_ip="10.96.31.4",
        with_service=False,
    )
    thumb = [o for o in objs if o["kind"] == "Pod" and o["metadata"]["name"].startswith("pdf-thumbnailer-")]
    tp = thumb[0]["metadata"]["name"]

    logs, pod_logs = [], {}
    rb_pods = [
        o["metadata"]["name"]
        for o in objs
        if o["kind"] == "Pod" and o["metadata"]["name"].startswith("report-builder-")
    ]
    evicted_rb = [
        o["metadata"]["name"]
        for o in objs
        if o["kind"] == "Pod" and o["status"].get("reason") == "Evicted" and o["metadata"]["namespace"] == "reports"
    ]
    evict_at = {p: m for p, (m, _) in zip(evicted_rb, [(PRESSURE - 4, 0), (PRESSURE - 11, 0)], strict=False)}
    lives = {
        o["metadata"]["name"]: (c.now - _parse(o["metadata"]["creationTimestamp"])).total_seconds() / 60
        for o in objs
        if o["kind"] == "Pod" and o["metadata"]["name"] in rb_pods
    }
    for m10 in range(1200, 0, -1):
        m = m10 / 10
        if m10 % 4 == 0:
            f = f"s3://docs-inbox/2026/12/01/{m10 * 977 % 100000:05d}.pdf"
            logs.append(
                ecs(
                    c,
                    m,
                    f"[run-workers] render {f} -> thumbs/{m10 * 977 % 100000:05d}.webp ok",
                    "info",
                    "pdf-thumbnailer",
                    "docs",
                    tp,
                    "thumbnailer",
                )
            )
        if m10 % 37 == 0:
            logs.append(
                ecs(
                    c,
                    m,
                    "timeout: sending signal TERM to command '/opt/thumb/render.sh'",
                    "info",
                    "pdf-thumbnailer",
                    "docs",
                    tp,
                    "thumbnailer",
                )
            )
        alive = [p for p in rb_pods if lives[p] > m and evict_at.get(p, 0) < m]
        if m10 % 9 == 0:
            p = alive[m10 % len(alive)]
            logs.append(
                ecs(
                    c,
                    m,
                    f"report {7000 + m10 % 900} (nightly-kpi/{m10 % 40}) rendered in {2 + m10 % 5}.4s",
                    "INFO",
                    "report-builder",
                    "reports",
                    p,
                    "report-builder",
                )
            )
    for (mins, _), p in zip([(PRESSURE - 4, 0), (PRESSURE - 11, 0)], evicted_rb, strict=False):
        logs.append(
            ecs(
                c,
                mins,
                "SIGTERM received, aborting 3 running reports (weekly-kpi, churn-eu, churn-us)",
                "WARNING",
                "report-builder",
                "reports",
                p,
                "report-builder",
            )
        )
        logs.append(
            ecs(
                c,
                mins - 0.2,
                "report 7411 (weekly-kpi) FAILED: worker lost before completion, will retry (attempt 2/3)",
                "ERROR",
                "report-scheduler",
                "reports",
                p,
                "report-builder",
            )
        )
    pod_logs[("docs", tp, "thumbnailer", False)] = [
        f"[run-workers] render s3://docs-inbox/2026/12/01/{k * 131 % 100000:05d}.pdf -> thumbs/{k * 131 % 100000:05d}.webp ok"
        if k % 9
        else "timeout: sending signal TERM to command '/opt/thumb/render.sh'"
        for k in range(60)
    ]
    evictions = {
        o["metadata"]["name"]: float(
            (c.now - _parse(o["status"]["conditions"][-1]["lastTransitionTime"])).total_seconds() / 60
        )
        for o in objs
        if o["kind"] == "Pod" and o["status"].get("reason") == "Evicted"
    }
    mx = Metrics(c)
    span = range(180, -1, -1)
    mx.series(
        "container_processes",
        "gauge",
        {"namespace": "docs", "pod": tp, "container": "thumbnailer", "node": BAD},
        [(m, int(27630 + (180 - m) * 10.4)) for m in span],
    )
    mx.series(
        "container_threads",
        "gauge",
        {"namespace": "docs", "pod": tp, "container": "thumbnailer", "node": BAD},
        [(m, int(27640 + (180 - m) * 10.4)) for m in span],
    )
    for o in objs:
        if o["kind"] != "Pod" or o["spec"].get("nodeName") != BAD:
            continue
        name, cont = o["metadata"]["name"], o["spec"]["containers"][0]["name"]
        lab = {"namespace": o["metadata"]["namespace"], "pod": name, "container": cont}
        gone = next((e for p, e in evictions.items() if p == name), -1.0)  # an evicted pod's series end
        alive = [m for m in span if m > gone]
        if name != tp:
            mx.series("container_processes", "gauge", {**lab, "node": BAD}, [(m, 14 + len(cont) % 7) for m in alive])
        rate = 1.6 if name == tp else 0.4
        mx.series("container_cpu_usage_seconds", "counter", lab, [(m, (180 - m) * 60 * rate + 90000) for m in alive])
    mx.series(
        "node_processes_pids",
        "gauge",
        {"instance": f"{BAD}:9100", "job": "node-exporter"},
        [(m, int(28120 + (180 - m) * 10.4)) for m in span],
    )
    mx.series(
        "node_processes_max_processes",
        "gauge",
        {"instance": f"{BAD}:9100", "job": "node-exporter"},
        [(m, 32768) for m in span],
    )
    mx.series(
        "node_processes_state",
        "gauge",
        {"instance": f"{BAD}:9100", "job": "node-exporter", "state": "Z"},
        [(m, int(27390 + (180 - m) * 10.4)) for m in span],
    )
    for n in names:
        mx.series(
            "kube_node_status_condition",
            "gauge",
            {"node": n, "condition": "PIDPressure", "status": "true"},
            [(m, 1 if (n == BAD and m <= PRESSURE) else 0) for m in span],
        )
    scenario = {
        "id": SID,
        "title": "Nightly reports failing, pods evicted",
        "now": NOW,
        "report": """
            nightly reports are failing - report-builder pods keep getting killed (Evicted) and etl-loader too.
            reports 3.2.1 went out yesterday, did it break something? need this fixed before 6am exec reports
        """.replace("            ", ""),
        "truth": {
            "category": "resource_exhaustion",
            "culprit": {"kind": "Deployment", "namespace": "docs", "name": "pdf-thumbnailer"},
            "evidence": ["PIDPressure", "The node was low on resource: pids", "container_processes", "/bin/sh -c"],
            "fix": "Give pdf-thumbnailer an init that reaps zombies again (tini, or shareProcessNamespace) "
            "and restart it; set a pod PID limit (podPidsLimit) so one pod cannot exhaust a node.",
        },
    }
    write(SID, scenario, objs, pod_logs=pod_logs, logs=logs, metrics=mx)


def _parse(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def _thumbnailer(c: Clock) -> list[Obj]:
    ns, name = "docs", "pdf-thumbnailer"
    img_old, img = (
        "harbor.saltmarsh.lan/docs/pdf-thumbnailer:1.8.4",
        "harbor.saltmarsh.lan/docs/pdf-thumbnailer:1.9.0",
    )

    def tmpl(image: str, command: list[str], args: list[str] | None) -> Obj:
        t = template(
            {"app": name},
            [
                container(
                    "thumbnailer",
                    image,
                    port=None,
                    cpu="2",
                    memory="2Gi",
                    mem_limit="4Gi",
                    command=command,
                    args=args,
                    env=[{"name": "INBOX", "value": "s3://docs-inbox"}, {"name": "GS_THREADS", "value": "2"}],
                )
            ],
            priorityClassName="docs-critical",
            priority=100000,
            nodeSelector={"saltmarsh.lan/local-scratch": "nvme"},
        )
        return t

    t_old = tmpl(img_old, ["/sbin/tini", "--"], ["/opt/thumb/run-workers", "--max", "6"])
    t_new = tmpl(img, ["/bin/sh", "-c"], [SHELL_LOOP])
    _h_old, h_new = pod_hash(name, 11), pod_hash(name, 12)
    rollout = 60 * 46
    pname = f"{name}-{h_new}-{suffix('thumb')}"
    return [
        deployment(
            c,
            ns,
            name,
            t_new,
            replicas=1,
            revision=12,
            created_days=400,
            ready=1,
            updated=1,
            strategy={"type": "Recreate"},
            progressing=(
                "True",
                "NewReplicaSetAvailable",
                f'ReplicaSet "{name}-{h_new}" has successfully progressed.',
                rollout - 1,
            ),
            annotations={"kubernetes.io/change-cause": "1.9.0: batch claiming, drop tini (smaller image)"},
        ),
        replicaset(c, ns, name, t_old, revision=11, created_min=60 * 24 * 6.8, replicas=0, ready=0),
        replicaset(c, ns, name, t_new, revision=12, created_min=rollout, replicas=1, ready=1),
        pod(
            c,
            ns,
            pname,
            ("ReplicaSet", f"{name}-{h_new}"),
            t_new["metadata"]["labels"],
            t_new["spec"],
            node_name=BAD,
            ip="10.244.7.31",
            started_min=rollout - 0.5,
            hash_label=h_new,
            statuses=[cstatus(c, "thumbnailer", img, ready=True, state=running(rollout - 0.6, c))],
        ),
    ]


def _evicted_app(
    c: Clock,
    ns: str,
    name: str,
    img: str,
    nodes: list[str],
    *,
    replicas: int,
    evicted: list[tuple[float, int]],
    port: int | None,
) -> list[Obj]:
    tmpl = template({"app": name}, [container(name, img, port=port, cpu="1", memory="1Gi", mem_limit="2Gi")])
    h = pod_hash(name, 9)
    others = [n for n in nodes if n != BAD]
    objs: list[Obj] = [
        deployment(
            c,
            ns,
            name,
            tmpl,
            replicas=replicas,
            revision=9,
            created_days=300,
            ready=replicas,
            updated=replicas,
            progressing=(
                "True",
                "NewReplicaSetAvailable",
                f'ReplicaSet "{name}-{h}" has successfully progressed.',
                60 * 20,
            ),
        ),
        replicaset(c, ns, name, tmpl, revision=9, created_min=60 * 20 + 5, replicas=replicas, ready=replicas),
    ]
    for i in range(replicas - len(evicted)):
        pn, st = f"{name}-{h}-{suffix(name + 'ok' + str(i))}", 60 * 20 - i
        nd = BAD if i == 0 else others[i % len(others)]
        objs.append(
            pod(
                c,
                ns,
                pn,
                ("ReplicaSet", f"{name}-{h}"),
                {"app": name},
                tmpl["spec"],
                node_name=nd,
                ip=f"10.244.{5 + i}.{40 + i * 7 + len(name)}",
                started_min=st,
                hash_label=h,
                statuses=[cstatus(c, name, img, ready=True, state=running(st - 0.1, c))],
            )
        )
    for k, (mins, avail) in enumerate(evicted):
        ev = f"{name}-{h}-{suffix(name + 'ev' + str(k))}"
        msg = EVICT_MSG.format(avail)
        p = pod(
            c,
            ns,
            ev,
            ("ReplicaSet", f"{name}-{h}"),
            {"app": name},
            tmpl["spec"],
            node_name=BAD,
            ip=None,
            started_min=60 * 20 - 3 - k,
            hash_label=h,
            phase="Failed",
            ready=False,
            reason="Evicted",
            message=msg,
            statuses=[
                cstatus(
                    c,
                    name,
                    img,
                    ready=False,
                    started=False,
                    state=terminated(
                        c,
                        "ContainerStatusUnknown",
                        137,
                        60 * 20 - 3.1 - k,
                        mins - 0.3,
                        "The container could not be located when the pod was terminated",
                    ),
                )
            ],
        )
        p["status"]["conditions"].append(
            {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "TerminationByKubelet",
                "message": msg,
                "lastTransitionTime": c.at(mins),
            }
        )
        objs.append(p)
        repl, nd = f"{name}-{h}-{suffix(name + 'new' + str(k))}", others[(k + 1) % len(others)]
        objs.append(
            pod(
                c,
                ns,
                repl,
                ("ReplicaSet", f"{name}-{h}"),
                {"app": name},
                tmpl["spec"],
                node_name=nd,
                ip=f"10.244.{8 + k}.{90 + k * 3 + len(name)}",
                started_min=mins - 0.1,
                hash_label=h,
                statuses=[cstatus(c, name, img, ready=True, state=running(mins - 0.2, c))],
            )
        )
        objs += [
            event(c, ns, "Pod", ev, "Evicted", msg, first_min=mins, last_min=mins, type_="Warning", host=BAD),
            event(
                c,
                ns,
                "Pod",
                ev,
                "Killing",
                f"Stopping container {name}",
                first_min=mins - 0.01,
                last_min=mins - 0.01,
                host=BAD,
                field_path=f"spec.containers{{{name}}}",
            ),
            event(
                c,
                ns,
                "Pod",
                repl,
                "Scheduled",
                f"Successfully assigned {ns}/{repl} to {nd}",
                first_min=mins - 0.05,
                last_min=mins - 0.05,
                component="default-scheduler",
            ),
        ]
    return objs
