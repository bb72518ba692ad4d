"""Block Kit rendering, request checks, access lists and dedupe: the pure parts of the bot."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Literal

import pytest
import yaml
from slack_sdk.signature import Clock, SignatureVerifier

import bot
from bot import charts, cli, render
from bot.access import AccessPolicy
from bot.app import SlackSettings
from bot.dedupe import EventDeduper
from bot.server import MalformedRequestError, check_payload, signed
from engines.diagnosis import Diagnosis
from engines.errors import ConfigurationError
from engines.events import ObservationReceived, ToolCalled
from tests.bot.models import DIAGNOSIS
from tests.fakes.slack_api import sign

SLACK_TOKEN = "xoxb-123456789012-123456789012-abcdefghijklmnopqrstuvwx"


def _step(step: int, calls: int, size: int) -> render.StepView:
    view = render.StepView(step, thought="thinking " * 400)
    for n in range(calls):
        call = ToolCalled("inv", step, f"c{n}", "k8s_list_pods", {"namespace": "shop"},
                          f"Listing pods in shop ({n})")
        view.calls.append(call)
        text = "x" * size if calls == 1 else ("pod checkout-1 OOMKilled 137\n" * size)[:size]
        view.observations[call.call_id] = ObservationReceived(
            "inv", step, call.call_id, "k8s_list_pods", "success", text)
    return view


@pytest.mark.parametrize(("calls", "size"), [(1, 50_000), (20, 3_000), (60, 500)])
def test_a_single_step_always_fits(calls: int, size: int) -> None:
    message = render.step_message([_step(1, calls, size)])
    assert render.fits(message)
    assert all(len(b["text"]["text"]) <= render.MAX_SECTION
               for b in message.blocks if b["type"] == "section")


def test_coalesced_steps_do_not_fit_forever() -> None:
    views = [_step(n, 3, 2_000) for n in range(1, 30)]
    assert not render.fits(render.step_message(views))


def test_diagnosis_fits_with_twenty_long_quotes() -> None:
    diagnosis = Diagnosis.model_validate({
        **DIAGNOSIS, "summary": "s" * 5000, "fix": "f" * 5000,
        "evidence": [{"tool": "k8s_list_pods", "quote": "OOMKilled " * 100}] * 20,
    })
    message = render.diagnosis_message("inv", diagnosis)
    assert render.fits(message)
    assert render.CORRECT_ACTION in json.dumps(message.blocks)


def test_each_quote_is_code_with_its_tool_and_step() -> None:
    diagnosis = Diagnosis.model_validate({**DIAGNOSIS, "evidence": [
        {"tool": "k8s_events", "quote": "message: 'Error: `ImagePullBackOff`' <b>", "step": 3,
         "found": True},
        {"tool": "k8s_describe_pod", "quote": "status: Pending\nready: 0/1", "step": 2,
         "found": True},
        {"tool": "k8s_list_pods", "quote": "x509 expired", "found": False},
    ]})
    (evidence,) = [b["text"]["text"] for b in render.diagnosis_message("inv", diagnosis).blocks
                   if "text" in b and b["text"]["text"].startswith("*Evidence*")]
    assert evidence.splitlines() == [
        "*Evidence*",
        "• `message: 'Error: ˋImagePullBackOffˋ' &lt;b&gt;` _(k8s_events, step 3)_",
        "• ```status: Pending", "ready: 0/1``` _(k8s_describe_pod, step 2)_",
        "• `x509 expired` _(:warning: k8s_list_pods: not found in its output)_",
    ]


def test_secrets_and_broadcasts_never_reach_slack() -> None:
    view = render.StatusView("inv", f"<!channel> it broke, token {SLACK_TOKEN}", "m", 1, 5,
                             "running", 3.0, "UALICE")
    status = json.dumps(dataclasses.asdict(render.status_message(view)))
    assert SLACK_TOKEN not in status and "[REDACTED]" in status
    assert "<!channel>" not in status and "<@UALICE>" in status

    step = _step(1, 1, 10)
    step.thought = "the DB password=hunter2 is in the env"
    step.observations["c0"] = ObservationReceived(
        "inv", 1, "c0", "k8s_list_pods", "success", f"Authorization: Bearer {SLACK_TOKEN}\n<b>")
    text = json.dumps(render.step_message([step]).blocks)
    assert "hunter2" not in text and SLACK_TOKEN not in text
    assert "&lt;b&gt;" in text, "mrkdwn control characters are escaped"

    leaked = f"401 for key sk-proj-{'a' * 40}"
    failure = json.dumps(dataclasses.asdict(render.failure_message(leaked)))
    assert "a" * 40 not in failure


def test_verdict_replaces_the_buttons() -> None:
    blocks = render.diagnosis_message("inv", Diagnosis.model_validate(DIAGNOSIS)).blocks
    judged = render.with_verdict(blocks, "wrong", "UBOB")
    assert render.WRONG_ACTION not in json.dumps(judged)
    assert "<@UBOB> marked this diagnosis wrong" in json.dumps(judged)
    assert len(judged) == len(blocks)


@pytest.mark.parametrize(
    "body",
    [
        '{"type": "event_callback", "event_id": "Ev1", "event": {"type": "app_mention"}}',
        '{"type": "url_verification", "challenge": "abc"}',
        "command=%2Ftriage&user_id=U1&channel_id=C1&text=hi",
        "payload=" + '{"type": "block_actions", "user": {"id": "U1"}}',
        "ssl_check=1&token=x",
    ],
)
def test_well_formed_payloads_pass(body: str) -> None:
    content_type = "application/json" if body.startswith("{") else \
        "application/x-www-form-urlencoded"
    assert isinstance(check_payload(body, content_type), dict)


@pytest.mark.parametrize(
    "body",
    ['{"type": "event_callback", "event": {"type": "x"}}', '"text"', "{", "a=1",
     'payload={"type": "block_actions"}', "command=%2Ftriage&user_id=U1"],
)
def test_malformed_payloads_are_refused(body: str) -> None:
    content_type = "application/json" if body[:1] in '{"' else \
        "application/x-www-form-urlencoded"
    with pytest.raises(MalformedRequestError):
        check_payload(body, content_type)


class _At1000(Clock):
    def now(self) -> float:
        return 1000.0


def test_signature_is_checked_over_raw_bytes_and_expires() -> None:
    verifier = SignatureVerifier("secret", clock=_At1000())

    def headers(timestamp: str, signature: str) -> dict[str, str]:
        return {"X-Slack-Request-Timestamp": timestamp, "X-Slack-Signature": signature}

    body = '{"type": "event_callback", "text": "caf\u00e9"}'.encode()
    assert signed(verifier, body, headers("1000", sign("secret", "1000", body)))
    assert not signed(verifier, body, headers("1000", sign("other", "1000", body)))
    assert not signed(verifier, body, headers("600", sign("secret", "600", body))), \
        "replayed too late"
    assert not signed(verifier, body, headers("soon", "v0=00")), "no number: no crash"
    assert not signed(verifier, body, {}), "no headers at all"
    undecodable = b"\xff{not utf-8"
    assert not signed(verifier, undecodable, headers("1000", sign("secret", "1000",
                                                                  undecodable))), \
        "not UTF-8, so not Slack's: unverifiable, never a crash"


def test_access_lists_accept_what_people_paste() -> None:
    policy = AccessPolicy.from_env({
        "TRIAGE_ALLOWED_CHANNELS": "C0001, <#C0002|incidents>",
        "TRIAGE_ALLOWED_USERS": "U0001 <@W0002|ann>, <!subteam^S0003|@oncall>",
    })
    assert policy.channels == {"C0001", "C0002"}
    assert policy.users == {"U0001", "W0002"} and policy.groups == {"S0003"}
    assert policy.channel_allowed("C0001") and not policy.channel_allowed("C0009")
    assert policy.channel_allowed("D123"), "direct messages are governed by the user list"
    assert not AccessPolicy.from_env({}).restricts_users
    with pytest.raises(ValueError, match="not a Slack id"):
        AccessPolicy.from_env({"TRIAGE_ALLOWED_USERS": "alice"})


def test_settings_need_a_token_and_a_way_in() -> None:
    with pytest.raises(ConfigurationError, match="SLACK_BOT_TOKEN"):
        SlackSettings.from_env({})
    with pytest.raises(ConfigurationError, match="SLACK_SIGNING_SECRET"):
        SlackSettings.from_env({"SLACK_BOT_TOKEN": "xoxb-1"})
    assert SlackSettings.from_env({"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1"}) \
        .socket_mode
    with pytest.raises(ConfigurationError, match="SLACK_API_URL"):
        SlackSettings.from_env({"SLACK_BOT_TOKEN": "x", "SLACK_SIGNING_SECRET": "s",
                                "SLACK_API_URL": "localhost:1"})


def test_deduper_remembers_for_a_while_within_bounds() -> None:
    deduper = EventDeduper(ttl=3600, limit=3)
    assert deduper.first_time("a") and not deduper.first_time("a")
    for name in "bcd":
        assert deduper.first_time(name)
    assert deduper.first_time("a"), "the oldest id was forgotten to stay bounded"
    assert deduper.duplicates == 1


def test_manifest_asks_for_what_the_listeners_handle() -> None:
    manifest = yaml.safe_load((Path(bot.__file__).parent / "manifest.yaml").read_text())
    events = set(manifest["settings"]["event_subscriptions"]["bot_events"])
    assert events == {"app_mention", "message.channels", "message.groups", "message.im"}
    assert [c["command"] for c in manifest["features"]["slash_commands"]] == ["/triage"]
    assert manifest["settings"]["interactivity"]["is_enabled"]
    scopes = set(manifest["oauth_config"]["scopes"]["bot"])
    assert scopes == {"app_mentions:read", "channels:history", "groups:history", "im:history",
                      "chat:write", "commands", "files:write", "reactions:write",
                      "usergroups:read"}


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "SLACK_BOT_TOKEN is not set"),
        ({"SLACK_BOT_TOKEN": "xoxb-1"}, "SLACK_SIGNING_SECRET"),
        ({"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s",
          "TRIAGE_ALLOWED_USERS": "bob"}, "TRIAGE_ALLOWED_USERS"),
    ],
)
def test_serve_explains_a_bad_configuration_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], env: dict[str, str],
    expected: str,
) -> None:
    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET",
                 "TRIAGE_ALLOWED_USERS", "TRIAGE_ALLOWED_CHANNELS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert cli.main(["serve", "--scenario", "checkout-oom", "--model", "analyzer"]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and expected in error[0], error


def test_only_abnormal_metric_signals_get_a_chart() -> None:
    call = ToolCalled("inv", 1, "c1", "metrics_workload_signals",
                      {"namespace": "shop", "workload": "checkout"}, "Reading the metrics")
    data = {"window": "2026-11-30T07:00:00Z to 2026-11-30T10:00:00Z, step 60s",
            "abnormal": ["memory"],
            "signals": {"memory": {"containers": [{"container": "checkout", "limit": "256Mi"}]}}}

    def observed(payload: object, status: Literal["success", "error"] = "success"
                 ) -> ObservationReceived:
        return ObservationReceived("inv", 1, "c1", call.tool, status, "…", payload)

    [plan] = charts.plan_for(call, observed(data))
    assert plan.metric == "container_memory_working_set_bytes" and plan.limit == 256 * 2**20
    assert plan.matchers["namespace"] == "shop" and plan.step == 60
    assert charts.plan_for(call, observed({**data, "abnormal": []})) == []
    assert charts.plan_for(call, observed(data, "error")) == []
    other = ToolCalled("inv", 1, "c1", "k8s_list_pods", {}, "Listing pods")
    assert charts.plan_for(other, observed(data)) == []
