"""Run the model's tool calls safely: constraints, approval, validation, timeouts, budget.

Everything that can go wrong in a call becomes an error observation the model can reason
about; `call` never raises. Read-only results are cached for the investigation, so asking
twice costs nothing and the loop detector sees the repetition.

A failure falls back in three levels. A transient backend failure (unreachable, timed
out, reset, 5xx, 429) is retried with the same arguments, within the tool's timeout,
before the model sees it (tools.retry). An argument error, the model's own or a query the
backend refused (400), goes back to the model to fix. A source that stays down gets an
outage note naming the tools that read the same thing another way (tools.fallback, the
table in tools.catalog).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from engines.budgets import DEFAULT_BUDGETS
from engines.errors import (
    ApprovalDeniedError,
    BackendQueryError,
    BackendUnavailableError,
    ConstraintViolationError,
    ToolError,
    ToolRetryError,
    TriageError,
)
from engines.model import ToolCall, ToolSpec
from engines.tokens import count_tokens
from tools._toolkit import RAW_TOKENS, RawOutput
from tools.catalog import FALLBACKS, READS
from tools.compress import fit
from tools.context import ToolContext
from tools.fallback import Fallback, outage_note
from tools.redact import redact, redact_data
from tools.registry import Tool, ToolResult
from tools.retry import DEFAULT_RETRY, Attempts, BackendRetry, retried

log = logging.getLogger(__name__)

Approver = Callable[[Tool, dict[str, Any], str], Awaitable[bool]]


class Toolset:
    """The tools of one investigation, bound to its context (clock, sources, constraints)."""

    def __init__(
        self,
        tools: Iterable[Tool],
        context: ToolContext,
        *,
        observation_tokens: int = DEFAULT_BUDGETS.observation_tokens,
        approver: Approver | None = None,
        retry: BackendRetry = DEFAULT_RETRY,
        fallbacks: Mapping[str, Fallback] = FALLBACKS,
    ) -> None:
        self._tools = {t.name: t for t in tools}
        self.context = context
        self.observation_tokens = observation_tokens
        self._approver = approver
        self._retry = retry
        self._fallbacks = fallbacks
        self._cache: dict[str, ToolResult] = {}

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def specs(self) -> tuple[ToolSpec, ...]:
        """The tools the model may call now: banned ones and, if forbidden, writes removed."""
        constraints = self.context.constraints
        return tuple(
            t.spec
            for t in self._tools.values()
            if t.name not in constraints.banned_tools
            and (t.read_only or not constraints.writes_forbidden)
        )

    def describe(self, call: ToolCall) -> str:
        tool = self._tools.get(call.name)
        if tool is None:
            return f"{call.name} (unknown tool)"
        return tool.one_line(call.arguments or {})

    async def call(self, call: ToolCall) -> ToolResult:
        started = time.perf_counter()
        try:
            tool, arguments = self._admit(call)
            key = f"{tool.name}:{json.dumps(arguments, sort_keys=True, default=str)}"
            if tool.read_only and key in self._cache:
                cached = self._cache[key]
                return ToolResult(
                    cached.status, cached.text, cached.data, cached.error, 0, True, 0.0
                )
            if not tool.read_only:
                await self._approve(tool, arguments)
            result = await self._run(tool, arguments, started)
            if tool.read_only:
                self._cache[key] = result
            return result
        except ToolRetryError as exc:
            return self._error(f"{exc} (fix the arguments and call again)", started)
        except ToolError as exc:
            return self._error(str(exc), started, getattr(exc, "attempts", 1))

    def _admit(self, call: ToolCall) -> tuple[Tool, dict[str, Any]]:
        """Check a call against the registry and the constraints in force."""
        tool = self._tools.get(call.name)
        if tool is None:
            known = ", ".join(sorted(self._tools))
            raise ToolRetryError(f"there is no tool named {call.name!r}; the tools are: {known}")
        constraints = self.context.constraints
        if tool.name in constraints.banned_tools:
            raise ConstraintViolationError(f"{tool.name} was banned by a human in this thread")
        if not tool.read_only and constraints.writes_forbidden:
            raise ConstraintViolationError(
                f"{tool.name} changes the cluster and a human asked for read-only"
            )
        arguments = tool.validate(call.arguments, call.raw_arguments)
        namespace = arguments.get("namespace")
        if isinstance(namespace, str) and namespace in constraints.excluded_namespaces:
            raise ConstraintViolationError(
                f"namespace {namespace!r} is excluded by a human in this thread; "
                "investigate elsewhere"
            )
        return tool, arguments

    async def _approve(self, tool: Tool, arguments: dict[str, Any]) -> None:
        if self._approver is None:
            raise ApprovalDeniedError(
                f"{tool.name} changes the cluster and nobody here can approve it; "
                "suggest it in the fix instead"
            )
        if not await self._approver(tool, arguments, tool.one_line(arguments)):
            raise ApprovalDeniedError(f"a human declined {tool.one_line(arguments)}")

    async def _run(self, tool: Tool, arguments: dict[str, Any], started: float) -> ToolResult:
        attempts = Attempts()
        try:
            async with asyncio.timeout(tool.timeout):
                data = await retried(lambda: tool.run(self.context, arguments), self._retry,
                                     budget=tool.timeout, attempts=attempts, label=tool.name)
        except TimeoutError:
            message = f"{tool.name} timed out after {tool.timeout:g}s"
            if attempts.last is not None:  # it was already retrying a source that is down
                message += (f" and {attempts.count} attempts; the last failure: "
                            f"{attempts.last}")
            raise _SourceDownError(self._with_outage(message, attempts.last, arguments),
                                   attempts.count) from None
        except BackendUnavailableError as exc:
            tried = f" after {attempts.count} attempts" if attempts.count > 1 else ""
            took = time.perf_counter() - started
            message = f"{tool.name} failed{tried} in {took:.1f}s: {exc}"
            raise _SourceDownError(self._with_outage(message, exc, arguments),
                                   attempts.count) from None
        except (ToolRetryError, BackendQueryError) as exc:  # the model can fix the call
            raise ToolRetryError(f"{tool.name}: {redact(str(exc))}") from None
        except TriageError as exc:
            raise ToolError(f"{tool.name} failed: {redact(str(exc))}") from None
        except Exception as exc:  # a tool bug must not end the investigation
            log.exception("tool %s crashed", tool.name)
            raise ToolError(
                f"{tool.name} failed unexpectedly: {type(exc).__name__}: {redact(str(exc))}"
            ) from None
        raw: RawOutput | None = None
        if isinstance(data, dict) and RAW_TOKENS in data:
            data = dict(data)
            raw = data.pop(RAW_TOKENS)
        data, text, raw_tokens = await asyncio.to_thread(self._render, data, raw)
        return ToolResult("success", text, data, None, raw_tokens, False,
                          time.perf_counter() - started, attempts.count)

    def _with_outage(self, message: str, error: BackendUnavailableError | None,
                     arguments: dict[str, Any]) -> str:
        """The message, and the outage note of the source that stayed down, if it has one."""
        fallback = self._fallbacks.get(error.source) if error is not None else None
        if fallback is None:
            return message
        return f"{message}\n{outage_note(fallback, arguments, READS, self.specs())}"

    def _render(self, data: Any, raw: RawOutput | None) -> tuple[Any, str, int]:
        """Mask and render a result, and count what the raw output would have cost: pure CPU
        work, done in a worker thread so that a bot serving many investigations keeps
        answering Slack while observations are built."""
        masked = redact_data(data)
        text, _, whole = fit(masked, self.observation_tokens)
        return masked, text, (raw.tokens() if raw is not None else 0) or whole

    @staticmethod
    def _error(message: str, started: float, attempts: int = 1) -> ToolResult:
        text = f"ERROR: {redact(message)}"
        return ToolResult("error", text, None, text, count_tokens(text), False,
                          time.perf_counter() - started, attempts)


class _SourceDownError(ToolError):
    """A call whose source stayed unavailable (or slow) through its attempts."""

    def __init__(self, message: str, attempts: int) -> None:
        super().__init__(message)
        self.attempts = attempts
