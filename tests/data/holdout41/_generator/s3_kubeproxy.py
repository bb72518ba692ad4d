"""Shape 3: the kube-proxy DaemonSet's upgrade reached one node first and crash-loops there
(a config field the new binary rejects); the update stalls at maxUnavailable 1. That node
keeps the iptables rules of four hours ago, so its pods still DNAT eta-predictor's
ClusterIP to pod IPs that no longer exist. Callers on the other nodes are fine."""

from __future__ import annotations

import json

from .fleet import counter, healthy, series
from .kit import (
    Clock,
    Obj,
    Scenario,
    container,
    event,
    namespace,
    node,
    pod,
    running,
    suffix,
    template,
    terminated,
    uid,
)

NOW = "2026-11-27T19:05:00Z"
BROKEN = ("ip-10-8-3-44.ap-southeast-1.compute.internal", "10.8.3.44")


def _daemonset(c: Clock) -> tuple[Obj, Obj]:
    lab = {"k8s-app": "kube-proxy"}
    cmd = [
        "kube-proxy",
        "--config=/var/lib/kube-proxy-config/config",
        "--hostname-override=$(NODE_NAME)",
    ]
    tpl = template(
        lab,
        [
            container(
                "kube-proxy",
                "602401143452.dkr.ecr.ap-southeast-1.amazonaws.com/eks/"
                "kube-proxy:v1.30.6-minimal-eksbuild.3",
                requests={"cpu": "100m"},
                mounts=[{"name": "config", "mountPath": "/var/lib/kube-proxy-config/"}],
            )
        ],
        volumes=[{"name": "config", "configMap": {"name": "kube-proxy-config"}}],
        sa="kube-proxy",
    )
    tpl["spec"]["containers"][0]["command"] = cmd
    tpl["spec"]["hostNetwork"] = True
    tpl["spec"]["priorityClassName"] = "system-node-critical"
    ds = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {
            "name": "kube-proxy",
            "namespace": "kube-system",
            "creationTimestamp": c.ago(610 * 1440),
            "labels": {"k8s-app": "kube-proxy", "eks.amazonaws.com/component": "kube-proxy"},
            "annotations": {"deprecated.daemonset.template.generation": "7"},
            "generation": 7,
            "uid": uid("kube-proxy-ds"),
        },
        "spec": {
            "selector": {"matchLabels": lab},
            "template": tpl,
            "revisionHistoryLimit": 10,
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
            },
        },
        "status": {
            "currentNumberScheduled": 4,
            "desiredNumberScheduled": 4,
            "numberMisscheduled": 0,
            "numberReady": 3,
            "numberAvailable": 3,
            "numberUnavailable": 1,
            "updatedNumberScheduled": 1,
            "observedGeneration": 7,
        },
    }
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "kube-proxy-config",
            "namespace": "kube-system",
            "creationTimestamp": c.ago(610 * 1440),
            "labels": {"eks.amazonaws.com/component": "kube-proxy"},
        },
        "data": {
            "config": "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"
            "bindAddress: 0.0.0.0\nclientConnection:\n  kubeconfig: "
            "/var/lib/kube-proxy/kubeconfig\n"
            'clusterCIDR: ""\nconntrack:\n  maxPerCore: 32768\n  min: 131072\n'
            "  tcpCloseWaitTimeout: 1h0m0s\n  tcpEstablishedTimeout: 24h0m0s\n"
            "iptables:\n  masqueradeAll: false\n  minSyncPeriod: 1s\n  syncPeriod: 30s\n"
            "  localhostNodePorts: true\nmetricsBindAddress: 0.0.0.0:10249\nmode: iptables\n"
            'nodePortAddresses: null\noomScoreAdj: -998\nportRange: ""\n'
            "udpIdleTimeout: 250ms\n"
        },
    }
    return ds, cm


def build() -> Scenario:
    c = Clock(NOW)
    sc = Scenario(
        "eta-calls-flaky",
        "ETA calls from courier-matcher time out intermittently",
        NOW,
        "eta-predictor is flaky: roughly a quarter of ETA calls from courier-matcher time out "
        "since "
        "late afternoon, couriers get 'ETA unavailable'. ML team swears their pods are healthy and "
        "they did redeploy around 15:00. can someone look?\n",
        {
            "category": "crash_loop",
            "culprit": {"kind": "DaemonSet", "namespace": "kube-system", "name": "kube-proxy"},
            "evidence": ["CrashLoopBackOff", "unknown field", BROKEN[0]],
            "fix": "Fix the kube-proxy rollout (drop the field the new binary rejects from "
            "kube-proxy-config "
            "or roll the DaemonSet back) so the proxy on ip-10-8-3-44 runs and resyncs its rules",
        },
    )
    nodes = [
        ("ip-10-8-1-12.ap-southeast-1.compute.internal", "10.8.1.12"),
        ("ip-10-8-2-203.ap-southeast-1.compute.internal", "10.8.2.203"),
        BROKEN,
        ("ip-10-8-1-97.ap-southeast-1.compute.internal", "10.8.1.97"),
    ]
    for ns in ("dispatch", "ml-serving", "kube-system"):
        sc.objects.append(namespace(ns, c.ago(700 * 1440)))
    sc.objects += [
        node(
            n,
            c.ago(60 * 1440),
            c.ago(0.2),
            ip=ip,
            zone="ap-southeast-1" + "abca"[i],
            kubelet="v1.30.4-eks-a737599",
            transition=c.ago(6 * 1440),
        )
        for i, (n, ip) in enumerate(nodes)
    ]
    ds, cm = _daemonset(c)
    sc.objects += [ds, cm]
    old_image = (
        "602401143452.dkr.ecr.ap-southeast-1.amazonaws.com/eks/"
        "kube-proxy:v1.29.10-minimal-eksbuild.2"
    )
    old_tpl = json.loads(json.dumps(ds["spec"]["template"]))
    old_tpl["spec"]["containers"][0]["image"] = old_image
    upgrade = 262  # minutes ago the DaemonSet update began
    for n, ip in nodes:
        pn = f"kube-proxy-{suffix('kp' + n)}"
        if (n, ip) == BROKEN:
            st = {
                "name": "kube-proxy",
                "image": ds["spec"]["template"]["spec"]["containers"][0]["image"],
                "imageID": "",
                "ready": False,
                "started": False,
                "restartCount": 54,
                "state": {
                    "waiting": {
                        "reason": "CrashLoopBackOff",
                        "message": f"back-off 5m0s restarting failed container=kube-proxy "
                        f"pod={pn}_kube-system",
                    }
                },
                "lastState": {"terminated": terminated("Error", 1, c.ago(3.1), c.ago(3.0))},
            }
            p = pod(
                ds,
                ds["spec"]["template"],
                pn,
                node_name=n,
                host_ip=ip,
                ip=ip,
                created=c.ago(upgrade),
                statuses=[st],
            )
            p["metadata"]["labels"]["controller-revision-hash"] = "6d4b8f7c9"
            sc.log(
                "kube-system",
                pn,
                "kube-proxy",
                [
                    f"I1127 {c.at(3.1).strftime('%H:%M:%S')}.201877       1 server_linux.go:69] "
                    f'"Using iptables proxy"',
                    f'E1127 {c.at(3.05).strftime("%H:%M:%S")}.202331       1 run.go:72] "command '
                    f'failed" err="failed '
                    "to load kube-proxy config: error decoding KubeProxyConfiguration: strict "
                    "decoding error: unknown "
                    'field \\"iptables.localhostNodePorts\\"; use \\"nodePortAddresses\\" instead"',
                ],
                previous=True,
            )
            sc.objects.append(
                event(
                    "kube-system",
                    "Pod",
                    pn,
                    "BackOff",
                    "Back-off restarting failed container "
                    f"kube-proxy in pod {pn}_kube-system({p['metadata']['uid']})",
                    first=c.ago(59),
                    last=c.ago(2),
                    count=14,
                    type_="Warning",
                    host=n,
                )
            )
        else:
            p = pod(
                ds,
                old_tpl,
                pn,
                node_name=n,
                host_ip=ip,
                ip=ip,
                created=c.ago(6 * 1440 + 200),
                statuses=[running("kube-proxy", old_image, c.ago(6 * 1440 + 200 - 1))],
            )
            p["metadata"]["labels"]["controller-revision-hash"] = "85c9d7f6b4"
            sc.log(
                "kube-system",
                pn,
                "kube-proxy",
                [
                    f"I1127 {c.at(m).strftime('%H:%M:%S')}.{400 + m:06d}       1 proxier.go:805] "
                    f'"SyncProxyRules complete" '
                    f'elapsed="{90 + m % 40}ms"'
                    for m in range(30, 0, -3)
                ],
            )
        sc.objects.append(p)
        series(
            sc,
            c,
            "kubeproxy_sync_proxy_rules_last_timestamp_seconds",
            "gauge",
            "last sync",
            {"instance": f"{ip}:10249", "job": "kube-proxy", "node": n},
            (lambda m: float(c.unix(m + 0.3)))
            if (n, ip) != BROKEN
            else (lambda m: float(c.unix(m + 0.3)) if m > upgrade else None),
            start_min=360,
            step_min=2,
        )
    # eta-predictor: redeployed at 15:00 -> new pod IPs; the broken node still
    # points at the old ones
    eta = healthy(
        sc,
        c,
        "ml-serving",
        "eta-predictor",
        "ghcr.io/orbitly/eta-predictor:2026.11.27-1",
        replicas=3,
        nodes=nodes[:2] + nodes[3:],
        port=8000,
        revision=41,
        rollout_hours=4.1,
        cluster_ip="172.20.88.14",
        ip_base="10.8.9",
        requests={"cpu": "1", "memory": "2Gi"},
        limits={"memory": "3Gi"},
        probe="/v1/health",
    )
    matcher = healthy(
        sc,
        c,
        "dispatch",
        "courier-matcher",
        "ghcr.io/orbitly/courier-matcher:1.44.2",
        replicas=4,
        nodes=nodes,
        port=8080,
        cluster_ip="172.20.31.5",
        ip_base="10.8.4",
        requests={"cpu": "300m", "memory": "256Mi"},
        limits={"memory": "512Mi"},
    )
    healthy(
        sc,
        c,
        "dispatch",
        "order-feed",
        "ghcr.io/orbitly/order-feed:3.2.0",
        replicas=2,
        nodes=nodes[:2],
        cluster_ip="172.20.31.40",
        ip_base="10.8.5",
    )
    healthy(
        sc,
        c,
        "ml-serving",
        "surge-model",
        "ghcr.io/orbitly/surge-model:0.19.3",
        replicas=2,
        nodes=[nodes[0], nodes[3]],
        port=8000,
        cluster_ip="172.20.88.60",
        ip_base="10.8.10",
        probe="/v1/health",
    )
    sc.objects.append(
        event(
            "ml-serving",
            "Pod",
            eta.names[1],
            "Unhealthy",
            "Readiness probe failed: Get "
            '"http://10.8.9.27:8000/v1/health": context deadline exceeded',
            first=c.ago(33),
            last=c.ago(33),
            type_="Warning",
            host=nodes[1][0],
        )
    )
    old_ips = ["10.8.9.141", "10.8.9.152", "10.8.9.163"]
    for i, pn in enumerate(matcher.names):
        on_broken = matcher.pods[i]["spec"]["nodeName"] == BROKEN[0]
        lines = []
        for k in range(60):
            m = 60 - k
            if on_broken and k % 3 != 2:
                lines.append(
                    f'time={c.ms(m)} level=error msg="eta request failed" '
                    f"courier_zone=SG-{14 + k % 9} "
                    'err="Post \\"http://eta-predictor.ml-serving.svc.cluster.local/v1/eta\\": '
                    "dial tcp "
                    '172.20.88.14:80: i/o timeout" attempt=1'
                )
                sc.doc(
                    c.ms(m),
                    "error",
                    "courier-matcher",
                    "dispatch",
                    pn,
                    "app",
                    "eta request failed: Post "
                    '"http://eta-predictor.ml-serving.svc.cluster.local/v1/eta": dial tcp '
                    "172.20.88.14:80: i/o timeout",
                    **{"error.type": "net.OpError", "host.name": BROKEN[0]},
                )
            else:
                lines.append(
                    f'time={c.ms(m)} level=info msg="match computed" courier_zone=SG-{14 + k % 9} '
                    f"candidates={3 + k % 5} eta_ms={40 + k % 17}"
                )
                sc.doc(
                    c.ms(m),
                    "info",
                    "courier-matcher",
                    "dispatch",
                    pn,
                    "app",
                    "match computed",
                    **{"host.name": matcher.pods[i]["spec"]["nodeName"]},
                )
        sc.log("dispatch", pn, "app", lines)
        ok = counter(lambda m, b=on_broken: 0.0 if b and m < 240 else 11.0, 360, 1, pn + "ok")
        bad = counter(lambda m, b=on_broken: 8.0 if b and m < 240 else 0.0, 360, 1, pn + "bad")
        for code, fn in (("200", ok), ("timeout", bad)):
            series(
                sc,
                c,
                "eta_client_requests",
                "counter",
                "calls to eta-predictor",
                {"namespace": "dispatch", "pod": pn, "outcome": code},
                fn,
                start_min=360,
                step_min=2,
                sample="eta_client_requests_total",
            )
    for pn in eta.names:
        sc.log(
            "ml-serving",
            pn,
            "app",
            [
                f"{c.ms(m)} INFO uvicorn.access 10.8.{4}.{20 + (m % 3) * 7}:0 - "
                f'"POST /v1/eta HTTP/1.1" 200'
                for m in range(40, 0, -2)
            ],
        )
    for ip in old_ips:
        sc.doc(
            c.ms(250),
            "info",
            "eta-predictor",
            "ml-serving",
            f"eta-predictor-old-{ip.split('.')[-1]}",
            "app",
            f"shutting down: SIGTERM received, pod ip {ip}",
        )
    return sc
