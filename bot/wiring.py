"""Put an investigation together from names: a model, an engine, sources and tools.

The command line, the evaluation harness and the Slack bot all start investigations the same
way, through these functions, so a flag means the same thing everywhere.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from engines.budgets import budgets_for
from engines.constraints import ConstraintInbox, ConstraintSet
from engines.errors import ConfigurationError
from engines.events import Event, EventSink, discard
from engines.got import GotEngine
from engines.incident import Incident
from engines.model import Model
from engines.observation_summary import ObservationSummariser, selector_for
from engines.react import AfterStep, EngineConfig, InvestigationResult, ReactEngine
from engines.reflexion import ReflexionEngine
from engines.router import AutoEngine
from engines.tot import SEARCHES, Search, TotConfig, TotEngine
from tools.cache import ToolCache
from tools.catalog import available_tools
from tools.context import ToolContext
from tools.scenarios import Scenario, load_scenario
from tools.sources.base import Sources
from tools.sources.sandbox import sandbox_sources
from tools.toolset import Approver, Summariser, Toolset

ANALYZER = "analyzer"
DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
ENGINES = ("react", "reflexion", "tot", "got", "auto")
DEFAULT_ENGINE = "auto"  # the bot's: as accurate as react, reflexion and tot, in fewer steps
TAKES_CORRECTIONS = frozenset({"reflexion", "auto"})  # engines whose attempts open with notes
SEARCH_CHOICES = SEARCHES
Engine = ReactEngine | ReflexionEngine | TotEngine | GotEngine | AutoEngine


def default_model_name() -> str:
    """The analyzer when no LLM is configured, else `TRIAGE_MODEL` or a sensible default."""
    if not os.environ.get("OPENAI_API_KEY"):
        return ANALYZER
    return os.environ.get("TRIAGE_MODEL", DEFAULT_OPENAI_MODEL)


def build_model(name: str | None = None) -> Model:
    """`analyzer` is the offline model; any other name is an OpenAI model name."""
    chosen = name or default_model_name()
    if chosen == ANALYZER:
        from engines.analyzer import AnalyzerModel

        return AnalyzerModel()
    from engines.openai_model import OpenAIModel

    return OpenAIModel(model=chosen)  # raises ConfigurationError without key or endpoint


def check_model_name(name: str | None = None) -> str | None:
    """`--check-model`, else `TRIAGE_CHECK_MODEL`, else none (the main model checks)."""
    return name or os.environ.get("TRIAGE_CHECK_MODEL") or None


def build_check_model(name: str | None = None) -> Model | None:
    """The small model that verifies diagnoses and reads unsure replies, while the main
    model decides; `analyzer` checks with no LLM. None when no check model is named."""
    chosen = check_model_name(name)
    return build_model(chosen) if chosen else None


def reply_model(model: Model, check: Model | None) -> Model | None:
    """Who reads a reply the rules are unsure of: the check model when there is one, else
    the main model; never the analyzer, which is no reader (the rules' reading stands)."""
    reader = check if check is not None else model
    return None if reader.name == ANALYZER else reader


def engine_config(model: Model) -> EngineConfig:
    """The analyzer finishes in a few steps; an LLM gets more room. The context budget is
    the model's window either way (engines.budgets)."""
    window = budgets_for(model.name).context_tokens
    if model.name == ANALYZER:
        return EngineConfig(max_steps=12, timeout_seconds=60, context_tokens=window)
    return EngineConfig(context_tokens=window)


def build_engine(name: str, model: Model, *, search: str = "bfs",
                 check: Model | None = None) -> Engine:
    """An engine by name; `search` (bfs or dfs) is how tot explores its hypotheses, `check`
    the model that verifies diagnoses (got's verifier, Reflexion's and the router's
    evaluator)."""
    if search not in SEARCHES:
        raise ConfigurationError(f"unknown search {search!r}; choose bfs or dfs")
    if name == "react":
        return ReactEngine(engine_config(model))
    if name == "reflexion":
        return ReflexionEngine(engine_config(model), check=check)
    chosen: Search = "dfs" if search == "dfs" else "bfs"
    if name == "tot":
        return TotEngine(engine_config(model), TotConfig(search=chosen))
    if name == "auto":
        return AutoEngine(engine_config(model), chosen, check=check)
    if name == "got":
        return GotEngine(engine_config(model), check=check)
    raise ConfigurationError(f"unknown engine {name!r}; choose one of {', '.join(ENGINES)}")


@dataclass(frozen=True, slots=True)
class Setting:
    """Where an investigation's data comes from, and its clock."""

    sources: Sources
    now: datetime | None = None
    scenario: Scenario | None = None


def sandbox_setting(scenario: Scenario) -> Setting:
    """Tools served from a scenario, on the scenario's clock."""
    return Setting(sandbox_sources(scenario), scenario.now, scenario)


def scenario_setting(ref: str | Path) -> Setting:
    return sandbox_setting(load_scenario(ref))


def build_toolset(
    setting: Setting,
    now: datetime,
    constraints: ConstraintSet,
    approver: Approver | None = None,
    *,
    model: str = ANALYZER,
    summariser: Summariser | None = None,
    cache: ToolCache | None = None,
) -> Toolset:
    """The tools of one investigation, their observations cut to `model`'s budget (or
    summarised by `summariser` when cutting would lose some), their answers shared through
    `cache` with the other investigations of the same sources (the setting's clock, when it
    has one, is part of what makes two calls the same)."""
    context = ToolContext(now=now, sources=setting.sources, constraints=constraints)
    return Toolset(available_tools(setting.sources), context, approver=approver,
                   observation_tokens=budgets_for(model).observation_tokens,
                   shared=cache, fixed_clock=setting.now is not None, summariser=summariser)


def summariser_for(check: Model | None, incident: Incident) -> Summariser | None:
    """The check model summarises observations over budget; none without one."""
    if check is None:
        return None
    return ObservationSummariser(selector_for(check, is_code=check.name == ANALYZER),
                                 incident.text)


async def investigate(
    text: str,
    setting: Setting,
    model: Model,
    *,
    engine: str = "react",
    sink: EventSink = discard,
    inbox: ConstraintInbox | None = None,
    after_step: AfterStep | None = None,
    approver: Approver | None = None,
    incident_id: str | None = None,
    lessons: Sequence[str] = (),
    resume: Sequence[Event] = (),
    notes: Sequence[str] = (),
    search: str = "bfs",
    check: Model | None = None,
    cache: ToolCache | None = None,
) -> InvestigationResult:
    """Run one investigation end to end and return how it ended.

    `lessons` come from past incidents, `resume` is the event log of an interrupted run of
    the same incident, and `notes` (Reflexion only) open every attempt, such as a human's
    correction of an earlier answer. `check` verifies diagnoses instead of `model`; `cache`
    is the process's shared tool cache (tools.cache), None for none.
    """
    incident = Incident(text=text, now=setting.now) if setting.now else Incident(text=text)
    if incident_id:
        incident = Incident(text=text, now=incident.now, id=incident_id)
    constraints = ConstraintSet()
    toolset = build_toolset(setting, incident.now, constraints, approver, model=model.name,
                            summariser=summariser_for(check, incident), cache=cache)
    if inbox is None:
        inbox = ConstraintInbox()
    runner = build_engine(engine, model, search=search, check=check)
    if isinstance(runner, ReflexionEngine | AutoEngine):
        return await runner.run(
            incident,
            model,
            toolset,
            inbox,
            sink,
            constraints=constraints,
            after_step=after_step,
            lessons=lessons,
            resume=resume,
            notes=notes,
        )
    if notes:
        raise ConfigurationError("corrections need the reflexion or the auto engine")
    return await runner.run(
        incident,
        model,
        toolset,
        inbox,
        sink,
        constraints=constraints,
        after_step=after_step,
        lessons=lessons,
        resume=resume,
    )
