"""Skyline Freight's flaky quotes (a node-local DNS cache rollout broken on the nodes it
reached) and Orchard Learning's enrollment errors (a rollout pointed at the staging database)."""

from __future__ import annotations

import json
from datetime import timedelta as td
from typing import Any

from tests.data.holdout33._generator.kit33 import (
    Scenario,
    configmap,
    container,
    endpoints,
    event,
    http_probe,
    iso,
    namespace,
    node,
    parse,
    pod,
    pod_hash,
    rollout,
    service,
    suffix,
    template,
    timeline,
)


def dns_cache_rollout() -> Scenario:
    now = parse("2026-11-30T15:50:00Z")
    s = Scenario(
        "freight-quotes-flaky-dns-cache",
        "Freight quotes fail for a share of requests",
        now,
        "quote-engine is flaky since ~15:25, roughly 40% of quotes fail with 'rates "
        "unavailable'. rates-api looks healthy to me, its dashboards are green. i restarted one "
        "of the failing pods, it came back and still fails. network policy change?\n",
        {"category": "bad_rollout",
         "culprit": {"kind": "DaemonSet", "namespace": "kube-system", "name": "node-local-dns"},
         "evidence": ["kube-dns-upsteam", "__PILLAR__CLUSTER__DNS__",
                      "169.254.20.10:53: server misbehaving"],
         "fix": "Roll node-local-dns back to the previous template (upstream service "
                "kube-dns-upstream, image 1.23.1) and pause the DaemonSet rollout; the nodes "
                "not yet updated are fine."})
    old = now - td(days=300)
    names = [f"aks-general-1234{i}-vmss00000{c}" for i, c in enumerate("abcde")]
    hosts = {n: f"10.240.0.{4 + i}" for i, n in enumerate(names)}
    for i, n in enumerate(names):
        s.add(node(n, old + td(days=i * 9), now, zone=str(i % 3 + 1), region="northeurope-",
                   instance="Standard_D8s_v5", kubelet="v1.29.7", cpu="7820m",
                   memory="28930Mi"))
    for ns in ("kube-system", "pricing", "billing", "ops"):
        s.add(namespace(ns, old))
    start = parse("2026-11-30T15:20:11Z")
    second = start + td(minutes=15, seconds=19)
    def dtmpl(image: str, upstream: str) -> dict[str, Any]:
        t = template({"k8s-app": "node-local-dns", "app": "node-local-dns"},
                     [container("node-cache", f"registry.k8s.io/dns/k8s-dns-node-cache:{image}",
                                cpu="25m", memory="5Mi", memory_limit="128Mi", port=None,
                                args=["-localip", "169.254.20.10,10.0.0.10", "-conf",
                                      "/etc/Corefile", "-upstreamsvc", upstream,
                                      "-health-port", "8080"],
                                liveness=http_probe("/health", 8080, period=10, timeout=5,
                                                    delay=60))],
                     annotations={"prometheus.io/port": "9253", "prometheus.io/scrape": "true"},
                     hostNetwork=True, dnsPolicy="Default",
                     priorityClassName="system-node-critical")
        return t
    old_t = dtmpl("1.23.1", "kube-dns-upstream")
    new_t = dtmpl("1.24.0", "kube-dns-upsteam")
    s.add({"apiVersion": "apps/v1", "kind": "DaemonSet",
           "metadata": {"name": "node-local-dns", "namespace": "kube-system",
                        "creationTimestamp": iso(old), "generation": 7,
                        "labels": {"k8s-app": "node-local-dns",
                                   "app.kubernetes.io/managed-by": "Helm"},
                        "annotations": {"deprecated.daemonset.template.generation": "7",
                                        "meta.helm.sh/release-name": "node-local-dns"}},
           "spec": {"selector": {"matchLabels": {"k8s-app": "node-local-dns"}},
                    "minReadySeconds": 900, "revisionHistoryLimit": 10, "template": new_t,
                    "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {
                        "maxUnavailable": 1, "maxSurge": 0}}},
           "status": {"desiredNumberScheduled": 5, "currentNumberScheduled": 5,
                      "numberReady": 5, "numberAvailable": 4, "numberUnavailable": 1,
                      "updatedNumberScheduled": 2, "numberMisscheduled": 0,
                      "observedGeneration": 7}})
    dpods = []
    for i, n in enumerate(names):
        updated = i < 2
        started = (start if i == 0 else second) if updated else now - td(days=41, hours=i)
        p = pod(f"node-local-dns-{suffix(n + str(updated))}", "kube-system", "DaemonSet",
                "node-local-dns", new_t if updated else old_t, n, started, ip=hosts[n],
                host_ip=hosts[n], extra_labels={
                    "controller-revision-hash": "5c8d7f9b4" if updated else "7f6b9c5d8",
                    "pod-template-generation": "7" if updated else "6"})
        dpods.append(p)
        s.add(p)
        lines = []
        st = started.strftime("%Y/%m/%d %H:%M:%S")
        if updated:
            lines += [f"{st} [INFO] Starting node-cache image: 1.24.0",
                      f"{st} [INFO] Using Corefile /etc/Corefile",
                      f"{st} [ERROR] Failed to read node-cache upstream service "
                      '"kube-system/kube-dns-upsteam": services "kube-dns-upsteam" not found; '
                      "keeping template value for cluster.local upstream",
                      f"{st} [INFO] Updated Corefile with 0 custom stubdomains and upstream "
                      "servers /etc/resolv.conf",
                      f"{st} [INFO] Added interface - nodelocaldns",
                      "cluster.local.:53 on 169.254.20.10",
                      "in-addr.arpa.:53 on 169.254.20.10",
                      ".:53 on 169.254.20.10",
                      "[INFO] plugin/reload: Running configuration SHA512 = 9c1a…",
                      "CoreDNS-1.11.3", "linux/amd64, go1.22.6"]
            t = started + td(seconds=20)
            k = 0
            targets = ["rates-api.pricing.svc.cluster.local.",
                       "postgres.billing.svc.cluster.local.",
                       "carrier-gw.pricing.svc.cluster.local.", "redis.ops.svc.cluster.local."]
            while t < now:
                q = targets[k % 4]
                msg = (f"[ERROR] plugin/errors: 2 {q} A: dial udp: address "
                       "__PILLAR__CLUSTER__DNS__: missing port in address")
                lines.append(msg)
                t += td(seconds=12)
                k += 1
        else:
            lines += [f"{st} [INFO] Starting node-cache image: 1.23.1",
                      f"{st} [INFO] Using Corefile /etc/Corefile",
                      f"{st} [INFO] Updated Corefile with 0 custom stubdomains and upstream "
                      "servers /etc/resolv.conf",
                      f"{st} [INFO] Added interface - nodelocaldns",
                      "cluster.local.:53 on 169.254.20.10", ".:53 on 169.254.20.10",
                      "CoreDNS-1.11.1", "linux/amd64, go1.21.8",
                      "[ERROR] plugin/errors: 2 telemetry.azure-devices.example. AAAA: read udp "
                      "10.240.0.7:51892->168.63.129.16:53: i/o timeout"]
        s.log("kube-system", p["metadata"]["name"], "node-cache", lines)
    s.add(service("kube-dns", "kube-system", old, {"k8s-app": "kube-dns"}, 53, 53,
                  cluster_ip="10.0.0.10"))
    s.add(service("kube-dns-upstream", "kube-system", old, {"k8s-app": "kube-dns"}, 53, 53,
                  cluster_ip="10.0.182.44"))
    ctmpl = template({"k8s-app": "kube-dns", "app": "coredns"},
                     [container("coredns", "mcr.microsoft.com/oss/kubernetes/coredns:v1.9.4",
                                cpu="100m", memory="70Mi", memory_limit="500Mi", port=53)])
    _, cpods = rollout(s, "coredns", "kube-system", old, [(3, ctmpl, now - td(days=30))],
                       names[2:4], ips=["10.244.2.5", "10.244.3.6"], host_ips=hosts)
    s.add(endpoints("kube-dns-upstream", "kube-system", old,
                    [(p["metadata"]["name"], p["status"]["podIP"], p["spec"]["nodeName"])
                     for p in cpods], port=53))
    # victims
    qtmpl = template({"app": "quote-engine"},
                     [container("engine", "skylinefreight.azurecr.io/quote-engine:5.7.2",
                                cpu="300m", memory="384Mi", readiness=http_probe("/readyz"),
                                env={"RATES_URL": "http://rates-api.pricing.svc.cluster.local",
                                     "CARRIER_GW": "http://carrier-gw.pricing.svc.cluster.local"})])
    overrides = {1: {"started": now - td(minutes=12)}}
    _, qpods = rollout(s, "quote-engine", "pricing", old, [(19, qtmpl, now - td(days=6))],
                       names, ips=[f"10.244.{i}.{40 + i}" for i in range(5)], host_ips=hosts,
                       pod_overrides=overrides)
    s.add(service("quote-engine", "pricing", old, {"app": "quote-engine"}, cluster_ip="10.0.90.1"))
    rtmpl = template({"app": "rates-api"},
                     [container("api", "skylinefreight.azurecr.io/rates-api:2.2.9",
                                readiness=http_probe("/readyz"))])
    _, rpods = rollout(s, "rates-api", "pricing", old, [(44, rtmpl, now - td(days=3))],
                       names[2:], ips=["10.244.2.60", "10.244.3.61", "10.244.4.62"],
                       host_ips=hosts)
    s.add(service("rates-api", "pricing", old, {"app": "rates-api"}, cluster_ip="10.0.90.2"))
    s.add(endpoints("rates-api", "pricing", old, [(p["metadata"]["name"], p["status"]["podIP"],
                                                   p["spec"]["nodeName"]) for p in rpods]))
    s.add({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
           "metadata": {"name": "pricing-egress", "namespace": "pricing",
                        "creationTimestamp": iso(now - td(days=40))},
           "spec": {"podSelector": {}, "policyTypes": ["Egress"],
                    "egress": [{"to": [{"namespaceSelector": {"matchLabels": {
                        "kubernetes.io/metadata.name": "kube-system"}}},
                        {"ipBlock": {"cidr": "169.254.20.10/32"}}],
                                "ports": [{"protocol": "UDP", "port": 53},
                                          {"protocol": "TCP", "port": 53}]},
                               {"to": [{"podSelector": {}}]},
                               {"to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": [
                                   "10.0.0.0/8"]}}], "ports": [{"protocol": "TCP",
                                                                "port": 443}]}]}})
    itmpl = template({"app": "invoice-worker"},
                     [container("worker", "skylinefreight.azurecr.io/invoice-worker:1.12.0",
                                port=None, env={"PGHOST": "postgres.billing.svc.cluster.local"})])
    _, ipods = rollout(s, "invoice-worker", "billing", old, [(7, itmpl, now - td(days=15))],
                       [names[1], names[3]], ips=["10.244.1.80", "10.244.3.81"], host_ips=hosts)
    bad_from = {names[0]: start + td(seconds=20), names[1]: second + td(seconds=20)}
    for p in qpods:
        pname = p["metadata"]["name"]
        n = p["spec"]["nodeName"]
        lines = []
        t = max(now - td(hours=1), parse(p["metadata"]["creationTimestamp"]) + td(seconds=8))
        k = 0
        while t < now:
            lane = ["DE-PL", "NL-FR", "ES-IT", "DK-SE"][k % 4]
            if n in bad_from and t > bad_from[n]:
                err = ('Get "http://rates-api.pricing.svc.cluster.local/v2/rates?lane=' + lane +
                       '": dial tcp: lookup rates-api.pricing.svc.cluster.local on '
                       "169.254.20.10:53: server misbehaving")
                lines.append(f'time={iso(t)} level=error msg="rates unavailable" lane={lane} '
                             f'err="{err}"')
                lines.append(f'time={iso(t)} level=info msg="quote" lane={lane} status=502 '
                             f'took=4ms')
                if k % 2 == 0:
                    s.doc(t, "quote-engine", "pricing", pname, "engine", "error",
                          f"rates unavailable lane={lane} err={err}",
                          **{"host.name": n, "error.type": "*net.DNSError"})
            else:
                lines.append(f'time={iso(t)} level=info msg="quote" lane={lane} status=200 '
                             f'took={38 + k % 40}ms')
            t += td(seconds=15)
            k += 1
        s.log("pricing", pname, "engine", lines)
    for p in ipods:
        pname = p["metadata"]["name"]
        n = p["spec"]["nodeName"]
        lines = []
        t = now - td(hours=1)
        while t < now:
            if n in bad_from and t > bad_from[n]:
                lines.append(json.dumps({"level": "error", "time": iso(t),
                                         "msg": "db connect failed", "err": "getaddrinfo "
                                         "EAI_AGAIN postgres.billing.svc.cluster.local"}))
                s.doc(t, "invoice-worker", "billing", pname, "worker", "error",
                      "db connect failed: getaddrinfo EAI_AGAIN "
                      "postgres.billing.svc.cluster.local", **{"host.name": n})
            else:
                lines.append(json.dumps({"level": "info", "time": iso(t),
                                         "msg": "invoices batch posted", "count": 25}))
            t += td(minutes=1)
        s.log("billing", pname, "worker", lines)
    for p in rpods:
        s.log("pricing", p["metadata"]["name"], "api",
              [f"{iso(now - td(seconds=s_))} INFO GET /v2/rates 200 6ms"
               for s_ in range(3600, 0, -30)])
    s.add(event("pricing", "Pod", qpods[1]["metadata"]["name"], "Scheduled",
                f"Successfully assigned pricing/{qpods[1]['metadata']['name']} to {names[1]}",
                now - td(minutes=12), now - td(minutes=12), type_="Normal",
                component="default-scheduler"))
    s.add(event("kube-system", "DaemonSet", "node-local-dns", "SuccessfulCreate",
                f"Created pod: {dpods[1]['metadata']['name']}", second, second, type_="Normal",
                component="daemonset-controller", api="apps/v1"))
    s.add(event("kube-system", "DaemonSet", "node-local-dns", "SuccessfulDelete",
                f"Deleted pod: node-local-dns-{suffix(names[1] + 'old')}", second - td(seconds=2),
                second - td(seconds=2), type_="Normal", component="daemonset-controller",
                api="apps/v1"))
    s.add(event("", "Node", names[4], "FreeDiskSpaceFailed",
                "Failed to garbage collect required amount of images. Attempted to free "
                "1839202304 bytes, but only found 0 bytes eligible to free.",
                now - td(minutes=47), now - td(minutes=17), count=3, component="kubelet",
                host=names[4]))
    s.add(namespace("default", old))
    # metrics
    ts = timeline(now, 3)
    for p in dpods:
        n = p["spec"]["nodeName"]
        lab = {"namespace": "kube-system", "pod": p["metadata"]["name"], "node": n}
        start_t = parse(p["metadata"]["creationTimestamp"]).timestamp()
        window = [t for t in ts if t >= start_t]
        bad = n in bad_from
        s.metrics.counter("coredns_dns_responses", "responses", {**lab, "rcode": "NOERROR",
                          "server": "dns://169.254.20.10:53", "zone": "."}, window,
                          lambda t, bad=bad: 3.0 if bad else 41.0)
        s.metrics.counter("coredns_dns_responses", "responses", {**lab, "rcode": "SERVFAIL",
                          "server": "dns://169.254.20.10:53", "zone": "cluster.local."}, window,
                          lambda t, bad=bad: 37.0 if bad else 0.02)
    for p in qpods:
        n = p["spec"]["nodeName"]
        lab = {"namespace": "pricing", "pod": p["metadata"]["name"], "route": "/v1/quotes"}
        start_t = parse(p["metadata"]["creationTimestamp"]).timestamp()
        window = [t for t in ts if t >= start_t]
        bf = bad_from[n].timestamp() if n in bad_from else 1e12
        s.metrics.counter("http_requests", "requests", {**lab, "code": "200"}, window,
                          lambda t, bf=bf: 0.0 if t > bf else 6.5)
        s.metrics.counter("http_requests", "requests", {**lab, "code": "502"}, window,
                          lambda t, bf=bf: 6.5 if t > bf else 0.0)
    return s


# --------------------------------------------------------------------------- enrollment


def staging_database() -> Scenario:
    now = parse("2026-11-26T10:05:00Z")
    s = Scenario(
        "enrollment-relation-does-not-exist",
        "Course checkout fails with database errors",
        now,
        "enrollment checkout returning 500s since ~9:30. postgres is logging 'relation "
        "payment_plans does not exist' errors - did someone drop a table in the migration this "
        "morning?? @db-team please check courses-pg\n",
        {"category": "bad_rollout",
         "culprit": {"kind": "Deployment", "namespace": "courses", "name": "enrollment-service"},
         "evidence": ["PGDATABASE", "enrollment_staging", "enrollment-env-8-3-0",
                      'relation "payment_plans" does not exist'],
         "fix": "Roll enrollment-service back to revision 30, or set PGDATABASE back to "
                "enrollment in its 8.3.0 ConfigMap and restart it; the production database "
                "and the migration are fine."})
    old = now - td(days=320)
    names = [f"gke-orchard-prod-default-{suffix('o' + str(i), 4)}-{suffix('p' + str(i), 4)}"
             for i in range(3)]
    hosts = {n: f"10.10.0.{20 + i}" for i, n in enumerate(names)}
    for i, n in enumerate(names):
        s.add(node(n, old + td(days=i), now, zone="abc"[i], region="us-central1-",
                   instance="n2-standard-4", kubelet="v1.30.5-gke.1014001"))
    for ns in ("courses", "courses-data", "ops"):
        s.add(namespace(ns, old))
    deploy_at = parse("2026-11-26T09:31:05Z")
    def etmpl(tag: str, db: str) -> dict[str, Any]:
        return template({"app": "enrollment-service", "team": "learner-payments"},
                        [container("web", f"us-docker.pkg.dev/orchard/apps/enrollment:{tag}",
                                   cpu="500m", memory="768Mi", memory_limit="1Gi", port=3000,
                                   env={"RAILS_ENV": "production", "RAILS_MAX_THREADS": "5"},
                                   env_from=[{"configMapRef": {
                                       "name": f"enrollment-env-{tag.replace('.', '-')}"}}],
                                   readiness=http_probe("/up", 3000),
                                   liveness=http_probe("/up", 3000, period=20))])
    for tag, db, at in (("8.1.4", "enrollment", now - td(days=13)),
                        ("8.2.0", "enrollment", now - td(days=5)),
                        ("8.3.0", "enrollment_staging", deploy_at - td(seconds=30))):
        cm = configmap(f"enrollment-env-{tag.replace('.', '-')}", "courses", at, {
            "PGHOST": "courses-pg.courses-data.svc.cluster.local", "PGPORT": "5432",
            "PGDATABASE": db, "PGUSER": "enrollment_app", "PGSSLMODE": "disable",
            "WAITLIST_ENABLED": "true" if tag == "8.3.0" else "false",
            "PAYMENTS_PROVIDER": "stripe", "STRIPE_MODE": "live",
            "LOG_LEVEL": "info"})
        cm["metadata"]["labels"] = {"app.kubernetes.io/instance": "enrollment",
                                    "app.kubernetes.io/managed-by": "Helm",
                                    "helm.sh/chart": f"enrollment-{tag}"}
        s.add(cm)
    _, epods = rollout(s, "enrollment-service", "courses", old,
                       [(29, etmpl("8.1.4", "enrollment"), now - td(days=13)),
                        (30, etmpl("8.2.0", "enrollment"), now - td(days=5)),
                        (31, etmpl("8.3.0", "enrollment_staging"), deploy_at)], names,
                       ips=["10.20.0.14", "10.20.1.15", "10.20.2.16"], host_ips=hosts,
                       change_cause="enrollment 8.3.0: waitlists (values-prod.yaml sync)")
    s.add(service("enrollment-service", "courses", old, {"app": "enrollment-service"}, 80, 3000,
                  cluster_ip="10.30.4.4"))
    s.add(endpoints("enrollment-service", "courses", old,
                    [(p["metadata"]["name"], p["status"]["podIP"], p["spec"]["nodeName"])
                     for p in epods], port=3000))
    ctmpl = template({"app": "course-catalog"},
                     [container("web", "us-docker.pkg.dev/orchard/apps/catalog:4.0.9",
                                env={"PGDATABASE": "catalog"}, readiness=http_probe("/up"))])
    rollout(s, "course-catalog", "courses", old, [(12, ctmpl, now - td(days=8))], names[:2],
            ips=["10.20.0.30", "10.20.1.31"], host_ips=hosts)
    # the migration job of this morning: ran against production, fine
    mig_at = parse("2026-11-26T09:27:40Z")
    mtmpl = template({"app": "enrollment-migrate", "job-name": "enrollment-migrate-31"},
                     [container("migrate", "us-docker.pkg.dev/orchard/apps/enrollment:8.3.0",
                                port=None, args=["bin/rails", "db:migrate"],
                                env={"PGHOST": "courses-pg.courses-data.svc.cluster.local",
                                     "PGDATABASE": "enrollment", "PGUSER": "enrollment_owner"})],
                     restartPolicy="Never")
    s.add({"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": "enrollment-migrate-31", "namespace": "courses",
                        "creationTimestamp": iso(mig_at),
                        "labels": {"app": "enrollment-migrate"},
                        "annotations": {"helm.sh/hook": "pre-upgrade"}},
           "spec": {"backoffLimit": 1, "completions": 1, "parallelism": 1, "template": mtmpl},
           "status": {"succeeded": 1, "startTime": iso(mig_at),
                      "completionTime": iso(mig_at + td(seconds=71)),
                      "conditions": [{"type": "Complete", "status": "True",
                                      "lastTransitionTime": iso(mig_at + td(seconds=71))}]}})
    mpod = pod(f"enrollment-migrate-31-{suffix('mig')}", "courses", "Job",
               "enrollment-migrate-31", mtmpl, names[2], mig_at + td(seconds=1), phase="Succeeded",
               ready=False, ip="10.20.2.50", host_ip=hosts[names[2]])
    mpod["status"]["containerStatuses"][0]["state"]["terminated"].update(
        {"startedAt": iso(mig_at + td(seconds=6)), "finishedAt": iso(mig_at + td(seconds=70))})
    s.add(mpod)
    s.log("courses", mpod["metadata"]["name"], "migrate", [
        f"I, [{iso(mig_at + td(seconds=9))[:-1]}.101233 #1]  INFO -- : Migrating to "
        "AddWaitlistPositionToEnrollments (20261119093000)",
        "== 20261119093000 AddWaitlistPositionToEnrollments: migrating ==================",
        "-- add_column(:enrollments, :waitlist_position, :integer)",
        "   -> 0.0061s",
        "== 20261119093000 AddWaitlistPositionToEnrollments: migrated (0.0063s) =========",
        f"I, [{iso(mig_at + td(seconds=70))[:-1]}.402118 #1]  INFO -- : database enrollment "
        "is at version 20261119093000"])
    # postgres (in cluster), serving both the production and the staging databases
    ptmpl = template({"app": "courses-pg"},
                     [container("postgres", "postgres:16.4", cpu="2", memory="6Gi",
                                memory_limit="6Gi", port=5432,
                                args=["-c", "log_line_prefix=%m [%p] %q%u@%d ", "-c",
                                      "log_connections=on"])])
    s.add({"apiVersion": "apps/v1", "kind": "StatefulSet",
           "metadata": {"name": "courses-pg", "namespace": "courses-data",
                        "creationTimestamp": iso(old), "labels": {"app": "courses-pg"}},
           "spec": {"replicas": 1, "serviceName": "courses-pg", "template": ptmpl,
                    "selector": {"matchLabels": {"app": "courses-pg"}}},
           "status": {"replicas": 1, "readyReplicas": 1, "currentReplicas": 1,
                      "updatedReplicas": 1, "availableReplicas": 1}})
    s.add(pod("courses-pg-0", "courses-data", "StatefulSet", "courses-pg", ptmpl, names[1],
              now - td(days=19), ip="10.20.1.5", host_ip=hosts[names[1]]))
    s.add(service("courses-pg", "courses-data", old, {"app": "courses-pg"}, 5432, 5432,
                  cluster_ip="10.30.9.9"))
    pg = []
    def pgl(t: Any, pid: int, who: str, msg: str) -> str:
        return f"{t.strftime('%Y-%m-%d %H:%M:%S')}.{(pid * 7) % 1000:03d} UTC [{pid}] {who}{msg}"
    t = now - td(hours=2)
    pid = 40110
    while t < now:
        pg.append(pgl(t, 71, "", "LOG:  checkpoint starting: time"))
        t += td(minutes=5)
    pg.append(pgl(mig_at + td(seconds=3), 52001, "", "LOG:  connection authorized: "
                  "user=enrollment_owner database=enrollment application_name=rails"))
    for p in epods:
        at = parse(p["metadata"]["creationTimestamp"]) + td(seconds=6)
        for c in range(2):
            pid += 11
            pg.append(pgl(at + td(seconds=c), pid, "", "LOG:  connection authorized: user="
                          "enrollment_app database=enrollment_staging "
                          "application_name=enrollment-service"))
    for m in range(115, 0, -20):
        pid += 3
        pg.append(pgl(now - td(minutes=m), pid, "", "LOG:  connection authorized: user="
                      "catalog_app database=catalog application_name=course-catalog"))
    t = deploy_at + td(seconds=70)
    k = 0
    while t < now:
        pp = 40121 + 11 * (k % 6)
        pg.append(pgl(t, pp, "enrollment_app@enrollment_staging ",
                      'ERROR:  relation "payment_plans" does not exist at character 15'))
        pg.append(pgl(t, pp, "enrollment_app@enrollment_staging ",
                      'STATEMENT:  SELECT "payment_plans".* FROM "payment_plans" WHERE '
                      '"payment_plans"."course_id" = $1 AND "payment_plans"."active" = $2'))
        if k % 2 == 0:
            s.doc(t, "postgres", "courses-data", "courses-pg-0", "postgres", "error",
                  'relation "payment_plans" does not exist at character 15',
                  **{"user.name": "enrollment_app", "labels.database": "enrollment_staging",
                     "process.pid": pp})
        t += td(seconds=23 + k % 9)
        k += 1
    pg.sort()
    s.log("courses-data", "courses-pg-0", "postgres", pg)
    # enrollment logs (rails)
    for p in epods:
        pname = p["metadata"]["name"]
        lines = ["=> Booting Puma", "=> Rails 7.1.4 application starting in production",
                 "Puma starting in single mode...", "* Listening on http://0.0.0.0:3000"]
        t = parse(p["metadata"]["creationTimestamp"]) + td(seconds=40)
        k = 0
        while t < now:
            rid = suffix(pname + str(k), 8)
            stamp = t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{(k * 4391) % 1000000:06d}"
            if k % 3 == 0:
                lines.append(f"I, [{stamp} #1]  INFO -- : [{rid}] Started POST "
                             '"/api/v2/checkout" for 10.20.0.5')
                err = ('ActiveRecord::StatementInvalid (PG::UndefinedTable: ERROR:  relation '
                       '"payment_plans" does not exist\nLINE 1: SELECT "payment_plans".* FROM '
                       '"payment_plans" WHERE "payment_...')
                lines.append(f"F, [{stamp} #1] FATAL -- : [{rid}] {err.splitlines()[0]}")
                lines.append(f"F, [{stamp} #1] FATAL -- : [{rid}] app/models/course.rb:88:in "
                             "`active_payment_plan'")
                lines.append(f"I, [{stamp} #1]  INFO -- : [{rid}] Completed 500 Internal Server "
                             f"Error in {9 + k % 6}ms (ActiveRecord: 2.1ms)")
                if k % 2 == 0:
                    s.doc(t, "enrollment-service", "courses", pname, "web", "error",
                          f"[{rid}] {err.splitlines()[0]}",
                          **{"error.type": "ActiveRecord::StatementInvalid",
                             "http.response.status_code": 500, "url.path": "/api/v2/checkout"})
            else:
                lines.append(f"I, [{stamp} #1]  INFO -- : [{rid}] Started GET "
                             f'"/api/v2/courses/{1200 + k % 90}" for 10.20.0.5')
                lines.append(f"I, [{stamp} #1]  INFO -- : [{rid}] Completed 200 OK in "
                             f"{21 + k % 15}ms (Views: 3.2ms | ActiveRecord: 8.8ms)")
            t += td(seconds=14)
            k += 1
        s.log("courses", pname, "web", lines)
    s.add(event("courses", "Pod", epods[0]["metadata"]["name"], "Unhealthy",
                "Readiness probe failed: Get \"http://10.20.0.14:3000/up\": context deadline "
                "exceeded (Client.Timeout exceeded while awaiting headers)",
                now - td(minutes=29), now - td(minutes=29), host=names[0]))
    # metrics
    ts = timeline(now, 3)
    dp = deploy_at.timestamp()
    for p in epods:
        lab = {"namespace": "courses", "pod": p["metadata"]["name"]}
        st = parse(p["metadata"]["creationTimestamp"]).timestamp()
        window = [t for t in ts if t >= st]
        s.metrics.counter("http_requests", "requests", {**lab, "controller": "checkout",
                          "status": "500"}, window, lambda t: 0.7)
        s.metrics.counter("http_requests", "requests", {**lab, "controller": "courses",
                          "status": "200"}, window, lambda t: 1.4)
    old_hash = pod_hash("enrollment-service30")
    for i in range(3):
        pname = f"enrollment-service-{old_hash}-{suffix('oldenr' + str(i))}"
        lab = {"namespace": "courses", "pod": pname}
        window = [t for t in ts if t <= dp + 60]
        s.metrics.counter("http_requests", "requests", {**lab, "controller": "checkout",
                          "status": "201"}, window, lambda t: 0.7)
        s.metrics.counter("http_requests", "requests", {**lab, "controller": "courses",
                          "status": "200"}, window, lambda t: 1.4)
        t = now - td(hours=2) + td(seconds=7 * i)
        while t < deploy_at:
            s.doc(t, "enrollment-service", "courses", pname, "web", "info",
                  "Completed 201 Created in 48ms (ActiveRecord: 11.3ms)",
                  **{"http.response.status_code": 201, "url.path": "/api/v2/checkout"})
            t += td(minutes=2)
        s.doc(deploy_at + td(seconds=40 + 30 * i), "enrollment-service", "courses", pname, "web",
              "info", "- Gracefully stopping, waiting for requests to finish")
    pg_lab = {"namespace": "courses-data", "pod": "postgres-exporter-6c9d-kq2lm",
              "server": "courses-pg:5432"}
    rates = {"enrollment": (6.3, 0.05, 0.01, 0.01), "enrollment_staging": (0.0, 4.2, 0.0, 2.1),
             "catalog": (2.2, 2.2, 0.0, 0.0)}
    for db, (c0, c1, r0, r1) in rates.items():
        s.metrics.counter("pg_stat_database_xact_commit", "commits", {**pg_lab, "datname": db},
                          ts, lambda t, c0=c0, c1=c1: c0 if t < dp else c1)
        s.metrics.counter("pg_stat_database_xact_rollback", "rollbacks",
                          {**pg_lab, "datname": db}, ts,
                          lambda t, r0=r0, r1=r1: r0 if t < dp else r1)
    return s


STORIES = {"freight-quotes-flaky-dns-cache": dns_cache_rollout,
           "enrollment-relation-does-not-exist": staging_database}
