"""Reflexion: act, evaluate, reflect, retry.

Each attempt is a ReAct run. An evaluator judges it mechanically (no diagnosis or
`unknown`, confidence under a threshold, evidence that no observation of the attempt
contains); a failed attempt earns a reflection (from the model, or from the analyzer's own
rules offline) on what was missed and what to check next, and the next attempt starts with
the reflections and the rejected diagnosis, so it does not walk the same path again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol, runtime_checkable

from engines import prompts
from engines.constraints import ConstraintInbox, ConstraintSet
from engines.diagnosis import Diagnosis, rejection_message
from engines.errors import ModelError
from engines.events import (
    Event,
    EventSink,
    InvestigationStopped,
    ReflectionRecorded,
    discard,
)
from engines.evidence import occurs
from engines.hypotheses import HypothesisModel
from engines.hypotheses_asked import operations_for
from engines.incident import Incident
from engines.model import Model, ModelRequest, SystemMessage, Usage, UserMessage
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

# One attempt: (the log to replay, the step numbers go on from, the notes that open it).
Attempt = Callable[[Sequence[Event], int, Sequence[str]], Awaitable[InvestigationResult]]
_NO_RETRY = frozenset({"stopped", "failed", "timeout", "token_budget"})


@dataclass(frozen=True, slots=True)
class ReflexionConfig:
    max_attempts: int = 3
    min_confidence: float = 0.5
    retry_unknown: bool = True  # an `unknown` answer is a failed attempt


@dataclass(frozen=True, slots=True)
class Verdict:
    passed: bool
    problems: tuple[str, ...] = ()


def evaluate(result: InvestigationResult, rules: ReflexionConfig | None = None) -> Verdict:
    """Judge an attempt by rules that need no model: nothing here can be talked round."""
    rules = rules or ReflexionConfig()
    min_confidence, unknown_fails = rules.min_confidence, rules.retry_unknown
    diagnosis = result.diagnosis
    if diagnosis is None:
        return Verdict(False, ("no diagnosis was submitted",))
    problems: list[str] = []
    if diagnosis.category == "unknown" and unknown_fails:
        problems.append("the category is unknown")
    if diagnosis.confidence < min_confidence:
        problems.append(f"confidence {diagnosis.confidence:.2f} is below {min_confidence:.2f}")
    if not diagnosis.evidence and (diagnosis.category != "unknown" or unknown_fails):
        problems.append("no evidence was quoted")  # an accepted `unknown` may have none
    for item in diagnosis.evidence:
        if not any(occurs(item.quote, text) for _, text in result.observations):
            problems.append(f"the evidence {item.quote!r} occurs in no observation")
    return Verdict(not problems, tuple(problems))


def rejection_note(diagnosis: Diagnosis | None, problems: Sequence[str]) -> str:
    """How a rejected diagnosis is told to the next attempt (the analyzer parses it)."""
    return rejection_message(diagnosis, "; ".join(problems) or "rejected") + "."


RETRY_MARGIN = 0.1  # how much more confident a retry's answer must be to replace an earlier one


def best_attempt(
    tried: Sequence[tuple[InvestigationResult, Verdict]],
) -> tuple[InvestigationResult, Verdict]:
    """When no attempt passed, the answer with the fewest problems, then the most confident.

    A correct answer that was only rejected for its low confidence must not lose to the
    weaker alternatives the retries were pushed towards: a later attempt with as many
    problems replaces an earlier one only when clearly more confident.
    """

    def problems(item: tuple[InvestigationResult, Verdict]) -> tuple[bool, int]:
        result, verdict = item
        diagnosis = result.diagnosis
        return diagnosis is not None and diagnosis.category != "unknown", -len(verdict.problems)

    def sure(item: tuple[InvestigationResult, Verdict]) -> float:
        diagnosis = item[0].diagnosis
        return diagnosis.confidence if diagnosis else 0.0

    best = tried[0]
    for item in tried[1:]:
        if problems(item) > problems(best) or (
                problems(item) == problems(best) and sure(item) > sure(best) + RETRY_MARGIN):
            best = item
    return best


async def check_attempt(check: HypothesisModel, incident: Incident, result: InvestigationResult,
                        toolset: ToolRunner, constraints: ConstraintSet,
                        lessons: Sequence[str], verdict: Verdict) -> Verdict:
    """A passing attempt verified by the check model too: its evidence and timeline against
    the attempt's observations, and no stronger signal left unexplained. The mechanical
    verdict stands when it already failed (no need to ask) or the check finds nothing."""
    if not verdict.passed or result.diagnosis is None:
        return verdict
    request = ModelRequest(
        messages=(SystemMessage(prompts.system_prompt(constraints.rules, tuple(lessons))),
                  *result.transcript),
        tools=(*toolset.specs(), SUBMIT_SPEC), constraints=constraints.rules,
        constraint_set=constraints, lessons=tuple(lessons), step=result.steps,
        context={"incident": incident.text, "now": incident.now})
    problems = await check.verify(request, result.diagnosis)
    return Verdict(False, tuple(problems)) if problems else verdict


@runtime_checkable
class Reflective(Protocol):
    """A model that reflects by its own rules (the offline analyzer)."""

    async def reflect(self, result: InvestigationResult, problems: Sequence[str]) -> str: ...


async def reflect(model: Model, result: InvestigationResult, problems: Sequence[str]) -> str:
    """What was missed and what to check next, from the model itself."""
    if isinstance(model, Reflective):
        return await model.reflect(result, problems)
    diagnosis = result.diagnosis
    said = (
        f"It concluded {diagnosis.category} of {diagnosis.culprit}: {diagnosis.summary}"
        if diagnosis
        else "It reached no diagnosis."
    )
    calls = ", ".join(dict.fromkeys(tool for tool, _ in result.observations)) or "none"
    request = ModelRequest(
        messages=(
            SystemMessage(
                "You review a failed incident investigation and write a short reflection: "
                "what was missed or assumed, and which checks the next attempt must make. "
                "Three sentences at most, specific, no preamble."
            ),
            UserMessage(
                f"Incident: {result.transcript[0].content if result.transcript else ''}\n"
                f"Tools used: {calls}\n{said}\nRejected because: {'; '.join(problems)}"
            ),
        ),
        tools=(),
    )
    try:
        reply = await model.complete(request)
    except ModelError as exc:
        return f"(no reflection: {exc}) Check the evidence again before concluding."
    return reply.thought.strip() or "Check the evidence again before concluding."


class ReflexionEngine:
    """ReAct attempts under an evaluator, with reflections carried to the next attempt."""

    name = "reflexion"

    def __init__(
        self, config: EngineConfig | None = None, reflexion: ReflexionConfig | None = None,
        *, check: Model | None = None,
    ) -> None:
        """`check` also verifies each attempt the rules pass (a small model, or the
        analyzer); without one, or when it is the main model itself, the rules' verdict is
        the evaluator's (the analyzer re-verifying its own answers cost 3 of 144 held-out
        answers and doubled the steps)."""
        self.react = ReactEngine(config)
        self.check = operations_for(check) if check is not None else None
        self.check_name = check.name if check is not None else None
        self.config = self.react.config
        self.reflexion = reflexion or ReflexionConfig()

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
        notes: Sequence[str] = (),
    ) -> InvestigationResult:
        """Investigate with up to `max_attempts` ReAct attempts. `notes` open every attempt
        (a human's correction of an earlier answer, for instance)."""
        if not resume:
            steps = self.config.max_steps * self.reflexion.max_attempts
            await announce(sink, incident, model, self.name, steps, lessons)
        constraints = constraints if constraints is not None else ConstraintSet()
        inbox = inbox or ConstraintInbox()
        react, given = self.react, constraints

        async def attempt(log: Sequence[Event], start_step: int,
                          opening: Sequence[str]) -> InvestigationResult:
            return await react.attempt(incident, model, toolset, inbox, sink,
                                       constraints=given, lessons=lessons,
                                       after_step=after_step, resume=log,
                                       start_step=start_step, notes=opening)

        return await self.attempts(incident, model, toolset, sink, constraints, lessons,
                                   attempt, resume=resume, notes=notes)

    async def attempts(self, incident: Incident, model: Model, toolset: ToolRunner,
                       sink: EventSink, constraints: ConstraintSet, lessons: Sequence[str],
                       attempt: Attempt, *, resume: Sequence[Event] = (),
                       notes: Sequence[str] = ()) -> InvestigationResult:
        """Attempts under the evaluator, each made by `attempt` (a ReAct run, or the
        router's chosen engine), until one passes or the attempts run out; then the run's
        end. The first attempt replays `resume`; later ones open with the reflections."""
        carried = list(notes)
        reflections: list[str] = []
        total = Usage()
        steps = tool_calls = 0
        seconds = 0.0
        result: InvestigationResult | None = None
        tried: list[tuple[InvestigationResult, Verdict]] = []
        for number in range(1, self.reflexion.max_attempts + 1):
            result = await attempt(resume if number == 1 else (), steps, carried)
            total = total + result.usage
            steps, tool_calls = result.steps, tool_calls + result.tool_calls
            seconds += result.seconds
            verdict = evaluate(result, self.reflexion)
            if self.check is not None and self.check_name != model.name:
                before = self.check.usage
                verdict = await check_attempt(self.check, incident, result, toolset,
                                              constraints, lessons, verdict)
                after = self.check.usage
                total = total + Usage(after.input_tokens - before.input_tokens,
                                      after.output_tokens - before.output_tokens)
            tried.append((result, verdict))
            if verdict.passed or result.reason in _NO_RETRY:
                break
            retrying = number < self.reflexion.max_attempts
            text = await reflect(model, result, verdict.problems)
            reflections.append(text)
            await emit(
                sink,
                ReflectionRecorded(incident.id, steps, number, verdict.problems, text, retrying),
            )
            carried = [
                *carried,
                rejection_note(result.diagnosis, verdict.problems),
                f"REFLECTION on attempt {number}: {text}",
            ]
        assert result is not None
        if not verdict.passed and len(tried) > 1:
            result, verdict = best_attempt(tried)
        detail = result.detail
        if not verdict.passed and result.diagnosis is not None:
            detail = f"unverified after {number} attempts: {'; '.join(verdict.problems)}"
        final = replace(
            result,
            steps=steps,
            tool_calls=tool_calls,
            usage=total,
            seconds=seconds,
            reflections=tuple(reflections),
            attempts=number,
            detail=detail,
        )
        await emit(sink, InvestigationStopped(incident.id, steps, final.reason, final.detail))
        return final
