"""What `triage investigate` keeps in the store, so `triage history` and `triage show` cover
investigations started from the command line as well as the bot's.

The same record the bot keeps (bot/investigations/records.py): the row when the run starts,
every event in its log as it happens, and at the end its outcome and diagnosis; marked
origin "cli", so the history says where it came from and a bot starting meanwhile leaves it
to this process instead of resuming it in a Slack thread it never had. The store is the
bot's (`TRIAGE_DATABASE_URL`, else the local SQLite file).

Recording never costs the investigation anything: a store that cannot be opened, or fails
during the run, is a warning at the end saying what was not recorded and why, and the
diagnosis is printed all the same. Reflexion's reflections stay in the log, but are not
kept as lessons: a command-line run is often a rehearsal on a recorded scenario, and
lessons steer the bot's later investigations of real incidents.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass, field

from bot.feedback import Outcome, final_state
from bot.monitor import RunFigures
from bot.store import InvestigationRecord, Store, StoreError
from engines.events import Event, ObservationReceived
from engines.incident import new_investigation_id
from engines.react import InvestigationResult

ORIGIN = "cli"


def local_user() -> str:
    """Who ran the command, as the system names them ("" when it cannot say)."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no USER, LOGNAME or passwd entry (a bare container)
        return ""


@dataclass(slots=True)
class Recording:
    """One command-line investigation in the store, and what went wrong recording it."""

    investigation_id: str
    store: Store | None
    created: bool = False  # the row exists: `triage show` knows the id
    logging: bool = False  # events still go into the log (until the store fails once)
    problems: list[str] = field(default_factory=list)
    calls: int = 0  # tool calls as the events showed them, and those a cache answered
    cached: int = 0

    @classmethod
    async def start(cls, text: str, model: str, engine: str) -> Recording:
        """Open the store and create the investigation's row, or note why not."""
        investigation_id = new_investigation_id()
        try:
            store = await Store.open()
        except StoreError as exc:
            return cls(investigation_id, None, problems=[str(exc)])
        recording = cls(investigation_id, store)
        try:
            await store.migrate()
            await store.create(
                InvestigationRecord(investigation_id, "", "", text, local_user(), model),
                engine=engine, origin=ORIGIN,
            )
        except StoreError as exc:
            recording.problems.append(str(exc))
            await recording.close()
        else:
            recording.created = recording.logging = True
        return recording

    async def append(self, event: Event) -> None:
        """The event sink: each event into the log, until the store fails."""
        if isinstance(event, ObservationReceived):
            self.calls += 1
            self.cached += event.cached
        if self.store is None or not self.logging:
            return
        try:
            await self.store.append_event(self.investigation_id, event)
        except StoreError as exc:
            self.logging = False  # a log with a hole would replay wrong: stop it here
            self.problems.append(f"its log stops before the {event.kind} event: {exc}")

    async def end(self, result: InvestigationResult | None, ended: Outcome = "stopped") -> None:
        """The outcome and the diagnosis, as the bot records them; without a result (the run
        was interrupted, or broke), `ended` is the outcome."""
        if self.store is None or not self.created:
            return
        outcome = final_state(result.reason, result.diagnosis) if result else ended
        usage = result.usage if result else None
        figures = RunFigures(self.calls, self.cached, usage.input_tokens if usage else 0,
                             usage.output_tokens if usage else 0)
        try:
            await self.store.record_figures(self.investigation_id, figures)
            await self.store.finish(
                self.investigation_id, outcome, result.diagnosis if result else None
            )
        except StoreError as exc:
            self.problems.append(f"its outcome was not written: {exc}")

    async def close(self) -> None:
        if self.store is not None:
            await self.store.close()
            self.store = None

    def report(self) -> str:
        """The last line: where to find the record, or what was not recorded and why."""
        show = f"triage show {self.investigation_id}"
        if not self.created:
            reason = "; ".join(self.problems)
            return f"triage: warning: not recorded ({reason}); --no-record skips the store"
        if self.problems:
            return (f"triage: warning: recorded as {self.investigation_id} ({show}), but "
                    + "; ".join(self.problems))
        return f"Recorded as {self.investigation_id}: {show}"
