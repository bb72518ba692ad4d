"""The loop detector and history compaction."""

from __future__ import annotations

from engines._history import ELIDED_PREFIX, History
from engines._loop import LoopDetector
from engines.analyzer.transcript import read_transcript
from engines.model import AssistantMessage, ToolCall, ToolMessage, UserMessage


def test_a_repeated_call_warns_then_stops() -> None:
    detector = LoopDetector()
    assert detector.check([("k8s_list_pods", {"namespace": "shop"})], ["a"]) == "ok"
    assert detector.check([("k8s_get_events", {"namespace": "shop"})], ["b"]) == "ok"
    assert detector.check([("k8s_list_pods", {"namespace": "shop"})], ["c"]) == "warn"
    assert "k8s_list_pods" in detector.reason
    assert detector.check([("k8s_list_pods", {"namespace": "shop"})], ["d"]) == "stop"


def test_same_tool_other_arguments_is_not_a_loop() -> None:
    detector = LoopDetector()
    assert detector.check([("k8s_list_pods", {"namespace": "shop"})], ["a"]) == "ok"
    assert detector.check([("k8s_list_pods", {"namespace": "web"})], ["b"]) == "ok"


def test_observations_that_stop_changing_count_as_a_loop() -> None:
    detector = LoopDetector()
    assert detector.check([("logs_search", {"text": "a"})], ["nothing found"]) == "ok"
    assert detector.check([("logs_search", {"text": "b"})], ["nothing found"]) == "warn"
    assert detector.reason == "the observations stopped changing"


def _observation(index: int, status: str = "success") -> ToolMessage:
    return ToolMessage(f"c{index}", "logs_search", f"result {index}\n" + "word " * 300, status)  # type: ignore[arg-type]


def test_compaction_elides_old_observations_but_keeps_errors_and_recent_steps() -> None:
    history = History(budget_tokens=1500)
    history.append(UserMessage("incident: checkout 502s"))
    for index in range(10):
        history.append(AssistantMessage("thinking", (ToolCall(f"c{index}", "logs_search", {}),)))
        history.append(_observation(index, "error" if index == 1 else "success"))
    before = history.tokens
    elided = history.compact()
    assert elided > 0
    assert history.tokens < before
    messages = history.messages
    assert messages[0].content == "incident: checkout 502s"
    assert messages[4].content.startswith("result 1")  # the error observation is kept whole
    assert messages[2].content.startswith(ELIDED_PREFIX)
    assert all("elided" not in m.content for m in messages[-8:])
    # The analyzer quotes nothing from an elided observation: its text is not the tool's.
    quotable = [o.quotable for o in read_transcript(messages).observations]
    assert quotable[0] is False and quotable[1] is True and quotable[-1] is True


def test_no_compaction_within_budget() -> None:
    history = History(budget_tokens=100_000)
    history.append(_observation(0))
    assert history.compact() == 0
    assert history.compactions == 0
