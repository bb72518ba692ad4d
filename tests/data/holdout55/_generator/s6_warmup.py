"""Shape 6, probe_failure: 2.9.0 warms a four-region price cache for ~90 s before Tomcat
starts; with no startupProbe and a liveness initialDelaySeconds of 30 the kubelet kills each
new pod mid warm-up, so the rollout never finishes."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from . import _kit as k

SID = "pricing-rollout-restarts"
RUN = 52.0  # seconds from container start to the liveness kill


def build(root: Path) -> None:
    s = k.Story(SID, "2026-09-09T11:18:00Z", seed=5506)
    old = s.ago(days=420)
    nodes = k.eks_nodes(s, [
        ("eu-west-1a", "m6i.2xlarge", "8", "32386132Ki", "general-a"),
        ("eu-west-1b", "m6i.2xlarge", "8", "32386132Ki", "general-b"),
        ("eu-west-1c", "m6i.2xlarge", "8", "32386132Ki", "general-c"),
        ("eu-west-1a", "m6i.2xlarge", "8", "32386132Ki", "general-a"),
        ("eu-west-1b", "m6i.2xlarge", "8", "32386132Ki", "general-b"),
    ], old, s.ago(days=6, hours=9))
    k.standard_cluster(s, nodes, old, s.ago(days=6, hours=8))
    for ns, team in (("pricing", "pricing"), ("checkout", "checkout")):
        k.namespace(s, ns, old, {"team": team})
    reg = "482913307715.dkr.ecr.eu-west-1.amazonaws.com"
    rollout = s.ago(27, seconds=30)

    def engine(tag: str) -> k.Obj:
        return k.container(
            "price-engine", f"{reg}/pricing/price-engine:{tag}", port=8080, cpu="1",
            mem="2Gi", mem_limit="3Gi",
            env=[{"name": "SPRING_PROFILES_ACTIVE", "value": "prod"},
                 {"name": "PRICING_REDIS_URL", "value": "redis://pricing-redis.pricing.svc:6379"},
                 {"name": "PRICING_REGIONS",
                  "value": "eu,uk,us,apac" if tag >= "2.9" else "eu"},
                 {"name": "JAVA_TOOL_OPTIONS", "value": "-XX:MaxRAMPercentage=70"}],
            readiness=k.http_probe("/actuator/health/readiness", 8080, delay=10, period=5),
            liveness=k.http_probe("/actuator/health/liveness", 8080, delay=30, period=10,
                                  timeout=2))

    lab = {"app.kubernetes.io/name": "price-engine", "app.kubernetes.io/part-of": "pricing"}
    pe = k.deployment(
        s, "pricing", "price-engine", [engine("2.8.3")], replicas=4, nodes=nodes[:4],
        created=old, pods_since=s.ago(days=3, hours=5), revision=61, labels=lab, cpu=0.55,
        mem=1.7 * k.GiB,
        old_revisions=[(60, s.ago(days=14), [engine("2.8.2")])],
        strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2,
                                                             "maxUnavailable": 0}},
        annotations={"meta.helm.sh/release-name": "price-engine"})
    new_c = engine("2.9.0")
    new_t = k.template(lab, [new_c])
    dep = pe.obj
    dep["spec"]["template"] = new_t
    dep["metadata"]["annotations"]["deployment.kubernetes.io/revision"] = "62"
    dep["metadata"]["generation"] = 70
    h = s.suffix(10)
    new_rs = k.replicaset(s, pe, new_t, 62, rollout, 2, 0, hash_=h)
    old_rs = pe.rs[-1]
    dep["status"] = {
        "observedGeneration": 70, "replicas": 6, "updatedReplicas": 2, "readyReplicas": 4,
        "availableReplicas": 4, "unavailableReplicas": 2,
        "conditions": [
            {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
             "message": "Deployment has minimum availability.",
             "lastUpdateTime": k.iso(s.ago(days=3, hours=5)),
             "lastTransitionTime": k.iso(s.ago(days=3, hours=5))},
            {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
             "message": f'ReplicaSet "price-engine-{h}" has timed out progressing.',
             "lastUpdateTime": k.iso(rollout + timedelta(seconds=601)),
             "lastTransitionTime": k.iso(rollout + timedelta(seconds=601))}]}
    s.event("Deployment", "pricing", "price-engine", "ScalingReplicaSet",
            f"Scaled up replica set price-engine-{h} to 2", first=rollout,
            component="deployment-controller")
    old_h = old_rs["metadata"]["name"].rsplit("-", 1)[1]

    new_pods: list[k.Obj] = []
    for i, (nd, hip) in enumerate([nodes[4], nodes[2]]):
        pn = f"price-engine-{h}-{s.suffix()}"
        created = rollout + timedelta(seconds=i)
        runs = k.crashloop(created + timedelta(seconds=5), s.now, RUN)
        current = runs[-1]
        in_progress = current[1] > s.now
        done = runs[:-1] if in_progress else runs
        restarts = len(runs) - 1
        last_done = done[-1]
        ip = s.ip()
        if in_progress:
            st = k.running(new_c, current[0], restarts=restarts, ready=False,
                           last=k.terminated("Error", 143, last_done[0], last_done[1]))
        else:
            st = k.waiting(new_c, "CrashLoopBackOff",
                           f"back-off 5m0s restarting failed container=price-engine "
                           f"pod={pn}_pricing({s.uid()})", restarts=restarts,
                           last=k.terminated("Error", 143, last_done[0], last_done[1]))
        p = k.make_pod(s, "pricing", pn, new_t,
                       k.owner_ref("ReplicaSet", new_rs["metadata"]["name"],
                                   new_rs["metadata"]["uid"]), nd, created,
                       hash_label={"pod-template-hash": h}, statuses=[st],
                       conditions=k.pod_conditions(
                           created, None, message="containers with unready status: "
                           "[price-engine]"), host_ip=hip, pod_ip=ip)
        new_pods.append(p)
        uid = p["metadata"]["uid"]
        kills = [b for _, b in done]
        s.pods.append(k.PodRec("pricing", pn, nd, ["price-engine"], created, ready=False,
                               cpu=0.9, mem=900 * k.MiB, restarts=restarts,
                               restart_times=[a for a, _ in runs[1:] if a <= s.now]))
        fp = "spec.containers{price-engine}"
        s.event("Pod", "pricing", pn, "Scheduled",
                f"Successfully assigned pricing/{pn} to {nd}", first=created,
                component="default-scheduler", uid=uid)
        s.event("Pod", "pricing", pn, "Pulled",
                f'Successfully pulled image "{new_c["image"]}" in 3.42s (3.42s including '
                "waiting). Image size: 212840113 bytes.", first=created + timedelta(seconds=4),
                host=nd, uid=uid, field_path=fp)
        s.event("Pod", "pricing", pn, "Created", "Created container price-engine",
                first=runs[0][0], last=current[0], count=len(runs), host=nd, uid=uid,
                field_path=fp)
        s.event("Pod", "pricing", pn, "Started", "Started container price-engine",
                first=runs[0][0], last=current[0], count=len(runs), host=nd, uid=uid,
                field_path=fp)
        s.event("Pod", "pricing", pn, "Unhealthy",
                f'Readiness probe failed: Get "http://{ip}:8080/actuator/health/readiness": '
                f"dial tcp {ip}:8080: connect: connection refused",
                first=runs[0][0] + timedelta(seconds=10),
                last=min(s.now, current[1]) - timedelta(seconds=2),
                count=len(runs) * 8, type_="Warning", host=nd, uid=uid, field_path=fp)
        s.event("Pod", "pricing", pn, "Unhealthy",
                f'Liveness probe failed: Get "http://{ip}:8080/actuator/health/liveness": '
                f"dial tcp {ip}:8080: connect: connection refused",
                first=runs[0][0] + timedelta(seconds=31), last=kills[-1] - timedelta(seconds=1),
                count=len(kills) * 3, type_="Warning", host=nd, uid=uid, field_path=fp)
        s.event("Pod", "pricing", pn, "Killing",
                "Container price-engine failed liveness probe, will be restarted",
                first=kills[0] - timedelta(seconds=1), last=kills[-1] - timedelta(seconds=1),
                count=len(kills), host=nd, uid=uid, field_path=fp)
        s.event("Pod", "pricing", pn, "BackOff",
                f"Back-off restarting failed container price-engine in pod {pn}_pricing({uid})",
                first=kills[1], last=s.ago(seconds=s.rng.randint(5, 40)),
                count=len(kills) * 4, type_="Warning", host=nd, uid=uid, field_path=fp)
        attempts: list[list[str]] = []
        for a, b in runs:
            end = min(b, s.now)
            attempts.append(_attempt(s, "pricing", pn, nd, a, end, killed=b <= s.now))
        s.pod_log("pricing", pn, "price-engine", attempts[-1])
        s.pod_log("pricing", pn, "price-engine", attempts[-2], previous=True)

    old_rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] = "4"
    del old_h
    # old pods: started three days ago, cache warmed quickly with one region
    for p in pe.pods:
        pn = p["metadata"]["name"]
        t0 = k.parse(p["metadata"]["creationTimestamp"]) + timedelta(seconds=6)
        for off, lvl, msg in [
            (0, "info", "Starting PriceEngineApplication v2.8.3 using Java 21.0.4 with PID 1"),
            (3.1, "info", "Tomcat initialized with port 8080 (http)"),
            (3.9, "info", "Connected to redis pricing-redis.pricing.svc:6379 (role=master)"),
            (4.0, "info", "Warming price cache: 1 region(s) [eu], 402118 keys"),
            (25.7, "info", "Price cache warmed in 21.7s (402118 keys, 0 misses)"),
            (26.4, "info", "Tomcat started on port 8080 (http) with context path '/'"),
            (26.5, "info", "Started PriceEngineApplication in 26.912 seconds (process running "
                           "for 27.4)"),
        ]:
            s.log(t0 + timedelta(seconds=off), "pricing", pn, "price-engine", "price-engine",
                  lvl, msg, service__version="2.8.3")
    k.http_logs(s, pe, "price-engine", s.ago(65), s.now, 40.0, [
        ("POST", "/v3/quote", 200, 70), ("GET", "/v3/price/{id}", 200, 25),
        ("POST", "/v3/quote", 422, 2)], fmt="{method} {path} {status} {ms}ms")
    k.lines(s, pe, "price-engine", s.ago(65), s.now, 260.0, [
        ("warn", "promo rule {id} references unknown SKU, ignored", 3),
        ("warn", "redis command took {ms}ms (GET price:{id})", 1),
    ])
    k.service(s, "pricing", "price-engine", lab, 80, 8080, old, pods=pe.pods,
              not_ready=new_pods)

    # ----- pricing-redis: failed over last night (old restart), healthy now -----
    rc = k.container("redis", "docker.io/bitnami/redis:7.2.5", cpu="500m", mem="4Gi",
                     mem_limit="4Gi")
    rc["ports"] = [{"name": "redis", "containerPort": 6379, "protocol": "TCP"}]
    redis = k.statefulset(s, "pricing", "pricing-redis", [rc], replicas=2,
                          nodes=[nodes[0], nodes[1]], created=old,
                          pods_since=s.ago(days=5), service="pricing-redis-headless",
                          cpu=0.15, mem=2.8 * k.GiB)
    r0 = redis.pods[0]["status"]["containerStatuses"][0]
    r0["restartCount"] = 1
    fail = s.ago(hours=9, minutes=12)
    r0["lastState"] = {"terminated": k.terminated("Error", 137, s.ago(days=5), fail)}
    r0["state"] = {"running": {"startedAt": k.iso(fail + timedelta(seconds=12))}}
    redis.recs[0].restarts = 1
    k.service(s, "pricing", "pricing-redis", redis.template["metadata"]["labels"], 6379, 6379,
              old, pods=redis.pods[:1], port_name="redis")
    rp = redis.pods[1]["metadata"]["name"]
    for off, msg in [(0, "Connection with master lost."),
                     (0.1, "* Caching the disconnected master state."),
                     (11, "Setting secondary replication ID to 1d9c..., valid up to offset: "
                          "88213319012. New replication ID is 5f0e..."),
                     (11.1, "MASTER MODE enabled (user request from 'id=4121 addr=10.42.3.7'"),
                     (40, "Replica 10.42.6.19:6379 asks for synchronization"),
                     (41, "Synchronization with replica 10.42.6.19:6379 succeeded")]:
        s.log(fail + timedelta(seconds=off), "pricing", rp, "redis", "pricing-redis", "info",
              msg)
    for t in s.spread(s.ago(65), s.now, 300.0):
        s.log(t, "pricing", redis.pods[0]["metadata"]["name"], "redis", "pricing-redis", "info",
              f"{s.rng.randint(10, 1000)} changes in 300 seconds. Saving...")

    # ----- promo-rules: an unrelated rollout 15 minutes ago -----
    pr_t = s.ago(15)
    pr = k.deployment(
        s, "pricing", "promo-rules",
        [k.container("promo-rules", f"{reg}/pricing/promo-rules:1.33.0", port=8080, cpu="100m",
                     mem="256Mi", readiness=k.http_probe("/ready", 8080))],
        replicas=2, nodes=nodes[2:4], created=old, pods_since=pr_t, revision=88,
        old_revisions=[(87, s.ago(days=2), [k.container(
            "promo-rules", f"{reg}/pricing/promo-rules:1.32.4", port=8080)])], cpu=0.03,
        mem=180 * k.MiB)
    prh = pr.rs[-1]["metadata"]["name"].rsplit("-", 1)[1]
    s.event("Deployment", "pricing", "promo-rules", "ScalingReplicaSet",
            f"Scaled up replica set promo-rules-{prh} to 2", first=pr_t,
            component="deployment-controller")
    k.lines(s, pr, "promo-rules", pr_t, s.now, 60.0, [
        ("info", "published {n} active promotions to pricing", 4),
        ("warn", "promotion {id} expired at load time, skipped", 1),
    ])

    # ----- checkout/cart: caller, an old restart -----
    cart = k.deployment(
        s, "checkout", "cart",
        [k.container("cart", f"{reg}/checkout/cart:12.0.1", port=8080, cpu="300m",
                     mem="512Mi", readiness=k.http_probe("/ready", 8080))],
        replicas=3, nodes=nodes, created=old, pods_since=s.ago(days=5), cpu=0.2,
        mem=400 * k.MiB)
    cst = cart.pods[1]["status"]["containerStatuses"][0]
    cst["restartCount"] = 1
    cst["lastState"] = {"terminated": k.terminated("OOMKilled", 137, s.ago(days=5),
                                                   s.ago(days=4, hours=1))}
    cart.recs[1].restarts = 1
    k.http_logs(s, cart, "cart", s.ago(65), s.now, 60.0, [
        ("GET", "/cart/{id}", 200, 60), ("POST", "/cart/{id}/items", 201, 30),
        ("POST", "/cart/{id}/items", 409, 1)], fmt="{method} {path} {status} {ms}ms")
    k.service(s, "checkout", "cart", {"app.kubernetes.io/name": "cart"}, 80, 8080, old,
              pods=cart.pods)

    # ----- metrics -----
    s.pod_metrics()
    for p in pe.pods + new_pods:
        pn = p["metadata"]["name"]
        is_new = p in new_pods
        created = k.parse(p["metadata"]["creationTimestamp"])
        lab = {"namespace": "pricing", "pod": pn, "container": "price-engine"}
        for probe in ("Liveness", "Readiness"):
            period = 10 if probe == "Liveness" else 5
            ok = 0.0 if is_new else 1 / period
            bad = (0.9 / period if is_new else 0.0)
            s.counter("prober_probe_total", "Cumulative number of a liveness, readiness or "
                      "startup probe for a container by result.",
                      {**lab, "probe_type": probe, "result": "successful"},
                      lambda t, r=ok: r, begin=created, start=0 if is_new else None)
            if is_new:
                s.counter("prober_probe_total", "Cumulative number of a liveness, readiness "
                          "or startup probe for a container by result.",
                          {**lab, "probe_type": probe, "result": "failed"},
                          lambda t, r=bad: r, begin=created, start=0)
        if not is_new:
            s.counter("http_server_requests_total", "Total HTTP server requests handled",
                      {"namespace": "pricing", "pod": pn, "uri": "/v3/quote", "status": "200"},
                      lambda t: 18.0)
    s.gauge("kube_deployment_status_replicas_updated",
            "The number of updated replicas per deployment.",
            {"namespace": "pricing", "deployment": "price-engine"},
            lambda t: 2.0 if t >= rollout else 4.0)
    s.gauge("kube_deployment_status_replicas_unavailable",
            "The number of unavailable replicas per deployment.",
            {"namespace": "pricing", "deployment": "price-engine"},
            lambda t: 2.0 if t >= rollout else 0.0)
    s.gauge("kube_deployment_status_condition",
            "The current status conditions of a deployment.",
            {"namespace": "pricing", "deployment": "price-engine", "condition": "Progressing",
             "status": "false"},
            lambda t: 1.0 if t >= rollout + timedelta(seconds=601) else 0.0)

    k.scenario(
        s, title="price-engine 2.9.0 rollout stuck, new pods restarting",
        report=(
            "price-engine 2.9.0 rollout has been stuck for ~25 min, the 2 new pods keep "
            "restarting and go into CrashLoopBackOff. My guess is 2.9.0 crashes at startup "
            "because it can't talk to pricing-redis (redis failed over last night and the "
            "new version loads more from redis). Old 2.8.3 pods are still serving. Why does "
            "it crash?\n"
        ),
        category="probe_failure", kind="Deployment", ns="pricing", name="price-engine",
        evidence=["Container price-engine failed liveness probe, will be restarted",
                  "initialDelaySeconds: 30", "Received SIGTERM during price cache warm-up"],
        fix=("2.9.0 warms the cache for four regions (about 90 s) before Tomcat listens, but "
             "the liveness probe starts at 30 s and kills the container after three refused "
             "connections (~52 s). Add a startupProbe on /actuator/health/liveness with "
             "failureThreshold x periodSeconds >= 150 s (or raise initialDelaySeconds to "
             "~120); redis is healthy and 2.9.0 does not crash by itself."),
    )
    s.write(root)
    k.check_evidence(s, root)


def _attempt(s: k.Story, ns: str, pod: str, node: str, start: datetime, end: datetime,
             killed: bool) -> list[str]:
    """One container run of 2.9.0: boot, warm-up progress, SIGTERM from the kubelet."""
    out: list[str] = []
    total = 1612880
    pid = 1

    def emit(off: float, lvl: str, logger: str, msg: str) -> None:
        t = start + timedelta(seconds=off)
        if t > end:
            return
        stamp = t.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        out.append(f"{stamp} {lvl.upper():5} {pid} --- [price-engine] [{'main':>15}] "
                   f"{logger:<40} : {msg}")
        s.log(t, ns, pod, "price-engine", "price-engine", lvl, msg, service__version="2.9.0",
              log__logger=logger, kubernetes__node__name=node)

    emit(0.0, "info", "c.e.pricing.PriceEngineApplication",
         "Starting PriceEngineApplication v2.9.0 using Java 21.0.4 with PID 1")
    emit(0.4, "info", "c.e.pricing.PriceEngineApplication",
         'The following 1 profile is active: "prod"')
    emit(3.2, "info", "o.s.b.w.embedded.tomcat.TomcatWebServer",
         "Tomcat initialized with port 8080 (http)")
    emit(4.1, "info", "c.e.pricing.redis.RedisConfig",
         "Connected to redis pricing-redis.pricing.svc:6379 (role=master)")
    emit(4.3, "info", "c.e.pricing.cache.PriceCacheWarmer",
         f"Warming price cache: 4 region(s) [eu, uk, us, apac], {total} keys "
         "(web server starts when done)")
    done = 0
    off = 4.3
    while off < RUN - 2:
        off += 9.0 + s.rng.uniform(-0.4, 0.6)
        done = min(total, done + s.rng.randint(160000, 185000))
        emit(off, "info", "c.e.pricing.cache.PriceCacheWarmer",
             f"price cache warm-up {done}/{total} keys ({done * 100 // total}%)")
        if s.rng.random() < 0.3:
            emit(off + 0.2, "warn", "c.e.pricing.cache.PriceCacheWarmer",
                 f"slow SCAN batch from redis ({s.rng.randint(300, 700)}ms), continuing")
    if killed:
        pct = done * 100 // total
        emit(RUN - 0.3, "warn", "c.e.pricing.lifecycle.ShutdownHook",
             f"Received SIGTERM during price cache warm-up ({pct}% done), aborting")
        emit(RUN - 0.1, "info", "o.s.b.w.embedded.tomcat.GracefulShutdown",
             "Commencing graceful shutdown. Waiting for active requests to complete")
    return out
