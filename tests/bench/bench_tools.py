"""Tool use: which tools the analyzer's investigations call, and which give evidence.

Run with `python -m tests.bench tools`. Investigates every bundled and held-out scenario
in process with the full catalog and prints, for each tool, how many diagnoses quoted it
as evidence and how many investigations called it, as the `TOOL_USE` table of
tools/catalog.py, whose order is the short catalog's (engines.short_catalog).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from bot.evaluation import scenario_refs
from bot.wiring import build_model, investigate, sandbox_setting
from engines.diagnosis import SUBMIT_TOOL
from engines.model import AssistantMessage
from tools.catalog import ALL_TOOLS, TOOL_USE, rank
from tools.promql import PROMQL_TOOLS
from tools.scenarios import load_scenario

HELD_OUT = Path(__file__).resolve().parents[1] / "data"
Use = dict[str, tuple[int, int]]


async def measure(refs: Sequence[str | Path]) -> Use:
    """name: (diagnoses quoting it, investigations calling it), for every tool."""
    quoted: Counter[str] = Counter()
    called: Counter[str] = Counter()
    for ref in refs:
        scenario = load_scenario(ref)
        result = await investigate(scenario.report, sandbox_setting(scenario),
                                   build_model("analyzer"))
        called.update({call.name for message in result.transcript
                       if isinstance(message, AssistantMessage)
                       for call in message.tool_calls if call.name != SUBMIT_TOOL})
        if result.diagnosis is not None:
            quoted.update({quote.tool for quote in result.diagnosis.evidence})
    names = [tool.name for tool in (*ALL_TOOLS, *PROMQL_TOOLS)]
    return {name: (quoted[name], called[name]) for name in names}


def all_refs() -> list[str | Path]:
    refs = scenario_refs(None)
    for folder in sorted(HELD_OUT.glob("holdout*")):
        refs += scenario_refs(folder)
    return refs


async def main() -> None:
    refs = all_refs()
    started = time.perf_counter()
    use = await measure(refs)
    print(f"{len(refs)} scenarios in {time.perf_counter() - started:.1f}s; "
          "TOOL_USE for tools/catalog.py:")
    for name in rank(use):
        recorded = "" if TOOL_USE.get(name) == use[name] else f"  # recorded: {TOOL_USE.get(name)}"
        print(f'    "{name}": {use[name]},{recorded}')
