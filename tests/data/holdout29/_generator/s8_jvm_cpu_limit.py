"""A JVM service whose CPU limit a cost-saving rollout cut from 2 cores to 500m (same image).
The JVM now sees one CPU and picks the Serial collector; throttling stretches GC pauses,
latency climbs and liveness probes time out, so the pods restart. Memory is fine.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

from tests.data.holdout29._generator.common import (
    Scenario,
    container,
    cumulative,
    deployment,
    event,
    healthy,
    http_probe,
    latency_hist,
    namespace,
    node,
    pod,
    pod_ip,
    pod_metrics,
    replicaset,
    resources,
    rs_hash,
    running,
    service,
    steps,
    suffix,
    template,
    terminated,
)

NOW = "2026-04-07T10:20:00Z"
NS = "pricing"
APP = "quote-engine"
IMAGE = "registry.corp/pricing/quote-engine:3.8.2"
EVERY = 120


def tmpl_for(cpu_req: str, cpu_lim: str) -> dict:
    return template({"app": APP}, [container(
        APP, IMAGE, resources(cpu_req, "2Gi", cpu_lim, "3Gi"), 8080,
        {"JAVA_TOOL_OPTIONS": "-XX:MaxRAMPercentage=60 -Xlog:gc:stdout:time,level,tags",
         "SPRING_PROFILES_ACTIVE": "prod"},
        readinessProbe=http_probe("/actuator/health/readiness", period=5),
        livenessProbe=http_probe("/actuator/health/liveness", period=10, failure=3,
                                 delay=60))])


def build() -> Path:
    sc = Scenario("quote-engine-slow-and-restarting", NOW)
    rng = random.Random(29008)
    nodes = [f"ip-10-6-{a}.ap-southeast-2.compute.internal" for a in ("1-12", "2-88", "3-19",
                                                                       "1-140", "2-7")]
    for i, name in enumerate(nodes):
        sc.add(node(name, sc.ago(days=4, hours=i), "pricing", "8", "32507820Ki",
                    sc.ago(seconds=5), zone=f"ap-southeast-2{'abc'[i % 3]}",
                    instance="c6i.2xlarge"))
    for ns in (NS, "web"):
        sc.add(namespace(ns, sc.ago(days=900)))
    rolled = sc.ago(hours=1, minutes=35)
    times = steps(sc.ago(hours=4), sc.now, EVERY)
    old_t, new_t = tmpl_for("1", "2"), tmpl_for("500m", "500m")
    ho, hn = rs_hash("qe14"), rs_hash("qe15x")
    dep = deployment(NS, APP, sc.ago(days=700), new_t, 4, 15)
    dep["metadata"]["annotations"]["kubernetes.io/change-cause"] = (
        "helm upgrade pricing-stack 2026.04.07-1 (values: resources right-sizing FIN-233)")
    sc.add(dep)
    sc.add(replicaset(NS, APP, ho, sc.ago(days=9), old_t, 0, 14))
    sc.add(replicaset(NS, APP, hn, rolled, new_t, 4, 15, ready=3))
    old_pods = [f"{APP}-{ho}-{suffix('qo' + str(i))}" for i in range(4)]
    new_pods = [f"{APP}-{hn}-{suffix('qn' + str(i))}" for i in range(4)]

    def load(t: datetime) -> float:
        x = (t - sc.ago(hours=3)).total_seconds() / 7200
        return 0.6 + 0.5 * min(1.0, max(0.0, x)) + rng.uniform(-0.04, 0.04)

    restarts = {p: [rolled + timedelta(minutes=m + 7 * i) for m in (31, 58, 80)
                    if rolled + timedelta(minutes=m + 7 * i) < sc.now - timedelta(minutes=2)]
                for i, p in enumerate(new_pods)}
    for i, p in enumerate(old_pods):
        gone = rolled + timedelta(seconds=50 * (i + 1))
        window = [t for t in times if t <= gone]
        pod_metrics(sc.metrics, NS, p, APP, window, lambda t: 1.2e9 + rng.uniform(-5e7, 5e7),
                    lambda t: 0.7 * load(t), 2.0, 3221225472,
                    throttle=lambda t: rng.uniform(0.0, 0.03), every=EVERY)
    for i, p in enumerate(new_pods):
        born = rolled + timedelta(seconds=50 * i)
        kills = restarts[p]
        sc.add(pod(NS, p, born, new_t, nodes[i], [{"name": APP, **running(
            (kills[-1] if kills else born) + timedelta(seconds=3), ready=i != 2,
            restarts=len(kills), last=terminated("Error", 143, kills[-2] if len(kills) > 1
                                                 else born, kills[-1]) if kills else None)}],
            ("ReplicaSet", f"{APP}-{hn}"), ip=pod_ip(p), extra_labels={"pod-template-hash": hn}))
        window = [t for t in times if t > born]
        pod_metrics(sc.metrics, NS, p, APP, window, lambda t: 1.15e9 + rng.uniform(-6e7, 6e7),
                    lambda t: min(0.5, 0.7 * load(t)) - rng.uniform(0, 0.01), 0.5, 3221225472,
                    throttle=lambda t: min(0.9, 0.55 + 0.3 * (load(t) - 0.6)),
                    restarts_at=kills, last_reason="Error", every=EVERY)
        field = f"spec.containers{{{APP}}}"
        if kills:
            sc.add(event(NS, "Pod", p, "Unhealthy",
                         f"Liveness probe failed: Get \"http://{pod_ip(p)}:8080/actuator/health/"
                         "liveness\": context deadline exceeded (Client.Timeout exceeded while "
                         "awaiting headers)", sc.ago(minutes=58), sc.ago(minutes=4 + i),
                         count=3 * len(kills) + 2, type_="Warning", host=nodes[i], field=field))
            sc.add(event(NS, "Pod", p, "Killing", f"Container {APP} failed liveness probe, will "
                         "be restarted", sc.ago(minutes=57), kills[-1], count=len(kills),
                         host=nodes[i], field=field))
        sc.add(event(NS, "Pod", p, "Unhealthy",
                     f"Readiness probe failed: Get \"http://{pod_ip(p)}:8080/actuator/health/"
                     "readiness\": context deadline exceeded (Client.Timeout exceeded while "
                     "awaiting headers)", sc.ago(minutes=59), sc.ago(minutes=1 + i),
                     count=20 + 4 * i, type_="Warning", host=nodes[i], field=field))
        start = (kills[-1] if kills else born) + timedelta(seconds=3)
        lines = [f"{start:%Y-%m-%dT%H:%M:%S}.311Z  INFO 1 --- [main] c.n.pricing.QuoteEngine"
                 "Application : Starting QuoteEngineApplication v3.8.2 using Java 21.0.2",
                 f"[{start:%Y-%m-%dT%H:%M:%S}.402+0000][info][gc] Using Serial",
                 f"{start + timedelta(seconds=48):%Y-%m-%dT%H:%M:%S}.907Z  INFO 1 --- [main] "
                 "c.n.pricing.QuoteEngineApplication : Started QuoteEngineApplication in 47.1 "
                 "seconds (process running for 48.3)"]
        at = start + timedelta(seconds=60)
        n = 1
        while at < sc.now:
            pause = rng.uniform(0.35, 2.4) * (1.4 if load(at) > 0.95 else 1.0)
            kind = "Pause Full (Allocation Failure)" if n % 9 == 0 else \
                "Pause Young (Allocation Failure)"
            before = rng.randint(820, 1180)
            lines.append(f"[{at:%Y-%m-%dT%H:%M:%S}.{rng.randint(100, 999)}+0000][info][gc] "
                         f"GC({n}) {kind} {before}M->{before - rng.randint(380, 620)}M(1843M) "
                         f"{pause * (3 if 'Full' in kind else 1) * 1000:.3f}ms")
            if n % 4 == 0:
                lines.append(f"{at + timedelta(seconds=2):%Y-%m-%dT%H:%M:%S}.118Z  WARN 1 --- "
                             "[nio-8080-exec-7] c.n.pricing.api.QuoteController : quote "
                             f"computation took {int(pause * 1000 + rng.randint(900, 2500))}ms "
                             "(budget 800ms)")
            at += timedelta(seconds=rng.randint(20, 45))
            n += 1
        sc.pod_log(NS, p, APP, lines)
        if kills:
            prev = [*lines[:2],
                f"[{kills[-1] - timedelta(seconds=40):%Y-%m-%dT%H:%M:%S}.210+0000][info][gc] "
                "GC(211) Pause Full (Allocation Failure) 1611M->702M(1843M) 4213.442ms",
                f"{kills[-1] - timedelta(seconds=1):%Y-%m-%dT%H:%M:%S}.004Z  INFO 1 --- "
                "[ionShutdownHook] o.s.b.w.e.tomcat.GracefulShutdown : Commencing graceful "
                "shutdown. Waiting for active requests to complete"]
            sc.pod_log(NS, p, APP, prev, previous=True)
    # Old pods' GC lines for comparison live in the log store.
    for i, p in enumerate(old_pods):
        at = sc.ago(hours=4) + timedelta(seconds=13 * i)
        n = 4000 + i * 300
        while at < rolled:
            before = rng.randint(820, 1180)
            sc.log(at, APP, NS, p, "info", f"GC({n}) Pause Young (Normal) (G1 Evacuation Pause) "
                   f"{before}M->{before - 500}M(1843M) {rng.uniform(6, 28):.3f}ms",
                   **{"log.logger": "gc"})
            at += timedelta(seconds=rng.randint(40, 90))
            n += 1
    for p in new_pods:
        for m in range(0, 90, 3):
            at = rolled + timedelta(minutes=m, seconds=rng.randint(0, 50))
            if at < sc.now:
                sc.log(at, APP, NS, p, "warn", "quote computation took "
                       f"{rng.randint(1200, 4800)}ms (budget 800ms)",
                       **{"log.logger": "c.n.pricing.api.QuoteController"})
    for p in old_pods + new_pods:
        is_new = p in new_pods
        born = rolled + timedelta(seconds=50 * new_pods.index(p)) if is_new else times[0]
        gone = sc.now if is_new else rolled + timedelta(seconds=50 * (old_pods.index(p) + 1))
        window = [t for t in times if born < t <= gone] if is_new else \
            [t for t in times if t <= gone]
        base = {"namespace": NS, "pod": p, "service": APP, "uri": "/v2/quotes",
                "method": "POST"}
        sc.metrics.counter("http_server_requests_seconds_count", {**base, "status": "200"},
                           cumulative(window, lambda t: 30 * load(t), EVERY))
        sc.metrics.counter("http_server_requests_seconds_count", {**base, "status": "503"},
                           cumulative(window, lambda t, n=is_new: 30 * load(t) * (
                               0.012 if n else 0.0005), EVERY))
        latency_hist(sc.metrics, "http_server_requests_seconds", base, window,
                     lambda t: 30 * load(t) / 6,
                     lambda t, n=is_new: (0.9 * load(t) if n else 0.11), rng, EVERY,
                     bounds=(0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8))
    sc.add(service(NS, APP, sc.ago(days=700), {"app": APP}))
    healthy(sc, NS, "rates-cache", "registry.corp/pricing/rates-cache:1.7.0", 2, nodes,
            resources("100m", "512Mi", "500m", "768Mi"), sc.ago(days=400), revision=8,
            rollout_at=rolled + timedelta(minutes=3))
    healthy(sc, "web", "partner-portal", "registry.corp/web/partner-portal:4.1.9", 2, nodes[2:],
            resources("200m", "256Mi", "1", "512Mi"), sc.ago(days=400), revision=52,
            rollout_at=sc.ago(days=2))
    return sc.write({
        "title": "quote-engine slow and restarting",
        "report": "quotes are slow since this morning (partners see 3-5s instead of <300ms) "
                  "and quote-engine pods restart now and then. we did the pricing-stack "
                  "release earlier but it had no code changes for quote-engine. memory leak? "
                  "heap dumps show nothing special\n",
        "truth": {"category": "cpu_throttling",
                  "culprit": {"kind": "Deployment", "namespace": NS, "name": APP},
                  "evidence": ["container_cpu_cfs_throttled_periods_total", "500m",
                               "Using Serial", "Liveness probe failed"],
                  "fix": "Restore quote-engine's CPU limit (2 cores, request 1) or remove it; "
                         "the right-sizing release cut it to 500m, the JVM falls back to the "
                         "Serial collector on one CPU and GC pauses stretch under throttling."},
    })
