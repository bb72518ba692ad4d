"""Shape 1, image_pull: a chart change templates an uppercase team name into the image."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from ._kit import (
    Ctr,
    Rev,
    Scenario,
    access_log,
    configmap,
    deployment,
    event,
    iso,
    job,
    lines,
    make_pending,
    namespace,
    pod,
    service,
    standard_bystanders,
    worker_nodes,
)

SID = "catalog-search-rollout-stuck"
REG = "registry.corp.example.io"


def build(root: Path) -> None:
    sc = Scenario(SID, "2026-06-03T14:20:00Z", seed=5401)
    old = sc.ago(days=300)
    nodes = worker_nodes(sc, [f"ip-10-30-{a}-{b}.ec2.internal"
                              for a, b in ((1, 12), (2, 87), (3, 141), (1, 203))])
    standard_bystanders(sc, nodes, ["search-api.catalog.svc.cluster.local",
                                    "harbor-core.registry.svc.cluster.local",
                                    "catalog-web.catalog.svc.cluster.local"])
    for ns in ("catalog", "registry", "batch", "payments"):
        namespace(sc, ns, old)

    rollout = sc.ago(minutes=38)
    bad_image = f"{REG}/Catalog/search-api:4.12.0"
    reason = (f'Failed to apply default image tag "{bad_image}": couldn\'t parse image name '
              f'"{bad_image}": invalid reference format: repository name (Catalog/search-api) '
              "must be lowercase")

    def search_ctr(image: str, extra_env: dict[str, str]) -> Ctr:
        return Ctr("search-api", image, env={"ES_HOSTS": "http://catalog-es:9200",
                                             "LOG_FORMAT": "json", **extra_env},
                   cpu_req="500m", mem_req="768Mi", mem_lim="1Gi")

    def hook(rev: int, idx: int) -> dict[str, object]:
        if rev == 2:
            return {"waiting": ("InvalidImageName", reason), "ready": False,
                    "started": rollout}
        return {}

    search = deployment(sc, "catalog", "search-api", [
        Rev([search_ctr(f"{REG}/catalog/search-api:4.10.2", {})], sc.ago(days=9), 0,
            "helm upgrade search-api catalog/search-api --version 2.3.1"),
        Rev([search_ctr(f"{REG}/catalog/search-api:4.11.3", {})], sc.ago(days=3, hours=2), 4,
            "helm upgrade search-api catalog/search-api --version 2.4.0"),
        Rev([search_ctr(bad_image, {"SEARCH_SYNONYMS": "v2"})], rollout, 1,
            "helm upgrade search-api catalog/search-api --version 2.5.0 --set team=Catalog"),
    ], nodes=nodes, created=old, replicas=4, first_rev=17,
        strategy={"type": "RollingUpdate",
                  "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
        pod_hook=hook, extra_labels={"team": "catalog", "helm.sh/chart": "search-api-2.5.0"})
    new_rs = search.sets[-1]["metadata"]["name"]
    search.obj["status"]["conditions"][1].update({
        "status": "False", "reason": "ProgressDeadlineExceeded",
        "message": f'ReplicaSet "{new_rs}" has timed out progressing.',
        "lastUpdateTime": iso(sc.ago(minutes=28)), "lastTransitionTime": iso(sc.ago(minutes=28))})
    configmap(sc, "catalog", "search-api-values", {
        "values.yaml": "team: Catalog\nimage:\n  registry: registry.corp.example.io\n"
                       "  repository: \"{{ .Values.team }}/search-api\"\n  tag: 4.12.0\n"
                       "replicaCount: 4\nsynonyms: v2\n"}, sc.ago(minutes=39))
    bad = search.pods[-1]
    event(sc, "catalog", "Deployment", "search-api", "ScalingReplicaSet",
          f"Scaled up replica set {new_rs} to 1", first=rollout, last=rollout,
          component="deployment-controller")
    event(sc, "catalog", "Pod", bad.ref.pod, "Scheduled",
          f"Successfully assigned catalog/{bad.ref.pod} to {bad.ref.node}",
          first=rollout, last=rollout, component="default-scheduler")
    event(sc, "catalog", "Pod", bad.ref.pod, "InspectFailed", reason, etype="Warning",
          count=176, first=rollout, last=sc.ago(seconds=14), host=bad.ref.node,
          field_path="spec.containers{search-api}")
    event(sc, "catalog", "Pod", bad.ref.pod, "Failed", "Error: InvalidImageName",
          etype="Warning", count=176, first=rollout, last=sc.ago(seconds=14), host=bad.ref.node,
          field_path="spec.containers{search-api}")

    paths = ["/v1/search?q=shoes", "/v1/search?q=lamp", "/v1/suggest?q=ta", "/v1/search?q=tv",
             "/v1/facets?cat=garden"]
    for p in search.pods[:-1]:
        sc.chatter(p.ref, access_log(paths, ms=(8, 60)), 1.4)
        sc.chatter(p.ref, lines([("info", "index refresh: catalog-v88 docs={n}412 took={ms}ms"),
                                 ("warn", "slow query took 1{ms}2ms q=\"*\" (wildcard)")]), 0.15)
        sc.usage(p, 0.35, 610e6)
        for code in ("200", "500"):
            sc.counter("http_requests_total", "Total HTTP requests.",
                       {"namespace": "catalog", "service": "search-api", "pod": p.ref.pod,
                        "code": code},
                       (lambda t: 11.0) if code == "200" else (lambda t: 0.004),
                       start=sc.rng.uniform(1e5, 9e5))
    sc.gauge("kube_pod_container_status_waiting_reason",
             "Describes the reason the container is currently in waiting state.",
             {"namespace": "catalog", "pod": bad.ref.pod, "container": "search-api",
              "reason": "InvalidImageName"}, lambda t: 1.0, since=rollout)
    for name, val in (("kube_deployment_spec_replicas", 4.0),
                      ("kube_deployment_status_replicas_available", 4.0),
                      ("kube_deployment_status_replicas_updated", 1.0)):
        sc.gauge(name, "kube-state-metrics deployment replicas.",
                 {"namespace": "catalog", "deployment": "search-api"},
                 (lambda t, v=val: v if t >= rollout or v == 4.0 else 4.0))

    web = deployment(sc, "catalog", "catalog-web", [
        Rev([Ctr("catalog-web", f"{REG}/catalog/catalog-web:4.11.0", port=3000)],
            sc.ago(days=3, hours=2), 0),
        Rev([Ctr("catalog-web", f"{REG}/catalog/catalog-web:4.12.0", port=3000)],
            sc.ago(minutes=41), 3, "helm upgrade catalog-web catalog/catalog-web --version 1.9.4"),
    ], nodes=nodes, created=old, first_rev=31)
    for p in web.pods:
        sc.chatter(p.ref, access_log(["/", "/c/garden", "/p/88123", "/p/10442", "/cart"],
                                     ms=(20, 120)), 1.2)
        sc.chatter(p.ref, lines([("warn", "upstream search-api responded in {ms}0ms (slow)"),
                                 ("info", "rendered category page in {ms}ms")]), 0.2)
        sc.usage(p, 0.2, 300e6)
    event(sc, "catalog", "Deployment", "catalog-web", "ScalingReplicaSet",
          f"Scaled up replica set {web.sets[-1]['metadata']['name']} to 3",
          first=sc.ago(minutes=41), last=sc.ago(minutes=40), component="deployment-controller")
    service(sc, "catalog", "search-api", selector={"app": "search-api"},
            ports=[("http", 80, 8080)], created=old)
    service(sc, "catalog", "catalog-web", selector={"app": "catalog-web"},
            ports=[("http", 80, 3000)], created=old)

    _registry(sc, nodes, old)
    _bystanders(sc, nodes, old)
    sc.write(root, title="search-api 4.12 rollout stuck, new pod never starts",
             report="search-api rollout (4.12) has been stuck for ~30 min, the new pod never "
                    "comes up. Harbor got upgraded yesterday and I bet the registry is broken "
                    "again, can platform check harbor? Old pods are still serving for now.\n",
             truth={"category": "image_pull",
                    "culprit": {"kind": "Deployment", "namespace": "catalog",
                                "name": "search-api"},
                    "evidence": ["InvalidImageName",
                                 "repository name (Catalog/search-api) must be lowercase",
                                 "--set team=Catalog"],
                    "fix": "Fix search-api's chart values so the image repository is lowercase "
                           "(registry.corp.example.io/catalog/search-api:4.12.0), e.g. "
                           "team=catalog or `lower` in the template, and re-run the upgrade; "
                           "Harbor is serving pulls normally."})


def _registry(sc: Scenario, nodes: list[str], old: datetime) -> None:
    upgrade = sc.ago(hours=20)
    core = deployment(sc, "registry", "harbor-core", [
        Rev([Ctr("core", "goharbor/harbor-core:v2.10.2")], sc.ago(days=6), 0),
        Rev([Ctr("core", "goharbor/harbor-core:v2.11.0")], upgrade, 2,
            "helm upgrade harbor harbor/harbor --version 1.15.0"),
    ], nodes=nodes, created=old, first_rev=8)
    last = {"terminated": {"exitCode": 2, "reason": "Error",
                           "startedAt": iso(upgrade), "finishedAt": iso(sc.ago(hours=19))}}

    def rhook(rev: int, idx: int) -> dict[str, object]:
        return {"restarts": 1, "last_state": last} if idx == 0 else {}

    reg = deployment(sc, "registry", "harbor-registry", [
        Rev([Ctr("registry", "goharbor/registry-photon:v2.11.0", port=5000,
                 mem_lim="2Gi", mem_req="512Mi")], upgrade, 2,
            "helm upgrade harbor harbor/harbor --version 1.15.0")],
        nodes=nodes, created=old, first_rev=8, pod_hook=rhook)
    images = ["catalog/catalog-web", "payments/ledger", "batch/feed-export",
              "catalog/search-api", "platform/base-node"]
    tags = {"catalog/catalog-web": "4.12.0", "payments/ledger": "7.3.1",
            "batch/feed-export": "1.0.9", "catalog/search-api": "4.11.3",
            "platform/base-node": "20.14-r3"}

    def pulls(rng: object, t: datetime) -> tuple[str, str, dict[str, object]]:
        import random as _r
        assert isinstance(rng, _r.Random)
        img = rng.choice(images)
        if rng.random() < 0.3:
            return ("warn", 'level=warning msg="error authorizing context: authorization token '
                    'required" http.request.method=GET http.request.uri="/v2/"', {})
        kind = rng.choice(["manifests/" + tags[img], "blobs/sha256:" +
                           f"{rng.getrandbits(64):016x}"])
        return ("info", f'level=info msg="response completed" http.request.method=GET '
                f'http.request.uri="/v2/{img}/{kind}" http.response.status=200 '
                f'http.response.duration={rng.randint(3, 80)}ms', {})

    for p in reg.pods:
        sc.chatter(p.ref, pulls, 1.0)
        sc.usage(p, 0.08, 420e6, restarts=1 if p is reg.pods[0] else 0)
        for code in ("200", "401"):
            sc.counter("registry_http_requests_total", "Registry HTTP requests.",
                       {"namespace": "registry", "pod": p.ref.pod, "method": "get",
                        "code": code}, (lambda t: 1.1) if code == "200" else (lambda t: 0.4),
                       start=sc.rng.uniform(1e4, 1e5))
    for p in core.pods:
        sc.chatter(p.ref, lines([
            ("error", "[ERROR] [/server/middleware/security/robot.go:71][requestID=\"{id}\"]: "
                      "failed to authenticate robot account: robot$ci-legacy"),
            ("info", "[INFO] [/controller/event/handler/internal/artifact.go:96]: "
                     "artifact pulled, project=catalog repository=catalog-web"),
            ("info", "[INFO] [/pkg/task/dao/execution.go:{n}]: scan all execution refreshed"),
        ]), 0.8)
        sc.usage(p, 0.05, 180e6)
    event(sc, "registry", "Deployment", "harbor-core", "ScalingReplicaSet",
          f"Scaled down replica set {core.sets[0]['metadata']['name']} to 0",
          first=sc.ago(minutes=55), last=sc.ago(minutes=55), component="deployment-controller")
    service(sc, "registry", "harbor-core", selector={"app": "harbor-core"},
            ports=[("http", 80, 8080)], created=old)
    service(sc, "registry", "harbor-registry", selector={"app": "harbor-registry"},
            ports=[("http", 5000, 5000)], created=old)


def _bystanders(sc: Scenario, nodes: list[str], old: datetime) -> None:
    led = deployment(sc, "payments", "ledger", [
        Rev([Ctr("ledger", f"{REG}/payments/ledger:7.3.1", mem_lim="512Mi")],
            sc.ago(days=2, hours=5), 3)], nodes=nodes, created=old, first_rev=44)
    for p in led.pods:
        sc.chatter(p.ref, access_log(["/v2/entries", "/v2/balances/acc_{n}"], ms=(3, 25),
                                     method="POST"), 1.0)
        sc.usage(p, 0.15, 280e6)
    created = sc.ago(minutes=12)
    j = job(sc, "batch", "feed-export-29148720", created)
    ctr = Ctr("feed-export", f"{REG}/batch/feed-export:1.0.9", port=None, cpu_req="2",
              mem_req="14Gi", mem_lim="14Gi")
    j["spec"]["template"]["spec"]["containers"] = [ctr.spec()]
    p = pod(sc, ns="batch", name=f"feed-export-29148720-{sc.suffix()}",
            labels={"app": "feed-export", "job-name": "feed-export-29148720"},
            node_name=nodes[0], node_index=1, ctrs=[ctr], owner=j, started=created)
    msg = ("0/4 nodes are available: 4 Insufficient memory. preemption: 0/4 nodes are "
           "available: 4 No preemption victims found for incoming pod.")
    make_pending(sc, p, msg, created)
    event(sc, "batch", "Pod", p.ref.pod, "FailedScheduling", msg, etype="Warning", count=4,
          first=created, last=sc.ago(minutes=2), component="default-scheduler")
