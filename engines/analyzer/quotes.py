"""Evidence quotes cut out of observations around a needle (a reason, an exit code, a log
phrase).

A later evaluator checks mechanically that every quote occurs in an observation of the tool
it names, so a quote is never composed: the needle is found in the observation text and the
quote is the whole line or `key: value` around it, as `engines.evidence` widens any quote
(a long line trimmed at spaces, with `…` at each cut). Observations are YAML that may wrap a
long value over two lines; a needle of several words is therefore matched across any
whitespace.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from engines.analyzer.transcript import Observation
from engines.diagnosis import Evidence
from engines.evidence import Located, occurs, widen_span

MAX_QUOTE = 160


GAP = " … "
"""In a needle, "a … b": a line holding `a` and, later on the same line, `b` (a limits line
that names the memory, not the requests line before it)."""


def _matches(content: str, needle: str) -> list[re.Match[str]]:
    """Matches of `needle` (case-sensitive first), those on a single line first."""
    parts = [r"\s+".join(re.escape(w) for w in part.split()) for part in needle.split(GAP)]
    pattern = r"[^\n]*?".join(parts)
    found = list(re.finditer(pattern, content)) or list(
        re.finditer(pattern, content, re.IGNORECASE))
    return sorted(found, key=lambda m: "\n" in m.group(0))


def cut_quote(content: str, needle: str, *, max_chars: int = MAX_QUOTE) -> str | None:
    """The whole line or value of `content` that holds `needle`, or None."""
    if not needle.strip() or not (found := _matches(content, needle)):
        return None
    span = Located(found[0].start(), found[0].end())
    quote = widen_span(content, span, max_chars, keep_whole=False).quote
    return quote if len(quote) >= 3 and occurs(quote, content) else None


def find_evidence(observations: Iterable[Observation], tools: Sequence[str],
                  needles: Sequence[str]) -> Evidence | None:
    """The first needle found in the newest quotable observation of `tools`."""
    candidates = sorted((o for o in observations if o.tool in tools and o.ok),
                        key=lambda o: -o.index)
    return _first_quote(candidates, needles)


def quote_in(observation: Observation, needles: Sequence[str]) -> Evidence | None:
    """A quote from one given observation, for the first needle it contains."""
    return _first_quote([observation], needles)


def _first_quote(observations: Sequence[Observation], needles: Sequence[str]) -> Evidence | None:
    """The first needle that a quotable observation holds, from the first that holds it."""
    for needle in needles:
        for observation in (o for o in observations if o.quotable):
            if (quote := cut_quote(observation.content, needle)) is not None:
                return Evidence(tool=observation.tool, quote=quote)
    return None
