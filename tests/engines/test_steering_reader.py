"""Replies read by the rules, and by a model through the real `openai` client and the strict
loopback API when the rules are unsure; the corpora's scores as a regression."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engines.openai_model import OpenAIModel
from engines.steering import Vocabulary, read_reply, understand
from engines.steering.corrections import is_confirmation, is_correction
from engines.steering.model_reader import READING_TOOL
from tests.bench.bench_replies import DATA, score_corpus
from tests.engines.test_openai_strict import FAST
from tests.fakes.openai_server import Completion, FakeOpenAIServer, plain_http, tool_call

VOCAB = Vocabulary.of(["shop", "payments", "redis", "monitoring"],
                      ["checkout", "cart", "payments-db", "redis-master"],
                      ["k8s_pod_logs", "k8s_events", "logs_search"])


def kinds(text: str, vocab: Vocabulary = VOCAB) -> set[tuple[str, str]]:
    return {(c.kind, c.value) for c in read_reply(text, vocab).constraints}


@pytest.mark.parametrize(("text", "want"), [
    # the examples, one by one
    ("stay out of payments", {("exclude_namespace", "payments")}),
    ("ignore the redis warnings", {("rule", "ignore the redis warnings")}),
    ("please stop looking at logs and check metrics",
     {("exclude_source", "logs"), ("focus_source", "metrics")}),
    ("it's not the database", {("rule_out", "database")}),
    ("it's fixed, thanks", set()),
    ("no worries", set()),
    ("skip kube-system and check the payments db",
     {("exclude_namespace", "kube-system"), ("focus_workload", "payments-db")}),
    ("we deployed payments at 14:02", {("fact", "we deployed payments at 14:02")}),
    ("since 14:10 only", {("time_window", "since 14:10")}),
    ("read-only please", {("forbid_writes", "")}),
    ("hold on", {("pause", "")}),
    ("stop", {("stop", "")}),
    ("don't use `k8s_events`", {("ban_tool", "k8s_events")}),
    ("para ya, gracias", {("stop", "")}),
    ("konzentrier dich auf checkout", {("focus_workload", "checkout")}),
])
def test_common_phrasings(text: str, want: set[tuple[str, str]]) -> None:
    assert kinds(text) == want


def test_a_namespace_is_only_excluded_when_one_is_named() -> None:
    assert kinds("stay out of billing") == set()  # no namespace billing in this cluster
    assert kinds("stay out of the billing namespace") == {("exclude_namespace", "billing")}


def test_questions_and_chat() -> None:
    assert read_reply("what have you checked so far?", VOCAB).question
    assert read_reply("why do you think it's the db?", VOCAB).constraints == ()
    reading = read_reply("<@UDANA> can you page the db team?", VOCAB)
    assert reading.to_someone_else and reading.constraints == ()


def test_corrections_after_the_end() -> None:
    assert is_correction("wrong, it was the node")
    assert is_correction("nope, cert expired on the ingress")
    assert not is_correction("it's fixed, thanks")
    assert not is_correction("no worries")


@pytest.mark.parametrize("text", ["right", "Correct!", "confirmed.", "yes, that was it",
                                  "spot on, thanks", "<@UBOT> that's right", "good catch"])
def test_a_plain_agreement_confirms_the_diagnosis(text: str) -> None:
    assert is_confirmation(text, "UBOT")


@pytest.mark.parametrize("text", ["thanks!", "ok", "it's fixed", "right?", "wrong",
                                  "right, but it was the database", "not right",
                                  "yes but check redis too", "correct me if I'm wrong"])
def test_thanks_questions_and_buts_do_not_confirm(text: str) -> None:
    assert not is_confirmation(text, "UBOT")


async def test_the_model_reads_what_the_rules_are_unsure_of() -> None:
    text = "the payments side feels off to me, poke around there"
    assert not read_reply(text, VOCAB).confident
    answer = {"constraints": [{"kind": "focus_namespace", "value": "payments"},
                              {"kind": "exclude_namespace", "value": "ledger"},  # invented
                              {"kind": "teleport", "value": "x"}],  # not a kind
              "question": False}
    async with FakeOpenAIServer() as server:
        server.script(Completion(None, (tool_call(READING_TOOL, answer),)))
        async with OpenAIModel("gpt-test", base_url=server.base_url, api_key="sk-test",
                               retry=FAST, http_client=plain_http()) as model:
            reading = await understand(text, VOCAB, model, author="UBOB")
        sent = server.chat_requests[0]
    assert {(c.kind, c.value) for c in reading.constraints} == {("focus_namespace", "payments")}
    assert sent["tool_choice"] == {"type": "function", "function": {"name": READING_TOOL}}
    assert not server.refusals


async def test_a_model_answer_that_is_not_json_leaves_the_rules_reading() -> None:
    text = "hmm, try the thing from last week"
    async with FakeOpenAIServer() as server:
        server.script(Completion(None, (tool_call(READING_TOOL, "{not json"),)))
        async with OpenAIModel("gpt-test", base_url=server.base_url, api_key="sk-test",
                               retry=FAST, http_client=plain_http()) as model:
            reading = await understand(text, VOCAB, model)
    assert reading == read_reply(text, VOCAB)


async def test_sure_readings_never_reach_the_model() -> None:
    async with FakeOpenAIServer() as server:
        async with OpenAIModel("gpt-test", base_url=server.base_url, api_key="sk-test",
                               retry=FAST, http_client=plain_http()) as model:
            await understand("stay out of payments", VOCAB, model)
        assert server.chat_requests == []


def test_triage_reply_json() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "reply", "skip kube-system and check the cart logs",
         "--namespace", "kube-system", "--workload", "cart", "--json"],
        capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parents[2])
    assert json.loads(done.stdout) == {"constraints": [
        {"kind": "exclude_namespace", "value": "kube-system"},
        {"kind": "focus_workload", "value": "cart"},
        {"kind": "focus_source", "value": "logs"}], "question": False}


@pytest.mark.parametrize(("corpus", "floor"), [("replies", 0.97), ("replies2", 0.97),
                                               ("replies3", 0.84)])
def test_the_corpora_do_not_regress(corpus: str, floor: float) -> None:
    """Regression only. The reader was tuned on `replies`; `replies2` and `replies3` were
    each scored once, blind, before any change made because of them (85.2% and 81.1% of the
    replies the rules claimed; README), and tuned on afterwards. These floors only guard
    against going back: they measure nothing new."""
    score = score_corpus(DATA / corpus)
    assert score.claimed_right / score.claimed >= floor
    assert score.false_namespace == []
    assert score.corrections_right / score.corrections >= 0.95


def test_another_teams_word_that_their_side_is_healthy_is_a_fact_not_a_rule_out() -> None:
    vocab = Vocabulary.of(namespaces=("access", "billing"), workloads=("authz", "billing-api"))
    relayed = read_reply("authz team says their pods are healthy and their last deploy was "
                         "on Sunday", vocab).constraints
    assert [c.kind for c in relayed] == ["fact"]  # healthy pods do not clear a bad cert
    assert [(c.kind, c.value) for c in read_reply("it's not authz", vocab).constraints] == [
        ("rule_out", "authz")]
    assert [(c.kind, c.value) for c in read_reply("authz is fine", vocab).constraints] == [
        ("rule_out", "authz")]  # the human's own ruling still rules it out
