"""Tree-of-Thought: rival root-cause hypotheses, each tested until one stands.

After each step the model proposes up to k hypotheses (category, culprit, what would
confirm and what would refute each) and scores them on the evidence; before the next, the
engine picks which to expand and asks for the calls that best tell them apart, in a user
message: breadth-first (`bfs`, the best `beam` open ones, re-ranked every step) or
depth-first (`dfs`, one hypothesis dug into until it is confirmed or refuted, then
backtracking to the best open rival). It concludes when one hypothesis is confirmed and
every rival within `margin` of its score is refuted; the hard limits still apply.

There is no second loop: this is a `StepGuide` of the one ReAct loop, which runs the tools,
takes the constraints, keeps the budgets and emits the events. A hypothesis the humans rule
out is refuted and never proposed again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import ValidationError

from engines.constraints import ConstraintInbox, ConstraintSet
from engines.diagnosis import Diagnosis, RuledOut
from engines.events import Event, EventSink, HypothesesUpdated, InvestigationStopped, discard
from engines.hypotheses import (
    Hypothesis,
    HypothesisModel,
    human_refusals,
    hypothesis_id,
    unconfirmed,
)
from engines.hypotheses_asked import operations_for
from engines.incident import Incident
from engines.model import Model, ModelRequest, Usage
from engines.react import (
    AfterStep,
    EngineConfig,
    InvestigationResult,
    ReactEngine,
    RunState,
    ToolRunner,
    announce,
    emit,
)

Search = Literal["bfs", "dfs"]
SEARCHES: tuple[Search, ...] = ("bfs", "dfs")


@dataclass(frozen=True, slots=True)
class TotConfig:
    k: int = 4  # hypotheses proposed
    beam: int = 2  # expanded per step, breadth-first
    search: Search = "bfs"
    margin: float = 0.7  # rivals scoring at least this share of the leader must be refuted
    # The router's preset for a simple incident: an open leader scoring at least this, with
    # every rival under `dominance` of its score, ends the search unconfirmed (0: never).
    settle_at: float = 0.0
    dominance: float = 0.25


class TreeSearch:
    """The hypothesis board and the choice of what to expand: a StepGuide."""

    def __init__(self, ops: HypothesisModel, config: TotConfig) -> None:
        self.ops = ops
        self.config = config
        self.board: dict[str, Hypothesis] = {}
        self.focus: str | None = None  # dfs: the hypothesis being dug into
        self.expanded: list[tuple[str, ...]] = []  # what each step expanded, in order
        self._counted = Usage()
        self._proposed = False  # asked for proposals at least once

    # ------------------------------------------------------------ the StepGuide hooks

    async def before_ask(self, run: RunState, request: ModelRequest) -> Sequence[str]:
        if not self.board and run.observations and not self._proposed:
            await self._propose(run, request)  # it starts from calls made before it (the
            # router's survey, a log without a board): propose from them at once
        self._humans(run.constraints)
        expanding = self._select(run.constraints)
        if not self.board:
            return ()
        await self._publish(run, expanding)
        if not expanding:
            return ()
        self.expanded.append(expanding)
        return (self._note(expanding),)

    async def after_step(self, run: RunState, request: ModelRequest) -> str | None:
        live = [h for h in self.board.values() if h.state != "refuted"]
        if live:
            for h in await self.ops.score(request, live):
                if h.id in self.board:
                    self.board[h.id] = h
        self._humans(run.constraints)
        why = self._concluded()
        if why is None and sum(h.state == "open" for h in self.board.values()) < \
                self.config.beam:
            await self._propose(run, request)
        self._count(run)
        if why:
            await self._publish(run, ())
        return why

    async def _propose(self, run: RunState, request: ModelRequest) -> None:
        self._proposed = True
        for h in await self.ops.propose(request, self.config.k):
            if h.id not in self.board and not run.constraints.rules_out(
                    h.category, h.culprit.name):
                self.board[h.id] = h  # a refuted one stays refuted: never re-proposed
        self._count(run)

    def amend(self, diagnosis: Diagnosis) -> Diagnosis:
        """The rivals considered and the evidence against each, on the submitted answer; an
        answer the search did not establish keeps a best guess's confidence."""
        chosen = (diagnosis.category, diagnosis.culprit)
        against = list(diagnosis.ruled_out)
        for h in self.board.values():
            if h.state != "refuted" or (h.category, h.culprit) == chosen:
                continue
            try:
                against.append(RuledOut.model_validate(
                    {"category": h.category, "culprit": h.culprit, "reason": h.refuted_by}))
            except ValidationError:
                continue
        amended = diagnosis.model_copy(update={"ruled_out": against})
        why = self._standing(diagnosis)
        return amended if why is None else unconfirmed(amended, why)

    def _standing(self, diagnosis: Diagnosis) -> str | None:
        """Why the submitted answer is not established on the board, or None when it is:
        its hypothesis confirmed (or, under the router's simple preset, dominating every
        rival) and no rival within `margin` of it still open."""
        mine = self.board.get(hypothesis_id(diagnosis.category, diagnosis.culprit))
        if mine is None:
            return "the search never tested it as a hypothesis"
        if mine.state != "confirmed" and not (self._settled() and self.ranked()[0] is mine):
            return "its hypothesis was not confirmed by the evidence"
        close = [h for h in self.board.values() if h is not mine and h.state == "open"
                 and h.score >= self.config.margin * mine.score]
        return f"{close[0].label} is still open" if close else None

    # ------------------------------------------------------------ the search

    def restore(self, events: Sequence[Event]) -> None:
        """The board of an interrupted run: its last published state."""
        last = next((e for e in reversed(events) if isinstance(e, HypothesesUpdated)), None)
        if last is not None:
            self.board = {h.id: h for h in last.hypotheses}
            self.focus = last.expanding[0] if last.expanding else None

    def rewound(self, events: Sequence[Event]) -> None:
        """Rolled back: the board as it was published at the step gone back to."""
        self.board, self.focus = {}, None
        self.restore(events)

    def ranked(self) -> list[Hypothesis]:
        return sorted(self.board.values(), key=lambda h: (-h.score, h.id))

    def _select(self, constraints: ConstraintSet) -> tuple[str, ...]:
        wanted = {v.lower() for v in constraints.focus}
        open_ = [h for h in self.ranked() if h.state == "open"]
        dug = [h for h in open_ if h.culprit.name.lower() in wanted
               or h.culprit.namespace.lower() in wanted]  # "dig into" goes first
        order = dug + [h for h in open_ if h not in dug]
        if not order:
            return ()
        if self.config.search == "bfs":
            return tuple(h.id for h in order[: self.config.beam])
        if self.focus is None or self.board[self.focus].state != "open" or (
                dug and self.board[self.focus] not in dug):
            self.focus = order[0].id  # backtrack to the best open rival
        return (self.focus,)

    def _concluded(self) -> str | None:
        confirmed = [h for h in self.ranked() if h.state == "confirmed"]
        if not confirmed:
            return self._settled()
        best = confirmed[0]
        close = [h for h in self.board.values() if h is not best and h.state != "refuted"
                 and h.score >= self.config.margin * best.score]
        if close:
            return None
        refuted = [h for h in self.board.values() if h.state == "refuted"]
        rivals = "; ".join(f"{h.label}: {h.refuted_by}" for h in refuted[:3]) or "none close"
        return f"{best.label} is confirmed and its rivals are refuted ({rivals})"

    def _settled(self) -> str | None:
        """A simple incident's search ends once one open hypothesis dominates every rival."""
        live = [h for h in self.ranked() if h.state != "refuted"]
        if not self.config.settle_at or not live or live[0].score < self.config.settle_at:
            return None
        best, rivals = live[0], live[1:]
        if any(h.score >= self.config.dominance * best.score for h in rivals):
            return None
        return f"{best.label} dominates (score {best.score:.2f}, every rival under " \
               f"{self.config.dominance:.0%} of it)"

    def _humans(self, constraints: ConstraintSet) -> None:
        marked = human_refusals(list(self.board.values()), constraints)
        self.board = {h.id: h for h in marked}

    def _note(self, expanding: tuple[str, ...]) -> str:
        lines = [f"- {self.board[i].label}: confirmed if {self.board[i].confirm_by}; refuted "
                 f"if {self.board[i].refute_by}" for i in expanding]
        refuted = [h.label for h in self.board.values() if h.state == "refuted"]
        said = ("Hypotheses to test now. Choose the tool calls that best tell them apart, "
                "or submit when one is confirmed and its rivals refuted:\n" + "\n".join(lines))
        if refuted:
            said += "\nRefuted, do not pursue: " + "; ".join(refuted)
        return said

    async def _publish(self, run: RunState, expanding: tuple[str, ...]) -> None:
        await run.emit(HypothesesUpdated(run.incident.id, run.step, tuple(self.ranked()),
                                         expanding, self.config.search))

    def _count(self, run: RunState) -> None:
        """What the operations cost (an LLM's turns) counts in the run's budget."""
        now = self.ops.usage
        run.usage = run.usage + Usage(now.input_tokens - self._counted.input_tokens,
                                      now.output_tokens - self._counted.output_tokens)
        self._counted = now


class TotEngine:
    """ReAct steps guided by a tree of hypotheses."""

    name = "tot"

    def __init__(self, config: EngineConfig | None = None, tot: TotConfig | None = None) -> None:
        self.react = ReactEngine(config)
        self.config = self.react.config
        self.tot = tot or TotConfig()
        self.last_search: TreeSearch | None = None

    async def run(
        self,
        incident: Incident,
        model: Model,
        toolset: ToolRunner,
        inbox: ConstraintInbox | None = None,
        sink: EventSink = discard,
        *,
        constraints: ConstraintSet | None = None,
        lessons: Sequence[str] = (),
        after_step: AfterStep | None = None,
        resume: Sequence[Event] = (),
    ) -> InvestigationResult:
        if not resume:
            await announce(sink, incident, model, self.name, self.config.max_steps, lessons)
        self.last_search = None
        result = await self.attempt(incident, model, toolset, inbox, sink,
                                    constraints=constraints, lessons=lessons,
                                    after_step=after_step, resume=resume)
        await emit(
            sink, InvestigationStopped(incident.id, result.steps, result.reason, result.detail))
        return result

    async def attempt(
        self,
        incident: Incident,
        model: Model,
        toolset: ToolRunner,
        inbox: ConstraintInbox | None = None,
        sink: EventSink = discard,
        *,
        constraints: ConstraintSet | None = None,
        lessons: Sequence[str] = (),
        after_step: AfterStep | None = None,
        resume: Sequence[Event] = (),
        start_step: int = 0,
        notes: Sequence[str] = (),
    ) -> InvestigationResult:
        """One try, without the started and stopped events of a whole run. The board
        carries over to a later try of the same run (the router's Reflexion attempts), so
        what was refuted stays refuted and is never proposed again."""
        search = self.last_search
        if search is None:
            search = self.last_search = TreeSearch(operations_for(model), self.tot)
        search.restore(resume)
        return await self.react.attempt(
            incident, model, toolset, inbox, sink, constraints=constraints, lessons=lessons,
            after_step=after_step, resume=resume, start_step=start_step, notes=notes,
            guide=search)
