"""A rollout stuck half-way: the new tag of ledger-api is on Docker Hub and the nodes pull
anonymously. One node (behind a NAT address with pulls left) got the image and its new pod
serves fine; the other new pods get 429 Too Many Requests and sit in ImagePullBackOff, so
the Deployment cannot progress while the old pods keep serving.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from tests.data.holdout29._generator.common import (
    Scenario,
    cond,
    container,
    deployment,
    event,
    healthy,
    http_probe,
    iso,
    namespace,
    node,
    pod,
    pod_ip,
    replicaset,
    resources,
    rs_hash,
    running,
    service,
    suffix,
    template,
    waiting,
)

NOW = "2026-03-31T11:05:00Z"
NS = "payments"
APP = "ledger-api"
OLD_IMAGE = "docker.io/northwindpay/ledger-api:2.13.4"
NEW_IMAGE = "docker.io/northwindpay/ledger-api:2.14.0"
DIGEST = "sha256:5c1e0f8a3b7d29e4c6a1f0b8d3e7c2a9f4b6d1e8c3a7f2b9d4e6c1a8f3b7d2e9"


def pull_error(image: str) -> str:
    repo = image.split("/", 1)[1].rsplit(":", 1)[0]
    return (f'Failed to pull image "{image}": failed to pull and unpack image "{image}": '
            "failed to copy: httpReadSeeker: failed open: unexpected status code "
            f"https://registry-1.docker.io/v2/{repo}/manifests/{DIGEST}: 429 Too Many "
            "Requests - Server message: toomanyrequests: You have reached your pull rate "
            "limit. You may increase the limit by authenticating and upgrading: "
            "https://www.docker.com/increase-rate-limit")


def build() -> Path:
    sc = Scenario("ledger-rollout-hanging", NOW)
    nodes = [f"ip-172-31-{a}.eu-north-1.compute.internal"
             for a in ("2-40", "18-9", "33-150", "4-77", "21-203", "40-18")]
    for i, name in enumerate(nodes):
        sc.add(node(name, sc.ago(days=3 + i), "apps", "4", "16073320Ki", sc.ago(seconds=10),
                    zone=f"eu-north-1{'abc'[i % 3]}"))
    for ns in (NS, "ops", "web"):
        sc.add(namespace(ns, sc.ago(days=700)))
    started = sc.ago(minutes=46)
    labels = {"app": APP}

    def tmpl_for(image: str) -> dict:
        return template(labels, [container(
            APP, image, resources("500m", "768Mi", "1", "1Gi"), 8080,
            {"LEDGER_DB_HOST": "ledger-db.payments.svc", "OTEL_SERVICE_NAME": APP},
            readinessProbe=http_probe("/health/ready"),
            livenessProbe=http_probe("/health/live", period=20, delay=20))])

    old_t, new_t = tmpl_for(OLD_IMAGE), tmpl_for(NEW_IMAGE)
    ho, hn = rs_hash("ledger31"), rs_hash("ledger32x")
    sc.add(deployment(NS, APP, sc.ago(days=500), new_t, 6, 32, status={
        "observedGeneration": 44, "replicas": 8, "updatedReplicas": 4, "readyReplicas": 5,
        "availableReplicas": 5, "unavailableReplicas": 3,
        "conditions": [cond("Available", "True", "MinimumReplicasAvailable",
                            "Deployment has minimum availability.", sc.ago(days=6)),
                       cond("Progressing", "False", "ProgressDeadlineExceeded",
                            f'ReplicaSet "{APP}-{hn}" has timed out progressing.',
                            sc.ago(minutes=34))]},
        strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2,
                                                             "maxUnavailable": 1}}))
    sc.add(replicaset(NS, APP, ho, sc.ago(days=6), old_t, 4, 31))
    sc.add(replicaset(NS, APP, hn, started, new_t, 4, 32, ready=1))
    old_pods = []
    for i in range(4):
        p = f"{APP}-{ho}-{suffix('lo' + str(i))}"
        at = sc.ago(days=6) + timedelta(seconds=40 * i)
        sc.add(pod(NS, p, at, old_t, nodes[i], [{"name": APP, **running(
            at + timedelta(seconds=30))}], ("ReplicaSet", f"{APP}-{ho}"), ip=pod_ip(p),
            extra_labels={"pod-template-hash": ho}))
        old_pods.append(p)
    new_pods = []
    for i in range(4):
        p = f"{APP}-{hn}-{suffix('ln' + str(i))}"
        at = started + timedelta(seconds=3 if i < 2 else 75)
        host = nodes[(i + 2) % 6] if i else nodes[1]
        new_pods.append(p)
        if i == 0:
            sc.add(pod(NS, p, at, new_t, host, [{"name": APP, **running(
                at + timedelta(seconds=41))}], ("ReplicaSet", f"{APP}-{hn}"), ip=pod_ip(p),
                extra_labels={"pod-template-hash": hn}))
            sc.add(event(NS, "Pod", p, "Pulled", f'Successfully pulled image "{NEW_IMAGE}" in '
                         "31.872s (31.872s including waiting)", at + timedelta(seconds=36),
                         host=host, field=f"spec.containers{{{APP}}}"))
            sc.add(event(NS, "Pod", p, "Started", f"Started container {APP}",
                         at + timedelta(seconds=41), host=host,
                         field=f"spec.containers{{{APP}}}"))
            continue
        sc.add(pod(NS, p, at, new_t, host, [{"name": APP, **waiting(
            "ImagePullBackOff", f'Back-off pulling image "{NEW_IMAGE}"')}],
            ("ReplicaSet", f"{APP}-{hn}"), ip=pod_ip(p), extra_labels={"pod-template-hash": hn}))
        field = f"spec.containers{{{APP}}}"
        sc.add(event(NS, "Pod", p, "Scheduled", f"Successfully assigned {NS}/{p} to {host}", at,
                     component="default-scheduler"))
        sc.add(event(NS, "Pod", p, "Pulling", f'Pulling image "{NEW_IMAGE}"',
                     at + timedelta(seconds=2), sc.ago(minutes=3 + i), count=9, host=host,
                     field=field))
        sc.add(event(NS, "Pod", p, "Failed", pull_error(NEW_IMAGE), at + timedelta(seconds=3),
                     sc.ago(minutes=3 + i), count=9, type_="Warning", host=host, field=field))
        sc.add(event(NS, "Pod", p, "Failed", "Error: ErrImagePull", at + timedelta(seconds=3),
                     sc.ago(minutes=3 + i), count=9, type_="Warning", host=host, field=field))
        sc.add(event(NS, "Pod", p, "BackOff", f'Back-off pulling image "{NEW_IMAGE}"',
                     at + timedelta(seconds=30), sc.ago(seconds=40 + 30 * i), count=187,
                     type_="Normal", host=host, field=field))
        sc.add(event(NS, "Pod", p, "Failed", "Error: ImagePullBackOff", at + timedelta(
            seconds=30), sc.ago(seconds=40 + 30 * i), count=187, type_="Warning", host=host,
            field=field))
    sc.add(event(NS, "Deployment", APP, "ScalingReplicaSet",
                 f"Scaled up replica set {APP}-{hn} to 2 from 0", started,
                 component="deployment-controller", api="apps/v1"))
    sc.add(event(NS, "Deployment", APP, "ScalingReplicaSet",
                 f"Scaled down replica set {APP}-{ho} to 5 from 6", started + timedelta(
                     seconds=1), component="deployment-controller", api="apps/v1"))
    sc.add(event(NS, "Deployment", APP, "ScalingReplicaSet",
                 f"Scaled up replica set {APP}-{hn} to 3 from 2", started + timedelta(
                     seconds=1), component="deployment-controller", api="apps/v1"))
    sc.add(event(NS, "Deployment", APP, "ScalingReplicaSet",
                 f"Scaled down replica set {APP}-{ho} to 4 from 5", started + timedelta(
                     seconds=74), component="deployment-controller", api="apps/v1"))
    sc.add(event(NS, "Deployment", APP, "ScalingReplicaSet",
                 f"Scaled up replica set {APP}-{hn} to 4 from 3", started + timedelta(
                     seconds=75), component="deployment-controller", api="apps/v1"))
    sc.add(service(NS, APP, sc.ago(days=500), labels))

    # Bystanders; one ops pod hit the same limit earlier and got through on a retry.
    healthy(sc, NS, "ledger-db-proxy", "registry.corp/payments/pgbouncer:1.22.1", 2, nodes,
            resources("100m", "128Mi", "500m", "256Mi"), sc.ago(days=300), revision=6,
            port=6432, probe=None, rollout_at=sc.ago(days=5))
    ops = healthy(sc, "ops", "kube-janitor", "docker.io/hjacobs/kube-janitor:23.7.0", 1,
                  nodes[3:], resources("10m", "64Mi", "100m", "128Mi"), sc.ago(days=200),
                  revision=3, port=None, probe=None, rollout_at=sc.ago(minutes=52))
    sc.add(event("ops", "Pod", ops[0], "Failed", pull_error(
        "docker.io/hjacobs/kube-janitor:23.7.0"), sc.ago(minutes=51), type_="Warning",
        host=nodes[3], field="spec.containers{kube-janitor}"))
    sc.add(event("ops", "Pod", ops[0], "Pulled", "Successfully pulled image \"docker.io/hjacobs/"
                 "kube-janitor:23.7.0\" in 1.204s (3m12.5s including waiting)",
                 sc.ago(minutes=48), host=nodes[3], field="spec.containers{kube-janitor}"))
    healthy(sc, "web", "portal", "registry.corp/web/portal:6.1.0", 3, nodes,
            resources("200m", "256Mi", "1", "512Mi"), sc.ago(days=400), revision=77,
            rollout_at=sc.ago(days=2))

    for k in range(0, 120):
        at = sc.ago(minutes=120 - k)
        pods = old_pods + ([new_pods[0]] if at > started + timedelta(seconds=45) else [])
        p = pods[k % len(pods)]
        version = "2.14.0" if p == new_pods[0] else "2.13.4"
        sc.log(at, APP, NS, p, "info", f"POST /v1/ledger/entries 201 {14 + k % 19}ms "
               f"version={version}", **{"http.response.status_code": 201})
        if k % 17 == 0:
            sc.log(at + timedelta(seconds=9), APP, NS, p, "warn",
                   "ledger-db pool: 18/20 connections in use, waiting 3ms")
    sc.log(started + timedelta(seconds=44), APP, NS, new_pods[0], "info",
           f"ledger-api 2.14.0 started in 2.8s, schema v57 ok ({iso(started)})")
    return sc.write({
        "title": "ledger-api 2.14.0 deploy hanging",
        "report": "the ledger-api 2.14.0 deploy has been hanging for 40+ min, argo shows it "
                  "Degraded with half the pods on the new version. is 2.14.0 broken? should "
                  "we roll back before the EOD batch?\n",
        "truth": {"category": "image_pull",
                  "culprit": {"kind": "Deployment", "namespace": NS, "name": APP},
                  "evidence": ["429 Too Many Requests", "toomanyrequests",
                               "ImagePullBackOff", "ProgressDeadlineExceeded"],
                  "fix": "Pull ledger-api with authenticated Docker Hub credentials "
                         "(imagePullSecrets) or mirror the image into the internal registry "
                         "/ a pull-through cache; 2.14.0 itself runs fine on the pod that got "
                         "the image."},
    })
