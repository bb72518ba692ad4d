"""image_pull: indexer 3.8.0 has zstd layers that the nodes' containerd 1.4 cannot unpack."""

from __future__ import annotations

import json
from pathlib import Path

from ._kit import App, Obj, Scenario, hexid, rs_hash, worker_nodes

SID = "search-indexer-rollout-stuck"
NOW = "2026-09-09T16:05:00Z"
ROLL = 34.0
IMG = "harbor.internal/search/indexer:3.8.0"
LAYER = "sha256:" + hexid("zstd-layer", 64)


def build(root: Path) -> None:
    s = Scenario(SID, NOW, 5706)
    old_nodes = worker_nodes(s, 5, runtime="containerd://1.4.13", kernel="5.4.266",
                             created_days=210)
    s.node("ip-10-0-17-160.eu-west-1.compute.internal", "eu-west-1b", "general-v2",
           runtime="containerd://1.7.13", kernel="6.1.79", created_days=3)
    new_node = "ip-10-0-17-160.eu-west-1.compute.internal"
    nodes = [*old_nodes, new_node]
    s.background(old_nodes, ["search", "harbor", "web"])
    msg = (f'Failed to pull image "{IMG}": rpc error: code = Unknown desc = failed to pull and '
           f'unpack image "{IMG}": failed to extract layer {LAYER}: unexpected media type '
           f"application/vnd.oci.image.layer.v1.tar+zstd for {LAYER}: not found")

    def tpl(image: str) -> Obj:
        c: Obj = {"name": "indexer", "image": image,
             "args": ["--source=kafka://events.search:9092/catalog-changes",
                      "--sink=http://opensearch.search.svc:9200"],
             "resources": {"requests": {"cpu": "1", "memory": "2Gi"},
                           "limits": {"memory": "2Gi"}},
             "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
             "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}}}
        return {"metadata": {"labels": {"app": "indexer"}},
                "spec": {"containers": [c], "imagePullSecrets": [{"name": "harbor-pull"}]}}

    new, old = tpl(IMG), tpl("harbor.internal/search/indexer:3.7.2")
    s.deployment("search", "indexer", new, replicas=4, ready=3, updated=3, revision=48,
                 unavailable=1, conditions=[
                     {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
                      "message": "Deployment has minimum availability.",
                      "lastUpdateTime": s.t(ROLL), "lastTransitionTime": s.t(5000)},
                     {"type": "Progressing", "status": "False",
                      "reason": "ProgressDeadlineExceeded", "message": "PLACE",
                      "lastUpdateTime": s.t(ROLL - 10), "lastTransitionTime": s.t(ROLL - 10)}])
    dep = s.objects[-1]
    dep["spec"]["progressDeadlineSeconds"] = 600
    dep["status"]["replicas"] = 5
    old_rs = s.replicaset("search", "indexer", 47, old, replicas=2, ready=2, created_min=9000)
    new_rs = s.replicaset("search", "indexer", 48, new, replicas=3, ready=1, created_min=ROLL)
    dep["status"]["conditions"][1]["message"] = f'ReplicaSet "{new_rs}" has timed out progressing.'
    olds = []
    for i, n in enumerate([old_nodes[0], old_nodes[3]]):
        p, ip = s.pod("search", old_rs, "indexer", old, n, created_min=4 * 1440 + 7 * i,
                      key=f"o{i}")
        olds.append((p, ip, n))
    good, gip = s.pod("search", new_rs, "indexer", new, new_node, created_min=ROLL - 0.2,
                      key="n0")
    s.event("search", "Pod", good, "Pulled",
            f'Successfully pulled image "{IMG}" in 14.2s (14.2s including waiting)',
            first=ROLL - 0.5, last=ROLL - 0.5, host=new_node, container="indexer")
    bad = []
    for i, n in enumerate([old_nodes[1], old_nodes[4]]):
        name = s.pod_name(new_rs, f"n{i + 1}")
        c = new["spec"]["containers"][0]
        cs = s.cstatus(c, "search", name, s.t(ROLL), ready=False)
        cs["state"] = {"waiting": {"reason": "ImagePullBackOff",
                                   "message": f'Back-off pulling image "{IMG}"'}}
        cs["imageID"] = ""
        cs.pop("containerID")
        cs["started"] = False
        p, _ = s.pod("search", new_rs, "indexer", new, n, created_min=ROLL - 0.2 - 3 * i,
                     key=f"n{i + 1}", statuses=[cs], ready=False)
        bad.append((p, n))
        s.event("search", "Pod", p, "Pulling", f'Pulling image "{IMG}"', count=8 - i,
                first=ROLL - 0.3 - 3 * i, last=4 + i, host=n, container="indexer")
        s.event("search", "Pod", p, "Failed", msg, type_="Warning", count=8 - i,
                first=ROLL - 0.2 - 3 * i, last=3.8 + i, host=n, container="indexer")
        s.event("search", "Pod", p, "Failed", "Error: ErrImagePull", type_="Warning",
                count=8 - i, first=ROLL - 0.2 - 3 * i, last=3.8 + i, host=n, container="indexer")
        s.event("search", "Pod", p, "BackOff", f'Back-off pulling image "{IMG}"',
                type_="Warning", count=120 - 9 * i, first=ROLL - 0.5 - 3 * i, last=0.4,
                host=n, container="indexer")
        s.event("search", "Pod", p, "Failed", "Error: ImagePullBackOff", type_="Warning",
                count=120 - 9 * i, first=ROLL - 0.5 - 3 * i, last=0.4, host=n,
                container="indexer")
    s.service("search", "indexer", {"app": "indexer"}, 80, 8080,
              [*olds, (good, gip, new_node)])
    for name, at, txt in [(new_rs, ROLL, f"Scaled up replica set {new_rs} to 1"),
                          (old_rs, ROLL - 0.6, f"Scaled down replica set {old_rs} to 3 from 4"),
                          (new_rs, ROLL - 0.7, f"Scaled up replica set {new_rs} to 2"),
                          (old_rs, ROLL - 3, f"Scaled down replica set {old_rs} to 2 from 3"),
                          (new_rs, ROLL - 3.1, f"Scaled up replica set {new_rs} to 3")]:
        s.event("search", "Deployment", "indexer", "ScalingReplicaSet", txt, first=at, last=at,
                component="deployment-controller")
        assert name
    idx = App("search", "indexer", old_rs, [p for p, _, _ in olds] + [good], [], [], IMG)
    s.chatter(idx, [("info", "batch {n}: indexed 500 docs into catalog-v12 in {ms}ms"),
                    ("info", "kafka lag catalog-changes/{n}: {rnd} msgs"),
                    ("warn", "doc {id} rejected by opensearch: mapper_parsing_exception "
                             "on field 'dimensions.weight', skipped")], every_s=25)
    s.log(s.ago(ROLL - 0.3), "info", "indexer", "search", good, "indexer",
          "indexer 3.8.0 started: consumers=8 bulk_size=500 (zstd transport compression on)")
    s.pod_basics(idx, cpu=lambda m, i: 0.6, mem_mb=lambda m, i: 1100.0)
    s.gauge("kube_deployment_status_replicas_unavailable", "Unavailable replicas.",
            {"namespace": "search", "deployment": "indexer"},
            lambda m: 0 if m > ROLL else 1)
    s.gauge("kafka_consumergroup_lag", "Consumer group lag.",
            {"consumergroup": "indexer", "topic": "catalog-changes"},
            lambda m: 1200 if m > ROLL else 1200 + int((ROLL - m) * 310))
    for p, _n in bad:
        s.gauge("kube_pod_container_status_waiting_reason", "Why the container waits.",
                {"namespace": "search", "pod": p, "container": "indexer",
                 "reason": "ImagePullBackOff"}, lambda m: 1 if m < ROLL - 1 else None)

    # harbor: the pulls reach the registry and are served
    harbor = s.app("harbor", "harbor-registry", "goharbor/registry-photon:v2.10.2",
                   [old_nodes[2], old_nodes[0]], port=5000, revision=11, created_min=5 * 1440)
    core = s.app("harbor", "harbor-core", "goharbor/harbor-core:v2.10.2", [old_nodes[2]],
                 revision=11, created_min=5 * 1440)
    s.pod_basics(harbor, cpu=lambda m, i: 0.1, mem_mb=lambda m, i: 140.0,
                 rps=lambda m, i: 3.0, err=lambda m, i: 0.0)
    layers = [LAYER] + ["sha256:" + hexid(f"l{i}", 64) for i in range(4)]
    m = 60.0
    while m > 0:
        rp = harbor.pods[int(m) % 2]
        ip = f"10.0.{s.rng.choice([1, 17, 33])}.{s.rng.randint(11, 60)}"
        repo = s.rng.choice(["web/storefront", "search/indexer", "payments/ledger",
                             "library/nginx"])
        s.log(s.ago(m), "info", "harbor-registry", "harbor", core.pods[0], "harbor-core",
              f'{ip} - - "GET /v2/ HTTP/1.1" 401 87 "containerd/v1.4.13"',
              http__response__status_code=401)
        s.log(s.ago(m - 0.005), "info", "harbor-core", "harbor", core.pods[0], "harbor-core",
              f"token issued for robot$ci-pull scope=repository:{repo}:pull")
        if m < ROLL and s.rng.random() < 0.6:
            repo = "search/indexer"
            s.log(s.ago(m - 0.01), "info", "harbor-registry", "harbor", rp, "harbor-registry",
                  json.dumps({"msg": "response completed", "http.request.method": "GET",
                              "http.request.uri": f"/v2/{repo}/manifests/3.8.0",
                              "http.response.status": 200, "http.response.contenttype":
                              "application/vnd.oci.image.manifest.v1+json"}))
            for lay in layers[:3]:
                s.log(s.ago(m - 0.02), "info", "harbor-registry", "harbor", rp,
                      "harbor-registry", json.dumps({
                          "msg": "response completed", "http.request.method": "GET",
                          "http.request.uri": f"/v2/{repo}/blobs/{lay}",
                          "http.response.status": 200,
                          "http.response.written": s.rng.randint(2_000_000, 90_000_000)}))
        else:
            s.log(s.ago(m - 0.01), "info", "harbor-registry", "harbor", rp, "harbor-registry",
                  json.dumps({"msg": "response completed", "http.request.method": "HEAD",
                              "http.request.uri": f"/v2/{repo}/manifests/latest",
                              "http.response.status": 200}))
        if s.rng.random() < 0.15:
            s.log(s.ago(m - 0.03), "warning", "harbor-core", "harbor", core.pods[0],
                  "harbor-core", "failed to authenticate user anonymous: unauthorized: "
                  "authentication required")
        m -= 0.7 * s.rng.uniform(0.6, 1.4)
    s.gauge("kube_node_info", "Node information.",
            {"node": new_node, "container_runtime_version": "containerd://1.7.13"}, lambda m: 1)
    for n in old_nodes:
        s.gauge("kube_node_info", "Node information.",
                {"node": n, "container_runtime_version": "containerd://1.4.13"}, lambda m: 1)

    os_ = s.app("search", "opensearch-proxy", "registry.internal/search/os-proxy:1.2.0",
                nodes[2:4], revision=9, created_min=3 * 1440)
    s.chatter(os_, [("info", "POST /_bulk 200 {ms}ms"), ("info", "GET /catalog-v12/_search 200 "
                                                                 "{ms}ms")], every_s=30)
    s.pod_basics(os_, cpu=lambda m, i: 0.1, mem_mb=lambda m, i: 100.0, rps=lambda m, i: 20.0)
    front = s.app("web", "storefront", "harbor.internal/web/storefront:2026.09.09-1",
                  [old_nodes[1], old_nodes[2]], revision=140, created_min=52,
                  prev_image="harbor.internal/web/storefront:2026.09.08-4")
    s.event("web", "Deployment", "storefront", "ScalingReplicaSet",
            f"Scaled up replica set {front.rs} to 2", first=52, last=51,
            component="deployment-controller")
    s.event("web", "Deployment", "storefront", "ScalingReplicaSet",
            "Scaled down replica set storefront-" + rs_hash("webstorefront139") + " to 0 from 2",
            first=51, last=50, component="deployment-controller")
    s.chatter(front, [("info", "GET / 200 {ms}ms"), ("info", "GET /search?q=chair 200 {ms}ms"),
                      ("warn", "search results stale: index lag {rnd} docs")], every_s=30)
    s.pod_basics(front, cpu=lambda m, i: 0.2, mem_mb=lambda m, i: 330.0, rps=lambda m, i: 15.0)

    s.scenario_yaml = {
        "id": SID,
        "title": "indexer 3.8.0 rollout stuck in ImagePullBackOff",
        "now": NOW,
        "report": "indexer 3.8.0 rollout is stuck, 2 of the new pods are in ImagePullBackOff "
                  "and search results are getting stale. Harbor is flaky again I guess - its "
                  "logs are full of 401s. Can someone check the harbor-pull robot account / "
                  "registry creds?\n",
        "truth": {
            "category": "image_pull",
            "culprit": {"kind": "Deployment", "namespace": "search", "name": "indexer"},
            "evidence": ["application/vnd.oci.image.layer.v1.tar+zstd",
                         "failed to extract layer", "containerd://1.4.13"],
            "fix": "indexer 3.8.0 was built with zstd-compressed layers; the general pool's "
                   "containerd 1.4.13 cannot unpack them (the pull itself succeeds, and the one "
                   "pod on the containerd 1.7 node runs). Rebuild the image with gzip layers "
                   "(or roll back to 3.7.2) and upgrade containerd on the general pool; the "
                   "registry and its credentials are fine (the 401s are the normal token "
                   "challenge).",
        },
    }
    s.write(root)
