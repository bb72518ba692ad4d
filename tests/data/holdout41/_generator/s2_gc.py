"""Shape 2: fare-engine 3.18.0 allocates far more per request; G1 pauses grow and latency
rises. No error, no OOM kill, no restart; revision 21 (3.17.2) was fine for days."""

from __future__ import annotations

from .fleet import counter, healthy, histogram, old_rs, series, wobble
from .kit import (
    Clock,
    Scenario,
    container,
    deployment,
    endpoints,
    event,
    http_probe,
    namespace,
    node,
    pod,
    replicaset,
    running,
    service,
    suffix,
    template,
)

NOW = "2026-11-26T15:32:00Z"
ROLL = 190  # minutes ago revision 22 rolled out


def build() -> Scenario:
    c = Clock(NOW)
    sc = Scenario(
        "fare-engine-sluggish-search",
        "Journey search slow, no errors",
        NOW,
        "journey search feels sluggish since lunchtime, p99 is ~3s on the grafana board and "
        "nothing is erroring. DB team says the fares replica is fine. could it be the new "
        "seat-map redis thing?\n",
        {
            "category": "bad_rollout",
            "culprit": {"kind": "Deployment", "namespace": "journeys", "name": "fare-engine"},
            "evidence": ["Pause Young", "3.18.0", "revision 22"],
            "fix": "Roll fare-engine back to revision 21 (3.17.2) and profile 3.18.0's allocations "
            "(the fare-rule cache rebuild per request) before re-releasing",
        },
    )
    nodes = [
        (
            f"gke-rail-prod-pool-b-{suffix('n' + str(i), 4)}-{suffix('m' + str(i), 4)}",
            f"10.128.0.{11 + i}",
        )
        for i in range(4)
    ]
    sc.objects += [namespace("journeys", c.ago(500 * 1440))]
    sc.objects += [
        node(
            n,
            c.ago(30 * 1440),
            c.ago(0.2),
            ip=ip,
            zone="europe-west2-b",
            cpu="16",
            memory="64Gi",
            kubelet="v1.30.5-gke.1014001",
            transition=c.ago(6 * 1440),
        )
        for n, ip in nodes
    ]
    lab = {"app": "fare-engine", "app.kubernetes.io/part-of": "journeys"}

    def tmpl(tag: str) -> dict:
        return template(
            lab,
            [
                container(
                    "fare-engine",
                    f"europe-docker.pkg.dev/ferrovia/prod/fare-engine:{tag}",
                    requests={"cpu": "1", "memory": "2Gi"},
                    limits={"memory": "2560Mi"},
                    port=8080,
                    readiness=http_probe("/actuator/health/readiness", 8080),
                    liveness=http_probe("/actuator/health/liveness", 8080, 20, 60),
                    env=[
                        {
                            "name": "JAVA_TOOL_OPTIONS",
                            "value": "-XX:+UseG1GC -Xms1536m -Xmx1536m -XX:MaxGCPauseMillis=100 "
                            "-Xlog:gc:stdout",
                        }
                    ],
                )
            ],
            annotations={
                "prometheus.io/scrape": "true",
                "prometheus.io/path": "/actuator/prometheus",
            },
        )

    new_t, old_t = tmpl("3.18.0"), tmpl("3.17.2")
    dep = deployment(
        "journeys",
        "fare-engine",
        lab,
        new_t,
        replicas=6,
        revision=22,
        created=c.ago(400 * 1440),
        progressed=c.ago(ROLL - 12),
        change_cause="deploy fare-engine 3.18.0 (pipeline #8812)",
    )
    rs_new = replicaset(dep, 22, new_t, replicas=6, created=c.ago(ROLL))
    rs_old = old_rs(sc, dep, old_t, 21, c.ago(9 * 1440))
    old_rs(sc, dep, tmpl("3.17.1"), 20, c.ago(23 * 1440))
    sc.objects += [dep, rs_new]
    pods = []
    for i in range(6):
        pn = f"{rs_new['metadata']['name']}-{suffix('fe' + str(i))}"
        st = c.ago(ROLL - 2 * i)
        p = pod(
            rs_new,
            new_t,
            pn,
            node_name=nodes[i % 4][0],
            host_ip=nodes[i % 4][1],
            ip=f"10.64.{i % 4}.{40 + i}",
            created=st,
            statuses=[
                running(
                    "fare-engine", new_t["spec"]["containers"][0]["image"], c.ago(ROLL - 2 * i - 1)
                )
            ],
        )
        pods.append(p)
    sc.objects += pods
    svc = service(
        "journeys",
        "fare-engine",
        {"app": "fare-engine"},
        80,
        8080,
        "10.96.14.201",
        c.ago(400 * 1440),
    )
    sc.objects += [svc, endpoints(svc, pods, 8080)]
    old_pods = [f"{rs_old['metadata']['name']}-{suffix('feo' + str(i))}" for i in range(6)]
    search = healthy(
        sc,
        c,
        "journeys",
        "journey-search",
        "europe-docker.pkg.dev/ferrovia/prod/journey-search:5.2.1",
        replicas=4,
        nodes=nodes,
        cluster_ip="10.96.14.40",
        ip_base="10.64.5",
        requests={"cpu": "500m", "memory": "768Mi"},
        limits={"memory": "1Gi"},
    )
    seat = healthy(
        sc,
        c,
        "journeys",
        "seat-map",
        "europe-docker.pkg.dev/ferrovia/prod/seat-map:1.9.0",
        replicas=2,
        nodes=nodes,
        cluster_ip="10.96.14.77",
        ip_base="10.64.6",
        rollout_hours=26,
    )
    sc.objects.append(
        event(
            "journeys",
            "Pod",
            seat.names[0],
            "Unhealthy",
            "Readiness probe failed: HTTP probe failed with statuscode: 503",
            first=c.ago(47),
            last=c.ago(44),
            count=3,
            type_="Warning",
        )
    )
    # GC logs: the new revision's young pauses grow, the old one's were short
    for i, pn in enumerate([p["metadata"]["name"] for p in pods]):
        lines = [
            f"{c.ms(ROLL - 2 * i - 1)} INFO  [main] o.s.b.StartupInfoLogger : Starting "
            f"FareEngineApplication "
            "v3.18.0 using Java 21.0.4 with PID 1",
            f"{c.ms(ROLL - 2 * i - 0.6)} INFO  [main] c.f.fares.rules.RuleCache : fare rules "
            f"loaded: 48211 rules, "
            "snapshot 2026-11-26T06:00Z",
            f"{c.ms(ROLL - 2 * i - 0.5)} INFO  [main] o.s.b.w.e.tomcat.TomcatWebServer : Tomcat "
            f"started on port 8080",
        ]
        gc = 100 + i * 37
        m = ROLL - 2 * i - 1
        while m > 0:
            pause = 45 + (ROLL - m) * 1.6 + (i * 13) % 40
            before = 1380 + (gc % 7) * 18
            lines.append(
                f"[{c.ms(m)}][info][gc] GC({gc}) Pause Young (Normal) (G1 Evacuation Pause) "
                f"{before}M->{before - 290 - (gc % 5) * 9}M(1536M) {pause:.3f}ms"
            )
            if gc % 9 == 0:
                lines.append(
                    f"{c.ms(m - 0.01)} WARN  [http-nio-8080-exec-{gc % 40}] "
                    f"c.f.fares.api.QuoteController : "
                    f"slow quote request {int(pause * 6 + 900)}ms corridor=LON-MAN"
                )
            if gc % 41 == 0:
                lines.append(
                    f"[{c.ms(m - 0.02)}][info][gc] GC({gc + 1}) Pause Young (Concurrent Start) "
                    f"(G1 Humongous Allocation) 1502M->1311M(1536M) {pause * 1.8:.3f}ms"
                )
                gc += 1
            gc += 1
            m -= 0.12 + 0.4 * (m / ROLL)
        sc.log("journeys", pn, "fare-engine", lines)
    for pn in old_pods:
        for k in range(0, 8 * 60, 9):
            mm = ROLL + 5 + k
            sc.doc(
                c.ms(mm),
                "info",
                "fare-engine",
                "journeys",
                pn,
                "fare-engine",
                f"GC({9000 + k}) Pause Young (Normal) (G1 Evacuation Pause) 1012M->402M(1536M) "
                f"{11 + (k % 7):.3f}ms",
            )
    for p in pods:
        for k in range(0, ROLL - 5, 4):
            sc.doc(
                c.ms(k + 1),
                "info",
                "fare-engine",
                "journeys",
                p["metadata"]["name"],
                "fare-engine",
                f"GC({500 + k}) Pause Young (Normal) (G1 Evacuation Pause) 1402M->1106M(1536M) "
                f"{45 + (ROLL - k) * 1.6:.3f}ms",
            )
    for k in range(0, 300, 7):
        sc.doc(
            c.ms(k),
            "warn" if k < 100 else "info",
            "seat-map",
            "journeys",
            seat.names[k % 2],
            "app",
            "redis: connection pool timeout, retrying" if k < 100 else "seat map rendered",
        )
        sc.doc(
            c.ms(k + 0.5),
            "info",
            "journey-search",
            "journeys",
            search.names[k % 4],
            "app",
            "GET /v2/journeys 200",
            **{"http.response.status_code": 200},
        )
    # metrics: latency histogram, gc pause, heap; old pods before the rollout, new pods after
    buckets = [0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0]
    start = 4 * 60 + ROLL

    for group, names, live in (
        ("old", old_pods, (start, ROLL - 8)),
        ("new", [p["metadata"]["name"] for p in pods], (ROLL - 2, 0)),
    ):
        for pn in names:
            lat = (lambda m: 0.09) if group == "old" else (lambda m: 0.12 + (ROLL - m) / ROLL * 0.9)
            labels = {
                "namespace": "journeys",
                "pod": pn,
                "service": "fare-engine",
                "uri": "/v1/quote",
            }
            histogram(
                sc,
                c,
                "http_server_requests_seconds",
                "request latency",
                labels,
                lambda m: 38.0,
                lat,
                buckets,
                start_min=live[0],
                end_min=live[1],
                step_min=2,
            )
            pause_rate = (
                (lambda m: 0.004) if group == "old" else (lambda m: 0.02 + (ROLL - m) / ROLL * 0.16)
            )
            psum = counter(pause_rate, live[0], 1, pn + "g", jitter=0.1, whole=False)
            gl = {
                "namespace": "journeys",
                "pod": pn,
                "action": "end of minor GC",
                "cause": "G1 Evacuation Pause",
                "gc": "G1 Young Generation",
            }
            series(
                sc,
                c,
                "jvm_gc_pause_seconds",
                "summary",
                "gc pause",
                gl,
                psum,
                start_min=live[0],
                end_min=live[1],
                step_min=2,
                sample="jvm_gc_pause_seconds_sum",
            )
            gcount = counter(
                (lambda m: 0.3) if group == "old" else (lambda m: 1.6 + (ROLL - m) / ROLL),
                live[0],
                1,
                pn + "gc",
            )
            series(
                sc,
                c,
                "jvm_gc_pause_seconds",
                "summary",
                "gc pause",
                gl,
                gcount,
                start_min=live[0],
                end_min=live[1],
                step_min=2,
                sample="jvm_gc_pause_seconds_count",
            )
            w = wobble(pn, 0.05)
            series(
                sc,
                c,
                "container_memory_working_set_bytes",
                "gauge",
                "working set",
                {"namespace": "journeys", "pod": pn, "container": "fare-engine"},
                lambda m, w=w, g=group: (1.71e9 if g == "old" else 1.93e9) * w(m),
                start_min=live[0],
                end_min=live[1],
                step_min=5,
            )
            series(
                sc,
                c,
                "kube_pod_container_status_restarts",
                "counter",
                "restarts",
                {"namespace": "journeys", "pod": pn, "container": "fare-engine"},
                lambda m: 0,
                start_min=live[0],
                end_min=live[1],
                step_min=5,
                sample="kube_pod_container_status_restarts_total",
            )
    return sc
