"""Read an observation's text back into data: the analyzer sees exactly what a model is sent."""

from __future__ import annotations

import re
from typing import Any

import yaml

from tools.fallback import Outage, read_outage

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_CUT_NOTE = re.compile(r"\n\[… \d+ more tokens cut to fit the observation budget\]$")
_MAX_DROPPED_LINES = 40


def parse_observation(text: str) -> Any:
    """The data a tool's rendered text holds, or None when the text is an error or prose.

    Observations are compact YAML (tools.compress); one cut at the end to fit the budget is
    read up to the last line that still parses, so what the budget cut is simply absent.
    """
    if text.startswith("ERROR:"):
        return None
    body, cut = _CUT_NOTE.subn("", text)
    lines = body.split("\n")
    for dropped in range(min(len(lines), _MAX_DROPPED_LINES) if cut else 1):
        candidate = "\n".join(lines[: len(lines) - dropped])
        try:
            return yaml.load(candidate, Loader=_LOADER)
        except yaml.YAMLError:
            continue
    return None


def parse_outage(text: str) -> Outage | None:
    """The outage note of an error observation (its source stayed down after the retries):
    the tools that fail alike and the calls that read the same thing another way. None for
    a result, or an error with no such note."""
    return read_outage(text) if text.startswith("ERROR:") else None
