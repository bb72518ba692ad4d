"""unschedulable: a node pool with a low max-pods limit is full; CPU and memory are free."""

from __future__ import annotations

import random
from pathlib import Path

from . import _kit as k

SID = "cart-scaleout-too-many-pods"
NOW = "2026-08-28T18:40:00Z"
MSG = ("0/3 nodes are available: 3 Too many pods. preemption: 0/3 nodes are available: "
       "3 No preemption victims found for incoming pod.")


def build(root: Path) -> None:
    c = k.Clock(NOW)
    old = c.s(days=260)
    nodes = [f"aks-shop-24871{i}-vmss00000{i}" for i in range(3)]
    objs = [k.namespace(n, old) for n in ("checkout", "storefront", "kube-system")]
    objs += [k.node(n, c.s(days=15), {"kubernetes.azure.com/agentpool": "shop",
                                      "kubernetes.azure.com/network-subnet": "snet-shop-27"},
                    cpu="8", mem="32Gi", pods="11", ip=f"10.30.8.{4 + i}")
             for i, n in enumerate(nodes)]
    for ds, img in (("azure-cns", "mcr.microsoft.com/containernetworking/azure-cns:v1.5.32"),
                    ("kube-proxy", "mcr.microsoft.com/oss/kubernetes/kube-proxy:v1.29.7"),
                    ("csi-azuredisk-node", "mcr.microsoft.com/oss/kubernetes-csi/"
                                           "azuredisk-csi:v1.30.3"),
                    ("ama-logs", "mcr.microsoft.com/azuremonitor/containerinsights/"
                                 "ciprod:3.1.22")):
        tmpl = k.template({"k8s-app": ds}, [k.container(ds, img, cpu_req="20m",
                                                        mem_req="64Mi")])
        d = {"apiVersion": "apps/v1", "kind": "DaemonSet",
             "metadata": k.meta("DaemonSet", ds, "kube-system", old, labels={"k8s-app": ds}),
             "spec": {"selector": {"matchLabels": {"k8s-app": ds}}, "template": tmpl},
             "status": {"currentNumberScheduled": 3, "desiredNumberScheduled": 3,
                        "numberAvailable": 3, "numberReady": 3, "updatedNumberScheduled": 3,
                        "numberMisscheduled": 0, "observedGeneration": 1}}
        objs.append(d)
        for i, n in enumerate(nodes):
            objs.append(k.pod(d, f"{ds}-{k.phash(ds, n, 1)[:5]}", tmpl, n, c.s(days=6),
                              ip=f"10.30.8.{4 + i}"))
    # 11 pods per node: 4 daemons + 7 workload pods on each node
    _, _, sfp = k.simple_app(objs, "storefront", "storefront-web", old, 6,
                              "shopacr.azurecr.io/storefront-web:31.2.0", nodes, "10.30.9",
                              c.s(days=2), revision=140, cpu_req="250m", mem_req="512Mi",
                              ports=[3000], probe="/health")
    k.simple_app(objs, "storefront", "search-suggest", old, 3,
                 "shopacr.azurecr.io/search-suggest:4.0.2", nodes, "10.30.10", c.s(days=5),
                 revision=22, cpu_req="100m", mem_req="256Mi")
    pay, pay_rs, _ = k.simple_app(objs, "checkout", "payments-gw", old, 3,
                                  "shopacr.azurecr.io/payments-gw:6.6.1", nodes, "10.30.11",
                                  c.s(minutes=38), revision=77, cpu_req="200m", mem_req="256Mi")
    objs.append(k.event(pay, "ScalingReplicaSet", f"Scaled up replica set "
                        f"{pay_rs['metadata']['name']} to 3", c.s(minutes=39), c.s(minutes=38),
                        component="deployment-controller"))
    k.simple_app(objs, "kube-system", "coredns", old, 2,
                 "mcr.microsoft.com/oss/kubernetes/coredns:v1.9.4", nodes, "10.30.12",
                 c.s(days=6), revision=3, cpu_req="100m", mem_req="70Mi")
    ctr = k.container("cart", "shopacr.azurecr.io/cart:12.4.0", cpu_req="250m", mem_req="512Mi",
                      cpu_lim="1", mem_lim="1Gi", ports=[8080], probe="/ready")
    tmpl = k.template({"app": "cart"}, [ctr])
    dep = k.deployment("checkout", "cart", c.s(days=240), 12, tmpl, 19, ready=7,
                       updated=c.s(minutes=25))
    dep["spec"]["replicas"] = 12
    dep["status"]["conditions"][1].update({"reason": "ReplicaSetUpdated", "message":
                                           f'ReplicaSet "cart-{k.phash("checkout", "cart", 19)}" '
                                           "is progressing."})
    rs = k.replicaset(dep, 19, c.s(days=9), 12, tmpl, ready=7)
    objs += [dep, rs]
    objs.append(k.event(dep, "ScalingReplicaSet", f"Scaled up replica set "
                        f"{rs['metadata']['name']} to 12 from 6", c.s(minutes=25),
                        c.s(minutes=25), component="deployment-controller"))
    t = rs["spec"]["template"]
    placed = 0
    for i in range(12):
        pn = f"{rs['metadata']['name']}-{k.phash('cart', str(i), 19)[:5]}"
        if i < 7:
            n = nodes[i % 3] if i < 6 else nodes[2]
            started = c.s(days=4) if i < 6 else c.s(minutes=25)
            objs.append(k.pod(rs, pn, t, n, started, ip=f"10.30.13.{10 + i}"))
            placed += 1
        else:
            p = k.pod(rs, pn, t, None, c.s(minutes=25), phase="Pending", pending_msg=MSG)
            objs.append(p)
            objs.append(k.event(p, "FailedScheduling", MSG, c.s(minutes=25), c.s(minutes=1),
                                count=14, etype="Warning", component="default-scheduler"))
    objs.append(k.event(objs[5], "FreeDiskSpaceFailed", "Failed to garbage collect required "
                        "amount of images. Attempted to free 1243365376 bytes, but only found "
                        "0 bytes eligible to free.", c.s(minutes=45), c.s(minutes=15), count=3,
                        etype="Warning", host=nodes[2]))

    rnd = random.Random(507)
    logs = []
    for m in range(0, 160):
        tt = c.ago(minutes=160 - m)
        if rnd.random() < 0.6:
            logs.append(k.log(tt, "cart", "checkout", f"{rs['metadata']['name']}-"
                              f"{k.phash('cart', str(m % 6), 19)[:5]}",
                              "PUT /v1/cart/items 200 "
                              f"{rnd.randint(40, 90 + max(0, m - 120) * 9)}ms"))
        if m % 11 == 0:
            logs.append(k.log(tt, "cart", "checkout", f"{rs['metadata']['name']}-"
                              f"{k.phash('cart', str(m % 6), 19)[:5]}",
                              "redis GET latency 48ms above 25ms budget", level="warn"))
        if m > 130 and rnd.random() < 0.5:
            logs.append(k.log(tt, "storefront-web", "storefront", sfp[m % 6]["metadata"]["name"],
                              "cart service slow: PUT /v1/cart/items took 2310ms (flash sale "
                              "traffic)", level="warn"))

    mx = k.Metrics()
    ts = k.steps(c, 2)
    for i, n in enumerate(nodes):
        for res, unit, v in (("pods", "integer", 11.0), ("cpu", "core", 8.0)):
            mx.add("kube_node_status_allocatable", "gauge", "The allocatable for different "
                   "resources of a node.", "kube_node_status_allocatable",
                   {"node": n, "resource": res, "unit": unit}, [(t, v) for t in ts[::5]])
        mx.add("kubelet_running_pods", "gauge", "Number of pods that have a running pod sandbox",
               "kubelet_running_pods", {"node": n},
               [(t, 11.0 if t > ts[-1] - 1500 or i < 2 else 10.0) for t in ts])
        mx.add("instance:node_cpu_utilisation:rate5m", "gauge",
               "Fraction of CPU in use (recording rule).",
               "instance:node_cpu_utilisation:rate5m", {"instance": n},
               [(t, round(0.18 + rnd.random() * 0.06, 3)) for t in ts])
    pend = [(t, 5.0 if t > ts[-1] - 1500 else 0.0) for t in ts]
    mx.add("kube_pod_status_phase", "gauge", "The pods current phase.", "kube_pod_status_phase",
           {"namespace": "checkout", "phase": "Pending"}, pend)
    sc = {"id": SID, "title": "Cart scale-out stuck, half the pods Pending", "now": NOW,
          "report": "flash sale started, we scaled cart from 6 to 12 but 5 pods are stuck "
                    "Pending for 20+ min. the nodes are like 20% CPU, there is tons of room. "
                    "is the scheduler broken? payments-gw also deployed right before.\n",
          "truth": {"category": "unschedulable",
                    "culprit": {"kind": "Deployment", "namespace": "checkout", "name": "cart"},
                    "evidence": ["Too many pods", "pods: \"11\"", "0/3 nodes are available"],
                    "fix": "Add nodes or a new node pool with a larger subnet / higher maxPods "
                           "(the shop pool's max-pods is 11 per node) and move cart there"}}
    k.write(root, SID, sc, objs, logs, mx)
