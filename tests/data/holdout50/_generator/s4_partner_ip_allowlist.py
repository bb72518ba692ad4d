"""dependency_failure: a NAT gateway replacement changed the egress IP a partner allowlists."""

from __future__ import annotations

import random
from pathlib import Path

from . import _kit as k

SID = "payout-partner-ip-allowlist"
NOW = "2026-05-20T16:10:00Z"
OLD_IP = "203.0.113.24"
NEW_IP = "198.51.100.77"


def build(root: Path) -> None:
    c = k.Clock(NOW)
    old = c.s(days=400)
    nodes = [f"gke-prod-pool-2-{h}" for h in ("8f1c2a7d-5x0q", "8f1c2a7d-n3k7", "3b9e6f01-tq2c")]
    objs = [k.namespace(n, old) for n in ("payments", "ledger", "infra")]
    objs += [k.node(n, c.s(days=30), {"cloud.google.com/gke-nodepool": "pool-2"},
                    ip=f"10.128.0.{31 + i}") for i, n in enumerate(nodes)]
    env = {"PARTNER_BASE_URL": "https://api.northwind-clearing.example/v2",
           "PARTNER_TIMEOUT": "10s", "PAYOUT_BATCH": "50"}
    _, _, pods = k.simple_app(objs, "payments", "payout-service", c.s(days=300), 3,
                                 "europe-docker.pkg.dev/kestrel-pay/app/payout-service:4.2.7",
                                 nodes, "10.52.1", c.s(days=3, hours=2), revision=41,
                                 cpu_lim="1", mem_lim="768Mi", env=env, ports=[8080],
                                 probe="/healthz")
    ldep, lrs, lpods = k.simple_app(objs, "ledger", "ledger-api", c.s(days=300), 2,
                                    "europe-docker.pkg.dev/kestrel-pay/app/ledger-api:9.0.3",
                                    nodes, "10.52.2", c.s(minutes=47), revision=88,
                                    ports=[8080], probe="/healthz")
    objs.append(k.event(ldep, "ScalingReplicaSet", f"Scaled up replica set "
                        f"{lrs['metadata']['name']} to 2", c.s(minutes=48), c.s(minutes=48),
                        component="deployment-controller"))
    np_ = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
           "metadata": k.meta("NetworkPolicy", "payments-egress", "payments", c.s(days=2),
                              generation=3),
           "spec": {"podSelector": {"matchLabels": {"app": "payout-service"}},
                    "policyTypes": ["Egress"],
                    "egress": [
                        {"ports": [{"port": 53, "protocol": "UDP"},
                                   {"port": 53, "protocol": "TCP"}]},
                        {"to": [{"ipBlock": {"cidr": "0.0.0.0/0",
                                             "except": ["10.0.0.0/8"]}}],
                         "ports": [{"port": 443, "protocol": "TCP"}]},
                        {"to": [{"namespaceSelector": {"matchLabels": {
                            "kubernetes.io/metadata.name": "ledger"}}}]}]}}
    objs.append(np_)
    cj_t = k.template({"app": "egress-ip-check"}, [k.container(
        "check", "curlimages/curl:8.7.1", cpu_req="10m", mem_req="16Mi")],
        restartPolicy="OnFailure")
    cj = {"apiVersion": "batch/v1", "kind": "CronJob",
          "metadata": k.meta("CronJob", "egress-ip-check", "infra", c.s(days=200)),
          "spec": {"schedule": "*/30 * * * *", "concurrencyPolicy": "Forbid",
                   "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1,
                   "jobTemplate": {"spec": {"template": cj_t}}},
          "status": {"lastScheduleTime": c.s(minutes=10),
                     "lastSuccessfulTime": c.s(minutes=9)}}
    objs.append(cj)
    svc = k.service("payments", "payout-service", old, {"app": "payout-service"}, 80, 8080,
                    "10.56.12.7")
    objs += [svc, k.endpoints(svc, old, [(f"10.52.1.{10 + i}", p["metadata"]["name"],
                                          p["spec"]["nodeName"]) for i, p in enumerate(pods)])]

    rnd = random.Random(504)
    change = c.ago(hours=2, minutes=8)
    logs = []
    for m in range(0, 180):
        t = c.ago(minutes=180 - m)
        after = t >= change
        for p in pods:
            if rnd.random() < 0.5:
                continue
            pn = p["metadata"]["name"]
            pid = f"po_{rnd.randint(10**7, 10**8)}"
            if not after:
                logs.append(k.log(t, "payout-service", "payments", pn,
                                  f"partner POST /v2/payouts payout={pid} status=201 "
                                  f"latency_ms={rnd.randint(180, 420)}"))
            elif rnd.random() < 0.55:
                logs.append(k.log(t, "payout-service", "payments", pn,
                                  f'partner POST /v2/payouts payout={pid} status=403 body='
                                  f'{{"error":"ip_not_allowed","message":"source address '
                                  f'{NEW_IP} is not on the allowlist for client kestrel-pay"}}',
                                  level="error", **{"http.response.status_code": 403,
                                                    "error.type": "PartnerForbidden"}))
            else:
                logs.append(k.log(t, "payout-service", "payments", pn,
                                  f"partner POST /v2/payouts payout={pid} failed: Post "
                                  f'"https://api.northwind-clearing.example/v2/payouts": read '
                                  f"tcp 10.52.1.1{rnd.randint(0, 2)}:{rnd.randint(40000, 60000)}"
                                  f"->192.0.2.40:443: read: connection reset by peer; "
                                  f"will retry in 30s", level="error",
                                  **{"error.type": "ECONNRESET"}))
        if m % 30 == 20:
            ip = NEW_IP if after else OLD_IP
            msg = f"egress ip {ip}"
            if after and (t - change).total_seconds() < 1800:
                msg = f"egress ip changed: {OLD_IP} -> {NEW_IP} (nat gateway prod-egress-nat-2)"
            logs.append(k.log(t, "egress-ip-check", "infra", f"egress-ip-check-{29100000 + m}"
                              "-bx7pq", msg, level="warn" if "changed" in msg else "info",
                              container_name="check"))
        if m % 7 == 0:
            logs.append(k.log(t, "ledger-api", "ledger", lpods[m % 2]["metadata"]["name"],
                              "slow query 612ms: SELECT … FROM entries WHERE account_id=$1",
                              level="warn", container_name="ledger-api"))
    logs.append(k.log(change - k.timedelta(minutes=3), "terraform-runner", "infra",
                      "atlantis-0", "module.egress.google_compute_router_nat.prod: "
                      "Destruction complete; Creation complete after 41s "
                      "[id=prod-egress-nat-2] nat_ips=[198.51.100.77]", container_name="atlantis"))

    mx = k.Metrics()
    ts = k.steps(c, 3)
    vals = {"201": 91000.0, "403": 12.0, "error": 40.0}
    series: dict[str, list[tuple[int, float]]] = {x: [] for x in vals}
    for t in ts:
        after = t >= change.timestamp()
        rates = {"201": 0.2 if after else 5.8, "403": 3.1 if after else 0.0,
                 "error": 2.4 if after else 0.01}
        for code, r in rates.items():
            vals[code] += r * 60
            series[code].append((t, float(int(vals[code]))))
    for code, pts in series.items():
        mx.add("http_client_requests", "counter", "Outbound HTTP requests by peer and status.",
               "http_client_requests_total", {"namespace": "payments", "service": "payout-service",
                                              "peer": "api.northwind-clearing.example",
                                              "code": code}, pts)
    q = [(t, float(40 + (0 if t < change.timestamp() else (t - change.timestamp()) / 12)))
         for t in ts]
    mx.add("payout_queue_depth", "gauge", "Payouts waiting to be sent to the partner.",
           "payout_queue_depth", {"namespace": "payments", "service": "payout-service"}, q)
    for p in pods:
        mx.add("container_cpu_usage_seconds", "counter", "Cumulative cpu time consumed.",
               "container_cpu_usage_seconds_total", {"namespace": "payments",
                                                     "pod": p["metadata"]["name"],
                                                     "container": "payout-service"},
               [(t, round(8000.0 + (t - ts[0]) * 0.12, 2)) for t in ts])
    sc = {"id": SID, "title": "Payouts to Northwind failing", "now": NOW,
          "report": "payouts to northwind-clearing fail since ~2pm, queue is growing. "
                    "someone tightened the payments egress NetworkPolicy this week, can you "
                    "check if it's blocking the partner?\n",
          "truth": {"category": "dependency_failure",
                    "culprit": {"kind": "Deployment", "namespace": "payments",
                                "name": "payout-service"},
                    "evidence": ["ip_not_allowed", NEW_IP, "connection reset by peer",
                                 "egress ip changed"],
                    "fix": f"Ask Northwind to allowlist {NEW_IP} (or restore the reserved "
                           f"NAT IP {OLD_IP} on the new NAT gateway)"}}
    k.write(root, SID, sc, objs, logs, mx)
