"""Shape 5, quota_exceeded: a new init container's CPU request breaks the namespace quota."""

from __future__ import annotations

from pathlib import Path

from . import _kit as k

SID = "checkout-web-rollout-stalled"
NOW = "2026-12-12T15:05:00Z"
ROLL = 31.0
NEW_H = "6f9c7d8b5"
OLD_H = "5d8b9c7f4"


def build(root: Path) -> None:
    st = k.Story(SID, NOW, seed=5205)
    nodes = k.standard_nodes(st, [f"ip-10-0-{i}-{40 + i * 11}.eu-west-1.compute.internal"
                                  for i in range(1, 6)])
    k.kube_system(st, nodes)
    for ns in ("checkout", "web", "ml"):
        k.namespace(st, ns)

    quota: k.Obj = {
        "apiVersion": "v1", "kind": "ResourceQuota",
        "metadata": k.meta(st, "checkout", "compute", days=200),
        "spec": {"hard": {"requests.cpu": "8", "requests.memory": "24Gi", "limits.memory": "48Gi",
                          "pods": "40"}},
        "status": {"hard": {"requests.cpu": "8", "requests.memory": "24Gi",
                            "limits.memory": "48Gi", "pods": "40"},
                   "used": {"requests.cpu": "7500m", "requests.memory": "13Gi",
                            "limits.memory": "26Gi", "pods": "14"}},
    }
    st.add(quota)
    st.add({"apiVersion": "v1", "kind": "LimitRange",
            "metadata": k.meta(st, "checkout", "defaults", days=200),
            "spec": {"limits": [{"type": "Container",
                                 "default": {"cpu": "1", "memory": "1Gi"},
                                 "defaultRequest": {"cpu": "100m", "memory": "256Mi"},
                                 "max": {"memory": "8Gi"}}]}})

    # --- checkout-web: the stalled rollout ----------------------------------------------
    labels = {"app": "checkout-web"}
    new_img = "registry.corp.example/checkout/checkout-web:4.8.0"
    old_img = "registry.corp.example/checkout/checkout-web:4.7.3"
    app_new = k.container("checkout-web", new_img, cpu="250m", memory="512Mi", mem_limit="1Gi",
                          env={"CDN_BASE": "https://cdn2.corp.example/checkout"})
    app_old = k.container("checkout-web", old_img, cpu="250m", memory="512Mi", mem_limit="1Gi",
                          env={"CDN_BASE": "https://static.corp.example/checkout"})
    init = k.container("asset-sync", "registry.corp.example/checkout/asset-sync:1.0.0", cpu="1",
                       memory="256Mi", mem_limit="512Mi", port=None,
                       args=["sync", "--from=s3://acme-checkout-assets/4.8.0",
                             "--to=/srv/static", "--parallel=16"])
    forbidden = (f'pods "checkout-web-{NEW_H}-{{}}" is forbidden: exceeded quota: compute, '
                 "requested: requests.cpu=1, used: requests.cpu=7500m, limited: requests.cpu=8")
    dep = k.deployment(
        st, "checkout", "checkout-web", labels=labels, containers=[app_new],
        init_containers=[init], replicas=6, revision=19, created=st.ago(days=500),
        updated=st.ago(ROLL), updated_replicas=0, max_surge=1, max_unavailable=0,
        annotations={"argocd.argoproj.io/tracking-id": "checkout:apps/Deployment:checkout/"
                                                       "checkout-web"},
        conditions=[
            {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
             "message": "Deployment has minimum availability.", "lastUpdateTime": st.ts(days=3),
             "lastTransitionTime": st.ts(days=3)},
            {"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
             "message": forbidden.format("q7m2x"), "lastUpdateTime": st.ts(30.8),
             "lastTransitionTime": st.ts(30.8)},
            {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
             "message": f'ReplicaSet "checkout-web-{NEW_H}" has timed out progressing.',
             "lastUpdateTime": st.ts(ROLL - 10), "lastTransitionTime": st.ts(ROLL - 10)}])
    old_rs = k.replicaset(st, dep, OLD_H, revision=18, replicas=6, created=st.ago(days=3),
                          containers=[app_old], init_containers=[])
    del old_rs["spec"]["template"]["spec"]["initContainers"]
    new_rs = k.replicaset(st, dep, NEW_H, revision=19, replicas=1, created=st.ago(ROLL),
                          conditions=[{"type": "ReplicaFailure", "status": "True",
                                       "reason": "FailedCreate",
                                       "message": forbidden.format("zk2lq"),
                                       "lastTransitionTime": st.ts(30.8)}])
    new_rs["status"].update({"replicas": 0, "fullyLabeledReplicas": 0, "readyReplicas": 0,
                             "availableReplicas": 0})
    web_pods = []
    for i in range(6):
        p = k.pod(st, "checkout", f"checkout-web-{OLD_H}-{st.suffix()}",
                  labels={**labels, "pod-template-hash": OLD_H}, containers=[app_old],
                  node_name=nodes[i % 5], owner=old_rs, created=st.ago(days=3, minutes=-i))
        web_pods.append(p)
        st.add(p)
        k.access_log(st, p, "checkout-web", "checkout-web", every=70, lat_ms=60,
                     paths=("/checkout", "/checkout/shipping", "/checkout/pay"))
        k.pod_metrics(st, p, "checkout-web", mem_mb=380, cpu_cores=0.12)
    svc = k.service(st, "checkout", "checkout-web", labels)
    k.endpoints(st, svc, web_pods)
    st.event(ns="checkout", kind="Deployment", name="checkout-web", api_version="apps/v1",
             reason="ScalingReplicaSet", component="deployment-controller", first=st.ago(ROLL),
             message=f"Scaled up replica set checkout-web-{NEW_H} to 1")
    st.event(ns="checkout", kind="ReplicaSet", name=f"checkout-web-{NEW_H}",
             api_version="apps/v1", reason="FailedCreate", type_="Warning",
             component="replicaset-controller", count=1, first=st.ago(ROLL - 0.1),
             message=f"Error creating: {forbidden.format('zk2lq')}")
    for i, sfx in enumerate(("q7m2x", "b8d4n", "w2t9c", "h5kx7", "p4r8v", "m9s2f", "x6l4d")):
        st.event(ns="checkout", kind="ReplicaSet", name=f"checkout-web-{NEW_H}",
                 api_version="apps/v1", reason="FailedCreate", type_="Warning",
                 component="replicaset-controller", count=1, first=st.ago(ROLL - 0.2 - i * 0.1),
                 message=f"Error creating: {forbidden.format(sfx)}")
    st.event(ns="checkout", kind="ReplicaSet", name=f"checkout-web-{NEW_H}",
             api_version="apps/v1", reason="FailedCreate", type_="Warning",
             component="replicaset-controller", count=22, first=st.ago(ROLL - 1),
             last=st.ago(0.9),
             message="(combined from similar events): Error creating: "
                     + forbidden.format("c3v7j"))
    st.event(ns="checkout", kind="Deployment", name="checkout-web", api_version="apps/v1",
             reason="ProgressDeadlineExceeded",
             type_="Warning", component="deployment-controller", first=st.ago(ROLL - 10),
             message='Deployment "checkout-web" has timed out progressing.')

    # --- the rest of the namespace uses the quota ----------------------------------------
    k.app(st, "checkout", "checkout-worker", "registry.corp.example/checkout/worker:4.7.3",
          nodes=nodes, replicas=4, cpu="1", memory="2Gi", mem_limit="4Gi", rps=0, http=False,
          access_logs=False, with_service=False, mem_mb=1400, cpu_cores=0.45)
    cart = k.app(st, "checkout", "cart-api", "registry.corp.example/checkout/cart-api:2.2.0",
                 nodes=nodes, replicas=3, cpu="500m", memory="1Gi", mem_limit="2Gi", rps=25,
                 log_every=90, lat_ms=12, paths=("/v1/cart", "/v1/cart/items"), mem_mb=500)
    k.app(st, "checkout", "checkout-redis", "docker.io/library/redis:7.2.5", nodes=nodes,
          replicas=1, cpu="500m", memory="1Gi", mem_limit="2Gi", port=6379, http=False,
          access_logs=False, mem_mb=640)
    for p in cart.pods:
        k.noise(st, p, "cart-api", "cart-api", "warn", [
            "cart 7f1c... has 61 items, exceeding soft limit 50",
            "deprecated header X-Cart-Legacy received from web-bff",
        ], every=240)
    for res, typ, val in (("requests.cpu", "hard", 8.0), ("requests.cpu", "used", 7.5),
                          ("pods", "hard", 40.0), ("pods", "used", 14.0)):
        k.gauge_fn(st, "kube_resourcequota", "Information about resource quota.",
                   {"namespace": "checkout", "resourcequota": "compute", "resource": res,
                    "type": typ}, lambda m, val=val: val)
    k.gauge_fn(st, "kube_deployment_status_replicas_updated",
               "The number of updated replicas per deployment.",
               {"namespace": "checkout", "deployment": "checkout-web"}, lambda m: 0.0, ROLL)
    k.gauge_fn(st, "kube_deployment_spec_replicas", "Number of desired pods for a deployment.",
               {"namespace": "checkout", "deployment": "checkout-web"}, lambda m: 6.0)

    # --- elsewhere: a rollout that went fine, a Pending GPU pod --------------------------
    sf = k.app(st, "web", "storefront", "registry.corp.example/web/storefront:8.3.0",
               nodes=nodes, replicas=3, rps=35, log_every=80, lat_ms=90, rollout_hours=0.33,
               revision=212, paths=("/", "/p", "/c"), mem_mb=300)
    st.event(ns="web", kind="Deployment", name="storefront", api_version="apps/v1",
             reason="ScalingReplicaSet", component="deployment-controller", first=st.ago(20),
             message=f"Scaled up replica set {sf.rs['metadata']['name']} to 1")
    st.event(ns="web", kind="Deployment", name="storefront", api_version="apps/v1",
             reason="ScalingReplicaSet", component="deployment-controller", first=st.ago(18),
             message=f"Scaled up replica set {sf.rs['metadata']['name']} to 3 from 2")
    gpu = k.container("trainer", "registry.corp.example/ml/trainer:0.9.1", cpu="8",
                      memory="60Gi", mem_limit="60Gi", port=None)
    gpu["resources"]["limits"]["nvidia.com/gpu"] = "1"
    k.pending_pod(st, "ml", "ranker-train-0", gpu,
                  "0/5 nodes are available: 5 Insufficient nvidia.com/gpu. preemption: 0/5 nodes "
                  "are available: 5 No preemption victims found for incoming pod.", minutes=48)
    st.keep_pod_logs(*web_pods)
    st.write(root, title="checkout-web 4.8.0 rollout stuck", report=(
        "checkout-web 4.8.0 deploy has been stuck for ~30 min, argo shows it Progressing then "
        "Degraded and no new pod ever shows up. pipeline was green, image is pushed. is the new "
        "image broken or is the cluster out of room? (there's also a Pending pod in ml, not sure "
        "if related) old pods are still serving thankfully\n"),
        truth={"category": "quota_exceeded",
               "culprit": {"kind": "Deployment", "namespace": "checkout", "name": "checkout-web"},
               "evidence": ["exceeded quota: compute", "requested: requests.cpu=1",
                            "asset-sync"],
               "fix": "The new asset-sync init container requests 1 CPU (the app container only "
                      "250m), so each new pod counts 1 CPU against the compute quota (7500m of "
                      "8 used). Lower asset-sync's CPU request to 250m or less, or raise the "
                      "quota; the nodes have room and the image is fine."})
