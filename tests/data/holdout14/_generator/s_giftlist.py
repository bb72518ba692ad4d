"""Wedding gift lists: guests get intermittent errors when adding or reserving gifts this
evening. giftlist-web (Node.js server-side rendering) runs with
NODE_OPTIONS=--max-old-space-size=1536 inside a 1Gi memory limit: V8 believes it may grow
its heap to 1.5 GiB, so under the evening's traffic (a TV wedding show sent visitors from
about 18:50) the heap grows past the cgroup limit and the kernel kills the container
(OOMKilled, exit 137) every 20-30 minutes on each pod; no "heap out of memory" message is
ever printed. The signal is mainly in the metrics (working set sawtooth up to the 1Gi
limit, restart counters) and in the containers' last state. Red herrings: giftlist-mailer
rolled out 51 min before the onset in the same namespace, an alert-looking event loop lag
warning in giftlist-web, an old OOM restart of guest-rsvp three days ago, a CPU-throttled
but harmless thumbnail-worker, and a payment provider with a few ordinary timeouts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.scenario_tools.common import (
    MIB,
    Story,
    const,
    container_metrics,
    deployment_metrics,
    http_metrics,
    truth,
)
from tests.scenario_tools.kube import Ctr, Template, ended, http_probe, running
from tests.scenario_tools.parts import app, neighbour, rollout
from tests.scenario_tools.sim import Run, container_status, deaths, restart_events

from .kit14 import base, chatter

ID = "gift-list-adds-failing"
NOW = datetime(2028, 6, 14, 19, 36, tzinfo=UTC)
NS = "giftlist"
REG = "registry.gitlab.com/wedlist/platform"
LIMIT = 1024.0


def build() -> Story:
    s = Story(
        id=ID, title="Gift list errors for wedding guests this evening", now=NOW,
        report="""\
Wedding guests keep getting "something went wrong" when they add or reserve a gift on the
couples' gift lists, it works again after a refresh. Started around 19:00-19:10, lots of traffic
tonight after the TV show mentioned us. Please check the gift list site.
""",
        truth=truth(
            "oom_killed", "Deployment", NS, "giftlist-web",
            ["OOMKilled", "--max-old-space-size=1536", "1Gi", "137"],
            "giftlist-web lets V8 grow its heap to 1.5 GiB (--max-old-space-size=1536) "
            "inside a 1Gi memory limit; under tonight's traffic the working set reaches the "
            "limit and the containers are OOMKilled (exit 137) every 20-30 minutes. Set "
            "--max-old-space-size to about 75% of the limit (768) or raise the limit to 2Gi, "
            "and scale out for the evening traffic."),
        hours=3.0)
    c = s.cluster
    onset = NOW - timedelta(minutes=46, seconds=40)
    t0 = onset.timestamp()
    node_list = base(s, [NS, "media", "payments"], 4, subnet=72, instance="r6i.large")

    # ---- giftlist-web: three pods, a sawtooth up to the limit after the onset
    ctr = Ctr("giftlist-web", f"{REG}/giftlist-web:11.4.2", port=3000,
              requests={"cpu": "500m", "memory": "768Mi"}, limits={"memory": "1Gi"},
              env={"NODE_ENV": "production", "NODE_OPTIONS": "--max-old-space-size=1536",
                   "SSR_CACHE_ENTRIES": "20000", "API_URL": "http://giftlist-api.giftlist.svc"},
              readiness=http_probe("/healthz/ready", delay=8),
              liveness=http_probe("/healthz/live", delay=20, period=20))
    tpl = Template([ctr], service_account="giftlist-web",
                   annotations={"prometheus.io/scrape": "true", "prometheus.io/port": "3000"})
    deployed = s.ago(days=3, hours=5, minutes=21)
    work = c.workload("Deployment", NS, "giftlist-web", tpl, replicas=3,
                      created=s.ago(days=220))
    rs = c.revision(work, 27, deployed, replicas=3)
    c.service(NS, "giftlist-web", {"app.kubernetes.io/name": "giftlist-web"},
              created=s.ago(days=220))
    pods, all_runs, curves = [], [], []
    for i in range(3):
        plateau = s.rng.uniform(610, 680)
        growth = s.rng.uniform(38, 46)  # MiB a minute under the evening load
        first = deployed + timedelta(seconds=25 + 31 * i)
        runs, start, t = [], first, first
        while True:
            # memory at x: warm-up to the plateau, then growth once the load is on
            def mem(x: float, st: float = start.timestamp(), p: float = plateau,
                    g: float = growth, hot_from: float = t0 + 60 * i) -> float:
                warm = min(p, 190 + 6.0 * (x - st) / 60)
                hot = max(0.0, x - max(st, hot_from)) / 60
                return warm + g * hot * (0.6 if st < t0 else 1.0)
            t = start
            end = None
            while t <= NOW:
                if mem(t.timestamp()) >= LIMIT:
                    end = t - timedelta(seconds=s.rng.randrange(5, 50))
                    break
                t += timedelta(seconds=60)
            runs.append((Run(start, end), mem))
            if end is None:
                break
            start = end + timedelta(seconds=11 + s.rng.uniform(0.2, 1.4))
        name = f"{rs['metadata']['name']}-{c.token(5)}"
        plain = [r for r, _ in runs]
        status = container_status(plain, name, NS, "giftlist-web", reason="OOMKilled",
                                  code=137, uid=c.uid("Pod", NS, name))
        pod = c.pod(work, rs, node=node_list[i], created=first - timedelta(seconds=7),
                    statuses={"giftlist-web": status}, name=name,
                    ready_since=plain[-1].start + timedelta(seconds=9))
        restart_events(s, pod, "giftlist-web", plain, now=NOW, image=ctr.image)
        pods.append(pod)
        all_runs.append(plain)
        curves.append(runs)

    def memory_of(runs: list) -> object:
        def value(t: int) -> float | None:
            for run, mem in runs:
                if run.start.timestamp() <= t and (run.end is None or t < run.end.timestamp()):
                    return min(mem(t), LIMIT - 3) * MIB
            return None
        return value

    def load(t: int) -> float:
        return 9.0 if t < t0 else 9.0 + 16.0 * min(1.0, (t - t0) / 600)

    for i, (pod, runs, plain) in enumerate(zip(pods, curves, all_runs, strict=True)):
        kills = [int(d.timestamp()) for d in deaths(plain)]
        container_metrics(s, pod, "giftlist-web", memory=memory_of(runs),
                          cpu=lambda t: 0.12 + 0.03 * load(t) / 3, restarts=kills,
                          limit_memory=LIMIT * MIB)
        http_metrics(s, "giftlist-web", pod, rps=lambda t: load(t) / 3, codes={
            "200": const(0.975), "302": const(0.02),
            "500": lambda t: 0.001 if t < t0 else 0.006}, median=const(0.11),
            resets=kills)
        s.metrics.gauge("kube_pod_container_status_last_terminated_reason",
                        {"namespace": NS, "pod": pod["metadata"]["name"],
                         "container": "giftlist-web", "reason": "OOMKilled"},
                        [(t, 1.0) for t in s.times if kills and t >= kills[0] + 30],
                        "Describes the last reason the container was in terminated state.")
        node = next(n for n in node_list if n["metadata"]["name"] == pod["spec"]["nodeName"])
        for k, d in enumerate(deaths(plain)):
            if d >= NOW - timedelta(hours=1):
                c.event(node, "SystemOOM", "System OOM encountered, victim process: node, "
                        f"pid: {31000 + 977 * k + 53 * i}", first=d, type_="Warning",
                        host=pod["spec"]["nodeName"])
        killed = [r for r in plain if r.end is not None][-1]
        d = killed.end
        assert d is not None
        s.pod_log(pod, "giftlist-web", [
            f"{_stamp(killed.start + timedelta(seconds=2))}.114Z INFO  giftlist-web 11.4.2 "
            "listening on :3000 (node v20.15.1, max-old-space 1536 MB)",
            f"{_stamp(d - timedelta(seconds=40))}.502Z INFO  GET /list/anna-and-jonas-2028 "
            "200 142ms",
            f"{_stamp(d - timedelta(seconds=18))}.077Z WARN  event loop lag 212ms "
            "(threshold 200ms)",
            f"{_stamp(d - timedelta(seconds=3))}.930Z INFO  POST /api/reservations 201 388ms",
        ], previous=True)
    ready = lambda t: 3.0 - sum(  # noqa: E731
        1 for p in all_runs for r in p if r.end and r.end.timestamp() <= t < r.end.timestamp() + 25)
    deployment_metrics(s, work, available=ready)
    chatter(s, pods, "giftlist-web", "giftlist-web", [
        ("info", "GET /list/mara-und-felix 200 97ms", {"http.response.status_code": 200}),
        ("info", "POST /api/reservations 201 212ms", {"http.response.status_code": 201}),
        ("info", "ssr cache hit ratio 0.91 (18211 entries)", {}),
        ("warn", "ALERT event loop lag 212ms (threshold 200ms)", {}),
    ], 300)
    chatter(s, pods, "giftlist-web", "giftlist-web", [
        ("error", "POST /api/reservations 500 upstream giftlist-api socket hang up",
         {"http.response.status_code": 500, "error.type": "ECONNRESET"}),
        ("info", "GET /list/lea-tom-hochzeit 200 131ms", {"http.response.status_code": 200}),
        ("warn", "ALERT event loop lag 341ms (threshold 200ms)", {}),
    ], 90, start=onset)

    # ---- giftlist-mailer: rolled out 51 min before the onset
    def mailer(version: str) -> Ctr:
        return Ctr("giftlist-mailer", f"{REG}/giftlist-mailer:{version}", port=8080,
                   requests={"cpu": "100m", "memory": "128Mi"}, limits={"memory": "256Mi"},
                   readiness=http_probe("/ready"))
    roll = rollout(s, NS, "giftlist-mailer", mailer, old="2.3.0", new="2.4.0",
                   at=onset - timedelta(minutes=51, seconds=5), revision=35, replicas=2,
                   node_list=node_list)
    for pod in roll.new_pods + roll.old_pods:
        level = s.rng.uniform(90, 110) * MIB
        container_metrics(s, pod, "giftlist-mailer", memory=lambda t, b=level: b)
    chatter(s, roll.new_pods, "giftlist-mailer", "giftlist-mailer", [
        ("info", "reservation confirmation sent to guest g_11820", {}),
        ("warn", "smtp 421 4.7.0 try again later (relay throttling), retry in 60s", {}),
        ("info", "giftlist-mailer 2.4.0: thank-you card templates reloaded", {}),
    ], 50, start=onset - timedelta(minutes=51))

    # ---- other services
    _, api_pods = app(s, NS, "giftlist-api", f"{REG}/giftlist-api:7.9.0", node_list,
                      replicas=2, revision=61, rps=lambda t: load(t) / 2,
                      codes={"200": const(0.99), "409": const(0.01)}, median=const(0.04),
                      cpu=const(0.09), memory_mib=260, histogram=False,
                      rollout_at=s.ago(days=5, hours=2))
    neighbour(s, NS, "guest-rsvp", f"{REG}/guest-rsvp:1.6.3", node_list, replicas=2,
              memory_mib=180, logs=[("info", "rsvp accepted for event ev_2231 (2 guests)", {})],
              restarts={1: running(s.ago(days=3, hours=1), restarts=1, last=ended(
                  "OOMKilled", 137, s.ago(days=5, hours=2), s.ago(days=3, hours=1,
                                                                 seconds=13)))})
    app(s, "media", "thumbnail-worker", f"{REG}/thumbnail-worker:3.0.2", node_list,
        replicas=2, revision=12, rps=const(0.4), codes={"200": const(1.0)},
        median=const(0.9), cpu=const(0.48), memory_mib=310, histogram=False,
        limits={"cpu": "500m", "memory": "512Mi"}, throttle=const(0.38),
        rollout_at=s.ago(days=4))
    neighbour(s, "payments", "gift-cash-psp", f"{REG}/gift-cash-psp:2.2.1", node_list,
              replicas=2, memory_mib=200, rps=0.6, codes={"200": 0.993, "504": 0.007},
              logs=[("info", "cash gift pledge captured (EUR 50.00)", {}),
                    ("warn", "acquirer timeout after 6s, retried ok", {"error.type": "Timeout"})],
              n_logs=24)
    assert api_pods
    return s


def _stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S")
