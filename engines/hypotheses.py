"""Root-cause hypotheses and the model operations the search engines need on them.

Tree-of-Thought proposes rival hypotheses and scores them on the evidence; Graph-of-Thought
decomposes an incident into sub-problems, merges their answers and verifies the result. A
model provides these operations (`HypothesisModel`): the analyzer from its ranked
candidates, with no LLM; any other model through `complete`, by forced tool calls with a
JSON schema (engines/hypotheses_asked.py). The engines only see the protocol, so they never
know which model answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal, Protocol, runtime_checkable

from engines.constraints import ConstraintSet
from engines.diagnosis import Culprit, Diagnosis
from engines.model import ModelRequest, Usage

HypothesisState = Literal["open", "confirmed", "refuted"]
HUMAN_RULED_OUT = "ruled out by a human"


def hypothesis_id(category: str, culprit: Culprit) -> str:
    """A stable id: the same cause proposed twice is the same hypothesis (and the same
    button on the Slack board)."""
    where = f"{culprit.namespace}/" if culprit.namespace else ""
    return f"{category}:{culprit.kind}/{where}{culprit.name}"


@dataclass(frozen=True, slots=True)
class Hypothesis:
    """One candidate root cause: what would confirm it, what would refute it, how well the
    evidence so far supports it (0..1), and its state with the evidence behind it."""

    id: str
    category: str
    culprit: Culprit
    confirm_by: str = ""
    refute_by: str = ""
    score: float = 0.0
    state: HypothesisState = "open"
    evidence: tuple[str, ...] = ()
    refuted_by: str = ""

    @classmethod
    def of(cls, category: str, culprit: Culprit, **fields: object) -> Hypothesis:
        return cls(hypothesis_id(category, culprit), category, culprit, **fields)  # type: ignore[arg-type]

    @property
    def label(self) -> str:
        return f"{self.category.replace('_', ' ')} in {self.culprit}"

    def refute(self, why: str) -> Hypothesis:
        return replace(self, state="refuted", refuted_by=why)


@dataclass(frozen=True, slots=True)
class SubProblem:
    """A part of the incident got solves on its own: a focus in words and the tools it may
    use (by name)."""

    name: str
    focus: str
    tools: tuple[str, ...]


@runtime_checkable
class HypothesisModel(Protocol):
    """The operations of the search engines. `usage` is what they cost so far (0 for code)."""

    @property
    def usage(self) -> Usage: ...

    async def propose(self, request: ModelRequest, k: int) -> list[Hypothesis]: ...

    async def score(self, request: ModelRequest,
                    hypotheses: Sequence[Hypothesis]) -> list[Hypothesis]: ...

    async def decompose(self, request: ModelRequest) -> list[SubProblem]: ...

    async def merge(self, request: ModelRequest,
                    partials: Sequence[Diagnosis]) -> Diagnosis | None: ...

    async def verify(self, request: ModelRequest, diagnosis: Diagnosis) -> list[str]: ...


UNCONFIRMED = 0.55  # the most confidence an answer its search did not establish may claim


def unconfirmed(diagnosis: Diagnosis, why: str) -> Diagnosis:
    """An answer the hypothesis search submitted without establishing it (not confirmed,
    a close rival still open, a verifier's objection left standing) is a best guess: its
    confidence stays under the 0.6 an on-call engineer acts on, and the summary says why."""
    if diagnosis.category == "unknown" or diagnosis.confidence <= UNCONFIRMED:
        return diagnosis
    return diagnosis.model_copy(update={
        "confidence": UNCONFIRMED, "summary": f"{diagnosis.summary} Not confirmed: {why}."})


def human_refusals(hypotheses: Sequence[Hypothesis],
                   constraints: ConstraintSet) -> list[Hypothesis]:
    """Hypotheses the humans ruled out (a `rule_out` constraint) marked refuted, saying so."""
    out = []
    for h in hypotheses:
        if h.state != "refuted" and constraints.rules_out(h.category, h.culprit.name):
            h = h.refute(HUMAN_RULED_OUT)
        out.append(h)
    return out


SOURCE_TOOLS: dict[str, tuple[str, str]] = {
    # name: (tool-name prefix, focus in words)
    "cluster": ("k8s_", "cluster state and changes: pods, events, rollouts, nodes, quotas"),
    "logs": ("logs_", "logs: error patterns and their counts over time"),
    "metrics": ("metrics_", "metrics: saturation, latency, errors and throttling"),
}
SURVEY_TOOLS = ("k8s_list_workloads",)  # every sub-problem may see what exists


def split_by_source(tool_names: Sequence[str]) -> list[SubProblem]:
    """The default decomposition: one sub-problem per signal source that has tools, each
    also allowed the cluster survey so it knows which workloads exist."""
    problems = []
    survey = tuple(t for t in SURVEY_TOOLS if t in tool_names)
    for name, (prefix, focus) in SOURCE_TOOLS.items():
        own = tuple(t for t in tool_names if t.startswith(prefix))
        if own:
            problems.append(SubProblem(name, focus, tuple(dict.fromkeys((*survey, *own)))))
    return problems


def board_line(h: Hypothesis) -> str:
    """One hypothesis as the board and the console show it."""
    why = f" ({h.refuted_by})" if h.state == "refuted" and h.refuted_by else ""
    return f"{h.state} {h.score:.2f} {h.label}{why}"


def limits_text(limits: dict[str, float]) -> str:
    """The router's limits in words: "max 8 steps, min 0, 120 s, 200000 tokens"."""
    names = {"max_steps": "max {:g} steps", "min_steps": "min {:g}",
             "timeout_seconds": "{:g} s", "token_budget": "{:g} tokens",
             "settle_at": "settles at a score of {:g}"}
    return ", ".join(names[k].format(v) for k, v in limits.items() if k in names)
