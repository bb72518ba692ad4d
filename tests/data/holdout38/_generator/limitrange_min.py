"""Hollis Insurance: a tiny sidecar under the namespace's LimitRange minimum.

Release 2.9.0 of pricing-engine adds a cloud-sql-proxy sidecar sized at 20m CPU. The quotes
namespace has a LimitRange with a per-container *minimum* of 100m, so every pod of the new
ReplicaSet is refused at admission: the ReplicaSet has no pod at all, the old pods keep
serving 2.8.0, and Argo says "synced". The reporter's quota warning is another namespace.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout38._generator import kube as k
from tests.data.holdout38._generator.story import Story

NOW = datetime(2026, 11, 26, 10, 50, 0)
NS = "quotes"
APP = "pricing-engine"
REPO = "us-docker.pkg.dev/hollis-prod/quotes/pricing-engine"
ROLLED = NOW - timedelta(hours=2, minutes=20)
PROXY = "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1"


def build() -> Story:
    new_hash = k.pod_hash(NS, APP, "15")
    refusal = (f'Error creating: pods "{APP}-{new_hash}-" is forbidden: minimum cpu usage '
               "per Container is 100m, but request is 20m")
    story = Story(
        id="pricing-engine-sidecar-below-limitrange-min",
        title="pricing-engine release did not go out",
        now=NOW,
        report="""
pricing-engine release from this morning (2.9.0) didn't go out? argo shows synced but
/version still says 2.8.0 and the new rating rules aren't live, underwriting is asking.
also saw a quota warning in quotes-batch yesterday, could that be related?
""",
        truth={"category": "quota_exceeded",
               "culprit": {"kind": "Deployment", "namespace": NS, "name": APP},
               "evidence": [refusal, "min cpu 100m"],
               "fix": "Give the cloud-sql-proxy sidecar a CPU request of at least 100m (the "
                      "quotes LimitRange minimum), or lower the minimum in "
                      "quotes-container-bounds; the quotes-batch quota is unrelated."})
    made = NOW - timedelta(days=365)
    story.add(k.namespace(NS, made, {"team": "pricing"}), k.namespace("default", made),
              k.namespace("quotes-batch", made, {"team": "pricing"}))
    nodes = [f"gke-hollis-prod-default-5b2e9c10-{s}" for s in ("2wqx", "7hkl", "m3np")]
    for i, name in enumerate(nodes):
        story.add(k.node(name, NOW - timedelta(days=8, hours=i), cpu="3920m", memory="13Gi",
                         kubelet="v1.30.5-gke.1014001", heartbeat=NOW - timedelta(seconds=25),
                         labels={"cloud.google.com/gke-nodepool": "default",
                                 "topology.kubernetes.io/zone": f"us-central1-{'abc'[i]}"}))
    story.add({"apiVersion": "v1", "kind": "LimitRange",
               "metadata": {"name": "quotes-container-bounds", "namespace": NS,
                            "creationTimestamp": k.ts(made + timedelta(days=30)),
                            "annotations": {"hollis.io/owner": "platform-finops"}},
               "spec": {"limits": [{"type": "Container",
                                    "default": {"cpu": "500m", "memory": "512Mi"},
                                    "defaultRequest": {"cpu": "250m", "memory": "256Mi"},
                                    "max": {"cpu": "4", "memory": "8Gi"},
                                    "min": {"cpu": "100m", "memory": "64Mi"}}]}})

    def app(version: str) -> dict[str, object]:
        return k.container(APP, f"{REPO}:{version}", cpu="750m", memory="1536Mi",
                           cpu_limit="1500m", memory_limit="1536Mi",
                           ports=[{"containerPort": 8000, "name": "http"}],
                           env=[{"name": "GUNICORN_CMD_ARGS", "value": "--workers=4 "
                                 "--threads=2 --timeout=30"},
                                {"name": "RATING_RULES_VERSION",
                                 "value": "2026.11" if version >= "2.9" else "2026.10"},
                                {"name": "DB_HOST", "value": "127.0.0.1" if version >= "2.9"
                                 else "10.91.0.3"}],
                           readinessProbe=k.http_probe("/healthz", 8000),
                           livenessProbe=k.http_probe("/healthz", 8000, initialDelaySeconds=20))

    proxy = k.container("cloud-sql-proxy", PROXY, cpu="20m", memory="64Mi",
                        memory_limit="128Mi",
                        args=["--structured-logs", "--port=5432", "--auto-iam-authn",
                              "hollis-prod:us-central1:quotes-pg"],
                        securityContext={"runAsNonRoot": True})
    new_containers, old_containers = [app("2.9.0"), proxy], [app("2.8.0")]
    deploy = k.workload(
        "Deployment", NS, APP, made, new_containers, replicas=4,
        annotations={"deployment.kubernetes.io/revision": "15",
                     "argocd.argoproj.io/tracking-id": "pricing:apps/Deployment:quotes/"
                                                       "pricing-engine"},
        status=k.deployment_status(
            4, 4, 0, at=ROLLED, available=4,
            progressing={"type": "Progressing", "status": "False",
                         "reason": "ProgressDeadlineExceeded",
                         "message": f'ReplicaSet "{APP}-{new_hash}" has timed out progressing.',
                         "lastUpdateTime": k.ts(ROLLED + timedelta(minutes=10)),
                         "lastTransitionTime": k.ts(ROLLED + timedelta(minutes=10))},
            replica_failure={"type": "ReplicaFailure", "status": "True",
                             "reason": "FailedCreate", "message": refusal[len("Error creating: "):],
                             "lastUpdateTime": k.ts(ROLLED),
                             "lastTransitionTime": k.ts(ROLLED)}))
    old_hash = k.pod_hash(NS, APP, "14")
    new_rs = k.replicaset(deploy, new_hash, 15, ROLLED, new_containers, replicas=1, ready=0,
                          conditions=[{"type": "ReplicaFailure", "status": "True",
                                       "reason": "FailedCreate",
                                       "message": refusal[len("Error creating: "):],
                                       "lastTransitionTime": k.ts(ROLLED)}])
    new_rs["status"].update({"replicas": 0, "fullyLabeledReplicas": 0})
    old_rs = k.replicaset(deploy, old_hash, 14, NOW - timedelta(days=6, hours=2),
                          old_containers, replicas=4, ready=4)
    story.add(deploy, new_rs, old_rs)
    story.add(k.event(NS, "ReplicaSet", f"{APP}-{new_hash}", "FailedCreate", refusal,
                      ROLLED, NOW - timedelta(minutes=4), count=23, type_="Warning",
                      component="replicaset-controller"))
    addresses = []
    for i in range(4):
        name = f"{APP}-{old_hash}-{k.suffix(APP, str(i))}"
        started = NOW - timedelta(days=6, hours=2) + timedelta(seconds=35 * i)
        ip = f"10.8.{i % 3}.{70 + i}"
        story.add(k.pod(old_rs, name, nodes[i % 3], started, {APP: k.running(
            started + timedelta(seconds=5))}, ip=ip))
        addresses.append((ip, name, nodes[i % 3]))
        _gunicorn_logs(story, name)
    story.add(k.service(NS, APP, made, {"app.kubernetes.io/name": APP},
                        [{"name": "http", "port": 80, "targetPort": 8000}], "10.12.4.211"),
              k.endpoints(NS, APP, addresses, [], [{"name": "http", "port": 8000}]))
    _bystanders(story, made, nodes)
    return story


def _gunicorn_logs(story: Story, pod: str) -> None:
    rng = story.rng
    moment = NOW - timedelta(hours=4)
    lines = []
    while moment < NOW:
        stamp = moment.strftime("%Y-%m-%d %H:%M:%S +0000")
        path = rng.choice(["/v1/quote", "/v1/quote", "/v1/quote", "/v1/reprice",
                           "/version", "/v1/rules/current"])
        code = 200 if rng.random() > 0.004 else 422
        lines.append(f'10.8.{rng.randint(0, 2)}.{rng.randint(2, 250)} - - [{stamp}] '
                     f'"POST {path} HTTP/1.1" {code} {rng.randint(300, 4200)} "-" '
                     f'"quotes-web/6.2" {rng.randint(30, 420)}ms')
        if rng.random() < 0.02:
            lines.append(f"[{stamp}] [{rng.randint(7, 12)}] [WARNING] pricing.rules: "
                         "rule set 2026.10 is older than 30 days")
        moment += timedelta(seconds=rng.randint(8, 40))
    story.log(NS, pod, APP, lines)
    for line in lines[::3]:
        stamp = line.split("[", 1)[1].split("]", 1)[0]
        at = datetime.strptime(stamp[:19], "%Y-%m-%d %H:%M:%S")
        level = "warn" if "WARNING" in line else "info"
        status = int(line.split('" ', 1)[1].split(" ", 1)[0]) if '" ' in line else None
        fields = {"http__response__status_code": status} if status else {}
        story.doc(at, line, level=level, service=APP, ns=NS, pod=pod, container=APP,
                  **fields)


def _bystanders(story: Story, made: datetime, nodes: list[str]) -> None:
    story.add({"apiVersion": "v1", "kind": "ResourceQuota",
               "metadata": {"name": "batch-compute", "namespace": "quotes-batch",
                            "creationTimestamp": k.ts(made)},
               "spec": {"hard": {"requests.cpu": "12", "requests.memory": "48Gi",
                                 "pods": "40"}},
               "status": {"hard": {"requests.cpu": "12", "requests.memory": "48Gi",
                                   "pods": "40"},
                          "used": {"requests.cpu": "11500m", "requests.memory": "30Gi",
                                   "pods": "23"}}})
    story.add(*k.healthy_deployment(
        "quotes-batch", "renewal-repricer", f"{REPO.rsplit('/', 1)[0]}/renewal-repricer:1.12.0",
        made, NOW - timedelta(days=2), nodes, ["10.8.0.141", "10.8.1.141", "10.8.2.141"],
        replicas=3, cpu="3", memory="6Gi", port=8080, revision=33))
    story.add(*k.healthy_deployment(
        NS, "quote-web", f"{REPO.rsplit('/', 1)[0]}/quote-web:6.2.0", made,
        NOW - timedelta(days=1, hours=5), nodes, ["10.8.0.22", "10.8.1.23", "10.8.2.24"],
        replicas=3, cpu="200m", memory="256Mi", port=3000, revision=61))
    story.add(k.event("quotes-batch", "Deployment", "renewal-repricer", "ScalingReplicaSet",
                      "Scaled down replica set renewal-repricer-5d8f7b9c4 to 3 from 4",
                      NOW - timedelta(minutes=38), component="deployment-controller"))
