"""Harbor Credit Union's statements (a node whose kubelet certificate expired) and
Fernbrook Lending's 503s (an API whose readiness depends on a CPU-starved scorer)."""

from __future__ import annotations

import json
from datetime import timedelta as td
from typing import Any

from tests.data.holdout33._generator.kit33 import (
    Scenario,
    container,
    endpoints,
    event,
    http_probe,
    iso,
    namespace,
    node,
    parse,
    pod,
    pod_hash,
    rollout,
    service,
    suffix,
    template,
    timeline,
)


def node_cert_expired() -> Scenario:
    now = parse("2026-11-28T09:20:00Z")
    bad = "ip-10-31-14-201.ec2.internal"
    s = Scenario(
        "credit-union-statements-timing-out",
        "Monthly statement PDFs time out for members",
        now,
        "members can't download their november statements, the page spins and then 504. "
        "statement-renderer shows 5 pods but only 2 ready and a couple stuck Pending?? "
        "looks like a capacity thing, do we need more nodes?\n",
        {"category": "node_failure", "culprit": {"kind": "Node", "namespace": "", "name": bad},
         "evidence": ["Kubelet stopped posting node status", "certificate has expired",
                      "Unauthorized"],
         "fix": f"Renew the kubelet client certificate on {bad} (approve its CSR or re-bootstrap "
                "the kubelet) or replace the node; spread statement-renderer with a topology "
                "spread constraint so one node cannot hold most of it."})
    old = now - td(days=400)
    names = ["ip-10-31-11-37.ec2.internal", "ip-10-31-12-88.ec2.internal", bad,
             "ip-10-31-15-140.ec2.internal", "ip-10-31-13-9.ec2.internal"]
    hosts = {n: n[3:].split(".")[0].replace("-", ".") for n in names}
    down = parse("2026-11-28T08:47:10Z")
    for i, n in enumerate(names):
        if n == bad:
            s.add(node(n, now - td(days=365, hours=2), now, ready=False, zone="b",
                       region="us-east-1", ready_since=down + td(seconds=40),
                       heartbeat=down, kubelet="v1.27.13", taints=[
                           {"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule",
                            "timeAdded": iso(down + td(seconds=40))},
                           {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute",
                            "timeAdded": iso(down + td(seconds=45))}]))
        else:
            s.add(node(n, old + td(days=30 * i), now, zone="abcd"[i % 4], region="us-east-1",
                       kubelet="v1.27.13", memory="7304Mi", instance="m5.large", cpu="1930m"))
    for ns in ("docs", "members", "kube-system", "default"):
        s.add(namespace(ns, old))
    # statement-renderer: 5 replicas, 4 were on the bad node
    rtmpl = template({"app": "statement-renderer", "tier": "backend"},
                     [container("renderer", "123456789012.dkr.ecr.us-east-1.amazonaws.com/"
                                "statement-renderer:2.14.1", cpu="500m", memory="1536Mi",
                                memory_limit="2Gi", readiness=http_probe("/health/ready",
                                                                         delay=45),
                                env={"JAVA_TOOL_OPTIONS": "-XX:MaxRAMPercentage=70"})])
    rev_at = now - td(days=4, hours=3)
    h = pod_hash("statement-renderer9")
    rs = f"statement-renderer-{h}"
    placements = [bad, bad, bad, names[0], bad]
    lost_at = down + td(seconds=40)
    evict_at = down + td(seconds=345)
    overrides: dict[int, dict[str, Any]] = {}
    for i in (0, 1, 2, 4):
        overrides[i] = {"started": rev_at + td(seconds=30 * i), "ready": False, "unknown": True,
                        "ready_changed": lost_at, "deletion": evict_at + td(seconds=30)}
    overrides[3] = {"started": rev_at + td(seconds=90)}
    dep, lost = rollout(s, "statement-renderer", "docs", old, [(8, rtmpl, now - td(days=20)),
                                                               (9, rtmpl, rev_at)],
                        placements, ips=["10.31.14.51", "10.31.14.77", "10.31.14.102",
                                         "10.31.11.64", "10.31.14.23"], host_ips=hosts,
                        pod_overrides=overrides, ready=1)
    dep["spec"]["replicas"] = 5
    dep["status"].update({"replicas": 5, "readyReplicas": 2, "availableReplicas": 2,
                          "unavailableReplicas": 3, "updatedReplicas": 5})
    dep["status"]["conditions"][0].update({"status": "False",
                                           "reason": "MinimumReplicasUnavailable",
                                           "message": "Deployment does not have minimum "
                                                      "availability.",
                                           "lastTransitionTime": iso(evict_at + td(seconds=40)),
                                           "lastUpdateTime": iso(evict_at + td(seconds=40))})
    for obj in s.objects:
        if obj["kind"] == "ReplicaSet" and obj["metadata"]["name"] == rs:
            obj["spec"]["replicas"] = 5
            obj["status"].update({"replicas": 5, "readyReplicas": 2, "availableReplicas": 2})
    # replacements: two running on other nodes, one still warming up, one pending
    repl = []
    spots = [(names[1], "ready", "10.31.12.140"), (names[3], "warming", "10.31.15.31"),
             (None, "pending", None), (None, "pending", None)]
    for j, (where, state, ip) in enumerate(spots):
        started = evict_at + td(seconds=35 + j * 3)
        pname = f"statement-renderer-{h}-{suffix('repl' + str(j))}"
        if where is None:
            p = pod(pname, "docs", "ReplicaSet", rs, rtmpl, None, started, phase="Pending",
                    extra_labels={"pod-template-hash": h},
                    pending_message="0/5 nodes are available: 1 node(s) had untolerated taint "
                    "{node.kubernetes.io/unreachable: }, 4 Insufficient memory. preemption: "
                    "0/5 nodes are available: 1 Preemption is not helpful for scheduling, 4 No "
                    "preemption victims found for incoming pod.")
        else:
            running = started if state == "ready" else now - td(minutes=5)
            p = pod(pname, "docs", "ReplicaSet", rs, rtmpl, where, started, ip=ip,
                    host_ip=hosts[where], extra_labels={"pod-template-hash": h},
                    ready=state == "ready", container_running_since=running,
                    ready_changed=started + td(minutes=3) if state == "ready" else running)
        if state == "warming":
            for c in p["status"]["conditions"]:
                if c["type"] in ("PodScheduled", "Initialized"):
                    c["lastTransitionTime"] = iso(now - td(minutes=6))
            p["status"]["startTime"] = iso(now - td(minutes=6))
        repl.append(p)
        s.add(p)
    s.add(service("statement-renderer", "docs", old, {"app": "statement-renderer"},
                  cluster_ip="172.20.61.4"))
    s.add(endpoints("statement-renderer", "docs", old,
                    [(lost[3]["metadata"]["name"], "10.31.11.64", names[0]),
                     (repl[0]["metadata"]["name"], "10.31.12.140", names[1])],
                    [(repl[1]["metadata"]["name"], "10.31.15.31", names[3])]))
    # statement-api and portal (bystanders; one api pod was on the bad node too)
    atmpl = template({"app": "statement-api"},
                     [container("api", "123456789012.dkr.ecr.us-east-1.amazonaws.com/"
                                "statement-api:5.2.0", readiness=http_probe("/ready"))])
    _, apods = rollout(s, "statement-api", "docs", old, [(22, atmpl, now - td(days=9))],
                       [names[0], names[3]], ips=["10.31.11.80", "10.31.15.81"], host_ips=hosts)
    ptmpl = template({"app": "member-portal"},
                     [container("web", "123456789012.dkr.ecr.us-east-1.amazonaws.com/"
                                "member-portal:11.0.3", readiness=http_probe("/"))])
    rollout(s, "member-portal", "members", old, [(140, ptmpl, now - td(days=1, hours=6))],
            [names[1], names[4], names[0]], ips=["10.31.12.9", "10.31.13.10", "10.31.11.11"],
            host_ips=hosts)
    itmpl = template({"app": "member-insights"},
                     [container("insights", "123456789012.dkr.ecr.us-east-1.amazonaws.com/"
                                "member-insights:0.19.2", cpu="300m", memory="4Gi",
                                memory_limit="5Gi", readiness=http_probe("/ready"))])
    rollout(s, "member-insights", "members", old, [(6, itmpl, now - td(days=3))],
            [names[0], names[1], names[3], names[4]],
            ips=["10.31.11.120", "10.31.12.121", "10.31.15.122", "10.31.13.123"], host_ips=hosts)
    vtmpl = template({"app": "clamav"},
                     [container("clamd", "clamav/clamav:1.3.1", cpu="200m", memory="2Gi",
                                memory_limit="3Gi", port=3310)])
    rollout(s, "clamav", "docs", old, [(3, vtmpl, now - td(days=12))], [names[4]],
            ips=["10.31.13.140"], host_ips=hosts)
    # kube-system daemonset pods on the lost node
    ktmpl = template({"k8s-app": "kube-proxy", "app": "kube-proxy"},
                     [container("kube-proxy", "602401143452.dkr.ecr.us-east-1.amazonaws.com/"
                                "eks/kube-proxy:v1.27.13-eksbuild.2", port=None, cpu="100m",
                                memory=None, memory_limit=None)])
    s.add({"apiVersion": "apps/v1", "kind": "DaemonSet",
           "metadata": {"name": "kube-proxy", "namespace": "kube-system",
                        "creationTimestamp": iso(old), "labels": {"k8s-app": "kube-proxy"}},
           "spec": {"selector": {"matchLabels": {"k8s-app": "kube-proxy"}}, "template": ktmpl,
                    "updateStrategy": {"type": "RollingUpdate"}},
           "status": {"desiredNumberScheduled": 5, "currentNumberScheduled": 5,
                      "numberReady": 4, "numberAvailable": 4, "numberUnavailable": 1,
                      "updatedNumberScheduled": 5, "numberMisscheduled": 0,
                      "observedGeneration": 3}})
    for n in names:
        p = pod(f"kube-proxy-{suffix(n)}", "kube-system", "DaemonSet", "kube-proxy", ktmpl, n,
                now - td(days=60), ip=hosts[n], host_ip=hosts[n],
                ready=n != bad, unknown=n == bad, ready_changed=lost_at if n == bad else None)
        s.add(p)
    # events (last hour)
    for p in lost:
        if p["spec"]["nodeName"] != bad:
            continue
        pname = p["metadata"]["name"]
        s.add(event("docs", "Pod", pname, "NodeNotReady", "Node is not ready", lost_at, lost_at,
                    component="node-controller"))
        s.add(event("docs", "Pod", pname, "TaintManagerEviction",
                    "Marking for deletion Pod docs/" + pname, evict_at, evict_at, type_="Normal",
                    component="taint-eviction-controller"))
    s.add(event("", "Node", bad, "NodeNotReady",
                f"Node {bad} status is now: NodeNotReady", lost_at, lost_at,
                component="node-controller"))
    for pend in (repl[2], repl[3]):
        s.add(event("docs", "Pod", pend["metadata"]["name"], "FailedScheduling",
                    pend["status"]["conditions"][0]["message"], evict_at + td(seconds=36),
                    now - td(minutes=2), count=14, component="default-scheduler"))
    s.add(event("docs", "Pod", repl[1]["metadata"]["name"], "Unhealthy",
                "Readiness probe failed: Get \"http://10.31.15.31:8080/health/ready\": dial tcp "
                "10.31.15.31:8080: connect: connection refused", now - td(minutes=4),
                now - td(seconds=20), count=9, host=names[3]))
    s.add(event("docs", "Pod", repl[1]["metadata"]["name"], "Scheduled",
                f"Successfully assigned docs/{repl[1]['metadata']['name']} to {names[3]}",
                now - td(minutes=6), now - td(minutes=6), type_="Normal",
                component="default-scheduler"))
    s.add(event("docs", "Pod", apods[1]["metadata"]["name"], "FailedMount",
                "MountVolume.SetUp failed for volume \"kube-api-access-7xq2d\" : object "
                "\"docs\"/\"kube-root-ca.crt\" not registered", now - td(minutes=57),
                now - td(minutes=57), host=names[3]))
    # kubelet journal shipped to the log store
    def kub(t, lvl, pid, src, msg):
        return (t, lvl, f"{lvl[0].upper()}{t.strftime('%m%d %H:%M:%S')}."
                                             f"{t.microsecond:06d}    {pid} {src}] {msg}")
    journal = []
    t = now - td(hours=3)
    while t < down - td(minutes=8):
        journal.append(kub(t, "info", 2291, "kubelet_getters.go:187",
                           '"Pod status updated" pod="kube-system/kube-proxy-' + suffix(bad) +
                           '" status="Running"'))
        t += td(minutes=4)
    exp = parse("2026-11-28T08:44:58Z")
    journal += [
        kub(exp - td(hours=2), "info", 2291, "certificate_manager.go:356",
            "kubernetes.io/kube-apiserver-client-kubelet: Rotating certificates"),
        kub(exp - td(hours=2) + td(seconds=1), "error", 2291, "certificate_manager.go:562",
            "kubernetes.io/kube-apiserver-client-kubelet: Failed while requesting a signed "
            "certificate from the control plane: cannot create certificate signing request: "
            "certificatesigningrequests.certificates.k8s.io is forbidden: User \"system:node:" +
            bad + "\" cannot create resource \"certificatesigningrequests\""),
        kub(exp - td(minutes=30), "error", 2291, "certificate_manager.go:562",
            "kubernetes.io/kube-apiserver-client-kubelet: Failed while requesting a signed "
            "certificate from the control plane: cannot create certificate signing request: "
            "certificatesigningrequests.certificates.k8s.io is forbidden: User \"system:node:" +
            bad + "\" cannot create resource \"certificatesigningrequests\""),
    ]
    t = exp + td(seconds=3)
    k = 0
    while t < now:
        if k % 4 == 0:
            journal.append(kub(t, "error", 2291, "certificate_manager.go:488",
                               "kubernetes.io/kube-apiserver-client-kubelet: Current certificate "
                               f"is expired: notAfter={iso(exp)}"))
        journal.append(kub(t + td(seconds=1), "error", 2291, "kubelet_node_status.go:540",
                           '"Error updating node status, will retry" err="error getting node '
                           f'\\"{bad}\\": Unauthorized"'))
        if k % 3 == 0:
            journal.append(kub(t + td(seconds=2), "error", 2291, "reflector.go:147",
                               "k8s.io/client-go/informers/factory.go:150: Failed to watch "
                               "*v1.Service: failed to list *v1.Service: Unauthorized"))
        if k % 6 == 0:
            journal.append(kub(t + td(seconds=3), "error", 2291, "transport.go:123",
                               '"Unable to authenticate the request" err="x509: certificate has '
                               f'expired or is not yet valid: current time {iso(t)} is after '
                               f'{iso(exp)}"'))
        t += td(seconds=50)
        k += 1
    for ts, lvl, msg in journal:
        s.doc(ts, "kubelet", "kube-system", bad, "kubelet", lvl, msg,
              **{"host.name": bad, "log.file.path": "/var/log/journal", "systemd.unit":
                 "kubelet.service"})
    for n in names[:2]:
        for m in range(0, 180, 15):
            ts = now - td(minutes=m)
            s.doc(ts, "kubelet", "kube-system", n, "kubelet", "info",
                  f"I{ts.strftime('%m%d %H:%M:%S')}.100201    1988 kubelet_node_status.go:493] "
                  '"Fast updating node status as it just became ready"' if m == 165 else
                  f"I{ts.strftime('%m%d %H:%M:%S')}.100201    1988 prober.go:107] \"Probe "
                  'succeeded" probeType="Readiness"', **{"host.name": n,
                                                         "systemd.unit": "kubelet.service"})
    # renderer logs: the survivor is busy, the warming one slow
    for p in [lost[3], repl[0], repl[1]]:
        pname = p["metadata"]["name"]
        lines = []
        t = max(parse(p["metadata"]["creationTimestamp"]) + td(seconds=10), now - td(hours=1))
        k = 0
        while t < now:
            dur = 1900 + (k * 373) % 2800 if t > down else 420 + (k * 37) % 200
            lines.append(f"{iso(t)} INFO  [http-nio-8080-exec-{k % 8}] c.h.s.RenderController - "
                         f"rendered statement member={8000000 + k * 13} pages=4 took={dur}ms")
            if t > down and k % 5 == 0:
                lines.append(f"{iso(t)} WARN  [http-nio-8080-exec-{k % 8}] c.h.s.RenderQueue - "
                             f"render queue depth {40 + k % 30} above 25; shedding to retry")
            t += td(seconds=25)
            k += 1
        s.log("docs", pname, "renderer", lines)
    for p in lost[:3]:
        s.log("docs", p["metadata"]["name"], "renderer",
              [f"{iso(down - td(minutes=m))} INFO  [http-nio-8080-exec-2] c.h.s.RenderController"
               f" - rendered statement member={9000000 + m} pages=3 took=455ms"
               for m in range(40, 0, -2)])
    # metrics: node readiness and renderer traffic at the ingress
    ts = timeline(now, 3)
    dt = down.timestamp()
    for n in names:
        s.metrics.gauge("kube_node_status_condition", "node condition",
                        {"namespace": "kube-system", "pod": "kube-state-metrics-6b8c9-zt4fq",
                         "node": n, "condition": "Ready", "status": "true"}, ts,
                        lambda t, n=n: 0 if n == bad and t > dt + 40 else 1)
    ing = {"namespace": "ingress-nginx", "pod": "ingress-nginx-controller-5d4f8-q8wl2",
           "ingress": "statements", "exported_namespace": "docs", "service": "statement-renderer"}
    s.metrics.counter("nginx_ingress_controller_requests", "requests", {**ing, "status": "200"},
                      ts, lambda t: 14.0 if t < dt else 3.1)
    s.metrics.counter("nginx_ingress_controller_requests", "requests", {**ing, "status": "504"},
                      ts, lambda t: 0.02 if t < dt else 9.4)
    for p in [*lost, *repl[:2]]:
        pname = p["metadata"]["name"]
        on_bad = p["spec"]["nodeName"] == bad
        start = parse(p["metadata"]["creationTimestamp"]).timestamp()
        window = [t for t in ts if t >= start and (not on_bad or t <= dt)]
        if not window:
            continue
        lab = {"namespace": "docs", "pod": pname, "container": "renderer"}
        s.metrics.gauge("container_memory_working_set_bytes", "memory", lab, window,
                        lambda t: 1_310_000_000 + (t % 900) * 20000)
        s.metrics.counter("container_cpu_usage_seconds", "cpu", lab, window,
                          lambda t: 0.35 if t < dt else 0.9)
    return s


# --------------------------------------------------------------------------- lending


def scorer_throttled() -> Scenario:
    now = parse("2026-11-25T14:10:00Z")
    s = Scenario(
        "lending-apply-503-unready",
        "Loan application page answers 503 intermittently",
        now,
        "apply page is throwing 503s on and off since lunch, apply-api pods keep flipping "
        "to not ready. did someone change the readiness probe? we didn't deploy apply-api "
        "this week\n",
        {"category": "cpu_throttling",
         "culprit": {"kind": "Deployment", "namespace": "risk", "name": "risk-scorer"},
         "evidence": ["cpu: 400m", "container_cpu_cfs_throttled_periods_total",
                      "risk-scorer.risk.svc.cluster.local", "Read timed out"],
         "fix": "Restore risk-scorer's CPU limit (2 cores, or remove the limit), and stop "
                "apply-api's readiness probe from depending on risk-scorer."})
    old = now - td(days=250)
    names = [f"gke-fern-prod-pool-b-8c1e{i}f0-{suffix('n' + str(i), 4)}" for i in range(4)]
    hosts = {n: f"10.128.0.{11 + i}" for i, n in enumerate(names)}
    for i, n in enumerate(names):
        s.add(node(n, old + td(days=i * 20), now, zone="abc"[i % 3], region="europe-west1-",
                   instance="e2-standard-4", kubelet="v1.29.8-gke.1096000"))
    for ns in ("lending", "risk", "ingress-nginx"):
        s.add(namespace(ns, old))
    change = parse("2026-11-25T12:58:00Z")
    def stmpl(cpu_limit: str) -> dict[str, Any]:
        return template({"app": "risk-scorer", "team": "risk-ml"},
                        [container("scorer", "europe-docker.pkg.dev/fernbrook/ml/risk-scorer:3.8.2",
                                   cpu="250m", memory="1Gi", memory_limit="2Gi",
                                   cpu_limit=cpu_limit, port=8000,
                                   env={"MODEL_PATH": "/models/gbm-2026-10.onnx",
                                        "OMP_NUM_THREADS": "4", "WORKERS": "4"},
                                   readiness=http_probe("/healthz/live", 8000),
                                   liveness=http_probe("/healthz/live", 8000, period=20))])
    _, spods = rollout(s, "risk-scorer", "risk", old,
                       [(8, stmpl("2"), now - td(days=16)), (9, stmpl("400m"), change)],
                       names[:3], ips=["10.60.1.21", "10.60.2.22", "10.60.3.23"], host_ips=hosts,
                       change_cause="right-size requests/limits per FinOps Q4 report (FIN-2291)")
    s.add(service("risk-scorer", "risk", old, {"app": "risk-scorer"}, 80, 8000,
                  cluster_ip="10.20.7.140"))
    s.add(endpoints("risk-scorer", "risk", old, [(p["metadata"]["name"], p["status"]["podIP"],
                                                  p["spec"]["nodeName"]) for p in spods],
                    port=8000))
    ftmpl = template({"app": "fraud-rules"},
                     [container("rules", "europe-docker.pkg.dev/fernbrook/risk/fraud-rules:1.30.0",
                                cpu="100m", cpu_limit="500m", readiness=http_probe("/ready"))])
    rollout(s, "fraud-rules", "risk", old, [(17, ftmpl, now - td(days=3))], names[1:3],
            ips=["10.60.2.40", "10.60.3.41"], host_ips=hosts,
            change_cause="fraud-rules 1.30.0")
    # apply-api: readiness calls risk-scorer's deep health
    atmpl = template({"app": "apply-api", "team": "origination"},
                     [container("api", "europe-docker.pkg.dev/fernbrook/web/apply-api:12.4.0",
                                cpu="300m", memory="512Mi", cpu_limit="1", port=8080,
                                env={"SCORER_URL": "http://risk-scorer.risk.svc.cluster.local",
                                     "READINESS_DEPENDENCIES": "postgres,risk-scorer",
                                     "READINESS_DEP_TIMEOUT": "1.5"},
                                readiness=http_probe("/ready", period=5, timeout=3, failures=2),
                                liveness=http_probe("/live", period=15))])
    ready_pod = 2
    overrides = {i: {"ready": i == ready_pod, "ready_changed": now - td(seconds=20 + 40 * i)}
                 for i in range(4)}
    _, apods = rollout(s, "apply-api", "lending", old, [(51, atmpl, now - td(days=11))], names,
                       ips=["10.60.0.31", "10.60.1.32", "10.60.2.33", "10.60.3.34"],
                       host_ips=hosts, pod_overrides=overrides, ready=1)
    s.add(service("apply-api", "lending", old, {"app": "apply-api"}, cluster_ip="10.20.3.9"))
    s.add(endpoints("apply-api", "lending", old,
                    [(apods[ready_pod]["metadata"]["name"], "10.60.2.33", names[2])],
                    [(p["metadata"]["name"], p["status"]["podIP"], p["spec"]["nodeName"])
                     for i, p in enumerate(apods) if i != ready_pod]))
    s.add({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
           "metadata": {"name": "apply", "namespace": "lending", "creationTimestamp": iso(old),
                        "annotations": {"nginx.ingress.kubernetes.io/proxy-read-timeout": "30"}},
           "spec": {"ingressClassName": "nginx", "rules": [{"host": "apply.fernbrook.co.uk",
                    "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {
                        "service": {"name": "apply-api", "port": {"number": 80}}}}]}}],
                    "tls": [{"hosts": ["apply.fernbrook.co.uk"], "secretName": "apply-tls"}]},
           "status": {"loadBalancer": {"ingress": [{"ip": "34.76.201.18"}]}}})
    dtmpl = template({"app": "document-upload"},
                     [container("upload", "europe-docker.pkg.dev/fernbrook/web/document-upload"
                                ":4.1.2", readiness=http_probe("/ready"))])
    rollout(s, "document-upload", "lending", old, [(9, dtmpl, now - td(days=30))], names[:2],
            ips=["10.60.0.50", "10.60.1.51"], host_ips=hosts)
    itmpl = template({"app": "ingress-nginx"},
                     [container("controller", "registry.k8s.io/ingress-nginx/controller:v1.10.1",
                                cpu="100m", memory="90Mi", port=80)])
    _, ipods = rollout(s, "ingress-nginx-controller", "ingress-nginx", old,
                       [(6, itmpl, now - td(days=40))], names[:2], ips=["10.60.0.5", "10.60.1.6"],
                       host_ips=hosts)
    # events: readiness flapping on apply-api
    for i, p in enumerate(apods):
        pname = p["metadata"]["name"]
        s.add(event("lending", "Pod", pname, "Unhealthy",
                    "Readiness probe failed: HTTP probe failed with statuscode: 503",
                    change + td(minutes=4 + i), now - td(seconds=10 + 25 * i), count=140 + 17 * i,
                    host=p["spec"]["nodeName"]))
    s.add(event("risk", "Deployment", "risk-scorer", "ScalingReplicaSet",
                "Scaled down replica set risk-scorer-" + pod_hash("risk-scorer8") + " to 0 from 1",
                now - td(minutes=50), now - td(minutes=50), type_="Normal",
                component="deployment-controller", api="apps/v1"))
    s.add(event("lending", "Pod", apods[0]["metadata"]["name"], "Pulled",
                "Container image already present on machine", now - td(minutes=33),
                now - td(minutes=33), type_="Normal"))
    # logs
    for p in apods:
        pname = p["metadata"]["name"]
        lines = []
        t = now - td(hours=2)
        k = 0
        while t < now:
            if t < change + td(minutes=3):
                lines.append(json.dumps({"time": iso(t), "level": "INFO",
                                         "logger": "uvicorn.access",
                                         "message": f'10.60.0.5 - "POST /v1/applications HTTP/1.1" '
                                                    f"201 {180 + k % 90}ms"}))
            else:
                if k % 2 == 0:
                    msg = ("readiness check failed: dependency risk-scorer: ReadTimeout(\"HTTP"
                           "ConnectionPool(host='risk-scorer.risk.svc.cluster.local', port=80): "
                           "Read timed out. (read timeout=1.5)\")")
                    lines.append(json.dumps({"time": iso(t), "level": "WARNING",
                                             "logger": "apply.health", "message": msg}))
                    if k % 6 == 0:
                        s.doc(t, "apply-api", "lending", pname, "api", "warn", msg,
                              **{"log.logger": "apply.health"})
                took = 2400 + (k * 97) % 3000
                msg = f'10.60.0.5 - "POST /v1/applications HTTP/1.1" 201 {took}ms'
                lines.append(json.dumps({"time": iso(t), "level": "INFO",
                                         "logger": "uvicorn.access",
                                         "message": msg}))
            t += td(seconds=15)
            k += 1
        s.log("lending", pname, "api", lines)
    for i, p in enumerate(spods):
        pname = p["metadata"]["name"]
        lines = [f"{iso(change + td(seconds=25 + 35 * i))} INFO scorer: loaded model "
                 "gbm-2026-10.onnx (412 trees) in 8.1s, workers=4 intra_op_threads=4"]
        t = change + td(seconds=60 + 35 * i)
        k = 0
        while t < now:
            took = 900 + (k * 211) % 2100
            lines.append(f"{iso(t)} INFO scorer: POST /v2/score 200 {took}ms features=143")
            if k % 4 == 0:
                lines.append(f"{iso(t)} WARNING scorer: inference slow: {took - 40}ms "
                             "(budget 300ms) queue=11")
                s.doc(t, "risk-scorer", "risk", pname, "scorer", "warn",
                      f"inference slow: {took - 40}ms (budget 300ms) queue=11")
            if k % 9 == 0:
                lines.append(f"{iso(t)} INFO scorer: GET /healthz/deep 200 {took + 300}ms")
            t += td(seconds=20)
            k += 1
        s.log("risk", pname, "scorer", lines)
    ct = change.timestamp()
    for p in ipods:
        pname = p["metadata"]["name"]
        lines = []
        t = change + td(minutes=5)
        k = 0
        while t < now:
            lines.append(f"{t.strftime('%Y/%m/%d %H:%M:%S')} [error] 28#28: *{88213 + k} no live "
                         f"upstreams while connecting to upstream, client: 81.2.69.{k % 200}, "
                         'server: apply.fernbrook.co.uk, request: "POST /v1/applications '
                         'HTTP/2.0", upstream: "http://lending-apply-api-80/v1/applications"')
            if k % 3 == 0:
                s.doc(t, "ingress-nginx", "ingress-nginx", pname, "controller", "error",
                      lines[-1].split("[error] ", 1)[1], **{"http.response.status_code": 503})
            t += td(seconds=45)
            k += 1
        s.log("ingress-nginx", pname, "controller", lines)
    # metrics
    ts = timeline(now, 4, 120)
    for i, p in enumerate(spods):
        lab = {"namespace": "risk", "pod": p["metadata"]["name"], "container": "scorer"}
        window = [t for t in ts if t >= ct + 30 * i]
        s.metrics.counter("container_cpu_cfs_periods", "periods", lab, window, lambda t: 10)
        s.metrics.counter("container_cpu_cfs_throttled_periods", "throttled", lab, window,
                          lambda t: 8.4 + (t % 7) * 0.1)
        s.metrics.counter("container_cpu_usage_seconds", "cpu", lab, window, lambda t: 0.398)
        s.metrics.gauge("kube_pod_container_resource_limits", "limits",
                        {**lab, "resource": "cpu", "unit": "core"}, window, lambda t: 0.4)
        s.metrics.gauge("container_memory_working_set_bytes", "mem", lab, window,
                        lambda t: 780_000_000)
        s.metrics.histogram("http_request_duration_seconds", "latency",
                            {**lab, "handler": "/v2/score"}, window, lambda t: 6.0,
                            lambda t: 1.6, 0.45)
    for i in range(3):
        lab = {"namespace": "risk", "pod": f"risk-scorer-{pod_hash('risk-scorer8')}-"
                                          f"{suffix('oldsc' + str(i))}", "container": "scorer"}
        window = [t for t in ts if t <= ct + 60]
        s.metrics.counter("container_cpu_cfs_periods", "periods", lab, window, lambda t: 10)
        s.metrics.counter("container_cpu_cfs_throttled_periods", "throttled", lab, window,
                          lambda t: 0.05)
        s.metrics.counter("container_cpu_usage_seconds", "cpu", lab, window, lambda t: 1.15)
        s.metrics.gauge("kube_pod_container_resource_limits", "limits",
                        {**lab, "resource": "cpu", "unit": "core"}, window, lambda t: 2.0)
        s.metrics.histogram("http_request_duration_seconds", "latency",
                            {**lab, "handler": "/v2/score"}, window, lambda t: 6.0,
                            lambda t: 0.11, 0.4)
    for p in apods:
        lab = {"namespace": "lending", "pod": p["metadata"]["name"], "container": "api"}
        s.metrics.counter("http_requests", "requests", {**lab, "status": "201"}, ts,
                          lambda t: 2.0 if t < ct else 0.9)
        s.metrics.counter("container_cpu_usage_seconds", "cpu", lab, ts, lambda t: 0.12)
    ing = {"namespace": "ingress-nginx", "pod": ipods[0]["metadata"]["name"], "ingress": "apply",
           "exported_namespace": "lending", "service": "apply-api"}
    s.metrics.counter("nginx_ingress_controller_requests", "requests", {**ing, "status": "201"},
                      ts, lambda t: 8.0 if t < ct else 3.6)
    s.metrics.counter("nginx_ingress_controller_requests", "requests", {**ing, "status": "503"},
                      ts, lambda t: 0.0 if t < ct + 240 else 4.1)
    return s


STORIES = {"credit-union-statements-timing-out": node_cert_expired,
           "lending-apply-503-unready": scorer_throttled}
