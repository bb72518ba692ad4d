"""A baseline default-deny NetworkPolicy cuts the API server off a failing-closed webhook."""

from __future__ import annotations

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
)

SID = "ledger-rollout-stuck-webhook"
NOW = "2026-10-14T09:40:00Z"
HOOK = "pod-policy.guardrails.example.io"
HOOK_URL = "https://admission-guard.guardrails.svc:443/validate/pods?timeout=10s"
DENY_AT = 41.0  # minutes before now


def _fail(what: str) -> str:
    return (f'{what}: Internal error occurred: failed calling webhook "{HOOK}": failed to call '
            f'webhook: Post "{HOOK_URL}": context deadline exceeded')


def _netpol(st: Story, ns: str, name: str, created_min: float, spec: dict[str, object]) -> None:
    st.add({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": meta(st, "NetworkPolicy", name, ns, created=st.ts(created_min),
                             labels={"app.kubernetes.io/managed-by": "argocd",
                                     "platform.example.io/baseline": "v3"},
                             annotations={"argocd.argoproj.io/tracking-id":
                                          f"ns-baseline-{ns}:networking.k8s.io/NetworkPolicy:"
                                          f"{ns}/{name}"}),
            "spec": spec})


def build(root: Path) -> None:
    st = Story(SID, NOW, 5101)
    zones = ["eu-west-1a", "eu-west-1b", "eu-west-1c"]
    nodes = [f"ip-10-0-{a}-{b}.eu-west-1.compute.internal"
             for a, b in [(11, 34), (27, 180), (40, 9), (13, 222), (29, 71)]]
    for i, n in enumerate(nodes):
        st.add(node(st, n, zone=zones[i % 3], age_days=12 + i))
    platform(st, nodes)
    enforce = {"guardrails.example.io/enforce": "true"}
    for ns, lab in [("guardrails", {}), ("payments", enforce), ("shop", enforce),
                    ("batch", enforce), ("analytics", {})]:
        st.add(namespace(st, ns, labels=lab))

    # the webhook server: healthy, but nobody reaches it after the baseline landed
    guard = deployment(st, "guardrails", "admission-guard",
                       [ctr("webhook", "ghcr.io/example/admission-guard:1.9.2", port=9443,
                            cpu="100m", mem="128Mi",
                            readiness=http_probe("/readyz", 8080),
                            liveness=http_probe("/healthz", 8080, 20, 3))],
                       nodes[:2], age_days=210, revision=9, rollout_min=9 * 1440)
    service(st, "guardrails", "admission-guard", {"app.kubernetes.io/name": "admission-guard"},
            443, 9443, pods=guard.pods, port_name="https")
    _netpol(st, "guardrails", "default-deny-ingress", DENY_AT,
            {"podSelector": {}, "policyTypes": ["Ingress"]})
    _netpol(st, "guardrails", "allow-same-namespace", DENY_AT,
            {"podSelector": {}, "policyTypes": ["Ingress"],
             "ingress": [{"from": [{"podSelector": {}}]}]})
    _netpol(st, "guardrails", "allow-prometheus-scrape", DENY_AT,
            {"podSelector": {}, "policyTypes": ["Ingress"],
             "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {
                 "kubernetes.io/metadata.name": "monitoring"}}}],
                 "ports": [{"protocol": "TCP", "port": 8080}]}]})
    # the same baseline in shop, a month old and harmless there
    _netpol(st, "shop", "default-deny-ingress", 31 * 1440,
            {"podSelector": {}, "policyTypes": ["Ingress"]})
    _netpol(st, "shop", "allow-from-ingress-nginx", 31 * 1440,
            {"podSelector": {"matchLabels": {"app.kubernetes.io/name": "storefront"}},
             "policyTypes": ["Ingress"],
             "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {
                 "kubernetes.io/metadata.name": "ingress-nginx"}}}],
                 "ports": [{"protocol": "TCP", "port": 8080}]}]})

    def guard_line(r: object) -> tuple[str, str]:
        import random as _r
        assert isinstance(r, _r.Random)
        ns = r.choice(["payments", "shop", "batch", "batch", "shop"])
        return "info", (f"admission review allowed kind=Pod namespace={ns} operation=CREATE "
                        f"uid={r.getrandbits(64):016x} policies=42 latency={r.randint(2, 9)}ms")

    st.chatter(guard.pods, guard_line, every_s=75, start_min=60, end_min=DENY_AT + 0.5)
    st.chatter(guard.pods, lambda r: ("info", "policy cache in sync policies=42 revision=118"),
               every_s=300, start_min=60)
    st.chatter(guard.pods[:1], lambda r: (
        "warn", "serving certificate expires in 29 days; cert-manager will rotate it"),
        every_s=1800, start_min=60)

    # ledger-api: revision 18 (2.15.0) never got a pod, revision 17 keeps serving
    ledger = deployment(st, "payments", "ledger-api",
                        [ctr("ledger-api", "ghcr.io/example/ledger-api:2.14.0", cpu="300m",
                             mem="384Mi", readiness=http_probe("/ready"))],
                        nodes[1:4], age_days=500, revision=17, rollout_min=6 * 1440)
    dep, old_rs = ledger.objects[0], ledger.objects[1]
    new_h = st.suffix(9) + st.suffix(1)
    new_rs_name = f"ledger-api-{new_h}"
    dep["metadata"]["annotations"]["deployment.kubernetes.io/revision"] = "18"
    dep["metadata"]["generation"] = 19
    tmpl = dep["spec"]["template"]
    new_ctr = dict(tmpl["spec"]["containers"][0])
    new_ctr["image"] = "ghcr.io/example/ledger-api:2.15.0"
    tmpl["spec"]["containers"] = [new_ctr]
    dep["status"].update({"observedGeneration": 19, "updatedReplicas": 0,
                          "replicas": 3})
    dep["status"]["conditions"] = [
        dep["status"]["conditions"][0],
        {"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated",
         "message": f'ReplicaSet "{new_rs_name}" is progressing.',
         "lastUpdateTime": st.ts(24), "lastTransitionTime": st.ts(24)},
        {"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
         "message": _fail("").split(": ", 1)[1],
         "lastUpdateTime": st.ts(24), "lastTransitionTime": st.ts(24)}]
    lab = dict(old_rs["metadata"]["labels"])
    lab["pod-template-hash"] = new_h
    st.add({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": meta(st, "ReplicaSet", new_rs_name, "payments", created=st.ts(24),
                             labels=lab,
                             annotations={"deployment.kubernetes.io/revision": "18",
                                          "deployment.kubernetes.io/desired-replicas": "3"},
                             owner=("apps/v1", "Deployment", "ledger-api")),
            "spec": {"replicas": 1, "selector": {"matchLabels": {
                "app.kubernetes.io/name": "ledger-api", "pod-template-hash": new_h}},
                "template": {"metadata": {"labels": lab}, "spec": tmpl["spec"]}},
            "status": {"replicas": 0, "observedGeneration": 1, "conditions": [
                {"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
                 "message": _fail("").split(": ", 1)[1], "lastTransitionTime": st.ts(24)}]}})
    event(st, "payments", "Deployment", "ledger-api", "ScalingReplicaSet",
          f"Scaled up replica set {new_rs_name} to 1", first_min=24.2,
          component="deployment-controller", api="apps/v1")
    event(st, "payments", "ReplicaSet", new_rs_name, "FailedCreate", _fail("Error creating"),
          type_="Warning", count=14, first_min=24, last_min=1.5,
          component="replicaset-controller", api="apps/v1")
    service(st, "payments", "ledger-api", {"app.kubernetes.io/name": "ledger-api"}, 80, 8080,
            pods=ledger.pods)
    st.chatter(ledger.pods, access(["/v1/ledger/entries", "+/v1/ledger/entries",
                                    "/v1/balances/acct", "/ready"], "ledger-api", 25),
               every_s=40)
    st.chatter(ledger.pods[:1], lambda r: (
        "warn", "slow query: SELECT ... FROM entries WHERE account_id=$1 took 1203ms"),
        every_s=900)

    # shop: the HPA wants one more storefront, also refused
    sf_states = [PState(containers=[CState(restarts=1, started_min=2 * 1440 + 17,
                                           last=("OOMKilled", 137, 4 * 1440, 2 * 1440 + 17))]),
                 PState(), PState(), PState()]
    sf = deployment(st, "shop", "storefront",
                    [ctr("storefront", "ghcr.io/example/storefront:5.2.7", cpu="500m",
                         mem="512Mi", mem_limit="768Mi", readiness=http_probe("/healthz"))],
                    nodes, replicas=4, states=sf_states, age_days=700, revision=63,
                    rollout_min=4 * 1440)
    service(st, "shop", "storefront", {"app.kubernetes.io/name": "storefront"}, 80, 8080,
            pods=sf.pods)
    sf_rs = sf.objects[1]["metadata"]["name"]
    event(st, "shop", "ReplicaSet", sf_rs, "FailedCreate", _fail("Error creating"),
          type_="Warning", count=9, first_min=33, last_min=3, component="replicaset-controller",
          api="apps/v1")
    st.add({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": meta(st, "HorizontalPodAutoscaler", "storefront", "shop",
                             created=st.ts(300 * 1440)),
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                        "name": "storefront"},
                     "minReplicas": 3, "maxReplicas": 12,
                     "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                         "type": "Utilization", "averageUtilization": 65}}}]},
            "status": {"currentReplicas": 4, "desiredReplicas": 5,
                       "lastScaleTime": st.ts(33),
                       "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu",
                                           "current": {"averageUtilization": 74,
                                                       "averageValue": "371m"}}}],
                       "conditions": [
                           {"type": "AbleToScale", "status": "True", "reason": "SucceededRescale",
                            "message": "the HPA controller was able to update the target scale "
                                       "to 5", "lastTransitionTime": st.ts(33)},
                           {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound",
                            "message": "the HPA was able to successfully calculate a replica "
                                       "count from cpu resource utilization (percentage of "
                                       "request)", "lastTransitionTime": st.ts(90 * 1440)},
                           {"type": "ScalingLimited", "status": "False",
                            "reason": "DesiredWithinRange",
                            "message": "the desired count is within the acceptable range",
                            "lastTransitionTime": st.ts(5 * 1440)}]}})
    st.chatter(sf.pods, access(["/", "/product/8812", "/cart", "+/cart/items", "/healthz",
                                "/search?q=boots"], "storefront", 60), every_s=30)
    st.chatter(sf.pods, lambda r: (
        "warn", f"recommendations call timed out after 800ms, serving fallback "
                f"(widget=home_{r.randint(1, 4)})"), every_s=400)

    # batch: the 09:15 settlement report never got its pod
    st.add({"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": meta(st, "CronJob", "settlement-report", "batch",
                             created=st.ts(400 * 1440)),
            "spec": {"schedule": "15 * * * *", "concurrencyPolicy": "Forbid",
                     "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1,
                     "jobTemplate": {"spec": {"backoffLimit": 2, "template": {"spec": {
                         "restartPolicy": "Never", "containers": [
                             ctr("report", "ghcr.io/example/settlement-report:0.31.0",
                                 port=None)]}}}}},
            "status": {"lastScheduleTime": st.ts(25),
                       "lastSuccessfulTime": st.ts(80), "active": [
                           {"kind": "Job", "namespace": "batch",
                            "name": "settlement-report-29340315", "apiVersion": "batch/v1"}]}})
    st.add({"apiVersion": "batch/v1", "kind": "Job",
            "metadata": meta(st, "Job", "settlement-report-29340315", "batch",
                             created=st.ts(25),
                             owner=("batch/v1", "CronJob", "settlement-report")),
            "spec": {"backoffLimit": 2, "completions": 1, "parallelism": 1,
                     "template": {"spec": {"restartPolicy": "Never", "containers": [
                         ctr("report", "ghcr.io/example/settlement-report:0.31.0",
                             port=None)]}}},
            "status": {"active": 0, "startTime": st.ts(25), "ready": 0,
                       "uncountedTerminatedPods": {}}})
    event(st, "batch", "Job", "settlement-report-29340315", "FailedCreate",
          _fail("Error creating"), type_="Warning", count=6, first_min=25, last_min=4,
          component="job-controller", api="batch/v1")
    event(st, "batch", "CronJob", "settlement-report", "SuccessfulCreate",
          "Created job settlement-report-29340315", first_min=25, component="cronjob-controller",
          api="batch/v1")

    # analytics: a long-Pending pod that has nothing to do with it
    spark = deployment(st, "analytics", "spark-history",
                       [ctr("spark-history", "apache/spark:3.5.3", port=18080, cpu="500m",
                            mem="6Gi", mem_limit="6Gi")],
                       nodes[:1], replicas=1, age_days=60, revision=2, rollout_min=2 * 1440,
                       states=[PState(phase="Pending", scheduled=False,
                                      unschedulable="0/5 nodes are available: 5 Insufficient "
                                                    "memory. preemption: 0/5 nodes are "
                                                    "available: 5 No preemption victims found "
                                                    "for incoming pod.")])
    event(st, "analytics", "Pod", spark.pods[0].name, "FailedScheduling",
          "0/5 nodes are available: 5 Insufficient memory. preemption: 0/5 nodes are "
          "available: 5 No preemption victims found for incoming pod.", type_="Warning",
          count=611, first_min=2 * 1440, last_min=6, component="default-scheduler")

    # metrics
    for p in guard.pods:
        st.pod_metrics(p, cpu=0.01, mem_mib=70)
        for code in ("allowed", "denied"):
            rate = 0.013 if code == "allowed" else 0.0004
            st.counter("guard_admission_requests_total", "Admission reviews served.",
                       {"namespace": "guardrails", "pod": p.name, "result": code},
                       lambda m, r=rate: r if m > DENY_AT else 0.0, start=4000.0)
    for p in ledger.pods:
        st.pod_metrics(p, cpu=0.12, mem_mib=290)
    for i, p in enumerate(sf.pods):
        st.pod_metrics(p, cpu=0.37, mem_mib=540, restarts=lambda m, i=i: 1 if i == 0 else 0)
    st.http("payments", "ledger-api", 9.0, lambda m: 0.001)
    st.http("shop", "storefront", 31.0, lambda m: 0.002)
    st.counter("apiserver_admission_webhook_request_total",
               "Admission webhook request total, identified by name and broken out for each "
               "admission type (validating or mutating) and operation.",
               {"name": HOOK, "type": "validating", "operation": "CREATE", "code": "200",
                "rejected": "false"}, lambda m: 0.027 if m > DENY_AT else 0.0, start=91000.0)
    st.counter("apiserver_admission_webhook_request_total",
               "Admission webhook request total, identified by name and broken out for each "
               "admission type (validating or mutating) and operation.",
               {"name": HOOK, "type": "validating", "operation": "CREATE", "code": "0",
                "rejected": "true"}, lambda m: 0.0 if m > DENY_AT else 0.02, start=3.0)
    st.gauge("kube_deployment_status_replicas_updated",
             "The number of updated replicas per deployment.",
             {"namespace": "payments", "deployment": "ledger-api"},
             lambda m: 0 if m < 24 else 3)
    st.gauge("kube_deployment_spec_replicas", "Number of desired pods for a deployment.",
             {"namespace": "payments", "deployment": "ledger-api"}, lambda m: 3)
    fix_host_ips(st.objects)
    st.write(root, "ledger-api rollout stuck, no new pods",
             "ledger-api deploy (2.15.0) has been stuck for ~20 min, the new replicaset never "
             "gets a pod and\nthe old ones are still serving. Did the new image break "
             "something? Also the 09:15\nsettlement-report job never ran. Thinking of rolling "
             "ledger-api back to 2.14.0, ok?\n",
             {"category": "network",
              "culprit": {"kind": "NetworkPolicy", "namespace": "guardrails",
                          "name": "default-deny-ingress"},
              "evidence": ["failed calling webhook", "context deadline exceeded",
                           "default-deny-ingress"],
              "fix": "Allow ingress to admission-guard's port 9443 from the API server (the "
                     "control-plane addresses) in guardrails, or drop the baseline "
                     "default-deny-ingress there; no rollback of ledger-api is needed."})
