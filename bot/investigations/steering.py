"""Steering: what humans say in a running investigation's thread.

A reply is read (rules first, a model when they are unsure: engines.steering) into typed
constraints the engine obeys from its next step on, confirmed in the thread at once with an
Undo button. Editing the reply reads it again and replaces its constraints; deleting it or
Undo withdraws them. A question is answered from the investigation's state; chat between
humans is left alone. "stop" (or the Stop button) also denies what waits for approval;
while a new attempt after a Wrong runs, what they say is the correction too, kept as a
lesson. Replies of one investigation are applied in the order they arrived.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from bot import render_steering
from bot.background import Background
from bot.investigations.approvals import deny_pending
from bot.investigations.investigation import Investigation
from bot.investigations.lessons import Lessons
from bot.telemetry import Telemetry
from engines.constraints import Constraint
from engines.model import Model
from engines.steering import Reading, Vocabulary, understand
from tools.catalog import available_tools
from tools.sources.base import Sources
from tools.vocabulary import cluster_vocabulary

VocabularySource = Callable[[], Awaitable[Vocabulary]]


async def no_vocabulary() -> Vocabulary:
    return Vocabulary.of()


@dataclass(frozen=True, slots=True)
class ReplyReader:
    """How replies are read: the cluster's names (listed once per investigation) and the
    model that reads what the rules are unsure of (None: rules only)."""

    vocabulary: VocabularySource = no_vocabulary
    model: Model | None = None
    bot_user_id: str | None = None

    async def read(self, investigation: Investigation, text: str, user: str,
                   reply: str) -> Reading:
        if investigation.vocabulary is None:
            investigation.vocabulary = await self.vocabulary()
        return await understand(text, investigation.vocabulary, self.model, author=user,
                                reply=reply, bot_user_id=self.bot_user_id)


def reader_for(sources: Sources, model: Model | None = None) -> ReplyReader:
    """Replies read with the names of the cluster `sources` reads (listed at an
    investigation's first reply), and by `model` when the rules are unsure."""

    async def vocabulary() -> Vocabulary:
        return await cluster_vocabulary(sources, (t.name for t in available_tools(sources)))

    return ReplyReader(vocabulary, model)


@dataclass(slots=True)
class Steering:
    """Replies, edits, deletions, Undo and Stop, applied to a running investigation."""

    lessons: Lessons
    background: Background
    telemetry: Telemetry | None
    reader: ReplyReader = field(default_factory=ReplyReader)

    def steer(self, investigation: Investigation, text: str, user: str, reply: str = "") -> None:
        """A human's reply: read in the background (the listener acks at once), applied in
        arrival order."""
        self.background.spawn(self._steer(investigation, text, user, reply), name="steer")

    async def _steer(self, investigation: Investigation, text: str, user: str,
                     reply: str) -> None:
        async with investigation.steering_lock:
            reading = await self.reader.read(investigation, text, user, reply)
            self.apply(investigation, reading, text, user, reply)

    def apply(self, investigation: Investigation, reading: Reading, text: str, user: str,
              reply: str, *, updated: bool = False) -> None:
        """Put what a reply asks into the inbox and say so in the thread."""
        if reading.to_someone_else:
            return
        reporter = investigation.reporter
        if reading.resume and not reading.constraints:
            investigation.inbox.resume()
            reporter.post(render_steering.resumed(user))
        constraints = list(reading.constraints)
        for constraint in constraints:
            investigation.inbox.put(constraint)
            if self.telemetry is not None:
                self.telemetry.constraint(constraint.kind)
        if reply and constraints:
            investigation.replies[reply] = tuple(constraints)
        stop = any(c.kind == "stop" for c in constraints)
        if constraints:
            reporter.noted([c.summary for c in constraints], user, stop=stop,
                           reply="" if stop else reply, updated=updated)
        if stop:
            deny_pending(investigation, user)
        if reading.question:
            reporter.answer(text, [c.summary for c in self.in_force(investigation)])
        if not constraints and not reading.question and not reading.confident \
                and not reading.resume:
            reporter.post(render_steering.not_understood(user))
        if investigation.correcting and (constraints or not reading.confident):
            self.background.spawn(
                self.lessons.learn_correction(investigation.id, investigation.text, text, None),
                name="lesson",
            )

    @staticmethod
    def in_force(investigation: Investigation) -> list[Constraint]:
        return [c for replied in investigation.replies.values() for c in replied]

    def withdraw(self, investigation: Investigation, reply: str, user: str, why: str) -> bool:
        """The constraints read from `reply` no longer hold (Undo, the reply deleted)."""
        gone = investigation.replies.pop(reply, ())
        if not gone:
            return False
        investigation.inbox.withdraw(reply)
        investigation.reporter.post(render_steering.withdrawn([c.summary for c in gone], user,
                                                              why))
        return True

    def edited(self, investigation: Investigation, text: str, user: str, reply: str) -> None:
        """The reply was edited: read it again; its new reading replaces the old one."""

        async def reread() -> None:
            async with investigation.steering_lock:
                had = investigation.replies.pop(reply, ())
                if had:
                    investigation.inbox.withdraw(reply)
                reading = await self.reader.read(investigation, text, user, reply)
                if had and not reading.constraints:
                    investigation.reporter.post(render_steering.withdrawn(
                        [c.summary for c in had], user, "reply edited"))
                self.apply(investigation, reading, text, user, reply, updated=bool(had))

        self.background.spawn(reread(), name="steer-edit")

    def stop(self, investigation: Investigation, user: str) -> None:
        """The Stop button: the same as replying "stop", at once."""
        if investigation.inbox.stop_requested:
            return
        self.apply(investigation, Reading((Constraint("stop", "stop", author=user),)), "stop",
                   user, "")

    def pause(self, investigation: Investigation, user: str, reply: str) -> None:
        """The Pause button: the same as replying "hold on" (an Undo lifts it too)."""
        if investigation.reporter.pauses or investigation.inbox.stop_requested:
            return
        pause = Constraint("pause", "pause", author=user, reply=reply)
        self.apply(investigation, Reading((pause,)), "pause", user, reply)

    def rewind_to(self, investigation: Investigation, user: str, step: int,
                  reply: str) -> None:
        """The Rewind button on step N's message: roll back to the end of step N and pause,
        so the human can say what to do differently before step N+1 (a reply, then
        Resume). The same as replying "rewind to step N, hold on"."""
        if investigation.inbox.stop_requested:
            return
        text = f"rewind to step {step}"
        said = (Constraint("rewind", text, str(step), author=user, reply=reply),
                Constraint("pause", "pause", author=user, reply=reply))
        self.apply(investigation, Reading(said), text, user, reply)

    def resume(self, investigation: Investigation, user: str) -> None:
        """The Resume button: the same as replying "go on"."""
        for reply, said in list(investigation.replies.items()):
            if any(c.kind == "pause" for c in said):
                investigation.replies.pop(reply)
        self.apply(investigation, Reading(resume=True), "go on", user, "")

    def constrain(self, investigation: Investigation, constraint: Constraint) -> None:
        """A constraint the bot itself gives (a correction's text as a fact)."""
        investigation.inbox.put(constraint)
        if self.telemetry is not None:
            self.telemetry.constraint(constraint.kind)
