"""What a ReAct step does with the model's calls: run the tools and record what they show,
or accept a submitted diagnosis (or send it back with the reasons). Apart from the loop in
react.py, which decides when to ask and when to stop."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from pydantic import ValidationError

from engines.diagnosis import SUBMIT_TOOL, Diagnosis
from engines.events import ObservationReceived, ToolCalled
from engines.evidence import placed
from engines.model import ToolCall, ToolMessage
from engines.run_state import _Run
from engines.tokens import count_tokens


async def run_calls(run: _Run, calls: Sequence[ToolCall]) -> list[str]:
    """Run a step's calls at once, in the log and the history as asked and as answered;
    the observations' texts, in the calls' order."""
    for call in calls:
        await run.emit(
            ToolCalled(
                run.incident.id,
                run.step,
                call.id,
                call.name,
                dict(call.arguments or {}),
                run.toolset.describe(call),
            )
        )
    results = await asyncio.gather(*(run.toolset.call(call) for call in calls))
    run.tool_calls += len(calls)
    texts: list[str] = []
    for call, result in zip(calls, results, strict=True):
        tokens = count_tokens(result.text)
        run.observation_tokens += tokens
        run.raw_observation_tokens += max(result.raw_tokens, tokens)
        run.history.append(
            ToolMessage(call.id, call.name, result.text, result.status)
        )
        texts.append(result.text)
        run.observations.append((run.step, call.name, result.text))
        await run.emit(
            ObservationReceived(
                run.incident.id,
                run.step,
                call.id,
                call.name,
                result.status,
                result.text,
                result.data,
                result.cached,
                result.seconds,
                tokens,
                result.raw_tokens,
            )
        )
    return texts

def accept_submission(run: _Run, call: ToolCall) -> None:
    """Validate a submitted diagnosis; an invalid one goes back with the reasons."""
    problem: str
    if call.arguments is None:
        problem = f"the arguments are not valid JSON: {call.raw_arguments[:200]!r}"
    else:
        try:
            # Quotes made whole, with the step that shows them, before anyone reads them.
            run.diagnosis = placed(Diagnosis.model_validate(call.arguments),
                                   run.observations)
            if run.guide is not None:
                run.diagnosis = run.guide.amend(run.diagnosis)
        except ValidationError as exc:
            problem = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'diagnosis'}: {e['msg']}"
                for e in exc.errors()
            )
        else:
            run.history.append(ToolMessage(call.id, SUBMIT_TOOL, "Diagnosis accepted."))
            return
    run.history.append(
        ToolMessage(
            call.id,
            SUBMIT_TOOL,
            f"ERROR: invalid diagnosis ({problem}); fix it and call {SUBMIT_TOOL} again.",
            "error",
        )
    )
