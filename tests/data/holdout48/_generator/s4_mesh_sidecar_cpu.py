"""4. unschedulable: the mesh injector now adds a 1-CPU sidecar request; new pods no longer fit the
small pool."""

from __future__ import annotations

import datetime as dt
import json

from ._kit import (
    Cluster,
    Scenario,
    _with_hash,
    configmap,
    container,
    deploy_status,
    deployment,
    endpoints,
    env,
    hexid,
    http_probe,
    iso,
    iso_ms,
    namespace,
    node,
    pod,
    replicaset,
    running,
    service,
    suffix,
    template,
    uid,
)

SID = "mesh-sidecar-cpu-pending"

PROXY_IMG = "docker.io/istio/proxyv2:1.22.3"
SCHED_MSG = (
    "0/6 nodes are available: 3 Insufficient cpu, 3 node(s) didn't match Pod's node "
    "affinity/selector. preemption: 0/6 nodes are available: 3 No preemption victims found for "
    "incoming pod, 3 Preemption is not helpful for scheduling."
)


def _proxy(cpu_req: str, mem_req: str) -> dict:
    c = container(
        "istio-proxy",
        PROXY_IMG,
        ports=[15090],
        requests={"cpu": cpu_req, "memory": mem_req},
        limits={"cpu": "2", "memory": "1Gi"},
        args=[
            "proxy",
            "sidecar",
            "--domain",
            "$(POD_NAMESPACE).svc.cluster.local",
            "--proxyLogLevel=warning",
            "--proxyComponentLogLevel=misc:error",
            "--log_output_level=default:info",
        ],
        env=env(
            PILOT_CERT_PROVIDER="istiod",
            CA_ADDR="istiod.istio-system.svc:15012",
            ISTIO_META_CLUSTER_ID="Kubernetes",
        ),
        readiness={
            "httpGet": {"path": "/healthz/ready", "port": 15021, "scheme": "HTTP"},
            "periodSeconds": 15,
            "timeoutSeconds": 3,
            "failureThreshold": 4,
            "successThreshold": 1,
            "initialDelaySeconds": 0,
        },
        security={
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "privileged": False,
            "readOnlyRootFilesystem": True,
            "runAsGroup": 1337,
            "runAsNonRoot": True,
            "runAsUser": 1337,
        },
        mounts=[
            {"name": "istio-envoy", "mountPath": "/etc/istio/proxy"},
            {"name": "istiod-ca-cert", "mountPath": "/var/run/secrets/istio"},
            {"name": "istio-token", "mountPath": "/var/run/secrets/tokens"},
        ],
    )
    c["ports"][0]["name"] = "http-envoy-prom"
    return c


def _init() -> dict:
    c = container(
        "istio-init",
        PROXY_IMG,
        requests={"cpu": "10m", "memory": "40Mi"},
        limits={"cpu": "2", "memory": "1Gi"},
        args=[
            "istio-iptables",
            "-p",
            "15001",
            "-z",
            "15006",
            "-u",
            "1337",
            "-m",
            "REDIRECT",
            "-i",
            "*",
            "-x",
            "",
            "-b",
            "*",
            "-d",
            "15090,15021,15020",
            "--log_output_level=default:info",
        ],
        security={
            "allowPrivilegeEscalation": False,
            "capabilities": {"add": ["NET_ADMIN", "NET_RAW"], "drop": ["ALL"]},
            "privileged": False,
            "readOnlyRootFilesystem": False,
            "runAsGroup": 0,
            "runAsNonRoot": False,
            "runAsUser": 0,
        },
    )
    return c


ISTIO_VOLS = [
    {"name": "istio-envoy", "emptyDir": {"medium": "Memory"}},
    {"name": "istiod-ca-cert", "configMap": {"name": "istio-ca-root-cert", "defaultMode": 420}},
    {
        "name": "istio-token",
        "projected": {
            "defaultMode": 420,
            "sources": [
                {
                    "serviceAccountToken": {
                        "audience": "istio-ca",
                        "expirationSeconds": 43200,
                        "path": "istio-token",
                    }
                }
            ],
        },
    },
]
STATUS_ANN = json.dumps(
    {
        "initContainers": ["istio-init"],
        "containers": ["istio-proxy"],
        "volumes": ["istio-envoy", "istiod-ca-cert", "istio-token"],
        "imagePullSecrets": None,
        "revision": "default",
    },
    separators=(",", ":"),
)


def build() -> Scenario:
    sc = Scenario(
        SID,
        "query-frontend scaled up but new pods stuck Pending; search latency up",
        "2026-06-23T11:30:00Z",
        "search p95 is awful since ~10:50. query-frontend HPA went to 5 replicas but 2 pods are "
        "stuck Pending. suggest-api 2.14.1 went out at 10:20 on the same pool, did it eat the "
        "small nodes? or do we just need bigger nodes? nobody touched query-frontend's "
        "resources.\n",
        {
            "category": "unschedulable",
            "culprit": {"kind": "Deployment", "namespace": "search", "name": "query-frontend"},
            "evidence": [
                "Insufficient cpu",
                "istio-proxy",
                "cpu: '1'",
                "sidecar.istio.io/status",
                "1930m",
            ],
            "fix": "Bring the injected sidecar's CPU request back down "
            "(global.proxy.resources.requests.cpu in the istio-sidecar-injector values, or "
            "annotate query-frontend's pod template with sidecar.istio.io/proxyCPU: 100m); the "
            "app's own 500m request is unchanged.",
        },
    )
    now = sc.now
    old = now - dt.timedelta(days=300)
    sc.add(namespace("search", old, {"team": "search", "istio-injection": "enabled"}))
    sc.add(namespace("istio-system", old))
    sc.add(namespace("kube-system", old))
    small, general = [], []
    for i, s in enumerate(("4k2x", "9dqm", "t7hw")):
        name = f"gke-lyra-prod-pool-small-5e2a91c4-{s}"
        ip = f"10.132.0.{31 + i}"
        small.append((name, ip, 10 + i))
        sc.add(
            node(
                name,
                created=now - dt.timedelta(days=33 + i),
                now=now,
                cpu="2",
                memory="8145236Ki",
                alloc_cpu="1930m",
                alloc_memory="6067532Ki",
                internal_ip=ip,
                kubelet="v1.30.3-gke.1969001",
                os_image="Container-Optimized OS from Google",
                kernel="6.1.90+",
                runtime="containerd://1.7.19",
                labels={
                    "cloud.google.com/gke-nodepool": "pool-small",
                    "node.kubernetes.io/instance-type": "e2-standard-2",
                    "topology.kubernetes.io/zone": "europe-west4-" + "abc"[i],
                },
                provider_id=f"gce://lyra-prod/europe-west4-{'abc'[i]}/{name}",
            )
        )
    for i, s in enumerate(("2mzp", "b8vn", "q5rc")):
        name = f"gke-lyra-prod-pool-general-0b7d33f1-{s}"
        ip = f"10.132.0.{41 + i}"
        general.append((name, ip, 20 + i))
        sc.add(
            node(
                name,
                created=now - dt.timedelta(days=33 + i),
                now=now,
                cpu="8",
                memory="32880828Ki",
                alloc_cpu="7910m",
                alloc_memory="29094588Ki",
                internal_ip=ip,
                kubelet="v1.30.3-gke.1969001",
                os_image="Container-Optimized OS from Google",
                kernel="6.1.90+",
                runtime="containerd://1.7.19",
                labels={
                    "cloud.google.com/gke-nodepool": "pool-general",
                    "node.kubernetes.io/instance-type": "e2-standard-8",
                    "topology.kubernetes.io/zone": "europe-west4-" + "abc"[i],
                },
                provider_id=f"gce://lyra-prod/europe-west4-{'abc'[i]}/{name}",
            )
        )
    cl = Cluster(sc, "10.52")

    # ------------------------------------------------------------------ query-frontend
    qf_img = "europe-docker.pkg.dev/lyra-prod/search/query-frontend:3.8.1"
    labels = {"app": "query-frontend", "version": "3.8.1"}
    app = container(
        "query-frontend",
        qf_img,
        ports=[8080],
        requests={"cpu": "500m", "memory": "512Mi"},
        limits={"memory": "1Gi"},
        env=env(
            SEARCH_BACKEND="http://search-api.search.svc:8080",
            SUGGEST_URL="http://suggest-api.search.svc",
        ),
        readiness=http_probe("/ready", 8080),
        liveness=http_probe("/live", 8080, delay=10),
    )
    tpl = template(
        labels,
        [app],
        node_selector={"cloud.google.com/gke-nodepool": "pool-small"},
        service_account="query-frontend",
    )
    h = suffix("qf-rev12", 10)
    rsn = f"query-frontend-{h}"
    created = now - dt.timedelta(days=280)
    roll = now - dt.timedelta(days=3, hours=4, minutes=12)
    scale = now.replace(hour=10, minute=52, second=14)
    sc.add(
        deployment(
            "search",
            "query-frontend",
            created=created,
            replicas=5,
            tpl=tpl,
            revision=12,
            generation=31,
            annotations={"kubernetes.io/change-cause": "3.8.1: facet cache"},
            status=deploy_status(
                5,
                3,
                updated=5,
                available=3,
                progressing=(
                    "False",
                    "ProgressDeadlineExceeded",
                    f'ReplicaSet "{rsn}" has timed out progressing.',
                ),
                avail_since=scale,
                progress_time=scale + dt.timedelta(seconds=600),
                name="query-frontend",
                rs_name=rsn,
            ),
        )
    )
    sc.add(
        replicaset(
            "search",
            "query-frontend",
            tpl=tpl,
            h=h,
            revision=12,
            created=roll,
            replicas=5,
            ready=3,
            annotations={"kubernetes.io/change-cause": "3.8.1: facet cache"},
        )
    )
    sc.objects[-1]["metadata"]["generation"] = 5
    sc.objects[-1]["status"]["observedGeneration"] = 5
    eps = []
    pods_meta = []

    def qf_pod(
        i: int, created_at: dt.datetime, proxy_cpu: str, proxy_mem: str, nd: tuple | None
    ) -> dict:
        pn = f"{rsn}-{suffix(rsn + str(i), 5)}"
        t = _with_hash(tpl, h)
        t["spec"]["containers"] = t["spec"]["containers"] + [_proxy(proxy_cpu, proxy_mem)]
        t["spec"]["initContainers"] = [_init()]
        t["spec"]["volumes"] = ISTIO_VOLS
        t["metadata"]["labels"].update(
            {
                "security.istio.io/tlsMode": "istio",
                "service.istio.io/canonical-name": "query-frontend",
                "service.istio.io/canonical-revision": "3.8.1",
            }
        )
        ann = {
            "istio.io/rev": "default",
            "kubectl.kubernetes.io/default-container": "query-frontend",
            "kubectl.kubernetes.io/default-logs-container": "query-frontend",
            "prometheus.io/path": "/stats/prometheus",
            "prometheus.io/port": "15020",
            "prometheus.io/scrape": "true",
            "sidecar.istio.io/status": STATUS_ANN,
        }
        if nd:
            ip = cl.pod_ip(nd[2])
            started = created_at + dt.timedelta(seconds=6)
            st = [
                running("query-frontend", qf_img, started),
                running("istio-proxy", PROXY_IMG, started),
            ]
            init = [
                {
                    "name": "istio-init",
                    "image": PROXY_IMG,
                    "imageID": "docker.io/istio/proxyv2@sha256:" + hexid("pv", 64),
                    "ready": True,
                    "restartCount": 0,
                    "started": False,
                    "lastState": {},
                    "state": {
                        "terminated": {
                            "exitCode": 0,
                            "reason": "Completed",
                            "startedAt": iso(created_at + dt.timedelta(seconds=3)),
                            "finishedAt": iso(created_at + dt.timedelta(seconds=4)),
                            "containerID": "containerd://" + hexid(pn + "init", 64),
                        }
                    },
                }
            ]
            p = pod(
                "search",
                pn,
                tpl=t,
                owner=("ReplicaSet", rsn),
                node_name=nd[0],
                created=created_at,
                statuses=st,
                ip=ip,
                host_ip=nd[1],
                annotations=ann,
                init_statuses=init,
            )
            eps.append((ip, pn, nd[0]))
        else:
            p = pod(
                "search",
                pn,
                tpl=t,
                owner=("ReplicaSet", rsn),
                node_name=None,
                created=created_at,
                statuses=[],
                ip=None,
                host_ip=None,
                phase="Pending",
                pending_message=SCHED_MSG,
                annotations=ann,
            )
        sc.add(p)
        pods_meta.append((pn, nd[0] if nd else "", proxy_cpu))
        return p

    for i in range(3):
        qf_pod(i, roll + dt.timedelta(seconds=20 * i), "100m", "128Mi", small[i])
    pending = []
    for i in (3, 4):
        pending.append(qf_pod(i, scale, "1", "256Mi", None)["metadata"]["name"])
    sc.add(
        service(
            "search",
            "query-frontend",
            selector={"app": "query-frontend"},
            ports=[("http", 80, 8080)],
            cluster_ip="10.56.4.18",
            created=created,
        )
    )
    sc.add(
        endpoints("search", "query-frontend", ready=eps, ports=[("http", 8080)], created=created)
    )
    sc.add(
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {
                "name": "query-frontend",
                "namespace": "search",
                "uid": uid("search/hpa/query-frontend"),
                "creationTimestamp": iso(created),
            },
            "spec": {
                "scaleTargetRef": {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": "query-frontend",
                },
                "minReplicas": 3,
                "maxReplicas": 10,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "target": {"type": "Utilization", "averageUtilization": 70},
                        },
                    }
                ],
            },
            "status": {
                "currentReplicas": 5,
                "desiredReplicas": 5,
                "lastScaleTime": iso(scale),
                "currentMetrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "current": {"averageUtilization": 94, "averageValue": "469m"},
                        },
                    }
                ],
                "conditions": [
                    {
                        "type": "AbleToScale",
                        "status": "True",
                        "reason": "ReadyForNewScale",
                        "message": "recommended size matches current size",
                        "lastTransitionTime": iso(scale + dt.timedelta(minutes=5)),
                    },
                    {
                        "type": "ScalingActive",
                        "status": "True",
                        "reason": "ValidMetricFound",
                        "message": "the HPA was able to successfully calculate a replica count "
                        "from cpu resource utilization (percentage of request)",
                        "lastTransitionTime": iso(now - dt.timedelta(days=6)),
                    },
                    {
                        "type": "ScalingLimited",
                        "status": "False",
                        "reason": "DesiredWithinRange",
                        "message": "the desired count is within the acceptable range",
                        "lastTransitionTime": iso(now - dt.timedelta(days=2)),
                    },
                ],
            },
        }
    )
    sc.event(
        "HorizontalPodAutoscaler",
        "search",
        "query-frontend",
        "SuccessfulRescale",
        "New size: 5; reason: cpu resource utilization (percentage of request) above target",
        first=scale - dt.timedelta(seconds=1),
        component="horizontal-pod-autoscaler",
        api_version="autoscaling/v2",
    )
    sc.event(
        "Deployment",
        "search",
        "query-frontend",
        "ScalingReplicaSet",
        f"Scaled up replica set {rsn} to 5 from 3",
        first=scale,
        component="deployment-controller",
    )
    for pn in pending:
        sc.event(
            "ReplicaSet",
            "search",
            rsn,
            "SuccessfulCreate",
            f"Created pod: {pn}",
            first=scale,
            component="replicaset-controller",
        )
        sc.event(
            "Pod",
            "search",
            pn,
            "FailedScheduling",
            SCHED_MSG,
            type_="Warning",
            count=9,
            first=scale + dt.timedelta(seconds=1),
            last=now - dt.timedelta(minutes=3, seconds=12 + len(pn) % 40),
            component="default-scheduler",
        )

    # ------------------------------------------------------ suggest-api (harmless rollout at 10:20)
    sg_img = "europe-docker.pkg.dev/lyra-prod/search/suggest-api:2.14.1"
    sg_roll = now.replace(hour=10, minute=20, second=3)
    sgl = {"app": "suggest-api", "version": "2.14.1"}
    sg_app = container(
        "suggest-api",
        sg_img,
        ports=[8080],
        requests={"cpu": "250m", "memory": "384Mi"},
        limits={"memory": "768Mi"},
        readiness=http_probe("/ready", 8080),
    )
    sg_tpl = template(
        sgl,
        [sg_app],
        node_selector={"cloud.google.com/gke-nodepool": "pool-small"},
        service_account="suggest-api",
    )
    sgh = suffix("sg-rev33", 10)
    sg_rsn = f"suggest-api-{sgh}"
    sc.add(
        deployment(
            "search",
            "suggest-api",
            created=created,
            replicas=3,
            tpl=sg_tpl,
            revision=33,
            annotations={"kubernetes.io/change-cause": "2.14.1: typo-tolerance for brand names"},
            status=deploy_status(
                3,
                3,
                avail_since=sg_roll + dt.timedelta(seconds=50),
                progress_time=sg_roll + dt.timedelta(seconds=70),
                name="suggest-api",
                rs_name=sg_rsn,
            ),
        )
    )
    sc.add(
        replicaset(
            "search",
            "suggest-api",
            tpl=sg_tpl,
            h=sgh,
            revision=33,
            created=sg_roll,
            replicas=3,
            ready=3,
        )
    )
    sg_eps = []
    for i in range(3):
        pn = f"{sg_rsn}-{suffix(sg_rsn + str(i), 5)}"
        t = _with_hash(sg_tpl, sgh)
        t["spec"]["containers"] = t["spec"]["containers"] + [_proxy("100m", "128Mi")]
        t["spec"]["initContainers"] = [_init()]
        t["spec"]["volumes"] = ISTIO_VOLS
        t["metadata"]["labels"]["security.istio.io/tlsMode"] = "istio"
        c_at = sg_roll + dt.timedelta(seconds=25 * i)
        ip = cl.pod_ip(small[i][2])
        st = [
            running("suggest-api", sg_img, c_at + dt.timedelta(seconds=5)),
            running("istio-proxy", PROXY_IMG, c_at + dt.timedelta(seconds=5)),
        ]
        sc.add(
            pod(
                "search",
                pn,
                tpl=t,
                owner=("ReplicaSet", sg_rsn),
                node_name=small[i][0],
                created=c_at,
                statuses=st,
                ip=ip,
                host_ip=small[i][1],
                annotations={
                    "sidecar.istio.io/status": STATUS_ANN,
                    "istio.io/rev": "default",
                    "kubectl.kubernetes.io/default-container": "suggest-api",
                },
            )
        )
        sg_eps.append((ip, pn, small[i][0]))
        pods_meta.append((pn, small[i][0], "100m"))
    sc.add(
        service(
            "search",
            "suggest-api",
            selector={"app": "suggest-api"},
            ports=[("http", 80, 8080)],
            cluster_ip="10.56.4.33",
            created=created,
        )
    )
    sc.add(
        endpoints("search", "suggest-api", ready=sg_eps, ports=[("http", 8080)], created=created)
    )

    # ------------------------------------------------------------------ general pool and system
    cl.healthy(
        "search",
        "search-api",
        image="europe-docker.pkg.dev/lyra-prod/search/search-api:5.2.0",
        nodes=general,
        replicas=3,
        created=created,
        rollout=now - dt.timedelta(days=5, hours=2),
        revision=48,
        requests={"cpu": "1500m", "memory": "3Gi"},
        limits={"memory": "4Gi"},
        node_selector={"cloud.google.com/gke-nodepool": "pool-general"},
        tpl_annotations={"sidecar.istio.io/inject": "false"},
    )
    ix = cl.healthy(
        "search",
        "indexer",
        image="europe-docker.pkg.dev/lyra-prod/search/indexer:1.31.2",
        nodes=general[:2],
        replicas=2,
        created=created,
        rollout=now - dt.timedelta(days=1, hours=6),
        revision=19,
        port=9090,
        svc=False,
        requests={"cpu": "2", "memory": "4Gi"},
        limits={"memory": "6Gi"},
        node_selector={"cloud.google.com/gke-nodepool": "pool-general"},
        tpl_annotations={"sidecar.istio.io/inject": "false"},
    )
    cl.healthy(
        "istio-system",
        "istiod",
        image="docker.io/istio/pilot:1.22.3",
        nodes=general[1:],
        replicas=2,
        created=old,
        rollout=now - dt.timedelta(days=6, hours=3),
        revision=14,
        port=15014,
        svc=False,
        probe_path="/ready",
        requests={"cpu": "500m", "memory": "2Gi"},
        limits={"memory": "4Gi"},
        extra_labels={"istio": "pilot"},
    )
    sc.add(
        service(
            "istio-system",
            "istiod",
            selector={"app": "istiod"},
            ports=[
                ("grpc-xds", 15010, 15010),
                ("https-dns", 15012, 15012),
                ("https-webhook", 443, 15017),
            ],
            cluster_ip="10.56.0.90",
            created=old,
        )
    )
    values = {
        "global": {
            "hub": "docker.io/istio",
            "tag": "1.22.3",
            "istioNamespace": "istio-system",
            "logging": {"level": "default:info"},
            "proxy": {
                "autoInject": "enabled",
                "clusterDomain": "cluster.local",
                "holdApplicationUntilProxyStarts": False,
                "image": "proxyv2",
                "logLevel": "warning",
                "privileged": False,
                "resources": {
                    "limits": {"cpu": "2000m", "memory": "1024Mi"},
                    "requests": {"cpu": "1000m", "memory": "256Mi"},
                },
                "statusPort": 15020,
                "tracer": "none",
            },
            "proxy_init": {
                "image": "proxyv2",
                "resources": {
                    "limits": {"cpu": "2000m", "memory": "1024Mi"},
                    "requests": {"cpu": "10m", "memory": "40Mi"},
                },
            },
        },
        "revision": "",
        "sidecarInjectorWebhook": {
            "defaultTemplates": [],
            "enableNamespacesByDefault": False,
            "reinvocationPolicy": "Never",
            "rewriteAppHTTPProbe": True,
        },
    }
    sc.add(
        configmap(
            "istio-system",
            "istio-sidecar-injector",
            {
                "values": json.dumps(values, indent=2),
                "config": (
                    "defaultTemplates: [sidecar]\npolicy: enabled\nalwaysInjectSelector:\n  []\n"
                    "neverInjectSelector:\n  []\ninjectedAnnotations:\n"
                    'template: "{{ Template_Version_And_Istio_Version_Mismatched_Check_Instal'
                    'lation }}"\ntemplates:\n  sidecar: |\n'
                    "    {{- $containers := list }}\n    {{- range $index, $container := "
                    '.Spec.Containers }}{{ if not (eq $container.Name "istio-proxy") '
                    "}}{{ $containers = append $containers $container.Name "
                    "}}{{end}}{{- end}}\n    ...\n"
                ),
            },
            old,
            labels={
                "app": "sidecar-injector",
                "install.operator.istio.io/owning-resource": "unknown",
                "istio.io/rev": "default",
                "operator.istio.io/component": "Pilot",
                "release": "istiod",
                "app.kubernetes.io/managed-by": "Helm",
                "helm.sh/chart": "istiod-1.22.3",
            },
            annotations={
                "meta.helm.sh/release-name": "istiod",
                "meta.helm.sh/release-namespace": "istio-system",
            },
        )
    )
    cl.healthy(
        "kube-system",
        "kube-dns",
        image="gke.gcr.io/k8s-dns-kube-dns:1.23.0-gke.9",
        nodes=general,
        replicas=2,
        created=old,
        rollout=now - dt.timedelta(days=6, hours=9),
        revision=11,
        port=10053,
        svc=False,
        probe_path="/readiness",
        extra_labels={"k8s-app": "kube-dns"},
    )
    # DaemonSets whose pods take a share of every small node
    for dsn, img, cpu in (
        ("fluentbit-gke", "gke.gcr.io/fluent-bit:v1.8.12-gke.35", "100m"),
        ("prometheus-node-exporter", "quay.io/prometheus/node-exporter:v1.8.1", "50m"),
        ("kube-proxy", "gke.gcr.io/kube-proxy-amd64:v1.30.3-gke.1969001", "100m"),
    ):
        dl = {"app": dsn, "k8s-app": dsn}
        dtpl = template(
            dl,
            [
                container(
                    dsn, img, requests={"cpu": cpu, "memory": "64Mi"}, limits={"memory": "256Mi"}
                )
            ],
            service_account=dsn,
        )
        dtpl["spec"]["tolerations"] = [{"operator": "Exists"}]
        ds_created = old
        rev = suffix(dsn + "rev", 10)
        sc.add(
            {
                "apiVersion": "apps/v1",
                "kind": "DaemonSet",
                "metadata": {
                    "name": dsn,
                    "namespace": "kube-system",
                    "uid": uid(f"kube-system/ds/{dsn}"),
                    "generation": 3,
                    "creationTimestamp": iso(ds_created),
                    "labels": dl,
                },
                "spec": {
                    "selector": {"matchLabels": dl},
                    "template": dtpl,
                    "updateStrategy": {
                        "type": "RollingUpdate",
                        "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
                    },
                },
                "status": {
                    "currentNumberScheduled": 6,
                    "desiredNumberScheduled": 6,
                    "numberAvailable": 6,
                    "numberMisscheduled": 0,
                    "numberReady": 6,
                    "observedGeneration": 3,
                    "updatedNumberScheduled": 6,
                },
            }
        )
        for j, nd in enumerate(small + general):
            pn = f"{dsn}-{suffix(dsn + nd[0], 5)}"
            t = json.loads(json.dumps(dtpl))
            t["metadata"]["labels"]["controller-revision-hash"] = rev
            c_at = now - dt.timedelta(days=6, hours=5, minutes=j)
            sc.add(
                pod(
                    "kube-system",
                    pn,
                    tpl=t,
                    owner=("DaemonSet", dsn),
                    node_name=nd[0],
                    created=c_at,
                    statuses=[running(dsn, img, c_at + dt.timedelta(seconds=4))],
                    ip=nd[1],
                    host_ip=nd[1],
                )
            )
            if nd in small:
                pods_meta.append((pn, nd[0], cpu))

    # decoy: an indexer pod had one slow readiness probe while it merged segments
    ixp = ix["pods"][1]["metadata"]["name"]
    ixp_ip = ix["pods"][1]["status"]["podIP"]
    sc.event(
        "Pod",
        "search",
        ixp,
        "Unhealthy",
        f'Readiness probe failed: Get "http://{ixp_ip}:9090/healthz": context '
        "deadline exceeded (Client.Timeout exceeded while awaiting headers)",
        type_="Warning",
        count=2,
        first=now - dt.timedelta(minutes=26),
        last=now - dt.timedelta(minutes=25),
        host=general[1][0],
        field_path="spec.containers{indexer}",
    )

    # ------------------------------------------------------------------ logs
    qf_running = [pm[0] for pm in pods_meta[:3]]
    t = now - dt.timedelta(hours=2)
    k = 0
    while t < now:
        busy = t >= now.replace(hour=10, minute=40)
        p_ = qf_running[k % 3]
        lat = (380 + 9 * (k % 40)) if busy else (90 + 3 * (k % 20))
        sc.log(
            t,
            "search",
            p_,
            "query-frontend",
            "query-frontend",
            "info",
            f'{{"level":"info","ts":"{iso_ms(t)}","msg":"search '
            f'served","q_len":{3 + k % 9},"hits":{k * 7 % 400},"took_ms":{lat},'
            f'"inflight":{(24 + k % 16) if busy else (5 + k % 6)}}}',
        )
        if busy and k % 5 == 0:
            sc.log(
                t + dt.timedelta(milliseconds=300),
                "search",
                p_,
                "query-frontend",
                "query-frontend",
                "warn",
                f'{{"level":"warn","ts":"{iso_ms(t)}","msg":"request queue above '
                f'threshold","queued":{40 + k % 30},"threshold":32}}',
            )
        t += dt.timedelta(seconds=40)
        k += 1
    for k in range(8):
        t = sg_roll + dt.timedelta(seconds=30 + 400 * k)
        sp = sg_eps[k % 3][1]
        sc.log(
            t,
            "search",
            sp,
            "suggest-api",
            "suggest-api",
            "warn",
            '{"level":"warn","msg":"brand dictionary entry '
            f'ignored","entry":"{["Ünit", "k-way", "Levi’s"][k % 3]}",'
            '"reason":"non-ascii normalisation"}',
        )

    # ------------------------------------------------------------------ metrics
    grid = sc.grid(2)
    m = sc.metrics
    for pn, nd, pcpu in pods_meta:
        if not pn.startswith("query-frontend"):
            continue
        is_pending = not nd
        for cname, val in (("query-frontend", 0.5), ("istio-proxy", 1.0 if pcpu == "1" else 0.1)):
            m.gauge(
                "kube_pod_container_resource_requests",
                "The number of requested request resource by a container.",
                {
                    "namespace": "search",
                    "pod": pn,
                    "uid": uid("search/pod/" + pn),
                    "container": cname,
                    "node": nd,
                    "resource": "cpu",
                    "unit": "core",
                },
                [t for t in grid if (t >= scale if is_pending else True)],
                lambda t, v=val: v,
            )
    for pn in pending:
        m.gauge(
            "kube_pod_status_phase",
            "The pods current phase.",
            {"namespace": "search", "pod": pn, "uid": uid("search/pod/" + pn), "phase": "Pending"},
            [t for t in grid if t >= scale],
            lambda t: 1,
        )
    for nd in small:
        m.gauge(
            "kube_node_status_allocatable",
            "The allocatable for different resources of a node.",
            {"node": nd[0], "resource": "cpu", "unit": "core"},
            grid,
            lambda t: 1.93,
        )
    for lab, fn in (
        ("desired", lambda t: 5 if t >= scale else 3),
        ("current", lambda t: 5 if t >= scale else 3),
    ):
        m.gauge(
            f"kube_horizontalpodautoscaler_status_{lab}_replicas",
            f"{lab.capitalize()} number of replicas of pods managed by this autoscaler.",
            {"namespace": "search", "horizontalpodautoscaler": "query-frontend"},
            grid,
            fn,
        )
    m.gauge(
        "kube_horizontalpodautoscaler_spec_max_replicas",
        "Upper limit for the number of pods that can be set by "
        "the autoscaler; cannot be smaller than MinReplicas.",
        {"namespace": "search", "horizontalpodautoscaler": "query-frontend"},
        grid,
        lambda t: 10,
    )
    ramp = now.replace(hour=10, minute=30)
    for pn in qf_running:
        m.counter(
            "container_cpu_usage_seconds",
            "Cumulative cpu time consumed by the container in core-seconds",
            {"namespace": "search", "pod": pn, "container": "query-frontend"},
            grid,
            lambda t: (
                0.47 if t >= ramp + dt.timedelta(minutes=15) else (0.24 if t < ramp else 0.38)
            ),
            start=81_000.0,
            integer=False,
        )
    for q, f in (
        (
            "0.95",
            lambda t: 0.11 if t < ramp else (0.29 if t < scale else 0.74 + 0.02 * (t.minute % 3)),
        ),
    ):
        m.gauge(
            "search_request_duration_seconds",
            "Search request latency quantiles over 1m.",
            {"namespace": "search", "service": "query-frontend", "quantile": q},
            grid,
            f,
        )
    return sc
