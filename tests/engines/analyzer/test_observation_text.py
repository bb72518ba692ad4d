"""The analyzer reads what the model was sent: the observation text, parsed back."""

from __future__ import annotations

from engines.analyzer.observation_text import parse_observation, parse_outage
from engines.analyzer.transcript import read_transcript
from engines.model import AssistantMessage, ToolCall, ToolMessage
from tools.compress import fit, to_text


def test_rendered_data_reads_back_exactly() -> None:
    data = {"namespace": "shop", "ready": "1/3", "restarts": 4, "ok": False, "age": "3d",
            "started": "2026-11-30T09:00:00Z", "version": "1.10", "empty": None,
            "pods": [{"name": "a", "exit_code": 137}, {"name": "b", "labels": {"x": "y"}}]}
    assert parse_observation(to_text(data)) == data


def test_lists_cut_by_the_budget_read_as_what_is_left() -> None:
    data = {"items": [{"name": f"workload-{i}", "detail": "x " * 30} for i in range(40)]}
    text, cut, _ = fit(data, 300)
    assert cut
    parsed = parse_observation(text)
    names = [row["name"] for row in parsed["items"] if isinstance(row, dict)]
    assert names and names == [f"workload-{i}" for i in range(len(names))]
    assert len(names) < 40  # what the model did not see, the analyzer does not see either


def test_text_cut_mid_document_reads_up_to_the_cut() -> None:
    data = {"first": "kept", "lines": ["x" * 400]}
    text, cut, _ = fit(data, 40)
    assert cut and "more tokens cut" in text
    assert parse_observation(text) == {"first": "kept"}


def test_errors_and_elided_observations_carry_no_data() -> None:
    assert parse_observation("ERROR: k8s_events timed out after 10s") is None
    call = ToolCall("c1", "k8s_events", {})
    messages = [AssistantMessage("", (call,)),
                ToolMessage("c1", "k8s_events", "[older observation elided to save context; "
                            "call k8s_events again if needed] namespace: shop")]
    (observation,) = read_transcript(messages).observations
    assert not observation.ok and not observation.quotable


def test_transcript_data_comes_from_the_text_only() -> None:
    call = ToolCall("c1", "k8s_list_workloads", {})
    messages = [AssistantMessage("", (call,)),
                ToolMessage("c1", "k8s_list_workloads", to_text({"total": 2}))]
    (observation,) = read_transcript(messages).observations
    assert observation.data == {"total": 2}


def test_an_outage_note_is_read_from_errors_only() -> None:
    note = ("The log store is down; these tools fail alike until it is back: logs_search, "
            "logs_error_patterns.\nRead the same thing another way:\n"
            '- k8s_pod_logs {"namespace": "shop", "pod": "checkout"}: a container\'s own log\n'
            '- k8s_pod_logs {"namespace": "shop"}, also needs pod: a container\'s own log')
    outage = parse_outage(f"ERROR: logs_search failed after 3 attempts in 0.6s: refused\n{note}")
    assert outage is not None
    assert outage.down == {"logs_search", "logs_error_patterns"}
    assert [(s.tool, s.arguments, s.missing) for s in outage.suggestions] == [
        ("k8s_pod_logs", {"namespace": "shop", "pod": "checkout"}, ()),
        ("k8s_pod_logs", {"namespace": "shop"}, ("pod",))]
    assert parse_outage(f"lines: ['{note}']") is None  # a log line that says so is data
    assert parse_outage("ERROR: logs_search timed out after 20s") is None
