"""Faults one hop away from where they show: a broker that blocks its publishers, a
producer whose new revision breaks its consumer, a cloud API that throttles, and a report
that guesses at a cause."""

from __future__ import annotations

from typing import Any

from engines.analyzer.detectors import dependency, exhaustion, rollout
from engines.analyzer.detectors._targets import spoken_server
from engines.analyzer.facts import Ref
from engines.analyzer.planner import Toolbox, hints
from engines.analyzer.transcript import Transcript
from engines.model import ToolSpec
from tests.engines.analyzer.helpers import (
    categories,
    facts_of,
    obs,
    pattern,
    patterns,
    ranked,
    scope_of,
    workload,
    workloads,
)

BROKER = workload("rabbitmq", "messaging", kind="StatefulSet",
                  images=["docker.io/library/rabbitmq:3.12-management"])
PUBLISHERS = (workload("orders", "shop"), workload("labels", "shipping"))


def _blocked(*extra: Any) -> list[Any]:
    return [workloads(BROKER, *PUBLISHERS), patterns(
        pattern("publish order.created failed: pika.exceptions.ConnectionBlockedTimeout: "
                "Blocked connection timeout expired.",
                service="labels", pod="labels-5d6f7-abcde", count=40),
        pattern("rabbitmq connection blocked by broker, reason: low on disk",
                service="orders", pod="orders-5d6f7-abcde", count=3, level="warn"),
        pattern("connection blocked by broker: Connection.Blocked(reason=low on disk)",
                service="labels", pod="labels-5d6f7-abcde", count=2, level="warn"),
        pattern("disk resource limit alarm set on node rabbit@rabbitmq-0",
                service="rabbitmq", pod="rabbitmq-0", count=1, level="warning"),
        pattern("Free disk space is insufficient. Free bytes: 1997539411. Limit: 2000000000",
                service="rabbitmq", pod="rabbitmq-0", count=1, level="warning")), *extra]


def test_a_line_that_names_no_host_still_speaks_to_its_server() -> None:
    facts = facts_of(*_blocked())
    caller = Ref("Deployment", "shipping", "labels")
    assert spoken_server("pika.exceptions.ConnectionBlockedTimeout", caller, facts) == \
        Ref("StatefulSet", "messaging", "rabbitmq")
    assert spoken_server("upstream timed out", caller, facts) is None


def test_a_broker_that_blocks_publishers_for_its_disk_is_the_cause() -> None:
    facts = facts_of(*_blocked())
    report = "orders returns 503 and labels in shipping can't publish either"
    scope = scope_of(facts, report)
    found = ranked(facts, report, exhaustion.detect(facts, scope) +
                   dependency.detect(facts, scope))
    assert categories(found)[0] == ("resource_exhaustion", "rabbitmq")
    assert any(c.topic.startswith("exhausted-seen-by-") for c in found[0].clues)
    callers = [c for c in found if c.category == "dependency_failure"]
    assert callers and all(c.demoted_because for c in callers)


def test_a_callee_that_only_warns_has_its_own_log_read() -> None:
    facts = facts_of(*_blocked())
    specs = {name: ToolSpec(name, "", {"properties": {"namespace": {}, "workload": {},
                                                      "pod": {}, "since": {}}})
             for name in ("k8s_rollout_history", "metrics_workload_signals", "k8s_pod_logs")}
    box = Toolbox(specs, Transcript(), frozenset())
    hints(box, facts, scope_of(facts, "labels can't publish"),
          [Ref("Deployment", "shipping", "labels")])
    assert ("k8s_pod_logs", "rabbitmq") in {(tool, args.get("pod")) for tool, args, _ in box.calls}


def _revisions(name: str, namespace: str, created: str, old: str, new: str) -> Any:
    return obs("k8s_rollout_history", {
        "workload": f"Deployment {namespace}/{name}", "current_revision": 64,
        "revisions": [
            {"revision": 64, "replicaset": f"{name}-7c8d9", "current": True,
             "created": created, "images": [f"reg.io/{name}:{new}"], "pods": "ready 3/3"},
            {"revision": 63, "replicaset": f"{name}-5d6f7", "current": False,
             "created": "2026-11-20T10:00:00Z (10d ago)", "images": [f"reg.io/{name}:{old}"],
             "pods": "ready 0/0"}]}, namespace=namespace, workload=name)


def test_a_producers_new_revision_named_by_its_consumers_errors_is_the_cause() -> None:
    facts = facts_of(
        workloads(workload("order-service", "orders"), workload("router", "fulfillment")),
        _revisions("order-service", "orders", "2026-11-30T09:10:00Z (50m ago)", "4.7.3",
                   "4.8.0"),
        patterns(pattern("failed to handle message topic=orders.placed producer="
                         "order-service@4.8.0: 1 validation error: shipping_address required",
                         service="router", pod="router-5d6f7-abcde", count=200,
                         first="2026-11-30T09:12:00Z")))
    report = "fulfillment router fails every order since 09:12, is kafka broken?"
    found = ranked(facts, report, rollout.detect(facts, scope_of(facts, report)))
    assert categories(found)[0] == ("bad_rollout", "order-service")
    assert Ref("Deployment", "fulfillment", "router") in found[0].affects
    assert any(c.topic == "named-by-victims" for c in found[0].clues)


def test_errors_naming_only_an_old_version_do_not_blame_the_rollout() -> None:
    facts = facts_of(
        workloads(workload("order-service", "orders"), workload("router", "fulfillment")),
        _revisions("order-service", "orders", "2026-11-30T09:10:00Z (50m ago)", "4.7.3",
                   "4.8.0"),
        patterns(pattern("failed to handle message producer=order-service@4.7.3",
                         service="router", pod="router-5d6f7-abcde", count=200,
                         first="2026-11-30T09:12:00Z")))
    found = rollout.detect(facts, scope_of(facts, "router fails"))
    assert not any(c.topic == "named-by-victims" for f in found for c in f.clues)


def test_a_cloud_api_that_throttles_the_caller_is_a_failing_dependency() -> None:
    facts = facts_of(workloads(workload("uploads", "media")), patterns(pattern(
        "store original failed: operation error S3: PutObject, exceeded maximum number of "
        "attempts, 3, https response error StatusCode: 503, api error SlowDown: Please reduce "
        "your request rate.", service="uploads", pod="uploads-5d6f7-abcde", count=90)))
    found = dependency.detect(facts, scope_of(facts, "uploads fail with 503"))
    assert categories(found) == [("dependency_failure", "uploads")]


def test_a_name_said_only_in_a_guess_counts_for_less_than_the_symptom() -> None:
    facts = facts_of(workloads(workload("event-consumer", "ingest"),
                               workload("webhook-relay", "ingest")))
    scope = scope_of(facts, "the events queue is piling up. someone rolled out webhook-relay "
                            "just before, can we roll it back?")
    assert scope.weight("ingest", "webhook-relay") < 1.0
    plain = scope_of(facts, "webhook-relay is failing since 09:30")
    assert plain.weight("ingest", "webhook-relay") == 1.0
    hedged = scope_of(facts, "webhook-relay is slow tonight, probably the event-consumer")
    assert hedged.weight("ingest", "webhook-relay") == 1.0
    assert hedged.weight("ingest", "event-consumer") < 1.0


