"""sessions-cache-writes: a Redis cache with noeviction fills up and refuses writes.

cache/sessions-redis runs with ``maxmemory 1gb`` and ``maxmemory-policy noeviction``
(copied from a queue instance). Session keys carry a 30-day TTL, used memory reached the
ceiling 33 minutes ago and every SET/SETEX is refused with the OOM error; GETs still
work. The callers fall back to Postgres, which becomes slow and loud; Redis itself is
well inside its container memory limit and never restarts.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from ._kit import Container, Workload
from ._scene import Line, Scene, switch
from ._signals import restarted

SID = "sessions-cache-writes"
NODES = [f"gke-prod-eu-pool-3-8f2c1a{x}-{y}" for x, y in (("07", "q7xn"), ("07", "z2kd"),
                                                           ("9b", "h5lr"), ("9b", "w8mc"))]
MAXMEM = 1_073_741_824
OOM = "OOM command not allowed when used memory > 'maxmemory'."
REDIS_CONF = """# sessions-redis (copied from jobs-redis template, 2025-11)
port 6379
maxmemory 1gb
maxmemory-policy noeviction
appendonly no
save 3600 1
tcp-keepalive 60
"""


def build(root: Path) -> None:
    """Write the scenario."""
    s = Scene(SID, "2026-09-22T14:35:00Z", seed=5907)
    full = s.ago(33)
    s.nodes(NODES, itype="n2-standard-8", pool="pool-3")
    s.namespaces("cache", "accounts", "shop", "monitoring")
    s.cluster.add({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "sessions-redis-config", "namespace": "cache",
                                "creationTimestamp": "2025-11-04T10:12:00Z"},
                   "data": {"redis.conf": REDIS_CONF}})
    redis = s.cluster.workload(Workload(
        "cache", "sessions-redis",
        [Container("redis", "docker.io/library/redis:7.2.6-alpine", port=6379, probe_path=None,
                   cpu_req="500m", cpu_lim="1", mem_req="1536Mi", mem_lim="2Gi",
                   args=["redis-server", "/etc/redis/redis.conf"],
                   mounts=[{"name": "config", "mountPath": "/etc/redis"}]),
         Container("redis-exporter", "quay.io/oliver006/redis_exporter:v1.66.0", port=9121,
                   probe_path=None, cpu_req="50m", cpu_lim="200m", mem_req="32Mi",
                   mem_lim="64Mi")],
        NODES[2:3], s.ago(60 * 24 * 320), replicas=1, kind="StatefulSet", service_port=6379,
        pod_started=[s.ago(60 * 24 * 6 + 400)],
        pod_spec_extra={"volumes": [{"name": "config", "configMap":
                                     {"name": "sessions-redis-config"}}]}))
    sess_roll = s.ago(96)
    sess = s.cluster.workload(Workload(
        "accounts", "session-api",
        [Container("session-api", "europe-docker.pkg.dev/acme-prod/accounts/session-api:6.3.0",
                   env={"REDIS_URL": "redis://sessions-redis.cache.svc.cluster.local:6379/0",
                        "SESSION_TTL": "720h", "FALLBACK_STORE": "postgres"})],
        NODES, s.ago(60 * 24 * 700), replicas=3, revision=77, rollout_at=sess_roll,
        previous_images={"session-api":
                         "europe-docker.pkg.dev/acme-prod/accounts/session-api:6.2.9"}))

    def cart_pod(i: int, pod: dict[str, object]) -> None:
        if i == 1:
            restarted(pod, count=1, finished=s.ago(60 * 24 * 3 + 40), reason="Error",
                      exit_code=2)

    cart = s.cluster.workload(Workload(
        "shop", "cart-api",
        [Container("cart-api", "europe-docker.pkg.dev/acme-prod/shop/cart-api:2.19.4",
                   env={"REDIS_URL": "redis://sessions-redis.cache.svc.cluster.local:6379/2"})],
        NODES[1:], s.ago(60 * 24 * 500), replicas=2, rollout_at=s.ago(60 * 24 * 5),
        mutate_pod=cart_pod))
    pg = s.cluster.workload(Workload(
        "accounts", "accounts-pg",
        [Container("postgres", "docker.io/library/postgres:16.4", port=5432, probe_path=None,
                   cpu_req="2", cpu_lim="4", mem_req="8Gi", mem_lim="8Gi")],
        NODES[3:], s.ago(60 * 24 * 800), replicas=1, kind="StatefulSet", service_port=5432,
        pod_started=[s.ago(60 * 24 * 6)]))
    s.pending_pod("monitoring", "loki-compactor-retention-29301240-8xwqd", "loki-retention",
                  "docker.io/grafana/loki:3.2.1", cpu="2", memory="16Gi", since=s.ago(55),
                  message="0/4 nodes are available: 4 Insufficient memory. preemption: 0/4 "
                  "nodes are available: 4 No preemption victims found for incoming pod.")

    for i, ref in enumerate(sess):
        s.cluster.event("accounts", "Pod", ref.pod, "Unhealthy", "Readiness probe failed: Get "
                        f"\"http://{ref.ip}:8080/healthz\": context deadline exceeded",
                        first=s.ago(25 - 3 * i), last=s.ago(9 - i), count=4, type_="Warning",
                        host=ref.node)

    # --- logs
    def sess_line(t: datetime) -> Line | None:
        r = s.rng.random()
        sid = f"sess:{s.rng.getrandbits(64):016x}"
        if t >= full and r < 0.45:
            return ("error", f"cache write failed: SETEX {sid} 2592000: {OOM} falling back to "
                    f"postgres session store ({s.rng.randrange(300, 2400)}ms)",
                    {"error.type": "redis.Error", "http.response.status_code": 200})
        if r < 0.85:
            return ("info", f"GET /v1/session 200 cache={s.pick(['hit', 'hit', 'miss'])} "
                    f"{s.rng.randrange(2, 20)}ms", {"http.response.status_code": 200})
        return ("warn", "jwks refresh took 820ms (idp.acme.example)", {})

    for ref in sess:
        s.logs.add(sess_roll + timedelta(seconds=40), ref, "info", "session-api 6.3.0 started: "
                   "store=redis fallback=postgres ttl=720h")
        s.chatter(ref, sess_line, every_s=10, minutes=150)

    def cart_line(t: datetime) -> Line | None:
        r = s.rng.random()
        if t >= full and r < 0.35:
            return ("error", f"cart cache: SET cart:{s.rng.randrange(10**6, 10**7)}: {OOM} "
                    "(serving from postgres)", {"error.type": "redis.ResponseError"})
        return ("info", f"GET /v2/cart 200 {s.rng.randrange(5, 40)}ms",
                {"http.response.status_code": 200})

    for ref in cart:
        s.chatter(ref, cart_line, every_s=14, minutes=150)

    def pg_line(t: datetime) -> Line | None:
        if t >= full and s.rng.random() < 0.7:
            return ("warn", f"duration: {s.rng.randrange(1200, 6000)}.412 ms  statement: "
                    "INSERT INTO sessions (id, user_id, data, expires_at) VALUES ($1,$2,$3,$4) "
                    "ON CONFLICT (id) DO UPDATE SET data = EXCLUDED.data", {})
        return ("info", f"checkpoint complete: wrote {s.rng.randrange(100, 3000)} buffers", {})

    s.chatter(pg[0], pg_line, every_s=20, minutes=150)
    s.chatter(redis[0], lambda t: s.pick([
        ("info", "1:M 22 Sep 2026 Background saving started by pid 4411", {}),
        ("info", "4411:C 22 Sep 2026 DB saved on disk", {}),
        ("info", "1:M 22 Sep 2026 Background saving terminated with success", {})]),
        every_s=600, minutes=170)

    # --- metrics
    lab = {"namespace": "cache", "pod": "sessions-redis-0", "instance": "sessions-redis-0:9121"}

    def used(t: datetime) -> float:
        if t >= full:
            return MAXMEM - s.rng.randrange(20_000, 400_000)
        return MAXMEM - (full - t).total_seconds() * 9_500

    s.gauge("redis_memory_used_bytes", "memory_used_bytes metric", lab, used)
    s.gauge("redis_memory_max_bytes", "memory_max_bytes metric", lab, lambda t: MAXMEM)
    s.gauge("redis_config_maxmemory", "config_maxmemory metric", lab, lambda t: MAXMEM)
    s.gauge("redis_db_keys", "Total number of keys by DB", {**lab, "db": "db0"},
            lambda t: round(used(t) / 1480))
    s.counter("redis_evicted_keys", "evicted_keys metric", lab, lambda t: 0.0)
    for cmd, before, after in (("get", 420.0, 440.0), ("setex", 95.0, 0.0), ("set", 30.0, 0.0)):
        s.counter("redis_commands_processed", "Total number of calls per command",
                  {**lab, "cmd": cmd}, switch(full, before, after))
    for cmd, r in (("setex", 96.0), ("set", 31.0)):
        s.counter("redis_commands_rejected_calls", "Total number of errors within command "
                  "execution per command", {**lab, "cmd": cmd},
                  switch(full, 0.0, r))
    s.usage(redis[0], 0.3, lambda t: min(used(t), MAXMEM) * 1.12, cpu_limit=1)
    for ref in sess:
        s.http(ref, "/v1/session", lambda t: 30.0, lambda t: 0.01 if t >= full else 0.001,
               lambda t: 0.9 if t >= full else 0.012, method="POST")
    s.usage(pg[0], lambda t: 3.6 if t >= full else 0.9, 6.2e9, cpu_limit=4,
            throttle=lambda t: 0.05)

    s.write(root, title="Logins and carts slow, the database is pegged",
            report="login and cart are super slow for ~30 min and accounts-pg CPU is pegged "
            "at 90% - is postgres dying? session-api had a deploy around 1pm too.",
            category="dependency_failure", culprit=("StatefulSet", "cache", "sessions-redis"),
            evidence=[OOM, "maxmemory-policy noeviction", "redis_memory_used_bytes",
                      "redis_evicted_keys_total"],
            fix="Set maxmemory-policy volatile-lru (or allkeys-lru) on sessions-redis and/or "
            "raise maxmemory, then let the callers write to the cache again.")
