"""`triage analyzer-server` drives the whole LLM path, and gets the in-process answers.

The server is started as a user starts it (the real command, in its own process); the
investigations go through the real `openai` client, the production catalog and the
production budgets. Both engines must reach the same diagnosis for every bundled scenario
over the wire as in process: the analyzer reads only what an LLM is sent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from bot.evaluation import EvalReport, evaluate, scenario_refs
from engines import prompts
from engines.react import SUBMIT_SPEC
from tests.fakes.openai_server import plain_http
from tools.catalog import available_tools
from tools.scenarios import load_scenario
from tools.sources.sandbox import sandbox_sources

ROOT = Path(__file__).resolve().parents[2]
MODEL = "triage-analyzer"


@pytest.fixture(scope="module")
def analyzer_url() -> Iterator[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TRIAGE_"))}
    process = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "analyzer-server", "--port", "0"], cwd=ROOT, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    line = process.stdout.readline()
    if "listening on" not in line:
        process.kill()
        problem = process.stderr.read() if process.stderr else ""
        pytest.fail(f"analyzer-server did not start: {line}{problem}")
    try:
        yield line.rsplit(" ", 1)[-1].strip()
    finally:
        process.terminate()
        process.wait(timeout=10)


def client(url: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=0, http_client=plain_http())


def first_request() -> dict[str, object]:
    """The opening request of an investigation of the bundled checkout incident."""
    scenario = load_scenario("checkout-oom")
    tools = [*(t.spec for t in available_tools(sandbox_sources(scenario))), SUBMIT_SPEC]
    return {"model": MODEL, "messages": [
        {"role": "system", "content": prompts.system_prompt()},
        {"role": "user", "content": prompts.incident_message(scenario.report, scenario.now)}],
        "tools": [{"type": "function", "function": {"name": s.name, "description": s.description,
                                                    "parameters": s.parameters}} for s in tools]}


async def test_it_lists_its_model_and_answers_the_same_conversation_alike(
        analyzer_url: str) -> None:
    api = client(analyzer_url)
    assert [m.id for m in (await api.models.list()).data] == [MODEL]
    one, two = [await api.chat.completions.create(**first_request()) for _ in range(2)]  # type: ignore[call-overload]
    await api.close()
    first = one.choices[0].message
    assert first.tool_calls and first.content  # it surveys, and says why
    assert first.model_dump() == two.choices[0].message.model_dump()  # stateless


async def test_it_refuses_what_the_api_refuses(analyzer_url: str) -> None:
    api = client(analyzer_url)
    request = first_request()
    request["messages"] = [*request["messages"], {  # type: ignore[misc]
        "role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "k8s_events", "arguments": "{}"}}]}]
    with pytest.raises(openai.BadRequestError, match="did not have response messages: c1"):
        await api.chat.completions.create(**request)  # type: ignore[call-overload]
    with pytest.raises(openai.NotFoundError, match="gpt-4o"):
        await api.chat.completions.create(**{**request, "model": "gpt-4o"})  # type: ignore[call-overload]
    await api.close()


@pytest.mark.parametrize("engine", ["react", "reflexion"])
async def test_the_bundled_suite_gets_the_same_diagnoses_over_the_wire(
        analyzer_url: str, engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    refs = scenario_refs(None)
    local = await evaluate(refs, model="analyzer", engine=engine, jobs=2)
    monkeypatch.setenv("OPENAI_BASE_URL", analyzer_url)
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    wire = await evaluate(refs, model=MODEL, engine=engine, jobs=2)

    def answers(report: EvalReport) -> dict[str, str]:
        return {row.scenario: json.dumps([(row.diagnosis or {}).get(k) for k in
                                          ("category", "culprit")]) + (row.error or "")
                for row in report.results}

    assert answers(wire) == answers(local)
    assert all(row.correct for row in wire.results), [r.scenario for r in wire.results
                                                      if not r.correct]
    assert all(row.tokens_out > 0 for row in wire.results)  # usage came back over the wire
