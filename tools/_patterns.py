"""Log lines to templates with counts, mined with drain3 (the maintained Drain miner).

A thousand lines of "payment failed for order 1234 after 532ms" say one thing; the model
should read it once, with its count, first and last time, one real example and where it
came from. Variable parts (ids, numbers, IPs, durations) are masked before mining so they
never split one message into many templates. Mining is CPU work on a bounded sample
(`MAX_LINES`), cheap enough to run inline on the event loop.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from drain3 import TemplateMiner
from drain3.masking import MaskingInstruction
from drain3.template_miner_config import TemplateMinerConfig

from tools._toolkit import iso, shorten

MAX_LINES = 2000  # newest lines mined; 5,000 cost a second on a busy log store
_SPACES = re.compile(r"\s+")
_MASKED = re.compile(r"<(?:\*|NUM|IP|HEX|UUID|TIME)>")
logging.getLogger("drain3").setLevel(logging.WARNING)  # it logs every start at INFO

_MASKS = (
    (r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b", "UUID"),
    (r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?", "TIME"),
    (r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b", "IP"),
    (r"\b(?:0x)?[0-9a-fA-F]{12,}\b", "HEX"),
    (r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h|[KMGT]i?B?|%)?(?![\w.])", "NUM"),
)


def _miner() -> TemplateMiner:
    """A fresh miner configured in code (never from a drain3.ini in the working directory)."""
    config = TemplateMinerConfig()
    config.drain_sim_th = 0.6  # two-word messages that differ in one word stay apart
    config.drain_depth = 4
    config.drain_max_children = 100
    config.drain_max_clusters = 1000
    config.drain_extra_delimiters = ["=", ","]
    config.masking_instructions = [MaskingInstruction(p, name) for p, name in _MASKS]
    config.parametrize_numeric_tokens = True
    return TemplateMiner(config=config)


@dataclass(frozen=True, slots=True)
class Line:
    """One message to mine, with where and when it came from (any may be unknown)."""

    message: str
    timestamp: datetime | None = None
    service: str = ""
    pod: str = ""
    level: str = ""


@dataclass
class Pattern:
    """A template and what the lines that fit it have in common."""

    template: str
    count: int = 0
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    example: str = ""
    services: Counter[str] = field(default_factory=Counter)
    pods: Counter[str] = field(default_factory=Counter)
    levels: Counter[str] = field(default_factory=Counter)

    def add(self, line: Line) -> None:
        self.count += 1
        if line.timestamp is not None:
            if self.first_seen is None or line.timestamp < self.first_seen:
                self.first_seen = line.timestamp
            if self.last_seen is None or line.timestamp > self.last_seen:
                self.last_seen = line.timestamp
                self.example = line.message
        if not self.example:
            self.example = line.message
        for counter, value in ((self.services, line.service), (self.pods, line.pod),
                               (self.levels, line.level)):
            if value:
                counter[value] += 1


def mine(lines: Iterable[Line], *, max_lines: int = MAX_LINES) -> list[Pattern]:
    """Templates of at most `max_lines` lines, most frequent first.

    Lines are added twice over: first to let every template settle, then matched against
    the final templates, so a line's template does not depend on the order of arrival.
    """
    sample = [line for _, line in zip(range(max_lines), lines, strict=False)]
    miner = _miner()
    for line in sample:
        miner.add_log_message(headline(line.message))
    patterns: dict[str, Pattern] = {}
    for line in sample:
        cluster = miner.match(headline(line.message), full_search_strategy="fallback")
        template = cluster.get_template() if cluster is not None else headline(line.message)
        patterns.setdefault(template, Pattern(template)).add(line)
    return sorted(patterns.values(), key=lambda p: (-p.count, p.template))


def headline(message: str) -> str:
    """The line that names what happened: the first line, except for a Python traceback,
    whose exception comes last ("KeyError: 'WAREHOUSE_API_URL'")."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    if lines[0].startswith("Traceback (most recent call last)") and len(lines) > 1:
        return lines[-1][:1000]
    return lines[0][:1000]


def condense(message: str, limit: int = 300) -> str:
    """A multi-line message (a stack trace) as its first and last lines, on one line."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    if len(lines) <= 2:
        return shorten(" ".join(lines), limit)
    half = max(40, (limit - 3) // 2)
    return f"{shorten(lines[0], half)} … {shorten(lines[-1], half)} ({len(lines)} lines)"


def top(counter: Counter[str], size: int = 3) -> dict[str, int]:
    """The most common values with their counts, `{"omitted": N}` noting the others."""
    common = dict(counter.most_common(size))
    if len(counter) > size:
        common["omitted"] = len(counter) - size
    return common


def as_dict(pattern: Pattern, *, example_chars: int = 300) -> dict[str, Any]:
    """A pattern as the compact data a tool returns."""
    data: dict[str, Any] = {"count": pattern.count}
    if pattern.count > 1:  # a single line is its own best template
        data = {"template": _SPACES.sub(" ", pattern.template)} | data
    if pattern.first_seen is not None and pattern.last_seen is not None:
        data["first_seen"] = iso(pattern.first_seen)
        data["last_seen"] = iso(pattern.last_seen)
    if pattern.count == 1 or _MASKED.search(pattern.template):  # else the template says it all
        data["example"] = condense(pattern.example, example_chars)
    if pattern.services:
        data["services"] = top(pattern.services)
    if pattern.pods:
        data["pods"] = top(pattern.pods)
    if pattern.levels:
        data["levels"] = top(pattern.levels)
    return data
