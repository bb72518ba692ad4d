"""Quotes, rejections, scoping and ranking: the pure pieces the analyzer is built from."""

from __future__ import annotations

from engines.analyzer.candidates import Candidate, Clue, confidence, merge
from engines.analyzer.diagnose import diagnosis_arguments
from engines.analyzer.facts import Ref
from engines.analyzer.graph import Graph
from engines.analyzer.quotes import cut_quote
from engines.analyzer.ranking import rank
from engines.analyzer.rejections import parse_rejections
from engines.analyzer.scope import build_scope
from engines.diagnosis import (
    REJECTION_PHRASE,
    REJECTION_PREFIX,
    Culprit,
    Diagnosis,
    rejection_message,
)
from engines.evidence import occurs
from engines.reflexion import rejection_note
from tests.engines.analyzer.helpers import NOW, facts_of, workload, workloads

WRAPPED = """events:
- {type: Warning, reason: Unhealthy, object: Pod/api-1, count: 15, message: 'Readiness probe
    failed: connection refused'}
  last_state: {terminated: OOMKilled, exit_code: 137, finished: '2026-11-30T09:54:40Z'}"""


def test_quotes_are_the_whole_line_or_field_around_the_needle() -> None:
    """The observation's own text (its wraps read as spaces), on one line, whole."""
    row = ("{type: Warning, reason: Unhealthy, object: Pod/api-1, count: 15, message: "
           "'Readiness probe failed: connection refused'}")
    last_state = ("last_state: {terminated: OOMKilled, exit_code: 137, finished: "
                  "'2026-11-30T09:54:40Z'}")
    for needle, quote in (("OOMKilled", last_state), ("exit_code: 137", last_state),
                          ("Readiness probe failed", row), ("Unhealthy", row)):
        assert cut_quote(WRAPPED, needle) == quote
        assert occurs(quote, WRAPPED)
    assert cut_quote(WRAPPED, "OOMKilled", max_chars=40) == "terminated: OOMKilled"
    assert cut_quote(WRAPPED, "connection refused", max_chars=60) == (
        "message: 'Readiness probe failed: connection refused'")


def test_quotes_start_at_a_field_not_mid_word() -> None:
    quote = cut_quote("  reason: 'Evicted: The node was low on resource: memory.'", "Evicted")
    assert quote is not None and quote.startswith("reason:")


def test_no_quote_for_words_the_text_does_not_have() -> None:
    assert cut_quote(WRAPPED, "x509") is None
    assert cut_quote(WRAPPED, "  ") is None


def test_rejection_sentence_round_trips() -> None:
    diagnosis = Diagnosis(category="oom_killed", culprit=Culprit(
        kind="Deployment", namespace="shop", name="checkout"), summary="s", confidence=0.5)
    text = rejection_message(diagnosis, "the memory was fine")
    assert text == REJECTION_PHRASE.format(category="oom_killed",
                                           culprit="Deployment shop/checkout",
                                           reason="the memory was fine")
    (found,) = parse_rejections(["noise", text, text])
    assert found.matches("oom_killed", "Deployment", "shop", "checkout")
    assert not found.matches("crash_loop", "Deployment", "shop", "checkout")


def test_the_note_reflexion_writes_is_the_sentence_the_analyzer_reads() -> None:
    diagnosis = Diagnosis(category="crash_loop", culprit=Culprit(
        kind="Deployment", namespace="shop", name="cart"), summary="s", confidence=0.3)
    doubted = rejection_note(diagnosis, ["confidence 0.30 is below 0.50"])
    refuted = rejection_note(diagnosis, ["a human said: it is the database"])
    (found,) = parse_rejections([doubted])
    assert found.matches("crash_loop", "Deployment", "shop", "cart") and found.doubted
    (found,) = parse_rejections([refuted])
    assert not found.doubted
    nothing = rejection_note(None, ["no diagnosis was submitted"])
    assert nothing.startswith(REJECTION_PREFIX) and parse_rejections([nothing]) == ()


def test_rejection_of_a_node_has_no_namespace() -> None:
    (found,) = parse_rejections(["The previous diagnosis node_failure of Node ip-10-0-1-2.ec2"
                                 ".internal was rejected: it was Ready"])
    assert found.name == "ip-10-0-1-2.ec2.internal" and found.namespace == ""
    assert found.matches("node_failure", "Node", "", "ip-10-0-1-2.ec2.internal")


def test_scope_matches_full_names_parts_and_not_generic_words() -> None:
    facts = facts_of(workloads(workload("ledger-api", "ledger"), workload("api-gateway", "edge"),
                               workload("storefront-web", "web")))
    scope = build_scope("the ledger api returns 503 and the storefront is slow", facts, NOW)
    assert scope.workloads[Ref("Deployment", "ledger", "ledger-api")] >= 0.8
    assert scope.workloads[Ref("Deployment", "web", "storefront-web")] >= 0.5
    assert Ref("Deployment", "edge", "api-gateway") not in scope.workloads
    assert "latency" in scope.symptoms and "errors" in scope.symptoms


def test_scope_reads_two_words_in_a_row_as_one_name() -> None:
    facts = facts_of(workloads(workload("giftlist-web", "giftlist"),
                               workload("guest-rsvp", "giftlist"),
                               workload("gift-cash-psp", "payments")))
    scope = build_scope("wedding guests get errors when they add a gift on the gift lists",
                        facts, NOW)
    assert scope.primary[0] == Ref("Deployment", "giftlist", "giftlist-web")
    assert Ref("Deployment", "payments", "gift-cash-psp") not in scope.workloads
    assert scope.namespaces.get("giftlist", 0.0) >= 0.5


def test_what_the_report_says_works_is_not_in_scope() -> None:
    facts = facts_of(workloads(workload("vod-subtitle-packager", "vod"),
                               workload("caption-aligner", "captions"),
                               workload("checkout", "shop"), workload("checkout-api", "shop")))
    scope = build_scope("subtitles on the live stream run way behind since 7pm. the replay/VOD "
                        "subtitles look fine. anyone around?", facts, NOW)
    assert Ref("Deployment", "vod", "vod-subtitle-packager") not in scope.workloads
    scope = build_scope("checkout is fine, but checkout-api throws 500s", facts, NOW)
    assert scope.primary == [Ref("Deployment", "shop", "checkout-api")]
    scope = build_scope("everything was fine until 14:10 when checkout started failing", facts,
                        NOW)
    assert Ref("Deployment", "shop", "checkout") in scope.workloads


def test_scope_reads_the_onset_and_obeys_focus_and_ignore() -> None:
    facts = facts_of(workloads(workload("checkout"), workload("cart"),
                               workload("payments-api", "payments")))
    scope = build_scope("checkout fails since ~09:05", facts, NOW, focus=("payments",),
                        ignored=("the redis warnings in cart",))
    assert scope.onset is not None and (scope.onset.hour, scope.onset.minute) == (9, 5)
    assert list(scope.workloads) == [Ref("Deployment", "payments", "payments-api")]
    assert scope.ignored_terms == {"redis", "cart"}


def _candidate(category: str, name: str, weight: float, namespace: str = "shop") -> Candidate:
    return Candidate(category, Ref("Deployment", namespace, name),
                     [Clue(weight, f"{category} clue", ("x",))])


def test_relevance_lets_the_named_workload_beat_a_louder_neighbour() -> None:
    facts = facts_of(workloads(workload("checkout"), workload("batch", "jobs")))
    scope = build_scope("checkout keeps failing", facts, NOW)
    best, other = rank([_candidate("crash_loop", "batch", 0.9, "jobs"),
                        _candidate("oom_killed", "checkout", 0.6)], scope, facts)
    assert best.culprit.name == "checkout" and other.relevance < 0.5


def test_callers_make_an_unnamed_callee_relevant() -> None:
    facts = facts_of(workloads(workload("frontend"), workload("checkout")))
    scope = build_scope("frontend returns 502", facts, NOW)
    calls = Graph()
    calls.add(Ref("Deployment", "shop", "frontend"), Ref("Deployment", "shop", "checkout"))
    (only,) = rank([_candidate("oom_killed", "checkout", 0.8)], scope, facts, graph=calls)
    assert only.relevance > 0.85


def test_precedence_exclusions_and_rejections() -> None:
    facts = facts_of(workloads(workload("api"), workload("api", "kube-system")))
    scope = build_scope("api is broken", facts, NOW)
    found = rank([_candidate("bad_rollout", "api", 0.7), _candidate("image_pull", "api", 0.6),
                  _candidate("crash_loop", "api", 0.9, "kube-system")], scope, facts,
                 excluded=frozenset({"kube-system"}))
    assert [c.category for c in found] == ["image_pull", "bad_rollout"]
    assert found[1].demoted_because
    (rejected,) = parse_rejections([REJECTION_PHRASE.format(
        category="image_pull", culprit="Deployment shop/api", reason="no")])
    again = rank([_candidate("bad_rollout", "api", 0.7), _candidate("image_pull", "api", 0.6)],
                 scope, facts, rejected=[rejected])
    assert [c.category for c in again] == ["bad_rollout"]


def test_ignored_topics_drop_clues_and_demote_culprits() -> None:
    facts = facts_of(workloads(workload("cart")))
    scope = build_scope("cart is slow", facts, NOW, ignored=("the redis warnings",))
    noisy = Candidate("resource_exhaustion", Ref("Deployment", "shop", "cart"),
                      [Clue(0.6, "cart logs 'redis: pool timeout'", ("redis",)),
                       Clue(0.2, "5xx ratio rose", ("5xx",))])
    (found,) = rank([noisy], scope, facts)
    assert [c.note for c in found.clues] == ["5xx ratio rose"]


def test_clues_merge_and_confidence_reflects_rivals() -> None:
    a = _candidate("oom_killed", "api", 0.6)
    b = _candidate("oom_killed", "api", 0.7)
    (merged,) = merge([a, b])
    assert len(merged.clues) == 1 and merged.strength == 0.7
    strong = Candidate("oom_killed", Ref("Deployment", "shop", "api"),
                       [Clue(0.8, "a", ("a",)), Clue(0.5, "b", ("b",))])
    rival = Candidate("crash_loop", Ref("Deployment", "shop", "api"), [Clue(0.89, "c", ("c",))])
    assert confidence(strong, None) > confidence(strong, rival)
    assert 0.05 <= confidence(rival, strong) <= 0.95


def test_a_rejection_for_doubt_alone_is_told_apart_from_a_refutation() -> None:
    doubt = ("The previous diagnosis network of Service yard/bay-scheduler was rejected: "
             "confidence 0.47 is below 0.50. What was missed: the evidence also supports a "
             "bad rollout; a failing dependency.")
    (found,) = parse_rejections([doubt])
    assert found.doubted and found.name == "bay-scheduler"
    refuted = ("The previous diagnosis network of Service yard/bay-scheduler was rejected: "
               "a human said: wrong, the selector is fine.")
    (found,) = parse_rejections([doubt, refuted])
    assert not found.doubted  # a human's word outweighs the evaluator's doubt
    (found,) = parse_rejections(["The previous diagnosis oom_killed of Node n1 was rejected: "
                                 "the evidence 'x' occurs in no observation; confidence 0.30 "
                                 "is below 0.50."])
    assert found.doubted


def test_a_doubted_answer_still_weighs_on_the_confidence_of_its_replacement() -> None:
    facts = facts_of(workloads(workload("record-matcher", "records")))
    scope = build_scope("record search is slow", facts, NOW)
    ref = Ref("Deployment", "records", "record-matcher")
    doubted = Candidate("cpu_throttling", ref, [Clue(0.3, "throttled"), Clue(0.1, "limit")])
    nudged = Candidate("dependency_failure", ref, [Clue(0.25, "timeouts")])
    _, alone = diagnosis_arguments([nudged], [], facts, scope)
    _, judged = diagnosis_arguments([nudged], [], facts, scope, [doubted])
    assert judged < alone
