"""Graph-of-Thought: decompose, solve the parts concurrently, merge, verify, fix.

The model splits the incident into sub-problems by signal source (cluster state and
changes, logs, metrics); each is a short ReAct attempt restricted to its tools, all run at
once. Their calls and observations are merged into one turn of a shared transcript, the
model merges the partial answers into one diagnosis, and a verifier checks it: every quote
must occur in an observation, the culprit's timeline must fit the symptom's onset
(engines/verification.py), and the model must find no stronger signal left unexplained.
When it fails, a ReAct attempt over all the tools starts from the merged transcript with
the verifier's feedback, once or twice. Every step is the one ReAct machinery (tools,
constraints, budgets, events); the partial answers are shown as hypotheses, not diagnoses.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from engines import prompts
from engines._loop import call_key
from engines.constraints import ConstraintInbox, ConstraintSet
from engines.diagnosis import SUBMIT_TOOL, Diagnosis
from engines.events import (
    DiagnosisSubmitted,
    Event,
    EventSink,
    HypothesesUpdated,
    InvestigationStopped,
    ThoughtRecorded,
    discard,
)
from engines.hypotheses import (
    Hypothesis,
    HypothesisModel,
    SubProblem,
    hypothesis_id,
    unconfirmed,
)
from engines.hypotheses_asked import operations_for
from engines.incident import Incident
from engines.model import (
    AssistantMessage,
    Message,
    Model,
    ModelRequest,
    SystemMessage,
    ToolCall,
    ToolMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from engines.react import (
    SUBMIT_SPEC,
    AfterStep,
    EngineConfig,
    InvestigationResult,
    ReactEngine,
    ToolRunner,
    announce,
    emit,
)
from engines.verification import mechanical_problems


@dataclass(frozen=True, slots=True)
class GotConfig:
    sub_steps: int = 5  # steps of each sub-problem's attempt
    max_fixes: int = 2


@dataclass(frozen=True, slots=True)
class _Refused:
    """The result of a call outside a sub-problem's tools (the shape of a tool result)."""

    text: str
    status: str = "error"
    data: Any = None
    cached: bool = False
    seconds: float = 0.0
    raw_tokens: int = 0


class ToolSubset:
    """A toolset restricted to some tools' names: a sub-problem's view."""

    def __init__(self, toolset: ToolRunner, names: Sequence[str]) -> None:
        self.toolset = toolset
        self.allowed = frozenset(names)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(n for n in self.toolset.names if n in self.allowed)

    def specs(self) -> tuple[ToolSpec, ...]:
        return tuple(s for s in self.toolset.specs() if s.name in self.allowed)

    def core_specs(self) -> tuple[ToolSpec, ...]:
        return tuple(s for s in self.toolset.core_specs() if s.name in self.allowed)

    def describe(self, call: ToolCall) -> str:
        return self.toolset.describe(call)

    async def call(self, call: ToolCall) -> Any:
        if call.name not in self.allowed:
            return _Refused(f"ERROR: {call.name} is not one of this sub-problem's tools: "
                            f"{', '.join(self.names)}")
        return await self.toolset.call(call)


def merged_turn(transcripts: Sequence[Sequence[Message]]) -> list[Message]:
    """The calls and observations of several attempts as one turn: one assistant message
    with every distinct call, then its answers. Submissions are left out."""
    calls: list[ToolCall] = []
    answers: dict[str, ToolMessage] = {}
    seen: set[str] = set()
    for transcript in transcripts:
        for message in transcript:
            if isinstance(message, ToolMessage) and message.name != SUBMIT_TOOL:
                answers.setdefault(message.call_id, message)
            if not isinstance(message, AssistantMessage):
                continue
            for call in message.tool_calls:
                key = call_key(call.name, call.arguments)
                if call.name != SUBMIT_TOOL and call.arguments is not None and key not in seen:
                    seen.add(key)
                    calls.append(call)
    kept = [c for c in calls if c.id in answers]
    if not kept:
        return []
    return [AssistantMessage("Merged the sub-problems' calls.", tuple(kept)),
            *(answers[c.id] for c in kept)]


def _as_hypothesis(name: str, diagnosis: Diagnosis) -> Hypothesis:
    return Hypothesis(hypothesis_id(diagnosis.category, diagnosis.culprit), diagnosis.category,
                      diagnosis.culprit, f"the {name} sub-problem's evidence holds",
                      "the merged diagnosis explains it otherwise",
                      round(diagnosis.confidence, 3), "open",
                      tuple(e.quote for e in diagnosis.evidence))


class GotEngine:
    """Decompose → solve concurrently → merge → verify → fix."""

    name = "got"

    def __init__(self, config: EngineConfig | None = None, got: GotConfig | None = None, *,
                 check: Model | None = None) -> None:
        """`check` is the model that verifies the merged diagnosis (a small model, or the
        analyzer); without one the main model verifies its own merge."""
        self.react = ReactEngine(config)
        self.check = check
        self.config = self.react.config
        self.got = got or GotConfig()
        sub = replace(self.config, max_steps=min(self.got.sub_steps, self.config.max_steps))
        self.sub = ReactEngine(sub)

    def _request(self, incident: Incident, constraints: ConstraintSet, lessons: Sequence[str],
                 tools: tuple[ToolSpec, ...], history: Sequence[Message]) -> ModelRequest:
        system = SystemMessage(prompts.system_prompt(constraints.rules, tuple(lessons)))
        first = UserMessage(prompts.incident_message(incident.text, incident.now))
        return ModelRequest(messages=(system, first, *history), tools=tools,
                            constraints=constraints.rules, constraint_set=constraints,
                            lessons=tuple(lessons), max_steps=self.config.max_steps,
                            context={"incident": incident.text, "now": incident.now})

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
        """`resume` is not replayed part by part: an interrupted got run starts again (its
        tool calls are cheap and cached); the log keeps what it said before."""
        started = time.perf_counter()
        if not resume:
            await announce(sink, incident, model, self.name, self.config.max_steps, lessons)
        constraints = constraints if constraints is not None else ConstraintSet()
        inbox = inbox or ConstraintInbox()
        ops = operations_for(model, self.check)
        tools = (*toolset.specs(), SUBMIT_SPEC)
        parts = await ops.decompose(self._request(incident, constraints, lessons, tools, ()))

        async def quiet(event: Event) -> None:  # a part's answer is a hypothesis, not the answer
            if isinstance(event, DiagnosisSubmitted):
                said = f"Partial answer: {event.diagnosis.category} of {event.diagnosis.culprit}"
                event = ThoughtRecorded(event.investigation_id, event.step, said)
            await sink(event)

        await emit(sink, ThoughtRecorded(incident.id, 0, "Splitting the incident: " + "; ".join(
            f"{p.name} ({p.focus})" for p in parts)))
        width = self.sub.config.max_steps + 1
        results = list(await asyncio.gather(*(
            self.sub.attempt(incident, model, ToolSubset(toolset, part.tools), inbox, quiet,
                             constraints=constraints, lessons=lessons, start_step=i * width,
                             notes=(self._brief(part),))
            for i, part in enumerate(parts))))
        steps = len(parts) * width  # step numbers go on from here; the count is `used`
        used = sum(r.steps - i * width for i, r in enumerate(results))
        partials = [r.diagnosis for r in results if r.diagnosis is not None]
        history = merged_turn([r.transcript for r in results])
        draft = await ops.merge(self._request(incident, constraints, lessons, tools, history),
                                partials)
        board = {h.id: h for h in (_as_hypothesis(p.name, r.diagnosis) for p, r in
                                   zip(parts, results, strict=True) if r.diagnosis)}
        fixes = 0
        last = results[-1] if results else None
        while True:
            request = self._request(incident, constraints, lessons, tools, history)
            observations = [(m.name, m.content) for m in history if isinstance(m, ToolMessage)]
            problems = await self._verify(ops, request, draft, observations, incident)
            await self._publish(sink, incident, steps, board, draft, problems)
            if not problems or fixes >= self.got.max_fixes or inbox.stop_requested or \
                    constraints.stop_requested:
                break
            fixes += 1
            await emit(sink, ThoughtRecorded(incident.id, steps, "The verifier found: " +
                                             "; ".join(problems)))
            fixed = await self.react.attempt(
                incident, model, toolset, inbox, quiet, constraints=constraints,
                lessons=lessons, after_step=after_step, start_step=steps, seed=history,
                notes=(self._feedback(draft, problems),))
            results.append(fixed)
            last = fixed
            used += fixed.steps - steps
            steps = fixed.steps
            history = list(fixed.transcript[1:])  # all but the incident message
            draft = fixed.diagnosis or draft
        if problems and draft is not None:  # the verifier's objections still stand
            draft = unconfirmed(draft, "; ".join(problems))
        return await self._finish(sink, incident, draft, results, last, (steps, used), ops,
                                  started, history, 1 + fixes)

    async def _verify(self, ops: HypothesisModel, request: ModelRequest,
                      draft: Diagnosis | None, observations: list[tuple[str, str]],
                      incident: Incident) -> list[str]:
        if draft is None:
            return ["no diagnosis came out of the merge"]
        problems = mechanical_problems(draft, observations, incident.text, incident.now)
        if draft.category == "unknown":  # never right: worth a fix while fixes remain
            problems.append("the merged answer names no cause; read what the sub-problems "
                            "did not (Ingresses, Services and their endpoints, "
                            "NetworkPolicies, recent rollouts) before answering")
        return [*problems, *await ops.verify(request, draft)]

    @staticmethod
    def _brief(part: SubProblem) -> str:
        return (f"You solve one sub-problem of this incident: {part.focus}. Use only these "
                f"tools: {', '.join(part.tools)}. Submit what this source shows, with a low "
                "confidence if it shows no cause.")

    @staticmethod
    def _feedback(draft: Diagnosis | None, problems: Sequence[str]) -> str:
        said = f"{draft.category} of {draft.culprit}" if draft else "no diagnosis"
        return (f"The merged answer ({said}) failed verification: {'; '.join(problems)}. "
                "Check those points with the tools, then submit the corrected diagnosis.")

    async def _publish(self, sink: EventSink, incident: Incident, step: int,
                       board: dict[str, Hypothesis], draft: Diagnosis | None,
                       problems: Sequence[str]) -> None:
        if draft is not None:
            key = hypothesis_id(draft.category, draft.culprit)
            merged = _as_hypothesis("merged", draft)
            board[key] = merged if problems else replace(merged, state="confirmed")
        await emit(sink, HypothesesUpdated(incident.id, step, tuple(board.values()), (),
                                           "decompose"))

    async def _finish(self, sink: EventSink, incident: Incident, draft: Diagnosis | None,
                      results: Sequence[InvestigationResult], last: InvestigationResult | None,
                      at: tuple[int, int], ops: HypothesisModel, started: float,
                      history: Sequence[Message], attempts: int) -> InvestigationResult:
        step, used = at
        usage = sum((r.usage for r in results), Usage()) + ops.usage
        reason = "diagnosed" if draft is not None else (last.reason if last else "failed")
        detail = "" if draft is not None else (last.detail if last else "nothing to merge")
        if draft is not None:
            await emit(sink, DiagnosisSubmitted(incident.id, step, draft))
        await emit(sink, InvestigationStopped(incident.id, step, reason, detail))
        observations = tuple((m.name, m.content) for m in history if isinstance(m, ToolMessage))
        return InvestigationResult(
            investigation_id=incident.id, diagnosis=draft, reason=reason, detail=detail,
            steps=used, tool_calls=sum(r.tool_calls for r in results), usage=usage,
            seconds=time.perf_counter() - started,
            observation_tokens=sum(r.observation_tokens for r in results),
            raw_observation_tokens=sum(r.raw_observation_tokens for r in results),
            transcript=tuple(history), observations=observations, attempts=attempts,
            error=last.error if last and draft is None else None)
