"""The scoring rule of scenario-format.md: category and culprit, with owned names."""

from __future__ import annotations

import pytest

from engines.diagnosis import Culprit, Diagnosis, Truth, is_correct


def truth(kind: str, namespace: str, name: str, category: str = "oom_killed") -> Truth:
    return Truth(category=category, culprit=Culprit(kind=kind, namespace=namespace, name=name))


def answer(kind: str, namespace: str, name: str, category: str = "oom_killed") -> Diagnosis:
    return Diagnosis(category=category, culprit=Culprit(kind=kind, namespace=namespace,
                                                        name=name),
                     summary="s", confidence=0.8)


WORKLOAD = truth("Deployment", "shop", "checkout")


@pytest.mark.parametrize(("kind", "namespace", "name", "expected"), [
    ("Deployment", "shop", "checkout", True),
    ("Pod", "shop", "checkout-7d9c6b8f4d-x2k4p", True),
    ("ReplicaSet", "shop", "checkout-7d9c6b8f4d", True),
    ("Deployment", "payments", "checkout", False),           # wrong namespace
    ("Pod", "shop", "checkout-worker-7d9c6b8f4d-x2k4p", False),  # another workload's pod
    ("Pod", "shop", "checkout-worker-x2k4p", False),
    ("Deployment", "shop", "checkout-worker", False),
    ("Service", "shop", "frontend", False),
    ("Pod", "shop", "cart-7d9c6b8f4d-x2k4p", False),
])
def test_workload_culprit(kind: str, namespace: str, name: str, expected: bool) -> None:
    assert is_correct(answer(kind, namespace, name), WORKLOAD) is expected


def test_category_must_match() -> None:
    assert not is_correct(answer("Deployment", "shop", "checkout", "crash_loop"), WORKLOAD)
    assert not is_correct(None, WORKLOAD)


def test_statefulset_and_cronjob_names() -> None:
    sts = truth("StatefulSet", "search", "indexer")
    assert is_correct(answer("Pod", "search", "indexer-0"), sts)
    assert not is_correct(answer("Pod", "search", "indexer-api-0"), sts)
    cron = truth("CronJob", "batch", "nightly-export")
    assert is_correct(answer("Job", "batch", "nightly-export-29112340"), cron)
    assert is_correct(answer("Pod", "batch", "nightly-export-29112340-x2k4p"), cron)


def test_service_culprit() -> None:
    service = truth("Service", "shop", "cart", "network")
    assert is_correct(answer("Service", "shop", "cart", "network"), service)
    assert is_correct(answer("Deployment", "shop", "cart", "network"), service)
    assert not is_correct(answer("Service", "web", "cart", "network"), service)
    assert not is_correct(answer("Pod", "shop", "cart-7d9c6b8f4d-x2k4p", "network"), service)


def test_network_policy_culprit() -> None:
    policy = truth("NetworkPolicy", "payments", "restrict-ingress", "network")
    assert is_correct(answer("NetworkPolicy", "payments", "restrict-ingress", "network"),
                      policy)
    assert not is_correct(answer("NetworkPolicy", "payments", "allow-prometheus", "network"),
                          policy)


def test_node_culprit() -> None:
    node = truth("Node", "", "ip-10-14-2-207.eu-west-1.compute.internal", "node_failure")
    assert is_correct(answer("Node", "", "ip-10-14-2-207.eu-west-1.compute.internal",
                             "node_failure"), node)
    assert not is_correct(answer("Node", "", "ip-10-14-1-68.eu-west-1.compute.internal",
                                 "node_failure"), node)
