"""One node's clock runs 17 minutes fast (NTP stopped); tokens and signatures fail there only."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from ._kit import (
    CState,
    Pod,
    PState,
    Story,
    ctr,
    daemonset,
    deployment,
    event,
    fix_host_ips,
    http_probe,
    iso,
    namespace,
    node,
    platform,
    service,
)

SID = "random-401s-after-token-release"
NOW = "2026-12-02T10:30:00Z"
BAD = "ip-10-0-21-87.eu-west-1.compute.internal"
SKEW_S = 1012.0  # seconds the bad node is ahead, at now - 60m
DRIFT_PER_MIN = 0.45  # and it keeps running away


def _skew(minutes_ago: float) -> float:
    return SKEW_S + (60 - minutes_ago) * DRIFT_PER_MIN


def build(root: Path) -> None:
    st = Story(SID, NOW, 5104)
    zones = ["eu-west-1a", "eu-west-1b", "eu-west-1c"]
    nodes = [f"ip-10-0-{a}-{b}.eu-west-1.compute.internal"
             for a, b in [(3, 66), (21, 87), (36, 140), (7, 203), (19, 12), (44, 95)]]
    assert BAD in nodes
    for i, n in enumerate(nodes):
        extra = [{"type": "NTPProblem", "status": "True" if n == BAD else "False",
                  "lastHeartbeatTime": st.ts(0.4),
                  "lastTransitionTime": st.ts(3 * 1440 + 250 if n == BAD else 9 * 1440),
                  "reason": "NTPIsDown" if n == BAD else "NTPIsUp",
                  "message": "NTP service is not running" if n == BAD
                  else "NTP service is running"},
                 {"type": "KernelDeadlock", "status": "False", "lastHeartbeatTime": st.ts(0.4),
                  "lastTransitionTime": st.ts(9 * 1440), "reason": "KernelHasNoDeadlock",
                  "message": "kernel has no deadlock"}]
        st.add(node(st, n, zone=zones[i % 3], itype="c6i.2xlarge", cpu="8", mem="15470Mi",
                    age_days=9 + i, extra_conditions=extra))
    platform(st, nodes)
    for ns in ("auth", "api", "orders", "ci", "node-problem-detector"):
        st.add(namespace(st, ns))

    def app_time(pod: Pod, minutes_ago: float) -> str:
        t = st.at(minutes_ago)
        if pod.node == BAD:
            t += timedelta(seconds=_skew(minutes_ago))
        return iso(t)

    def chatter(pods: list[Pod], make: Callable[[random.Random, Pod, float], tuple[str, str]],
                every_s: float) -> None:
        for p in pods:
            t = st.at(60) + timedelta(seconds=st.rng.uniform(0, every_s))
            while t < st.now:
                m = (st.now - t).total_seconds() / 60
                level, msg = make(st.rng, p, m)
                st.log(t, p, level, f'time="{app_time(p, m)}" level={level} {msg}')
                t += timedelta(seconds=every_s * st.rng.uniform(0.6, 1.4))

    # token-service: 3.8.0 rolled out last night, one replica sits on the fast node
    tok = deployment(st, "auth", "token-service",
                     [ctr("token-service", "ghcr.io/example/token-service:3.8.0", cpu="250m",
                          mem="256Mi", readiness=http_probe("/ready"))],
                     [nodes[0], BAD, nodes[2]], age_days=500, revision=52, rollout_min=11 * 60)
    service(st, "auth", "token-service", {"app.kubernetes.io/name": "token-service"}, 80,
            8080, pods=tok.pods)
    bad_tok = next(p for p in tok.pods if p.node == BAD)

    def tok_line(r: random.Random, p: Pod, m: float) -> tuple[str, str]:
        return "info", (f'msg="issued access token" sub=user:{r.randint(10000, 99999)} '
                        f'kid=k-2026-11 iat={app_time(p, m)} ttl=900s client=web')

    chatter(tok.pods, tok_line, 45)

    # gateway: validates tokens; rejects any token on the fast node (expired to its clock)
    # and tokens issued by the fast node's token-service elsewhere (issued in the future)
    gw = deployment(st, "api", "gateway",
                    [ctr("gateway", "ghcr.io/example/gateway:9.1.4", cpu="500m", mem="384Mi",
                         readiness=http_probe("/ready"))],
                    [BAD, nodes[2], nodes[3], nodes[4]], age_days=800, revision=203,
                    rollout_min=4 * 1440)
    service(st, "api", "gateway", {"app.kubernetes.io/name": "gateway"}, 80, 8080, pods=gw.pods)

    def gw_line(r: random.Random, p: Pod, m: float) -> tuple[str, str]:
        path = r.choice(["/v2/cart", "/v2/orders", "/v2/me", "/v2/products/1182"])
        from_bad = r.random() < 1 / 3
        if p.node == BAD and r.random() < 0.55:
            age = r.randint(0, 800)
            exp = iso(st.at(m) - timedelta(seconds=age) + timedelta(seconds=900))
            return "warning", (f'msg="rejecting request" path={path} status=401 '
                               f'error="token has invalid claims: token is expired" exp={exp}')
        if p.node != BAD and from_bad and r.random() < 0.8:
            iat = app_time(bad_tok, m)
            return "warning", (f'msg="rejecting request" path={path} status=401 '
                               'error="token has invalid claims: token used before issued" '
                               f"iat={iat}")
        return "info", (f'msg="request" path={path} status=200 '
                        f"duration={r.randint(4, 60)}ms")

    chatter(gw.pods, gw_line, 14)

    # order-sync: S3 uploads; SigV4 signatures from the fast node are refused
    osync = deployment(st, "orders", "order-sync",
                       [ctr("order-sync", "ghcr.io/example/order-sync:1.4.2", port=9090,
                            cpu="100m", mem="128Mi")], [nodes[5], BAD], age_days=120,
                       revision=8, rollout_min=6 * 1440 - 30)

    def sync_line(r: random.Random, p: Pod, m: float) -> tuple[str, str]:
        key = f"exports/2026/12/02/orders-{r.randint(100000, 999999)}.json.gz"
        if p.node == BAD:
            return "error", (f'msg="upload failed" key={key} error="operation error S3: '
                             f"PutObject, https response error StatusCode: 403, RequestID: "
                             f"{r.getrandbits(64):016X}, HostID: {r.getrandbits(96):024x}, "
                             "api error RequestTimeTooSkewed: The difference between the "
                             'request time and the current time is too large."')
        return "info", f'msg="uploaded" key={key} bytes={r.randint(20000, 90000)}'

    chatter(osync.pods, sync_line, 45)

    # bystanders
    sess = deployment(st, "auth", "session-store",
                      [ctr("session-store", "ghcr.io/example/session-store:0.9.7", cpu="100m",
                           mem="256Mi")], [nodes[3], nodes[5]], age_days=300,
                      states=[PState(containers=[CState(restarts=2, started_min=2 * 1440,
                                                        last=("Error", 2, 3 * 1440,
                                                              2 * 1440))]), PState()])
    chatter(sess.pods, lambda r, p, m: ("info", f'msg="gc" evicted={r.randint(0, 40)}'), 120)
    npd = daemonset(st, "node-problem-detector", "node-problem-detector",
                    [ctr("node-problem-detector",
                         "registry.k8s.io/node-problem-detector/node-problem-detector:v0.8.19",
                         port=20257, cpu="20m", mem="80Mi")], nodes, rollout_min=9 * 1440)
    for p in npd.pods:
        if p.node == BAD:
            st.log(st.at(52), p, "warning",
                   "I1202 09:38:00.412 custom_plugin_monitor.go:280] New status generated: "
                   "&{Source:ntp-custom-plugin-monitor Events:[] Conditions:[{Type:NTPProblem "
                   "Status:True Reason:NTPIsDown Message:NTP service is not running}]}")
    runner = deployment(st, "ci", "build-runner",
                        [ctr("runner", "ghcr.io/example/build-runner:2026.11", port=None,
                             cpu="3", mem="8Gi", mem_limit="8Gi")], nodes[:1], replicas=1,
                        age_days=30, rollout_min=40,
                        states=[PState(phase="Pending", scheduled=False,
                                       unschedulable="0/6 nodes are available: 6 node(s) "
                                       "didn't match Pod's node affinity/selector.")],
                        spec_extra={"nodeSelector": {"workload": "ci-large"}})
    event(st, "ci", "Pod", runner.pods[0].name, "FailedScheduling",
          "0/6 nodes are available: 6 node(s) didn't match Pod's node affinity/selector. "
          "preemption: 0/6 nodes are available: 6 Preemption is not helpful for scheduling.",
          type_="Warning", count=13, first_min=40, last_min=2, component="default-scheduler")
    event(st, "auth", "Deployment", "token-service", "ScalingReplicaSet",
          f"Scaled up replica set {tok.objects[1]['metadata']['name']} to 3 from 0",
          first_min=59, component="deployment-controller", api="apps/v1")

    # metrics
    for n in nodes:
        lab = {"instance": n, "job": "node-exporter"}
        bad = n == BAD
        st.gauge("node_timex_sync_status", "Is clock synchronized to a reliable server "
                 "(1 = yes, 0 = no).", lab, lambda m, b=bad: 0 if b else 1)
        st.gauge("node_timex_maxerror_seconds", "Maximum error in seconds.", lab,
                 lambda m, b=bad: 16.0 if b else round(st.rng.uniform(0.002, 0.02), 4))
        st.gauge("node_timex_offset_seconds", "Time offset in between local system and "
                 "reference clock.", lab,
                 lambda m, b=bad: 0.0 if b else round(st.rng.uniform(-4e-5, 4e-5), 7))
        st.gauge("node_time_seconds", "System time in seconds since epoch (1970).", lab,
                 lambda m, b=bad: round(st.at(m).timestamp() + (_skew(m) if b else
                                                                st.rng.uniform(-0.01, 0.01)),
                                        3))
    for p in [*tok.pods, *gw.pods, *osync.pods, *sess.pods]:
        st.pod_metrics(p, cpu=0.2, mem_mib=220,
                       restarts=(lambda m: 2) if p in sess.pods[:1] else None)
    for p in gw.pods:
        share = 0.55 if p.node == BAD else 0.27
        st.counter("http_requests_total", "Total HTTP requests.",
                   {"namespace": "api", "service": "gateway", "pod": p.name, "code": "401"},
                   lambda m, s=share: 40 * s, start=2.0e5)
        st.counter("http_requests_total", "Total HTTP requests.",
                   {"namespace": "api", "service": "gateway", "pod": p.name, "code": "200"},
                   lambda m, s=share: 40 * (1 - s), start=6.0e7)
    fix_host_ips(st.objects)
    st.write(root, "Users logged out, random 401s",
             "lots of users report being logged out / 401s on the app since this morning, "
             "maybe a third of\nrequests? token-service 3.8.0 went out last night, I bet the "
             "new signing key rotation is\nbroken. Should we roll token-service back?\n",
             {"category": "node_failure",
              "culprit": {"kind": "Node", "namespace": "", "name": BAD},
              "evidence": ["NTP service is not running", "token is expired",
                           "token used before issued", "RequestTimeTooSkewed"],
              "fix": f"Restart chronyd on {BAD} and let it step the clock (or cordon and drain "
                     "it and replace the instance); token-service 3.8.0 is fine."})
