"""Faults at the hop an SRE would change: a server whose new revision answers what its
callers cannot read, an outside host that changed under a revision that worked with it, a
Service's own spec (a port's protocol, not-ready pods published), a client that used up
its own connections' channels, and the report's words for what it doubts or for the way in."""

from __future__ import annotations

from typing import Any

from engines.analyzer.detectors import (
    capacity,
    dependency,
    evidence,
    exhaustion,
    image,
    network,
    probe,
    rollout,
)
from engines.analyzer.planner import Toolbox, unlisted
from engines.analyzer.scope import EDGE_HINT
from engines.analyzer.transcript import Transcript
from engines.model import ToolSpec
from tests.engines.analyzer.helpers import (
    event,
    events,
    facts_of,
    obs,
    pattern,
    patterns,
    ranked,
    scope_of,
    workload,
    workloads,
)
from tests.engines.analyzer.test_detectors_cluster import rollout_obs
from tools.compress import LIST_NOTE

DECODE = "pricing quote decode failed for INV-2291: invalid gzip header (Content-Encoding: gzip)"


def _caller_pod(env: list[dict[str, str]]) -> Any:
    data = {"name": "invoice-batch-9wsnm-rw9xb", "status": "Running", "ready": "1/1",
            "restarts": 0, "namespace": "billing",
            "owner": "Deployment/invoice-batch → ReplicaSet/invoice-batch-9wsnm",
            "containers": [{"name": "invoice-batch", "ready": True, "env": env}],
            "events": "no warning in the last hour"}
    return obs("k8s_describe_pod", data, namespace="billing", pod="invoice-batch")


def test_callers_that_cannot_read_a_new_revisions_answers_blame_the_revision() -> None:
    """The caller is tied to the server by the URL in its environment; its decode errors
    began right after the server's rollout."""
    report = "invoice-batch fails every pricing call with decode errors"
    facts = facts_of(
        workloads(workload("invoice-batch", "billing"), workload("pricing-api", "pricing")),
        rollout_obs("pricing-api", "pricing", "2026-11-30T09:25:00Z (35m ago)"),
        patterns(pattern(DECODE, service="invoice-batch", pod="invoice-batch-9wsnm-rw9xb",
                         first="2026-11-30T09:26:00Z")),
        _caller_pod([{"name": "PRICING_URL", "value": "http://pricing-api.pricing.svc/v3"},
                     {"name": "OTEL_EXPORTER_OTLP_ENDPOINT",
                      "value": "http://pricing-api.pricing.svc:4317"}]))
    (found,) = rollout.detect(facts, scope_of(facts, report))
    assert (found.culprit.name, [r.name for r in found.affects]) == ("pricing-api",
                                                                      ["invoice-batch"])
    assert any(c.topic == "unreadable-answers" for c in found.clues)
    untied = facts_of(*[o for o in facts.observations if o.tool != "k8s_describe_pod"])
    (alone,) = rollout.detect(untied, scope_of(untied, report))
    assert not any(c.topic == "unreadable-answers" for c in alone.clues)


JWKS = ("unable to fetch JWKS: 404 Not Found (GET https://login.example-id.com/.well-known/"
        "jwks.json)")
FETCHED = "jwks: fetched 2 keys from https://login.example-id.com/.well-known/jwks.json"


def test_an_outside_host_that_answers_404_after_working_with_the_new_revision_changed() -> None:
    report = "member-api answers 401 for everything since 09:40"
    base = [workloads(workload("member-api", "members")),
            rollout_obs("member-api", "members", "2026-11-30T09:18:00Z (42m ago)"),
            patterns(pattern(JWKS, service="member-api", pod="member-api-5d6f7-abcde",
                             first="2026-11-30T09:42:00Z"))]
    facts = facts_of(*base)
    (dep,) = dependency.detect(facts, scope_of(facts, report))
    assert dep.culprit.name == "member-api", "a 404 with its reason phrase is an answer"
    (guess,) = rollout.detect(facts, scope_of(facts, report))
    asked = [f.arguments for f in guess.followups if f.arguments.get("level") == "info"]
    assert asked == [{"namespace": "members", "service": "member-api",
                      "text": "login.example-id.com", "level": "info"}]
    worked = patterns(pattern(FETCHED, service="member-api", pod="member-api-5d6f7-abcde",
                              level="info", first="2026-11-30T09:18:30Z",
                              last="2026-11-30T09:33:00Z"), namespace="members")
    facts = facts_of(*base, worked)
    (doubted,) = rollout.detect(facts, scope_of(facts, report))
    assert doubted.penalty < guess.penalty
    assert "login.example-id.com changed" in doubted.demoted_because[-1]


def _service(problem: str) -> Any:
    return obs("k8s_list_services", {"namespace": "payments", "total": 1, "services": [
        {"name": "fraud-score", "type": "ClusterIP", "cluster_ip": "172.20.44.12",
         "ports": ["9000→http/UDP"], "selector": "app=fraud-score",
         "pods": "3 ready of 3 matching", "endpoints": {"ready": 3, "not_ready": 0},
         "problems": [problem]}]}, namespace="payments")


def test_a_udp_port_in_front_of_a_tcp_server_is_the_services_fault() -> None:
    report = "checkout-api can't get fraud decisions, fraud-score pods look healthy"
    udp = "port 9000 is UDP but the pods' port http is TCP: its clients reach nothing"
    facts = facts_of(workloads(workload("checkout-api"), workload("fraud-score", "payments")),
                     _service(udp), patterns(pattern(
                         "POST http://fraud-score.payments.svc:9000/score: dial tcp "
                         "172.20.44.12:9000: i/o timeout", service="checkout-api",
                         pod="checkout-api-5d6f7-abcde")))
    found = network.detect(facts, scope_of(facts, report))
    assert [(c.category, c.culprit.kind, c.culprit.name) for c in found] == [
        ("network", "Service", "fraud-score")]
    assert found[0].clues[0].weight == 0.7


def test_published_not_ready_pods_are_a_remark_until_a_caller_is_refused() -> None:
    report = "storefront gets connection refused from cart on every deploy"
    published = ("publishNotReadyAddresses: true on a ClusterIP Service: pods still starting or "
                 "already terminating stay in its endpoints and refuse connections")
    listing = obs("k8s_list_services", {"namespace": "shop", "total": 1, "services": [
        {"name": "cart", "type": "ClusterIP", "cluster_ip": "10.96.4.4", "ports": ["80→8080/TCP"],
         "selector": "app=cart", "pods": "3 ready of 3 matching",
         "endpoints": {"ready": 3, "not_ready": 0}, "problems": [published]}]}, namespace="shop")
    quiet = facts_of(workloads(workload("storefront"), workload("cart")), listing)
    (remark,) = network.detect(quiet, scope_of(quiet, report))
    assert remark.clues[0].weight == network.REMARK
    refused = facts_of(workloads(workload("storefront"), workload("cart")), listing, patterns(
        pattern("GET http://cart.shop.svc/v1/cart: connect: connection refused",
                service="storefront", pod="storefront-5d6f7-abcde", count=12)))
    (fault,) = network.detect(refused, scope_of(refused, report))
    assert fault.clues[0].weight == 0.7 and "publishNotReadyAddresses" in fault.fix
    endpoints = obs("k8s_service_endpoints", {"service": "shop/cart", "problems": [published]},
                    namespace="shop", service="cart")
    both = facts_of(workloads(workload("storefront"), workload("cart")), listing, endpoints)
    assert evidence.detect(both, scope_of(both, report)) == [], "counted once, by the listing"


def test_a_client_that_used_up_its_channels_is_the_culprit_not_the_broker() -> None:
    report = "order-events logs NOT_ALLOWED errors from RabbitMQ"
    refused = ("amqp connection lost: NOT_ALLOWED - number of channels opened (2047) has reached "
               "the negotiated channel_max (2047)")
    server = ("Error on AMQP connection <0.2.0> (vhost: 'orders' user: 'order-events'): "
              "number of channels opened (2047) has reached the negotiated channel_max (2047)")
    facts = facts_of(
        workloads(workload("order-events", "orders"),
                  workload("rabbitmq", "messaging", kind="StatefulSet")),
        patterns(pattern(refused, service="order-events", pod="order-events-5d6f7-abcde"),
                 pattern(server, service="rabbitmq", pod="rabbitmq-0")),
        patterns(pattern("publish failed: connection closed, event parked in outbox",
                         service="order-events", pod="order-events-5d6f7-abcde", count=60)))
    scope = scope_of(facts, report)
    found = exhaustion.detect(facts, scope)
    assert [(c.category, c.culprit.name) for c in found] == [("resource_exhaustion",
                                                              "order-events")]
    assert "rabbitmq refuses it for the same reason" in found[0].clues[0].note
    order = ranked(facts, report, [*found, *dependency.detect(facts, scope)])
    assert (order[0].category, order[0].culprit.name) == ("resource_exhaustion", "order-events")


def test_a_server_at_its_connection_cap_is_exhausted() -> None:
    line = "rejecting websocket upgrade: connection limit reached (10000/10000), responding 503"
    facts = facts_of(workloads(workload("ws-gateway", "realtime", kind="StatefulSet")),
                     patterns(pattern(line, service="ws-gateway", pod="ws-gateway-0",
                                      level="warn", count=300)))
    (found,) = exhaustion.detect(facts, scope_of(facts, "ws-gateway answers 503"))
    assert any(c.topic == "exhausted-connection slots" for c in found.clues)


def test_a_side_note_the_reporter_doubts_names_a_suspect_weakly() -> None:
    facts = facts_of(workloads(workload("catalog-api", "catalog"),
                               workload("search-indexer", "data")))
    report = ("catalog-api 4.2.0 never gets Ready. there's also a Pending search-indexer pod, "
              "no idea if related.")
    weights = {r.name: w for r, w in scope_of(facts, report).workloads.items()}
    assert weights == {"catalog-api": 1.0, "search-indexer": 0.6}


def test_naming_the_way_in_makes_the_ingress_controller_a_suspect() -> None:
    facts = facts_of(workloads(workload("ingress-nginx-controller", "ingress-nginx"),
                               workload("accounts-api", "accounts")))
    said = scope_of(facts, "everything behind the public ingress is slow, accounts-api too")
    assert said.weight("ingress-nginx", "ingress-nginx-controller") == EDGE_HINT
    for report in ("accounts answers 504 Gateway Time-out", "accounts-api: 502 Bad Gateway",
                   "accounts-api is down, maybe the ingress?"):
        assert scope_of(facts, report).weight("ingress-nginx", "ingress-nginx-controller") == 0


def test_a_readiness_path_behind_auth_is_fixed_by_exempting_it() -> None:
    facts = facts_of(workloads(workload("catalog-api", "catalog", ready="3/4")), events(
        event("Unhealthy", "Pod/catalog-api-5d6f7-abcde",
              "Readiness probe failed: HTTP probe failed with statuscode: 401",
              namespace="catalog", count=180)))
    (found,) = probe.detect(facts, scope_of(facts, "catalog-api rollout stuck"))
    assert "exempt it from the authentication" in found.fix


def test_an_ingress_path_matched_exact_is_the_fault_of_the_route_to_its_service() -> None:
    exact = ("path / of partners.example.com has pathType: Exact: only / itself reaches Service "
             "partner-api; every path below it gets the default backend's 404")
    listing = obs("k8s_list_ingresses", {"total": 1, "ingresses": [
        {"name": "partner-api", "namespace": "partner-gateway",
         "routes": ["partners.example.com/ → partner-api:8080"], "problems": [exact]}]})
    facts = facts_of(workloads(workload("partner-api", "partner-gateway")), listing)
    (found,) = evidence.detect(facts, scope_of(facts, "partner-api returns 404 for every call"))
    assert (found.category, found.culprit.kind, found.culprit.namespace, found.culprit.name) == (
        "network", "Service", "partner-gateway", "partner-api")
    assert "back to Prefix" in found.fix


def _pull_failures(*extra: Any) -> Any:
    refused = ("Failed to pull image \"771.dkr.ecr.eu-central-1.amazonaws.com/orders/checkout:4.2"
               "\": failed to resolve reference: pulling from host failed: 401 Unauthorized")
    return facts_of(
        workloads(workload("checkout", "orders", ready="3/5",
                           pods={"statuses": {"ImagePullBackOff": 2, "Running": 3}},
                           images=["771.dkr.ecr.eu-central-1.amazonaws.com/orders/checkout:4.2"]),
                  workload("label-printer", "fulfillment", ready="0/1",
                           pods={"statuses": {"ErrImagePull": 1}},
                           images=["771.dkr.ecr.eu-central-1.amazonaws.com/ful/label:1.9"]),
                  workload("ecr-cred-refresher", "platform-ops", kind="CronJob"),
                  workload("ecr-cred-refresher-29916360", "platform-ops", kind="Job",
                           problems=["Failed=True BackoffLimitExceeded: Job has reached the "
                                     "specified backoff limit"]), *extra),
        events(event("Failed", "Pod/checkout-5d6f7-abcde", refused, namespace="orders")))


def test_refused_pulls_while_the_credentials_refresher_fails_blame_the_refresher() -> None:
    facts = _pull_failures()
    report = "checkout's new pods are stuck in ImagePullBackOff with 401, is ECR down?"
    found = image.detect(facts, scope_of(facts, report))
    refresher = next(c for c in found if c.culprit.kind == "CronJob")
    assert refresher.culprit.name == "ecr-cred-refresher"
    assert sorted(r.name for r in refresher.affects) == ["checkout", "label-printer"], \
        "the same registry refuses both"
    order = ranked(facts, report, found)
    assert order[0].culprit.name == "ecr-cred-refresher"
    healthy = facts_of(*[o for o in facts.observations if o.tool != "k8s_list_workloads"],
                       workloads(workload("checkout", "orders", ready="3/5",
                                          pods={"statuses": {"ImagePullBackOff": 2}}),
                                 workload("ecr-cred-refresher", "platform-ops", kind="CronJob")))
    assert all(c.culprit.kind != "CronJob" for c in image.detect(
        healthy, scope_of(healthy, report))), "a refresher whose runs succeed is not blamed"


def test_names_a_cut_workload_listing_left_out_are_looked_up() -> None:
    listing = obs("k8s_list_workloads", {"namespace": "all", "total": 14, "workloads": [
        workload("coredns", "kube-system"), f"… 13 {LIST_NOTE}"]})
    report = "every call to partners.example.com 404s since partner-api 3.4.0 went out"
    specs = {"k8s_list_workloads": ToolSpec("k8s_list_workloads", "", {"properties": {
        "name": {}, "namespace": {}}})}
    box = Toolbox(specs, Transcript(), frozenset())
    assert unlisted(box, facts_of(listing), report) == ["partner-api"]
    assert box.calls[0][:2] == ("k8s_list_workloads", {"name": "partner-api"})
    whole = obs("k8s_list_workloads", {"namespace": "all", "total": 1,
                                       "workloads": [workload("coredns", "kube-system")]})
    assert unlisted(Toolbox(specs, Transcript(), frozenset()), facts_of(whole), report) == [], \
        "a listing that was not cut shows every name there is"


def test_autoscalers_blind_while_the_metrics_server_is_scaled_to_zero_blame_it() -> None:
    blind = ("ScalingActive=False FailedGetResourceMetric: the HPA was unable to compute the "
             "replica count: unable to get metrics for resource cpu")
    hpas = obs("k8s_list_autoscalers", {"total": 1, "autoscalers": [
        {"name": "search-api", "namespace": "catalog", "target": "Deployment/search-api",
         "min": 3, "max": 30, "desired": 3, "at_max": False, "problems": [blind]}]})
    services = obs("k8s_list_services", {"namespace": "kube-system", "total": 1, "services": [
        {"name": "metrics-server", "type": "ClusterIP", "selector": "app=metrics-server",
         "pods": "0 ready of 0 matching", "endpoints": {"ready": 0, "not_ready": 0},
         "problems": ["selector app=metrics-server matches no pod in the namespace"]}]},
        namespace="kube-system")
    facts = facts_of(workloads(workload("search-api", "catalog"),
                               workload("metrics-server", "kube-system", ready="0/0")),
                     hpas, services)
    report = "search-api is melting, p99 over 3s"
    scope = scope_of(facts, report)
    found = capacity.detect(facts, scope)
    assert [(c.category, c.culprit.name) for c in found] == [("autoscaling_limit",
                                                              "metrics-server")]
    assert [r.name for r in found[0].affects] == ["search-api"]
    (service,) = network.detect(facts, scope)
    assert any("runs no pods" in why for why in service.demoted_because)
    order = ranked(facts, report, [*found, service])
    assert order[0].category == "autoscaling_limit"
