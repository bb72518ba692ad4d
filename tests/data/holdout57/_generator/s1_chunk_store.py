"""crash_loop: a runtime bump brings io_uring, which the RuntimeDefault seccomp profile blocks."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from ._kit import (
    App,
    Obj,
    Scenario,
    backoff_starts,
    pending_job_pod,
    rollout_events,
    rs_hash,
    worker_nodes,
)

SID = "storage-chunk-store-restarts"
NOW = "2026-04-14T10:20:00Z"

PATCH = ("add-default-seccomp.set-seccomp-runtime-default.kyverno.io: added "
         "/spec/securityContext/seccompProfile\n")


def chunk_template(image: str, checksum: str) -> Obj:
    c: Obj = {"name": "chunk-store", "image": image,
              "args": ["--config=/etc/chunk-store/config.yaml"],
              "ports": [{"containerPort": 9000, "name": "http", "protocol": "TCP"}],
              "resources": {"requests": {"cpu": "1", "memory": "2Gi"},
                            "limits": {"memory": "2Gi"}},
              "securityContext": {"allowPrivilegeEscalation": False,
                                  "capabilities": {"drop": ["ALL"]}},
              "readinessProbe": {"httpGet": {"path": "/ready", "port": 9000},
                                 "periodSeconds": 5},
              "volumeMounts": [{"name": "config", "mountPath": "/etc/chunk-store"},
                               {"name": "data", "mountPath": "/data"}]}
    return {"metadata": {"labels": {"app": "chunk-store"},
                         "annotations": {"checksum/config": checksum,
                                         "policies.kyverno.io/last-applied-patches": PATCH}},
            "spec": {"containers": [c],
                     "securityContext": {"runAsNonRoot": True, "runAsUser": 10001,
                                         "fsGroup": 10001,
                                         "seccompProfile": {"type": "RuntimeDefault"}},
                     "volumes": [{"name": "config",
                                  "configMap": {"name": "chunk-store-config"}},
                                 {"name": "data", "emptyDir": {"sizeLimit": "40Gi"}}]}}


def build(root: Path) -> None:
    s = Scenario(SID, NOW, 5701)
    nodes = worker_nodes(s, 6, kernel="6.1.79-99.164.amzn2023.x86_64")
    s.background(nodes, ["storage", "web", "billing", "batch"])
    n = len(nodes)

    # --- the culprit: chunk-store, revision 14 (5.0.0) cannot start -------------------
    old_tpl = chunk_template("registry.internal/storage/chunk-store:4.9.3", "7c1e04b2a9")
    new_tpl = chunk_template("registry.internal/storage/chunk-store:5.0.0", "e58d93f01c")
    roll = 41.0
    s.deployment("storage", "chunk-store", new_tpl, replicas=3, ready=2, updated=2, revision=14,
                 unavailable=1, strategy={"type": "RollingUpdate", "rollingUpdate": {
                     "maxSurge": 1, "maxUnavailable": 1}},
                 annotations={"meta.helm.sh/release-name": "chunk-store",
                              "meta.helm.sh/release-namespace": "storage"},
                 conditions=[
                     {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
                      "message": "Deployment has minimum availability.",
                      "lastUpdateTime": s.t(roll), "lastTransitionTime": s.t(4000)},
                     {"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated",
                      "message": 'ReplicaSet "chunk-store-' + "x" + '" is progressing.',
                      "lastUpdateTime": s.t(roll - 1), "lastTransitionTime": s.t(roll)}])
    old_rs = s.replicaset("storage", "chunk-store", 13, old_tpl, replicas=2, ready=2,
                          created_min=9000)
    new_rs = s.replicaset("storage", "chunk-store", 14, new_tpl, replicas=2, ready=0,
                          created_min=roll)
    dep = s.objects[-3]
    dep["status"]["conditions"][1]["message"] = f'ReplicaSet "{new_rs}" is progressing.'
    old_pods = []
    for i, node in enumerate([nodes[0], nodes[2]]):
        p, ip = s.pod("storage", old_rs, "chunk-store", old_tpl, node,
                      created_min=3 * 1440 + 200 * i, key=f"o{i}")
        old_pods.append((p, ip, node))
    starts = backoff_starts(roll - 0.5)
    new_pods = []
    for i, node in enumerate([nodes[1], nodes[4]]):
        st = [x - 0.2 * i for x in starts if x - 0.2 * i > 0.3]
        last = st[-1]
        c = new_tpl["spec"]["containers"][0]
        tmp = s.cstatus(c, "storage", "x", s.t(last), ready=False, restarts=len(st) - 1)
        tmp["started"] = False
        tmp["state"] = {"waiting": {"reason": "CrashLoopBackOff",
                                    "message": "back-off 5m0s restarting failed container="
                                               "chunk-store pod=PLACEHOLDER"}}
        tmp["lastState"] = {"terminated": {"exitCode": 1, "reason": "Error",
                                           "startedAt": s.t(last),
                                           "finishedAt": s.t(last - 0.01)}}
        p, ip = s.pod("storage", new_rs, "chunk-store", new_tpl, node, created_min=roll - i,
                      key=f"n{i}", statuses=[tmp], ready=False)
        tmp["state"]["waiting"]["message"] = tmp["state"]["waiting"]["message"].replace(
            "PLACEHOLDER", f"{p}_storage({s.uid('storage/' + p)})")
        new_pods.append((p, ip, node, st))
        s.event("storage", "Pod", p, "BackOff",
                "Back-off restarting failed container chunk-store in pod "
                f"{p}_storage({s.uid('storage/' + p)})", type_="Warning",
                count=len(st) * 9, first=roll - 1, last=0.5, host=node, container="chunk-store")
        s.event("storage", "Pod", p, "Pulled",
                'Container image "registry.internal/storage/chunk-store:5.0.0" already present '
                "on machine", count=len(st), first=roll - 1, last=last, host=node,
                container="chunk-store")
        s.event("storage", "Pod", p, "Started", "Started container chunk-store",
                count=len(st), first=roll - 1, last=last, host=node, container="chunk-store")
        s.event("storage", "Pod", p, "Scheduled",
                f"Successfully assigned storage/{p} to {node}", first=roll - i,
                last=roll - i, component="default-scheduler")
    s.service("storage", "chunk-store", {"app": "chunk-store"}, 80, 9000, old_pods,
              not_ready=[(p, ip, node) for p, ip, node, _ in new_pods])
    rollout_events(s, "storage", "chunk-store", new_rs, old_rs, roll, 2)
    s.objects[-1]["message"] = f"Scaled down replica set {old_rs} to 2 from 3"
    s.add({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": s.meta("chunk-store-config", "storage", roll + 0.5,
                              labels={"app": "chunk-store"},
                              annotations={"meta.helm.sh/release-name": "chunk-store"}),
           "data": {"config.yaml": "listen: :9000\ndata_dir: /data\nvolumes: 3\n"
                                   "compaction:\n  threshold: 0.65\n  max_inflight: 16\n"
                                   "  schedule: \"*/10 * * * *\"\nreplication:\n  factor: 2\n"
                                   "  peers: chunk-store.storage.svc:80\n"}})

    def start_lines(version: str, rt: str, backend: str) -> list[tuple[str, str]]:
        return [("info", f"chunk-store {version} (runtime {rt}) starting, pid 1"),
                ("info", "config: loaded /etc/chunk-store/config.yaml (23 keys, "
                         "compaction.max_inflight=16, compaction.threshold=0.65)"),
                ("info", "config: validation passed"),
                ("info", "storage: data dir /data, 3 volumes, 0 pending repairs"),
                ("info", f"runtime: I/O backend {backend}")]

    for p, _ip, _node, st in new_pods:
        prev: list[str] = []
        for k, m in enumerate(st):
            t0 = s.ago(m)
            lines = start_lines("5.0.0", "3.1.2", "io_uring (entries=4096, sqpoll=off)")
            lines += [("error", "runtime: io_uring_setup(entries=4096, flags=0x0) failed: "
                                "operation not permitted (os error 1)"),
                      ("fatal", "cannot initialise I/O runtime: io_uring_setup: "
                                "operation not permitted; exiting with status 1")]
            text = []
            for j, (lvl, msg) in enumerate(lines):
                dt = t0 + timedelta(milliseconds=40 + 35 * j)
                s.log(dt, lvl, "chunk-store", "storage", p, "chunk-store", msg,
                      service__version="5.0.0")
                text.append(f"{dt.strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3]}Z {lvl.upper():5} {msg}")
            if k == len(st) - 1:
                s.pod_log("storage", p, "chunk-store", text, previous=True)
            prev = text
        assert prev
    for p, _ip, _node in old_pods:
        start = s.ago(3 * 1440)
        for j, (lvl, msg) in enumerate(start_lines("4.9.3", "2.8.5", "epoll")):
            s.log(start + timedelta(milliseconds=50 * j), lvl, "chunk-store", "storage", p,
                  "chunk-store", msg.replace("max_inflight=16", "max_inflight=4"),
                  service__version="4.9.3")
    old_app = App("storage", "chunk-store", old_rs, [p for p, _, _ in old_pods],
                  [ip for _, ip, _ in old_pods], [n for _, _, n in old_pods], "")
    s.chatter(old_app, [("info", "PUT /v1/chunks/{id} 201 {ms}ms bytes=4194304"),
                        ("info", "GET /v1/chunks/{id} 200 {ms}ms"),
                        ("info", "GET /v1/chunks/{id} 200 {ms}ms"),
                        ("info", "compaction: volume {n} merged 12 segments in {ms}ms"),
                        ("error", "PUT /v1/chunks/{id} aborted: client closed request "
                                  "(context canceled)")], every_s=14)
    for p, _ip, _node in old_pods:
        s.pod_log("storage", p, "chunk-store",
                  [f"{s.t(30)} INFO  GET /v1/chunks/{i:08x} 200 12ms" for i in range(20)])
    s.pod_basics(old_app, cpu=lambda m, i: 0.55 if m > roll else 0.85,
                 mem_mb=lambda m, i: 1180 + 3 * (60 - m),
                 rps=lambda m, i: 35.0 if m > roll else 52.0,
                 err=lambda m, i: 0.01 if m > roll else 0.4)
    for p, _ip, _node, st in new_pods:
        lab = {"namespace": "storage", "pod": p, "container": "chunk-store"}
        s.gauge("kube_pod_container_status_restarts_total", "Restarts of the container.", lab,
                lambda m, st=st: sum(1 for x in st[1:] if x >= m))
        s.gauge("kube_pod_container_status_waiting_reason", "Why the container waits.",
                {**lab, "reason": "CrashLoopBackOff"}, lambda m: 1 if m < roll - 1 else 0)
    s.gauge("kube_deployment_status_replicas_available", "Available replicas.",
            {"namespace": "storage", "deployment": "chunk-store"},
            lambda m: 3 if m > roll else 2)
    s.histogram("http_request_duration_seconds", "Request latency.",
                {"namespace": "storage", "service": "chunk-store"},
                lambda m: 105.0 if m > roll else 70.0,
                lambda m, le: (0.16 if m > roll else 0.31) if le < 0
                else (min(1.0, le / (0.4 if m > roll else 0.9))),
                [0.05, 0.1, 0.25, 0.5, 1.0, 2.5])

    # --- bystanders --------------------------------------------------------------------
    web = s.app("web", "storefront", "registry.internal/web/storefront:2026.04.14-1",
                nodes[3:], revision=31, created_min=24,
                prev_image="registry.internal/web/storefront:2026.04.13-2")
    rollout_events(s, "web", "storefront", web.rs, web.rs[:-10] + rs_hash("webstorefront30"),
                   24, 3)
    s.chatter(web, [("info", "GET / 200 {ms}ms"), ("info", "GET /product/{n} 200 {ms}ms"),
                    ("info", "GET /cart 200 {ms}ms"),
                    ("warn", "chunk upload for avatar {id} slow: {rnd}ms")], every_s=20)
    s.pod_basics(web, cpu=lambda m, i: 0.2, mem_mb=lambda m, i: 300.0,
                 rps=lambda m, i: None if m > 24 else 22.0)

    inv = s.app("billing", "invoice-renderer", "registry.internal/billing/invoice-renderer:1.18.0",
                nodes[1:3], cpu="500m", mem="1Gi", revision=22, created_min=5 * 1440)
    for o in s.objects:
        if o["kind"] == "Pod" and o["metadata"]["name"] == inv.pods[0]:
            cs = o["status"]["containerStatuses"][0]
            cs["restartCount"] = 1
            cs["lastState"] = {"terminated": {"exitCode": 2, "reason": "Error",
                                              "startedAt": s.t(5 * 1440 - 1),
                                              "finishedAt": s.t(2 * 1440 + 130)}}
            cs["state"] = {"running": {"startedAt": s.t(2 * 1440 + 129)}}
    s.chatter(inv, [("info", "rendered invoice INV-{rnd}-{n} in {ms}ms"),
                    ("warn", "font cache miss for 'Noto Sans CJK', falling back")], every_s=45)
    s.pod_basics(inv, cpu=lambda m, i: 0.3, mem_mb=lambda m, i: 610.0)
    pending_job_pod(s, "batch", "ledger-reconcile-29071340", "48Gi", n, 55)

    s.scenario_yaml = {
        "id": SID,
        "title": "chunk-store crash-looping after the morning release",
        "now": NOW,
        "report": "chunk-store in storage is crashlooping since the release this morning and "
                  "uploads are slow. Pretty sure it's the compaction config change that went "
                  "out with it (max_inflight 4 -> 16), can someone confirm so we roll back the "
                  "configmap? storefront also deployed around then fwiw\n",
        "truth": {
            "category": "crash_loop",
            "culprit": {"kind": "Deployment", "namespace": "storage", "name": "chunk-store"},
            "evidence": ["io_uring_setup", "operation not permitted", "RuntimeDefault",
                         "chunk-store:5.0.0"],
            "fix": "chunk-store 5.0.0's runtime (3.1.2) selects the io_uring backend, whose "
                   "io_uring_setup syscall the RuntimeDefault seccomp profile (set by the "
                   "Kyverno hardening policy) forbids. Roll back to 4.9.3 or configure the "
                   "runtime's epoll backend; the compaction config is not the cause (it loads "
                   "and validates). Long term, a Localhost seccomp profile that allows io_uring "
                   "if it is really wanted.",
        },
    }
    s.write(root)

