"""Run the model's tool calls safely: constraints, approval, validation, timeouts, budget.

Everything that can go wrong in a call becomes an error observation the model can reason
about; `call` never raises. Read-only results are cached for the investigation, so asking
twice costs nothing and the loop detector sees the repetition; with a shared `ToolCache`
(tools.cache) they are also shared, for a few seconds or minutes by tool, with the other
investigations of the same sources. The toolset also answers
`list_tools` (engines.short_catalog): the tools beyond its ranked core, for a model that
was offered only the core.

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
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from engines.budgets import DEFAULT_BUDGETS
from engines.constraints import source_of
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
from engines.short_catalog import LIST_TOOLS, render_listing, render_page
from engines.tokens import count_tokens
from tools._toolkit import RAW_TOKENS, RawOutput
from tools.cache import ToolCache, make_key, result_size, sources_identity
from tools.catalog import CACHE_TTL, CORE_SIZE, FALLBACKS, RANKED_TOOLS, READS
from tools.compress import fit, was_cut
from tools.context import ToolContext
from tools.fallback import Fallback, outage_note
from tools.redact import redact, redact_data
from tools.registry import Tool, ToolResult
from tools.retry import DEFAULT_RETRY, Attempts, BackendRetry, retried

log = logging.getLogger(__name__)

Approver = Callable[[Tool, dict[str, Any], str], Awaitable[bool]]
# (tool, the result's masked data, the budget) -> an observation within it, or None.
Summariser = Callable[[str, Any, int], Awaitable[str | None]]
SUMMARY_SECONDS = 30.0  # a check model slower than this leaves the observation cut


# The arguments by which a tool names one workload or one of its pods.
WORKLOAD_ARGUMENTS = ("name", "workload", "pod", "deployment")


def _names_excluded(name: str, excluded: frozenset[str]) -> bool:
    """A workload, or a pod of it (`checkout-7d9f8b6c4d-x2x9q` belongs to `checkout`)."""
    return any(name == w or name.startswith(f"{w}-") for w in excluded)


class Toolset:
    """The tools of one investigation, bound to its context (clock, sources, constraints)."""

    def __init__(
        self,
        tools: Iterable[Tool],
        context: ToolContext,
        *,
        observation_tokens: int = DEFAULT_BUDGETS.observation_tokens,
        approver: Approver | None = None,
        ranking: Sequence[str] = RANKED_TOOLS,
        core_size: int = CORE_SIZE,
        retry: BackendRetry = DEFAULT_RETRY,
        fallbacks: Mapping[str, Fallback] = FALLBACKS,
        shared: ToolCache | None = None,
        fixed_clock: bool = False,
        ttls: Mapping[str, float] = CACHE_TTL,
        summariser: Summariser | None = None,
    ) -> None:
        """`ranking` orders the tools by how often they are useful, `core_size` of them
        make the short catalog (tools.catalog measured both). `shared` is the process's
        tool cache, `ttls` how long each tool's answers keep there, and `fixed_clock` says
        the context's `now` is the incident's own clock (a scenario's), not the wall clock
        at the start: then it is part of what makes two calls the same. `summariser` (the
        check model's, engines/observation_summary.py) replaces compression's cuts of an
        observation over budget, per investigation (after the cache: it reads this
        incident's report)."""
        self._tools = {t.name: t for t in tools}
        self._rank = {name: index for index, name in enumerate(ranking)}
        self.core_size = core_size
        self.context = context
        self.observation_tokens = observation_tokens
        self._approver = approver
        self._retry = retry
        self._fallbacks = fallbacks
        self._summariser = summariser
        self._cache: dict[str, ToolResult] = {}
        self._shared = shared
        self._scope = sources_identity(context.sources) if shared is not None else None
        self._fixed_clock = fixed_clock
        self._ttls = ttls

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
            if constraints.tool_allowed(t.name)
            and (t.read_only or not constraints.writes_forbidden)
        )

    def core_specs(self) -> tuple[ToolSpec, ...]:
        """The short catalog's tools: the best ranked of those offered now (a banned core
        tool gives its place to the next one), unranked tools last."""
        specs = sorted(self.specs(), key=lambda s: self._rank.get(s.name, len(self._rank)))
        return tuple(specs[: self.core_size])

    def describe(self, call: ToolCall) -> str:
        if call.name == LIST_TOOLS:
            name = (call.arguments or {}).get("name")
            return f"Reading the description of {name}" if name else "Listing more tools"
        tool = self._tools.get(call.name)
        if tool is None:
            return f"{call.name} (unknown tool)"
        return tool.one_line(call.arguments or {})

    async def call(self, call: ToolCall) -> ToolResult:
        started = time.perf_counter()
        try:
            if call.name == LIST_TOOLS:
                return self._list(call, started)
            tool, arguments = self._admit(call)
            key = f"{tool.name}:{json.dumps(arguments, sort_keys=True, default=str)}"
            if tool.read_only and key in self._cache:
                cached = self._cache[key]
                return ToolResult(
                    cached.status, cached.text, cached.data, cached.error, 0, True, 0.0
                )
            if not tool.read_only:
                await self._approve(tool, arguments)
            result = await self._run_shared(tool, arguments, started)
            if self._summariser is not None and result.status == "success" \
                    and was_cut(result.text):
                result = replace(result, text=await self._summarised(tool.name, result.data,
                                                                      result.text))
            if tool.read_only:
                self._cache[key] = result
            return result
        except ToolRetryError as exc:
            return self._error(f"{exc} (fix the arguments and call again)", started)
        except ToolError as exc:
            return self._error(str(exc), started, getattr(exc, "attempts", 1))

    def _list(self, call: ToolCall, started: float) -> ToolResult:
        """`list_tools`: the tools beyond the core in one line each, or one tool's page. It
        is the model's catalog, not evidence: never cut to the observation budget."""
        arguments = call.arguments
        if arguments is None or set(arguments) - {"name"}:
            raise ToolRetryError(f"{LIST_TOOLS} takes only an optional name, got "
                                 f"{call.raw_arguments[:200] or arguments!r}")
        offered = {spec.name: spec for spec in self.specs()}
        name = arguments.get("name")
        if name is None:
            core = {spec.name for spec in self.core_specs()}
            text = render_listing([s for s in offered.values() if s.name not in core])
        elif not isinstance(name, str) or name not in offered:
            if isinstance(name, str) and name in self._tools:
                raise ConstraintViolationError(f"{name} is not allowed in this investigation")
            known = ", ".join(sorted(offered))
            raise ToolRetryError(f"there is no tool named {name!r}; the tools are: {known}")
        else:
            text = render_page(offered[name])
        return ToolResult("success", text, None, None, count_tokens(text), False,
                          time.perf_counter() - started)

    def _admit(self, call: ToolCall) -> tuple[Tool, dict[str, Any]]:
        """Check a call against the registry and the constraints in force."""
        tool = self._tools.get(call.name)
        if tool is None:
            known = ", ".join(sorted(self._tools))
            raise ToolRetryError(f"there is no tool named {call.name!r}; the tools are: {known}")
        constraints = self.context.constraints
        if tool.name in constraints.banned_tools:
            raise ConstraintViolationError(f"{tool.name} was banned by a human in this thread")
        if not constraints.tool_allowed(tool.name):
            raise ConstraintViolationError(
                f"{tool.name} reads {source_of(tool.name)}, which a human excluded in this thread")
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
        workload = next((arguments[k] for k in WORKLOAD_ARGUMENTS
                         if isinstance(arguments.get(k), str)), None)
        if workload is not None and _names_excluded(workload, constraints.excluded_workloads):
            raise ConstraintViolationError(
                f"{workload!r} is excluded by a human in this thread; investigate elsewhere")
        return tool, arguments

    async def _approve(self, tool: Tool, arguments: dict[str, Any]) -> None:
        if self._approver is None:
            raise ApprovalDeniedError(
                f"{tool.name} changes the cluster and nobody here can approve it; "
                "suggest it in the fix instead"
            )
        if not await self._approver(tool, arguments, tool.one_line(arguments)):
            raise ApprovalDeniedError(f"a human declined {tool.one_line(arguments)}")

    async def _run_shared(self, tool: Tool, arguments: dict[str, Any],
                          started: float) -> ToolResult:
        """Through the shared cache when the tool may be: read-only, with a TTL, on sources
        that say who they are."""
        ttl = self._ttls.get(tool.name, 0.0)
        if self._shared is None or self._scope is None or not tool.read_only or ttl <= 0:
            result, _ = await self._run(tool, arguments, started)
            return result
        key = make_key(self._scope, tool.name, arguments,
                       excluded_namespaces=self.context.constraints.excluded_namespaces,
                       clock=self.context.now if self._fixed_clock else None,
                       observation_tokens=self.observation_tokens)
        return await self._shared.get_or_run(
            key, ttl, lambda: self._run(tool, arguments, started, sized=True))

    async def _run(self, tool: Tool, arguments: dict[str, Any], started: float,
                   *, sized: bool = False) -> tuple[ToolResult, int]:
        """The call for real, and (`sized`) what its result would hold in a cache."""
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
        data, text, raw_tokens, size = await asyncio.to_thread(self._render, data, raw, sized)
        return ToolResult("success", text, data, None, raw_tokens, False,
                          time.perf_counter() - started, attempts.count), size

    def _with_outage(self, message: str, error: BackendUnavailableError | None,
                     arguments: dict[str, Any]) -> str:
        """The message, and the outage note of the source that stayed down, if it has one."""
        fallback = self._fallbacks.get(error.source) if error is not None else None
        if fallback is None:
            return message
        return f"{message}\n{outage_note(fallback, arguments, READS, self.specs())}"

    def _render(self, data: Any, raw: RawOutput | None,
                sized: bool) -> tuple[Any, str, int, int]:
        """Mask and render a result, count what the raw output would have cost and (`sized`)
        the bytes it would hold in a cache: pure CPU work, done in a worker thread so that
        a bot serving many investigations keeps answering Slack while observations are
        built."""
        masked = redact_data(data)
        text, _, whole = fit(masked, self.observation_tokens)
        size = result_size(ToolResult("success", text, masked)) if sized else 0
        return masked, text, (raw.tokens() if raw is not None else 0) or whole, size

    async def _summarised(self, tool: str, data: Any, cut: str) -> str:
        """The check model's summary of an observation cut short, or the cut if it has
        none in time (a summary is an improvement, never a reason to lose the text)."""
        assert self._summariser is not None
        try:
            async with asyncio.timeout(SUMMARY_SECONDS):  # data is masked by _render
                summary = await self._summariser(tool, data, self.observation_tokens)
        except TimeoutError:
            log.warning("summarising %s took over %ss; the observation is cut", tool,
                        SUMMARY_SECONDS)
            return cut
        except Exception:  # a summariser bug must not cost the observation
            log.exception("summarising %s failed; the observation is cut", tool)
            return cut
        return redact(summary) if summary else cut

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
