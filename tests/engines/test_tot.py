"""Tree-of-Thought on the one ReAct loop: what it expands (bfs against dfs), when it
concludes, what a human's rule-out does, the rivals on the diagnosis, and the analyzer's
operations on a bundled scenario."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from bot.wiring import investigate, sandbox_setting
from engines.analyzer import AnalyzerModel
from engines.constraints import Constraint, ConstraintInbox, ConstraintSet
from engines.diagnosis import SUBMIT_TOOL, Culprit, Diagnosis, is_correct
from engines.events import Event, HypothesesUpdated, InvestigationStopped
from engines.hypotheses import (
    HUMAN_RULED_OUT,
    UNCONFIRMED,
    Hypothesis,
    HypothesisModel,
    SubProblem,
)
from engines.incident import Incident
from engines.model import ModelReply, ModelRequest, ToolCall, Usage
from engines.react import EngineConfig
from engines.tot import Search, TotConfig, TotEngine, TreeSearch
from tests.engines.test_e2e_openai import DIAGNOSIS, SCENARIO, k8s_pod_status
from tools.context import ToolContext
from tools.registry import tool
from tools.sources.sandbox import sandbox_sources
from tools.toolset import Toolset


@tool(describe="Asking {question}")
async def k8s_probe(ctx: ToolContext, question: str) -> str:
    """Answers a question with a new observation each time (the loop sees progress).

    Args:
        question: What to ask.
    """
    return f"checkout-7d9f-abcde OOMKilled; answer to {question}"


CHECKOUT = Culprit(kind="Deployment", namespace="shop", name="checkout")
CART = Culprit(kind="Deployment", namespace="shop", name="cart")
A = Hypothesis.of("oom_killed", CHECKOUT, confirm_by="OOMKilled", refute_by="no OOMKilled")
B = Hypothesis.of("bad_rollout", CHECKOUT, confirm_by="new revision fails")
SUBMITTED = {**DIAGNOSIS, "category": "bad_rollout"}  # B, which the scripts confirm
C = Hypothesis.of("dependency_failure", CART, confirm_by="cart errors")


class BoardModel:
    """A model double with the search operations: it proposes A, B and C every time (so
    only the engine can keep a refuted one out) and scores them by a script per step."""

    def __init__(self, scores: dict[int, dict[str, tuple[float, str]]],
                 submit_at: int = 99) -> None:
        self.scores = scores  # step -> id -> (score, state)
        self.submit_at = submit_at
        self.proposals = 0

    @property
    def name(self) -> str:
        return "board"

    @property
    def usage(self) -> Usage:
        return Usage()

    async def complete(self, request: ModelRequest) -> ModelReply:
        if request.final or request.step >= self.submit_at:
            return ModelReply("done", (ToolCall(f"s{request.step}", SUBMIT_TOOL, SUBMITTED,
                                                json.dumps(SUBMITTED)),))
        args = {"question": f"q{request.step}"}  # a new question each step
        return ModelReply("look", (ToolCall(f"c{request.step}", "k8s_probe", args,
                                            json.dumps(args)),))

    async def propose(self, request: ModelRequest, k: int) -> list[Hypothesis]:
        self.proposals += 1
        return [A, B, C][:k]

    async def score(self, request: ModelRequest,
                    hypotheses: Sequence[Hypothesis]) -> list[Hypothesis]:
        table = self.scores.get(request.step, {})
        out = []
        for h in hypotheses:
            score, state = table.get(h.id, (h.score or 0.5, "open"))
            why = f"step {request.step} refutes it" if state == "refuted" else ""
            out.append(Hypothesis(h.id, h.category, h.culprit, h.confirm_by, h.refute_by,
                                  score, state, (), why))  # type: ignore[arg-type]
        return out

    async def decompose(self, request: ModelRequest) -> list[SubProblem]:
        return []

    async def merge(self, request: ModelRequest, partials: Sequence[Diagnosis]) -> None:
        return None

    async def verify(self, request: ModelRequest, diagnosis: Diagnosis) -> list[str]:
        return []


async def run_tot(model: Any, search: Search = "bfs", *, inbox: ConstraintInbox | None = None,
                  max_steps: int = 6, after: dict[int, Constraint] | None = None,
                  ) -> tuple[TotEngine, list[Event], Any]:
    constraints = ConstraintSet()
    context = ToolContext(now=SCENARIO.now, sources=sandbox_sources(SCENARIO),
                          constraints=constraints)
    toolset = Toolset([k8s_probe, k8s_pod_status], context)
    events: list[Event] = []
    inbox = inbox or ConstraintInbox()

    async def sink(event: Event) -> None:
        events.append(event)

    async def after_step(step: int) -> None:
        if after and step in after:
            inbox.put(after[step])

    engine = TotEngine(EngineConfig(max_steps=max_steps, timeout_seconds=20),
                       TotConfig(k=3, beam=2, search=search))
    result = await engine.run(Incident(SCENARIO.report, now=SCENARIO.now), model, toolset,
                              inbox, sink, constraints=constraints, after_step=after_step)
    return engine, events, result


SCORES = {
    1: {},  # proposals come after step 1
    2: {A.id: (0.8, "open"), B.id: (0.6, "open"), C.id: (0.5, "open")},
    3: {A.id: (0.4, "open"), B.id: (0.7, "open"), C.id: (0.5, "open")},
    4: {A.id: (0.1, "refuted"), B.id: (0.7, "open"), C.id: (0.5, "open")},
    5: {B.id: (0.9, "confirmed"), C.id: (0.1, "refuted")},
}


def test_the_double_is_a_hypothesis_model() -> None:
    assert isinstance(BoardModel({}), HypothesisModel)
    assert isinstance(AnalyzerModel(), HypothesisModel)


async def test_bfs_expands_the_best_beam_and_reranks_each_step() -> None:
    engine, _, result = await run_tot(BoardModel(SCORES), "bfs")
    assert engine.last_search is not None
    assert engine.last_search.expanded == [
        (B.id, C.id),  # step 2: the proposals, unscored yet: by id
        (A.id, B.id),  # step 3: A 0.8, B 0.6
        (B.id, C.id),  # step 4: B overtook A: re-ranked
        (B.id, C.id),  # step 5: A refuted
    ]
    assert result.reason == "diagnosed"
    assert "confirmed" in result.detail or result.steps == 5


DIG = {
    2: {A.id: (0.8, "open"), B.id: (0.6, "open"), C.id: (0.5, "open")},
    3: {A.id: (0.8, "open"), B.id: (0.1, "refuted"), C.id: (0.5, "open")},
    4: {A.id: (0.8, "open"), C.id: (0.5, "open")},
    5: {A.id: (0.9, "confirmed"), C.id: (0.1, "refuted")},
}


async def test_dfs_digs_into_one_until_it_is_refuted_then_backtracks() -> None:
    engine, _, result = await run_tot(BoardModel(DIG), "dfs")
    assert engine.last_search is not None
    assert engine.last_search.expanded == [
        (B.id,),  # step 2: the first proposal (unscored: by id)
        (B.id,),  # step 3: B still open, though A is now ahead: depth first
        (A.id,),  # step 4: B refuted: backtrack to the best open rival
        (A.id,),  # step 5
    ]
    assert result.diagnosis is not None and result.steps == 5
    bfs, _, _ = await run_tot(BoardModel(DIG), "bfs")
    assert bfs.last_search is not None
    assert bfs.last_search.expanded == [(B.id, C.id), (A.id, B.id), (A.id, C.id),
                                        (A.id, C.id)]


async def test_it_concludes_when_one_is_confirmed_and_close_rivals_refuted() -> None:
    _, events, result = await run_tot(BoardModel(SCORES), max_steps=10)
    assert result.steps == 5 and result.reason == "diagnosed"
    stopped = [e for e in events if isinstance(e, InvestigationStopped)][-1]
    assert stopped.reason == "diagnosed"
    board = [e for e in events if isinstance(e, HypothesesUpdated)][-1]
    assert {h.id: h.state for h in board.hypotheses} == {
        A.id: "refuted", B.id: "confirmed", C.id: "refuted"}
    assert result.diagnosis is not None
    ruled = {(r.category, r.culprit.name): r.reason for r in result.diagnosis.ruled_out}
    assert ruled == {("oom_killed", "checkout"): "step 4 refutes it",
                     ("dependency_failure", "cart"): "step 5 refutes it"}
    assert result.diagnosis.confidence == DIAGNOSIS["confidence"]  # established: as given


async def test_an_answer_the_search_did_not_establish_keeps_a_guess_s_confidence() -> None:
    """Submitted while its hypothesis is open, or with a close rival open: under 0.6, and
    the summary says why; a confirmed one with every close rival refuted is left as is."""
    _, _, result = await run_tot(BoardModel(SCORES, submit_at=4))
    assert result.diagnosis is not None and result.diagnosis.confidence == UNCONFIRMED
    assert "Not confirmed: its hypothesis was not confirmed" in result.diagnosis.summary
    rival = {**SCORES, 4: {B.id: (0.9, "confirmed"), C.id: (0.8, "open")}}
    _, _, result = await run_tot(BoardModel(rival, submit_at=5))
    assert result.diagnosis is not None and result.diagnosis.confidence == UNCONFIRMED
    assert "dependency failure in Deployment shop/cart is still open" in \
        result.diagnosis.summary


async def test_an_open_close_rival_keeps_it_going() -> None:
    scores = {**SCORES, 5: {B.id: (0.9, "confirmed"), C.id: (0.8, "open")}}
    _, _, result = await run_tot(BoardModel(scores), max_steps=7)
    assert result.steps == 7  # C stays within 0.7 of B: no conclusion before the budget


async def test_a_rule_out_removes_a_hypothesis_and_it_is_never_proposed_again() -> None:
    model = BoardModel({2: {A.id: (0.9, "open"), B.id: (0.5, "open"), C.id: (0.4, "open")},
                        3: {C.id: (0.1, "refuted")}, 4: {}, 5: {}})
    ruling = Constraint("rule_out", "it's not an OOM", "oom_killed", "alice", "1.1")
    _, events, result = await run_tot(model, after={2: ruling}, max_steps=6)
    boards = [e for e in events if isinstance(e, HypothesesUpdated)]
    after = [b for b in boards if b.step >= 3]
    assert after and model.proposals >= 2  # the double proposed A again after the rule-out
    for board in after:
        states = {h.id: h for h in board.hypotheses}
        assert states[A.id].state == "refuted"
        assert states[A.id].refuted_by == HUMAN_RULED_OUT
        assert A.id not in board.expanding
    assert result.diagnosis is not None
    assert ("oom_killed", "checkout") in {(r.category, r.culprit.name)
                                          for r in result.diagnosis.ruled_out}


async def test_the_analyzer_tot_diagnoses_a_bundled_scenario_with_rivals() -> None:
    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    result = await investigate(SCENARIO.report, sandbox_setting(SCENARIO), AnalyzerModel(),
                               engine="tot", sink=sink)
    assert is_correct(result.diagnosis, SCENARIO.truth)
    boards = [e for e in events if isinstance(e, HypothesesUpdated)]
    assert boards and any(h.state == "confirmed" for h in boards[-1].hypotheses)


def test_the_simple_preset_settles_once_one_hypothesis_dominates() -> None:
    """The router's preset for a simple incident: an open leader far above every rival
    ends the search; a rival within `dominance` of it, or a weak leader, does not."""
    def search(scores: dict[str, float], settle_at: float) -> TreeSearch:
        tree = TreeSearch(BoardModel({}), TotConfig(settle_at=settle_at))
        tree.board = {h.id: replace(h, score=scores[h.id]) for h in (A, B, C)}
        return tree

    assert search({A.id: 0.94, B.id: 0.15, C.id: 0.01}, 0.9)._concluded() is not None
    assert search({A.id: 0.94, B.id: 0.3, C.id: 0.01}, 0.9)._concluded() is None  # close
    assert search({A.id: 0.8, B.id: 0.1, C.id: 0.01}, 0.9)._concluded() is None  # weak
    assert search({A.id: 0.94, B.id: 0.15, C.id: 0.01}, 0.0)._concluded() is None  # off
