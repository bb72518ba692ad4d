"""Level one of a tool's fallbacks: a transient backend failure is retried before the model
sees it.

A backend that drops one connection, restarts behind its load balancer or sheds load with
a 503 usually answers the same request a moment later; showing that blip to the model
costs a step and reads as evidence. So a call whose source raised `BackendUnavailableError`
(the classification is tools.sources.transient's) runs again with the same arguments, a
bounded number of times, after a short exponential wait with jitter (several replicas
retrying in step would hit a recovering backend together). The retries never outlast the
tool's own timeout: no wait starts that would end past it, and the toolset's timeout cuts
an attempt still running when it expires. Everything else (a bad query, missing
privileges, a bug) fails at once: retrying cannot change its answer.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    stop_before_delay,
    wait_exponential,
    wait_random,
)

from engines.errors import BackendUnavailableError

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class BackendRetry:
    """How often and how patiently a transient failure is retried.

    `attempts` counts the first one: 3 means two retries. The n-th retry waits
    `first_wait * 2**(n-1)` seconds (at most `max_wait`) plus up to `jitter`.
    """

    attempts: int = 3
    first_wait: float = 0.25
    max_wait: float = 2.0
    jitter: float = 0.25


DEFAULT_RETRY = BackendRetry()


@dataclass(slots=True)
class Attempts:
    """What the attempts of one call went through: how many ran and how each one failed,
    for the observation and the result when the source stays down."""

    count: int = 0
    failures: list[BackendUnavailableError] = field(default_factory=list)

    @property
    def last(self) -> BackendUnavailableError | None:
        return self.failures[-1] if self.failures else None


async def retried(
    run: Callable[[], Awaitable[T]],
    policy: BackendRetry,
    *,
    budget: float,
    attempts: Attempts,
    label: str,
) -> T:
    """`run()`, again while it raises `BackendUnavailableError`, within `policy` and
    `budget` seconds; the last failure is raised when they are spent. Every attempt and
    failure is recorded on `attempts`, and every retry is logged."""

    def before_sleep(state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        wait = state.next_action.sleep if state.next_action else 0.0
        log.warning("%s: attempt %d of %d failed (%s); trying again in %.2fs",
                    label, state.attempt_number, policy.attempts, error, wait)

    retrying = AsyncRetrying(
        retry=retry_if_exception_type(BackendUnavailableError),
        stop=stop_after_attempt(max(1, policy.attempts)) | stop_before_delay(budget),
        wait=wait_exponential(multiplier=policy.first_wait, max=policy.max_wait)
        + wait_random(0, policy.jitter),
        before_sleep=before_sleep,
        reraise=True,
    )
    async for attempt in retrying:
        with attempt:
            attempts.count += 1
            try:
                return await run()
            except BackendUnavailableError as exc:
                attempts.failures.append(exc)
                raise
    raise AssertionError("tenacity ended without an outcome")  # reraise=True: unreachable
