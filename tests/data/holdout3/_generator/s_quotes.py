"""Motor insurance: online quotes got slow. quote-pricer 7.15.0 (rolled out at 10:55) adds a
"regional risk" step that queries the claims frequency of the customer's postcode on every
quote; the previous release had no such step. Every quote now waits 1-4 s on it. Nothing
errs, nothing restarts: only the latency histogram, the slow-calculation log lines of the
new pods and the rollout itself tell."""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import partial

from tests.data.holdout._generator.base import daemonset, gauge, set_times
from tests.data.holdout2._generator.kit import (
    NodeKind,
    app_counter,
    cpu_seconds,
    deploy,
    drift,
    requests,
    working_set,
)
from tests.scenario_tools.common import MIB, truth
from tests.scenario_tools.kube import Ctr, Obj, http_probe, iso, running, tcp_probe
from tests.scenario_tools.telemetry import histogram_points

from .kit3 import (
    Incident,
    chatter,
    ghosts,
    hetzner_nodes,
    log_pod,
    namespaces,
    quiet,
    ready_since,
    rolling_events,
    steady,
    times_of,
)

ID = "motor-quotes-slow"
NOW = datetime.fromisoformat("2027-03-18T11:42:00+00:00")
NS = "underwriting"
REG = "registry.gitlab.com/kfz-direkt"
OLD, NEW = "7.14.2", "7.15.0"
BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


def build() -> Incident:
    s = Incident(
        id=ID,
        title="Motor insurance quotes take several seconds",
        now=NOW,
        report="""\
Web team here. Since late morning the "Angebot berechnen" step on kfz-direkt.de takes 3-5
seconds instead of well under a second; the spinner just sits there. No errors on our side
and nothing deployed on the web today, but quote conversion is down ~20% since 11:00 and
brokers on the partner API are complaining too. Can you find out what's going on?
""",
        truth=truth(
            "bad_rollout", "Deployment", NS, "quote-pricer",
            ["7.15.0", "regional-risk", "Slow quote calculation",
             "http_server_requests_seconds", "deployment.kubernetes.io/revision: '42'"],
            "quote-pricer 7.15.0 (rolled out at 10:55) spends 1-4 s per quote in its new "
            "regional-risk step (a claims-frequency query per postcode): roll back to 7.14.2 "
            "(kubectl -n underwriting rollout undo deployment/quote-pricer) and cache or index "
            "the regional risk lookup before shipping it again."))
    set_times(s, 2.0, 60)
    c = s.cluster
    namespaces(s, {"default": 402, "kube-system": 402, NS: 388, "partners-api": 241})
    cpx41 = NodeKind("cpx41", "8", "15993116Ki", "8", "15993116Ki", "v1.31.6+k3s1",
                     "6.13.5-1-default", "openSUSE MicroOS", runtime="containerd://2.0.2-k3s2",
                     storage="157256952Ki", alloc_storage="152981236858")
    nodes = hetzner_nodes(s, 4, cluster="insure-prod", pool="agent-cpx41", kind=cpx41,
                          location="fsn1", subnet=1, days=5.8)

    # ---- quote-pricer: 3 pods of 7.14.2 replaced one by one from 10:55 on
    t0 = NOW - timedelta(minutes=47, seconds=12)

    def pricer(version: str) -> Ctr:
        return Ctr("quote-pricer", f"{REG}/pricing/quote-pricer:{version}", port=8080,
                   requests={"cpu": "1", "memory": "1536Mi"}, limits={"memory": "2Gi"},
                   env={"SPRING_PROFILES_ACTIVE": "prod",
                        "JAVA_TOOL_OPTIONS": "-XX:MaxRAMPercentage=70 -XX:+UseG1GC",
                        "TARIFF_SET": "KFZ-2027-Q1",
                        "SPRING_DATASOURCE_URL": "jdbc:postgresql://pg-pricing.int.kfz-direkt."
                        "de:5432/pricing"},
                   readiness=http_probe("/actuator/health/readiness", "http", delay=20,
                                        period=5),
                   liveness=http_probe("/actuator/health/liveness", "http", delay=60,
                                       period=20, timeout=2))
    old_at = s.ago(days=6, hours=3, minutes=12)
    pulls = [6.412, 5.981, 7.204]  # each new pod lands on a node without the image
    new_born: list[datetime] = []
    started: list[datetime] = []
    ready: list[datetime] = []
    gone: list[datetime] = []
    born = t0 + timedelta(seconds=1.2)
    for i in range(3):  # maxSurge 1, maxUnavailable 0: one new pod ready, one old pod gone
        new_born.append(born)
        started.append(born + timedelta(seconds=1.7 + pulls[i] + s.rng.uniform(0, 0.5)))
        ready.append(started[-1] + timedelta(seconds=s.rng.uniform(33, 39)))
        gone.append(ready[-1] + timedelta(seconds=1.1))
        born = gone[-1] + timedelta(seconds=0.4)
    work, pods = deploy(
        s, NS, "quote-pricer", [pricer(NEW)], replicas=3, nodes=nodes, revision=42,
        rollout=t0, old=(41, old_at, [pricer(OLD)]), born=lambda i: new_born[i],
        statuses=lambda i, name, st: {"quote-pricer": running(started[i])},
        labels={"app.kubernetes.io/name": "quote-pricer", "app.kubernetes.io/part-of":
                "underwriting", "team": "pricing"},
        template_labels={"app.kubernetes.io/version": NEW},
        old_template_labels={"app.kubernetes.io/version": OLD},
        annotations={"prometheus.io/scrape": "true", "prometheus.io/port": "8080",
                     "prometheus.io/path": "/actuator/prometheus"}, offset=1)
    for pod, when in zip(pods, ready, strict=True):
        ready_since(pod, when)
    rs_old, rs_new = work.revisions
    old_born = [old_at + timedelta(seconds=14 + 41 * i) for i in range(3)]
    old_pods = ghosts(s, rs_old, nodes[:3], old_born, gone)
    work.progressing = ("NewReplicaSetAvailable", f'ReplicaSet "{rs_new["metadata"]["name"]}" '
                        "has successfully progressed.", gone[-1] + timedelta(seconds=1))
    rolling_events(s, work, rs_old, rs_new, pods, old_pods,
                   image=f"{REG}/pricing/quote-pricer:{NEW}", size=287_412_554,
                   pull=lambda i: pulls[i])

    edge = [r.timestamp() for r in ready]

    def load(t: int) -> float:  # the morning's rise of quotes a second (whole service)
        hour = (t % 86400) / 3600
        return 6.0 + 9.0 * min(1.0, max(0.0, (hour - 8.2) / 3.0))

    def median(t: int, new: bool) -> float:
        return (0.92 + 0.05 * load(t)) if new else (0.074 + 0.002 * load(t))

    def median_of(new: bool, t: int) -> float:
        return median(t, new)

    def quotes(share: float, t: int) -> float:
        return load(t) / 3 * share

    def cores(new: bool, t: int) -> float:
        return (0.21 if not new else 0.27) + 0.021 * load(t) * s.rng.uniform(0.9, 1.1)

    def held(new: bool, t: int) -> float:
        return max(0.0, round((0.9 if not new else 4.6) * load(t) / 8 * s.rng.uniform(0.6, 1.4)))

    fam = s.metrics.family("http_server_requests_seconds", "histogram",
                           "Duration of HTTP server request handling", buckets=BUCKETS)
    every = [(p, False) for p in old_pods] + [(p, True) for p in pods]
    for pod, new in every:
        name = pod["metadata"]["name"]
        times = times_of(s, pod)
        if new:
            times = [t for t in times if t >= edge[pods.index(pod)] - 5]

        def rps(t: int) -> float:
            return load(t) / 3

        labels = {"namespace": NS, "pod": name, "uri": "/api/v2/quotes"}
        fam.add(labels, histogram_points(times, BUCKETS, rps, partial(median_of, new), s.rng))
        for result, share in (("quoted", 0.931), ("error", 0.003)):
            app_counter(s, "quote_requests_total", {"namespace": NS, "pod": name,
                                                    "result": result}, times,
                        partial(quotes, share),
                        "Quotes requested, by result.")
        working_set(s, pod, "quote-pricer", drift(s, (1090 if not new else 1160) * MIB, 0.03),
                    times=times_of(s, pod))
        cpu_seconds(s, pod, "quote-pricer", partial(cores, new), times=times_of(s, pod))
        gauge(s, "hikaricp_connections_active", {"namespace": NS, "pod": name,
                                                 "pool": "HikariPool-1"},
              partial(held, new),
              "Active connections", times=times)

    # the pods' own words
    tariffs = ("KFZ-2027-Q1",)
    for pod, new in every:
        name = pod["metadata"]["name"]
        birth = datetime.fromisoformat(pod["metadata"]["creationTimestamp"].replace("Z",
                                                                                     "+00:00"))
        if new:
            st = started[pods.index(pod)]
            boot = [(0.4, "info", f"Starting QuotePricerApplication v{NEW} using Java 21.0.6 "
                     "with PID 1"),
                    (1.9, "info", "The following 1 profile is active: \"prod\""),
                    (9.7, "info", "HikariPool-1 - Start completed."),
                    (14.2, "info", "Loaded tariff set KFZ-2027-Q1: 1184 rules, 412 vehicle "
                     "classes, 38 regional classes"),
                    (14.9, "info", "Regional risk adjustment enabled (source=jdbc, "
                     "table=risk.claims_frequency_by_plz, cache=none)"),
                    (31.1, "info", "Tomcat started on port 8080 (http) with context path '/'"),
                    (31.4, "info", "Started QuotePricerApplication in 30.2 seconds (process "
                     "running for 31.4)")]
            for off, level, msg in boot:
                s.logs.add(st + timedelta(seconds=off), level, msg, namespace=NS, pod=name,
                           container="quote-pricer", service="quote-pricer",
                           node=pod["spec"]["nodeName"], **{"log.logger":
                                                            "de.kfzdirekt.pricing.Boot"})
        first = max(birth + timedelta(seconds=40), NOW - timedelta(hours=2))
        end = (datetime.fromtimestamp(pod["metadata"]["_deleted"], NOW.tzinfo)
               if "_deleted" in pod["metadata"] else NOW)
        t = first
        while t < end:
            t += timedelta(seconds=s.rng.uniform(55, 140))
            if t >= end:
                break
            plz = f"{s.rng.randrange(1, 99):02d}{s.rng.randrange(0, 999):03d}"
            qid = f"Q-{s.rng.randrange(10**7, 10**8)}"
            if new:
                risk = int(s.rng.uniform(700, 3900))
                total = risk + s.rng.randrange(35, 70)
                if total > 1500:
                    msg = (f"Slow quote calculation: {total} ms for {qid} (tariff="
                           f"{tariffs[0]}, plz={plz}; base={s.rng.randrange(28, 51)}ms, "
                           f"regional-risk={risk}ms, discounts={s.rng.randrange(5, 14)}ms)")
                    level = "warn"
                else:
                    msg = f"Quote {qid} calculated in {total} ms (tariff={tariffs[0]}, plz={plz})"
                    level = "info"
            else:
                total = int(s.rng.uniform(48, 160))
                msg = f"Quote {qid} calculated in {total} ms (tariff={tariffs[0]}, plz={plz})"
                level = "info"
            s.logs.add(t, level, msg, namespace=NS, pod=name, container="quote-pricer",
                       service="quote-pricer", node=pod["spec"]["nodeName"],
                       **{"log.logger": "de.kfzdirekt.pricing.QuoteService",
                          "event.duration": total * 1_000_000})
        log_pod(s, pod, "quote-pricer", "quote-pricer", [
            ("warn", "Vehicle HSN/TSN 7909/AAK not in tariff vehicle classes, using class 99",
             {"log.logger": "de.kfzdirekt.pricing.VehicleClassResolver"}),
            ("info", "Quote declined: driver age 17 below minimum for tariff KFZ-2027-Q1",
             {"log.logger": "de.kfzdirekt.pricing.QuoteService"}),
        ], 6)
    gauge(s, "kube_deployment_status_replicas_available", {"namespace": NS,
                                                           "deployment": "quote-pricer"},
          lambda t: 3.0, "The number of available replicas per deployment.")

    # ---- quote-web: the BFF in front of it (symptom only)
    web = Ctr("quote-web", f"{REG}/web/quote-web:2027.3.16-1", port=3000,
              requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "512Mi"},
              env={"NODE_ENV": "production", "PRICER_URL": "http://quote-pricer.underwriting."
                   "svc.cluster.local", "PRICER_TIMEOUT_MS": "10000"},
              readiness=http_probe("/healthz", "http", delay=5))
    _, webs = steady(s, NS, "quote-web", [web], nodes=nodes, replicas=2, revision=118,
                     rollout=s.ago(days=2, hours=4, minutes=51), offset=2)
    for pod in webs:
        requests(s, pod, "quote-web", rps=lambda t: load(t) * 0.62, codes={
            "200": lambda t: 0.989, "400": lambda t: 0.011})
    chatter(s, webs, "quote-web", "quote-web", [
        ("info", "POST /api/quote 200", {"http.response.status_code": 200}),
        ("info", "GET /kfz/angebot 200", {"http.response.status_code": 200}),
        ("warn", "POST /api/quote 400: invalid Erstzulassung date '31.02.2019'",
         {"http.response.status_code": 400}),
        ("warn", "CSP report: blocked inline script from https://cdn.cookie-consent.example",
         {}),
    ], 70)
    slow_from = ready[0] + timedelta(seconds=20)
    for pod in webs:
        t = slow_from
        while True:
            t += timedelta(seconds=s.rng.uniform(50, 150))
            if t >= NOW:
                break
            s.logs.add(t, "warn", f"upstream quote-pricer POST /api/v2/quotes took "
                       f"{s.rng.randrange(1600, 4600)}ms (budget 1200ms)",
                       namespace=NS, pod=pod["metadata"]["name"], container="quote-web",
                       service="quote-web", node=pod["spec"]["nodeName"])

    # ---- vehicle-lookup: harmless warnings and a restart two days ago
    lookup = Ctr("vehicle-lookup", f"{REG}/pricing/vehicle-lookup:3.2.0", port=8080,
                 requests={"cpu": "100m", "memory": "384Mi"}, limits={"memory": "512Mi"},
                 readiness=http_probe("/ready", "http", delay=5))
    oom_at = s.ago(days=2, hours=7, minutes=33)
    _, lookups = steady(s, NS, "vehicle-lookup", [lookup], nodes=nodes, replicas=2,
                        revision=23, rollout=s.ago(days=5, hours=1),
                        restarted={1: (oom_at, "OOMKilled", 137)}, offset=3)
    quiet(s, lookups, "vehicle-lookup", 301)
    chatter(s, lookups, "vehicle-lookup", "vehicle-lookup", [
        ("info", "HSN/TSN 0603/BJY served from cache", {}),
        ("warn", "KBA lookup cache miss for HSN/TSN 8253/AKJ, fetching from upstream", {}),
        ("info", "HSN/TSN 0005/AKL served from cache", {}),
    ], 60)

    # ---- rating-cache: a Redis with its long-standing AOF warning
    redis = Ctr("redis", "docker.io/library/redis:7.4.2-alpine", port=6379, port_name="redis",
                requests={"cpu": "100m", "memory": "512Mi"}, limits={"memory": "1Gi"},
                args=["--appendonly", "yes", "--maxmemory", "768mb"],
                readiness=tcp_probe("redis"))
    _, caches = steady(s, NS, "rating-cache", [redis], nodes=nodes, replicas=1, revision=6,
                       rollout=s.ago(days=5, hours=22), service=6379, target="redis")
    quiet(s, caches, "redis", 402)
    chatter(s, caches, "redis", "rating-cache", [
        ("warn", "Asynchronous AOF fsync is taking too long (disk is busy?). Writing the AOF "
         "buffer without waiting for fsync to complete, this may slow down Redis.", {}),
        ("info", "Background append only file rewriting started by pid 412", {}),
        ("info", "DB saved on disk", {}),
    ], 14)

    # ---- partners-api: brokers call the pricer too; a probe blip 25 minutes ago
    gw = Ctr("broker-gateway", f"{REG}/partners/broker-gateway:1.44.0", port=8080,
             requests={"cpu": "150m", "memory": "256Mi"}, limits={"memory": "384Mi"},
             readiness=http_probe("/health", "http", delay=5, timeout=1))
    _, gws = steady(s, "partners-api", "broker-gateway", [gw], nodes=nodes, replicas=2,
                    revision=61, rollout=s.ago(days=3, hours=6))
    chatter(s, gws, "broker-gateway", "broker-gateway", [
        ("info", "POST /v1/quotes broker=B-2231 200", {"http.response.status_code": 200}),
        ("warn", "broker B-0417 exceeded 50 requests/min, answering 429",
         {"http.response.status_code": 429}),
    ], 40)
    chatter(s, gws, "broker-gateway", "broker-gateway", [
        ("warn", "quote-pricer answered after 3.2s for broker B-2231 (SLO 1.5s)", {}),
    ], 12, start=slow_from)
    blip = NOW - timedelta(minutes=25, seconds=40)
    ip = gws[0]["status"]["podIP"]
    c.event(gws[0], "Unhealthy", f'Readiness probe failed: Get "http://{ip}:8080/health": '
            "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            first=blip, type_="Warning", field_path="spec.containers{broker-gateway}")

    # ---- kube-system of a kube-hetzner cluster
    csi = Ctr("hcloud-csi-driver", "docker.io/hetznercloud/hcloud-csi-driver:v2.12.0",
              port=9189, port_name="metrics", requests={"cpu": "10m", "memory": "40Mi"},
              limits={"memory": "80Mi"})
    _, csis = daemonset(s, "kube-system", "hcloud-csi-node", [csi], node_list=nodes,
                        generation=3, since=s.ago(days=5.7),
                        labels={"app.kubernetes.io/name": "hcloud-csi",
                                "app.kubernetes.io/component": "node"})
    chatter(s, csis, "hcloud-csi-driver", "hcloud-csi-node", [
        ("info", "level=info component=idempotent-node-server msg=\"node get volume stats\" "
         "volume-id=101938274", {}),
        ("warn", "level=warn msg=\"unable to get metadata from hetzner cloud api, retrying\" "
         "err=\"context deadline exceeded\"", {}),
    ], 16)
    dns = Ctr("coredns", "docker.io/rancher/mirrored-coredns-coredns:1.12.0", port=53,
              port_name="dns", requests={"cpu": "100m", "memory": "70Mi"},
              limits={"memory": "170Mi"}, args=["-conf", "/etc/coredns/Corefile"],
              readiness=http_probe("/ready", 8181, delay=0, period=2))
    steady(s, "kube-system", "coredns", [dns], nodes=nodes, replicas=2, revision=3,
                     rollout=s.ago(days=5.7), service=None, labels={"k8s-app": "kube-dns"})
    _fix_timestamps(pods, started)
    return s


def _fix_timestamps(pods: list[Obj], started: list[datetime]) -> None:
    for pod, st in zip(pods, started, strict=True):
        for cond in pod["status"]["conditions"]:
            if cond["type"] == "Initialized":
                cond["lastTransitionTime"] = iso(st - timedelta(seconds=1))
