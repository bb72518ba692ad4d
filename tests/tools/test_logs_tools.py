"""The log tools turn lines into patterns, counts and change points."""

from __future__ import annotations

import pytest

from engines.errors import ConstraintViolationError, ToolRetryError
from tests.tools._tooling import call, context, text
from tools._patterns import Line, as_dict, condense, headline, mine
from tools.logs import levels_from


async def test_error_patterns_count_templates() -> None:
    data = await call(context(), "logs_error_patterns", since="2h")
    assert data["matching_lines"] == 159  # 75 errors, 60 warnings in shop; 24 in kube-system
    patterns = {p["template"]: p for p in data["patterns"] if "template" in p}
    upstream = patterns["GET /api/checkout returned <NUM> upstream reset after <NUM>"]
    assert upstream["count"] == 75
    assert upstream["first_seen"] == "2026-11-30T09:10:07Z"
    assert upstream["services"] == {"frontend": 75}
    assert upstream["example"].startswith("GET /api/checkout returned 502")
    redis = patterns["redis connection reset by peer retrying in <NUM>"]
    assert redis["count"] == 60 and redis["levels"] == {"warn": 60}


async def test_error_patterns_respect_level_and_service() -> None:
    data = await call(context(), "logs_error_patterns", service="checkout", level="any",
                      since="2h")
    assert data["matching_lines"] == 421
    templates = [p.get("template") for p in data["patterns"]]
    assert "order <NUM> paid" in templates  # the most frequent line, info level
    ranks = {"debug": 1, "info": 2, "warn": 3, "error": 4}
    worst = [max(ranks[level] for level in p["levels"]) for p in data["patterns"]]
    assert worst == sorted(worst, reverse=True) and worst[0] > 2  # warnings before info
    assert "Bearer abcDEF" not in text(data)
    errors = await call(context(), "logs_error_patterns", service="checkout", level="error",
                        since="2h")
    assert errors["patterns"] == "no line matches"


async def test_search_collapses_lines_alike() -> None:
    data = await call(context(), "logs_search", namespace="shop", level="error", limit=15)
    assert data["total"] == 75 and data["lines_not_shown"] == 60
    assert len(data["lines"]) == 1
    assert data["lines"][0].endswith("(×15 alike)")
    assert data["shown_lines_share"] == {"level": "error", "service": "frontend",
                                         "pod": "frontend-8d6c5b4f2-a1b2c"}


async def test_search_text_window_and_levels() -> None:
    ctx = context()
    words = await call(ctx, "logs_search", text="redis reset", since="2h")
    assert words["total"] == 60
    window = await call(ctx, "logs_search", text="redis reset", start="2026-11-30T09:00:00Z",
                        end="2026-11-30T09:30:00Z")
    assert window["total"] == 15 and window["window"].endswith("(30m)")
    warn_up = await call(ctx, "logs_search", level="warn", namespace="shop", since="2h")
    assert warn_up["total"] == 135


async def test_count_over_time_flags_the_change_point() -> None:
    data = await call(context(), "logs_count_over_time", level="error", namespace="shop",
                      since="2h")
    assert data["interval"] == "5m" and len(data["counts"]) == 24
    assert data["total"] == 75
    change = data["change"]
    assert change["at"] == "2026-11-30T09:10:00Z" and change["direction"] == "up"
    assert change["rate_before_per_min"] == 0.0 and change["rate_after_per_min"] > 1


async def test_count_over_time_steady() -> None:
    data = await call(context(), "logs_count_over_time", service="checkout", level="info",
                      since="2h")
    assert data["change"] == "no significant change in rate"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"since": "yesterday"}, "cannot read the duration"),
        ({"start": "last tuesday"}, "cannot read the time"),
        ({"level": "loud"}, "unknown level"),
        ({"start": "2026-11-30T10:00:00Z", "end": "2026-11-30T09:00:00Z"}, "empty"),
        ({"since": "30d"}, "longer than 7 days"),
    ],
)
async def test_bad_arguments_say_how_to_fix_them(arguments: dict[str, str], message: str) -> None:
    with pytest.raises(ToolRetryError, match=message):
        await call(context(), "logs_search", **arguments)


async def test_excluded_namespace_is_filtered_in_the_query() -> None:
    ctx = context(exclude=("kube-system",))
    for name in ("logs_error_patterns", "logs_search", "logs_count_over_time"):
        data = await call(ctx, name, level="error", since="2h")
        assert "coredns" not in text(data) and "kube-system" not in text(data)
    with pytest.raises(ConstraintViolationError):
        await call(ctx, "logs_search", namespace="kube-system")


def test_levels_at_or_above() -> None:
    assert set(levels_from("warn")) >= {"warn", "warning", "error", "fatal", "critical"}
    assert "info" not in levels_from("warn")
    assert levels_from("any") == () and levels_from(None) == ()


def test_mining_masks_variables_and_keeps_short_messages_apart() -> None:
    lines = [Line(f"payment failed for order {n} after {n % 900}ms") for n in range(1000, 1050)]
    lines += [Line("payment authorized")] * 5 + [Line("payment declined")] * 3
    lines += [Line("user 3fa85f64-5717-4562-b3fc-2c963f66afa6 from 10.0.0.7:8080")] * 2
    patterns = {p.template: p.count for p in mine(lines)}
    assert patterns["payment failed for order <NUM> after <NUM>"] == 50
    assert patterns["payment authorized"] == 5 and patterns["payment declined"] == 3
    assert patterns["user <UUID> from <IP>"] == 2


def test_traceback_headline_is_its_exception() -> None:
    trace = "Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'URL'"
    assert headline(trace) == "KeyError: 'URL'"
    assert headline("first\nsecond") == "first"
    assert condense(trace) == "Traceback (most recent call last): … KeyError: 'URL' (3 lines)"
    single = as_dict(mine([Line("only once")])[0])
    assert single == {"count": 1, "example": "only once"}
