"""The evidence tools (issue 16) state the facts that decide, on the evidence-shop scenario:
the LimitRange behind a pod's limits, the StorageClass a claim names and how full its volume
is, the trust bundle a workload mounts, and what a Service's selector and ports reach."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from engines.errors import ConstraintViolationError, ToolError
from tests.tools._tooling import call, context, text
from tools.catalog import ALL_TOOLS, READS
from tools.redact import MASK
from tools.scenarios.validate import validate_scenario
from tools.sources.base import Sources

EVIDENCE = Path(__file__).parent / "data" / "evidence-shop"
NS = "evidence"
TOOLS = ("k8s_pod_limit_ranges", "k8s_list_volume_claims", "k8s_mounted_config",
         "k8s_service_endpoints")


def test_the_evidence_scenario_follows_the_format() -> None:
    assert validate_scenario(EVIDENCE) == []


def test_the_evidence_tools_are_in_the_catalog_and_read_the_cluster() -> None:
    names = [t.name for t in ALL_TOOLS]
    assert all(name in names for name in TOOLS)
    assert all(READS[name] == frozenset({"cluster"}) for name in TOOLS)


# ---------------------------------------------------------------- LimitRanges


async def test_limit_ranges_name_the_default_behind_an_undeclared_limit() -> None:
    data = await call(context(EVIDENCE), "k8s_pod_limit_ranges", namespace=NS, pod="worker")
    assert data["workload"] == "Deployment/worker"
    assert data["pod"] == "worker-5d8f7c9b6-k2x9p"
    assert data["limit_ranges"][0]["Container"]["default"] == "cpu 500m, memory 128Mi"
    assert data["limit_ranger_annotation"].startswith("LimitRanger plugin set: cpu, memory")
    worker = data["containers"][0]
    assert worker["declared"] == "none"
    assert worker["admitted"]["limits"] == "cpu 500m, memory 128Mi"
    assert worker["last_exit"].startswith("OOMKilled (exit 137)")
    assert data["findings"] == [
        "worker: limits.cpu 500m, limits.memory 128Mi from LimitRange container-defaults "
        "default, not declared by the Deployment",
        "worker: requests.cpu 100m, requests.memory 64Mi from LimitRange container-defaults "
        "defaultRequest, not declared by the Deployment"]


async def test_limit_ranges_explain_a_cronjob_refused_by_a_max_with_no_pod() -> None:
    data = await call(context(EVIDENCE), "k8s_pod_limit_ranges", namespace=NS,
                      pod="nightly-report")
    assert data["workload"] == "CronJob/nightly-report" and data["pod"] == "none exists"
    assert "limit_ranger_annotation" not in data
    report = data["containers"][0]
    assert report["declared"] == {"limits": "cpu 1, memory 2Gi"}
    # A request not declared takes the declared limit before any LimitRange default.
    assert report["would_be_admitted_as"]["requests"] == "cpu 1, memory 2Gi"
    assert data["findings"][0] == ("report: limits.memory 2Gi is above LimitRange "
                                   "container-defaults Container max 1Gi: such pods are refused")
    assert not any("requests" in f for f in data["findings"])
    assert data["refusals"][0]["reason"] == "FailedCreate"
    assert "maximum memory usage per Container is 1Gi" in data["refusals"][0]["message"]


async def test_a_limit_range_with_only_a_max_sets_the_limit_of_who_declares_none(
    tmp_path: Path,
) -> None:
    """The API server completes a LimitRange: its max is the default limit, and that the
    default request; a workload with no resources runs at the max without anyone saying so."""
    labels = {"app": "etl"}
    container = {"name": "etl", "image": "etl:1"}
    admitted = container | {"resources": {"limits": {"memory": "512Mi"},
                                          "requests": {"memory": "512Mi"}}}
    owner = [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "etl", "controller": True}]
    objects = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "batch"}},
        {"apiVersion": "v1", "kind": "LimitRange",
         "metadata": {"name": "cap", "namespace": "batch"},
         "spec": {"limits": [{"type": "Container", "max": {"memory": "512Mi"}}]}},
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": "etl", "namespace": "batch"},
         "spec": {"selector": {"matchLabels": labels}, "template": {
             "metadata": {"labels": labels}, "spec": {"containers": [container]}}}},
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": "etl-0", "namespace": "batch", "labels": labels,
                      "ownerReferences": owner},
         "spec": {"containers": [admitted]}, "status": {"phase": "Running"}},
    ]
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(objects))
    (tmp_path / "scenario.yaml").write_text(yaml.safe_dump({
        "id": "max-only", "title": "t", "now": "2026-11-30T10:00:00Z", "report": "etl OOM",
        "truth": {"category": "oom_killed",
                  "culprit": {"kind": "Deployment", "namespace": "batch", "name": "etl"}}}))
    data = await call(context(tmp_path), "k8s_pod_limit_ranges", namespace="batch", pod="etl")
    assert data["findings"] == [
        "etl: limits.memory 512Mi from LimitRange cap max (with no default, the max is the "
        "default limit), not declared by the Deployment",
        "etl: requests.memory 512Mi from LimitRange cap max (with no defaultRequest, the "
        "default limit is also the default request), not declared by the Deployment"]


async def test_limit_ranges_say_when_nothing_applies() -> None:
    data = await call(context(EVIDENCE), "k8s_pod_limit_ranges", namespace=NS,
                      pod="payments-client")
    assert data["limit_ranger_annotation"].startswith("absent")
    assert data["findings"] == ["no LimitRange changed or bounds this workload's resources"]
    fixture = await call(context(), "k8s_pod_limit_ranges", namespace="shop", pod="checkout")
    assert fixture["workload"] == "Deployment/checkout"
    assert fixture["containers"][0]["declared"]["limits"] == "cpu 500m, memory 256Mi"


async def test_limit_ranges_refuse_an_excluded_namespace_and_an_unknown_pod() -> None:
    with pytest.raises(ConstraintViolationError):
        await call(context(EVIDENCE, exclude=(NS,)), "k8s_pod_limit_ranges", namespace=NS,
                   pod="worker")
    with pytest.raises(ToolError, match="no pod 'nope'"):
        await call(context(EVIDENCE), "k8s_pod_limit_ranges", namespace=NS, pod="nope")


# ---------------------------------------------------------------- storage


async def test_volume_claims_name_a_missing_storage_class_and_a_full_volume() -> None:
    data = await call(context(EVIDENCE), "k8s_list_volume_claims", namespace=NS)
    rows = {row["name"]: row for row in data["claims"]}
    pending = rows["data-ledger-db-2"]
    assert data["claims"][0]["name"] in ("data-ledger-db-2", "data-orders-db-0")  # problems first
    assert pending["phase"] == "Pending" and pending["storage_class"] == "fast-ssd: does not exist"
    assert pending["used_by"] == ["ledger-db-2"]
    assert pending["events"][0]["reason"] == "ProvisioningFailed"
    assert "StorageClass fast-ssd does not exist: the claim cannot be provisioned" in \
        pending["problems"]
    bound = rows["data-ledger-db-0"]
    assert "problems" not in bound and "any more" in bound["storage_class"]
    assert bound["usage"] == "2.1Gi of 10Gi (21%), 20% an hour ago"
    full = rows["data-orders-db-0"]
    assert full["usage"] == "9.8Gi of 10Gi (98%), 88% an hour ago"
    assert full["problems"] == ["volume 98% full: writes fail when it fills"]
    template = next(t for t in data["claim_templates"] if t["statefulset"] == "ledger-db")
    assert template["storage_class"] == "fast-ssd" and "does not exist" in template["problem"]
    assert data["storage_classes"] == [
        "standard: rancher.io/local-path, WaitForFirstConsumer (default)"]


async def test_volume_claims_of_one_workload_and_without_a_metric_store() -> None:
    ctx = context(EVIDENCE)
    data = await call(ctx, "k8s_list_volume_claims", namespace=NS, workload="orders-db")
    assert [row["name"] for row in data["claims"]] == ["data-orders-db-0"]
    assert [t["statefulset"] for t in data["claim_templates"]] == ["orders-db"]
    blind = replace(ctx, sources=Sources(cluster=ctx.sources.cluster))
    data = await call(blind, "k8s_list_volume_claims", namespace=NS, workload="orders-db")
    assert "usage" not in data["claims"][0]
    assert data["usage_note"] == "no metric store: volume usage unknown"
    everywhere = await call(context(EVIDENCE), "k8s_list_volume_claims")
    assert everywhere["total"] == 4 and everywhere["claims"][0]["namespace"] == NS


# ---------------------------------------------------------------- trust bundles


async def test_mounted_config_shows_a_stale_trust_bundle_and_secrets_by_name_only() -> None:
    data = await call(context(EVIDENCE), "k8s_mounted_config", namespace=NS,
                      workload="payments-client")
    rows = {row.get("configmap") or row.get("secret_name"): row for row in data["mounted"]}
    bundle = rows["trust-bundle"]
    assert bundle["used_as"] == ["volume trust at /etc/ssl/trust/ca.crt (client, subPath)"]
    assert bundle["changed"].startswith("2026-11-30T08:00:00Z (2h ago) by ")
    certificates = bundle["certificates"]["ca.crt"]
    assert certificates[0] == ("CA CN=Shop Root CA 2024,O=Shop, self-signed, EXPIRED 2d ago "
                               "(2026-11-28T10:00:00Z)")
    assert certificates[1].endswith("valid until 2036-11-27T10:00:00Z")
    assert "1 of 2 certificates in trust-bundle/ca.crt have expired" in data["findings"]
    assert ("ConfigMap trust-bundle changed after 2 of 2 pods started (env and subPath mounts "
            "never update)") in data["findings"]
    assert "ConfigMap client-settings has no key region" in data["findings"]
    secret = rows["payments-db"]
    assert secret["used_as"] == ["env DB_PASSWORD ← key password (client)"]
    assert secret["note"] == "a Secret, named only: its contents are never read"
    assert rows["payments-client-tls"]["used_as"] == ["volume tls at /etc/client-tls (client)"]
    assert data["tls_env"] == ["SSL_CERT_FILE=/etc/ssl/trust/ca.crt"]
    assert "BEGIN CERTIFICATE" not in text(data) and MASK not in text(data)


async def test_mounted_config_reads_a_pod_name_as_its_workload() -> None:
    data = await call(context(EVIDENCE), "k8s_mounted_config", namespace=NS,
                      workload="payments-client-7f9c8d6b5-a1b2c")
    assert data["workload"] == "Deployment/payments-client"
    none = await call(context(EVIDENCE), "k8s_mounted_config", namespace=NS, workload="cart")
    assert none["mounted"] == "no ConfigMap or Secret is mounted or referenced"


# ---------------------------------------------------------------- Service endpoints


async def test_service_endpoints_show_the_label_that_keeps_pods_out() -> None:
    data = await call(context(EVIDENCE), "k8s_service_endpoints", namespace=NS, service="cart")
    assert data["selector"] == "app=cart,tier=web" and data["matching_pods"] == "none"
    assert data["almost_matching"] == ["Deployment/cart: tier=backend (selector wants tier=web)"]
    assert data["endpoints"] == {"ready": "none", "not_ready": "none"}
    assert data["problems"] == ["selector app=cart,tier=web matches no pod in evidence"]


async def test_service_endpoints_check_the_target_port_against_the_pods() -> None:
    ctx = context(EVIDENCE)
    wrong = await call(ctx, "k8s_service_endpoints", namespace=NS, service="orders-db")
    assert wrong["matching_pods"] == ["orders-db-0 10.244.0.30 ready [StatefulSet/orders-db]"]
    assert wrong["endpoints"]["ready"] == ["10.244.0.30:5433 (orders-db-0)"]
    assert wrong["ports"] == ["pg 5432→5433: NOT a port of the pods"]
    assert wrong["problems"] == [
        "targetPort 5433 is not a port the matched pods open (they open 5432; named pg)",
        "NetworkPolicy orders-db-lockdown selects these pods and admits no ingress: "
        "connections to them are dropped"]
    assert wrong["ingress_policies"] == ["orders-db-lockdown: denies all ingress"]
    right = await call(ctx, "k8s_service_endpoints", namespace=NS, service="ledger-db")
    assert right["ports"] == ["pg 5432→pg (= 5432): opened by the pods"]
    assert "problems" not in right  # ledger-db-2 is Pending, but two replicas serve
    assert right["ingress_policies"] == ["ledger-db-clients: from pods app=ledger on TCP/5432"]
    assert len(right["matching_pods"]) == 3
    assert any("NOT READY (Pending:Unschedulable)" in p for p in right["matching_pods"])
    with pytest.raises(ToolError, match="no Service 'carts' in evidence; Services there: cart"):
        await call(ctx, "k8s_service_endpoints", namespace=NS, service="carts")
