"""--check-model: a small model verifies and reads unsure replies, the main model decides.

Both models speak through the real `openai` client to their own strict loopback server (or
are scripted in process), so each test sees which model received which request: the main
model must never be asked to verify when a check model is set.
"""

from __future__ import annotations

from typing import Any, cast

from bot.cli import main as cli_main
from bot.investigations.investigation import Investigation
from bot.investigations.steering import reader_for
from bot.wiring import build_check_model, reply_model
from engines.analyzer import AnalyzerModel
from engines.constraints import ConstraintInbox, ConstraintSet
from engines.diagnosis import is_correct
from engines.events import Event, ReflectionRecorded
from engines.got import GotEngine
from engines.hypotheses import UNCONFIRMED
from engines.hypotheses_asked import VERIFY_SPEC
from engines.incident import Incident
from engines.openai_model import OpenAIModel
from engines.react import EngineConfig, InvestigationResult
from engines.reflexion import ReflexionEngine
from engines.scripted_model import ScriptedModel, call, reply
from engines.steering import read_reply
from engines.steering.model_reader import READING_TOOL
from tests.engines.test_e2e_openai import DIAGNOSIS, FAST, SCENARIO, k8s_pod_status
from tests.fakes.openai_server import Completion, FakeOpenAIServer, plain_http, tool_call
from tools.context import ToolContext
from tools.sources.sandbox import sandbox_sources
from tools.toolset import Toolset

PODS = {"namespace": "shop"}
CONFIG = EngineConfig(max_steps=5, timeout_seconds=20)


def _calls(name: str, arguments: dict[str, Any]) -> Completion:
    return Completion(None, (tool_call(name, arguments),))


def _forced(body: dict[str, Any]) -> str | None:
    choice = body.get("tool_choice")
    return choice["function"]["name"] if isinstance(choice, dict) else None


def _purposes(model: ScriptedModel) -> list[object]:
    return [r.context.get("purpose") for r in model.requests]


async def _run(engine: GotEngine | ReflexionEngine, model: Any) -> tuple[InvestigationResult,
                                                                        list[Event]]:
    constraints = ConstraintSet()
    context = ToolContext(now=SCENARIO.now, sources=sandbox_sources(SCENARIO),
                          constraints=constraints)
    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    result = await engine.run(Incident(SCENARIO.report, now=SCENARIO.now), model,
                              Toolset([k8s_pod_status], context), None, sink,
                              constraints=constraints)
    return result, events


def _llm(server: FakeOpenAIServer, name: str) -> OpenAIModel:
    return OpenAIModel(name, base_url=server.base_url, api_key="sk-test", retry=FAST,
                       http_client=plain_http())


async def test_gots_verifier_is_the_check_model_through_the_loopback_api() -> None:
    async with FakeOpenAIServer(models=("gpt-big",)) as big, \
            FakeOpenAIServer(models=("gpt-small",)) as small:
        big.script(
            _calls("record_subproblems", {"subproblems": [
                {"source": "cluster", "focus": "checkout's pods"}]}),
            _calls("k8s_pod_status", PODS),  # the cluster sub-problem
            _calls("submit_diagnosis", DIAGNOSIS),  # its partial answer
            _calls("submit_diagnosis", DIAGNOSIS),  # the merge
            _calls("k8s_pod_status", {"namespace": "payments"}),  # the fix the check asked
            _calls("submit_diagnosis", DIAGNOSIS),
        )
        small.script(
            _calls("record_verdict", {"problems": ["payments is not looked at"]}),
            _calls("record_verdict", {"problems": []}),
        )
        async with _llm(big, "gpt-big") as main, _llm(small, "gpt-small") as check:
            result, _ = await _run(GotEngine(CONFIG, check=check), main)
        assert not big.refusals and not small.refusals
        big.check()
        small.check()
        main_asked = [_forced(b) for b in big.chat_requests]
        check_asked = [(b["model"], _forced(b)) for b in small.chat_requests]
        fix_note = big.chat_requests[4]["messages"][-1]["content"]
    assert result.reason == "diagnosed" and result.attempts == 2
    assert is_correct(result.diagnosis, SCENARIO.truth)
    assert VERIFY_SPEC.name not in main_asked
    assert check_asked == [("gpt-small", VERIFY_SPEC.name)] * 2
    assert "payments is not looked at" in fix_note  # the check's feedback reached the main
    assert result.usage.input_tokens > 0
    assert result.diagnosis is not None  # verified at last: the model's confidence stands
    assert result.diagnosis.confidence == DIAGNOSIS["confidence"]


async def test_the_analyzer_checks_an_llms_merge_with_no_llm() -> None:
    async with FakeOpenAIServer(models=("gpt-big",)) as big:
        big.script(
            _calls("record_subproblems", {"subproblems": [
                {"source": "cluster", "focus": "checkout's pods"}]}),
            _calls("k8s_pod_status", PODS),
            _calls("submit_diagnosis", DIAGNOSIS),
            _calls("submit_diagnosis", DIAGNOSIS),  # the merge, verified by the analyzer
            # the analyzer reads no observation of this test's tool, so it finds no cause
            # supported and asks for a fix, twice (the most got allows)
            _calls("submit_diagnosis", DIAGNOSIS),
            _calls("submit_diagnosis", DIAGNOSIS),
        )
        async with _llm(big, "gpt-big") as main:
            result, _ = await _run(GotEngine(CONFIG, check=AnalyzerModel()), main)
        big.check()
        main_asked = [_forced(b) for b in big.chat_requests]
        fix_note = big.chat_requests[4]["messages"][-1]["content"]
    assert result.reason == "diagnosed" and result.attempts == 3
    assert is_correct(result.diagnosis, SCENARIO.truth)
    assert VERIFY_SPEC.name not in main_asked
    assert "no observation supports any cause" in fix_note  # the analyzer's own verdict
    assert result.diagnosis is not None  # the objection still stands: a best guess
    assert result.diagnosis.confidence == UNCONFIRMED
    assert "Not confirmed: no observation supports any cause" in result.diagnosis.summary


async def test_reflexions_evaluator_asks_the_check_model_and_retries_on_its_problems() -> None:
    main = ScriptedModel([
        reply("pods", call("k8s_pod_status", PODS)),
        reply("", call("submit_diagnosis", DIAGNOSIS)),  # attempt 1: the rules pass it
        reply("Look at the payments namespace too."),  # the reflection, by the main model
        reply("pods again", call("k8s_pod_status", PODS)),
        reply("", call("submit_diagnosis", DIAGNOSIS)),  # attempt 2
    ], name="big")
    check = ScriptedModel([
        reply("", call("record_verdict", {"problems": ["the onset is not explained"]})),
        reply("", call("record_verdict", {"problems": []})),
    ], name="small")
    result, events = await _run(ReflexionEngine(CONFIG, check=check), main)
    assert result.reason == "diagnosed" and result.attempts == 2
    assert _purposes(check) == [VERIFY_SPEC.name] * 2
    assert VERIFY_SPEC.name not in _purposes(main)
    reflections = [e for e in events if isinstance(e, ReflectionRecorded)]
    assert [r.problems for r in reflections] == [("the onset is not explained",)]


async def test_without_a_check_model_reflexion_trusts_the_rules() -> None:
    main = ScriptedModel([reply("pods", call("k8s_pod_status", PODS)),
                          reply("", call("submit_diagnosis", DIAGNOSIS))], name="big")
    result, _ = await _run(ReflexionEngine(CONFIG), main)
    assert result.reason == "diagnosed" and result.attempts == 1
    assert VERIFY_SPEC.name not in _purposes(main)


async def test_a_check_model_that_is_the_main_model_adds_no_check() -> None:
    main = ScriptedModel([reply("pods", call("k8s_pod_status", PODS)),
                          reply("", call("submit_diagnosis", DIAGNOSIS))], name="big")
    check = ScriptedModel([], name="big")  # any request to it fails the test
    result, _ = await _run(ReflexionEngine(CONFIG, check=check), main)
    assert result.reason == "diagnosed" and result.attempts == 1
    assert check.requests == []


def test_who_reads_an_unsure_reply() -> None:
    main, check, analyzer = ScriptedModel([], name="big"), ScriptedModel([], name="small"), \
        AnalyzerModel()
    assert reply_model(main, check) is check
    assert reply_model(main, None) is main
    assert reply_model(main, analyzer) is None  # the analyzer is no reader: the rules stand
    assert reply_model(analyzer, None) is None


async def test_an_unsure_reply_is_read_by_the_check_model_not_the_main_one() -> None:
    text = "the shop side feels off to me, poke around there"
    answer = {"constraints": [{"kind": "focus_namespace", "value": "shop"}], "question": False}
    main = ScriptedModel([], name="big")  # any request to it fails the test
    check = ScriptedModel([reply("", call(READING_TOOL, answer))], name="small")
    reader = reader_for(sandbox_sources(SCENARIO), reply_model(main, check))
    investigation = Investigation("inv-1", SCENARIO.report, "UBOB", cast(Any, None),
                                  ConstraintInbox(), cast(Any, None))
    reading = await reader.read(investigation, text, "UBOB", "")
    assert investigation.vocabulary is not None
    assert not read_reply(text, investigation.vocabulary).confident
    assert {(c.kind, c.value) for c in reading.constraints} == {("focus_namespace", "shop")}
    assert len(check.requests) == 1 and main.requests == []


def test_the_check_model_comes_from_the_flag_or_the_environment(monkeypatch: Any) -> None:
    monkeypatch.delenv("TRIAGE_CHECK_MODEL", raising=False)
    assert build_check_model(None) is None
    monkeypatch.setenv("TRIAGE_CHECK_MODEL", "analyzer")
    made = build_check_model(None)
    assert isinstance(made, AnalyzerModel)


def test_check_model_analyzer_on_a_bundled_scenario(capsys: Any) -> None:
    for engine in ("got", "reflexion"):
        code = cli_main(["investigate", "checkout is crashing", "--scenario", "checkout-oom",
                         "--model", "analyzer", "--check-model", "analyzer", "--engine",
                         engine, "--json", "--no-record"])
        assert code == 0, capsys.readouterr().err
        out = capsys.readouterr().out
        assert '"oom_killed"' in out and '"checkout"' in out

