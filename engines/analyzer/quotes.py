"""Evidence quotes copied verbatim from observations.

A later evaluator checks mechanically that every quote is a substring of an observation
of the tool it names, so a quote is never composed: it is cut out of the observation text
around a needle (a reason, an exit code, a log phrase), on one line, at word boundaries.
Observations are YAML that may wrap a long value over two lines; a needle of several words
is therefore matched across any whitespace and the quote keeps the part on the needle's
first line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from engines.analyzer.transcript import Observation
from engines.diagnosis import Evidence

MAX_QUOTE = 160
_OPENERS = "-{[ "


GAP = " … "
"""In a needle, "a … b": a line holding `a` and, later on the same line, `b` (a limits line
that names the memory, not the requests line before it)."""


def _pattern(needle: str) -> re.Pattern[str]:
    parts = [r"\s+".join(re.escape(w) for w in part.split()) for part in needle.split(GAP)]
    return re.compile(r"[^\n]*?".join(parts))


def _matches(content: str, needle: str) -> list[re.Match[str]]:
    """Matches of `needle` (case-sensitive first), those on a single line first."""
    found = list(_pattern(needle).finditer(content)) or list(
        re.compile(_pattern(needle).pattern, re.IGNORECASE).finditer(content))
    return sorted(found, key=lambda m: "\n" in m.group(0))


def cut_quote(content: str, needle: str, *, max_chars: int = MAX_QUOTE) -> str | None:
    """A single-line substring of `content` containing (the start of) `needle`, or None."""
    if not needle.strip():
        return None
    found = _matches(content, needle)
    if not found:
        return None
    match = found[0]
    begin, finish = _widest_line_piece(content, match.start(), match.end())
    start = content.rfind("\n", 0, begin) + 1
    end = content.find("\n", begin)
    end = len(content) if end < 0 else end
    line = content[start:end]
    offset = begin - start
    length = finish - begin
    left, right = _window(line, offset, length, max_chars)
    quote = line[left:right].strip()
    while quote and quote[0] in _OPENERS:
        quote = quote[1:].lstrip()
    quote = quote.rstrip(",{[ ")
    return quote if len(quote) >= 3 and quote in content else None


def _widest_line_piece(content: str, start: int, end: int) -> tuple[int, int]:
    """The part of [start, end) on one line that holds the most of the match (a needle that
    YAML wrapped over two lines is quoted by its larger half)."""
    pieces, position = [], start
    while position < end:
        stop = content.find("\n", position, end)
        stop = end if stop < 0 else stop
        pieces.append((position, stop))
        position = stop + 1
    return max(pieces, key=lambda p: len(content[p[0]:p[1]].strip()))


def _window(line: str, offset: int, length: int, max_chars: int) -> tuple[int, int]:
    """Bounds of at most `max_chars` around [offset, offset+length), at spaces if possible."""
    if len(line) <= max_chars:
        return 0, len(line)
    spare = max(0, max_chars - length)
    comma, brace = line.rfind(", ", 0, offset), line.rfind("{", 0, offset)
    field_start = max(comma + 2 if comma >= 0 else 0, brace + 1 if brace >= 0 else 0)
    left = field_start if offset - field_start <= spare // 2 else max(0, offset - spare // 3)
    right = min(len(line), offset + length + spare - (offset - left))
    if left > 0 and left != field_start:
        space = line.find(" ", left, offset)
        left = space + 1 if space >= 0 else left
    if right < len(line):
        space = line.rfind(" ", offset + length, right)
        right = space if space >= 0 else right
    return left, right


def find_evidence(observations: Iterable[Observation], tools: Sequence[str],
                  needles: Sequence[str]) -> Evidence | None:
    """The first needle found in the newest quotable observation of `tools`."""
    candidates = [o for o in observations if o.tool in tools and o.quotable and o.ok]
    candidates.sort(key=lambda o: -o.index)
    for needle in needles:
        for observation in candidates:
            if (quote := cut_quote(observation.content, needle)) is not None:
                return Evidence(tool=observation.tool, quote=quote)
    return None


def quote_in(observation: Observation, needles: Sequence[str]) -> Evidence | None:
    """A quote from one given observation, for the first needle it contains."""
    if not observation.quotable:
        return None
    for needle in needles:
        if (quote := cut_quote(observation.content, needle)) is not None:
            return Evidence(tool=observation.tool, quote=quote)
    return None
