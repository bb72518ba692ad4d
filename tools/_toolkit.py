"""What every toolset needs: time windows from the model's words, short numbers and ages,
lists cut with a note, namespace checks, and the raw-token cost of what a tool read.

Tools return small structured data; the lead's toolset layer renders it and enforces the
token budget. `finish` is the last step of every tool: it masks credentials and attaches
`_raw_tokens`, what the tool read, whose token cost (what the uncompressed output would
have cost) the toolset counts off the event loop and records for the compression benchmark.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from engines.errors import ConstraintViolationError, ToolRetryError
from engines.tokens import count_tokens
from tools.context import ToolContext
from tools.redact import redact_data
from tools.scenarios import parse_time

RAW_TOKENS = "_raw_tokens"
T = TypeVar("T")

_UNITS = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60, "h": 3600,
          "hr": 3600, "hour": 3600, "d": 86400, "day": 86400, "w": 604800, "week": 604800}
_PART = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*(?:,|and)?")
_MAX_WINDOW = timedelta(days=7)
_EXACT = 50_000


def parse_duration(text: str) -> timedelta:
    """ "30m", "last 2h", "1h30m", "90 minutes" to a duration; ToolRetryError if unreadable."""
    cleaned = text.strip().lower().removeprefix("last").removesuffix("ago").strip()
    total = 0.0
    position = 0
    while position < len(cleaned):
        part = _PART.match(cleaned, position)
        if part is None:
            break
        word = part.group(2)
        unit = _UNITS.get(word) or (_UNITS.get(word[:-1]) if word.endswith("s") else None)
        if unit is None:
            break
        total += float(part.group(1)) * unit
        position = part.end()
    else:
        if total > 0:
            return timedelta(seconds=total)
    raise ToolRetryError(
        f"cannot read the duration {text!r}: write it like 30m, 2h, 1h30m or 1d"
    )


def parse_instant(text: str) -> datetime:
    """An RFC 3339 time ("2026-11-30T09:10:00Z"); ToolRetryError if unreadable."""
    try:
        return parse_time(text)
    except ValueError:
        raise ToolRetryError(
            f"cannot read the time {text!r}: use RFC 3339 like 2026-11-30T09:10:00Z"
        ) from None


def time_window(
    now: datetime, since: str | None, start: str | None = None, end: str | None = None
) -> tuple[datetime, datetime]:
    """The [start, end] a tool reads: explicit times win over `since` (relative to now)."""
    stop = parse_instant(end) if end else now
    begin = parse_instant(start) if start else stop - parse_duration(since or "1h")
    if begin >= stop:
        raise ToolRetryError(f"the window is empty: start {iso(begin)} is not before {iso(stop)}")
    if stop - begin > _MAX_WINDOW:
        raise ToolRetryError("the window is longer than 7 days; narrow it")
    return begin, stop


def default_step(start: datetime, end: datetime) -> int:
    """The step of a range read: about 180 points per window, in whole minutes (one minute
    at least), enough for a change point and few enough for a cheap query."""
    return max(60, round((end - start).total_seconds() / 180 / 60) * 60)


def iso(moment: datetime) -> str:
    """Second-precision UTC RFC 3339, the shortest unambiguous form."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def seconds_since(moment: datetime | str | None, now: datetime) -> int | None:
    """Whole seconds from `moment` to `now` (negative if it is later): the number behind
    `ago`, for a result's readers that compare ages rather than read them."""
    if moment is None or moment == "":
        return None
    when = moment if isinstance(moment, datetime) else parse_time(moment)
    return int((now - when).total_seconds())


def ago(moment: datetime | str | None, now: datetime) -> str | None:
    """How long before `now`, kubectl-style: 45s, 12m, 3h5m, 2d4h."""
    seconds = seconds_since(moment, now)
    if seconds is None:
        return None
    sign, seconds = ("-", -seconds) if seconds < 0 else ("", seconds)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        text = f"{days}d{hours}h" if hours and days < 3 else f"{days}d"
    elif hours:
        text = f"{hours}h{minutes}m" if minutes else f"{hours}h"
    elif minutes:
        text = f"{minutes}m"
    else:
        text = f"{secs}s"
    return sign + text


def span(seconds: float) -> str:
    """A duration for humans: 30s, 5m, 2h."""
    for size, unit in ((86400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def cut(items: Sequence[T], limit: int) -> list[Any]:
    """The first `limit` items, then `{"omitted": N}` when some were left out."""
    kept: list[Any] = list(items[:limit])
    if len(items) > limit:
        kept.append({"omitted": len(items) - limit})
    return kept


def round_to(value: float, digits: int = 3) -> float:
    """Round to significant digits: observations need two or three, not seventeen."""
    if value == 0 or value != value or value in (float("inf"), float("-inf")):
        return value
    from math import floor, log10

    return round(value, max(0, digits - 1 - floor(log10(abs(value)))))


_QUOTED = re.compile(r'"([^"]{16,})"')
TAIL = 60  # at most this much of the end of a message shortened at both ends


def shorten(text: str, limit: int = 300, *, ends: bool = False) -> str:
    """One line of at most `limit` characters. With `ends`, a long quoted name said again
    is said once ("Failed to pull image "X": failed to resolve reference "X": ... 401
    Unauthorized"), and if it is still too long its last words are kept too: a message that
    nests its causes says why at its end."""
    flat = " ".join(text.split())
    if ends and len(flat) > limit:
        seen: set[str] = set()

        def once(match: re.Match[str]) -> str:
            if match.group(1) in seen:
                return '"…"'
            seen.add(match.group(1))
            return match.group(0)

        flat = _QUOTED.sub(once, flat)
        if len(flat) > limit:  # still too long: the start, and the last words (the why)
            tail = min(TAIL, limit // 4)
            return f"{flat[: limit - tail - 3]} … {flat[len(flat) - tail:]}"
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def check_namespace(ctx: ToolContext, namespace: str | None) -> None:
    """Refuse an explicit namespace that a human excluded."""
    if namespace and not ctx.allows_namespace(namespace):
        raise ConstraintViolationError(
            f"namespace {namespace} is excluded by a constraint from the thread; do not query it"
        )


def raw_tokens(raw: Any) -> int:
    """Tokens of what a tool read, as text (objects as compact JSON).

    Beyond `_EXACT` characters the count is extrapolated from exact counts of slices spread
    over the text: raw outputs are repetitive (series, objects, lines), so the estimate is
    within a few percent and costs a fraction of counting a megabyte.
    """
    text = raw if isinstance(raw, str) else json.dumps(raw, separators=(",", ":"), default=str)
    if len(text) <= _EXACT:
        return count_tokens(text)
    size, stride = _EXACT // 8, len(text) // 8
    counted = sum(count_tokens(text[i * stride:i * stride + size]) for i in range(8))
    return round(counted * len(text) / (8 * size))


@dataclass(frozen=True, slots=True)
class RawOutput:
    """What a tool read, kept so its token cost is counted later, in the toolset's worker
    thread: counting is pure bookkeeping (for the compression figure) and, on a bot serving
    many investigations, must not hold the event loop that acknowledges Slack. `source` is
    the raw value, or a function that builds it (a series matrix, a log text)."""

    source: Any

    def tokens(self) -> int:
        raw = self.source() if callable(self.source) else self.source
        return raw_tokens(raw)


def finish(result: dict[str, Any], raw: Any | Callable[[], Any] = None) -> dict[str, Any]:
    """Mask credentials and attach what the tool read (`RawOutput`): the last step of every
    tool. Pass a function for a raw output that costs something to build."""
    cleaned: dict[str, Any] = redact_data(result)
    if raw is not None:
        cleaned[RAW_TOKENS] = RawOutput(raw)
    return cleaned
