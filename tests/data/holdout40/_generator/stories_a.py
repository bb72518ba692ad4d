"""Stories 1-2: a ServiceAccount without RBAC; an imagePullSecret a clean-up deleted."""

from __future__ import annotations

import random
from datetime import UTC, datetime

from . import kube as k
from .story import Story


def _eks_nodes(story: Story, names: list[str], zones: list[str]) -> list[dict]:
    return [k.node(n, "2026-10-02T07:12:44Z", story.now, zone=z, instance="m6i.2xlarge")
            for n, z in zip(names, zones, strict=True)]


def rbac_forbidden() -> Story:
    now = datetime(2026, 11, 27, 14, 20, tzinfo=UTC)
    s = Story(
        id="fx-rates-rollout-forbidden", title="fx-rates 2.8.0 rollout never finishes",
        now=now,
        report="""fx-rates 2.8.0 rollout has been sitting there for half an hour, argo shows it
Progressing then Degraded. old version still answers so the desk isn't screaming yet, but
I need this out before the London close. is the cluster slow today or what?""",
        truth={"category": "crash_loop",
               "culprit": {"kind": "Deployment", "namespace": "treasury", "name": "fx-rates"},
               "evidence": ["system:serviceaccount:treasury:fx-rates-sync",
                            "cannot list resource \"configmaps\"",
                            "timed out waiting for caches to sync", "CrashLoopBackOff"],
               "fix": "Bind a Role that allows get/list/watch on configmaps in treasury to the "
                      "new ServiceAccount fx-rates-sync (the chart 4.0.0 split created it with "
                      "no RoleBinding), or roll back to the fx-rates ServiceAccount"})
    rnd = random.Random(1)
    nodes = ["ip-10-20-11-34.eu-central-1.compute.internal",
             "ip-10-20-12-187.eu-central-1.compute.internal",
             "ip-10-20-13-9.eu-central-1.compute.internal",
             "ip-10-20-11-202.eu-central-1.compute.internal"]
    s.add(k.namespace("treasury", "2025-03-14T10:00:00Z", {"team": "treasury-eng"}),
          *_eks_nodes(s, nodes, ["eu-central-1a", "eu-central-1b", "eu-central-1c",
                                 "eu-central-1a"]))
    old_img = "123456789012.dkr.ecr.eu-central-1.amazonaws.com/treasury/fx-rates:2.7.4"
    new_img = "123456789012.dkr.ecr.eu-central-1.amazonaws.com/treasury/fx-rates:2.8.0"

    def tpl(image: str, sa: str, extra_env: list[dict]) -> dict:
        c = k.container("fx-rates", image, ports=[{"containerPort": 8080, "name": "http"},
                                                  {"containerPort": 9090, "name": "metrics"}],
                        requests={"cpu": "250m", "memory": "256Mi"},
                        limits={"memory": "512Mi"},
                        env=[{"name": "PG_HOST", "value": "treasury-pg.treasury.svc"},
                             {"name": "FEED_URL", "value": "https://feeds.ecb-mirror.internal/eurofxref"},
                             *extra_env],
                        readinessProbe=k.http_probe("/readyz", "http"),
                        livenessProbe=k.http_probe("/livez", "http", delay=15, period=20))
        return k.pod_template({"app": "fx-rates", "app.kubernetes.io/part-of": "fx-rates"}, [c],
                              serviceAccountName=sa)

    old_t = tpl(old_img, "fx-rates", [])
    new_t = tpl(new_img, "fx-rates-sync",
                [{"name": "OVERRIDES_SELECTOR", "value": "fx-rates.io/overrides=true"},
                 {"name": "OVERRIDES_NAMESPACE",
                  "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}])
    old_h, new_h = "6f9c8d7b45", "58d4fb9c6f"
    s.add(k.deployment(
        "treasury", "fx-rates", "2025-06-02T09:30:11Z", new_t, replicas=3, revision=12,
        strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
        annotations={"meta.helm.sh/release-name": "fx-rates",
                     "helm.sh/chart": "fx-rates-4.0.0"},
        status=k.deploy_status(now, replicas=4, ready=3, updated=1, available=3, generation=14,
                               progressing=("False", "ProgressDeadlineExceeded",
                                            f'ReplicaSet "fx-rates-{new_h}" has timed out '
                                            "progressing.", 24))))
    s.add(k.replicaset("treasury", "fx-rates", old_h, "2026-11-24T08:02:40Z", old_t,
                       revision=11, replicas=3, ready=3),
          k.replicaset("treasury", "fx-rates", new_h, k.stamp(now, 34), new_t, revision=12,
                       replicas=1, ready=0))
    ips = ["10.20.11.71", "10.20.12.40", "10.20.13.118"]
    olds = [f"fx-rates-{old_h}-{k.suffix('fxo' + str(i))}" for i in range(3)]
    for i, name in enumerate(olds):
        s.add(k.pod("treasury", name, "2026-11-24T08:03:05Z", old_t,
                    owner=("ReplicaSet", f"fx-rates-{old_h}"), node_name=nodes[i], ip=ips[i],
                    phase="Running", ready=True,
                    statuses=[k.running("fx-rates", old_img, "2026-11-24T08:03:09Z")],
                    extra_labels={"pod-template-hash": old_h}))
    new_pod = f"fx-rates-{new_h}-{k.suffix('fxn')}"
    last = k.terminated("Error", 1, k.stamp(now, 4.2), k.stamp(now, 3.6))
    s.add(k.pod("treasury", new_pod, k.stamp(now, 34), new_t,
                owner=("ReplicaSet", f"fx-rates-{new_h}"), node_name=nodes[3], ip="10.20.11.233",
                phase="Running", ready=False,
                statuses=[k.waiting("fx-rates", new_img, "CrashLoopBackOff",
                                    f"back-off 5m0s restarting failed container=fx-rates "
                                    f"pod={new_pod}_treasury({k.uid('Pod', 'treasury', new_pod)})",
                                    restarts=9, last=last)],
                extra_labels={"pod-template-hash": new_h}))
    svc_ports = [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}]
    s.add(k.service("treasury", "fx-rates", "2025-06-02T09:30:11Z", {"app": "fx-rates"},
                    svc_ports, cluster_ip="172.20.44.19"),
          k.endpoints("treasury", "fx-rates", "2025-06-02T09:30:11Z",
                      [(ips[i], olds[i], nodes[i]) for i in range(3)],
                      [("10.20.11.233", new_pod, nodes[3])],
                      [{"name": "http", "port": 8080, "protocol": "TCP"}]))
    # bystanders: ledger-api and payout-notifier, healthy
    for name, port, repl, img in (("ledger-api", 8000, 3, "ledger-api:5.1.2"),
                                  ("payout-notifier", 8080, 2, "payout-notifier:1.33.0")):
        image = f"123456789012.dkr.ecr.eu-central-1.amazonaws.com/treasury/{img}"
        t = k.pod_template({"app": name}, [k.container(
            name, image, ports=[{"containerPort": port, "name": "http"}],
            requests={"cpu": "200m", "memory": "384Mi"}, limits={"memory": "768Mi"},
            readinessProbe=k.http_probe("/health", "http"))], serviceAccountName=name)
        h = k.template_hash(name)
        s.add(k.deployment("treasury", name, "2025-04-11T12:00:00Z", t, replicas=repl,
                           revision=31 if name == "ledger-api" else 7,
                           status=k.deploy_status(now, replicas=repl, ready=repl, updated=repl,
                                                  available=repl, generation=40,
                                                  progressing=("True", "NewReplicaSetAvailable",
                                                               f'ReplicaSet "{name}-{h}" has '
                                                               "successfully progressed.",
                                                               7000))),
              k.replicaset("treasury", name, h, "2026-11-21T16:40:00Z", t, revision=31,
                           replicas=repl, ready=repl))
        for i in range(repl):
            pn = f"{name}-{h}-{k.suffix(name + str(i))}"
            s.add(k.pod("treasury", pn, "2026-11-21T16:41:00Z", t,
                        owner=("ReplicaSet", f"{name}-{h}"), node_name=nodes[(i + 1) % 4],
                        ip=f"10.20.1{(i + 1) % 3 + 1}.{150 + i}", phase="Running", ready=True,
                        statuses=[k.running(name, image, "2026-11-21T16:41:12Z")],
                        extra_labels={"pod-template-hash": h}))
            if name == "ledger-api":
                for m in range(60, 0, -3):
                    s.log(m + rnd.random(), "POST /v2/journal 201", "info", name, "treasury",
                          pn, **{"http.response.status_code": 201})
    s.add(k.event("treasury", "Pod", new_pod, "BackOff",
                  "Back-off restarting failed container fx-rates in pod "
                  f"{new_pod}_treasury({k.uid('Pod', 'treasury', new_pod)})",
                  first=k.stamp(now, 31), last=k.stamp(now, 1), count=142, host=nodes[3]),
          k.event("treasury", "Pod", new_pod, "Pulled",
                  f'Container image "{new_img}" already present on machine',
                  first=k.stamp(now, 33), last=k.stamp(now, 4.2), count=10, type_="Normal",
                  host=nodes[3]),
          k.event("treasury", "Pod", new_pod, "Started", "Started container fx-rates",
                  first=k.stamp(now, 33), last=k.stamp(now, 4.2), count=10, type_="Normal",
                  host=nodes[3]),
          k.event("treasury", "Deployment", "fx-rates", "ScalingReplicaSet",
                  f"Scaled up replica set fx-rates-{new_h} to 1", first=k.stamp(now, 34),
                  last=k.stamp(now, 34), type_="Normal", component="deployment-controller"),
          k.event("treasury", "Pod", f"ledger-api-{k.template_hash('ledger-api')}-"
                  f"{k.suffix('ledger-api1')}", "Unhealthy",
                  "Readiness probe failed: Get \"http://10.20.13.151:8000/health\": context "
                  "deadline exceeded (Client.Timeout exceeded while awaiting headers)",
                  first=k.stamp(now, 47), last=k.stamp(now, 47), count=1, host=nodes[2]))
    # the crashed instance's output: client-go's reflector warnings, then a generic fatal
    lines: list[str] = []
    t0 = now.timestamp() - 4.2 * 60

    def z(offset: float, level: str, caller: str, msg: str, **fields: object) -> str:
        ts = datetime.fromtimestamp(t0 + offset, UTC).strftime(
            "%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        extra = "".join(f',"{key}":"{value}"' for key, value in fields.items())
        return f'{{"level":"{level}","ts":"{ts}","caller":"{caller}","msg":"{msg}"{extra}}}'

    def klog(offset: float, sev: str, where: str, msg: str) -> str:
        moment = datetime.fromtimestamp(t0 + offset, UTC)
        return f"{sev}{moment.strftime('%m%d %H:%M:%S.%f')}       1 {where}] {msg}"

    forbidden = ('configmaps is forbidden: User "system:serviceaccount:treasury:fx-rates-sync" '
                 'cannot list resource "configmaps" in API group "" in the namespace "treasury"')
    lines += [z(0.02, "info", "cmd/fxrates/main.go:58", "starting fx-rates", version="2.8.0",
                commit="9c1e4ab"),
              z(0.05, "info", "internal/config/load.go:31", "config loaded",
                feed="https://feeds.ecb-mirror.internal/eurofxref", pg="treasury-pg.treasury.svc"),
              z(0.31, "info", "internal/store/pg.go:44", "postgres pool ready", max_conns="20"),
              z(0.33, "info", "internal/feed/ecb.go:70", "feed client ready", interval="60s"),
              z(0.34, "info", "internal/overrides/watch.go:77",
                "starting rate-source override informer", selector="fx-rates.io/overrides=true")]
    for i, off in enumerate((0.9, 1.8, 3.5, 7.1, 13.9, 27.6)):
        lines.append(klog(off, "W", "reflector.go:547",
                          "k8s.io/client-go/informers/factory.go:160: failed to list "
                          f"*v1.ConfigMap: {forbidden}"))
        lines.append(klog(off + 0.001, "E", "reflector.go:150",
                          "k8s.io/client-go/informers/factory.go:160: Failed to watch "
                          f"*v1.ConfigMap: failed to list *v1.ConfigMap: {forbidden}"))
        if i == 2:
            lines.append(z(off + 0.2, "info", "internal/http/server.go:39",
                           "http server listening", addr=":8080"))
    lines += [z(30.35, "error", "internal/overrides/watch.go:92",
                "override informer did not sync", error="timed out waiting for caches to sync"),
              z(30.36, "fatal", "cmd/fxrates/main.go:97", "startup failed",
                error="overrides: timed out waiting for caches to sync")]
    s.pod_log("treasury", new_pod, "fx-rates", lines, previous=True)
    for line in lines:
        if '"level":"' in line:
            level = line.split('"level":"')[1].split('"')[0]
            msg = line.split('"msg":"')[1].split('"')[0]
        else:
            level = "warn" if line.startswith("W") else "error"
            msg = line.split("] ", 1)[1]
        s.log(4.2 - (lines.index(line) * 0.05), msg, level, "fx-rates", "treasury", new_pod)
    for i, name in enumerate(olds):
        s.pod_log("treasury", name, "fx-rates", [
            f'{{"level":"info","ts":"{k.stamp(now, m)}","caller":"internal/http/log.go:22",'
            f'"msg":"request","method":"GET","path":"/v1/rates/EUR","status":200,'
            f'"dur_ms":{rnd.randint(2, 9)}}}' for m in range(40, 0, -2)])
        for m in range(60, 0, -4):
            s.log(m + i * 0.3, "request GET /v1/rates/EUR", "info", "fx-rates", "treasury",
                  name, **{"http.response.status_code": 200})
    for name in [*olds, new_pod]:
        restarts = 9 if name == new_pod else 0
        start = 34 if name == new_pod else 90
        s.metrics.add("kube_pod_container_status_restarts", "counter",
                      "The number of container restarts per container.",
                      {"namespace": "treasury", "pod": name, "container": "fx-rates"},
                      [(s.unix(m), min(restarts, max(0, (start - m) // 3.4)) if restarts else 0)
                       for m in range(start, -1, -2)])
    return s


def pull_secret_deleted() -> Story:
    now = datetime(2026, 11, 29, 9, 45, tzinfo=UTC)
    s = Story(
        id="thumbnailer-scale-up-pull-auth", title="Thumbnails lagging after a scale-up",
        now=now,
        report="""thumbnails for new uploads show the grey placeholder for 30+ min now.
hpa did scale thumbnailer up but the queue keeps growing?? is rabbit ok? nothing was deployed
today afaik""",
        truth={"category": "image_pull",
               "culprit": {"kind": "Deployment", "namespace": "media", "name": "thumbnailer"},
               "evidence": ["Unable to retrieve some image pull secrets (harbor-media-robot)",
                            "401 Unauthorized", "ImagePullBackOff"],
               "fix": "Recreate the imagePullSecret harbor-media-robot in media (the "
                      "namespace-janitor CronJob deleted it) and exclude pull secrets from "
                      "the janitor; the running pods only work from the node image cache"})
    rnd = random.Random(2)
    nodes = [f"k8s-worker-{i:02d}" for i in range(1, 7)]
    objs = []
    for i, n in enumerate(nodes):
        nd = k.node(n, "2026-08-19T13:00:00Z", now, zone=f"dc2-rack{i % 3 + 1}",
                    instance="bare-metal-r640", cpu="32", memory="128Gi")
        if n == "k8s-worker-04":
            nd["spec"]["unschedulable"] = True
            nd["spec"]["taints"] = [{"key": "node.kubernetes.io/unschedulable",
                                     "effect": "NoSchedule", "timeAdded": k.stamp(now, 53)}]
        objs.append(nd)
    s.add(k.namespace("default", "2024-06-01T09:00:00Z"),
          k.namespace("media", "2024-11-02T10:00:00Z"),
          k.namespace("platform-ops", "2024-06-01T10:00:00Z"), *objs)
    image = "harbor.pixelcrate.io/media/thumbnailer:5.14.2"
    c = k.container("thumbnailer", image, ports=[{"containerPort": 3000, "name": "http"}],
                    requests={"cpu": "1", "memory": "1Gi"}, limits={"cpu": "2", "memory": "2Gi"},
                    env=[{"name": "AMQP_URL", "value": "amqp://media-mq.media.svc:5672"},
                         {"name": "QUEUE", "value": "thumbnails"},
                         {"name": "NODE_OPTIONS", "value": "--max-old-space-size=1536"}],
                    readinessProbe=k.http_probe("/ready", "http"))
    t = k.pod_template({"app": "thumbnailer"}, [c],
                       imagePullSecrets=[{"name": "harbor-media-robot"}],
                       serviceAccountName="default")
    h = "7d4b9c8f6d"
    s.add(k.deployment("media", "thumbnailer", "2024-11-20T10:00:00Z", t, replicas=7, revision=9,
                       status=k.deploy_status(now, replicas=7, ready=3, updated=7, available=3,
                                              generation=61,
                                              progressing=("True", "NewReplicaSetAvailable",
                                                           f'ReplicaSet "thumbnailer-{h}" has '
                                                           "successfully progressed.", 4000))),
          k.replicaset("media", "thumbnailer", h, "2026-11-26T15:10:00Z", t, revision=9,
                       replicas=7, ready=3))
    running, stuck = [], []
    for i in range(3):
        name = f"thumbnailer-{h}-{k.suffix('th' + str(i))}"
        running.append(name)
        s.add(k.pod("media", name, "2026-11-26T15:10:22Z", t,
                    owner=("ReplicaSet", f"thumbnailer-{h}"), node_name=nodes[[0, 2, 4][i]],
                    ip=f"10.244.{[1, 3, 5][i]}.{30 + i}", phase="Running", ready=True,
                    statuses=[k.running("thumbnailer", image, "2026-11-26T15:10:31Z")],
                    extra_labels={"pod-template-hash": h}))
    pull_msg = (f'failed to pull and unpack image "{image}": failed to resolve reference '
                f'"{image}": unexpected status from HEAD request to '
                "https://harbor.pixelcrate.io/v2/media/thumbnailer/manifests/5.14.2: "
                "401 Unauthorized")
    for i, (ago, node_name) in enumerate(((52, "k8s-worker-06"), (31, "k8s-worker-02"),
                                          (31, "k8s-worker-05"), (31, "k8s-worker-06"))):
        name = f"thumbnailer-{h}-{k.suffix('thn' + str(i))}"
        stuck.append(name)
        s.add(k.pod("media", name, k.stamp(now, ago), t, owner=("ReplicaSet", f"thumbnailer-{h}"),
                    node_name=node_name, ip=f"10.244.{nodes.index(node_name) + 1}.{90 + i}",
                    phase="Pending", ready=False,
                    statuses=[k.waiting("thumbnailer", image, "ImagePullBackOff",
                                        f'Back-off pulling image "{image}"')],
                    extra_labels={"pod-template-hash": h}))
        s.add(k.event("media", "Pod", name, "FailedToRetrieveImagePullSecret",
                      "Unable to retrieve some image pull secrets (harbor-media-robot); "
                      "attempting to pull the image may not succeed.",
                      first=k.stamp(now, ago - 0.1), last=k.stamp(now, 0.7), count=ago * 2,
                      host=node_name),
              k.event("media", "Pod", name, "Failed",
                      f'Failed to pull image "{image}": {pull_msg}',
                      first=k.stamp(now, ago - 0.1), last=k.stamp(now, 2.5), count=ago // 5 + 2,
                      host=node_name),
              k.event("media", "Pod", name, "BackOff", f'Back-off pulling image "{image}"',
                      first=k.stamp(now, ago - 0.5), last=k.stamp(now, 0.7), count=ago * 2,
                      type_="Normal", host=node_name))
    s.add(k.event("media", "Pod", stuck[0], "Scheduled",
                  f"Successfully assigned media/{stuck[0]} to k8s-worker-06",
                  first=k.stamp(now, 52), last=k.stamp(now, 52), type_="Normal",
                  component="default-scheduler"),
          k.event("", "Node", "k8s-worker-04", "NodeNotSchedulable",
                  "Node k8s-worker-04 status is now: NodeNotSchedulable", first=k.stamp(now, 53),
                  last=k.stamp(now, 53), type_="Normal", component="kubelet",
                  host="k8s-worker-04"),
          k.event("media", "HorizontalPodAutoscaler", "thumbnailer", "SuccessfulRescale",
                  "New size: 7; reason: external metric rabbitmq_queue_messages_ready"
                  "(&LabelSelector{MatchLabels:map[string]string{queue: thumbnails,},"
                  "MatchExpressions:[]LabelSelectorRequirement{},}) above target",
                  first=k.stamp(now, 31), last=k.stamp(now, 31), type_="Normal",
                  component="horizontal-pod-autoscaler"),
          k.event("media", "Deployment", "thumbnailer", "ScalingReplicaSet",
                  f"Scaled up replica set thumbnailer-{h} to 7 from 4", first=k.stamp(now, 31),
                  last=k.stamp(now, 31), type_="Normal", component="deployment-controller"))
    s.add({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
           "metadata": k.metadata("HorizontalPodAutoscaler", "media", "thumbnailer",
                                  "2024-11-20T10:00:00Z"),
           "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                       "name": "thumbnailer"},
                    "minReplicas": 4, "maxReplicas": 16,
                    "metrics": [{"type": "External", "external": {
                        "metric": {"name": "rabbitmq_queue_messages_ready",
                                   "selector": {"matchLabels": {"queue": "thumbnails"}}},
                        "target": {"type": "AverageValue", "averageValue": "250"}}}]},
           "status": {"currentReplicas": 7, "desiredReplicas": 7,
                      "lastScaleTime": k.stamp(now, 31),
                      "currentMetrics": [{"type": "External", "external": {
                          "metric": {"name": "rabbitmq_queue_messages_ready",
                                     "selector": {"matchLabels": {"queue": "thumbnails"}}},
                          "current": {"averageValue": "241"}}}],
                      "conditions": [
                          {"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale",
                           "message": "recommended size matches current size",
                           "lastTransitionTime": k.stamp(now, 26)},
                          {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound",
                           "message": "the HPA was able to successfully calculate a replica "
                                      "count from external metric rabbitmq_queue_messages_ready",
                           "lastTransitionTime": k.stamp(now, 31)},
                          {"type": "ScalingLimited", "status": "False",
                           "reason": "DesiredWithinRange",
                           "message": "the desired count is within the acceptable range",
                           "lastTransitionTime": k.stamp(now, 31)}]}})
    # bystanders: upload-api (Deployment) and media-mq (StatefulSet), healthy
    up_img = "harbor.pixelcrate.io/media/upload-api:2.40.1"
    up_t = k.pod_template({"app": "upload-api"}, [k.container(
        "upload-api", up_img, ports=[{"containerPort": 8080, "name": "http"}],
        requests={"cpu": "500m", "memory": "512Mi"}, limits={"memory": "1Gi"},
        readinessProbe=k.http_probe("/healthz", "http"))],
        imagePullSecrets=[{"name": "harbor-media-robot"}])
    uh = "5c7f8b6d9a"
    s.add(k.deployment("media", "upload-api", "2024-11-20T10:00:00Z", up_t, replicas=3,
                       revision=44, status=k.deploy_status(
                           now, replicas=3, ready=3, updated=3, available=3, generation=52,
                           progressing=("True", "NewReplicaSetAvailable",
                                        f'ReplicaSet "upload-api-{uh}" has successfully '
                                        "progressed.", 9000))),
          k.replicaset("media", "upload-api", uh, "2026-11-23T11:00:00Z", up_t, revision=44,
                       replicas=3, ready=3))
    uploads = []
    for i in range(3):
        name = f"upload-api-{uh}-{k.suffix('up' + str(i))}"
        uploads.append(name)
        s.add(k.pod("media", name, "2026-11-23T11:00:30Z", up_t,
                    owner=("ReplicaSet", f"upload-api-{uh}"), node_name=nodes[i * 2 + 1 if i < 2
                                                                          else 2],
                    ip=f"10.244.{i + 2}.{12 + i}", phase="Running", ready=True,
                    statuses=[k.running("upload-api", up_img, "2026-11-23T11:00:41Z")],
                    extra_labels={"pod-template-hash": uh}))
    mq_img = "docker.io/library/rabbitmq:3.13.7-management"
    mq_t = k.pod_template({"app": "media-mq"}, [k.container(
        "rabbitmq", mq_img, ports=[{"containerPort": 5672, "name": "amqp"},
                                   {"containerPort": 15692, "name": "prometheus"}],
        requests={"cpu": "1", "memory": "2Gi"}, limits={"memory": "4Gi"})])
    s.add({"apiVersion": "apps/v1", "kind": "StatefulSet",
           "metadata": k.metadata("StatefulSet", "media", "media-mq", "2024-11-02T10:30:00Z",
                                  labels={"app": "media-mq"}),
           "spec": {"replicas": 3, "serviceName": "media-mq",
                    "selector": {"matchLabels": {"app": "media-mq"}}, "template": mq_t},
           "status": {"replicas": 3, "readyReplicas": 3, "currentReplicas": 3,
                      "updatedReplicas": 3, "availableReplicas": 3}})
    for i in range(3):
        s.add(k.pod("media", f"media-mq-{i}", "2026-11-23T08:00:00Z", mq_t,
                    owner=("StatefulSet", "media-mq"), node_name=nodes[i + 3 if i < 2 else 0],
                    ip=f"10.244.{i + 4}.5", phase="Running", ready=True,
                    statuses=[k.running("rabbitmq", mq_img, "2026-11-23T08:00:20Z")]))
    # the janitor CronJob that deleted the secret (outside the event horizon: logs only)
    jan_t = k.pod_template({"app": "namespace-janitor"}, [k.container(
        "janitor", "harbor.pixelcrate.io/platform/ns-janitor:0.6.0",
        args=["--delete", "--min-age=720h"], requests={"cpu": "50m", "memory": "64Mi"})],
        restartPolicy="OnFailure", serviceAccountName="namespace-janitor")
    s.add({"apiVersion": "batch/v1", "kind": "CronJob",
           "metadata": k.metadata("CronJob", "platform-ops", "namespace-janitor",
                                  "2026-11-25T09:00:00Z", labels={"app": "namespace-janitor"}),
           "spec": {"schedule": "10 8 * * *", "concurrencyPolicy": "Forbid",
                    "jobTemplate": {"spec": {"template": jan_t}}},
           "status": {"lastScheduleTime": k.stamp(now, 95),
                      "lastSuccessfulTime": k.stamp(now, 93)}})
    jpod = f"namespace-janitor-29404010-{k.suffix('jan')}"
    jan_lines = [
        (95.0, "info", "scan started: 14 namespaces, kinds=configmap,secret,pvc, min-age=720h"),
        (94.6, "info", "configmap media/thumb-presets-2023: not mounted by any pod, deleting"),
        (94.5, "info", "secret media/legacy-s3-creds: not referenced by any serviceaccount "
                       "or pod volume, deleting"),
        (94.5, "info", "secret media/harbor-media-robot: not referenced by any serviceaccount "
                       "or pod volume, deleting"),
        (94.3, "info", "secret search/es-snapshot-old: not referenced by any serviceaccount "
                       "or pod volume, deleting"),
        (93.4, "info", "scan finished: deleted 4 objects (1 configmap, 3 secret), kept 311")]
    for minutes, level, msg in jan_lines:
        s.log(minutes, msg, level, "namespace-janitor", "platform-ops", jpod, "janitor")
    # thumbnailer's running pods work; upload-api publishes; the queue grows
    for m in range(60, 0, -1):
        for name in running:
            if rnd.random() < 0.5:
                when = m + rnd.random() * 0.9
                text = (f"rendered thumbnails for asset {rnd.randint(10**7, 10**8):x} "
                        f"(3 sizes) in {rnd.randint(900, 2900)}ms")
                s.log(when, text, "info", "thumbnailer", "media", name)
                if name == running[0]:
                    moment = s.at(when).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]
                    s.pod_log("media", name, "thumbnailer", [f"{moment}Z info: {text}"])
        if m % 3 == 0:
            s.log(m, f"POST /v1/assets 201 {rnd.randint(40, 200)}ms", "info", "upload-api",
                  "media", uploads[m % 3], **{"http.response.status_code": 201})
    s.log(44.2, "amqp: heartbeat missed from 10.244.2.13, closing connection", "warning",
          "media-mq", "media", "media-mq-1", "rabbitmq")
    for m in range(60, 0, -1):
        s.metrics.add("rabbitmq_queue_messages_ready", "gauge", "Messages ready to be delivered",
                      {"queue": "thumbnails", "vhost": "/", "namespace": "media"},
                      [(s.unix(m), (180 + rnd.randint(-30, 30)) if m > 55 else
                        180 + (55 - m) * 27 + rnd.randint(-15, 15))])
    total = 0.0
    samples = []
    for m in range(60, -1, -1):
        total += 3 * 10.5 + rnd.randint(-2, 2)
        samples.append((s.unix(m), total))
    s.metrics.add("thumbnailer_jobs_completed", "counter", "Thumbnail jobs completed",
                  {"namespace": "media", "service": "thumbnailer"}, samples)
    return s
