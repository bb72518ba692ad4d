"""The evaluation harness: run scenarios, score each diagnosis, summarise.

A scenario that fails to load or whose run crashes becomes an error row and the run goes
on: one broken scenario must not hide the accuracy of the others. Scenarios with
`interventions` get those replies in their constraint inbox after the given step, so the
harness also measures that the engine obeys humans.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bot.monitor import percentile
from bot.wiring import Setting, build_check_model, build_model, investigate, sandbox_setting
from engines.constraints import ConstraintInbox
from engines.diagnosis import is_correct
from engines.errors import TriageError
from engines.model import Model
from engines.steering import read_reply
from tools.cache import ToolCache
from tools.catalog import ALL_TOOLS
from tools.scenarios import Scenario, bundled_ids, load_scenario
from tools.vocabulary import cluster_vocabulary

log = logging.getLogger(__name__)

SettingFactory = Callable[[Scenario], Setting]


@dataclass(slots=True)
class EvalResult:
    """One scenario's row, in the shape `triage eval --json` prints."""

    scenario: str
    correct: bool = False
    expected: dict[str, Any] | None = None
    diagnosis: dict[str, Any] | None = None
    steps: int = 0
    tool_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    seconds: float = 0.0
    error: str | None = None
    reason: str = ""

    @property
    def confidence(self) -> float:
        return float((self.diagnosis or {}).get("confidence") or 0.0)


CONFIDENT = 0.6  # a confidence an on-call engineer acts on without checking


@dataclass(slots=True)
class EvalSummary:
    accuracy: float
    scenarios: int
    correct: int
    mean_steps: float
    p95_seconds: float
    tokens_in: int
    tokens_out: int
    errors: int = 0
    # wrong answers given with a confidence of at least CONFIDENT: the ones that mislead
    confident_wrong: int = 0


@dataclass(slots=True)
class EvalReport:
    results: list[EvalResult] = field(default_factory=list)

    @property
    def summary(self) -> EvalSummary:
        rows = self.results
        count = len(rows)
        correct = sum(r.correct for r in rows)
        ran = [r for r in rows if r.error is None]
        return EvalSummary(
            accuracy=round(correct / count, 4) if count else 0.0,
            scenarios=count,
            correct=correct,
            mean_steps=round(sum(r.steps for r in ran) / len(ran), 2) if ran else 0.0,
            p95_seconds=round(percentile([r.seconds for r in rows], 0.95) or 0.0, 3),
            tokens_in=sum(r.tokens_in for r in rows),
            tokens_out=sum(r.tokens_out for r in rows),
            errors=sum(r.error is not None for r in rows),
            confident_wrong=sum(not r.correct and r.confidence >= CONFIDENT for r in rows),
        )

    def as_json(self) -> dict[str, Any]:
        results = []
        for row in self.results:
            item = asdict(row)
            item.pop("reason")
            results.append(item)
        summary = asdict(self.summary)
        summary.pop("errors")
        return {"results": results, "summary": summary}


def scenario_refs(folder: Path | None) -> list[str | Path]:
    """Scenario references: the bundled ids, or every scenario under a folder."""
    if folder is None:
        return list(bundled_ids())
    if (folder / "scenario.yaml").is_file():
        return [folder]
    if not folder.is_dir():
        raise TriageError(f"{folder} is not a folder of scenarios")
    found = sorted(p for p in folder.iterdir() if (p / "scenario.yaml").is_file())
    if not found:
        raise TriageError(f"no scenario (a folder with scenario.yaml) under {folder}")
    return list(found)


async def evaluate_one(
    ref: str | Path,
    model_factory: Callable[[], Model],
    engine: str,
    setting_factory: SettingFactory = sandbox_setting,
    search: str = "bfs",
    check_factory: Callable[[], Model | None] = lambda: None,
    *,
    cache: ToolCache | None = None,
) -> EvalResult:
    """One scenario's run and score; `cache` shares tool answers with other runs (the
    fleet benchmark's workloads), None for none."""
    name = ref if isinstance(ref, str) else ref.name
    row = EvalResult(scenario=name)
    started = time.perf_counter()
    try:
        scenario = load_scenario(ref)
        row.scenario = scenario.id
        truth = scenario.truth
        row.expected = {
            "category": truth.category,
            "culprit": truth.culprit.model_dump(mode="json"),
        }
        inbox = ConstraintInbox()
        setting = setting_factory(scenario)
        vocab = await cluster_vocabulary(setting.sources, (t.name for t in ALL_TOOLS))
        pending = sorted(scenario.interventions, key=lambda i: i.after_step)

        def intervene(text: str) -> None:
            for constraint in read_reply(text, vocab, author="scenario").constraints:
                inbox.put(constraint)

        for intervention in [i for i in pending if i.after_step == 0]:
            intervene(intervention.text)

        async def after_step(step: int) -> None:
            for intervention in pending:
                if intervention.after_step == step:
                    intervene(intervention.text)

        result = await investigate(
            scenario.report,
            setting,
            model_factory(),
            engine=engine,
            inbox=inbox,
            after_step=after_step,
            search=search,
            check=check_factory(),
            cache=cache,
        )
        row.steps, row.tool_calls = result.steps, result.tool_calls
        row.tokens_in, row.tokens_out = result.usage.input_tokens, result.usage.output_tokens
        row.reason = result.reason
        if result.diagnosis is not None:
            row.diagnosis = result.diagnosis.model_dump(mode="json")
        row.correct = is_correct(result.diagnosis, truth)
        if result.reason == "failed":
            row.error = result.detail
    except TriageError as exc:
        row.error = str(exc)
    except Exception as exc:  # one crashing scenario must not end the evaluation
        log.exception("scenario %s crashed", name)
        row.error = f"crashed: {type(exc).__name__}: {exc}"
    row.seconds = round(time.perf_counter() - started, 3)
    return row


async def evaluate(
    refs: list[str | Path],
    *,
    model: str | None = None,
    engine: str = "react",
    jobs: int = 4,
    setting_factory: SettingFactory = sandbox_setting,
    on_result: Callable[[EvalResult], None] | None = None,
    search: str = "bfs",
    check_model: str | None = None,
) -> EvalReport:
    """Run every scenario, at most `jobs` at once, in the order given; `check_model` (or
    TRIAGE_CHECK_MODEL) verifies the diagnoses while `model` decides."""
    build_model(model)  # fail fast on a bad model name or missing key, before any run
    build_check_model(check_model)
    gate = asyncio.Semaphore(max(1, jobs))

    async def one(ref: str | Path) -> EvalResult:
        async with gate:
            row = await evaluate_one(ref, lambda: build_model(model), engine, setting_factory,
                                     search, lambda: build_check_model(check_model))
        if on_result is not None:
            on_result(row)
        return row

    rows = await asyncio.gather(*(one(ref) for ref in refs))
    return EvalReport(list(rows))
