"""6. quote-engine-thread-exhaustion: after the renewal traffic rise, quote-engine's unbounded
carrier fan-out pool grows to the pod's PID limit; new threads fail with "unable to create
native thread" while heap and container memory stay comfortable."""

from __future__ import annotations

import random
from datetime import timedelta

from tests.data.holdout34._generator import fleet, kit
from tests.data.holdout34._generator.fleet import MiB
from tests.data.holdout34._generator.kit import Scenario

NOW = kit.at("2026-11-30T10:20:00Z")
RISE = kit.at("2026-11-30T09:00:00Z")
PID_LIMIT = 1024
BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0)
OOM = (
    "java.lang.OutOfMemoryError: unable to create native thread: possibly out of memory or "
    "process/resource limits reached"
)
STACK = [
    OOM,
    "\tat java.base/java.lang.Thread.start0(Native Method)",
    "\tat java.base/java.lang.Thread.start(Thread.java:1553)",
    "\tat java.base/java.lang.Thread.start(Thread.java:1534)",
    "\tat java.base/java.util.concurrent.ThreadPoolExecutor.addWorker(ThreadPoolExecutor.java:945)",
    "\tat java.base/java.util.concurrent.ThreadPoolExecutor.execute(ThreadPoolExecutor.java:1364)",
    "\tat java.base/java.util.concurrent.CompletableFuture.asyncSupplyStage"
    "(CompletableFuture.java:1782)",
    "\tat java.base/java.util.concurrent.CompletableFuture.supplyAsync"
    "(CompletableFuture.java:2005)",
    "\tat com.harrowgate.underwriting.rating.CarrierFanout.requestQuotes(CarrierFanout.java:88)",
    "\tat com.harrowgate.underwriting.quote.QuoteService.price(QuoteService.java:141)",
    "\tat com.harrowgate.underwriting.quote.QuoteController.create(QuoteController.java:57)",
    "\t... 48 common frames omitted",
]


def build() -> Scenario:
    rng = random.Random(3406)
    sc = Scenario(
        "quote-engine-thread-exhaustion",
        "quote-engine returning random 500s",
        NOW,
        "quote-engine is throwing random 500s since ~9:45, maybe 5-8% of quote requests. brokers "
        "are complaining.\n"
        "it's not memory, heap graphs are flat around 45% and no restarts. renewals season so "
        "traffic is up ~2x today.\n"
        "could the carrier rating APIs be the problem? aviva's one was slow last week\n",
        {
            "category": "resource_exhaustion",
            "culprit": {"kind": "Deployment", "namespace": "underwriting", "name": "quote-engine"},
            "evidence": [
                "unable to create native thread",
                "pthread_create failed (EAGAIN)",
                "jvm_threads_live_threads",
            ],
            "fix": "Bound the carrier fan-out executor (fixed pool with a queue) so threads stop "
            "growing with traffic, "
            "and/or raise the pod PID limit; the heap is not the problem",
        },
    )
    created = NOW - timedelta(days=700)
    for n in ("underwriting", "brokers", "kube-system", "monitoring"):
        sc.add(kit.namespace(n, created))
    nodes = [f"uw-prod-np1-{i}" for i in ("6xq2p", "9kd7m", "c2lrt", "h8wzn", "p4fvb")]
    for i, n in enumerate(nodes):
        sc.add(
            kit.node(
                n,
                NOW - timedelta(days=21, hours=i),
                "16",
                "65842612Ki",
                {
                    "node.kubernetes.io/instance-type": "Standard_E16s_v5",
                    "kubernetes.azure.com/agentpool": "np1",
                    "topology.kubernetes.io/zone": f"uksouth-{i % 3 + 1}",
                },
                heartbeat=NOW - timedelta(seconds=17),
            )
        )
    times = fleet.grid(NOW, 3)
    rise_i = next(i for i, t in enumerate(times) if t >= RISE.timestamp())
    qc = kit.container(
        "quote-engine",
        "harrowgate.azurecr.io/underwriting/quote-engine:7.14.3",
        port=8080,
        cpu_req="2",
        mem_req="3Gi",
        cpu_lim="4",
        mem_lim="3Gi",
        readiness=kit.http_probe("/actuator/health/readiness"),
        liveness=kit.http_probe("/actuator/health/liveness", delay=90, failures=6),
        env={
            "JAVA_TOOL_OPTIONS": "-Xms1g -Xmx1536m -XX:+UseG1GC -Xss1m",
            "SERVER_TOMCAT_THREADS_MAX": "400",
            "RATING_CARRIERS": "aviva,axa,zurich,allianz,lv,rsa",
            "RATING_TIMEOUT_MS": "4000",
            "SPRING_PROFILES_ACTIVE": "prod",
        },
    )
    q = fleet.app(
        sc,
        rng,
        "underwriting",
        "quote-engine",
        [qc],
        nodes,
        replicas=4,
        created=created,
        rolled=NOW - timedelta(days=5, hours=2),
        revision=203,
        port=8080,
        annotations={"prometheus.io/scrape": "true", "prometheus.io/path": "/actuator/prometheus"},
        old=(NOW - timedelta(days=12), 202),
    )
    saturated = {}
    for k, p in enumerate(q.pods):
        pn = p["metadata"]["name"]
        threads, level = [], 300.0 + 6 * k
        for i in range(len(times)):
            if i >= rise_i:
                level = min(
                    PID_LIMIT - rng.randint(3, 9), level + (11.0 + 1.5 * k) * rng.uniform(0.6, 1.4)
                )
            else:
                level = 300 + 6 * k + rng.uniform(-8, 8)
            threads.append(round(level))
        saturated[pn] = next((i for i, v in enumerate(threads) if v >= PID_LIMIT - 12), len(times))
        fleet.container_metrics(
            sc,
            "underwriting",
            pn,
            "quote-engine",
            times,
            mem=lambda i, th=threads: 1520 * MiB + th[i] * 0.35 * MiB + (i % 7) * 4 * MiB,
            cpu=lambda i: 0.9 if i < rise_i else 1.7,
            mem_limit=3072 * MiB,
            cpu_limit=4.0,
            throttle=lambda i: 0.01,
            node_name=p["spec"]["nodeName"],
            rng=rng,
        )
        base = {"namespace": "underwriting", "pod": pn, "application": "quote-engine"}
        sc.metrics.gauge("jvm_threads_live_threads", base, list(zip(times, threads, strict=False)))
        sc.metrics.gauge(
            "container_threads",
            {"namespace": "underwriting", "pod": pn, "container": "quote-engine"},
            list(zip(times, [v + 2 for v in threads], strict=False)),
        )
        sc.metrics.gauge(
            "jvm_memory_used_bytes",
            {**base, "area": "heap", "id": "G1 Old Gen"},
            [(t, round((480 + (i % 30) * 9) * MiB)) for i, t in enumerate(times)],
        )
        sc.metrics.gauge(
            "jvm_memory_max_bytes",
            {**base, "area": "heap", "id": "G1 Old Gen"},
            [(t, 1536 * MiB) for t in times],
        )
        rate = [9.0 if i < rise_i else 18.5 for i in range(len(times))]
        err = [0.0 if i < saturated[pn] else 0.11 for i in range(len(times))]
        for status, share in (("200", lambda i, e=err: 1 - e[i]), ("500", lambda i, e=err: e[i])):
            sc.metrics.histogram(
                "http_server_requests_seconds",
                {
                    **base,
                    "uri": "/api/v3/quotes",
                    "method": "POST",
                    "status": status,
                    "outcome": "SUCCESS" if status == "200" else "SERVER_ERROR",
                },
                times,
                [rate[i] * share(i) * 60 for i in range(len(times))],
                lambda i, st=status: (0.62 if i < rise_i else 0.71) if st == "200" else 0.09,
                BUCKETS,
            )
        _logs(sc, rng, pn, times, saturated[pn], rise_i)
    _bystanders(sc, rng, nodes, created, times)
    return sc


def _logs(
    sc: Scenario, rng: random.Random, pn: str, times: list[int], sat: int, rise_i: int
) -> None:
    lines: list[str] = []
    uptime0 = kit.datetime.fromtimestamp(times[0], kit.UTC) - timedelta(days=5)
    for i in range(len(times) - 170, len(times)):
        base = kit.datetime.fromtimestamp(times[i], kit.UTC)
        n = 2 if i < rise_i else 4
        for _ in range(n):
            t = base + timedelta(seconds=rng.randint(0, 59), milliseconds=rng.randint(0, 999))
            thread = f"nio-8080-exec-{rng.randint(1, 400)}"
            if i >= sat and rng.random() < 0.35:
                msg = (
                    "Servlet.service() for servlet [dispatcherServlet] in context with path [] "
                    "threw exception "
                    f"[Handler dispatch failed: {OOM}] with root cause"
                )
                lines.append(
                    f"{kit.ts_ms(t)} ERROR 1 --- [quote-engine] [{thread}] "
                    f"o.a.c.c.C.[.[.[/].[dispatcherServlet]    : {msg}"
                )
                lines.extend(STACK)
                sc.docs.append(
                    kit.logdoc(
                        t,
                        "ERROR",
                        msg,
                        "quote-engine",
                        "underwriting",
                        pn,
                        "quote-engine",
                        **{
                            "log.logger": TOMCAT_LOGGER,
                            "process.thread.name": thread,
                            "error.type": "java.lang.OutOfMemoryError",
                            "error.message": OOM.split(": ", 1)[1],
                            "error.stack_trace": "\n".join(STACK),
                            "http.response.status_code": 500,
                        },
                    )
                )
                if rng.random() < 0.5:
                    up = (t - uptime0).total_seconds()
                    jvm = (
                        f'[{up:.3f}s][warning][os,thread] Failed to start thread "Unknown thread" '
                        "- pthread_create failed (EAGAIN) "
                        "for attributes: stacksize: 1024k, guardsize: 0k, detached."
                    )
                    lines.append(jvm)
                    sc.docs.append(
                        kit.logdoc(
                            t,
                            "WARN",
                            jvm,
                            "quote-engine",
                            "underwriting",
                            pn,
                            "quote-engine",
                            **{"log.logger": "jvm"},
                        )
                    )
            elif rng.random() < 0.04:
                carrier = rng.choice(["aviva", "axa", "zurich", "lv"])
                took = rng.randint(1500, 2400)
                msg = f"carrier {carrier} rating call took {took}ms (p95 budget 1500ms)"
                lines.append(
                    f"{kit.ts_ms(t)}  WARN 1 --- [quote-engine] [rating-{rng.randint(1, 900)}] "
                    f"c.h.u.rating.CarrierFanout              : {msg}"
                )
                sc.docs.append(
                    kit.logdoc(
                        t,
                        "WARN",
                        msg,
                        "quote-engine",
                        "underwriting",
                        pn,
                        "quote-engine",
                        **{"log.logger": "com.harrowgate.underwriting.rating.CarrierFanout"},
                    )
                )
            else:
                qid, price = rng.getrandbits(36), f"{rng.randint(180, 1400)}.{rng.randint(10, 99)}"
                msg = (
                    f"quote {qid:09x} priced product=HOME carriers=6 best={price} GBP "
                    f"in {rng.randint(380, 1100)}ms"
                )
                lines.append(
                    f"{kit.ts_ms(t)}  INFO 1 --- [quote-engine] [{thread}] "
                    f"c.h.u.quote.QuoteService                : {msg}"
                )
                sc.docs.append(
                    kit.logdoc(
                        t,
                        "INFO",
                        msg,
                        "quote-engine",
                        "underwriting",
                        pn,
                        "quote-engine",
                        **{
                            "log.logger": "com.harrowgate.underwriting.quote.QuoteService",
                            "process.thread.name": thread,
                        },
                    )
                )
    sc.log("underwriting", pn, "quote-engine", lines)


def _bystanders(
    sc: Scenario, rng: random.Random, nodes: list[str], created: kit.datetime, times: list[int]
) -> None:
    for ns, name, image, reps in (
        (
            "underwriting",
            "policy-admin",
            "harrowgate.azurecr.io/underwriting/policy-admin:3.8.0",
            3,
        ),
        (
            "underwriting",
            "document-renderer",
            "harrowgate.azurecr.io/underwriting/document-renderer:1.2.6",
            2,
        ),
        ("brokers", "broker-portal-api", "harrowgate.azurecr.io/brokers/portal-api:2026.11.2", 4),
    ):
        c = kit.container(
            name,
            image,
            port=8080,
            cpu_req="500m",
            mem_req="1Gi",
            mem_lim="2Gi",
            readiness=kit.http_probe("/ready"),
        )
        w = fleet.app(
            sc,
            rng,
            ns,
            name,
            [c],
            nodes[::-1],
            replicas=reps,
            created=created,
            rolled=NOW - timedelta(days=rng.randint(1, 6), hours=rng.randint(0, 10)),
            revision=rng.randint(20, 90),
        )
        for p in w.pods:
            fleet.container_metrics(
                sc,
                ns,
                p["metadata"]["name"],
                name,
                times,
                mem=lambda i: 800 * MiB,
                cpu=lambda i: 0.3,
                mem_limit=2048 * MiB,
                cpu_limit=None,
                rng=rng,
            )
        if name == "document-renderer":
            sc.add(
                kit.event(
                    ns,
                    "Pod",
                    w.names[0],
                    "FailedMount",
                    'MountVolume.SetUp failed for volume "fonts" : configmap "renderer-fonts-v2" '
                    "not found",
                    NOW - timedelta(minutes=50),
                    NOW - timedelta(minutes=44),
                    count=3,
                    warning=True,
                    host=w.pods[0]["spec"]["nodeName"],
                )
            )
    sc.add(
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": kit.meta("underwriting-quota", "underwriting", created),
            "spec": {
                "hard": {
                    "requests.cpu": "64",
                    "requests.memory": "192Gi",
                    "limits.memory": "256Gi",
                    "pods": "120",
                }
            },
            "status": {
                "hard": {
                    "requests.cpu": "64",
                    "requests.memory": "192Gi",
                    "limits.memory": "256Gi",
                    "pods": "120",
                },
                "used": {
                    "requests.cpu": "10500m",
                    "requests.memory": "17Gi",
                    "limits.memory": "22Gi",
                    "pods": "9",
                },
            },
        }
    )


TOMCAT_LOGGER = (
    "org.apache.catalina.core.ContainerBase.[Tomcat].[localhost].[/].[dispatcherServlet]"
)
STORIES = {"quote-engine-thread-exhaustion": build}
