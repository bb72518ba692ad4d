"""Pure functions from an investigation to Slack's agent surfaces: streamed chunks (thinking
steps as task cards, hypotheses as a plan), feedback buttons and data tables.

Like bot.render, nothing here talks to Slack: the outbox asks for the chunks that changed
since the last append and marks them sent only once Slack took them, so a refused or
rate-limited append is rendered again, whole, when it is retried. Chunks are built with
slack_sdk's chunk models, then sent as plain dicts (the loopback Slack checks them).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from slack_sdk.models.messages.chunk import MarkdownTextChunk, PlanUpdateChunk, TaskUpdateChunk

from bot._blocks import Block, Message, clean, clip, escape, masked, preview, section
from bot.render import THUMBS_BLOCK, StepView
from engines.diagnosis import Diagnosis
from engines.hypotheses import Hypothesis as Board

TaskStatus = Literal["pending", "in_progress", "complete", "error"]
Chunk = dict[str, Any]
# What one chunk changes in a stream, recorded once Slack took it.
Key = tuple[str, str, str]

MAX_CHUNKS = 40  # chunks in one append; more are sent in several
MAX_MARKDOWN = 12_000  # characters of markdown_text in one call (Slack's limit)
MAX_TITLE = 250
MAX_OUTPUT = 500
FEEDBACK_ACTION = "triage_feedback_buttons"
POSITIVE, NEGATIVE = "good", "bad"
CONTINUED = "(continued: results of the calls above)"


@dataclass(slots=True)
class StreamProgress:
    """What one stream already shows, so an append sends only what changed."""

    ts: str | None = None
    sent: set[Key] = field(default_factory=set)

    def mark(self, keys: Sequence[Key]) -> None:
        self.sent.update(keys)


def _task_status(view: StepView, call_id: str) -> TaskStatus:
    observation = view.observations.get(call_id)
    if observation is None:
        return "in_progress"
    return "error" if observation.status == "error" else "complete"


def _output(view: StepView, call_id: str) -> str | None:
    observation = view.observations.get(call_id)
    if observation is None:
        return None
    text = preview(masked(observation.text), lines=3, chars=MAX_OUTPUT)
    return clip(escape(text), MAX_OUTPUT) or "(nothing came back)"


def step_chunks(views: Sequence[StepView], progress: StreamProgress) -> list[tuple[Chunk, Key]]:
    """The chunks that bring the stream up to date with `views`, each with what it marks:
    a step's heading and thought once, each call's task card whenever its status changed,
    each note once."""
    chunks: list[tuple[Chunk, Key]] = []
    for view in views:
        step = str(view.step)
        head: Key = ("head", step, "")
        if head not in progress.sent and (view.thought or view.calls):
            thought = clip(clean(view.thought.strip()), 2500)
            text = f"**Step {view.step}**" + (f" {thought}" if thought else "") + "\n"
            chunks.append((MarkdownTextChunk(text=text).to_dict(), head))
        for call in view.calls:
            status = _task_status(view, call.call_id)
            key: Key = ("task", call.call_id, status)
            if key in progress.sent:
                continue
            observation = view.observations.get(call.call_id)
            details = f"`{escape(call.tool)}`" + (" (cached)" if observation is not None
                                                  and observation.cached else "")
            task = TaskUpdateChunk(id=call.call_id, title=clip(clean(call.description),
                                                               MAX_TITLE),
                                   status=status, details=details,
                                   output=_output(view, call.call_id))
            chunks.append((task.to_dict(), key))
        for note in view.notes:
            note_key: Key = ("note", step, note)
            if note == CONTINUED or note_key in progress.sent:
                continue
            chunks.append((MarkdownTextChunk(text=f"⚠️ {clip(clean(note), 500)}\n").to_dict(),
                           note_key))
    return chunks


def batches(chunks: Sequence[tuple[Chunk, Key]]) -> list[list[tuple[Chunk, Key]]]:
    """Chunks cut into appends Slack takes: at most MAX_CHUNKS, MAX_MARKDOWN characters."""
    out: list[list[tuple[Chunk, Key]]] = []
    current: list[tuple[Chunk, Key]] = []
    size = 0
    for chunk, key in chunks:
        length = len(str(chunk.get("text", "")))
        if current and (len(current) >= MAX_CHUNKS or size + length > MAX_MARKDOWN):
            out.append(current)
            current, size = [], 0
        current.append((chunk, key))
        size += length
    if current:
        out.append(current)
    return out


# --- hypotheses as a plan -----------------------------------------------------------------

_LEAD = re.compile(r"\b(?:first lead|lead so far|leading hypothesis|hypothesis|conclusion)"
                   r"\s*:\s*(?P<what>[^.()—]+)", re.IGNORECASE)
_OPEN = re.compile(r"\bstill open\s*:\s*(?P<what>[^.()—]+)", re.IGNORECASE)


@dataclass(slots=True)
class Hypothesis:
    id: str
    title: str
    status: TaskStatus
    note: str = ""


@dataclass(slots=True)
class Plan:
    """The hypotheses of one investigation: the leading one in progress, the ones still
    open pending, the confirmed one complete, rejected ones as errors."""

    items: list[Hypothesis] = field(default_factory=list)
    leading: str = ""

    @property
    def title(self) -> str:
        return f"Leading hypothesis: {self.leading}" if self.leading else "Hypotheses"

    def _find(self, title: str) -> Hypothesis:
        key = " ".join(title.lower().split())
        for item in self.items:
            if item.id == key:
                return item
        item = Hypothesis(key, title, "pending")
        self.items.append(item)
        return item

    def read(self, thought: str) -> bool:
        """Take the hypotheses a thought names; True when the plan changed."""
        before = [(h.id, h.status) for h in self.items], self.leading
        lead = _LEAD.search(thought)
        if lead is not None:
            title = clip(" ".join(lead.group("what").split()), 120)
            for item in self.items:
                if item.status == "in_progress":
                    item.status = "pending"
            self._find(title).status = "in_progress"
            self.leading = title
        for found in _OPEN.finditer(thought):
            item = self._find(clip(" ".join(found.group("what").split()), 120))
            if item.status not in ("in_progress", "error"):
                item.status = "pending"
        return before != ([(h.id, h.status) for h in self.items], self.leading)

    def board(self, hypotheses: Sequence[Board], expanding: Sequence[str] = ()) -> bool:
        """Take a search engine's board (tot, got): confirmed complete, refuted errors with
        what refuted them, open pending, and in progress the one expanded (else the best
        open one). True when the plan changed."""
        before = [(h.id, h.status, h.note) for h in self.items], self.leading
        ranked = sorted(hypotheses, key=lambda h: -h.score)
        leader = next((h for h in ranked if h.id in expanding and h.state == "open"),
                      next((h for h in ranked if h.state == "open"), None))
        for entry in ranked:
            status: TaskStatus = {"confirmed": "complete", "refuted": "error"}.get(
                entry.state, "pending")  # type: ignore[assignment]
            if entry is leader:
                status = "in_progress"
            note = clip(entry.refuted_by, 120) if entry.state == "refuted" else \
                f"score {entry.score:.2f}"
            item = self._find(clip(entry.label, 120))
            item.status, item.note = status, note
        confirmed = next((h for h in ranked if h.state == "confirmed"), None)
        chosen = confirmed or leader
        self.leading = clip(chosen.label, 120) if chosen is not None else self.leading
        return before != ([(h.id, h.status, h.note) for h in self.items], self.leading)

    def diagnosed(self, diagnosis: Diagnosis) -> None:
        """The engine submitted an answer: it is the confirmed hypothesis."""
        words = f"{diagnosis.category.replace('_', ' ')} in {diagnosis.culprit}"
        if not self.items:
            return  # no hypotheses were named: the diagnosis message says it all
        target = next((h for h in self.items if h.status == "in_progress"), None)
        if target is None:
            target = self._find(words)
        target.status, target.note = "complete", f"diagnosis: {words}"
        self.leading = target.title

    def rejected(self) -> None:
        """Reflexion rejected the answer: the hypothesis it rested on is out."""
        for item in self.items:
            if item.status in ("complete", "in_progress"):
                item.status, item.note = "error", "rejected on reflection"
        self.leading = ""


def plan_chunks(plan: Plan, progress: StreamProgress) -> list[tuple[Chunk, Key]]:
    chunks: list[tuple[Chunk, Key]] = []
    title = clip(clean(plan.title), MAX_TITLE)
    if ("plan", title, "") not in progress.sent:
        chunks.append((PlanUpdateChunk(title=title).to_dict(), ("plan", title, "")))
    for item in plan.items:
        key: Key = ("hypothesis", item.id, item.status)
        if key in progress.sent:
            continue
        task = TaskUpdateChunk(id=f"h{abs(hash(item.id)) % 10**8}",
                               title=clip(clean(item.title), MAX_TITLE), status=item.status,
                               output=clean(item.note) or None)
        chunks.append((task.to_dict(), key))
    return chunks


# --- blocks: feedback buttons and data tables ---------------------------------------------


def feedback_buttons(investigation_id: str) -> Block:
    """👍 / 👎 in a context_actions block; the value says which and of what."""
    return {
        "type": "context_actions",
        "block_id": THUMBS_BLOCK,
        "elements": [{
            "type": "feedback_buttons",
            "action_id": FEEDBACK_ACTION,
            "positive_button": {"text": {"type": "plain_text", "text": "Right"},
                                "accessibility_label": "This diagnosis is right",
                                "value": f"{POSITIVE}:{investigation_id}"},
            "negative_button": {"text": {"type": "plain_text", "text": "Wrong"},
                                "accessibility_label": "This diagnosis is wrong",
                                "value": f"{NEGATIVE}:{investigation_id}"},
        }],
    }


def _cell(text: str) -> dict[str, str]:
    return {"type": "raw_text", "text": clip(text, 300) or "-"}


def table(header: Sequence[str], rows: Sequence[Sequence[str]], block_id: str) -> Block:
    """A data table: a header row and up to 99 rows of raw text."""
    body = [[_cell(c) for c in header], *([_cell(c) for c in row] for row in rows[:99])]
    return {"type": "table", "block_id": block_id, "rows": body,
            "column_settings": [{"is_wrapped": True} for _ in header]}


def evidence_table(diagnosis: Diagnosis, times: dict[str, str]) -> Block | None:
    """The evidence as tool, time, quote; `times` maps a tool to when it answered."""
    if not diagnosis.evidence:
        return None
    rows = [[e.tool, times.get(e.tool, ""), masked(e.quote)] for e in diagnosis.evidence]
    return table(("Tool", "Time", "Quote"), rows, "triage_evidence")


def revisions_table(data: Any) -> Block | None:
    """A workload's recent revisions (the `revisions` of k8s_rollout_history's result):
    revision, when it was created, its images or change cause, and its pods."""
    revisions = data.get("revisions") if isinstance(data, dict) else None
    if not isinstance(revisions, list):
        return None
    rows = []
    for row in revisions:
        if not isinstance(row, dict) or "revision" not in row:
            continue
        what = str(row.get("change_cause") or ", ".join(str(i) for i in row.get("images", [])))
        mark = " (current)" if row.get("current") else ""
        rows.append([f"{row['revision']}{mark}", str(row.get("created", "")), masked(what),
                     str(row.get("pods", ""))])
    if not rows:
        return None
    return table(("Revision", "Created", "What", "Pods"), rows, "triage_revisions")


def rich_diagnosis(classic: Message, investigation_id: str, diagnosis: Diagnosis,
                   times: dict[str, str]) -> Message:
    """The diagnosis with the agent-era blocks: the evidence as a data table (tool, time,
    quote) instead of a list, and 👍 / 👎 beside the Correct / Wrong buttons."""
    evidence = evidence_table(diagnosis, times)
    blocks: list[Block] = []
    for block in classic.blocks:
        text = str((block.get("text") or {}).get("text", ""))
        if evidence is not None and text.startswith("*Evidence*"):
            blocks.append(section("*Evidence*"))
            blocks.append(evidence)
            continue
        blocks.append(block)
    blocks.append(feedback_buttons(investigation_id))
    return Message(classic.text, blocks)


def revisions_message(workload: str, data: Any) -> Message | None:
    """The culprit's recent revisions, as a data table of their own message (Slack shows
    one table per message)."""
    block = revisions_table(data)
    if block is None:
        return None
    title = f"Recent revisions of {clean(workload)}"
    return Message(title, [section(f":clipboard: *{title}*"), block])
