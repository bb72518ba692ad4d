"""Human replies become typed constraints."""

from __future__ import annotations

import pytest

from engines.constraints import ConstraintInbox, ConstraintSet, parse_constraint


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("stop", "stop", ""),
        ("Cancel", "stop", ""),
        ("stop it please", "stop", ""),
        ("stay out of kube-system", "exclude_namespace", "kube-system"),
        ("don't look at the payments namespace", "exclude_namespace", "payments"),
        ("exclude namespace monitoring", "exclude_namespace", "monitoring"),
        ("ignore the redis warnings, they are expected", "ignore", "redis warnings"),
        ("focus on checkout", "focus", "checkout"),
        ("read-only please", "forbid_writes", ""),
        ("don't restart anything", "forbid_writes", ""),
        ("don't use k8s_pod_logs", "ban_tool", "k8s_pod_logs"),
        ("I think it's the database", "rule", ""),
    ],
)
def test_parse(text: str, kind: str, value: str) -> None:
    constraint = parse_constraint(text, known_tools=["k8s_pod_logs"])
    assert (constraint.kind, constraint.value) == (kind, value)


def test_known_namespace_is_excluded_without_the_word_namespace() -> None:
    assert parse_constraint("avoid shop", known_namespaces=["shop"]).kind == "exclude_namespace"
    assert parse_constraint("avoid redis").kind == "ignore"


def test_stop_does_not_match_a_longer_sentence_about_stopping() -> None:
    text = "the pods stopped responding after the deploy at 14:10, look at the ingress logs"
    assert parse_constraint(text).kind != "stop"


def test_summaries_confirm_what_was_understood() -> None:
    assert parse_constraint("stay out of kube-system").summary == (
        "staying out of namespace kube-system"
    )


def test_inbox_flags_stop_immediately_and_drains_once() -> None:
    inbox = ConstraintInbox()
    inbox.add("stay out of kube-system", "alice")
    assert not inbox.stop_requested
    inbox.add("stop", "bob")
    assert inbox.stop_requested
    taken = inbox.drain()
    assert [c.author for c in taken] == ["alice", "bob"]
    assert inbox.drain() == []


def test_constraint_set_indexes_enforceable_constraints() -> None:
    constraints = ConstraintSet()
    for text in ["stay out of kube-system", "don't use logs_search", "no writes", "stop"]:
        constraints.add(parse_constraint(text))
    assert constraints.excluded_namespaces == {"kube-system"}
    assert constraints.banned_tools == {"logs_search"}
    assert constraints.writes_forbidden
    assert constraints.stop_requested
    assert len(constraints.rules) == 4
