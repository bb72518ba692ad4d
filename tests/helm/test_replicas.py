"""Several replicas through the chart: a shared database is required, and the pods are spread
over nodes and kept available through voluntary disruptions."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest

from tests.helm.conftest import Helm, of_kind, one

URL = "postgresql://triage:s3cret@postgres.db:5432/triage"
Render = Callable[[str], list[dict[str, Any]]]
SOCKET = ("slack.botToken=xoxb-1", "slack.appToken=xapp-1")


def _pod(objects: list[dict[str, Any]]) -> dict[str, Any]:
    pod: dict[str, Any] = one(objects, "Deployment")["spec"]["template"]["spec"]
    return pod


def _env(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in _pod(objects)["containers"][0].get("env", [])}


@pytest.mark.parametrize("values", [("replicaCount=2",), ("replicaCount=3", "database.url=")])
def test_more_than_one_replica_without_a_database_is_refused(helm: Helm,
                                                              values: tuple[str, ...]) -> None:
    result = helm.template((), (*SOCKET, *values))
    assert result.returncode != 0, f"{values} was accepted"
    assert "values don't meet the specifications of the schema" in result.stderr
    for fragment in ("/database", "url", "existingSecret"):
        assert fragment in result.stderr, (fragment, result.stderr)


def test_a_database_url_goes_to_a_secret_and_reaches_the_pod(helm: Helm) -> None:
    objects = helm.render((), (*SOCKET, "replicaCount=2", f"database.url={URL}"))
    secret = next(s for s in of_kind(objects, "Secret")
                  if "TRIAGE_DATABASE_URL" in s.get("stringData", {}) | s.get("data", {}))
    stored = secret.get("stringData", {}).get("TRIAGE_DATABASE_URL") or base64.b64decode(
        secret["data"]["TRIAGE_DATABASE_URL"]).decode()
    assert stored == URL
    assert _env(objects)["TRIAGE_DATABASE_URL"]["valueFrom"] == {"secretKeyRef": {
        "name": secret["metadata"]["name"], "key": "TRIAGE_DATABASE_URL"}}
    for config in of_kind(objects, "ConfigMap"):
        assert "s3cret" not in str(config), "the URL's password never lands in a ConfigMap"
    assert one(objects, "Deployment")["spec"]["replicas"] == 2


def test_an_existing_secret_is_referenced_with_its_own_key(render: Render) -> None:
    objects = render("pdb")
    assert _env(objects)["TRIAGE_DATABASE_URL"]["valueFrom"] == {
        "secretKeyRef": {"name": "triage-postgres", "key": "url"}}
    assert not [s for s in of_kind(objects, "Secret") if s["metadata"]["name"].endswith(
        "-database")], "no Secret is made for a database the user's Secret names"


def test_replicas_come_with_a_pdb_and_anti_affinity(helm: Helm) -> None:
    objects = helm.render((), (*SOCKET, "replicaCount=2", f"database.url={URL}"))
    pdb = one(objects, "PodDisruptionBudget")
    selector = one(objects, "Deployment")["spec"]["selector"]["matchLabels"]
    assert pdb["spec"] == {"maxUnavailable": 1, "selector": {"matchLabels": selector}}
    preferred = _pod(objects)["affinity"]["podAntiAffinity"][
        "preferredDuringSchedulingIgnoredDuringExecution"]
    assert preferred == [{"weight": 100, "podAffinityTerm": {
        "topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": selector}}}]


def test_one_replica_keeps_sqlite_and_an_own_affinity_wins(helm: Helm) -> None:
    single = helm.render((), SOCKET)
    assert "TRIAGE_DATABASE_URL" not in _env(single)
    assert not of_kind(single, "PodDisruptionBudget") and "affinity" not in _pod(single)
    own = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "pool", "operator": "In", "values": ["ops"]}]}]}}}
    objects = helm.render((), (*SOCKET, "replicaCount=2", "database.existingSecret=pg",
                               "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
                               "Execution.nodeSelectorTerms[0].matchExpressions[0].key=pool",
                               "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
                               "Execution.nodeSelectorTerms[0].matchExpressions[0].operator=In",
                               "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
                               "Execution.nodeSelectorTerms[0].matchExpressions[0]"
                               ".values[0]=ops"))
    assert _pod(objects)["affinity"] == own
    assert _env(objects)["TRIAGE_DATABASE_URL"]["valueFrom"]["secretKeyRef"] == {
        "name": "pg", "key": "TRIAGE_DATABASE_URL"}


def test_a_database_url_must_be_postgresql(helm: Helm) -> None:
    result = helm.template((), (*SOCKET, "database.url=mysql://db/triage"))
    assert result.returncode != 0 and "/database/url" in result.stderr, result.stderr
