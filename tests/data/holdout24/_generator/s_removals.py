"""Home removals: the instant quote form fails. At 14:07 someone re-applied the quote-api
Service from the new "standard labels" kustomize base: its selector gained
`app.kubernetes.io/component: pricing`, but the quote-api pods carry `component: api`. The
Service selects no pod, its Endpoints are empty and quote-web gets connection refused from
the ClusterIP. quote-api itself is healthy (all pods Ready), it just receives no traffic.
The cause shows only in the Service and Endpoints objects; logs and metrics show symptoms.
Red herrings: volume-estimator (which the reporter blames) rolled out 4.7.0 at 13:26, its
cache-miss warnings; a few normal estimator timeouts before the onset; crew-scheduler's OOM
restart two days ago; a readiness blip in marketing."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gke_nodes, set_times
from tests.data.holdout2._generator.kit import cpu_seconds, requests
from tests.data.holdout3._generator.kit3 import (
    chatter,
    ksm_deployment,
    log_pod,
    namespaces,
    quiet,
    steady,
)
from tests.data.holdout4._generator.kit4 import ramp
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, http_probe, iso
from tests.scenario_tools.parts import readiness_blip

from .kit import Incident, rolled_neighbour

ID = "removal-quotes-unavailable"
NOW = datetime.fromisoformat("2028-05-13T14:52:00+00:00")
NS = "removals"
REG = "europe-west2-docker.pkg.dev/packwise-prod/apps"
EDIT = NOW - timedelta(minutes=44, seconds=19)  # 14:07:41


def build() -> Incident:
    s = Incident(
        id=ID, title="Moving quote form failing on the website", now=NOW,
        report="""\
Customers on the website get "We couldn't calculate your quote, please call us" on the
moving quote form since roughly 2pm. Sales says the phone lines are jammed. I think the
volume estimator is down again, it was deployed around lunchtime. Can someone look?
""",
        truth=truth(
            "network", "Service", NS, "quote-api",
            ["app.kubernetes.io/component: pricing", "connection refused",
             "quote-api.removals.svc.cluster.local"],
            "The quote-api Service was re-applied at 14:07 with the selector "
            "app.kubernetes.io/component: pricing, which no pod carries (the quote-api pods "
            "are labelled component: api), so it has no endpoints and quote-web gets "
            "connection refused. Restore the selector (or label the pods consistently) and "
            "check the kustomize base before applying it to other Services."))
    set_times(s, 3.0, 60)
    c = s.cluster
    namespaces(s, {"default": 540, "kube-system": 540, NS: 512, "marketing": 430})
    nodes = gke_nodes(s, 4, project="packwise-prod", cluster="prod-euw2", pool="apps-e2s8",
                      region="europe-west2", instance="e2-standard-8",
                      kubelet="v1.32.4-gke.1106006", cpu="8", memory="32873564Ki",
                      alloc_cpu="7910m", alloc_memory="29094556Ki", days=6.2)

    # ---- quote-api: healthy, but its Service selects nothing since 14:07
    api_ctr = Ctr("quote-api", f"{REG}/quote-api:2.31.4", port=8080,
                  requests={"cpu": "300m", "memory": "384Mi"}, limits={"memory": "512Mi"},
                  env={"ESTIMATOR_URL": "http://volume-estimator.removals.svc.cluster.local",
                       "CREW_URL": "http://crew-scheduler.removals.svc.cluster.local",
                       "QUOTE_CURRENCY": "GBP"},
                  readiness=http_probe("/ready", delay=5), liveness=http_probe(
                      "/live", delay=15, period=20))
    api, api_pods = steady(s, NS, "quote-api", [api_ctr], nodes=nodes, replicas=3,
                           revision=58, rollout=s.ago(days=3, hours=5, minutes=18),
                           service=None, template_labels={
                               "app.kubernetes.io/component": "api",
                               "app.kubernetes.io/part-of": "quotes"},
                           labels={"app.kubernetes.io/name": "quote-api",
                                   "app.kubernetes.io/component": "api",
                                   "app.kubernetes.io/part-of": "quotes"})
    svc = c.service(NS, "quote-api", {"app.kubernetes.io/name": "quote-api",
                                      "app.kubernetes.io/component": "pricing"},
                    port=80, target="http", created=s.ago(days=412),
                    labels={"app.kubernetes.io/name": "quote-api",
                            "app.kubernetes.io/component": "pricing",
                            "app.kubernetes.io/part-of": "quotes",
                            "app.kubernetes.io/managed-by": "kustomize"})
    svc["metadata"]["managedFields"] = [
        {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {
            "f:metadata": {"f:labels": {".": {}, "f:app.kubernetes.io/name": {},
                                        "f:app.kubernetes.io/part-of": {}}},
            "f:spec": {"f:ports": {}, "f:type": {}}},
         "manager": "argocd-controller", "operation": "Update", "time": iso(s.ago(days=41))},
        {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {
            "f:metadata": {"f:labels": {"f:app.kubernetes.io/component": {},
                                        "f:app.kubernetes.io/managed-by": {}}},
            "f:spec": {"f:selector": {"f:app.kubernetes.io/component": {}}}},
         "manager": "kubectl-client-side-apply", "operation": "Update", "time": iso(EDIT)}]
    ip = svc["spec"]["clusterIP"]
    edge = EDIT.timestamp()

    def api_rps(t: int) -> float:
        return 0.0 if t >= edge else 5.6 / 3
    for pod in api_pods:
        requests(s, pod, "quote-api", rps=api_rps, codes={
            "200": lambda t: 0.991, "422": lambda t: 0.008, "500": lambda t: 0.001},
            median=lambda t: 0.16, buckets=(0.05, 0.1, 0.25, 0.5, 1.0, 2.5))
        cpu_seconds(s, pod, "quote-api", lambda t: 0.03 if t >= edge else 0.21)
    quiet(s, api_pods, "quote-api", 301)
    chatter(s, api_pods, "quote-api", "quote-api", [
        ("info", "quote Q-88120 priced: 3-bed LS6 -> YO10, 38 km, 1,284.00 GBP in 141ms", {}),
        ("info", "quote Q-88133 priced: 1-bed flat M14 -> M20, 7 km, 412.00 GBP in 96ms", {}),
        ("info", "quote Q-88141 priced: 4-bed BS9 -> EX4, 121 km, 2,960.00 GBP in 188ms", {}),
        ("warn", "quote Q-88155 rejected: collection date 2028-05-14 inside 24h notice (422)",
         {"http.response.status_code": 422}),
    ], 210, start=s.ago(hours=3), end=EDIT)
    chatter(s, api_pods, "quote-api", "quote-api", [
        ("info", "fuel surcharge table refreshed (diesel 1.52 GBP/l, 14 bands)", {}),
        ("warn", "slow query on crew_availability: 812ms (threshold 500ms)", {}),
        ("info", "crew calendar cache refreshed: 63 crews, 5 depots", {}),
    ], 64, start=s.ago(hours=3))
    ksm_deployment(s, NS, "quote-api", lambda t: 3.0, lambda t: 3.0, lambda t: 0.0)

    # ---- quote-web: the site's backend, the victim
    web_ctr = Ctr("quote-web", f"{REG}/quote-web:5.12.0", port=3000,
                  requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "384Mi"},
                  env={"QUOTE_API_URL": "http://quote-api.removals.svc.cluster.local/v2",
                       "NODE_ENV": "production"},
                  readiness=http_probe("/healthz", delay=3), liveness=http_probe(
                      "/healthz", delay=10, period=20))
    _, web_pods = steady(s, NS, "quote-web", [web_ctr], nodes=nodes, replicas=3, revision=141,
                         rollout=s.ago(days=1, hours=20, minutes=4), offset=1)
    for pod in web_pods:
        requests(s, pod, "quote-web", rps=lambda t: 2.4, codes={
            "200": lambda t: 0.06 + 0.935 * (1 - ramp(t, EDIT, 0.5)),
            "502": lambda t: 0.002 + 0.93 * ramp(t, EDIT, 0.5),
            "404": lambda t: 0.003},
            median=lambda t: 0.012 if t >= edge + 30 else 0.19,
            buckets=(0.025, 0.1, 0.25, 0.5, 1.0, 2.5))
        cpu_seconds(s, pod, "quote-web", lambda t: 0.11)
    quiet(s, web_pods, "quote-web", 172)
    chatter(s, web_pods, "quote-web", "quote-web", [
        ("info", "POST /api/quotes 200 187ms size=3-bed from=LS6 to=YO10",
         {"http.response.status_code": 200}),
        ("info", "POST /api/quotes 200 142ms size=2-bed from=NG7 to=DE22",
         {"http.response.status_code": 200}),
        ("info", "GET /api/quote-form/config 200 4ms", {"http.response.status_code": 200}),
        ("warn", "quote-api answered in 2.2s (budget 2s): volume estimate used inventory "
         "defaults", {}),
    ], 240, start=s.ago(hours=3), end=EDIT)
    chatter(s, web_pods, "quote-web", "quote-web", [
        ("error", "POST /api/quotes 502 quote request failed: connect ECONNREFUSED "
         f"{ip}:80 (http://quote-api.removals.svc.cluster.local/v2/quotes)",
         {"http.response.status_code": 502, "error.type": "ECONNREFUSED"}),
        ("error", "POST /api/quotes 502 quote request failed: connect ECONNREFUSED "
         f"{ip}:80 (http://quote-api.removals.svc.cluster.local/v2/quotes)",
         {"http.response.status_code": 502, "error.type": "ECONNREFUSED"}),
        ("warn", "retry budget exhausted for upstream quote-api (3 attempts)", {}),
        ("info", "GET /api/quote-form/config 200 3ms", {"http.response.status_code": 200}),
        ("error", "ALERT quote_conversion_rate below 5% for 10m (pagerduty notified)", {}),
    ], 260, start=EDIT + timedelta(seconds=2))
    ksm_deployment(s, NS, "quote-web", lambda t: 3.0, lambda t: 3.0, lambda t: 0.0)

    # ---- red herring: volume-estimator, rolled out 41 minutes before the onset
    roll = EDIT - timedelta(minutes=41, seconds=33)
    est, est_pods, _ = rolled_neighbour(
        s, NS, "volume-estimator", lambda v: Ctr(
            "volume-estimator", f"{REG}/volume-estimator:{v}", port=8080,
            requests={"cpu": "500m", "memory": "768Mi"}, limits={"memory": "1Gi"},
            readiness=http_probe("/ready", delay=10), liveness=http_probe(
                "/live", delay=30, period=20)),
        old="4.6.2", new="4.7.0", revision=23, at=roll, replicas=2, nodes=nodes[1:],
        mib=612, cpu=0.34, rps=lambda t: 0.0 if t >= edge else 4.2,
        codes={"200": 0.997, "504": 0.003}, entries=[
            ("info", "estimate for inventory 'family-3bed' 41.5 m3 (model v11) in 38ms", {}),
            ("warn", "model cache miss for inventory template 'studio-plus', recomputing", {}),
        ], n_logs=60, size=412_887_014)
    chatter(s, est_pods, "volume-estimator", "volume-estimator", [
        ("info", "volume-estimator 4.7.0 started: model v11 loaded (1,942 item classes)", {}),
    ], 2, start=roll, end=roll + timedelta(minutes=2))
    ksm_deployment(s, NS, "volume-estimator", lambda t: 2.0, lambda t: 2.0, lambda t: 0.0)
    del est

    # ---- red herring: crew-scheduler's OOM restart two days ago
    crew = Ctr("crew-scheduler", f"{REG}/crew-scheduler:1.19.0", port=8080,
               requests={"cpu": "200m", "memory": "512Mi"}, limits={"memory": "640Mi"},
               readiness=http_probe("/ready"))
    _, crew_pods = steady(s, NS, "crew-scheduler", [crew], nodes=nodes, replicas=2,
                          revision=36, rollout=s.ago(days=5, hours=2), offset=2,
                          restarted={1: (s.ago(days=2, hours=3, minutes=12), "OOMKilled", 137)})
    quiet(s, crew_pods, "crew-scheduler", 455)
    for pod in crew_pods:
        log_pod(s, pod, "crew-scheduler", "crew-scheduler", [
            ("info", "assigned crew C-14 (3 porters, 7.5t luton) to job J-55102", {}),
            ("info", "depot Leeds: 11 crews available on 2028-05-20", {}),
        ], 40, start=s.ago(hours=3))
    ksm_deployment(s, NS, "crew-scheduler", lambda t: 2.0, lambda t: 2.0, lambda t: 0.0)

    # ---- a minor problem in another namespace
    readiness_blip(s, "marketing", "landing-pages", f"{REG}/landing-pages:8.3.1", nodes,
                   minutes_ago=37)
    del api
    return s
