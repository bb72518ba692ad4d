"""Shape 1: a VPA in Auto mode shrank invoice-render over a quiet weekend; Monday's load
OOM-kills the pods. The VPA itself is not a kind the format allows: it shows through the
pods' vpaUpdates annotations, their resources that differ from the template, and the
updater's logs in the log store."""

from __future__ import annotations

from .fleet import healthy, series
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
    terminated,
)

NOW = "2026-11-30T08:47:00Z"  # a Monday


def build() -> Scenario:
    c = Clock(NOW)
    sc = Scenario(
        "invoice-render-monday-restarts",
        "Invoice PDFs time out on Monday morning",
        NOW,
        "invoice pdf downloads timing out for customers since ~7:30, the render pods keep "
        "restarting. nobody deployed anything since thursday. is the chromium thing leaking "
        "again?\n",
        {
            "category": "oom_killed",
            "culprit": {"kind": "Deployment", "namespace": "invoicing", "name": "invoice-render"},
            "evidence": ["OOMKilled", "vpaUpdates", "memory: 547Mi"],
            "fix": "Stop the VPA from shrinking invoice-render below its weekday peak: set "
            "minAllowed "
            "memory (>= 1.5Gi) or updateMode Initial/Off, and roll the pods back to 1536Mi/2Gi",
        },
    )
    nodes = [
        ("ip-10-40-1-17.eu-west-1.compute.internal", "10.40.1.17"),
        ("ip-10-40-2-88.eu-west-1.compute.internal", "10.40.2.88"),
        ("ip-10-40-3-51.eu-west-1.compute.internal", "10.40.3.51"),
    ]
    sc.objects += [
        namespace("invoicing", c.ago(300 * 1440)),
        namespace("kube-system", c.ago(400 * 1440)),
    ]
    sc.objects += [
        node(
            n,
            c.ago(20 * 1440),
            c.ago(0.3),
            ip=ip,
            transition=c.ago(5 * 1440),
            zone=f"eu-west-1{'abc'[i]}",
        )
        for i, (n, ip) in enumerate(nodes)
    ]
    image = "registry.quillmark.io/invoicing/invoice-render:4.12.0"
    lab = {"app": "invoice-render", "team": "billing-docs"}
    tmpl_c = container(
        "render",
        image,
        requests={"cpu": "500m", "memory": "1536Mi"},
        limits={"memory": "2Gi"},
        port=3000,
        readiness=http_probe("/ready", 3000),
        env=[
            {"name": "RENDER_CONCURRENCY", "value": "6"},
            {"name": "NODE_OPTIONS", "value": "--max-old-space-size=1400"},
        ],
    )
    tpl = template(lab, [tmpl_c])
    dep = deployment(
        "invoicing",
        "invoice-render",
        lab,
        tpl,
        replicas=4,
        revision=9,
        created=c.ago(210 * 1440),
        progressed=c.ago(4 * 1440 + 300),
        available=1,
        ready=1,
    )
    rs = replicaset(dep, 9, tpl, replicas=4, created=c.ago(4 * 1440 + 300), ready=1)
    sc.objects += [dep, rs]
    # the VPA updater evicted the pods Saturday night and Sunday; admission gave them the new values
    evicted = [1860, 1795, 1722, 22]  # minutes ago each pod was created
    pod_res = [("120m", "410Mi", "547Mi")] * 3 + [("150m", "498Mi", "664Mi")]
    pods = []
    restarts = [7, 6, 6, 2]
    for i, created in enumerate(evicted):
        pn = f"{rs['metadata']['name']}-{suffix('ir' + str(i))}"
        cpu, req, lim = pod_res[i]
        pc = container(
            "render",
            image,
            requests={"cpu": cpu, "memory": req},
            limits={"memory": lim},
            port=3000,
            readiness=http_probe("/ready", 3000),
            env=tmpl_c["env"],
        )
        last_end = [3.2, 6.5, 1.1, 4.0][i]
        started = c.ago(last_end - 0.1)
        last = terminated("OOMKilled", 137, c.ago(last_end + 9), c.ago(last_end))
        ready = i == 0
        st = running("render", image, started, restarts=restarts[i], ready=ready, last=last)
        if i == 2:
            st = {
                "name": "render",
                "image": image,
                "imageID": st["imageID"],
                "ready": False,
                "started": False,
                "restartCount": restarts[i],
                "state": {
                    "waiting": {
                        "reason": "CrashLoopBackOff",
                        "message": f"back-off 2m40s restarting failed container=render pod={pn}",
                    }
                },
                "lastState": {"terminated": last},
            }
        p = pod(
            rs,
            tpl,
            pn,
            node_name=nodes[i % 3][0],
            host_ip=nodes[i % 3][1],
            ip=f"10.40.{i + 1}.{130 + i}",
            created=c.ago(created),
            statuses=[st],
            containers=[pc],
            annotations={
                "vpaUpdates": "Pod resources updated by invoice-render: container 0: "
                "cpu request, memory request, memory limit",
                "vpaObservedContainers": "render",
            },
        )
        pods.append(p)
        sc.objects.append(p)
        host = nodes[i % 3][0]
        sc.objects.append(
            event(
                "invoicing",
                "Pod",
                pn,
                "BackOff",
                "Back-off restarting failed container render "
                f"in pod {pn}_invoicing({p['metadata']['uid']})",
                first=c.ago(58),
                last=c.ago(1 + i),
                count=restarts[i] * 3,
                type_="Warning",
                host=host,
            )
        )
        sc.objects.append(
            event(
                "invoicing",
                "Pod",
                pn,
                "Pulled",
                f'Container image "{image}" already present on machine',
                first=c.ago(59),
                last=c.ago(last_end),
                count=restarts[i],
                host=host,
            )
        )
        sc.objects.append(
            event(
                "invoicing",
                "Pod",
                pn,
                "Unhealthy",
                "Readiness probe failed: Get "
                f'"http://{p["status"]["podIP"]}:3000/ready": dial tcp '
                f"{p['status']['podIP']}:3000: "
                "connect: connection refused",
                first=c.ago(57),
                last=c.ago(last_end - 0.2),
                count=restarts[i] * 2,
                type_="Warning",
                host=host,
            )
        )
    gone = f"{rs['metadata']['name']}-{suffix('ir-gone')}"
    sc.objects.append(
        event(
            "invoicing",
            "Pod",
            pods[3]["metadata"]["name"],
            "Scheduled",
            f"Successfully assigned invoicing/{pods[3]['metadata']['name']} to {nodes[0][0]}",
            first=c.ago(22),
            last=c.ago(22),
            component="default-scheduler",
        )
    )
    api = healthy(
        sc,
        c,
        "invoicing",
        "invoice-api",
        "registry.quillmark.io/invoicing/invoice-api:2.31.4",
        replicas=3,
        nodes=nodes,
        port=8080,
        cluster_ip="172.20.41.9",
        ip_base="10.40.7",
        requests={"cpu": "250m", "memory": "512Mi"},
        limits={"memory": "768Mi"},
    )
    healthy(
        sc,
        c,
        "invoicing",
        "dunning-mailer",
        "registry.quillmark.io/invoicing/dunning-mailer:1.8.2",
        replicas=2,
        nodes=nodes,
        port=8080,
        cluster_ip="172.20.41.30",
        ip_base="10.40.8",
    )
    svc = service(
        "invoicing",
        "invoice-render",
        {"app": "invoice-render"},
        80,
        3000,
        "172.20.41.77",
        c.ago(210 * 1440),
    )
    sc.objects += [svc, endpoints(svc, pods, 3000)]
    sc.objects.append(
        event(
            "invoicing",
            "Pod",
            api.names[1],
            "Unhealthy",
            "Readiness probe failed: Get "
            '"http://10.40.7.27:8080/healthz": context deadline exceeded (Client.Timeout '
            "exceeded while awaiting headers)",
            first=c.ago(41),
            last=c.ago(41),
            type_="Warning",
        )
    )
    # logs: the updater's and recommender's decisions at the weekend, the renderer's output
    upd = f"vpa-updater-7d9f8c6b5-{suffix('upd')}"
    for i, m in enumerate(evicted[:3]):
        pn_old = f"{rs['metadata']['name']}-{suffix('old' + str(i))}"
        sc.doc(
            c.ms(m + 0.4),
            "info",
            "vpa-updater",
            "kube-system",
            upd,
            "updater",
            f"I1129 {c.at(m + 0.4).strftime('%H:%M:%S')}.412331       1 "
            f"update_priority_calculator.go:146] "
            f"pod accepted for update invoicing/{pn_old} with priority 1.73 - processed "
            f"recommendations:\n"
            "render: target: 419430k 120m; uncappedTarget: 419430k 120m;",
        )
        sc.doc(
            c.ms(m + 0.3),
            "info",
            "vpa-updater",
            "kube-system",
            upd,
            "updater",
            f"I1129 {c.at(m + 0.3).strftime('%H:%M:%S')}.520918       1 updater.go:215] evicting "
            f"pod "
            f"invoicing/{pn_old}",
        )
    sc.doc(
        c.ms(24),
        "info",
        "vpa-updater",
        "kube-system",
        upd,
        "updater",
        f"I1130 {c.at(24).strftime('%H:%M:%S')}.004113       1 updater.go:215] evicting pod "
        f"invoicing/{gone}",
    )
    rec = f"vpa-recommender-5f7b9d8c4-{suffix('rec')}"
    for h in range(60, 0, -6):
        sc.doc(
            c.ms(h * 60),
            "info",
            "vpa-recommender",
            "kube-system",
            rec,
            "recommender",
            f"I11{c.at(h * 60).strftime('%d %H:%M:%S')}.1       1 recommender.go:183] "
            f"Recommender Run",
        )
    for i, p in enumerate(pods):
        pn = p["metadata"]["name"]
        prev = [
            f'{{"level":30,"time":{c.unix(12 + i) * 1000},"pid":1,"msg":"render worker pool '
            f'started","concurrency":6}}'
        ]
        for k in range(9):
            prev.append(
                f'{{"level":30,"time":{c.unix(10 - k * 0.6) * 1000},"pid":1,"msg":"rendering '
                f'invoice",'
                f'"invoiceId":"INV-2026-{884100 + i * 50 + k}","pages":{3 + k % 5},'
                f'"inflight":{min(6, k + 2)}}}'
            )
        prev.append(
            f'{{"level":40,"time":{c.unix(4.5) * 1000},"pid":1,"msg":"render queue '
            f'backlog","queued":{140 + i * 20}}}'
        )
        sc.log("invoicing", pn, "render", prev, previous=True)
        sc.log(
            "invoicing",
            pn,
            "render",
            [
                f'{{"level":30,"time":{c.unix(1) * 1000},"pid":1,"msg":"render worker pool '
                f'started","concurrency":6}}',
                f'{{"level":30,"time":{c.unix(0.8) * 1000},"pid":1,"msg":"chromium '
                f'launched","version":"120.0.6099.71"}}',
            ],
        )
        for k in range(30):
            m = 60 - k * 2
            sc.doc(
                c.ms(m),
                "info",
                "invoice-render",
                "invoicing",
                pn,
                "render",
                "rendering invoice",
                **{"event.duration": 2_400_000_000 + k * 10_000_000},
            )
    for k in range(40):
        sc.doc(
            c.ms(75 - k * 1.8),
            "warn" if k > 8 else "info",
            "invoice-api",
            "invoicing",
            api.names[k % 3],
            "app",
            "GET /v1/invoices/{id}/pdf upstream invoice-render timed out after 30s"
            if k > 8
            else "GET /v1/invoices/{id}/pdf 200",
            **{"http.response.status_code": 504 if k > 8 else 200},
        )
    # metrics: working set vs limit over the week, restarts
    fam = "container_memory_working_set_bytes"

    def weekday_load(m: float) -> float:
        t = c.at(m)
        busy = t.weekday() < 5 and 7 <= t.hour < 19
        return 1.25e9 if busy else 3.1e8

    for i in range(4):
        old = f"{rs['metadata']['name']}-{suffix('old' + str(i))}"
        series(
            sc,
            c,
            fam,
            "gauge",
            "working set",
            {"namespace": "invoicing", "pod": old, "container": "render"},
            lambda m, i=i: weekday_load(m) * (1 + 0.04 * i),
            start_min=6 * 1440,
            end_min=evicted[i] + 5,
            step_min=30,
        )
        series(
            sc,
            c,
            "kube_pod_container_resource_limits",
            "gauge",
            "limits",
            {
                "namespace": "invoicing",
                "pod": old,
                "container": "render",
                "resource": "memory",
                "unit": "byte",
            },
            lambda m: 2147483648,
            start_min=6 * 1440,
            end_min=evicted[i] + 5,
            step_min=30,
        )
    for i, p in enumerate(pods):
        pn = p["metadata"]["name"]
        lim = 573571072 if i < 3 else 696254464

        def ws(m: float, lim: int = lim, i: int = i) -> float:
            if m > 80:
                return weekday_load(m) * (1 + 0.04 * i) if weekday_load(m) < 1e9 else 3.2e8
            phase = (m * 7 + i * 3) % 10 / 10
            return min(lim * 0.99, 3.4e8 + phase * (lim - 3.2e8))

        series(
            sc,
            c,
            fam,
            "gauge",
            "working set",
            {"namespace": "invoicing", "pod": pn, "container": "render"},
            ws,
            start_min=min(evicted[i] - 2, 1440 * 2),
            step_min=5 if evicted[i] < 200 else 10,
        )
        series(
            sc,
            c,
            "kube_pod_container_resource_limits",
            "gauge",
            "limits",
            {
                "namespace": "invoicing",
                "pod": pn,
                "container": "render",
                "resource": "memory",
                "unit": "byte",
            },
            lambda m, lim=lim: lim,
            start_min=min(evicted[i] - 2, 1440 * 2),
            step_min=10,
        )
        r = restarts[i]
        series(
            sc,
            c,
            "kube_pod_container_status_restarts",
            "counter",
            "restarts",
            {"namespace": "invoicing", "pod": pn, "container": "render"},
            lambda m, r=r: 0 if m > 78 else max(0, round(r * (78 - m) / 76)),
            start_min=min(evicted[i] - 2, 600),
            step_min=5,
            sample="kube_pod_container_status_restarts_total",
        )
    return sc
