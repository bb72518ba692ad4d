"""A new Service called redis injects REDIS_PORT=tcp://... into new catalog-worker pods."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from ._kit import (
    CState,
    PState,
    Story,
    access,
    ctr,
    deployment,
    event,
    fix_host_ips,
    http_probe,
    meta,
    namespace,
    node,
    platform,
    service,
    statefulset,
)

SID = "catalog-worker-crashloop-new-node"
NOW = "2026-09-22T14:10:00Z"
REDIS_IP = "172.20.141.7"
BAD = f"tcp://{REDIS_IP}:6379"
SVC_AT = 47.0
SCALE_AT = 18.0


def _crash(when: str, pod: str) -> list[str]:
    return [
        f"{when},101 INFO catalog_worker starting version=4.12.1 pod={pod}",
        f"{when},188 INFO catalog_worker loading settings from environment",
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.12/runpy.py", line 198, in _run_module_as_main',
        '  File "/app/catalog_worker/__main__.py", line 4, in <module>',
        "    main()",
        '  File "/app/catalog_worker/main.py", line 31, in main',
        "    settings = Settings.from_env()",
        '  File "/app/catalog_worker/settings.py", line 58, in from_env',
        '    redis_port=int(os.environ.get("REDIS_PORT", "6379")),',
        f"ValueError: invalid literal for int() with base 10: '{BAD}'",
    ]


def build(root: Path) -> None:
    st = Story(SID, NOW, 5103)
    zones = ["eu-west-1a", "eu-west-1b", "eu-west-1c"]
    nodes = [f"ip-10-0-{a}-{b}.eu-west-1.compute.internal"
             for a, b in [(4, 19), (18, 230), (33, 61), (6, 144)]]
    new_node = "ip-10-0-52-14.eu-west-1.compute.internal"
    for i, n in enumerate(nodes):
        st.add(node(st, n, zone=zones[i % 3], age_days=15 + i))
    st.add(node(st, new_node, zone="eu-west-1c", age_days=20 / 1440,
                labels={"eks.amazonaws.com/nodegroup": "general-2026a"}))
    platform(st, [*nodes, new_node])
    for ns in ("catalog", "cart", "jobs"):
        st.add(namespace(st, ns))

    env = [{"name": "REDIS_HOST", "value": "catalog-cache.catalog.svc.cluster.local"},
           {"name": "QUEUE_URL", "value": "amqp://rabbitmq.jobs.svc:5672/catalog"},
           {"name": "LOG_LEVEL", "value": "INFO"}]
    wctr = ctr("catalog-worker", "ghcr.io/example/catalog-worker:4.12.1", port=9100,
               cpu="500m", mem="512Mi", mem_limit="1Gi", env=env,
               readiness=http_probe("/healthz", 9100))
    crash_node = [new_node, new_node, nodes[1]]
    states: list[PState] = [PState(), PState(), PState()]
    created = [5 * 1440 + 3, 5 * 1440 + 2, 5 * 1440 + 2]
    for i in range(3):
        restarts = 7 - i
        states.append(PState(containers=[CState(
            ready=False, restarts=restarts,
            waiting=("CrashLoopBackOff", "back-off 5m0s restarting failed container="
                                         "catalog-worker pod=catalog-worker-x_catalog"),
            last=("Error", 1, 2.0 + i, 1.9 + i))]))
        created.append(SCALE_AT - 0.2 * i)
    w = deployment(st, "catalog", "catalog-worker", [wctr], [nodes[0], nodes[2], nodes[3],
                                                            *crash_node],
                   replicas=6, states=states, age_days=300, revision=44,
                   rollout_min=5 * 1440 + 3, pod_created_min=created)
    for o in w.objects:
        if o["kind"] == "Pod":
            cs = o["status"]["containerStatuses"][0]
            if "waiting" in cs["state"]:
                cs["state"]["waiting"]["message"] = (
                    f"back-off 5m0s restarting failed container=catalog-worker "
                    f"pod={o['metadata']['name']}_catalog({o['metadata']['uid']})")
    good, bad = w.pods[:3], w.pods[3:]
    st.add({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": meta(st, "HorizontalPodAutoscaler", "catalog-worker", "catalog",
                             created=st.ts(200 * 1440)),
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                        "name": "catalog-worker"},
                     "minReplicas": 3, "maxReplicas": 10,
                     "metrics": [{"type": "External", "external": {
                         "metric": {"name": "rabbitmq_queue_messages_ready",
                                    "selector": {"matchLabels": {"queue": "catalog-reindex"}}},
                         "target": {"type": "AverageValue", "averageValue": "500"}}}]},
            "status": {"currentReplicas": 6, "desiredReplicas": 6, "lastScaleTime":
                       st.ts(SCALE_AT),
                       "currentMetrics": [{"type": "External", "external": {
                           "metric": {"name": "rabbitmq_queue_messages_ready",
                                      "selector": {"matchLabels": {
                                          "queue": "catalog-reindex"}}},
                           "current": {"averageValue": "1431"}}}],
                       "conditions": [
                           {"type": "AbleToScale", "status": "True",
                            "reason": "ReadyForNewScale",
                            "message": "recommended size matches current size",
                            "lastTransitionTime": st.ts(SCALE_AT)},
                           {"type": "ScalingActive", "status": "True",
                            "reason": "ValidMetricFound",
                            "message": "the HPA was able to successfully calculate a replica "
                                       "count from external metric rabbitmq_queue_messages_"
                                       "ready", "lastTransitionTime": st.ts(30 * 1440)},
                           {"type": "ScalingLimited", "status": "False",
                            "reason": "DesiredWithinRange",
                            "message": "the desired count is within the acceptable range",
                            "lastTransitionTime": st.ts(SCALE_AT)}]}})
    event(st, "catalog", "HorizontalPodAutoscaler", "catalog-worker", "SuccessfulRescale",
          "New size: 6; reason: external metric rabbitmq_queue_messages_ready(&LabelSelector"
          "{MatchLabels:map[string]string{queue: catalog-reindex,},MatchExpressions:"
          "[]LabelSelectorRequirement{},}) above target", first_min=SCALE_AT,
          component="horizontal-pod-autoscaler", api="autoscaling/v2")
    rs = w.objects[1]["metadata"]["name"]
    for i, p in enumerate(bad):
        event(st, "catalog", "ReplicaSet", rs, "SuccessfulCreate", f"Created pod: {p.name}",
              first_min=SCALE_AT - 0.2 * i, component="replicaset-controller", api="apps/v1")
        event(st, "catalog", "Pod", p.name, "Scheduled",
              f"Successfully assigned catalog/{p.name} to {p.node}",
              first_min=SCALE_AT - 0.2 * i, component="default-scheduler")
        event(st, "catalog", "Pod", p.name, "Pulled",
              'Container image "ghcr.io/example/catalog-worker:4.12.1" already present on '
              "machine" if p.node != new_node else
              'Successfully pulled image "ghcr.io/example/catalog-worker:4.12.1" in 4.212s '
              "(4.212s including waiting). Image size: 187342116 bytes.",
              count=7 - i, first_min=SCALE_AT - 0.3 - 0.2 * i, last_min=2.0 + i,
              field_path="spec.containers{catalog-worker}", host=p.node)
        event(st, "catalog", "Pod", p.name, "BackOff",
              "Back-off restarting failed container catalog-worker in pod "
              f"{p.name}_catalog({st.uid('Pod', 'catalog', p.name)})", type_="Warning",
              count=30 - 3 * i, first_min=SCALE_AT - 1 - 0.2 * i, last_min=0.5 + i,
              field_path="spec.containers{catalog-worker}", host=p.node)
        stamp = (st.at(2.0 + i)).strftime("%Y-%m-%d %H:%M:%S")
        st.pod_log(p, _crash(stamp, p.name), previous=True)
        st.pod_log(p, [])
        # every crash of the last 18 minutes, as the log store saw it
        t = st.at(SCALE_AT - 0.2 * i - 0.3)
        k = 0
        while t < st.now - timedelta(minutes=0.5):
            st.log(t, p, "info", f"catalog_worker starting version=4.12.1 pod={p.name}")
            st.log(t + timedelta(milliseconds=90), p, "error",
                   "Traceback (most recent call last): ... File \"/app/catalog_worker/"
                   "settings.py\", line 58, in from_env redis_port=int(os.environ.get("
                   "\"REDIS_PORT\", \"6379\")) ValueError: invalid literal for int() with "
                   f"base 10: '{BAD}'", {"error.type": "ValueError"})
            k += 1
            t += timedelta(seconds=min(300, 10 * 2 ** k) + 3)
    event(st, "catalog", "Pod", bad[0].name, "TriggeredScaleUp",
          "pod triggered scale-up: [{eks-general-2026a-4ec8f1d2 3->4 (max: 12)}]",
          first_min=SCALE_AT + 3, component="cluster-autoscaler")
    event(st, "", "Node", new_node, "RegisteredNode",
          f"Node {new_node} event: Registered Node {new_node} in Controller",
          first_min=SCALE_AT + 1, component="node-controller")
    event(st, "", "Node", new_node, "NodeReady",
          f"Node {new_node} status is now: NodeReady", first_min=SCALE_AT + 0.5,
          component="kubelet", host=new_node)
    st.chatter(good, lambda r: ("info", f"reindexed batch={r.randint(100000, 999999)} "
                                        f"products={r.randint(180, 250)} "
                                        f"took={r.randint(900, 2400)}ms"), every_s=40)
    st.chatter(good, lambda r: ("warn", "redis GET catalog-cache took 212ms (slow, threshold "
                                        "200ms)"), every_s=600)

    # the cache team's new redis (for a different app) and its Service named plain 'redis'
    rlab = {"app.kubernetes.io/managed-by": "Helm", "helm.sh/chart": "redis-19.6.4",
            "app.kubernetes.io/instance": "redis"}
    redis = statefulset(st, "catalog", "redis",
                        [ctr("redis", "docker.io/bitnami/redis:7.4.0", port=6379, cpu="100m",
                             mem="256Mi")], [nodes[3]], replicas=1, age_days=SVC_AT / 1440,
                        pod_created_min=[SVC_AT - 0.5], claim="redis-data", storage="8Gi",
                        labels=rlab)
    service(st, "catalog", "redis", {"app.kubernetes.io/name": "redis"}, 6379, 6379,
            created_min=SVC_AT, cluster_ip=REDIS_IP, labels=rlab, pods=redis.pods,
            port_name="tcp-redis",
            annotations={"meta.helm.sh/release-name": "redis",
                         "meta.helm.sh/release-namespace": "catalog"})
    st.log(st.at(SVC_AT - 1), redis.pods[0], "info",
           "1:M 22 Sep 2026 13:22:31.118 * Ready to accept connections tcp")
    cache_ip = service(st, "catalog", "catalog-cache", None, 6379, 6379, age_days=400)
    st.add({"apiVersion": "v1", "kind": "Endpoints",
            "metadata": meta(st, "Endpoints", "catalog-cache", "catalog",
                             created=st.ts(400 * 1440)),
            "subsets": [{"addresses": [{"ip": "10.0.71.12"}],
                         "ports": [{"name": "http", "port": 6379, "protocol": "TCP"}]}]})
    assert cache_ip
    api = deployment(st, "catalog", "catalog-api",
                     [ctr("catalog-api", "ghcr.io/example/catalog-api:3.3.0", cpu="300m",
                          mem="384Mi", readiness=http_probe("/ready"))],
                     nodes[:3], age_days=300, revision=61, rollout_min=31)
    service(st, "catalog", "catalog-api", {"app.kubernetes.io/name": "catalog-api"}, 80,
            8080, pods=api.pods)
    event(st, "catalog", "Deployment", "catalog-api", "ScalingReplicaSet",
          f"Scaled up replica set {api.objects[1]['metadata']['name']} to 3 from 2",
          first_min=30, component="deployment-controller", api="apps/v1")
    st.chatter(api.pods, access(["/v2/products/88123", "/v2/search?q=lamp", "/ready"],
                                "catalog-api", 30), every_s=30)
    cart = deployment(st, "cart", "cart",
                      [ctr("cart", "ghcr.io/example/cart:2.7.9", cpu="200m", mem="256Mi",
                           readiness=http_probe("/ready"))], nodes[1:4], age_days=200,
                      revision=20, states=[PState(containers=[CState(
                          restarts=1, started_min=3 * 1440,
                          last=("OOMKilled", 137, 5 * 1440, 3 * 1440))]), PState(), PState()])
    st.chatter(cart.pods, access(["/cart", "+/cart/items"], "cart", 25), every_s=40)
    rmq = statefulset(st, "jobs", "rabbitmq",
                      [ctr("rabbitmq", "docker.io/library/rabbitmq:3.13-management",
                           port=5672, cpu="500m", mem="1Gi", mem_limit="2Gi")], nodes[:3],
                      claim="data", storage="20Gi")
    st.chatter(rmq.pods, lambda r: ("warn", "closing AMQP connection <0.31416.12> "
                                            "(10.0.4.88:51922 -> 10.0.18.9:5672): client "
                                            "unexpectedly closed TCP connection"), every_s=200)

    # metrics
    for p in good:
        st.pod_metrics(p, cpu=0.42, mem_mib=430)
    for i, p in enumerate(bad):
        st.pod_metrics(p, cpu=0.01, mem_mib=40,
                       restarts=lambda m, i=i: 0 if m > SCALE_AT else
                       min(7 - i, int((SCALE_AT - m) / 2.5)),
                       resets=[SCALE_AT - k * 2.5 for k in range(7)])
    for p in [*api.pods, *cart.pods, *rmq.pods, *redis.pods]:
        st.pod_metrics(p, cpu=0.1, mem_mib=250)
    st.gauge("rabbitmq_queue_messages_ready", "Messages ready to be delivered to consumers.",
             {"namespace": "jobs", "queue": "catalog-reindex", "vhost": "catalog"},
             lambda m: 900 + max(0, 60 - m) * 35 + st.rng.uniform(-40, 40))
    st.http("catalog", "catalog-api", 14.0, lambda m: 0.002)
    fix_host_ips(st.objects)
    st.write(root, "catalog-worker pods crashlooping after scale-up",
             "catalog-worker: the HPA scaled it up for the reindex backlog and the new pods "
             "crashloop, the old\nthree are fine. Two of the new ones landed on the node the "
             "autoscaler just added\n(ip-10-0-52-14), I think that node is broken - cordon it? "
             "Reindex queue keeps growing.\n",
             {"category": "crash_loop",
              "culprit": {"kind": "Deployment", "namespace": "catalog",
                          "name": "catalog-worker"},
              "evidence": [f"invalid literal for int() with base 10: '{BAD}'", "REDIS_PORT",
                           "CrashLoopBackOff"],
              "fix": "Set enableServiceLinks: false in catalog-worker's pod spec (or set "
                     "REDIS_PORT explicitly / read a prefixed variable), then let the "
                     "crashing pods restart; the new Service catalog/redis injects "
                     f"REDIS_PORT={BAD} into every pod created since. The node is fine."})
