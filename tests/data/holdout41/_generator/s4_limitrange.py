"""Shape 4: payslip-export was shipped without resources; the namespace's LimitRange gave it
a 250m CPU limit by default, and the CPU-bound PDF and tax maths run throttled and slow."""

from __future__ import annotations

from .fleet import counter, healthy, series
from .kit import (
    Clock,
    Scenario,
    container,
    deployment,
    event,
    namespace,
    node,
    pod,
    replicaset,
    running,
    suffix,
    template,
)

NOW = "2026-11-25T10:14:00Z"
ROLL = 26 * 60  # minutes ago payslip-export first rolled out


def build() -> Scenario:
    c = Clock(NOW)
    sc = Scenario(
        "payslip-export-slow",
        "New payslip export runs ten times slower than on staging",
        NOW,
        "the new payslip export is painfully slow in prod, one run for ACME took 41 min, on "
        "staging it "
        "was ~4. Postgres looks busy-ish, maybe the payroll db needs a bigger instance? month-end "
        "payroll closes friday so this matters\n",
        {
            "category": "cpu_throttling",
            "culprit": {"kind": "Deployment", "namespace": "payroll", "name": "payslip-export"},
            "evidence": ["LimitRanger plugin set", "cpu: 250m", "throttled"],
            "fix": "Give payslip-export explicit CPU requests/limits sized for the export (e.g. "
            "request 1, "
            "limit 2 or no limit) instead of inheriting the LimitRange default of 250m",
        },
    )
    nodes = [
        (f"aks-general-{suffix('vm' + str(i), 8)}-vmss00000{i}", f"10.224.0.{4 + i}")
        for i in range(3)
    ]
    sc.objects += [namespace("payroll", c.ago(800 * 1440))]
    sc.objects += [
        node(
            n,
            c.ago(12 * 1440),
            c.ago(0.4),
            ip=ip,
            zone=f"westeurope-{i + 1}",
            cpu="4",
            memory="16Gi",
            kubelet="v1.29.9",
            transition=c.ago(5 * 1440),
        )
        for i, (n, ip) in enumerate(nodes)
    ]
    sc.objects.append(
        {
            "apiVersion": "v1",
            "kind": "LimitRange",
            "metadata": {
                "name": "payroll-defaults",
                "namespace": "payroll",
                "creationTimestamp": c.ago(540 * 1440),
                "labels": {"managed-by": "platform-baseline"},
            },
            "spec": {
                "limits": [
                    {
                        "type": "Container",
                        "default": {"cpu": "250m", "memory": "512Mi"},
                        "defaultRequest": {"cpu": "100m", "memory": "256Mi"},
                        "max": {"cpu": "4", "memory": "8Gi"},
                    }
                ]
            },
        }
    )
    sc.objects.append(
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {
                "name": "payroll-quota",
                "namespace": "payroll",
                "creationTimestamp": c.ago(540 * 1440),
            },
            "spec": {"hard": {"requests.cpu": "24", "requests.memory": "64Gi", "pods": "80"}},
            "status": {
                "hard": {"requests.cpu": "24", "requests.memory": "64Gi", "pods": "80"},
                "used": {"requests.cpu": "3850m", "requests.memory": "9472Mi", "pods": "11"},
            },
        }
    )
    image = "brightdeskacr.azurecr.io/payroll/payslip-export:1.0.3"
    lab = {"app": "payslip-export", "team": "payroll-core"}
    tpl = template(
        lab,
        [
            container(
                "exporter",
                image,
                port=8000,
                env=[
                    {"name": "EXPORT_WORKERS", "value": "8"},
                    {"name": "PAYROLL_DB_HOST", "value": "payroll-db.postgres.database.azure.com"},
                ],
            )
        ],
    )
    dep = deployment(
        "payroll",
        "payslip-export",
        lab,
        tpl,
        replicas=2,
        revision=3,
        created=c.ago(ROLL + 30),
        progressed=c.ago(ROLL - 200),
    )
    rs = replicaset(dep, 3, tpl, replicas=2, created=c.ago(ROLL - 210))
    sc.objects += [dep, rs]
    pods = []
    for i in range(2):
        pn = f"{rs['metadata']['name']}-{suffix('pe' + str(i))}"
        pc = container(
            "exporter",
            image,
            port=8000,
            requests={"cpu": "100m", "memory": "256Mi"},
            limits={"cpu": "250m", "memory": "512Mi"},
            env=tpl["spec"]["containers"][0]["env"],
        )
        p = pod(
            rs,
            tpl,
            pn,
            node_name=nodes[i][0],
            host_ip=nodes[i][1],
            ip=f"10.244.{i}.{31 + i}",
            created=c.ago(ROLL - 210 - i),
            containers=[pc],
            statuses=[running("exporter", image, c.ago(ROLL - 211 - i))],
            annotations={
                "kubernetes.io/limit-ranger": "LimitRanger plugin set: cpu, memory request for "
                "container exporter; cpu, memory limit for container "
                "exporter"
            },
        )
        pods.append(p)
    sc.objects += pods
    api = healthy(
        sc,
        c,
        "payroll",
        "payroll-api",
        "brightdeskacr.azurecr.io/payroll/payroll-api:7.3.1",
        replicas=3,
        nodes=nodes,
        port=8080,
        cluster_ip="10.0.112.4",
        ip_base="10.244.3",
        requests={"cpu": "500m", "memory": "1Gi"},
        limits={"cpu": "2", "memory": "2Gi"},
    )
    healthy(
        sc,
        c,
        "payroll",
        "tax-tables",
        "brightdeskacr.azurecr.io/payroll/tax-tables:2026.4",
        replicas=2,
        nodes=nodes,
        cluster_ip="10.0.112.19",
        ip_base="10.244.4",
        requests={"cpu": "200m", "memory": "512Mi"},
        limits={"cpu": "1", "memory": "1Gi"},
    )
    sc.objects.append(
        event(
            "payroll",
            "Pod",
            api.names[2],
            "Unhealthy",
            "Liveness probe failed: Get "
            '"http://10.244.3.34:8080/healthz": context deadline exceeded',
            first=c.ago(52),
            last=c.ago(52),
            type_="Warning",
            host=nodes[2][0],
        )
    )
    # logs: batch timings (structured, python logging as JSON)
    runs = [
        (ROLL - 240, "ACME-GMBH", 2412, 2460),
        (600, "NORDWIND-AS", 880, 904),
        (95, "ACME-GMBH", 2412, 2470),
    ]
    for idx, (start, tenant, slips, secs) in enumerate(runs):
        pn = pods[idx % 2]["metadata"]["name"]
        lines = [
            f'{{"ts":"{c.ms(start)}","level":"INFO","logger":"export.run","msg":"export started",'
            f'"tenant":"{tenant}","payslips":{slips},"workers":8}}'
        ]
        per_batch = secs / (slips / 100)
        for b in range(0, slips, 100):
            m = start - (b / 100) * per_batch / 60
            if m < 0:
                break
            lines.append(
                f'{{"ts":"{c.ms(m)}","level":"INFO","logger":"export.batch","msg":"batch rendered",'
                f'"tenant":"{tenant}","batch":{b // 100},"size":100,'
                f'"render_s":{per_batch * 0.81:.1f},'
                f'"tax_s":{per_batch * 0.16:.1f},"db_s":{per_batch * 0.03:.2f}}}'
            )
            sc.doc(
                c.ms(m),
                "info",
                "payslip-export",
                "payroll",
                pn,
                "exporter",
                "batch rendered",
                **{"labels.tenant": tenant, "event.duration": int(per_batch * 1e9)},
            )
            if b % 700 == 0 and b:
                lines.append(
                    f'{{"ts":"{c.ms(m - 0.01)}","level":"WARNING","logger":"export.watchdog",'
                    f'"msg":"export slower than '
                    f'SLO","tenant":"{tenant}","eta_min":{int(secs / 60 * 1.02)}}}'
                )
                sc.doc(
                    c.ms(m - 0.01),
                    "warning",
                    "payslip-export",
                    "payroll",
                    pn,
                    "exporter",
                    f"export slower than SLO tenant={tenant}",
                )
        end = start - secs / 60 * 1.0
        if end > 0:
            lines.append(
                f'{{"ts":"{c.ms(end)}","level":"INFO","logger":"export.run","msg":"export '
                f'finished",'
                f'"tenant":"{tenant}","elapsed_s":{secs * 1.0:.0f}}}'
            )
        sc.log("payroll", pn, "exporter", lines)
    for k in range(0, 120, 3):
        sc.doc(
            c.ms(k),
            "info",
            "payroll-api",
            "payroll",
            api.names[k % 3],
            "app",
            "GET /v3/payruns 200",
            **{"http.response.status_code": 200},
        )
        if k % 30 == 0:
            sc.doc(
                c.ms(k + 0.3),
                "warning",
                "payroll-api",
                "payroll",
                api.names[k % 3],
                "app",
                "slow query 812ms: SELECT ... FROM payrun_lines WHERE tenant_id = $1",
            )
    # metrics: CPU pinned at the limit, throttled periods climbing during runs
    active = [(s, s - secs / 60) for s, _, _, secs in runs]

    def busy(m: float, i: int) -> bool:
        return any(a >= m >= b for a, b in active) and (i == 0 or m < 700)

    for i, p in enumerate(pods):
        pn = p["metadata"]["name"]
        lab_ = {"namespace": "payroll", "pod": pn, "container": "exporter"}
        usage = counter(
            lambda m, i=i: 0.249 if busy(m, i) else 0.012,
            ROLL - 215,
            1,
            pn + "cpu",
            jitter=0.01,
            whole=False,
        )
        periods = counter(lambda m: 10.0, ROLL - 215, 1, pn + "per", jitter=0.0)
        thr = counter(
            lambda m, i=i: 9.1 if busy(m, i) else 0.02, ROLL - 215, 1, pn + "thr", jitter=0.03
        )
        for fam, fn in (
            ("container_cpu_usage_seconds", usage),
            ("container_cpu_cfs_periods", periods),
            ("container_cpu_cfs_throttled_periods", thr),
        ):
            series(
                sc,
                c,
                fam,
                "counter",
                fam.replace("_", " "),
                lab_,
                fn,
                start_min=ROLL - 216,
                step_min=1,
                sample=fam + "_total",
            )
        series(
            sc,
            c,
            "kube_pod_container_resource_limits",
            "gauge",
            "limits",
            lab_ | {"resource": "cpu", "unit": "core"},
            lambda m: 0.25,
            start_min=ROLL - 216,
            step_min=10,
        )
        series(
            sc,
            c,
            "kube_pod_container_resource_limits",
            "gauge",
            "limits",
            lab_ | {"resource": "memory", "unit": "byte"},
            lambda m: 536870912,
            start_min=ROLL - 216,
            step_min=10,
        )
        series(
            sc,
            c,
            "container_memory_working_set_bytes",
            "gauge",
            "working set",
            lab_,
            lambda m, i=i: 2.9e8 if busy(m, i) else 1.4e8,
            start_min=ROLL - 216,
            step_min=5,
        )
    for pn in api.names:
        lab_ = {"namespace": "payroll", "pod": pn, "container": "app"}
        usage = counter(lambda m: 0.31, 600, 1, pn + "cpu", whole=False)
        series(
            sc,
            c,
            "container_cpu_usage_seconds",
            "counter",
            "cpu",
            lab_,
            usage,
            start_min=600,
            step_min=2,
            sample="container_cpu_usage_seconds_total",
        )
    return sc
