"""Engine events → the investigation's thread: a status message edited in place, one reply
per step, charts, the diagnosis, and how it ended.

The reporter is the engine's event sink. It never waits on Slack: it turns each event into
queued items (bot.outbox) and returns, so a slow or rate-limited Slack cannot slow the
investigation, and a Slack outage cannot end it. A step is posted once all its calls have
answered; its thought and calls are posted early only when the run must wait on a human
(an approval), so that the human sees what they are approving.

Where Slack's agent surfaces are used (bot.streaming) the reporter also queues the running
step (`Live`: task cards in progress), the hypotheses (`PlanUpdate`), the loading state while
the model thinks, and the end of the stream before the diagnosis; the outbox drops what a
workspace cannot show, and every step still reaches the thread as `Steps`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import assert_never

from bot import charts, render, render_board
from bot import render_steering as steering_render
from bot import render_stream as agent_render
from bot.feedback import final_state
from bot.outbox import (
    Live,
    Loading,
    Outbox,
    PlanUpdate,
    Post,
    Status,
    Steps,
    StreamEnd,
    Thread,
    Update,
    Upload,
)
from bot.render import Finding, StepView
from engines.diagnosis import Diagnosis
from engines.events import (
    ConstraintApplied,
    ConstraintWithdrawn,
    DiagnosisSubmitted,
    EngineChosen,
    ErrorOccurred,
    Event,
    HypothesesUpdated,
    InvestigationStarted,
    InvestigationStopped,
    LessonsRetrieved,
    ObservationReceived,
    ReflectionRecorded,
    RewoundTo,
    ThoughtRecorded,
    ToolCalled,
)
from engines.hypotheses import Hypothesis, limits_text
from tools.sources.base import MetricSource

Clock = Callable[[], float]


class ThreadReporter:
    """The event sink of one investigation, posting into one thread."""

    def __init__(
        self,
        outbox: Outbox,
        thread: Thread,
        *,
        investigation_id: str,
        incident: str,
        model: str,
        requested_by: str = "",
        max_steps: int = 0,
        clock: Clock = time.monotonic,
        metrics: MetricSource | None = None,
    ) -> None:
        self.outbox = outbox
        self.thread = thread
        self.investigation_id = investigation_id
        self.incident = incident
        self.model = model
        self.requested_by = requested_by
        self.max_steps = max_steps
        self.state: render.State = "running"
        self.step = 0
        self.detail = ""
        self.ended = False
        self.diagnosis: Diagnosis | None = None
        self.hypotheses: tuple[Hypothesis, ...] = ()
        self.lesson_ids: dict[str, int] = {}  # the store's id of each lesson given to the run
        self.stopped_by = ""
        self.stop_reason = ""  # why the bot itself stopped the run (shutting down)
        self._clock = clock
        self._started = clock()
        self._ended_at: float | None = None
        self._metrics = metrics
        self._draft: StepView | None = None
        self._charts: list[charts.ChartPlan] = []
        self._findings: dict[str, Finding] = {}
        self._acted: set[int] = set()
        self.last_thought = ""
        self.plan = agent_render.Plan()
        self._answered: dict[str, str] = {}  # tool → when it last answered (HH:MM:SS)
        self._revisions: dict[str, object] = {}  # workload → its rollout history's data
        self._board_ts: str | None = None  # the hypothesis board, once posted
        self._board_posted = False
        self._board_shown: render.Message | None = None
        self._board_step = 0
        self._board_expanding: tuple[str, ...] = ()
        self.pauses: set[str] = set()  # the replies whose pause is in force, as logged

    # --- what the registry and the approver call -----------------------------------------

    def open(self) -> None:
        """Post the status message: the first message of the thread, before any step."""
        self._status()
        self.outbox.put(Loading(self.thread))

    def noted(self, summaries: list[str], author: str, *, stop: bool = False,
              reply: str = "", updated: bool = False) -> None:
        """Confirm a human's instructions in the thread as soon as they arrive."""
        if stop:
            self.stopped_by = author
        self.outbox.put(Post(self.thread, steering_render.noted(summaries, author, reply,
                                                                updated=updated)))

    def answer(self, question: str, constraints: list[str]) -> None:
        """A human's question answered from the investigation's state."""
        leading = (f"{self.diagnosis.category} of {self.diagnosis.culprit}"
                   if self.diagnosis is not None else "")
        self.outbox.put(Post(self.thread, steering_render.answer(
            question, step=self.step, findings=list(self._findings.values()),
            thought=self.last_thought, constraints=constraints, leading=leading)))

    def waiting(self, waiting: bool) -> None:
        """Enter or leave "waiting for approval"; entering posts the step so far."""
        if self.ended:
            return
        if waiting:
            self._flush(partial=True)
        self.state = "waiting for approval" if waiting else "running"
        self._status()

    def post(self, message: render.Message, on_posted: Callable[[str], None] | None = None) -> None:
        self.outbox.put(Post(self.thread, message, on_posted))

    def edit(self, ts: Callable[[], str | None], message: render.Message) -> None:
        self.outbox.put(Update(self.thread, ts, message))

    def fail(self, message: str) -> None:
        """End the run as failed from outside the engine (it could not start, or crashed)."""
        if self.ended:
            return
        self._flush()
        self.outbox.put(StreamEnd(self.thread))
        self.outbox.put(Post(self.thread, render.failure_message(message)))
        self._end("failed", message)

    def view(self) -> render.StatusView:
        now = self._ended_at if self._ended_at is not None else self._clock()
        return render.StatusView(
            investigation_id=self.investigation_id,
            incident=self.incident,
            model=self.model,
            step=self.step,
            max_steps=self.max_steps,
            state=self.state,
            elapsed_seconds=now - self._started,
            requested_by=self.requested_by,
            detail=self.detail,
            paused=bool(self.pauses),
        )

    # --- the event sink -------------------------------------------------------------------

    async def __call__(self, event: Event) -> None:
        self.handle(event)

    def handle(self, event: Event) -> None:
        if self.ended:
            return
        match event:
            case InvestigationStarted():
                self.model = event.model
                self.max_steps = event.max_steps
                self._status()
            case ThoughtRecorded():
                self._draft_for(event.step).thought = event.text
                self.last_thought = event.text
                if self.plan.read(event.text):
                    self.outbox.put(PlanUpdate(self.thread, self.plan))
            case ToolCalled():
                draft = self._draft_for(event.step)
                draft.calls.append(event)
                self._acted.add(event.step)
                self._findings[event.call_id] = Finding(event.description, "pending")
                if event.step != self.step:
                    self.step = event.step
                    self._status()
                self.outbox.put(Live(self.thread, [draft]))
            case ObservationReceived():
                self._observed(event)
            case ConstraintApplied() | ConstraintWithdrawn():
                # Confirmed when the reply arrived (see `noted`); here it ends the step, and
                # a pause taken or lifted shows on the status message (Pause / Resume).
                self._flush()
                if self._pause_changed(event):
                    self._status()
            case DiagnosisSubmitted():
                self._flush()
                self.diagnosis = event.diagnosis
                self.plan.diagnosed(event.diagnosis)
                self.outbox.put(PlanUpdate(self.thread, self.plan))
            case ErrorOccurred():
                if event.fatal:
                    self._flush()
                    self.outbox.put(Post(self.thread, render.failure_message(event.message)))
                else:
                    self._draft_for(event.step).notes.append(event.message)
            case LessonsRetrieved():
                if event.lessons:
                    self.outbox.put(Post(self.thread, render.lessons_message(
                        event.lessons, [self.lesson_ids.get(text) for text in event.lessons])))
            case ReflectionRecorded():
                self._flush()
                if event.retrying:
                    self.diagnosis = None  # that attempt's answer was rejected
                    self.plan.rejected()
                    self.outbox.put(PlanUpdate(self.thread, self.plan))
                self.outbox.put(Post(self.thread, render.reflection_message(
                    event.attempt, event.problems, event.text, event.retrying)))
            case HypothesesUpdated():
                self.hypotheses = event.hypotheses  # the board's buttons look them up here
                self._board(event)
                if self.plan.board(event.hypotheses, event.expanding):
                    self.outbox.put(PlanUpdate(self.thread, self.plan))
            case EngineChosen():
                self.outbox.put(Post(self.thread, render.engine_message(
                    event.engine, event.reason, limits_text(event.limits))))
            case RewoundTo():
                self._flush()
                self.step = event.step
                self.outbox.put(Post(self.thread, steering_render.rewound(event.said,
                                                                          event.author)))
                self._status()
            case InvestigationStopped():
                self._stopped(event)
            case _:
                assert_never(event)

    # --- internals ------------------------------------------------------------------------

    def _pause_changed(self, event: ConstraintApplied | ConstraintWithdrawn) -> bool:
        before = bool(self.pauses)
        if isinstance(event, ConstraintApplied) and event.constraint == "pause":
            self.pauses.add(event.reply)
        elif isinstance(event, ConstraintWithdrawn):
            self.pauses.discard(event.reply)
        return before != bool(self.pauses)

    def _draft_for(self, step: int) -> StepView:
        if self._draft is not None and self._draft.step != step:
            self._flush()
            self.outbox.put(Loading(self.thread))  # the model reads what came back
        if self._draft is None:
            self._draft = StepView(step)
        return self._draft

    def _observed(self, event: ObservationReceived) -> None:
        first = event.text.strip().splitlines()[0] if event.text.strip() else ""
        found = self._findings.get(event.call_id)
        if found is not None:
            self._findings[event.call_id] = Finding(found.description, event.status, first)
        draft = self._draft_for(event.step)
        draft.observations[event.call_id] = event
        self._answered[event.tool] = event.at.strftime("%H:%M:%S")
        if event.tool == "k8s_rollout_history" and isinstance(event.data, dict):
            self._revisions[str(event.data.get("workload", ""))] = event.data
        if self._metrics is not None:
            call = next((c for c in draft.calls if c.call_id == event.call_id), None)
            if call is not None:
                self._charts.extend(charts.plan_for(call, event))
        if draft.complete:
            self._flush()
        else:
            self.outbox.put(Live(self.thread, [draft]))

    def _flush(self, *, partial: bool = False) -> None:
        """Queue the current step. A partial flush keeps the calls that have not answered, so
        their results follow as "continued" once they come."""
        draft = self._draft
        if draft is None or draft.empty:
            return
        if partial:
            answered = {c.call_id for c in draft.calls if c.call_id in draft.observations}
            self.outbox.put(Steps(self.thread, [draft]))
            rest = [c for c in draft.calls if c.call_id not in answered]
            self._draft = StepView(draft.step, "", rest, {}, []) if rest else None
            if self._draft is not None:
                self._draft.notes.append("(continued: results of the calls above)")
            return
        self._draft = None
        self.outbox.put(Steps(self.thread, [draft]))
        if self._metrics is not None:
            for plan in self._charts:
                drawing = asyncio.create_task(charts.render(plan, self._metrics))
                self.outbox.put(Upload(self.thread, drawing, plan.filename, plan.title))
        self._charts = []

    def _stopped(self, event: InvestigationStopped) -> None:
        self._flush()
        self.outbox.put(StreamEnd(self.thread))
        self.step = event.step
        if self.diagnosis is not None:
            final_turn = event.reason != "diagnosed"
            classic = render.diagnosis_message(self.investigation_id, self.diagnosis,
                                               final_turn=final_turn)
            rich = agent_render.rich_diagnosis(classic, self.investigation_id,
                                               self.diagnosis, self._answered)
            self.outbox.put(Post(self.thread, rich, classic=classic))
            revisions = self._revisions_of(self.diagnosis)
            if revisions is not None:
                self.outbox.put(Post(self.thread, revisions, rich_only=True))
        if event.reason == "stopped":
            self.outbox.put(
                Post(
                    self.thread,
                    render.stopped_summary(
                        list(self._findings.values()), steps=len(self._acted),
                        who=self.stopped_by,
                        detail=self.stop_reason or event.detail,
                        has_diagnosis=self.diagnosis is not None,
                    ),
                )
            )
        elif event.reason not in ("diagnosed", "failed") and self.diagnosis is None:
            self.outbox.put(Post(self.thread, render.ended_message(event.reason, event.detail)))
        detail = "" if event.reason == "diagnosed" else (event.detail or event.reason)
        self._end(final_state(event.reason, self.diagnosis), detail)

    def _revisions_of(self, diagnosis: Diagnosis) -> render.Message | None:
        """The culprit's recent revisions as a data table, when its rollout history was
        read (streamed surfaces only: the step's output shows them in messages too)."""
        culprit = diagnosis.culprit
        for workload, data in self._revisions.items():
            if workload.endswith(f"{culprit.namespace}/{culprit.name}"):
                return agent_render.revisions_message(workload, data)
        return None

    def _end(self, state: render.State, detail: str) -> None:
        self.state = state
        self.detail = detail
        self.ended = True
        self._ended_at = self._clock()
        self._board()
        self._status(final=True)

    def _board(self, event: HypothesesUpdated | None = None) -> None:
        """The hypothesis board: posted on the first update, then edited in place (the
        channel's queue keeps order, so the edit leaves after the post learnt its ts). With
        no event the run has ended: the last board again, without its buttons."""
        if event is not None:
            self._board_step, self._board_expanding = event.step, event.expanding
        elif not self._board_posted:
            return
        message = render_board.board_message(
            self.investigation_id, self.hypotheses, self._board_step,
            self._board_expanding if event is not None else (), buttons=event is not None)
        if message == self._board_shown:
            return  # nothing changed: no pointless edit
        self._board_shown = message
        if not self._board_posted:
            self._board_posted = True
            self.outbox.put(Post(self.thread, message, self._board_at))
        else:
            self.outbox.put(Update(self.thread, lambda: self._board_ts, message))

    def _board_at(self, ts: str) -> None:
        self._board_ts = ts

    def _status(self, *, final: bool = False) -> None:
        def message() -> render.Message | None:
            if self.ended and not final and self.thread.status_ts is not None:
                return None  # a pointless edit: the final one is queued after everything
            return render.status_message(self.view())

        self.outbox.put(Status(self.thread, message, final=final))
