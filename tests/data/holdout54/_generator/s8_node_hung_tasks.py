"""Shape 8, node_failure: one node's data volume stops completing I/O; the kernel reports hung
tasks, node-problem-detector sets KernelDeadlock, and the pods there hang."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

from ._kit import (
    Ctr,
    Line,
    Pod,
    Ref,
    Rev,
    Scenario,
    condition,
    daemonset,
    deployment,
    event,
    iso,
    lines,
    namespace,
    node,
    service,
    standard_bystanders,
)

SID = "orders-inventory-intermittent-timeouts"
REG = "registry.internal.kappa.io"
BAD = "ip-10-50-2-14.ec2.internal"


def build(root: Path) -> None:
    sc = Scenario(SID, "2027-01-12T03:20:00Z", seed=5408)
    old = sc.ago(days=330)
    names = ["ip-10-50-1-88.ec2.internal", BAD, "ip-10-50-3-201.ec2.internal",
             "ip-10-50-1-150.ec2.internal", "ip-10-50-2-97.ec2.internal"]
    io_dead = sc.ago(minutes=28)
    hung = sc.ago(minutes=25)
    flap = sc.ago(minutes=16)
    back = sc.ago(minutes=13)
    for i, n in enumerate(names):
        created = sc.ago(days=11, hours=i * 5)
        since = sc.status_time(created)
        hb = sc.ago(seconds=sc.rng.randint(5, 40))
        if n == BAD:
            extra = [condition("KernelDeadlock", "True", "TaskHung",
                               "kernel: INFO: task jbd2/nvme1n1-8:1187 blocked for more than 120 "
                               "seconds.", hung, hb),
                     condition("ReadonlyFilesystem", "False", "FilesystemIsNotReadOnly",
                               "Filesystem is not read-only", since, hb)]
            ready = condition("Ready", "True", "KubeletReady", "kubelet is posting ready status",
                              back, hb)
        else:
            extra = [condition("KernelDeadlock", "False", "KernelHasNoDeadlock",
                               "kernel has no deadlock", since, hb),
                     condition("ReadonlyFilesystem", "False", "FilesystemIsNotReadOnly",
                               "Filesystem is not read-only", since, hb)]
            ready = None
        ip = n[3:].split(".")[0].replace("-", ".")
        node(sc, n, ip=ip, zone="eu-central-1" + "abc"[i % 3], created=created,
             extra_conditions=extra, ready=ready, instance="m6id.2xlarge")
    nodes = names
    event(sc, "", "Node", BAD, "TaskHung",
          "kernel: INFO: task jbd2/nvme1n1-8:1187 blocked for more than 120 seconds.",
          etype="Warning", count=11, first=hung, last=sc.ago(minutes=1),
          component="kernel-monitor", host=BAD)
    event(sc, "", "Node", BAD, "NodeNotReady", f"Node {BAD} status is now: NodeNotReady",
          first=flap, last=flap, component="node-controller")
    event(sc, "", "Node", BAD, "NodeReady", f"Node {BAD} status is now: NodeReady",
          first=back, last=back, component="kubelet", host=BAD)
    standard_bystanders(sc, nodes, ["orders-api.orders.svc.cluster.local",
                                    "inventory.inventory.svc.cluster.local",
                                    "orders-db.orders.svc.cluster.local"])
    for ns in ("default", "orders", "inventory", "edge"):
        namespace(sc, ns, old)

    npd = daemonset(sc, "kube-system", "node-problem-detector",
                    [Ctr("node-problem-detector",
                         "registry.k8s.io/node-problem-detector/node-problem-detector:v0.8.19",
                         port=20257, cpu_req="20m", mem_req="40Mi", mem_lim="80Mi")],
                    nodes=nodes, created=old, at=sc.ago(days=5, hours=2))
    bad_npd = next(p for p in npd.pods if p.ref.node == BAD)
    fb_bad = next(o for o in sc.objects if o["kind"] == "Pod"
                  and o["metadata"]["name"].startswith("fluent-bit-")
                  and o["spec"]["nodeName"] == BAD)
    kernel = replace(bad_npd.ref, ns="logging", pod=fb_bad["metadata"]["name"],
                     container="fluent-bit", service="kernel")
    _kernel_log(sc, kernel, io_dead, hung, bad_npd)
    for p in npd.pods:
        sc.usage(p, 0.005, 25e6)
        labels = {"node": p.ref.node, "type": "KernelDeadlock", "reason": "TaskHung"}
        is_bad = p.ref.node == BAD
        sc.gauge("problem_gauge", "Whether a problem is affecting the node.", labels,
                 lambda t, b=is_bad: 1.0 if b and t >= hung else 0.0)
        sc.gauge("kube_node_status_condition", "The condition of a cluster node.",
                 {"node": p.ref.node, "condition": "KernelDeadlock", "status": "true"},
                 lambda t, b=is_bad: 1.0 if b and t >= hung else 0.0)
    for n in nodes:
        is_bad = n == BAD
        inst = {"instance": f"{n[3:].split('.')[0].replace('-', '.')}:9100", "node": n}
        sc.counter("node_disk_io_time_seconds_total", "Total seconds spent doing I/Os.",
                   {**inst, "device": "nvme1n1"},
                   lambda t, b=is_bad: 1.0 if b and t >= io_dead else 0.04,
                   start=sc.rng.uniform(2e4, 6e4))
        sc.counter("node_disk_writes_completed_total", "The total number of writes completed "
                   "successfully.", {**inst, "device": "nvme1n1"},
                   lambda t, b=is_bad: 0.0 if b and t >= io_dead else 180.0,
                   start=sc.rng.uniform(1e7, 5e7))
        sc.gauge("node_load1", "1m load average.", inst,
                 lambda t, b=is_bad: (2.0 + min(38.0, (t - io_dead).total_seconds() / 30)
                                      if b and t >= io_dead else 1.6 + (t.minute % 7) / 10))
        sc.gauge("node_procs_blocked", "Number of processes blocked waiting for I/O to "
                 "complete.", inst, lambda t, b=is_bad: (min(27.0, 3.0 + (
                     t - io_dead).total_seconds() / 60) if b and t >= io_dead else 0.0))
    _apps(sc, nodes, old, io_dead, flap)
    sc.write(root, title="orders-api and inventory timing out intermittently",
             report="orders-api and inventory have been timing out intermittently since "
                    "about 3am, a few pods show not ready. orders-api 2.14 went out last "
                    "evening, is that it? thinking about rolling back, inventory might just "
                    "be slow because it calls orders.\n",
             truth={"category": "node_failure",
                    "culprit": {"kind": "Node", "namespace": "", "name": BAD},
                    "evidence": ["blocked for more than 120 seconds", "KernelDeadlock",
                                 "I/O error, dev nvme1n1"],
                    "fix": f"Cordon and drain {BAD} and replace the node (its nvme1n1 data "
                           "volume has stopped completing I/O); the pods rescheduled elsewhere "
                           "will be healthy. No rollback of orders-api is needed: its replicas "
                           "on other nodes run the same 2.14 and are fine."})


def _kernel_log(sc: Scenario, ref: Ref, io_dead: datetime, hung: datetime,
                npd: Pod) -> None:
    rng = sc.rng
    for k in range(8):
        t = io_dead + timedelta(seconds=5 + k * 17)
        sector = 88342528 + rng.randint(0, 900000)
        sc.log(t, ref, "error", f"kernel: nvme nvme1: I/O {rng.randint(100, 999)} QID "
               f"{rng.randint(1, 8)} timeout, aborting", {"host.name": BAD})
        sc.log(t + timedelta(seconds=1), ref, "error",
               f"kernel: blk_update_request: I/O error, dev nvme1n1, sector {sector} op 0x1:"
               "(WRITE) flags 0x800 phys_seg 1 prio class 0", {"host.name": BAD})
    tasks = [("jbd2/nvme1n1-8", 1187), ("containerd", 2214), ("java", 30412),
             ("kubelet", 3106), ("node", 28877)]
    t = hung
    k = 0
    while t < sc.now:
        name, pid = tasks[k % len(tasks)]
        sc.log(t, ref, "error", f"kernel: INFO: task {name}:{pid} blocked for more than 120 "
               "seconds.", {"host.name": BAD})
        sc.log(t, ref, "error", "kernel:       Not tainted 5.10.230-223.885.amzn2.x86_64 #1",
               {"host.name": BAD})
        sc.log(t, ref, "error", 'kernel: "echo 0 > /proc/sys/kernel/hung_task_timeout_secs" '
               "disables this message.", {"host.name": BAD})
        sc.log(t + timedelta(milliseconds=3), ref, "error",
               f"kernel: task:{name:<15} state:D stack:0     pid:{pid} ppid:1 "
               "flags:0x00000000", {"host.name": BAD})
        sc.log(t + timedelta(seconds=1), npd.ref, "warn",
               f"I{t:%m%d %H:%M:%S}.{rng.randint(100000, 999999)} 1 log_monitor.go:160] New "
               "status generated: &{Source:kernel-monitor Events:[{Severity:warn Timestamp:"
               f"{t:%Y-%m-%d %H:%M:%S} +0000 UTC Reason:TaskHung Message:task {name}:{pid} "
               "blocked for more than 120 seconds.}] Conditions:[{Type:KernelDeadlock Status:"
               "True Reason:TaskHung}]}")
        t += timedelta(seconds=rng.randint(100, 150))
        k += 1


def _apps(sc: Scenario, nodes: list[str], old: datetime, io_dead: datetime,
          flap: datetime) -> None:
    good = [n for n in nodes if n != BAD]

    def bad_hook(rev: int, idx: int) -> dict[str, object]:
        if idx == 1:
            return {"node_name": BAD, "ready": False}
        return {"node_name": good[(idx + rev) % len(good)]}

    orders = deployment(sc, "orders", "orders-api", [
        Rev([Ctr("orders-api", f"{REG}/orders/orders-api:2.13.6")], sc.ago(days=6), 0),
        Rev([Ctr("orders-api", f"{REG}/orders/orders-api:2.14.0", mem_lim="1Gi",
                 liveness={"httpGet": {"path": "/livez", "port": 8080, "scheme": "HTTP"},
                           "periodSeconds": 10, "timeoutSeconds": 2, "failureThreshold": 6,
                           "successThreshold": 1})],
            sc.ago(hours=7, minutes=10), 4, "orders-api 2.14.0 (split fulfilment states)"),
    ], nodes=nodes, created=old, first_rev=77, pod_hook=bad_hook)
    inventory = deployment(sc, "inventory", "inventory", [
        Rev([Ctr("inventory", f"{REG}/inventory/inventory:5.2.1", mem_lim="768Mi")],
            sc.ago(days=3, hours=9), 3)], nodes=nodes, created=old,
        first_rev=41, pod_hook=bad_hook)
    for wl, svc in ((orders, "orders-api"), (inventory, "inventory")):
        service(sc, wl.ns, svc, selector={"app": svc}, ports=[("http", 80, 8080)], created=old)
        for p in wl.pods:
            on_bad = p.ref.node == BAD
            end = io_dead + timedelta(seconds=sc.rng.randint(20, 200)) if on_bad else None

            def gen(rng: random.Random, t: datetime, name: str = svc) -> Line:
                if name == "inventory" and rng.random() < 0.06:
                    return ("warn", f"stock cache stale for sku {rng.randint(10000, 99999)}, "
                                    "refreshing", {})
                path = "/v1/orders" if name == "orders-api" else "/v1/stock"
                d = rng.randint(6, 45)
                return ("info", f"GET {path}/{rng.randint(1000, 99999)} 200 {d}ms",
                        {"http.response.status_code": 200, "event.duration": d * 10**6})

            sc.chatter(p.ref, gen, 1.0, end=end)
            if on_bad:
                assert end is not None
                sc.log(end - timedelta(seconds=4), p.ref, "warn",
                       "write to /var/log/app/audit.log blocked for 31.4s")
                sc.log(end, p.ref, "warn", "request GET /v1/" + ("orders" if svc == "orders-api"
                                                                 else "stock")
                       + "/81544 took 29877ms")
                ip = p.ref.ip
                event(sc, wl.ns, "Pod", p.ref.pod, "Unhealthy",
                      f'Readiness probe failed: Get "http://{ip}:8080/healthz": context '
                      "deadline exceeded (Client.Timeout exceeded while awaiting headers)",
                      etype="Warning", count=142, first=io_dead + timedelta(minutes=1),
                      last=sc.ago(seconds=8), host=BAD, field_path=f"spec.containers{{{svc}}}")
                if svc == "orders-api":
                    event(sc, wl.ns, "Pod", p.ref.pod, "Killing",
                          "Container orders-api failed liveness probe, will be restarted",
                          etype="Normal", count=2, first=flap, last=sc.ago(minutes=4),
                          host=BAD, field_path="spec.containers{orders-api}")
                    event(sc, wl.ns, "Pod", p.ref.pod, "FailedKillPod",
                          'error killing pod: failed to "KillContainer" for "orders-api" with '
                          'KillContainerError: "rpc error: code = DeadlineExceeded desc = '
                          'context deadline exceeded"', etype="Warning", count=2,
                          first=flap + timedelta(minutes=2), last=sc.ago(minutes=2), host=BAD)
            sc.usage(p, (lambda t: 0.01 if t >= io_dead else 0.3) if on_bad else 0.3,
                     450e6, ksm=True)
            sc.counter("http_requests_total", "Total HTTP requests.",
                       {"namespace": wl.ns, "service": svc, "pod": p.ref.pod, "code": "200"},
                       (lambda t: 0.02 if t >= io_dead else 9.0) if on_bad else lambda t: 9.0,
                       start=sc.rng.uniform(1e5, 1e6))
    bad_ips = {p.ref.ip: p.ref.service for p in orders.pods + inventory.pods
               if p.ref.node == BAD}
    gw = deployment(sc, "edge", "api-gateway", [
        Rev([Ctr("envoy", "envoyproxy/envoy:v1.31.2", port=8080)], sc.ago(days=4, hours=5), 3)],
        nodes=good, created=old, first_rev=16)

    def gw_gen(rng: random.Random, t: datetime) -> Line:
        if t >= io_dead + timedelta(seconds=60) and rng.random() < 0.16:
            ip, svc = rng.choice(sorted(bad_ips.items()))
            return ("warn", f'[{iso(t)}] "GET /api/{svc.split("-")[0]}/{rng.randint(1000, 99999)}'
                            f' HTTP/1.1" 504 UT 0 24 10001 - "{ip}:8080" upstream request '
                            "timeout", {"http.response.status_code": 504})
        svc = rng.choice(["orders", "inventory", "catalog"])
        return ("info", f'[{iso(t)}] "GET /api/{svc}/{rng.randint(1000, 99999)} HTTP/1.1" 200 - '
                        f"0 {rng.randint(200, 4000)} {rng.randint(8, 60)}", {})

    for p in gw.pods:
        sc.chatter(p.ref, gw_gen, 1.3)
        sc.chatter(p.ref, lines([("warn", "[warning][config] gRPC config stream to xds-server "
                                          "closed: 13, , reconnecting")]), 0.05)
        sc.usage(p, 0.2, 120e6)
    service(sc, "edge", "api-gateway", selector={"app": "api-gateway"},
            ports=[("http", 80, 8080)], created=old)
