"""What investigations learn: Reflexion's reflections and humans' corrections, kept as lessons
in the store and handed to new investigations of similar incidents.

A human's word is a lesson at once (a correction, a confirmed diagnosis). Reflexion's own
reflections are not: the engine judging itself can be wrong in ways nobody has checked, so
they stay "pending" with their incident until a human confirms its diagnosis (✅, 👍, or a
reply such as "right"); only then do other incidents retrieve them.

Lessons help, they never block: a store that keeps none, or fails to search or write them,
costs the run its lessons and nothing else.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Literal

from bot.feedback import LessonLike, LessonStore, Store
from engines.diagnosis import Diagnosis

log = logging.getLogger(__name__)

LESSONS_PER_INVESTIGATION = 3

_WORD = re.compile(r"[a-z][a-z0-9-]{2,}")
_TAG = re.compile(r"\[[^\]]*\]")
_COMMON_WORDS = (
    "the and for with from that this there their they them are was were been being has have "
    "had not but our its it's into onto out over under again still keeps keep get gets got "
    "some any all every when what which who why how can cannot could should would will just "
    "also very more most less please now today since after before about then than"
)
_NOT_SYMPTOMS = frozenset(_COMMON_WORDS.split())


def symptom_words(text: str, limit: int = 8) -> list[str]:
    """The words of an incident that describe it, as tags for a lesson."""
    words = _WORD.findall(_TAG.sub(" ", text.lower()))
    return list(dict.fromkeys(w for w in words if w not in _NOT_SYMPTOMS))[:limit]


@dataclass(frozen=True, slots=True)
class Lessons:
    """The lessons of the bot's store, when it is a `LessonStore`."""

    store: Store

    async def relevant(self, text: str) -> tuple[LessonLike, ...]:
        """The confirmed lessons of past incidents most relevant to this one (none without a
        store that keeps lessons, or when the search fails)."""
        if not isinstance(self.store, LessonStore):
            return ()
        try:
            found = await self.store.search_lessons(
                _TAG.sub(" ", text), limit=LESSONS_PER_INVESTIGATION
            )
        except Exception:
            log.exception("could not search lessons")
            return ()
        return tuple(found)

    async def reflected(self, investigation_id: str, incident: str, reflection: str,
                        diagnosis: Diagnosis | None) -> None:
        """Reflexion's reflection on this incident: kept with it, pending a human's
        confirmation of the diagnosis."""
        await self.keep(reflection, investigation_id, incident, diagnosis, state="pending")

    async def learn_correction(
        self, investigation_id: str, incident: str, correction: str,
        diagnosis: Diagnosis | None,
    ) -> None:
        """A human's correction is a lesson for similar incidents."""
        if not correction.strip():
            return
        if diagnosis is None:
            record = await self.store.get(investigation_id)
            diagnosis = record.diagnosis if record is not None else None
        said = f"A human corrected the diagnosis of {incident.strip()!r}: {correction.strip()}"
        if diagnosis is not None:
            said += f" (the rejected answer was {diagnosis.category} of {diagnosis.culprit})"
        await self.keep(said, investigation_id, incident, diagnosis)

    async def confirmed(self, investigation_id: str, incident: str, diagnosis: Diagnosis,
                        user: str) -> None:
        """A human confirmed the diagnosis (Correct, 👍, "right"): the answer is a lesson for
        similar incidents, and so is what Reflexion reflected on the way to it."""
        if isinstance(self.store, LessonStore):
            try:
                promoted = await self.store.confirm_lessons(investigation_id)
            except Exception:
                log.exception("could not confirm the lessons of %s", investigation_id)
            else:
                log.info("%s confirmed %s's diagnosis: %d pending lessons confirmed", user,
                         investigation_id, promoted,
                         extra={"investigation_id": investigation_id})
        said = (f"A human confirmed the diagnosis of {incident.strip()!r}: "
                f"{diagnosis.category} of {diagnosis.culprit}. {diagnosis.summary.strip()}")
        await self.keep(said, investigation_id, incident, diagnosis)

    async def keep(
        self, text: str, investigation_id: str, incident: str, diagnosis: Diagnosis | None,
        *, state: Literal["pending", "confirmed"] = "confirmed",
    ) -> None:
        """Store a lesson, tagged with the culprit and the incident's symptom words."""
        if not isinstance(self.store, LessonStore):
            return
        culprit = diagnosis.culprit if diagnosis is not None else None
        try:
            await self.store.add_lesson(
                text,
                services=[culprit.name] if culprit else [],
                namespaces=[culprit.namespace] if culprit and culprit.namespace else [],
                symptoms=symptom_words(incident),
                source_investigation=investigation_id,
                state=state,
            )
        except Exception:
            log.exception("could not keep a lesson of %s", investigation_id)
