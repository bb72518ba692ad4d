"""Fit a tool's structured result into an observation of at most N tokens.

Tools already summarise (patterns, statistics); this is the last line: render the data as
compact YAML, then shrink the longest lists with a note of what was cut, and only as a last
resort cut the text itself, saying how much was cut. The model is always told.
"""

from __future__ import annotations

import copy
from typing import Any

import yaml

from engines.tokens import count_tokens, truncate_to_tokens

_MIN_LIST = 3
CUT_NOTE = "more tokens cut to fit the observation budget]"
LIST_NOTE = "more omitted to fit the observation budget"
_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def to_text(data: Any) -> str:
    """Compact, readable rendering of JSON-like data (strings stay as they are)."""
    if isinstance(data, str):
        return data
    text = _dump(data, flow=None)
    if isinstance(data, dict) and text.startswith("{"):  # keep the top level one key a line
        text = _dump(data, flow=False)
    return text


def _dump(data: Any, *, flow: bool | None) -> str:
    """YAML through libyaml when present: the pure-Python emitter costs milliseconds."""
    return str(
        yaml.dump(
            data,
            Dumper=_DUMPER,
            sort_keys=False,
            default_flow_style=flow,
            width=160,
            allow_unicode=True,
        )
    ).strip()


def longest_list(node: Any, path: tuple[Any, ...] = ()) -> tuple[tuple[Any, ...], int]:
    """The path to the longest list in the data, and its length."""
    best: tuple[tuple[Any, ...], int] = ((), 0)
    if isinstance(node, list):
        best = (path, len(node))
        items: list[tuple[Any, Any]] = list(enumerate(node))
    elif isinstance(node, dict):
        items = list(node.items())
    else:
        return best
    for key, child in items:
        found = longest_list(child, (*path, key))
        if found[1] > best[1]:
            best = found
    return best


def _shrink(data: Any, path: tuple[Any, ...]) -> bool:
    """Halve the list at `path`, noting how many items were cut. False if it cannot."""
    parent: Any = None
    node = data
    for key in path:
        parent, node = node, node[key]
    kept = [item for item in node if not (isinstance(item, str) and item.startswith("… "))]
    if len(kept) <= _MIN_LIST:
        return False
    omitted_before = sum(
        int(item.split()[1]) for item in node if isinstance(item, str) and item.startswith("… ")
    )
    keep = max(_MIN_LIST, len(kept) // 2)
    omitted = omitted_before + len(kept) - keep
    shrunk = [*kept[:keep], f"… {omitted} {LIST_NOTE}"]
    if parent is None:
        data[:] = shrunk
    else:
        parent[path[-1]] = shrunk
    return True


def fit(data: Any, budget: int) -> tuple[str, bool, int]:
    """Render `data` within `budget` tokens.

    Returns the text, whether anything was cut, and the tokens of the uncut rendering.
    """
    text = to_text(data)
    whole = count_tokens(text)
    if whole <= budget:
        return text, False, whole
    working = copy.deepcopy(data)
    for _ in range(64):
        path, length = longest_list(working)
        if length <= _MIN_LIST or not _shrink(working, path):
            break
        text = to_text(working)
        if count_tokens(text) <= budget:
            return text, True, whole
    total = count_tokens(text)
    head = truncate_to_tokens(text, max(budget - 24, 16))
    cut = total - count_tokens(head)
    return f"{head}\n[… {cut} {CUT_NOTE}", True, whole


def was_cut_short(text: str) -> bool:
    """Whether `fit` had to cut the text itself (the last resort), losing its end."""
    return text.endswith(CUT_NOTE)


def was_cut(text: str) -> bool:
    """Whether `fit` cut anything: a list halved to its head, or the text itself."""
    return was_cut_short(text) or LIST_NOTE in text
