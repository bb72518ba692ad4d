"""`--engine auto`: survey first, then pick an engine and the loop's limits by complexity.

Step 1 of an auto run is a first survey (engines/survey.py): a few cheap reads of the whole
cluster, run as an ordinary step of the one ReAct loop, so it is shown, counted and logged.
The signals are those of the report (how many workloads and namespaces it names, whether a
call chain is involved: upstream, timeouts, 5xx, latency, "A calls B"; whether many things
fail at once) and of the survey (how many workloads are unhealthy and in how many
namespaces, whether nodes have problems). tot takes a simple incident (one sick workload:
limits halved, and the search may end once one hypothesis dominates its rivals) and a
complex or broad one (a chain, several namespaces or sick workloads, many things at once:
full limits, at least two steps), because on the suites it is as accurate as ReAct and got
in fewer steps. The choice, its reason and the
limits are an `EngineChosen` event after the survey; the chosen engine goes on from step 2
with the survey's log, so its calls are reused, never repeated, and a resumed run keeps the
engine it chose.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace

from engines.constraints import ConstraintInbox, ConstraintSet
from engines.events import EngineChosen, Event, EventSink, discard
from engines.incident import Incident
from engines.model import Model
from engines.react import (
    AfterStep,
    EngineConfig,
    InvestigationResult,
    ReactEngine,
    ToolRunner,
    announce,
    emit,
)
from engines.reflexion import ReflexionConfig, ReflexionEngine
from engines.survey import Found, SurveyModel, found_in, survey_done
from engines.tot import Search, TotConfig, TotEngine

_NAME = re.compile(r"\b[a-z][a-z0-9]*(?:-[a-z0-9]+)+\b")
_NAMED = re.compile(r"\b([a-z][a-z0-9-]{2,})\s+(?:service|pods?|deployment|api|workers?|jobs?)\b",
                    re.I)
_NAMESPACE = re.compile(r"\b(?:in|namespace)\s+(?:the\s+)?`?([a-z][a-z0-9-]+)`?\s+namespace\b"
                        r"|\bnamespaces?\s+`?([a-z][a-z0-9-]+)`?|\b([a-z][a-z0-9-]+)/[a-z]", re.I)
_CHAIN = re.compile(r"upstream|downstream|\bcalls?\b|calling|depends on|dependency|timeouts?|"
                    r"timed out|\b50[234]\b|gateway|latency|slow|->|→|behind", re.I)
_BROAD = re.compile(r"several|many|multiple|everything|all (?:the )?services|across|whole|"
                    r"cluster-wide|outage", re.I)
_COMMON = frozenset({"on-call", "read-only", "e-mail", "follow-up", "re-deploy", "roll-back"})


@dataclass(frozen=True, slots=True)
class Complexity:
    workloads: int
    namespaces: int
    call_chain: bool
    broad: bool
    unhealthy: int = 0  # workloads the survey found unhealthy
    node_problems: int = 0
    surveyed: bool = False
    sick_namespaces: int = 0  # namespaces the survey found unhealthy workloads in

    @property
    def why(self) -> str:
        parts = [f"{self.workloads} workload(s) and {self.namespaces} namespace(s) implicated"]
        if self.surveyed:
            nodes = f", {self.node_problems} node(s) with problems" if self.node_problems \
                else ""
            parts.append(f"the survey found {self.unhealthy} unhealthy workload(s){nodes}")
        if self.call_chain:
            parts.append("a call chain is involved")
        if self.broad:
            parts.append("many things fail at once")
        return ", ".join(parts)


def assess(report: str, found: Found | None = None) -> Complexity:
    """The cheap signals of a report and of what the first survey found."""
    found = found or Found()
    names = {m.lower() for m in _NAME.findall(report)} - _COMMON
    names |= {m.group(1).lower() for m in _NAMED.finditer(report)}
    spaces = {next(g for g in m.groups() if g).lower() for m in _NAMESPACE.finditer(report)}
    sick = {name.lower() for _, name in found.unhealthy}
    return Complexity(len(names | sick), len(spaces | found.namespaces),
                      bool(_CHAIN.search(report)), bool(_BROAD.search(report)),
                      len(found.unhealthy), found.node_problems, found.surveyed,
                      len(found.namespaces))


@dataclass(frozen=True, slots=True)
class Choice:
    engine: str
    reason: str
    config: EngineConfig
    tot: TotConfig = field(default_factory=TotConfig)

    @property
    def limits(self) -> dict[str, float]:
        keys = ("max_steps", "min_steps", "timeout_seconds", "token_budget")
        limits = {k: float(v) for k, v in asdict(self.config).items() if k in keys}
        if self.engine == "tot" and self.tot.settle_at:
            limits["settle_at"] = self.tot.settle_at
        return limits


SETTLE_AT = 0.9  # one sick workload: a leader this strong, far above its rivals, will do
BROAD_NAMESPACES = 3  # unhealthy workloads in this many namespaces: an outage, not a fault


def choose(complexity: Complexity, base: EngineConfig) -> Choice:
    """The engine and its limits (a preset scaled from `base`, the model's defaults).

    tot tests rival hypotheses and stops once one is confirmed and its rivals refuted,
    which on the suites takes fewer steps than ReAct at the same accuracy, so it takes every
    incident, with limits by complexity. got is not chosen for a broad outage any more:
    measured on the bundled and held-out suites it was as accurate as tot on the incidents
    the router gave it, in about four times the steps (README, the router's survey)."""
    c = complexity
    broad = c.broad or c.sick_namespaces >= BROAD_NAMESPACES
    if broad or c.call_chain or c.namespaces >= 2 or c.workloads >= 3 or c.node_problems \
            or c.unhealthy >= 2:
        chain = replace(base, min_steps=min(2, base.max_steps))
        return Choice("tot", f"{'broad' if broad else 'complex'}: {c.why}", chain)
    simple = replace(base, max_steps=min(base.max_steps, 8),
                     timeout_seconds=base.timeout_seconds / 2,
                     token_budget=base.token_budget // 2)
    return Choice("tot", f"simple: {c.why}", simple, TotConfig(settle_at=SETTLE_AT))


# The router's attempts: a second one only when the first failed outright (no diagnosis,
# evidence no observation holds). A low confidence, or `unknown` with its leads, is reported
# as it is: on the 160 held-out scenarios of the time, Reflexion's retries of those changed
# none of them and cost 2.4 more steps an incident (6.78 mean steps against react's 4.40).
ROUTER_ATTEMPTS = ReflexionConfig(max_attempts=2, min_confidence=0.0, retry_unknown=False)


class AutoEngine:
    """The router: a first survey, then the engine and the limits for each incident, run
    inside Reflexion's evaluator, so a failed attempt is reflected on and tried again and a
    human's correction opens every attempt."""

    name = "auto"

    def __init__(self, config: EngineConfig | None = None, search: Search = "bfs", *,
                 check: Model | None = None,
                 attempts: ReflexionConfig = ROUTER_ATTEMPTS) -> None:
        self.config = config or EngineConfig()
        self.search = search
        self.reflexion = ReflexionEngine(self.config, attempts, check=check)
        self.last_choice: Choice | None = None

    def engine_for(self, choice: Choice) -> ReactEngine | TotEngine:
        if choice.engine == "tot":
            return TotEngine(choice.config, replace(choice.tot, search=self.search))
        return ReactEngine(choice.config)

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
        """Survey (step 1), choose, and hand the log to the chosen engine, which goes on
        from step 2 with the survey's observations. The same log always gives the same
        choice, so a resumed run goes on with the engine it chose, without a second
        survey; the choice is announced once, after the survey. `notes` (a human's
        correction of an earlier answer) open every attempt."""
        constraints = constraints if constraints is not None else ConstraintSet()
        if not resume:
            await announce(sink, incident, model, self.name, self.config.max_steps, lessons)
        log = list(resume)
        if not survey_done(log):
            log += await self._survey(incident, model, toolset, inbox, sink, constraints,
                                      lessons, after_step, log)
        choice = self.last_choice = choose(assess(incident.text, found_in(log)), self.config)
        if not any(isinstance(e, EngineChosen) for e in log):
            chosen = EngineChosen(incident.id, choice.engine, choice.reason, choice.limits,
                                  step=1)
            await emit(sink, chosen)
            log.append(chosen)
        engine, given = self.engine_for(choice), constraints

        async def attempt(replayed: Sequence[Event], start_step: int,
                          opening: Sequence[str]) -> InvestigationResult:
            return await engine.attempt(incident, model, toolset, inbox, sink,
                                        constraints=given, lessons=lessons,
                                        after_step=after_step, resume=replayed,
                                        start_step=start_step, notes=opening)

        return await self.reflexion.attempts(incident, model, toolset, sink, constraints,
                                             lessons, attempt, resume=log, notes=notes)

    async def _survey(self, incident: Incident, model: Model, toolset: ToolRunner,
                      inbox: ConstraintInbox | None, sink: EventSink,
                      constraints: ConstraintSet, lessons: Sequence[str],
                      after_step: AfterStep | None, log: Sequence[Event]) -> list[Event]:
        """Step 1 through the one ReAct loop, with `SurveyModel` asking for the calls. The
        constraints it takes are in its events; the chosen engine replays them."""
        made: list[Event] = []

        async def keep(event: Event) -> None:
            made.append(event)
            await sink(event)

        before = list(constraints.items)
        await ReactEngine(replace(self.config, max_steps=1)).attempt(
            incident, SurveyModel(model.name), toolset, inbox, keep, constraints=constraints,
            lessons=lessons, after_step=after_step, resume=log)
        constraints.items[:] = before  # the chosen engine replays those of the log
        return made
