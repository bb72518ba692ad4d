"""Quarry Games: lobby-service 5.0 drops the gRPC health service with its old framework.

5.0.0 moved the server from the tonic builder (with tonic-health) to the new shared router
crate, and nobody mounted grpc.health.v1.Health again. The readiness probe is a kubelet
gRPC probe on 50051, so the new pods run, serve nothing and never become Ready; with
maxUnavailable 0 the old pods keep serving, the rollout hits its progress deadline and the
release pipeline times out: it looks like a slow cluster, not a broken pod.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout38._generator import kube as k
from tests.data.holdout38._generator.story import Story

NOW = datetime(2026, 11, 25, 14, 20, 0)
NS = "matchmaking"
APP = "lobby-service"
REGISTRY = "quarrygames.azurecr.io/backend/lobby-service"
OLD, NEW = f"{REGISTRY}:4.18.3", f"{REGISTRY}:5.0.0"
ROLLED = NOW - timedelta(minutes=41)
PROBE_FAILURE = ("Readiness probe failed: server does not implement the grpc health protocol "
                 "(grpc.health.v1.Health): ")


def build() -> Story:
    story = Story(
        id="lobby-service-grpc-health-missing",
        title="lobby-service 5.0 release stuck in the pipeline",
        now=NOW,
        report="""
the lobby-service 5.0 release has been stuck in argo for ~40 min, the sync step timed out.
players seem fine (old version still serving) so not urgent but the release train is
blocked. is the cluster slow at scheduling today? saw some FailedScheduling earlier
""",
        truth={"category": "probe_failure",
               "culprit": {"kind": "Deployment", "namespace": NS, "name": APP},
               "evidence": ["grpc.health.v1.Health", "ProgressDeadlineExceeded",
                            "0/1 ready"],
               "fix": "Register the grpc.health.v1.Health service in lobby-service 5.0 (the "
                      "new router does not add it), or roll back to 4.18.3; the cluster is "
                      "not slow."})
    made = NOW - timedelta(days=300)
    story.add(k.namespace(NS, made, {"team": "online-services"}), k.namespace("default", made),
              k.namespace("telemetry", made))
    nodes = [f"aks-game-{i:02d}-vmss0000{c}" for i, c in ((1, "0a"), (1, "0b"), (2, "0c"),
                                                          (2, "0d"))]
    for i, name in enumerate(nodes):
        story.add(k.node(name, NOW - timedelta(days=5, hours=3 * i), cpu="15820m",
                         memory="58Gi", heartbeat=NOW - timedelta(seconds=17),
                         labels={"agentpool": f"game{i // 2 + 1:02d}",
                                 "topology.kubernetes.io/zone": f"westeurope-{i % 3 + 1}"}))

    def server(image: str) -> dict[str, object]:
        return k.container(
            APP, image, cpu="1", memory="1Gi", memory_limit="1Gi",
            ports=[{"containerPort": 50051, "name": "grpc"},
                   {"containerPort": 9000, "name": "metrics"}],
            env=[{"name": "RUST_LOG", "value": "info,lobby_service=debug,h2=warn"},
                 {"name": "REDIS_URL", "value": "redis://lobby-cache.matchmaking:6379"},
                 {"name": "REGION", "value": "eu-west"}],
            readinessProbe={"grpc": {"port": 50051}, "initialDelaySeconds": 5,
                            "periodSeconds": 10, "timeoutSeconds": 1, "failureThreshold": 3,
                            "successThreshold": 1},
            livenessProbe={"tcpSocket": {"port": 50051}, "initialDelaySeconds": 15,
                           "periodSeconds": 20, "timeoutSeconds": 1, "failureThreshold": 3,
                           "successThreshold": 1})

    old_app, new_app = server(OLD), server(NEW)
    deploy = k.workload(
        "Deployment", NS, APP, made, [new_app], replicas=6,
        annotations={"deployment.kubernetes.io/revision": "23",
                     "argocd.argoproj.io/tracking-id": "lobby-service:apps/Deployment:"
                                                       "matchmaking/lobby-service"},
        strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2,
                                                             "maxUnavailable": 0}},
        status=k.deployment_status(
            8, 6, 2, at=ROLLED, available=6,
            progressing={"type": "Progressing", "status": "False",
                         "reason": "ProgressDeadlineExceeded",
                         "message": f'ReplicaSet "{APP}-{k.pod_hash(NS, APP, "23")}" has '
                                    "timed out progressing.",
                         "lastUpdateTime": k.ts(ROLLED + timedelta(minutes=10)),
                         "lastTransitionTime": k.ts(ROLLED + timedelta(minutes=10))}))
    deploy["status"]["conditions"][0] |= {"status": "True", "reason": "MinimumReplicasAvailable",
                                          "message": "Deployment has minimum availability.",
                                          "lastTransitionTime": k.ts(NOW - timedelta(days=4))}
    new_hash, old_hash = k.pod_hash(NS, APP, "23"), k.pod_hash(NS, APP, "22")
    new_rs = k.replicaset(deploy, new_hash, 23, ROLLED, [new_app], replicas=2, ready=0)
    old_rs = k.replicaset(deploy, old_hash, 22, NOW - timedelta(days=4), [old_app],
                          replicas=6, ready=6)
    story.add(deploy, new_rs, old_rs)
    story.add(k.event(NS, "Deployment", APP, "ScalingReplicaSet",
                      f"Scaled up replica set {APP}-{new_hash} to 2", ROLLED,
                      component="deployment-controller"))
    ready = []
    for i in range(6):
        name = f"{APP}-{old_hash}-{k.suffix(APP, 'old', str(i))}"
        started = NOW - timedelta(days=4) + timedelta(seconds=40 * i)
        ip = f"10.12.{i % 4}.{30 + i * 3}"
        story.add(k.pod(old_rs, name, nodes[i % 4], started, {APP: k.running(
            started + timedelta(seconds=3))}, ip=ip))
        ready.append((ip, name, nodes[i % 4]))
        _server_logs(story, name, started, old=True)
    not_ready = []
    for i in range(2):
        name = f"{APP}-{new_hash}-{k.suffix(APP, 'new', str(i))}"
        created = ROLLED + timedelta(seconds=2 * i)
        ip = f"10.12.{(i + 1) % 4}.{110 + i}"
        host = nodes[(i + 1) % 4]
        story.add(k.pod(new_rs, name, host, created, {APP: k.running(
            created + timedelta(seconds=4), ready=False)}, ip=ip))
        not_ready.append((ip, name, host))
        story.add(k.event(NS, "Pod", name, "Scheduled",
                          f"Successfully assigned {NS}/{name} to {host}", created,
                          component="default-scheduler"),
                  k.event(NS, "Pod", name, "Pulled", f'Successfully pulled image "{NEW}" in '
                          "2.881s (2.881s including waiting). Image size: 18222931 bytes.",
                          created + timedelta(seconds=3), host=host),
                  k.event(NS, "Pod", name, "Started", f"Started container {APP}",
                          created + timedelta(seconds=4), host=host),
                  k.event(NS, "Pod", name, "Unhealthy", PROBE_FAILURE,
                          created + timedelta(seconds=10), NOW - timedelta(seconds=6 + 3 * i),
                          count=245 - i, type_="Warning", host=host))
        _server_logs(story, name, created, old=False)
    story.add(k.service(NS, APP, made, {"app.kubernetes.io/name": APP},
                        [{"name": "grpc", "port": 50051, "targetPort": 50051,
                          "appProtocol": "kubernetes.io/h2c"}], "10.0.44.12"),
              k.endpoints(NS, APP, ready, not_ready, [{"name": "grpc", "port": 50051}]))
    _bystanders(story, made, nodes)
    _metrics(story, [name for _, name, _ in ready])
    return story


def _server_logs(story: Story, pod: str, started: datetime, *, old: bool) -> None:
    rng = story.rng
    version = "4.18.3" if old else "5.0.0"
    start = max(started + timedelta(seconds=3), NOW - timedelta(hours=2))
    services = ('["grpc.health.v1.Health", "quarry.lobby.v2.LobbyService", '
                '"quarry.lobby.v2.PartyService"]' if old else
                '["quarry.lobby.v2.LobbyService", "quarry.lobby.v2.PartyService", '
                '"grpc.reflection.v1.ServerReflection"]')

    def at(moment: datetime) -> str:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{rng.randint(0, 999999):06d}Z"

    lines = [f"{at(start)}  INFO lobby_service: starting lobby-service version={version}",
             f"{at(start)}  INFO lobby_service::config: loaded config region=eu-west shards=48",
             f"{at(start + timedelta(milliseconds=200))}  INFO lobby_service::redis: connected "
             "url=redis://lobby-cache.matchmaking:6379 pool_size=32",
             f"{at(start + timedelta(milliseconds=300))}  INFO lobby_service::server: serving "
             f"gRPC addr=0.0.0.0:50051 services={services}"]
    if not old:
        lines.insert(1, f"{at(start)}  INFO quarry_rpc::router: building router "
                        "(quarry-rpc 0.9.2, tower 0.5)")
    moment = start + timedelta(seconds=20)
    while moment < NOW:
        if old:
            lines.append(f"{at(moment)}  INFO lobby_service::matcher: party matched "
                         f"lobby={rng.randint(10**5, 10**6)} players={rng.randint(2, 10)} "
                         f"wait_ms={rng.randint(300, 9000)}")
            if rng.random() < 0.03:
                lines.append(f"{at(moment)}  WARN lobby_service::redis: slow command "
                             f"cmd=ZRANGEBYSCORE took_ms={rng.randint(60, 210)}")
            moment += timedelta(seconds=rng.randint(5, 40))
        else:
            lines.append(f"{at(moment)} DEBUG lobby_service::shards: shard lease renewed "
                         f"shard={rng.randint(0, 47)} holder={pod}")
            moment += timedelta(seconds=rng.randint(30, 90))
    story.log(NS, pod, APP, lines)
    story.mirror(NS, pod, APP, APP, every=2)


def _bystanders(story: Story, made: datetime, nodes: list[str]) -> None:
    stats = k.healthy_deployment(
        NS, "season-stats", "quarrygames.azurecr.io/backend/season-stats:1.3.0", made,
        NOW - timedelta(minutes=52), nodes[2:], ["10.12.2.201", "10.12.3.90", "10.12.2.14"],
        replicas=3, cpu="4", memory="8Gi", port=8080, revision=7)
    story.add(*stats)
    late = stats[4]["metadata"]["name"]
    story.add(k.event(NS, "Pod", late, "FailedScheduling",
                      "0/4 nodes are available: 4 Insufficient cpu. preemption: 0/4 nodes are "
                      "available: 4 No preemption victims found for incoming pod.",
                      NOW - timedelta(minutes=52), NOW - timedelta(minutes=51), count=3,
                      type_="Warning", component="default-scheduler"),
              k.event(NS, "Pod", late, "Scheduled",
                      f"Successfully assigned {NS}/{late} to {nodes[2]}",
                      NOW - timedelta(minutes=50), component="default-scheduler"))
    story.add(*k.healthy_deployment(
        NS, "lobby-cache", "docker.io/bitnami/redis:7.4.1", made, NOW - timedelta(days=6),
        nodes[:2], ["10.12.0.9", "10.12.1.9"], replicas=2, cpu="500m", memory="2Gi",
        port=6379, revision=3, probe_path=None))
    story.add(*k.healthy_deployment(
        "telemetry", "otel-gateway", "otel/opentelemetry-collector-contrib:0.112.0", made,
        NOW - timedelta(days=2), nodes, ["10.12.0.77", "10.12.3.77"], replicas=2,
        cpu="200m", memory="512Mi", port=13133, revision=15))


def _metrics(story: Story, pods: list[str]) -> None:
    for pod in pods:
        handled = 0.0
        for at in story.steps(NOW - timedelta(hours=3), NOW, timedelta(minutes=1)):
            handled += 60 * 55 * story.rng.uniform(0.85, 1.15)
            story.sample("grpc_server_handled_total", "counter",
                         {"namespace": NS, "pod": pod, "grpc_service":
                          "quarry.lobby.v2.LobbyService", "grpc_method": "JoinQueue",
                          "grpc_code": "OK"}, at, round(handled))
