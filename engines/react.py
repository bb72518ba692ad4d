"""The ReAct loop: think, call tools, observe, until a diagnosis or a stop condition.

Every decision the loop makes is visible as an event. Tool calls of one step run
concurrently; constraints from humans are taken at the start of every step; the run ends
on a submitted diagnosis, a human stop, max steps, the wall-clock timeout, the token budget
or a detected loop, and in every case but a failure the model gets one last turn to submit
its best diagnosis from what it found so far.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence

from engines import _intake, prompts
from engines._acting import accept_submission, run_calls
from engines._history import History
from engines._resume import restore
from engines._rewind import rewind
from engines.budgets import reply_tokens
from engines.constraints import ConstraintInbox, ConstraintSet
from engines.diagnosis import SUBMIT_TOOL
from engines.errors import ModelError, TriageError
from engines.events import (
    DiagnosisSubmitted,
    ErrorOccurred,
    Event,
    EventSink,
    InvestigationStopped,
    StopReason,
    ThoughtRecorded,
    discard,
)
from engines.incident import Incident
from engines.model import (
    AssistantMessage,
    Message,
    Model,
    ModelReply,
    ModelRequest,
    SystemMessage,
    ToolCall,
    ToolMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from engines.run_state import (
    SUBMIT_SPEC as SUBMIT_SPEC,
)
from engines.run_state import (
    AfterStep as AfterStep,
)
from engines.run_state import (
    EngineConfig as EngineConfig,
)
from engines.run_state import (
    InvestigationResult as InvestigationResult,
)
from engines.run_state import (
    RunState as RunState,
)
from engines.run_state import (
    StepGuide as StepGuide,
)
from engines.run_state import (
    ToolRunner as ToolRunner,
)
from engines.run_state import (
    _prompt_tokens,
    _reads_tools_as_text,
    _Run,
)
from engines.run_state import (
    announce as announce,
)
from engines.run_state import (
    emit as emit,
)
from engines.short_catalog import asked_for, offered, wants_short_catalog
from engines.text_transcript import catalog_tokens

log = logging.getLogger(__name__)


class ReactEngine:
    """Thought → tool calls → observations, step by step."""

    name = "react"

    def __init__(self, config: EngineConfig | None = None) -> None:
        self.config = config or EngineConfig()

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
        """Investigate `incident` and return how it ended. Never raises for run failures;
        a bug ends the run as failed with an internal error. Only an `AssertionError` (a
        test double's verdict, such as an exhausted script) propagates.

        `constraints` is the set the toolset enforces (its context's set); constraints that
        arrive in `inbox` are added to it at the start of each step. `resume` is the event
        log of an interrupted run of the same incident: its complete steps are replayed,
        not repeated, and the run goes on from there.
        """
        if not resume:
            await announce(sink, incident, model, self.name, self.config.max_steps, lessons)
        result = await self.attempt(
            incident,
            model,
            toolset,
            inbox,
            sink,
            constraints=constraints,
            lessons=lessons,
            after_step=after_step,
            resume=resume,
        )
        await emit(
            sink, InvestigationStopped(incident.id, result.steps, result.reason, result.detail)
        )
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
        seed: Sequence[Message] = (),
        guide: StepGuide | None = None,
    ) -> InvestigationResult:
        """One try at a diagnosis, without the started and stopped events of a whole run.

        Reflexion calls this once per attempt: `start_step` keeps step numbers rising
        across attempts and `notes` (reflections on failed attempts) open the conversation.
        `seed` (calls and observations made elsewhere, as got's merged sub-problems) comes
        before the notes; `guide` steers each step (StepGuide).
        """
        started = time.perf_counter()
        inbox = inbox or ConstraintInbox()
        run = _Run(
            incident=incident,
            model=model,
            toolset=toolset,
            inbox=inbox,
            sink=sink,
            constraints=constraints if constraints is not None else ConstraintSet(),
            history=History(self.config.context_tokens - reply_tokens(self.config.context_tokens)),
            lessons=tuple(lessons),
            step=start_step,
            first_step=start_step,
            guide=guide,
        )
        run.history.append(UserMessage(prompts.incident_message(incident.text, incident.now)))
        for message in seed:
            run.history.append(message)
            if isinstance(message, ToolMessage):
                run.observations.append((start_step, message.name, message.content))
        for note in notes:
            run.history.append(UserMessage(note))
        run.opening, run.given = run.history.messages, tuple(run.constraints.items)
        if resume:
            run.log.extend(resume)
            restore(run, resume)
        reason: StopReason
        detail = ""
        error: TriageError | None = None
        try:
            async with asyncio.timeout(self.config.timeout_seconds) as run.deadline:
                reason, detail = await self._loop(run, after_step)
        except TimeoutError:
            reason, detail = "timeout", f"no diagnosis within {self.config.timeout_seconds:g}s"
        except TriageError as exc:
            reason, detail, error = "failed", str(exc), exc
        except AssertionError:  # a test double's verdict (an exhausted script): never hidden
            raise
        except Exception as exc:  # a bug must end this run cleanly, not the bot
            log.exception("investigation %s crashed", incident.id)
            reason, detail = "failed", f"internal error: {type(exc).__name__}: {exc}"
            error = TriageError(detail)
        if error is not None:
            await run.emit(ErrorOccurred(incident.id, run.step, detail, fatal=True))
        elif run.diagnosis is None:
            ended = detail or reason
            run.history.answer_open_calls(
                f"ERROR: not run: the investigation ended ({ended}) before this call returned")
            await self._final_turn(run, reason, detail)
            if reason == "concluded" and run.diagnosis is not None:
                reason = "diagnosed"
        return InvestigationResult(
            investigation_id=incident.id,
            diagnosis=run.diagnosis,
            reason=reason,
            detail=detail,
            steps=run.step,
            tool_calls=run.tool_calls,
            usage=run.usage,
            seconds=time.perf_counter() - started,
            observation_tokens=run.observation_tokens,
            raw_observation_tokens=run.raw_observation_tokens,
            transcript=run.history.messages,
            error=error,
            observations=tuple((tool, text) for _, tool, text in run.observations),
        )

    async def _loop(self, run: _Run, after_step: AfterStep | None) -> tuple[StopReason, str]:
        if run.diagnosis is not None:
            return "diagnosed", "resumed after the diagnosis was submitted"
        config = self.config
        while run.step < run.first_step + config.max_steps:
            run.step += 1
            await self._take_constraints(run)
            if run.constraints.stop_requested:
                run.step -= 1
                return "stopped", "a human asked to stop"
            spent = run.usage.input_tokens + run.usage.output_tokens
            if spent >= config.token_budget:
                run.step -= 1
                return "token_budget", f"{spent} tokens used of {config.token_budget}"
            tools = self._catalog(run)
            if run.guide is not None:
                for note in await run.guide.before_ask(run, self.request(run, tools)):
                    run.history.append(UserMessage(note))
            reply = await self._ask(run, tools, final=False)
            if run.inbox.stop_requested:
                await self._take_constraints(run)
                return "stopped", "a human asked to stop"
            verdict = await self._act(run, reply)
            if run.diagnosis is not None:
                return "diagnosed", ""
            if verdict is not None:
                return verdict
            if run.guide is not None:
                why = await run.guide.after_step(run, self.request(run, tools))
                if why and run.step >= config.min_steps:
                    return "concluded", why
            if after_step is not None:
                await after_step(run.step)
        return "max_steps", f"no diagnosis after {config.max_steps} steps"

    async def _take_constraints(self, run: _Run) -> None:
        while True:  # again when a rewind arrives during a pause
            if (asked := run.inbox.take_rewind()) is not None:
                await rewind(run, asked)
            await _intake.take(run.inbox, run.constraints, run.history, run.emit,
                               run.incident.id, run.step)
            waited = await _intake.hold_while_paused(
                run.inbox, run.constraints, run.history, run.emit, run.incident.id, run.step,
                self.config.pause_seconds)
            if waited and run.deadline is not None and run.deadline.when() is not None:
                run.deadline.reschedule((run.deadline.when() or 0.0) + waited)
            if run.inbox.rewind is None:
                return

    def _catalog(self, run: _Run) -> tuple[ToolSpec, ...]:
        """The tools offered this step: all of them, or the short catalog to a model in text
        mode or with a window the full schemas would crowd (engines.short_catalog)."""
        full = run.toolset.specs()
        if not wants_short_catalog((*full, SUBMIT_SPEC), self.config.context_tokens,
                                   text_mode=_reads_tools_as_text(run.model)):
            return (*full, SUBMIT_SPEC)
        return (*offered(full, run.toolset.core_specs(), run.asked_tools), SUBMIT_SPEC)

    def request(self, run: _Run, tools: tuple[ToolSpec, ...], *,
                final: bool = False) -> ModelRequest:
        """The request the model would get now: also what a guide's operations read."""
        system = SystemMessage(prompts.system_prompt(run.constraints.rules, run.lessons))
        return ModelRequest(
            messages=(system, *run.history.messages),
            tools=tools,
            constraints=run.constraints.rules,
            constraint_set=run.constraints,
            lessons=run.lessons,
            step=run.step,
            max_steps=run.first_step + self.config.max_steps,
            final=final,
            context={"incident": run.incident.text, "now": run.incident.now},
        )

    async def _ask(self, run: _Run, tools: tuple[ToolSpec, ...], *, final: bool) -> ModelReply:
        system = SystemMessage(prompts.system_prompt(run.constraints.rules, run.lessons))
        reserved = _prompt_tokens(system.content) + catalog_tokens(
            tools, text_mode=_reads_tools_as_text(run.model))
        run.history.compact(reserved)
        request = self.request(run, tools, final=final)
        reply = await run.model.complete(request)
        usage = reply.usage
        if usage.input_tokens == 0:  # models that are code report nothing: count the prompt
            usage = Usage(reserved + run.history.tokens, usage.output_tokens)
        run.usage = run.usage + usage
        if thought := reply.thought.strip() or self._described(run, reply.tool_calls):
            await run.emit(ThoughtRecorded(run.incident.id, run.step, thought))
        return reply

    @staticmethod
    def _described(run: _Run, calls: Sequence[ToolCall]) -> str:
        """The step's thought when the model gave none (native tool calls often come with
        empty content): what its calls do, so humans still see why before they see what."""
        said = [run.toolset.describe(c) if c.name != SUBMIT_TOOL else "Submitting the diagnosis"
                for c in calls]
        return "; ".join(dict.fromkeys(said))

    async def _act(self, run: _Run, reply: ModelReply) -> tuple[StopReason, str] | None:
        """Run the reply's calls; returns a stop reason when the run must end."""
        run.history.append(AssistantMessage(reply.thought, reply.tool_calls))
        if not reply.tool_calls:
            run.empty_replies += 1
            if run.empty_replies >= self.config.max_empty_replies:
                raise ModelError(
                    f"the model answered {run.empty_replies} times without calling a tool"
                )
            run.history.append(UserMessage(prompts.NO_CALL_NUDGE))
            return None
        run.empty_replies = 0
        calls = [c for c in reply.tool_calls if c.name != SUBMIT_TOOL]
        submissions = [c for c in reply.tool_calls if c.name == SUBMIT_TOOL]
        observations = await run_calls(run, calls)
        run.asked_tools |= asked_for((c.name, c.arguments) for c in calls)
        for submission in submissions:
            accept_submission(run, submission)
            if run.diagnosis is not None:
                await run.emit(DiagnosisSubmitted(run.incident.id, run.step, run.diagnosis))
                return None
        if not calls:
            return None
        verdict = run.loop.check([(c.name, c.arguments) for c in calls], observations)
        if verdict == "stop":
            return "loop", f"stopped going in circles: {run.loop.reason}"
        if verdict == "warn":
            message = (
                f"You are going in circles ({run.loop.reason}). Change strategy: use a "
                f"different tool or other arguments, or call {SUBMIT_TOOL}."
            )
            run.history.append(UserMessage(message))
            await run.emit(ErrorOccurred(run.incident.id, run.step, message))
        return None

    async def _final_turn(self, run: _Run, reason: StopReason, detail: str) -> None:
        """One last turn, submit only, so a stopped run still says what it found."""
        why = detail or reason
        run.history.append(
            UserMessage(
                f"The investigation must end now ({why}). Call {SUBMIT_TOOL} with your best "
                "diagnosis from the evidence gathered so far; use category 'unknown' and a "
                "low confidence if the evidence does not support a cause."
            )
        )
        try:
            async with asyncio.timeout(self.config.final_turn_seconds):
                reply = await self._ask(run, (SUBMIT_SPEC,), final=True)
        except (TimeoutError, ModelError) as exc:
            await run.emit(ErrorOccurred(run.incident.id, run.step, f"no final answer: {exc}"))
            return
        run.history.append(AssistantMessage(reply.thought, reply.tool_calls))
        for call in reply.tool_calls:
            if call.name == SUBMIT_TOOL:
                accept_submission(run, call)
                if run.diagnosis is not None:
                    await run.emit(DiagnosisSubmitted(run.incident.id, run.step, run.diagnosis))
                    return
