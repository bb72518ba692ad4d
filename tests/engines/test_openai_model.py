"""OpenAIModel through the real openai client against the loopback fake server."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest

from engines.errors import ConfigurationError, ModelAuthError, ModelError, ModelUnavailableError
from engines.model import (
    AssistantMessage,
    ModelRequest,
    SystemMessage,
    ToolCall,
    ToolMessage,
    ToolSpec,
    UserMessage,
)
from engines.openai_model import OpenAIModel, RetryPolicy, ToolMode
from tests.fakes.openai_server import (
    Completion,
    FakeOpenAIServer,
    HttpError,
    openai_server,
    plain_http,
    tool_call,
)

KEY = "sk-test-secret-123"
PODS = ToolSpec(
    "k8s_list_pods",
    "List the pods of a namespace with their status and restarts.",
    {"type": "object", "properties": {"namespace": {"type": "string"}},
     "required": ["namespace"]},
)
SUBMIT = ToolSpec("submit_diagnosis", "Submit the diagnosis.",
                  {"type": "object", "properties": {"category": {"type": "string"}}})
REQUEST = ModelRequest(
    messages=(SystemMessage("You are an SRE."), UserMessage("checkout keeps restarting")),
    tools=(PODS, SUBMIT),
)
FAST = RetryPolicy(attempts=3, initial=0.01, max_wait=2.0)


server = openai_server  # the fake's fixture, under a shorter name


class Sleeps:
    """Records every pause the retry policy takes, and really sleeps it."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        await asyncio.sleep(seconds)


def make(server: FakeOpenAIServer, *, mode: ToolMode = "auto", timeout: float = 5.0,
         retry: RetryPolicy = FAST, sleep: Sleeps | None = None) -> OpenAIModel:
    return OpenAIModel("gpt-test", base_url=server.base_url, api_key=KEY, tool_mode=mode,
                       timeout=timeout, retry=retry, sleep=sleep or Sleeps(),
                       http_client=plain_http())


# ---------------------------------------------------------------- native tool calling


async def test_tool_calls_are_sent_and_mapped_back(server: FakeOpenAIServer) -> None:
    server.script(Completion(
        "Let me look at the pods.",
        (tool_call("k8s_list_pods", {"namespace": "shop"}, id="call_a"),
         tool_call("k8s_list_pods", {"namespace": "web"}, id="call_b")),
        prompt_tokens=120, completion_tokens=30,
    ))
    async with make(server) as model:
        reply = await model.complete(REQUEST)
    assert reply.thought == "Let me look at the pods."
    assert reply.tool_calls == (
        ToolCall("call_a", "k8s_list_pods", {"namespace": "shop"}, '{"namespace": "shop"}'),
        ToolCall("call_b", "k8s_list_pods", {"namespace": "web"}, '{"namespace": "web"}'),
    )
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (120, 30)
    (sent,) = server.chat_requests
    assert sent["model"] == "gpt-test"
    assert sent["messages"] == [
        {"role": "system", "content": "You are an SRE."},
        {"role": "user", "content": "checkout keeps restarting"},
    ]
    assert sent["tools"][0] == {"type": "function", "function": {
        "name": "k8s_list_pods", "description": PODS.description, "parameters": PODS.parameters}}
    assert "stop" not in sent
    assert server.requests[0].headers["Authorization"] == f"Bearer {KEY}"


async def test_history_with_calls_and_observations_is_sent_in_wire_format(
    server: FakeOpenAIServer,
) -> None:
    server.script(Completion("done"))
    history = (
        *REQUEST.messages,
        AssistantMessage("checking", (
            ToolCall("c1", "k8s_list_pods", {"namespace": "shop"}, '{"namespace": "shop"}'),
            ToolCall("c2", "k8s_list_pods", None, '{"namespace": '),
        )),
        ToolMessage("c1", "k8s_list_pods", "checkout-1 CrashLoopBackOff"),
        ToolMessage("c2", "k8s_list_pods", "ERROR: not valid JSON", "error"),
    )
    async with make(server) as model:
        await model.complete(ModelRequest(history, (PODS,)))
    messages = server.chat_requests[0]["messages"]
    assert messages[2] == {"role": "assistant", "content": "checking", "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "k8s_list_pods", "arguments": '{"namespace": "shop"}'}},
        {"id": "c2", "type": "function",
         "function": {"name": "k8s_list_pods", "arguments": "{}"}},
    ]}
    assert messages[3] == {"role": "tool", "tool_call_id": "c1",
                           "content": "checkout-1 CrashLoopBackOff"}
    assert messages[4]["tool_call_id"] == "c2"


async def test_malformed_arguments_are_surfaced_as_none(server: FakeOpenAIServer) -> None:
    broken = '{"namespace": "shop",'
    deep = "[" * 50_000 + "]" * 50_000
    server.script(Completion(None, (tool_call("k8s_list_pods", broken),
                                    tool_call("k8s_list_pods", '["shop"]'),
                                    tool_call("k8s_list_pods", deep))))
    async with make(server) as model:
        reply = await model.complete(REQUEST)
    first, second, third = reply.tool_calls
    assert first.arguments is None and first.raw_arguments == broken
    assert second.arguments is None and second.raw_arguments == '["shop"]'  # not an object
    assert third.arguments is None  # nested too deeply to parse: refused, not a crash


async def test_empty_arguments_mean_no_arguments(server: FakeOpenAIServer) -> None:
    server.script(Completion(None, (tool_call("k8s_list_pods", ""),)))
    async with make(server) as model:
        reply = await model.complete(REQUEST)
    assert reply.tool_calls[0].arguments == {}


async def test_unknown_tool_names_pass_through(server: FakeOpenAIServer) -> None:
    server.script(Completion(None, (tool_call("kubectl_delete_everything", {"x": 1}),)))
    async with make(server) as model:
        reply = await model.complete(REQUEST)
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        ("kubectl_delete_everything", {"x": 1})]


async def test_prose_only_reply_has_no_calls(server: FakeOpenAIServer) -> None:
    server.script(Completion("I think the pods are fine.", prompt_tokens=5, completion_tokens=6))
    async with make(server) as model:
        reply = await model.complete(REQUEST)
    assert reply.tool_calls == ()
    assert reply.thought == "I think the pods are fine."


async def test_tool_syntax_in_content_is_read_when_the_server_has_no_tool_parser(
    server: FakeOpenAIServer,
) -> None:
    server.script(Completion('<tool_call>{"name": "k8s_list_pods", "arguments": '
                             '{"namespace": "shop"}}</tool_call>'))
    async with make(server) as model:
        reply = await model.complete(REQUEST)
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        ("k8s_list_pods", {"namespace": "shop"})]


# ---------------------------------------------------------------- retries


async def test_429_retry_after_is_honoured(server: FakeOpenAIServer) -> None:
    server.script(HttpError(429, "Rate limit reached", {"Retry-After": "1"}),
                  Completion("ok"))
    sleeps = Sleeps()
    started = time.monotonic()
    async with make(server, sleep=sleeps) as model:
        reply = await model.complete(REQUEST)
    assert reply.thought == "ok"
    assert sleeps.waits == [1.0]
    first, second = server.requests
    assert second.at - first.at >= 0.95
    assert time.monotonic() - started < 3


async def test_retry_after_ms_wins_over_retry_after(server: FakeOpenAIServer) -> None:
    server.script(HttpError(429, "slow down", {"retry-after-ms": "150", "Retry-After": "9"}),
                  Completion("ok"))
    sleeps = Sleeps()
    async with make(server, sleep=sleeps) as model:
        await model.complete(REQUEST)
    assert sleeps.waits == [0.15]


async def test_retry_after_as_a_date(server: FakeOpenAIServer) -> None:
    server.script(HttpError(429, "later", {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}),
                  Completion("ok"))
    sleeps = Sleeps()
    async with make(server, sleep=sleeps) as model:
        await model.complete(REQUEST)
    assert sleeps.waits == [0.0]  # a date in the past: go now


async def test_retry_after_is_capped(server: FakeOpenAIServer) -> None:
    server.script(HttpError(503, "busy", {"Retry-After": "3600"}), Completion("ok"))
    sleeps = Sleeps()
    async with make(server, sleep=sleeps,
                    retry=RetryPolicy(attempts=2, initial=0.01, max_wait=0.05)) as model:
        await model.complete(REQUEST)
    assert sleeps.waits == [0.05]


async def test_500_then_success(server: FakeOpenAIServer) -> None:
    server.script(HttpError(500, "internal error"), Completion("recovered"))
    sleeps = Sleeps()
    async with make(server, sleep=sleeps) as model:
        reply = await model.complete(REQUEST)
    assert reply.thought == "recovered"
    assert len(server.requests) == 2
    assert len(sleeps.waits) == 1 and 0 < sleeps.waits[0] <= 0.03  # jittered backoff


async def test_backoff_grows_between_attempts(server: FakeOpenAIServer) -> None:
    server.script(HttpError(502, "bad gateway"), HttpError(503, "unavailable"),
                  HttpError(500, "still broken"), Completion("ok"))
    sleeps = Sleeps()
    policy = RetryPolicy(attempts=4, initial=0.02, max_wait=1.0)
    async with make(server, sleep=sleeps, retry=policy) as model:
        await model.complete(REQUEST)
    assert len(sleeps.waits) == 3
    assert sleeps.waits[2] >= 0.08  # initial × 2², plus jitter


async def test_persistent_5xx_ends_in_unavailable_naming_endpoint_and_error(
    server: FakeOpenAIServer,
) -> None:
    server.script(*[HttpError(503, "model overloaded, try later")] * 3)
    async with make(server) as model:
        with pytest.raises(ModelUnavailableError) as caught:
            await model.complete(REQUEST)
    message = str(caught.value)
    assert "\n" not in message
    assert server.base_url in message
    assert "HTTP 503: model overloaded, try later" in message
    assert len(server.requests) == 3


async def test_slow_response_times_out_and_is_retried(server: FakeOpenAIServer) -> None:
    server.script(Completion("too late", delay=2), Completion("too late", delay=2))
    policy = RetryPolicy(attempts=2, initial=0.01, max_wait=0.1)
    started = time.monotonic()
    async with make(server, timeout=0.2, retry=policy) as model:
        with pytest.raises(ModelUnavailableError, match="timed out"):
            await model.complete(REQUEST)
    assert len(server.requests) == 2
    assert time.monotonic() - started < 1.5


async def test_one_slow_response_then_success(server: FakeOpenAIServer) -> None:
    server.script(Completion("too late", delay=2), Completion("in time"))
    async with make(server, timeout=0.2) as model:
        reply = await model.complete(REQUEST)
    assert reply.thought == "in time"


async def test_connection_refused_ends_in_unavailable() -> None:
    with socket.socket() as sock:  # a port that nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model = OpenAIModel("gpt-test", base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY,
                        retry=RetryPolicy(attempts=2, initial=0.01), sleep=Sleeps())
    async with model:
        with pytest.raises(ModelUnavailableError, match=f"127.0.0.1:{port}.*cannot connect"):
            await model.complete(REQUEST)


# ---------------------------------------------------------------- failing fast


@pytest.mark.parametrize("status", [401, 403])
async def test_refused_key_fails_fast(server: FakeOpenAIServer, status: int) -> None:
    server.script(HttpError(status, "Incorrect API key provided: sk-test-***123"))
    async with make(server) as model:
        with pytest.raises(ModelAuthError) as caught:
            await model.complete(REQUEST)
    assert str(caught.value) == (
        f"the endpoint at {server.base_url} refused the API key: check OPENAI_API_KEY")
    assert KEY not in str(caught.value)
    assert len(server.requests) == 1


async def test_unknown_model_names_the_model(server: FakeOpenAIServer) -> None:
    server.script(HttpError(404, "The model `gpt-test` does not exist"))
    async with make(server) as model:
        with pytest.raises(ModelError, match="model 'gpt-test' not found") as caught:
            await model.complete(REQUEST)
    assert not isinstance(caught.value, ModelUnavailableError)
    assert len(server.requests) == 1


@pytest.mark.parametrize("message", [
    "This model's maximum context length is 8192 tokens",
    "An assistant message with 'tool_calls' must be followed by tool messages responding to "
    "each 'tool_call_id'. The following tool_call_ids did not have response messages: c1",
])
async def test_other_bad_requests_are_not_retried_nor_switched(
    server: FakeOpenAIServer, message: str,
) -> None:
    server.script(HttpError(400, message))
    async with make(server) as model:
        with pytest.raises(ModelError, match="rejected the request") as caught:
            await model.complete(REQUEST)
    assert message[:40] in str(caught.value)
    assert not model.text_mode
    assert len(server.requests) == 1


async def test_a_body_that_is_not_a_completion_is_a_clear_error(
    server: FakeOpenAIServer,
) -> None:
    server.script(HttpError(200, body="<html>corporate proxy login</html>"))
    async with make(server) as model:
        with pytest.raises(ModelError, match="not a chat completion: '<html>corporate"):
            await model.complete(REQUEST)


# ---------------------------------------------------------------- text mode


async def test_auto_mode_switches_to_text_when_tools_are_refused(
    server: FakeOpenAIServer,
) -> None:
    server.script(
        HttpError(400, "registry.ollama.ai/library/gemma:2b does not support tools"),
        Completion("Thought: pods first\nAction: k8s_list_pods\nAction Input: "
                   '{"namespace": "shop"}'),
        Completion("Thought: enough\nFinal Answer: {\"category\": \"oom_killed\"}"),
    )
    async with make(server) as model:
        first = await model.complete(REQUEST)
        second = await model.complete(REQUEST)
    assert model.text_mode
    assert first.thought == "pods first"
    assert [(c.name, c.arguments) for c in first.tool_calls] == [
        ("k8s_list_pods", {"namespace": "shop"})]
    assert [(c.name, c.arguments) for c in second.tool_calls] == [
        ("submit_diagnosis", {"category": "oom_killed"})]
    refused, *text_requests = server.chat_requests
    assert "tools" in refused
    for sent in text_requests:
        assert "tools" not in sent
        assert sent["stop"] == ["\nObservation:"]
        assert "Action Input:" in sent["messages"][0]["content"]
        assert "k8s_list_pods" in sent["messages"][0]["content"]


async def test_vllm_without_auto_tool_choice_also_switches(server: FakeOpenAIServer) -> None:
    server.script(
        HttpError(400, '"auto" tool choice requires --enable-auto-tool-choice and '
                       "--tool-call-parser to be set"),
        Completion("Action: k8s_list_pods\nAction Input: {'namespace': 'shop',}"),
    )
    async with make(server) as model:
        reply = await model.complete(REQUEST)
    assert reply.tool_calls[0].arguments == {"namespace": "shop"}


async def test_native_mode_reports_refused_tools(server: FakeOpenAIServer) -> None:
    server.script(HttpError(400, "tools is not supported in this model"))
    async with make(server, mode="native") as model:
        with pytest.raises(ModelError, match="does not support tool calls"):
            await model.complete(REQUEST)
    assert not model.text_mode


async def test_text_mode_renders_the_transcript(server: FakeOpenAIServer) -> None:
    server.script(Completion("I do not know what to do next."))
    history = (
        *REQUEST.messages,
        AssistantMessage("checking", (
            ToolCall("c1", "k8s_list_pods", {"namespace": "shop"}),
            ToolCall("c2", "k8s_list_pods", None, "{oops"),
        )),
        ToolMessage("c1", "k8s_list_pods", "checkout-1 OOMKilled"),
        ToolMessage("c2", "k8s_list_pods", "not valid JSON", "error"),
        UserMessage("CONSTRAINT: stay out of kube-system"),
    )
    async with make(server, mode="text") as model:
        reply = await model.complete(ModelRequest(history, (PODS,)))
    assert reply.tool_calls == () and reply.thought == "I do not know what to do next."
    messages = server.chat_requests[0]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[2]["content"] == (
        'Thought: checking\nAction: k8s_list_pods\nAction Input: {"namespace": "shop"}\n'
        "Action: k8s_list_pods\nAction Input: {oops")
    assert messages[3]["content"] == (
        "Observation from k8s_list_pods:\ncheckout-1 OOMKilled\n\n"
        "Observation from k8s_list_pods (error):\nnot valid JSON\n\n---\n\n"
        "CONSTRAINT: stay out of kube-system")  # set off: no part of the observation


async def test_text_mode_usage_is_reported(server: FakeOpenAIServer) -> None:
    server.script(Completion("Action: k8s_list_pods\nAction Input: {\"namespace\": \"a\"}",
                             prompt_tokens=300, completion_tokens=12))
    async with make(server, mode="text") as model:
        reply = await model.complete(REQUEST)
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (300, 12)


# ---------------------------------------------------------------- configuration


async def test_endpoint_and_key_come_from_the_environment(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    server.script(Completion("hello"))
    async with OpenAIModel("gpt-test") as model:
        assert model.endpoint == server.base_url
        await model.complete(REQUEST)
    assert server.requests[0].headers["Authorization"] == "Bearer sk-from-env"


def test_a_missing_key_for_openai_itself_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        OpenAIModel("gpt-4o-mini")


async def test_local_endpoints_need_no_key(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.script(Completion("hi"))
    async with OpenAIModel("gpt-test", base_url=server.base_url) as model:
        await model.complete(REQUEST)
    assert server.requests[0].headers["Authorization"] == "Bearer not-needed"


def test_credentials_in_the_url_are_not_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    model = OpenAIModel("m", base_url="http://user:pw@llm.internal:8000/v1?token=abc",
                        api_key=KEY)
    assert model.endpoint == "http://llm.internal:8000/v1"


async def test_check_finds_the_model(server: FakeOpenAIServer) -> None:
    async with make(server) as model:
        await model.check()
    async with OpenAIModel("llama-9000", base_url=server.base_url, api_key=KEY) as missing:
        with pytest.raises(ModelError, match=r"no model 'llama-9000'.*gpt-test"):
            await missing.check()
    assert [r.path for r in server.requests] == ["/v1/models", "/v1/models"]


async def test_check_reports_a_refused_key(server: FakeOpenAIServer) -> None:
    server.models_error = HttpError(401, "invalid key")
    async with make(server) as model:
        with pytest.raises(ModelAuthError):
            await model.check()


# ---------------------------------------------------------------- the fake itself


async def test_the_fake_fails_on_an_unscripted_request() -> None:
    with pytest.raises(AssertionError, match="unscripted request #1"):
        async with FakeOpenAIServer() as fake, make(fake) as model:
            with pytest.raises(ModelError, match="HTTP 418"):
                await model.complete(REQUEST)


async def test_the_fake_fails_on_an_unused_turn() -> None:
    with pytest.raises(AssertionError, match="1 of 2 scripted turns never used"):
        async with FakeOpenAIServer() as fake:
            fake.script(Completion("one"), Completion("two"))
            async with make(fake) as model:
                await model.complete(REQUEST)
