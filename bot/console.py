"""Show an investigation live in a terminal: each event as it happens, then the diagnosis."""

from __future__ import annotations

from typing import assert_never

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

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
from engines.hypotheses import board_line, limits_text

PREVIEW_LINES = 8


def preview(text: str, lines: int = PREVIEW_LINES) -> str:
    """The first lines of an observation, saying how many were left out."""
    all_lines = text.splitlines()
    if len(all_lines) <= lines:
        return text
    return "\n".join([*all_lines[:lines], f"… {len(all_lines) - lines} more lines"])


def diagnosis_panel(diagnosis: Diagnosis) -> Panel:
    body = Text()
    body.append("Category   ", style="bold").append(f"{diagnosis.category}\n")
    body.append("Culprit    ", style="bold").append(f"{diagnosis.culprit}\n")
    body.append("Confidence ", style="bold").append(f"{diagnosis.confidence:.0%}\n\n")
    body.append(diagnosis.summary.strip() + "\n")
    if diagnosis.evidence:
        body.append("\nEvidence\n", style="bold")
        for item in diagnosis.evidence:  # where it comes from, then the quote as printed
            body.append(f"  • {item.origin}\n", "red" if item.found is False else "dim")
            body.append(_indent(item.quote) + "\n", style="green")
    if diagnosis.fix:
        body.append("\nFix  ", style="bold").append(diagnosis.fix.strip())
    return Panel(body, title="Diagnosis", border_style="green", expand=False)


class ConsoleReporter:
    """An event sink that prints to a rich console."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(highlight=False)
        self._step = 0

    async def __call__(self, event: Event) -> None:
        self.show(event)

    def _step_header(self, step: int) -> None:
        if step != self._step:
            self._step = step
            self.console.rule(f"step {step}", style="dim")

    def show(self, event: Event) -> None:
        out = self.console
        match event:
            case InvestigationStarted():
                out.print(
                    f"[bold]Investigating[/bold] {event.incident_text.strip()}\n"
                    f"[dim]engine {event.engine} · model {event.model} · "
                    f"at most {event.max_steps} steps · id {event.investigation_id}[/dim]"
                )
            case ThoughtRecorded():
                self._step_header(event.step)
                out.print(Text(f"💭 {event.text}", style="italic"))
            case ToolCalled():
                self._step_header(event.step)
                out.print(Text(f"🔧 {event.description}", style="cyan"))
            case ObservationReceived():
                style = "red" if event.status == "error" else "dim"
                note = " (cached)" if event.cached else ""
                out.print(Text(f"   ↳ {event.tool}{note}", style="bold " + style))
                out.print(Text(_indent(preview(event.text)), style=style))
            case ConstraintApplied():
                who = event.author or "a human"
                out.print(Text(f"✋ {who}: {event.text!r} → {event.summary}", style="yellow"))
            case ConstraintWithdrawn():
                who = event.author or "a human"
                out.print(Text(f"↩ {who} withdrew: {event.summary}", style="yellow"))
            case DiagnosisSubmitted():
                out.print(diagnosis_panel(event.diagnosis))
            case LessonsRetrieved():
                out.print(Text("📚 Lessons from past incidents:", style="magenta"))
                for lesson in event.lessons:
                    out.print(Text(f"   • {lesson}", style="magenta"))
            case ReflectionRecorded():
                out.print(
                    Text(
                        f"🔁 Attempt {event.attempt} rejected: {'; '.join(event.problems)}",
                        style="bold magenta",
                    )
                )
                out.print(Text(_indent(event.text), style="magenta"))
            case ErrorOccurred():
                out.print(Text(f"⚠ {event.message}", style="bold red" if event.fatal else "red"))
            case HypothesesUpdated():
                testing = f" · testing {', '.join(event.expanding)}" if event.expanding else ""
                out.print(Text(f"🌳 Hypotheses ({event.search}){testing}", style="blue"))
                for hypothesis in event.hypotheses:
                    out.print(Text(f"   • {board_line(hypothesis)}", style="blue"))
            case EngineChosen():
                out.print(Text(f"🧭 Engine {event.engine}: {event.reason} "
                               f"({limits_text(event.limits)})", style="blue"))
            case RewoundTo():
                out.print(Text(f"⏪ {event.said}", style="yellow"))
            case InvestigationStopped():
                detail = f": {event.detail}" if event.detail else ""
                out.print(f"[dim]Stopped after {event.step} steps ({event.reason}{detail})[/dim]")
            case _:
                assert_never(event)


def _indent(text: str) -> str:
    return "\n".join("     " + line for line in text.splitlines())
