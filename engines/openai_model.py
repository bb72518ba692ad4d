"""The Model for any OpenAI-compatible chat-completions endpoint.

OpenAI, Azure, vLLM, Ollama and llama.cpp all speak `POST /v1/chat/completions`, but not
all of them can call tools natively. This model uses native tool calling when it can and
falls back to the text ReAct format when the endpoint refuses `tools` (or when told to),
so one class serves a frontier model and a 7B model on a laptop alike.

Retries live here and only here (the openai client's own are switched off): transient
failures are retried with jittered exponential backoff, honouring `Retry-After`; what no
retry can fix (a refused key, an unknown model, a bad request) fails at once with a
one-line `ModelError` the bot can show as it is.

`ALLOW_MODEL_REQUESTS = False` (as pydantic-ai's switch of that name) forbids requests to
any endpoint that is not on this machine: each call then raises
`ModelRequestsDisabledError` before any network I/O, unless the base URL's host is
loopback (127.0.0.0/8, ::1, localhost), where test doubles and local servers live. The test
suite switches it off for every test, so a developer's OPENAI_API_KEY never reaches the real
API.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import logging
import os
import re
import ssl
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import openai
from openai.types.chat import ChatCompletion
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
    wait_random,
)

from engines._openai_errors import describe, error_text, is_transient, retry_after
from engines._openai_wire import (
    completion_usage,
    forced_choice,
    native_messages,
    native_reply,
    tool_param,
)
from engines._react_text import parse_react
from engines.errors import (
    ConfigurationError,
    ModelAuthError,
    ModelError,
    ModelRequestsDisabledError,
    ModelUnavailableError,
)
from engines.model import (
    ModelReply,
    ModelRequest,
)
from engines.text_transcript import STOP_SEQUENCES, to_text_messages

log = logging.getLogger(__name__)

ToolMode = Literal["auto", "native", "text"]
Sleep = Callable[[float], Awaitable[None]]

OPENAI_URL = "https://api.openai.com/v1"
ALLOW_MODEL_REQUESTS = True
"""False: refuse every request to an endpoint that is not loopback (module docstring)."""
_NO_KEY = "not-needed"  # vLLM, Ollama and llama.cpp accept any key, but the client wants one
_TOOLS_UNSUPPORTED = re.compile(
    r"tool.{0,80}(not (be )?supported|unsupported|does not support|not enabled|requires"
    r"|--jinja|enable-auto-tool-choice)|(does not support|doesn't support|unsupported).{0,40}"
    r"tool|auto.? tool choice",
    re.I | re.S,
)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How hard to try before declaring the endpoint unavailable.

    `max_wait` caps every pause, a server's `Retry-After` included, so a run never sleeps
    for minutes on one step; `initial` is the first backoff (tests set it to milliseconds).
    """

    attempts: int = 4
    initial: float = 1.0
    max_wait: float = 30.0


class _ToolsUnsupportedError(Exception):
    """The endpoint refused the `tools` parameter: switch to the text format."""


class OpenAIModel:
    """An LLM behind an OpenAI-compatible endpoint, as a `Model`."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        tool_mode: ToolMode = "auto",
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        extra_body: dict[str, Any] | None = None,
        client: openai.AsyncOpenAI | None = None,
        http_client: openai.DefaultAsyncHttpxClient | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        """`base_url` and `api_key` default to OPENAI_BASE_URL and OPENAI_API_KEY.

        Pass `http_client` for a proxy, a private CA or mTLS to an in-cluster server (the
        model closes it). Pass `client` for endpoints that need their own client class
        (AsyncAzureOpenAI): its retries are switched off and its timeout replaced all the
        same, and its owner closes it.
        """
        self.model = model
        self.tool_mode = tool_mode
        self.retry = retry or RetryPolicy()
        # initial × 2^(n-1) plus up to `initial` of jitter; spelled with the two waits every
        # tenacity since 8 has (wait_exponential_jitter renamed its arguments in 9)
        self._backoff = wait_exponential(multiplier=self.retry.initial) + wait_random(
            0, self.retry.initial
        )
        self.timeout = timeout
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.extra_body = extra_body
        self._sleep = sleep
        self._text_mode = tool_mode == "text"
        self._owns_client = client is None
        if client is None:
            client = _make_client(base_url, api_key, timeout, http_client)
        else:
            client = client.with_options(max_retries=0, timeout=timeout)
        self._client = client
        self.endpoint = _display_url(str(client.base_url))

    @property
    def name(self) -> str:
        return self.model

    @property
    def text_mode(self) -> bool:
        """Whether tools are described in the prompt instead of sent natively."""
        return self._text_mode

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.close()

    async def __aenter__(self) -> OpenAIModel:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def complete(self, request: ModelRequest) -> ModelReply:
        if not self._text_mode:
            try:
                return await self._complete_native(request)
            except _ToolsUnsupportedError as exc:
                if self.tool_mode == "native":
                    raise ModelError(
                        f"the endpoint at {self.endpoint} does not support tool calls for "
                        f"{self.model} ({exc}); use tool_mode='text' or 'auto'"
                    ) from None
                log.warning("model %s: endpoint refused tools, switching to text ReAct: %s",
                            self.model, exc)
                self._text_mode = True
        return await self._complete_text(request)

    async def check(self) -> None:
        """Fail now, not mid-incident, when the endpoint is down, refuses the key or lacks
        the model. Endpoints that list no models (some proxies) are given the benefit of
        the doubt."""
        try:
            page = await self._call(self._client.models.list)
        except openai.NotFoundError:
            return  # no /models route: nothing to check against
        except openai.OpenAIError as exc:
            raise ModelError(f"the endpoint at {self.endpoint} failed: {describe(exc)}") from None
        listed = {m.id for m in page.data}
        wanted = {self.model, f"{self.model}:latest"}
        if listed and not (listed & wanted):
            shown = ", ".join(sorted(listed)[:10])
            raise ModelError(f"the endpoint at {self.endpoint} has no model {self.model!r} "
                             f"(it lists: {shown})")

    # ------------------------------------------------------------ the two modes

    async def _complete_native(self, request: ModelRequest) -> ModelReply:
        params = self._params(native_messages(request.messages))
        if request.tools:
            params["tools"] = [tool_param(spec) for spec in request.tools]
            if request.final:  # the last turn must submit: prose here would lose the answer
                params["tool_choice"] = forced_choice(request.tools)
        completion = await self._create(params, tools_sent=bool(request.tools))
        return native_reply(completion, request.tools, _id_prefix(request))

    async def _complete_text(self, request: ModelRequest) -> ModelReply:
        params = self._params(to_text_messages(request.messages, request.tools))
        params["stop"] = list(STOP_SEQUENCES)
        completion = await self._create(params, tools_sent=False)
        message = completion.choices[0].message if completion.choices else None
        parsed = parse_react((message.content or "") if message else "", request.tools,
                             id_prefix=_id_prefix(request))
        return ModelReply(parsed.thought, parsed.tool_calls, completion_usage(completion))

    def _params(self, messages: list[dict[str, Any]] | list[dict[str, str]]) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.model, "messages": messages}
        if self.temperature is not None:
            params["temperature"] = self.temperature
        if self.max_tokens is not None:
            params["max_tokens"] = self.max_tokens
        if self.extra_body:
            params["extra_body"] = self.extra_body
        return params

    # ------------------------------------------------------------ transport and errors

    async def _create(self, params: dict[str, Any], *, tools_sent: bool) -> ChatCompletion:
        try:
            completion: ChatCompletion = await self._call(self._post_completion, body=params)
        except openai.BadRequestError as exc:
            if tools_sent and _TOOLS_UNSUPPORTED.search(error_text(exc)):
                raise _ToolsUnsupportedError(error_text(exc)) from None
            raise ModelError(
                f"the endpoint at {self.endpoint} rejected the request for {self.model}: "
                f"{describe(exc)}"
            ) from None
        except openai.NotFoundError as exc:
            raise ModelError(
                f"model {self.model!r} not found at {self.endpoint} (check the model name, "
                f"and that the base URL ends in /v1): {describe(exc)}"
            ) from None
        except openai.OpenAIError as exc:  # other 4xx, a body that is not a completion
            raise ModelError(
                f"the endpoint at {self.endpoint} failed for {self.model}: {describe(exc)}"
            ) from None
        if not isinstance(completion, ChatCompletion):  # a proxy's HTML page, say
            shown = " ".join(str(completion).split())[:120]
            raise ModelError(
                f"the endpoint at {self.endpoint} answered something that is not a chat "
                f"completion: {shown!r}"
            )
        return completion

    async def _post_completion(self, body: dict[str, Any]) -> ChatCompletion:
        """POST /chat/completions with `body` as it is. The params are already the API's
        JSON (native_messages, tool_param), so the client's recursive transform of typed
        params, about 10 ms of event-loop time per request on a long history, is skipped
        (`post` is the client's documented way to send a request as given)."""
        completion: ChatCompletion = await self._client.post(
            "/chat/completions", body=body, cast_to=ChatCompletion)
        return completion

    async def _call(self, function: Callable[..., Awaitable[Any]], **kwargs: Any) -> Any:
        """One API call under the retry policy.

        Refused keys and exhausted retries become our errors here; other client errors
        are re-raised for the caller, which knows what the request was.
        """
        self._refuse_unless_allowed()
        policy = self.retry
        retrying = AsyncRetrying(
            stop=stop_after_attempt(policy.attempts),
            wait=self._wait,
            retry=retry_if_exception(is_transient),
            sleep=self._sleep,
            before_sleep=self._log_retry,
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    return await function(**kwargs)
        except (openai.AuthenticationError, openai.PermissionDeniedError):
            raise ModelAuthError(
                f"the endpoint at {self.endpoint} refused the API key: check OPENAI_API_KEY"
            ) from None
        except (openai.APIConnectionError, openai.APIStatusError) as exc:
            if not is_transient(exc):
                raise
            raise ModelUnavailableError(
                f"the endpoint at {self.endpoint} failed {policy.attempts} attempts; "
                f"last error: {describe(exc)}"
            ) from None
        raise AssertionError("unreachable: tenacity either returns or raises")

    def _refuse_unless_allowed(self) -> None:
        """Under ALLOW_MODEL_REQUESTS = False, stop a request to a host off this machine."""
        if ALLOW_MODEL_REQUESTS or is_loopback(self._client.base_url.host):
            return
        raise ModelRequestsDisabledError(
            f"model requests are switched off (engines.openai_model.ALLOW_MODEL_REQUESTS is "
            f"False): refusing to send a request to {self.endpoint}, which is not loopback"
        )

    def _wait(self, state: RetryCallState) -> float:
        """Backoff with jitter, or the server's own `Retry-After` when it gives one."""
        error = state.outcome.exception() if state.outcome else None
        hinted = retry_after(error)
        if hinted is not None:
            return min(hinted, self.retry.max_wait)
        return min(float(self._backoff(state)), self.retry.max_wait)

    def _log_retry(self, state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        pause = state.next_action.sleep if state.next_action else 0.0
        log.warning("model %s at %s: attempt %d failed (%s); retrying in %.2fs",
                    self.model, self.endpoint, state.attempt_number,
                    describe(error) if error else "?", pause)


# ---------------------------------------------------------------- client set-up


def _make_client(
    base_url: str | None,
    api_key: str | None,
    timeout: float,
    http_client: openai.DefaultAsyncHttpxClient | None,
) -> openai.AsyncOpenAI:
    url = base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_URL
    key = api_key or os.environ.get("OPENAI_API_KEY")
    if not key:
        if urlsplit(url).hostname == urlsplit(OPENAI_URL).hostname:
            raise ConfigurationError(
                "OPENAI_API_KEY is not set: give an API key, or set OPENAI_BASE_URL to a "
                "local endpoint (vLLM, Ollama, llama.cpp) that needs none"
            )
        key = _NO_KEY
    if http_client is None:
        http_client = openai.DefaultAsyncHttpxClient(
            verify=_trust_store(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")))
    return openai.AsyncOpenAI(base_url=url, api_key=key, timeout=timeout, max_retries=0,
                              http_client=http_client)


@functools.cache
def _trust_store(cafile: str | None, capath: str | None) -> ssl.SSLContext:
    """The CAs the HTTP client would trust (SSL_CERT_FILE, else SSL_CERT_DIR, else the
    system's), read once per process: loading them costs about 20 ms, and the evaluation
    harness makes one client per scenario."""
    if cafile:
        return ssl.create_default_context(cafile=cafile)
    if capath:
        return ssl.create_default_context(capath=capath)
    return ssl.create_default_context()


def is_loopback(host: str) -> bool:
    """Whether a URL's host is this machine: localhost, 127.0.0.0/8 or ::1."""
    host = host.strip("[]").rstrip(".").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _display_url(url: str) -> str:
    """The endpoint as shown in errors and logs: no credentials, no query string."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def _id_prefix(request: ModelRequest) -> str:
    """Call ids for formats that carry none: unique across steps and across retried steps."""
    return f"call_{request.step}_{uuid.uuid4().hex[:6]}_"
