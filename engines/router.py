"""`--engine auto`: pick an engine and the loop's limits by the incident's complexity.

The signals are cheap and read from the report alone, before any tool runs: how many
workloads and namespaces it names, whether a call chain is involved (upstream, timeouts,
5xx, latency, "A calls B") and whether many things fail at once. A single pod crashing
needs few steps and no search; a call chain across namespaces is where rival hypotheses
(a real fault chosen over the true one, the right fault at the wrong hop) must be tested,
so tot gets it with its full limits; a broad outage over several sources is decomposed by
got. The choice, its reason and the limits are an `EngineChosen` event, right after the
run's start.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace

from engines.constraints import ConstraintInbox, ConstraintSet
from engines.events import EngineChosen, Event, EventSink, InvestigationStarted, discard
from engines.got import GotEngine
from engines.incident import Incident
from engines.model import Model
from engines.react import AfterStep, EngineConfig, InvestigationResult, ReactEngine, ToolRunner
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

    @property
    def why(self) -> str:
        parts = [f"{self.workloads} workload(s) and {self.namespaces} namespace(s) named"]
        if self.call_chain:
            parts.append("a call chain is involved")
        if self.broad:
            parts.append("many things fail at once")
        return ", ".join(parts)


def assess(report: str) -> Complexity:
    """The cheap signals of a report."""
    names = {m.lower() for m in _NAME.findall(report)} - _COMMON
    names |= {m.group(1).lower() for m in _NAMED.finditer(report)}
    spaces = {next(g for g in m.groups() if g).lower() for m in _NAMESPACE.finditer(report)}
    return Complexity(len(names), len(spaces), bool(_CHAIN.search(report)),
                      bool(_BROAD.search(report)))


@dataclass(frozen=True, slots=True)
class Choice:
    engine: str
    reason: str
    config: EngineConfig

    @property
    def limits(self) -> dict[str, float]:
        keys = ("max_steps", "min_steps", "timeout_seconds", "token_budget")
        return {k: float(v) for k, v in asdict(self.config).items() if k in keys}


def choose(complexity: Complexity, base: EngineConfig) -> Choice:
    """The engine and its limits (a preset scaled from `base`, the model's defaults)."""
    if complexity.broad and not complexity.call_chain:
        return Choice("got", f"broad: {complexity.why}", base)
    if complexity.call_chain or complexity.namespaces >= 2 or complexity.workloads >= 3:
        chain = replace(base, min_steps=min(2, base.max_steps))
        return Choice("tot", f"complex: {complexity.why}", chain)
    simple = replace(base, max_steps=min(base.max_steps, 8),
                     timeout_seconds=base.timeout_seconds / 2,
                     token_budget=base.token_budget // 2)
    return Choice("react", f"simple: {complexity.why}", simple)


class AutoEngine:
    """The router: one of react, tot or got for each incident."""

    name = "auto"

    def __init__(self, config: EngineConfig | None = None, search: Search = "bfs", *,
                 check: Model | None = None) -> None:
        self.config = config or EngineConfig()
        self.search = search
        self.check = check  # got's verifier when it is chosen
        self.last_choice: Choice | None = None

    def engine_for(self, choice: Choice) -> ReactEngine | TotEngine | GotEngine:
        if choice.engine == "tot":
            return TotEngine(choice.config, TotConfig(search=self.search))
        if choice.engine == "got":
            return GotEngine(choice.config, check=self.check)
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
    ) -> InvestigationResult:
        """The same incident always gets the same choice, so a resumed run goes on with the
        engine it started with; the choice is announced once, after the start."""
        choice = self.last_choice = choose(assess(incident.text), self.config)
        chosen = EngineChosen(incident.id, choice.engine, choice.reason, choice.limits)

        async def announcing(event: Event) -> None:
            await sink(event)
            if isinstance(event, InvestigationStarted):
                await sink(chosen)

        return await self.engine_for(choice).run(
            incident, model, toolset, inbox, announcing, constraints=constraints,
            lessons=lessons, after_step=after_step, resume=resume)
