"""Faults of a component others rely on, told apart from their victims: a client whose
pinned keys its peer no longer serves, a certificate issuer that cannot sign, a CSI node
plugin whose volumes cannot be mounted, and a "<service>.<namespace>" host placed in the
cluster, an admission webhook the API server cannot reach."""

from __future__ import annotations

from engines.analyzer.candidates import Candidate, Clue
from engines.analyzer.detectors import certificate, run_detectors, webhook
from engines.analyzer.detectors._targets import resolve
from engines.analyzer.detectors.certificate import whose
from engines.analyzer.facts import Facts, Ref
from engines.analyzer.graph import HURTS, build_graph, key
from engines.analyzer.transcript import Observation
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


def test_a_pinning_failure_blames_the_client_that_pins() -> None:
    line = ("javax.net.ssl.SSLPeerUnverifiedException: Certificate pinning failure! "
            "Peer certificate chain for quotes.pricing.svc does not match the pin set")
    assert whose(line) == "own"
    facts = facts_of(
        workloads(workload("fare-app", "mobile"), workload("quotes", "pricing")),
        patterns(pattern(line, service="fare-app", pod="fare-app-5d8f7c9b6-k2j4h", count=60)))
    found = certificate.detect(facts, scope_of(facts, "fare-app cannot get quotes"))
    top = found[0]
    assert (top.category, top.culprit.name) == ("certificate", "fare-app")
    assert any("the keys it pins no longer match" in c.note for c in top.clues)
    assert top.fix.startswith("Update the pin set of Deployment mobile/fare-app")


def test_an_issuer_that_cannot_sign_is_blamed_for_the_workloads_it_leaves_unsigned() -> None:
    facts = facts_of(
        workloads(workload("mesh-ca", "mesh-system"), workload("payments", "pay"),
                  workload("checkout", "pay")),
        patterns(
            pattern("CSR signing error for spiffe://cluster.local/ns/pay/sa/checkout: x509: "
                    "certificate has expired or is not yet valid", service="mesh-ca",
                    pod="mesh-ca-7c9d8f6b5-p9q8r", count=30),
            pattern("sidecar: failed to sign workload certificate: x509: certificate has "
                    "expired or is not yet valid", service="payments",
                    pod="payments-6b7c8d9f5-z1x2c", count=45)))
    found = certificate.detect(facts, scope_of(facts, "payments calls fail with TLS errors"))
    issuer = next(c for c in found if c.culprit.name == "mesh-ca")
    assert found[0] is issuer
    assert {r.name for r in issuer.affects} == {"checkout", "payments"}
    assert all(c.culprit.name != "payments" for c in found), "the victim is not a suspect"
    assert issuer.fix.startswith("Renew or replace the signing (intermediate CA) certificate")


MOUNT = ("MountVolume.MountDevice failed for volume \"pvc-4f1e\" : kubernetes.io/csi: "
         "attacher.MountDevice failed to create newCsiDriverClient: driver name "
         "disk.csi.example.com not found in the list of registered CSI drivers")
INDEX = Ref("StatefulSet", "search", "search-index")
PLUGIN = Ref("DaemonSet", "kube-system", "disk-csi-node")


def _stuck_volume() -> Facts:
    return facts_of(
        workloads(workload("search-index", "search", kind="StatefulSet", ready="2/3"),
                  workload("disk-csi-node", "kube-system", kind="DaemonSet", ready="3/4"),
                  workload("log-csi-driver", "kube-system", kind="DaemonSet")),
        events(event("FailedMount", "Pod/search-index-2", MOUNT, namespace="search")))


def test_a_pod_whose_volume_cannot_mount_depends_on_the_named_csi_plugin() -> None:
    graph = build_graph(_stuck_volume())
    assert graph.dependencies(INDEX) == {key(PLUGIN): (1, HURTS)}


def test_the_csi_plugin_outranks_the_workload_stuck_behind_it() -> None:
    facts = _stuck_volume()
    victim = Candidate("bad_rollout", INDEX, [Clue(0.6, "search-index-2 stuck at 09:40", ("x",))])
    plugin = Candidate("oom_killed", PLUGIN,
                       [Clue(0.6, "disk-csi-node OOMKilled at 2026-11-30T09:30:00Z", ("y",))])
    found = ranked(facts, "search-index-2 is stuck", [victim, plugin])
    assert found[0].culprit == PLUGIN
    assert any("disk-csi-node" in why for why in found[1].demoted_because)


def test_a_service_dot_namespace_host_is_in_the_cluster_when_the_namespace_is_seen() -> None:
    facts = facts_of(workloads(workload("web", "front"), workload("profiles", "accounts")))
    target = resolve("profiles.accounts", "8080", "front", facts)
    assert (target.in_cluster, target.namespace, target.service) == (True, "accounts",
                                                                       "profiles")
    assert resolve("api.stripe", "443", "front", facts).external


BLOCKED = ("Error creating: Internal error occurred: failed calling webhook \"pods.gate.io\": "
           "failed to call webhook: Post \"https://gatekeeper.gate.svc:443/admit?timeout=10s\": "
           "context deadline exceeded")


def _gated(*extra: Observation) -> Facts:
    return facts_of(
        workloads(workload("invoices", "billing"), workload("gatekeeper", "gate")),
        events(event("FailedCreate", "ReplicaSet/invoices-7d9f8c6b5", BLOCKED,
                     namespace="billing", count=12)), *extra)


def test_a_webhook_the_api_server_cannot_reach_is_asked_about_then_its_policy_blamed() -> None:
    facts = _gated()
    report = "the invoices rollout is stuck, no new pods"
    (first,) = webhook.detect(facts, scope_of(facts, report))
    assert (first.category, str(first.culprit)) == ("network", str(
        Ref("Service", "gate", "gatekeeper")))
    assert Ref("Deployment", "billing", "invoices") in first.affects
    assert first.followups[0].arguments == {"namespace": "gate", "service": "gatekeeper"}
    denied = obs("k8s_service_endpoints", {
        "service": "gate/gatekeeper", "ingress_policies": [
            "baseline-deny: denies all ingress", "same-ns: from pods all pods on all ports"],
        "ingress_from": "pods only (by pod or namespace selector): callers outside the pod "
                        "network, such as the API server calling a webhook here, are dropped"},
        namespace="gate", service="gatekeeper")
    facts = _gated(denied)
    (blamed,) = webhook.detect(facts, scope_of(facts, report))
    assert blamed.culprit == Ref("NetworkPolicy", "gate", "baseline-deny")
    assert blamed.fix.startswith("Allow ingress to the pods of webhook Service gate/gatekeeper")
    assert ranked(facts, report, run_detectors(facts, scope_of(facts, report)))[0] \
        .culprit == blamed.culprit


def test_a_webhook_whose_certificate_is_refused_is_left_to_the_certificate_detector() -> None:
    facts = facts_of(workloads(workload("invoices", "billing")), events(event(
        "FailedCreate", "ReplicaSet/invoices-7d9f8c6b5",
        BLOCKED.replace("context deadline exceeded", "tls: failed to verify certificate: "
                        "x509: certificate has expired"), namespace="billing")))
    assert webhook.detect(facts, scope_of(facts, "invoices stuck")) == []


def test_a_policy_blocking_several_workloads_is_one_finding_with_each_victim() -> None:
    denied = obs("k8s_service_endpoints", {
        "service": "gate/gatekeeper", "problems": [
            "NetworkPolicy baseline-deny selects these pods and admits no ingress: "
            "connections to them are dropped"]}, namespace="gate", service="gatekeeper")
    facts = facts_of(
        workloads(workload("invoices", "billing"), workload("gatekeeper", "gate"),
                  workload("ledger", "billing")),
        events(event("FailedCreate", "ReplicaSet/invoices-7d9f8c6b5", BLOCKED,
                     namespace="billing", count=12),
               event("FailedCreate", "ReplicaSet/ledger-5c6d7e8f9", BLOCKED,
                     namespace="billing", count=4)), denied)
    (blamed,) = webhook.detect(facts, scope_of(facts, "rollouts stuck in billing"))
    assert {r.name for r in blamed.affects} == {"invoices", "ledger"}
    assert sum(c.topic.startswith("webhook-denied") for c in blamed.clues) == 1
