"""Shape 6: pricing-engine 7.3.0 warms a price cache four times larger before it opens its
port; the liveness probe (30s delay, no startupProbe) kills it half-way through the
warm-up. The logs show the warm-up, then a SIGTERM; the restarts look like a crash loop."""

from __future__ import annotations

from datetime import datetime, timedelta

from .k8s import (
    GiB,
    MiB,
    PodState,
    Revision,
    backends,
    container,
    deployment,
    http_probe,
    namespace,
    node,
    service,
    terminated,
)
from .kit import World, iso_ms, parse
from .signals import Http, bystander, container_metrics, daily, pod_series, revision_metrics

RUN_S = 53          # probe delay 30s + 3 failures 10s apart, then the JVM shuts down
TOTAL_SKUS = 2_412_331
RATE = 26_500       # SKUs loaded per second


def runs(first: datetime, now: datetime) -> list[datetime]:
    out, moment, delay = [], first, 10.0
    while moment < now:
        out.append(moment)
        moment += timedelta(seconds=RUN_S + delay)
        delay = min(delay * 2, 300.0)
    return out


def warmup_lines(start: datetime, until: datetime, sigterm: bool) -> list[tuple[datetime, str,
                                                                                str]]:
    lines = [
        (start, "info", "Starting PricingEngineApplication v7.3.0 using Java 21.0.5 with PID 1"),
        (start + timedelta(seconds=4.2), "info",
         "Connected to pricing-db (postgresql://pricing-db.catalog.svc:5432/pricing), pool=24"),
        (start + timedelta(seconds=4.9), "info",
         f"Price cache warm-up started: scope=all-sellers, {TOTAL_SKUS} SKUs to load "
         "(web server starts when the cache is warm)"),
    ]
    moment, loaded = start + timedelta(seconds=5), 0
    while True:
        moment += timedelta(seconds=10)
        loaded = int((moment - start).total_seconds() - 5) * RATE
        if moment > until:
            break
        lines.append((moment, "info", f"Price cache warm-up: {loaded}/{TOTAL_SKUS} SKUs "
                      f"({loaded * 100 // TOTAL_SKUS}%), heap {640 + loaded // 2600}MB"))
    if sigterm:
        stop = until
        done = int((stop - start).total_seconds() - 5) * RATE
        lines += [
            (stop, "warn", "Received SIGTERM, shutting down"),
            (stop + timedelta(milliseconds=40), "warn",
             f"Price cache warm-up interrupted at {done}/{TOTAL_SKUS} SKUs"),
            (stop + timedelta(milliseconds=310), "info",
             "HikariPool-1 - Shutdown completed."),
        ]
    return lines


def build() -> World:
    now = parse("2026-11-28T08:40:00Z")
    rollout = now - timedelta(minutes=50)
    w = World(
        "pricing-rollout-stuck",
        "pricing-engine rollout stuck, new pod in CrashLoopBackOff",
        now,
        "pricing-engine 7.3.0 rollout has been stuck for ~45 min, the new pod is in "
        "CrashLoopBackOff. I don't see any exception in its logs?? old pods fine. the app team "
        "says it works in staging. pricing-db was patched overnight, related?",
        {"category": "probe_failure",
         "culprit": {"kind": "Deployment", "namespace": "catalog", "name": "pricing-engine"},
         "evidence": ["Liveness probe failed", "failed liveness probe, will be restarted",
                      "Received SIGTERM", "Price cache warm-up", "delay=30s"],
         "fix": "Give pricing-engine a startupProbe (e.g. failureThreshold 30, period 10s) or a "
                "longer liveness initialDelaySeconds: 7.3.0 warms 2.4M SKUs (~90s) before "
                "it listens, and the liveness probe kills it after ~60s."},
        seed=3006,
    )
    long_ago = parse("2024-08-07T07:30:00Z")
    namespace(w, "catalog", long_ago)
    nodes = [f"node-{k}.prod-dc2.acme.lan" for k in ("w07", "w11", "w12", "w15")]
    for i, name in enumerate(nodes):
        node(w, name, now - timedelta(days=6, hours=4 * i), zone="dc2", cpu="16",
             memory="64Gi", allocatable_memory="62800Mi")

    def engine(tag: str, scope: str) -> dict[str, object]:
        return container(
            "pricing-engine", f"harbor.acme.lan/catalog/pricing-engine:{tag}", cpu="1",
            memory="3Gi", env=[{"name": "JAVA_TOOL_OPTIONS", "value": "-XX:MaxRAMPercentage=75"},
                               {"name": "PRICE_CACHE_SCOPE", "value": scope}],
            liveness=http_probe("/actuator/health/liveness", 8080, delay=30),
            readiness=http_probe("/actuator/health/readiness", 8080, delay=20))
    old_start = now - timedelta(days=5, hours=3)
    old = Revision(30, old_start, [engine("7.2.0", "own-catalog")], pods=[
        PodState(node=nodes[i], created=old_start + timedelta(seconds=70 * i)) for i in range(3)])
    created = rollout + timedelta(seconds=3)
    starts = runs(created + timedelta(seconds=5), now)
    current_run_ends = starts[-1] + timedelta(seconds=RUN_S)
    running = now < current_run_ends
    last_run = starts[-2] if running else starts[-1]    # the instance `previous` shows
    last_end = last_run + timedelta(seconds=RUN_S)
    state = PodState(
        node=nodes[3], created=created, ready=False, restarts=len(starts) - 1,
        started=starts[-1] if running else None,
        waiting=None if running else ("CrashLoopBackOff", "back-off 5m0s restarting failed "
                                      "container=pricing-engine pod=pricing-engine-{pod}"),
        last=terminated("Error", 143, last_run, last_end))
    new = Revision(31, rollout, [engine("7.3.0", "all-sellers")], pods=[state])
    deployment(w, "catalog", "pricing-engine", long_ago, [old, new], replicas=3,
               team="pricing", strategy={"type": "RollingUpdate", "rollingUpdate": {
                   "maxSurge": 1, "maxUnavailable": 0}},
               progressing=("False", "ProgressDeadlineExceeded",
                            'ReplicaSet "pricing-engine-{hash}" has timed out progressing.'))
    pod_name = new.pod_names[0]
    for obj in w.objects:
        if obj["kind"] == "Deployment" and obj["metadata"]["name"] == "pricing-engine":
            for cond in obj["status"]["conditions"]:
                cond["message"] = cond["message"].replace("{hash}", new.hash)
        if obj["kind"] == "Pod" and obj["metadata"]["name"] == pod_name:
            cs = obj["status"]["containerStatuses"][0]
            if "waiting" in cs["state"]:
                cs["state"]["waiting"]["message"] = cs["state"]["waiting"]["message"].replace(
                    "pricing-engine-{pod}", f"{pod_name}_catalog({obj['metadata']['uid']})")
    service(w, "catalog", "pricing-engine", long_ago, target=8080,
            backends=backends(w, "catalog", [old]), not_ready=[(pod_name, state.ip or "")])

    # The new pod: the same warm-up every run, cut by the probe.
    for start in starts:
        end = start + timedelta(seconds=RUN_S)
        killed = end <= now
        for moment, level, text in warmup_lines(start, min(end, now), killed):
            w.log(moment, "catalog", pod_name, "pricing-engine", "pricing-engine", level, text)
    prev = warmup_lines(last_run, last_end, True)
    w.pod_log("catalog", pod_name, "pricing-engine",
              [f"{iso_ms(t)} {lvl.upper():5} [main] {text}" for t, lvl, text in prev],
              previous=True)
    if running:
        cur = warmup_lines(starts[-1], now, False)
        w.pod_log("catalog", pod_name, "pricing-engine",
                  [f"{iso_ms(t)} {lvl.upper():5} [main] {text}" for t, lvl, text in cur])
    ip = state.ip
    probes_failed = 3 * len(starts) - (0 if not running else 3 - max(
        0, int(((now - starts[-1]).total_seconds() - 30) // 10) + 1))
    w.event("catalog", "Pod", pod_name, "Scheduled",
            f"Successfully assigned catalog/{pod_name} to {nodes[3]}", first=created,
            component="default-scheduler")
    for reason, message in (
            ("Pulled", 'Container image "harbor.acme.lan/catalog/pricing-engine:7.3.0" already '
                       "present on machine"),
            ("Created", "Created container pricing-engine"),
            ("Started", "Started container pricing-engine")):
        w.event("catalog", "Pod", pod_name, reason, message, first=starts[0], last=starts[-1],
                count=len(starts), host=nodes[3], field_path="spec.containers{pricing-engine}")
    w.event("catalog", "Pod", pod_name, "Unhealthy",
            f'Liveness probe failed: Get "http://{ip}:8080/actuator/health/liveness": dial tcp '
            f"{ip}:8080: connect: connection refused", first=starts[0] + timedelta(seconds=31),
            last=min(now, last_run + timedelta(seconds=51)),
            count=max(probes_failed, 3), type_="Warning", host=nodes[3],
            field_path="spec.containers{pricing-engine}")
    w.event("catalog", "Pod", pod_name, "Unhealthy",
            f'Readiness probe failed: Get "http://{ip}:8080/actuator/health/readiness": dial '
            f"tcp {ip}:8080: connect: connection refused", first=starts[0] + timedelta(seconds=21),
            last=min(now, last_run + timedelta(seconds=51)),
            count=4 * len(starts), type_="Warning", host=nodes[3],
            field_path="spec.containers{pricing-engine}")
    w.event("catalog", "Pod", pod_name, "Killing",
            "Container pricing-engine failed liveness probe, will be restarted",
            first=starts[0] + timedelta(seconds=52), last=last_end - timedelta(seconds=6),
            count=len(starts) - 1, host=nodes[3], field_path="spec.containers{pricing-engine}")
    w.event("catalog", "Pod", pod_name, "BackOff",
            "Back-off restarting failed container pricing-engine in pod "
            f"{pod_name}_catalog({w.uid()})", first=starts[1] - timedelta(seconds=9),
            last=now - timedelta(seconds=40), count=2 * len(starts), type_="Warning",
            host=nodes[3], field_path="spec.containers{pricing-engine}")
    w.event("catalog", "Deployment", "pricing-engine", "ScalingReplicaSet",
            f"Scaled up replica set pricing-engine-{new.hash} to 1", first=rollout,
            component="deployment-controller")

    # Metrics: the new pod's heap climbs in every run and falls at the restart.
    s = pod_series(w, "catalog", pod_name, "pricing-engine", nodes[3], created)

    def heap(t: datetime) -> float:
        begun = max((m for m in starts if m <= t), default=starts[0])
        seconds = min((t - begun).total_seconds(), RUN_S)
        return (420 + 17.5 * seconds) * MiB
    container_metrics(w, s, memory=heap, cpu=lambda t: 0.98, memory_limit=3 * GiB,
                      restarts=state.restarts, restart_at=starts[1:], last_reason="Error")
    revision_metrics(w, "catalog", "pricing-engine", [old], memory=lambda t: 1.9 * GiB,
                     cpu=lambda t: 0.35 * daily(t), memory_limit=3 * GiB,
                     http=Http(rate=lambda t: 40 * daily(t), errors=lambda t: 0.0006,
                               latency=lambda t: 0.012, handler="/v1/prices",
                               histogram=False))
    for pod, st in zip(old.pod_names, old.pods, strict=True):
        boot = st.created + timedelta(seconds=8)
        w.pod_log("catalog", pod, "pricing-engine", [
            f"{iso_ms(boot)} INFO  [main] Starting PricingEngineApplication v7.2.0 using Java "
            "21.0.5 with PID 1",
            f"{iso_ms(boot + timedelta(seconds=5))} INFO  [main] Price cache warm-up started: "
            "scope=own-catalog, 598204 SKUs to load",
            f"{iso_ms(boot + timedelta(seconds=27))} INFO  [main] Price cache warm: 598204 SKUs "
            "in 22.6s",
            f"{iso_ms(boot + timedelta(seconds=28))} INFO  [main] Tomcat started on port 8080 "
            "(http) with context path '/'",
            f"{iso_ms(boot + timedelta(seconds=28))} INFO  [main] Started "
            "PricingEngineApplication in 28.4 seconds"])

    # Neighbours and noise.
    promo = bystander(w, "catalog", "promo-rules", replicas=2, nodes=nodes[:2],
                      image="harbor.acme.lan/catalog/promo-rules:3.0.9", created=long_ago,
                      rev_created=now - timedelta(days=2, hours=8), memory_mib=520,
                      memory_limit="1Gi", cpu_cores=0.07, rps=9, median_s=0.008, team="pricing",
                      messages=[("evaluated {n} promo rules for basket", "debug")])
    bystander(w, "catalog", "pricing-db-proxy", replicas=2, nodes=nodes[2:],
              image="docker.io/bitnami/pgbouncer:1.23.1", created=long_ago,
              rev_created=now - timedelta(hours=9), memory_mib=40, memory_limit="256Mi",
              cpu_cores=0.05, rps=0, median_s=0.001, team="dba", port=6432,
              messages=[("stats: {n} xacts/s, {ms} ms avg wait", "info")], log_every_s=300)
    w.event("catalog", "Pod", promo.pod_names[1], "FailedMount",
            'MountVolume.SetUp failed for volume "kube-api-access-7q2vx" : object '
            '"catalog"/"kube-root-ca.crt" not registered', first=now - timedelta(minutes=33),
            count=1, type_="Warning", host=nodes[1])
    for moment in (now - timedelta(hours=2, minutes=50), now - timedelta(hours=1, minutes=5)):
        w.log(moment, "catalog", old.pod_names[0], "pricing-engine", "pricing-engine", "warn",
              "pricing-db connection reset by peer, reconnecting (attempt 1)")
    return w
