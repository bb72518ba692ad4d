"""`ALLOW_MODEL_REQUESTS = False` (set for the whole suite by tests/conftest.py): no request
leaves this machine, loopback endpoints still work.

The HTTP client is a recording stand-in that sends nothing: "refused before any network
I/O" is observed directly (it is never asked to send), and an allowed request is one it was
asked to send (its refusal to do so ends as a connection error).
"""

from __future__ import annotations

from typing import Any

import openai
import pytest

from engines import openai_model
from engines.errors import ModelRequestsDisabledError, ModelUnavailableError
from engines.model import ModelRequest, UserMessage
from engines.openai_model import OpenAIModel, RetryPolicy, is_loopback
from tests.fakes.openai_server import Completion, FakeOpenAIServer, openai_server, plain_http

REQUEST = ModelRequest(messages=(UserMessage("checkout keeps restarting"),), tools=())

server = openai_server


class Recorder(openai.DefaultAsyncHttpxClient):
    """The openai client's HTTP client, keeping the URL of each request it is asked to send
    and sending none (every request goes through `send`)."""

    def __init__(self) -> None:
        super().__init__(verify=False)
        self.urls: list[str] = []

    async def send(self, request: Any, **kwargs: Any) -> Any:
        self.urls.append(str(request.url))
        raise openai.APIConnectionError(message="the test's recorder sends nothing",
                                        request=request)


def model_at(base_url: str, recorder: Recorder) -> OpenAIModel:
    return OpenAIModel("gpt-test", base_url=base_url, api_key="sk-test", http_client=recorder,
                       retry=RetryPolicy(attempts=1))


def test_the_suite_switches_model_requests_off() -> None:
    assert openai_model.ALLOW_MODEL_REQUESTS is False


@pytest.mark.parametrize("base_url", ["https://api.openai.com/v1",
                                      "http://llm.internal:8000/v1", "http://10.0.0.7/v1",
                                      "http://localhost.example.com/v1"])
async def test_a_request_off_this_machine_is_refused_before_any_io(base_url: str) -> None:
    recorder = Recorder()
    async with model_at(base_url, recorder) as model:
        with pytest.raises(ModelRequestsDisabledError, match="ALLOW_MODEL_REQUESTS") as caught:
            await model.complete(REQUEST)
        with pytest.raises(ModelRequestsDisabledError):
            await model.check()
    assert model.endpoint in str(caught.value)
    assert recorder.urls == []


async def test_the_default_endpoint_with_a_key_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A developer's key, as `triage` would read it, reaches nothing."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-developer-key")
    recorder = Recorder()
    async with OpenAIModel("gpt-4o-mini", http_client=recorder,
                           retry=RetryPolicy(attempts=1)) as model:
        assert model.endpoint == openai_model.OPENAI_URL
        with pytest.raises(ModelRequestsDisabledError):
            await model.complete(REQUEST)
    assert recorder.urls == []


@pytest.mark.parametrize("base_url", ["http://127.0.0.1:8000/v1", "http://127.9.8.7/v1",
                                      "http://localhost:11434/v1", "http://[::1]:8080/v1"])
async def test_a_loopback_endpoint_is_allowed(base_url: str) -> None:
    recorder = Recorder()
    async with model_at(base_url, recorder) as model:
        with pytest.raises(ModelUnavailableError, match="sends nothing"):
            await model.complete(REQUEST)
    assert recorder.urls == [base_url + "/chat/completions"]


async def test_the_loopback_fake_server_works_with_the_switch_off(server: FakeOpenAIServer
                                                                  ) -> None:
    server.script(Completion("hello"))
    async with OpenAIModel("gpt-test", base_url=server.base_url, api_key="sk-test",
                           http_client=plain_http()) as model:
        reply = await model.complete(REQUEST)
    assert reply.thought == "hello"


async def test_switched_on_a_remote_endpoint_is_sent_to(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """The switch, not something else, is what refuses."""
    monkeypatch.setattr(openai_model, "ALLOW_MODEL_REQUESTS", True)
    recorder = Recorder()
    async with model_at("https://api.openai.com/v1", recorder) as model:
        with pytest.raises(ModelUnavailableError, match="sends nothing"):
            await model.complete(REQUEST)
    assert recorder.urls == ["https://api.openai.com/v1/chat/completions"]


def test_loopback_hosts() -> None:
    assert all(map(is_loopback, ["localhost", "LOCALHOST", "127.0.0.1", "127.255.0.1", "::1",
                                 "[::1]"]))
    assert not any(map(is_loopback, ["api.openai.com", "10.0.0.1", "0.0.0.0", "::",
                                     "localhost.example.com", "128.0.0.1", ""]))
