"""Stories 3-4: a hostPort a DaemonSet holds on every node; a Host-header allowlist that
the kubelet's probes cannot pass."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from . import kube as k
from .story import Story


def _healthy(s: Story, ns: str, name: str, image: str, nodes: list[str], replicas: int,
             port: int, ip_base: str, *, revision: int = 5, started_ago: float = 4000,
             probe_path: str = "/health", env: list[dict] | None = None,
             cpu: str = "100m", memory: str = "256Mi") -> list[str]:
    now = s.now
    t = k.pod_template({"app": name}, [k.container(
        name, image, ports=[{"containerPort": port, "name": "http"}],
        requests={"cpu": cpu, "memory": memory},
        limits={"memory": f"{int(memory[:-2]) * 2}{memory[-2:]}"}, env=env,
        readinessProbe=k.http_probe(probe_path, "http"))])
    h = k.template_hash(ns + name)
    s.add(k.deployment(ns, name, "2025-09-01T10:00:00Z", t, replicas=replicas,
                       revision=revision, status=k.deploy_status(
                           now, replicas=replicas, ready=replicas, updated=replicas,
                           available=replicas, generation=revision + 2,
                           progressing=("True", "NewReplicaSetAvailable",
                                        f'ReplicaSet "{name}-{h}" has successfully progressed.',
                                        started_ago))),
          k.replicaset(ns, name, h, k.stamp(now, started_ago + 1), t, revision=revision,
                       replicas=replicas, ready=replicas))
    pods = []
    for i in range(replicas):
        pn = f"{name}-{h}-{k.suffix(ns + name + str(i))}"
        pods.append(pn)
        s.add(k.pod(ns, pn, k.stamp(now, started_ago), t, owner=("ReplicaSet", f"{name}-{h}"),
                    node_name=nodes[i % len(nodes)], ip=f"{ip_base}.{20 + i}", phase="Running",
                    ready=True, statuses=[k.running(name, image, k.stamp(now, started_ago - 0.2))],
                    extra_labels={"pod-template-hash": h}))
    return pods


def hostport_taken() -> Story:
    now = datetime(2026, 11, 30, 16, 5, tzinfo=UTC)
    s = Story(
        id="token-proxy-rollout-pending", title="token-proxy 1.9 deploy times out",
        now=now,
        report="""pipeline for token-proxy 1.9.0 failed: 'deployment "token-proxy" exceeded its
progress deadline'. two new pods just sit there. cluster full again? the pool-1 nodes were
at ~80% cpu requests last week. can we just add a node?""",
        truth={"category": "unschedulable",
               "culprit": {"kind": "Deployment", "namespace": "payments",
                           "name": "token-proxy"},
               "evidence": ["didn't have free ports for the requested pod ports",
                            "hostPort: 9100"],
               "fix": "Drop hostPort 9100 from token-proxy 1.9.0 (node-exporter holds 9100 on "
                      "every node via hostNetwork); expose metrics on the container port and "
                      "scrape the pod instead"})
    rnd = random.Random(3)
    nodes = [f"gke-pay-prod-pool-1-8c2f61d0-{x}" for x in ("4kq9", "b7tm", "fz2c", "mn8w", "x1rd")]
    s.add(k.namespace("payments", "2024-02-01T10:00:00Z", {"pci": "true"}),
          k.namespace("monitoring", "2024-02-01T10:00:00Z"),
          *[k.node(n, "2026-09-14T03:00:00Z", now, zone=f"europe-west1-{'bcd'[i % 3]}",
                   instance="n2-standard-8", pool="pool-1",
                   labels={"cloud.google.com/gke-nodepool": "pool-1"})
            for i, n in enumerate(nodes)])
    # node-exporter: hostNetwork, port 9100 on every node
    ne_img = "quay.io/prometheus/node-exporter:v1.8.2"
    ne_t = k.pod_template({"app.kubernetes.io/name": "node-exporter"}, [k.container(
        "node-exporter", ne_img, ports=[{"containerPort": 9100, "hostPort": 9100,
                                         "name": "metrics", "protocol": "TCP"}],
        args=["--path.rootfs=/host", "--web.listen-address=0.0.0.0:9100"],
        requests={"cpu": "50m", "memory": "64Mi"}, limits={"memory": "128Mi"})],
        hostNetwork=True, hostPID=True, tolerations=[{"operator": "Exists"}])
    s.add({"apiVersion": "apps/v1", "kind": "DaemonSet",
           "metadata": k.metadata("DaemonSet", "monitoring", "node-exporter",
                                  "2024-02-01T10:20:00Z",
                                  labels={"app.kubernetes.io/name": "node-exporter"}),
           "spec": {"selector": {"matchLabels": {"app.kubernetes.io/name": "node-exporter"}},
                    "template": ne_t, "updateStrategy": {"type": "RollingUpdate"}},
           "status": {"currentNumberScheduled": 5, "desiredNumberScheduled": 5,
                      "numberAvailable": 5, "numberReady": 5, "updatedNumberScheduled": 5,
                      "numberMisscheduled": 0, "observedGeneration": 4}})
    for i, n in enumerate(nodes):
        s.add(k.pod("monitoring", f"node-exporter-{k.suffix('ne' + n)}", k.stamp(now, 8000),
                    ne_t, owner=("DaemonSet", "node-exporter"), node_name=n,
                    ip=f"10.132.0.{11 + i}", host_ip=f"10.132.0.{11 + i}", phase="Running",
                    ready=True, statuses=[k.running("node-exporter", ne_img,
                                                    k.stamp(now, 7999))]))
    old_img = "europe-docker.pkg.dev/pay-prod/apps/token-proxy:1.8.3"
    new_img = "europe-docker.pkg.dev/pay-prod/apps/token-proxy:1.9.0"

    def tpl(image: str, metrics_port: dict) -> dict:
        c = k.container("token-proxy", image,
                        ports=[{"containerPort": 8443, "name": "https", "protocol": "TCP"},
                               metrics_port],
                        requests={"cpu": "500m", "memory": "512Mi"},
                        limits={"cpu": "1", "memory": "768Mi"},
                        env=[{"name": "VAULT_ADDR", "value": "https://vault.security.svc:8200"},
                             {"name": "HSM_POOL", "value": "pay-hsm-eu"}],
                        readinessProbe={"tcpSocket": {"port": 8443}, "periodSeconds": 10,
                                        "initialDelaySeconds": 5})
        return k.pod_template({"app": "token-proxy", "tier": "pci"}, [c],
                              serviceAccountName="token-proxy",
                              affinity={"podAntiAffinity": {
                                  "preferredDuringSchedulingIgnoredDuringExecution": [{
                                      "weight": 100, "podAffinityTerm": {
                                          "topologyKey": "kubernetes.io/hostname",
                                          "labelSelector": {"matchLabels":
                                                            {"app": "token-proxy"}}}}]}})
    old_t = tpl(old_img, {"containerPort": 9102, "name": "metrics", "protocol": "TCP"})
    new_t = tpl(new_img, {"containerPort": 9100, "hostPort": 9100, "name": "metrics",
                          "protocol": "TCP"})
    old_h, new_h = "84c6d9f57b", "6b5f7d8c94"
    s.add(k.deployment(
        "payments", "token-proxy", "2024-02-03T10:00:00Z", new_t, replicas=6, revision=7,
        strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2, "maxUnavailable": 0}},
        annotations={"kubernetes.io/change-cause": "deploy token-proxy 1.9.0 (PAY-2291)"},
        status=k.deploy_status(now, replicas=8, ready=6, updated=2, available=6, generation=9,
                               progressing=("False", "ProgressDeadlineExceeded",
                                            f'ReplicaSet "token-proxy-{new_h}" has timed out '
                                            "progressing.", 12))),
          k.replicaset("payments", "token-proxy", old_h, k.stamp(now, 6100), old_t, revision=6,
                       replicas=6, ready=6),
          k.replicaset("payments", "token-proxy", new_h, k.stamp(now, 22), new_t, revision=7,
                       replicas=2, ready=0))
    olds = []
    for i in range(6):
        pn = f"token-proxy-{old_h}-{k.suffix('tp' + str(i))}"
        olds.append(pn)
        s.add(k.pod("payments", pn, k.stamp(now, 6100), old_t,
                    owner=("ReplicaSet", f"token-proxy-{old_h}"), node_name=nodes[i % 5],
                    ip=f"10.48.{i % 5}.{40 + i}", phase="Running", ready=True,
                    statuses=[k.running("token-proxy", old_img, k.stamp(now, 6099.5))],
                    extra_labels={"pod-template-hash": old_h}))
    sched_msg = ("0/5 nodes are available: 5 node(s) didn't have free ports for the requested "
                 "pod ports. preemption: 0/5 nodes are available: 5 No preemption victims "
                 "found for incoming pod.")
    for i in range(2):
        pn = f"token-proxy-{new_h}-{k.suffix('tpn' + str(i))}"
        s.add(k.pod("payments", pn, k.stamp(now, 22), new_t,
                    owner=("ReplicaSet", f"token-proxy-{new_h}"), node_name=None, ip=None,
                    phase="Pending", ready=False, statuses=[],
                    scheduled=("False", "Unschedulable", sched_msg),
                    extra_labels={"pod-template-hash": new_h}),
              k.event("payments", "Pod", pn, "FailedScheduling", sched_msg,
                      first=k.stamp(now, 22), last=k.stamp(now, 2 + i), count=14,
                      component="default-scheduler"),
              k.event("payments", "Pod", pn, "NotTriggerScaleUp",
                      "pod didn't trigger scale-up: 1 node(s) didn't have free ports for the "
                      "requested pod ports", first=k.stamp(now, 21.5), last=k.stamp(now, 1.5),
                      count=22, type_="Normal", component="cluster-autoscaler"))
    s.add(k.event("payments", "Deployment", "token-proxy", "ScalingReplicaSet",
                  f"Scaled up replica set token-proxy-{new_h} to 2", first=k.stamp(now, 22),
                  last=k.stamp(now, 22), type_="Normal", component="deployment-controller"))
    # bystanders: card-vault (healthy), a nightly reconciliation Job that failed (unrelated)
    _healthy(s, "payments", "card-vault", "europe-docker.pkg.dev/pay-prod/apps/card-vault:4.2.0",
             nodes, 3, 8080, "10.48.3", revision=18)
    _healthy(s, "payments", "fraud-scorer",
             "europe-docker.pkg.dev/pay-prod/apps/fraud-scorer:11.0.2", nodes, 5, 8080,
             "10.48.4", revision=40, started_ago=2500, cpu="3500m", memory="6Gi")
    job_t = k.pod_template({"job-name": "ledger-reconcile-29405280"}, [k.container(
        "reconcile", "europe-docker.pkg.dev/pay-prod/apps/ledger-reconcile:2.0.1",
        requests={"cpu": "200m", "memory": "256Mi"})], restartPolicy="Never")
    s.add({"apiVersion": "batch/v1", "kind": "Job",
           "metadata": k.metadata("Job", "payments", "ledger-reconcile-29405280",
                                  k.stamp(now, 65), labels={"app": "ledger-reconcile"}),
           "spec": {"backoffLimit": 2, "template": job_t},
           "status": {"failed": 3, "startTime": k.stamp(now, 65),
                      "conditions": [{"type": "Failed", "status": "True",
                                      "reason": "BackoffLimitExceeded",
                                      "message": "Job has reached the specified backoff limit",
                                      "lastProbeTime": k.stamp(now, 48),
                                      "lastTransitionTime": k.stamp(now, 48)}]}},
          k.event("payments", "Job", "ledger-reconcile-29405280", "BackoffLimitExceeded",
                  "Job has reached the specified backoff limit", first=k.stamp(now, 48),
                  last=k.stamp(now, 48), component="job-controller"))
    for m in (64, 57, 49):
        s.log(m, "reconcile: upstream statement file for 2026-11-29 not yet published by "
              "acquirer (HTTP 404), giving up", "error", "ledger-reconcile", "payments",
              f"ledger-reconcile-29405280-{k.suffix('lr' + str(m))}", "reconcile")
    for m in range(60, 0, -1):
        for pn in olds:
            if rnd.random() < 0.35:
                when = (now - timedelta(minutes=m)).strftime("%Y-%m-%dT%H:%M:%S")
                s.log(m + rnd.random(), f'[{when}Z] '
                      f'"POST /v1/tokenize HTTP/2" 200 - {rnd.randint(180, 420)} '
                      f"{rnd.randint(3, 14)}ms upstream=hsm", "info", "token-proxy",
                      "payments", pn, **{"http.response.status_code": 200})
    for pn in olds[:2]:
        s.pod_log("payments", pn, "token-proxy", [
            f"{(now - timedelta(minutes=m)).strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3]}Z INFO "
            f"tokenize ok bin=4{rnd.randint(10000, 99999)} hsm_slot={rnd.randint(1, 4)} "
            f"{rnd.randint(3, 14)}ms" for m in range(30, 0, -1)])
    return s


def host_header_probes() -> Story:
    now = datetime(2026, 11, 25, 11, 30, tzinfo=UTC)
    s = Story(
        id="product-api-rollout-not-ready", title="product-api 3.4 pods never Ready",
        now=now,
        report="""product-api 3.4.0 rollout stuck, the new pod is 0/1 forever. the app itself
works - I port-forwarded to it and curled /api/v2/products, 200. so k8s being weird? maybe
the node it landed on""",
        truth={"category": "probe_failure",
               "culprit": {"kind": "Deployment", "namespace": "catalog", "name": "product-api"},
               "evidence": ["HTTP probe failed with statuscode: 400",
                            "Invalid HTTP_HOST header", "DJANGO_ALLOWED_HOSTS"],
               "fix": "Let the probes through the Host allowlist: add the pod IP (or a probe "
                      "httpHeaders Host: product-api) or exempt /healthz/ from the "
                      "ALLOWED_HOSTS check that 3.4.0 turned on"})
    rnd = random.Random(4)
    nodes = ["worker-a1.k8s.shopwell.internal", "worker-a2.k8s.shopwell.internal",
             "worker-b1.k8s.shopwell.internal"]
    s.add(k.namespace("catalog", "2025-01-10T10:00:00Z"),
          *[k.node(n, "2025-12-01T00:00:00Z", now, zone=f"onprem-{n[7]}", instance="vm-16c64g",
                   cpu="16", memory="64Gi") for n in nodes])
    old_img = "registry.shopwell.internal/catalog/product-api:3.3.2"
    new_img = "registry.shopwell.internal/catalog/product-api:3.4.0"

    def tpl(image: str, extra_env: list[dict]) -> dict:
        c = k.container(
            "product-api", image, ports=[{"containerPort": 8000, "name": "http"}],
            requests={"cpu": "300m", "memory": "512Mi"}, limits={"memory": "1Gi"},
            env=[{"name": "DJANGO_SETTINGS_MODULE", "value": "productapi.settings.prod"},
                 {"name": "DATABASE_HOST", "value": "catalog-db.catalog.svc"},
                 {"name": "GUNICORN_CMD_ARGS", "value": "--workers 3 --threads 4"},
                 *extra_env],
            readinessProbe=k.http_probe("/healthz/", 8000, delay=10))
        return k.pod_template({"app": "product-api"}, [c], serviceAccountName="product-api")
    old_t = tpl(old_img, [])
    new_t = tpl(new_img, [{"name": "DJANGO_ALLOWED_HOSTS",
                           "value": "api.shopwell.example,product-api,product-api.catalog,"
                                    "product-api.catalog.svc.cluster.local"},
                          {"name": "DJANGO_CSRF_TRUSTED_ORIGINS",
                           "value": "https://api.shopwell.example"}])
    old_h, new_h = "79bd6c54f8", "5fc8d94b7d"
    s.add(k.deployment(
        "catalog", "product-api", "2025-01-12T10:00:00Z", new_t, replicas=4, revision=23,
        strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
        status=k.deploy_status(now, replicas=5, ready=4, updated=1, available=4, generation=25,
                               progressing=("False", "ProgressDeadlineExceeded",
                                            f'ReplicaSet "product-api-{new_h}" has timed out '
                                            "progressing.", 16))),
          k.replicaset("catalog", "product-api", old_h, k.stamp(now, 2900), old_t, revision=22,
                       replicas=4, ready=4),
          k.replicaset("catalog", "product-api", new_h, k.stamp(now, 26), new_t, revision=23,
                       replicas=1, ready=0))
    olds = []
    for i in range(4):
        pn = f"product-api-{old_h}-{k.suffix('pa' + str(i))}"
        olds.append(pn)
        s.add(k.pod("catalog", pn, k.stamp(now, 2900), old_t,
                    owner=("ReplicaSet", f"product-api-{old_h}"), node_name=nodes[i % 3],
                    ip=f"10.32.{i % 3}.{30 + i}", phase="Running", ready=True,
                    statuses=[k.running("product-api", old_img, k.stamp(now, 2899.6))],
                    extra_labels={"pod-template-hash": old_h}))
    new_ip = "10.32.2.57"
    new_pod = f"product-api-{new_h}-{k.suffix('pan')}"
    s.add(k.pod("catalog", new_pod, k.stamp(now, 26), new_t,
                owner=("ReplicaSet", f"product-api-{new_h}"), node_name=nodes[2], ip=new_ip,
                phase="Running", ready=False,
                statuses=[k.running("product-api", new_img, k.stamp(now, 25.8), ready=False)],
                extra_labels={"pod-template-hash": new_h}),
          k.event("catalog", "Pod", new_pod, "Unhealthy",
                  "Readiness probe failed: HTTP probe failed with statuscode: 400",
                  first=k.stamp(now, 25.6), last=k.stamp(now, 0.2), count=153, host=nodes[2]),
          k.event("catalog", "Deployment", "product-api", "ScalingReplicaSet",
                  f"Scaled up replica set product-api-{new_h} to 1", first=k.stamp(now, 26),
                  last=k.stamp(now, 26), type_="Normal", component="deployment-controller"))
    ports = [{"name": "http", "port": 80, "targetPort": 8000, "protocol": "TCP"}]
    s.add(k.service("catalog", "product-api", "2025-01-12T10:00:00Z", {"app": "product-api"},
                    ports, cluster_ip="10.96.41.7"),
          k.endpoints("catalog", "product-api", "2025-01-12T10:00:00Z",
                      [(f"10.32.{i % 3}.{30 + i}", olds[i], nodes[i % 3]) for i in range(4)],
                      [(new_ip, new_pod, nodes[2])],
                      [{"name": "http", "port": 8000, "protocol": "TCP"}]))
    # the migration Job of 3.4.0 ran fine; search-sync is a healthy bystander
    mig_t = k.pod_template({"job-name": "product-api-migrate-23"}, [k.container(
        "migrate", new_img, command=["python", "manage.py", "migrate", "--noinput"])],
        restartPolicy="Never")
    s.add({"apiVersion": "batch/v1", "kind": "Job",
           "metadata": k.metadata("Job", "catalog", "product-api-migrate-23", k.stamp(now, 28),
                                  labels={"app": "product-api-migrate"}),
           "spec": {"backoffLimit": 1, "template": mig_t},
           "status": {"succeeded": 1, "startTime": k.stamp(now, 28),
                      "completionTime": k.stamp(now, 27),
                      "conditions": [{"type": "Complete", "status": "True",
                                      "lastProbeTime": k.stamp(now, 27),
                                      "lastTransitionTime": k.stamp(now, 27)}]}})
    sync = _healthy(s, "catalog", "search-sync",
                    "registry.shopwell.internal/catalog/search-sync:1.12.0", nodes, 2, 8080,
                    "10.32.1", revision=9, started_ago=5200, probe_path="/ping")
    s.add(k.event("catalog", "Pod", sync[1], "Unhealthy",
                  'Readiness probe failed: Get "http://10.32.1.21:8080/ping": dial tcp '
                  "10.32.1.21:8080: connect: connection refused", first=k.stamp(now, 38),
                  last=k.stamp(now, 38), count=1, host=nodes[1]))
    migr_pod = f"product-api-migrate-23-{k.suffix('mig')}"
    for i, msg in enumerate(("Operations to perform:", "  Apply all migrations: admin, auth, "
                             "catalog, contenttypes, sessions", "Running migrations:",
                             "  Applying catalog.0087_product_gtin_index... OK")):
        s.log(27.9 - i * 0.1, msg, "info", "product-api", "catalog", migr_pod, "migrate")
    # new pod: gunicorn boot, then every probe refused by Django's host check
    t0 = now - timedelta(minutes=25.8)

    def g(moment: datetime, pid: int, level: str, msg: str) -> str:
        return f"[{moment.strftime('%Y-%m-%d %H:%M:%S')} +0000] [{pid}] [{level}] {msg}"
    lines = [g(t0, 1, "INFO", "Starting gunicorn 22.0.0"),
             g(t0, 1, "INFO", "Listening at: http://0.0.0.0:8000 (1)"),
             g(t0, 1, "INFO", "Using worker: gthread"),
             *[g(t0 + timedelta(seconds=0.2), p, "INFO", f"Booting worker with pid: {p}")
               for p in (8, 9, 10)]]
    moment = t0 + timedelta(seconds=10)
    port_forward_at = now - timedelta(minutes=9)
    pf_done = False
    while moment < now:
        if not pf_done and moment > port_forward_at:
            pf_done = True
            lines.append(f'127.0.0.1 - - [{moment.strftime("%d/%b/%Y:%H:%M:%S")} +0000] '
                         '"GET /api/v2/products?limit=1 HTTP/1.1" 200 1184 "-" "curl/8.5.0"')
            s.log((now - moment).total_seconds() / 60, '"GET /api/v2/products?limit=1 '
                  'HTTP/1.1" 200 1184 "-" "curl/8.5.0"', "info", "product-api", "catalog",
                  new_pod, **{"http.response.status_code": 200, "url.path": "/api/v2/products",
                              "source.ip": "127.0.0.1"})
        stamp_ = moment.strftime("%Y-%m-%d %H:%M:%S") + f",{rnd.randint(100, 999)}"
        warn = (f"Invalid HTTP_HOST header: '{new_ip}:8000'. You may need to add "
                f"'{new_ip}' to ALLOWED_HOSTS.")
        lines.append(f"{stamp_} WARNING django.security.DisallowedHost {warn}")
        lines.append(f'10.32.2.1 - - [{moment.strftime("%d/%b/%Y:%H:%M:%S")} +0000] '
                     '"GET /healthz/ HTTP/1.1" 400 143 "-" "kube-probe/1.29"')
        ago = (now - moment).total_seconds() / 60
        s.log(ago, warn, "warning", "product-api", "catalog", new_pod,
              **{"log.logger": "django.security.DisallowedHost"})
        s.log(ago - 0.001, '"GET /healthz/ HTTP/1.1" 400 143 "-" "kube-probe/1.29"', "info",
              "product-api", "catalog", new_pod,
              **{"http.response.status_code": 400, "url.path": "/healthz/",
                 "user_agent.original": "kube-probe/1.29"})
        moment += timedelta(seconds=10)
    s.pod_log("catalog", new_pod, "product-api", lines)
    for pn in olds:
        body = []
        for m in range(60, 0, -1):
            if rnd.random() < 0.6:
                moment = now - timedelta(minutes=m, seconds=rnd.randint(0, 59))
                path = rnd.choice(["/api/v2/products?page=2", "/api/v2/products/81723",
                                   "/api/v2/categories", "/api/v2/products?q=kettle"])
                line = (f'10.32.0.14 - - [{moment.strftime("%d/%b/%Y:%H:%M:%S")} +0000] '
                        f'"GET {path} HTTP/1.1" 200 {rnd.randint(800, 9000)} "-" '
                        '"shopwell-web/2026.11"')
                body.append(line)
                s.log((now - moment).total_seconds() / 60, line, "info", "product-api",
                      "catalog", pn, **{"http.response.status_code": 200})
            if m % 2 == 0:
                moment = now - timedelta(minutes=m)
                body.append(f'10.32.0.1 - - [{moment.strftime("%d/%b/%Y:%H:%M:%S")} +0000] '
                            '"GET /healthz/ HTTP/1.1" 200 15 "-" "kube-probe/1.29"')
        s.pod_log("catalog", pn, "product-api", sorted(body, key=lambda x: x.split("[")[1]))
    return s
