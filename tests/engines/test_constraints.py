"""Typed constraints: how they are said to the model and read back, indexed for the toolset,
withdrawn by reply, and how the inbox hands them to the engine."""

from __future__ import annotations

import asyncio

import pytest

from engines.constraints import RULES, Constraint, ConstraintInbox, ConstraintSet, from_rule


@pytest.mark.parametrize("kind", [k for k in RULES if k != "rule"])
def test_every_typed_rule_reads_back_as_its_kind(kind: str) -> None:
    value = "" if kind in ("stop", "pause", "forbid_writes") else "payments"
    said = Constraint(kind, "reply", value).rule  # type: ignore[arg-type]
    back = from_rule(said)
    assert (back.kind, back.value) == (kind, value)


def test_a_free_rule_stays_free() -> None:
    assert from_rule("answer in bullet points").kind == "rule"


def test_the_set_indexes_what_the_toolset_enforces() -> None:
    constraints = ConstraintSet([
        Constraint("exclude_namespace", "t", "kube-system"),
        Constraint("exclude_workload", "t", "cart"),
        Constraint("exclude_source", "t", "logs"),
        Constraint("ban_tool", "t", "k8s_events"),
        Constraint("forbid_writes", "t"),
    ])
    assert constraints.excluded_namespaces == {"kube-system"}
    assert constraints.excluded_workloads == {"cart"}
    assert not constraints.tool_allowed("logs_search")  # its source is excluded
    assert not constraints.tool_allowed("k8s_events")
    assert constraints.tool_allowed("metrics_query")
    assert constraints.writes_forbidden


def test_rule_out_by_category_component_or_both() -> None:
    constraints = ConstraintSet([Constraint("rule_out", "t", "oom_killed:checkout"),
                                 Constraint("rule_out", "t", "database"),
                                 Constraint("rule_out", "t", "network")])
    assert constraints.rules_out("oom_killed", "checkout")
    assert not constraints.rules_out("oom_killed", "cart")
    assert constraints.rules_out("crash_loop", "payments-database")
    assert constraints.rules_out("network", "anything")
    assert "database" in constraints.ignored


def test_withdraw_removes_only_that_replys_constraints() -> None:
    constraints = ConstraintSet([Constraint("exclude_namespace", "a", "shop", reply="1"),
                                 Constraint("ban_tool", "a", "k8s_events", reply="1"),
                                 Constraint("focus_workload", "b", "cart", reply="2")])
    gone = constraints.withdraw("1")
    assert [c.kind for c in gone] == ["exclude_namespace", "ban_tool"]
    assert [c.value for c in constraints.items] == ["cart"]


def test_inbox_flags_stop_at_once_and_drains_once() -> None:
    inbox = ConstraintInbox()
    inbox.put(Constraint("exclude_namespace", "t", "kube-system", "alice"))
    assert not inbox.stop_requested
    inbox.put(Constraint("stop", "stop", author="bob", reply="9"))
    assert inbox.stop_requested
    inbox.withdraw("9")  # withdrawn before the engine took it: no stop
    assert not inbox.stop_requested
    assert [c.author for c in inbox.drain()] == ["alice"]
    assert inbox.drain() == []
    assert inbox.drain_withdrawn() == ["9"]


def test_inbox_wakes_a_waiting_engine() -> None:
    async def scenario() -> tuple[bool, bool]:
        inbox = ConstraintInbox()
        idle = await inbox.changed(0.01)
        waiter = asyncio.ensure_future(inbox.changed(5))
        await asyncio.sleep(0)
        inbox.resume()
        return idle, await waiter

    assert asyncio.run(scenario()) == (False, True)


def test_ruling_out_a_workload_spares_its_namesake_components() -> None:
    constraints = ConstraintSet([Constraint("rule_out", "t", "checkout")])
    assert constraints.rules_out("oom_killed", "checkout")
    assert constraints.rules_out("oom_killed", "checkout-api")
    assert not constraints.rules_out("oom_killed", "checkout-db")
    assert not constraints.rules_out("oom_killed", "checkout-worker")
    assert not constraints.rules_out("oom_killed", "new-checkout")


def test_ruling_out_a_kind_of_component_matches_the_names_words() -> None:
    constraints = ConstraintSet([Constraint("rule_out", "t", "database")])
    assert constraints.rules_out("dependency_failure", "orders-postgres")
    assert constraints.rules_out("dependency_failure", "payments-db")
    assert not constraints.rules_out("dependency_failure", "payments")
    assert not constraints.rules_out("dependency_failure", "dbmigrator")
