"""network: a Local-policy LoadBalancer Service whose pods sit on 2 of 6 nodes."""

from __future__ import annotations

import random
from pathlib import Path

from . import _kit as k

SID = "collector-lb-local-policy"
NOW = "2026-04-02T11:30:00Z"
LB = "k8s-ingest-collecto-5f2c9a1e07-4b1d93a2c6e8f7a1.elb.eu-central-1.amazonaws.com"


def build(root: Path) -> None:
    c = k.Clock(NOW)
    old = c.s(days=300)
    zones = ["eu-central-1a", "eu-central-1b", "eu-central-1c"]
    nodes = [f"ip-10-60-{10 + i}-{21 + 9 * i}.eu-central-1.compute.internal" for i in range(6)]
    objs = [k.namespace(n, old) for n in ("ingest", "observability", "reports", "kube-system")]
    for i, n in enumerate(nodes):
        objs.append(k.node(n, c.s(hours=20, minutes=30 - 3 * i),
                           {"eks.amazonaws.com/nodegroup": "workers-m6i-v2",
                            "topology.kubernetes.io/zone": zones[i % 3]}, cpu="4", mem="16Gi",
                           ip=f"10.60.{10 + i}.{21 + 9 * i}"))
    svc = k.service("ingest", "collector-public", c.s(days=210), {"app": "collector"}, 443, 8443,
                    "172.20.88.41", type="LoadBalancer", externalTrafficPolicy="Local",
                    healthCheckNodePort=31822, internalTrafficPolicy="Cluster",
                    allocateLoadBalancerNodePorts=True)
    svc["spec"]["ports"][0].update({"name": "https", "nodePort": 30443})
    svc["metadata"]["annotations"] = {
        "service.beta.kubernetes.io/aws-load-balancer-type": "nlb",
        "service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing",
        "service.beta.kubernetes.io/aws-load-balancer-cross-zone-load-balancing-enabled":
            "false"}
    svc["status"] = {"loadBalancer": {"ingress": [{"hostname": LB}]}}
    objs.append(svc)
    _, _, pods = k.simple_app(objs, "ingest", "collector", c.s(days=210), 3,
                                 "registry.tallyho.io/collector:5.11.2", [nodes[0], nodes[0],
                                                                          nodes[4]],
                                 "10.60.10", c.s(hours=20, minutes=5), revision=33,
                                 cpu_req="500m", cpu_lim="2", mem_lim="1Gi", ports=[8443],
                                 probe="/livez")
    pips = [("10.60.10.30", pods[0]), ("10.60.10.31", pods[1]), ("10.60.14.44", pods[2])]
    for ip, p in pips:
        p["status"]["podIP"] = ip
    objs.append(k.endpoints(svc, c.s(days=210), [(ip, p["metadata"]["name"],
                                                  p["spec"]["nodeName"]) for ip, p in pips]))
    objs.append(k.event(svc, "EnsuringLoadBalancer", "Ensuring load balancer", c.s(minutes=48),
                        c.s(minutes=12), count=4, component="service-controller"))
    objs.append(k.event(svc, "UpdatedLoadBalancer", "Updated load balancer with new hosts",
                        c.s(minutes=48), c.s(minutes=12), count=4,
                        component="service-controller"))
    k.simple_app(objs, "ingest", "enricher", c.s(days=210), 2,
                 "registry.tallyho.io/enricher:2.3.0", nodes[1:], "10.60.11",
                 c.s(hours=20), revision=18)
    _, _, prober = k.simple_app(objs, "observability", "edge-prober", old, 1,
                                "quay.io/prometheus/blackbox-exporter:v0.25.0", nodes[4:],
                                "10.60.14", c.s(hours=19, minutes=58), revision=3)
    _, _, cd = k.simple_app(objs, "kube-system", "coredns", old, 2,
                            "602401143452.dkr.ecr.eu-central-1.amazonaws.com/eks/coredns:"
                            "v1.11.1-eksbuild.9", nodes[1:3], "10.60.12",
                            c.s(hours=20, minutes=2), revision=5)
    cd[1]["status"]["containerStatuses"][0]["restartCount"] = 1
    cd[1]["status"]["containerStatuses"][0]["lastState"] = {"terminated": {
        "exitCode": 0, "reason": "Completed", "startedAt": c.s(hours=20, minutes=2),
        "finishedAt": c.s(hours=19, minutes=40)}}
    jtmpl = k.template({"job-name": "monthly-rollup-29061840"}, [k.container(
        "rollup", "registry.tallyho.io/rollup:0.9.4", cpu_req="3", mem_req="24Gi")],
        restartPolicy="Never")
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": k.meta("Job", "monthly-rollup-29061840", "reports", c.s(minutes=50)),
           "spec": {"backoffLimit": 0, "completions": 1, "parallelism": 1, "template": jtmpl},
           "status": {"active": 1, "startTime": c.s(minutes=50)}}
    msg = ("0/6 nodes are available: 6 Insufficient memory. preemption: 0/6 nodes are "
           "available: 6 No preemption victims found for incoming pod.")
    jp = k.pod(job, "monthly-rollup-29061840-q8v2n", jtmpl, None, c.s(minutes=50),
               phase="Pending", pending_msg=msg)
    objs += [job, jp, k.event(jp, "FailedScheduling", msg, c.s(minutes=50), c.s(minutes=5),
                              count=11, etype="Warning", component="default-scheduler")]

    rnd = random.Random(503)
    logs = []
    has = {nodes[0], nodes[4]}
    for m in range(0, 180):
        t = c.ago(minutes=180 - m)
        for i, n in enumerate(nodes):
            if n not in has and m % 5 == i % 5:
                logs.append(k.log(t, "aws-load-balancer-controller", "kube-system",
                                  "aws-load-balancer-controller-7d9f8b6c54-2hxkq",
                                  f"target health: tg=k8s-ingest-collecto-5f2c9a1e07 "
                                  f"target={n}:30443 state=unhealthy "
                                  f"reason=Target.FailedHealthChecks "
                                  f"check=HTTP:31822/healthz code=503", level="warn"))
        if rnd.random() < 0.35:
            logs.append(k.log(t, "edge-prober", "observability", prober[0]["metadata"]["name"],
                              f"probe https://ingest.tallyho.io/v1/events failed: "
                              f"dial tcp 3.7{rnd.randint(0, 9)}.{rnd.randint(10, 250)}.12:443: "
                              f"i/o timeout after 10s", level="error",
                              container_name="edge-prober"))
        for p in pods:
            if rnd.random() < 0.5:
                logs.append(k.log(t, "collector", "ingest", p["metadata"]["name"],
                                  f"batch accepted events={rnd.randint(200, 900)} "
                                  f"p99={rnd.randint(8, 25)}ms", container_name="collector"))
    logs.append(k.log(c.ago(minutes=20), "kube-proxy", "kube-system", "kube-proxy-6q2vd",
                      'healthcheck for service "ingest/collector-public" on :31822: '
                      '{"service":{"namespace":"ingest","name":"collector-public"},'
                      '"localEndpoints":0,"serviceProxyHealthy":true}', level="info",
                      container_name="kube-proxy"))
    logs.append(k.log(c.ago(hours=20, minutes=40), "eksctl", "kube-system", "nodegroup-rotate",
                      "replaced nodegroup workers-m6i with workers-m6i-v2 (6 nodes), "
                      "drained 6 old nodes", container_name="rotate"))

    mx = k.Metrics()
    ts = k.steps(c, 3)
    lb = "net/k8s-ingest-collecto-5f2c9a1e07/4b1d93a2c6e8f7a1"
    for z, healthy in ((zones[0], 1), (zones[1], 1), (zones[2], 0)):
        total = 2
        for name, v in (("aws_networkelb_healthy_host_count_average", healthy),
                        ("aws_networkelb_un_healthy_host_count_average", total - healthy)):
            mx.add(name, "gauge", "CloudWatch metric AWS/NetworkELB via cloudwatch_exporter",
                   name, {"load_balancer": lb, "availability_zone": z},
                   [(t, float(v)) for t in ts[::5]])
    pts = [(t, float(rnd.random() > 0.33)) for t in ts]
    if pts:
        mx.add("probe_success", "gauge", "Displays whether or not the probe was a success",
                   "probe_success", {"instance": "https://ingest.tallyho.io/v1/events",
                                     "job": "edge-prober"}, pts)
    for p in pods:
        v = 4.0e6
        pts = []
        for t in ts:
            v += rnd.randint(300, 500) * 60
            pts.append((t, float(int(v))))
        mx.add("http_requests", "counter", "HTTP requests.", "http_requests_total",
               {"namespace": "ingest", "pod": p["metadata"]["name"], "code": "202"}, pts)
    sc = {"id": SID, "title": "Event ingestion times out intermittently", "now": NOW,
          "report": "customers report that event ingestion to ingest.tallyho.io times out "
                    "every few requests since yesterday. collector pods are all green and "
                    "fast. we rotated the worker nodegroup yesterday, maybe the new AMI "
                    "has a network issue?\n",
          "truth": {"category": "network",
                    "culprit": {"kind": "Service", "namespace": "ingest",
                                "name": "collector-public"},
                    "evidence": ["externalTrafficPolicy: Local", "localEndpoints", "31822",
                                 "Target.FailedHealthChecks"],
                    "fix": "Set externalTrafficPolicy: Cluster on collector-public (or spread "
                           "collector pods to every node/zone with topologySpreadConstraints "
                           "and enable cross-zone load balancing)"}}
    k.write(root, SID, sc, objs, logs, mx)
