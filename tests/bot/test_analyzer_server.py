"""`triage analyzer-server` drives the whole LLM path, and gets the in-process answers.

The server is started as a user starts it (the real command, in its own process); the
investigations go through the real `openai` client, the production catalog and the
production budgets. Both engines must reach the same diagnosis for every bundled scenario
over the wire as in process: the analyzer reads only what an LLM is sent. Started as a
small model (an 8k window, no tool calling), it is driven in the text ReAct format with
the short catalog, and still gets the in-process answers at that window.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from bot.evaluation import EvalReport, EvalResult, evaluate, evaluate_one, scenario_refs
from engines import prompts
from engines.analyzer import AnalyzerModel
from engines.model import Model
from engines.openai_model import OpenAIModel
from engines.react import SUBMIT_SPEC
from engines.short_catalog import LIST_TOOLS
from engines.text_transcript import INSTRUCTIONS_HEADING
from tests.fakes.openai_server import plain_http
from tools.catalog import CORE_TOOLS, available_tools
from tools.scenarios import load_scenario
from tools.sources.sandbox import sandbox_sources

ROOT = Path(__file__).resolve().parents[2]
MODEL = "triage-analyzer"


@contextmanager
def serving(*options: str) -> Iterator[str]:
    """`triage analyzer-server --port 0 OPTIONS` in its own process; yields its base URL."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TRIAGE_"))}
    process = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "analyzer-server", "--port", "0", *options],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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


@pytest.fixture(scope="module")
def analyzer_url() -> Iterator[str]:
    with serving() as url:
        yield url


@pytest.fixture(scope="module")
def small_model_url() -> Iterator[str]:
    """The analyzer as a small local model: an 8k window and no tool calling."""
    with serving("--context-tokens", "8192", "--text-only") as url:
        yield url


def answers(report: EvalReport) -> dict[str, str]:
    return {row.scenario: json.dumps([(row.diagnosis or {}).get(k) for k in
                                      ("category", "culprit")]) + (row.error or "")
            for row in report.results}


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
    assert answers(wire) == answers(local)
    assert all(row.correct for row in wire.results), [r.scenario for r in wire.results
                                                      if not r.correct]
    assert all(row.tokens_out > 0 for row in wire.results)  # usage came back over the wire


Exchange = tuple[int, dict[str, Any], dict[str, Any]]  # status, request body, response body


class TextModeAnalyzer(AnalyzerModel):
    """The analyzer in process, offered its tools as a text-mode model is (the short
    catalog, the text format's token count): the conversation the wire carries, unwritten."""

    text_mode = True


async def suite(refs: list[str | Path], model: Callable[[], Model]) -> EvalReport:
    gate = asyncio.Semaphore(2)

    async def one(ref: str | Path) -> EvalResult:
        async with gate:
            return await evaluate_one(ref, model, "react")

    return EvalReport(list(await asyncio.gather(*(one(ref) for ref in refs))))


async def over_the_wire(url: str, refs: list[str | Path]) -> tuple[EvalReport, list[Exchange]]:
    """The suite through the real client, every request and answer recorded by an httpx
    response hook (the client itself is untouched)."""
    exchanges: list[Exchange] = []

    async def record(response: httpx.Response) -> None:
        await response.aread()
        exchanges.append((response.status_code, json.loads(response.request.content),
                          response.json()))

    models: list[OpenAIModel] = []

    def model() -> OpenAIModel:
        hooked = openai.DefaultAsyncHttpxClient(verify=False, event_hooks={"response": [record]})
        models.append(OpenAIModel(MODEL, base_url=url, api_key="x", http_client=hooked))
        return models[-1]

    report = await suite(refs, model)
    for made in models:
        await made.aclose()
    return report, exchanges


async def test_an_8k_model_without_tool_calls_gets_the_in_process_diagnoses(
        small_model_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every investigation falls back to text ReAct at its first request; every request
    after that fits the 8k window the server declares (it refuses any that does not) and
    offers the short catalog; the analyzer asks list_tools for the rest and calls them."""
    monkeypatch.setenv("TRIAGE_CONTEXT_TOKENS", "8192")
    refs = scenario_refs(None)
    local = await suite(refs, TextModeAnalyzer)
    wire, exchanges = await over_the_wire(small_model_url, refs)
    assert answers(wire) == answers(local)
    assert all(row.error is None and row.tokens_out > 0 for row in wire.results)
    assert [row.correct for row in wire.results] == [row.correct for row in local.results]

    refused = [answer for status, _, answer in exchanges if status != 200]
    assert len(refused) == len(refs)  # the one request with `tools`, which switches to text
    assert {answer["error"]["message"] for answer in refused} == {
        f"{MODEL} does not support tools"}
    answered = [(sent, answer) for status, sent, answer in exchanges if status == 200]
    assert max(answer["usage"]["prompt_tokens"] for _, answer in answered) <= 8192
    systems = [sent["messages"][0]["content"] for sent, _ in answered]
    assert all("tools" not in sent for sent, _ in answered)
    assert all(INSTRUCTIONS_HEADING in system for system in systems)
    catalogs = [system.split("## Tools", 1)[1] for system in systems]
    assert all("- k8s_list_services: " not in catalog for catalog in catalogs)
    short = [catalog for catalog in catalogs if f"- {LIST_TOOLS}: " in catalog]
    assert len(short) > 2 * len(refs)  # all but the last turns, which offer only submit
    assert all(f"- {CORE_TOOLS[-1]}: " in catalog for catalog in short)
    replies = [answer["choices"][0]["message"]["content"] for _, answer in answered]
    assert sum(f"Action: {LIST_TOOLS}" in text for text in replies) == len(refs)
    assert any("Action: k8s_list_services" in text for text in replies)  # not in the core
