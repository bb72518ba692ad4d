"""What the validator reports, and where in a YAML file a value sits.

Every problem points at a file and, when it can, a line, so an author can jump straight to
it (`path:line: message`, the shape compilers and linters use).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

WEEK = timedelta(days=7)


@dataclass(frozen=True, order=True)
class Problem:
    """One broken rule of scenario-format.md: the file, the line (when known), the message."""

    file: Path
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else str(self.file)
        return f"{where}: {self.message}"


class Located:
    """A YAML document with the node tree kept, to find the line of any value in it."""

    def __init__(self, data: Any, node: yaml.Node) -> None:
        self.data = data
        self.node = node

    @property
    def line(self) -> int:
        return int(self.node.start_mark.line) + 1

    def line_of(self, *path: str | int) -> int:
        """The line of the key (or list item) at `path`, or of its nearest parent."""
        node, line = self.node, self.line
        for part in path:
            found = _child(node, part)
            if found is None:
                break
            marker, node = found
            line = int(marker.start_mark.line) + 1
        return line


def _child(node: yaml.Node, part: str | int) -> tuple[yaml.Node, yaml.Node] | None:
    """The (key or item, value) pair at `part` of a mapping or sequence node."""
    if isinstance(node, yaml.MappingNode) and isinstance(part, str):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == part:
                return key, value
    if isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
        return node.value[part], node.value[part]
    return None


_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml is ~10x faster


def load_located(text: str) -> list[Located]:
    """Every document of a (multi-document) YAML text, with its node tree."""
    loader = _Loader(text)
    out = []
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            out.append(Located(loader.construct_document(node), node))
    finally:
        loader.dispose()
    return out


def yaml_error_line(exc: yaml.YAMLError) -> int | None:
    mark = getattr(exc, "problem_mark", None)
    return int(mark.line) + 1 if mark is not None else None


def window_problem(when: datetime, now: datetime, what: str) -> str | None:
    """Why a time falls outside the week before `now`, or None when it does not."""
    if when > now:
        return f"{what} {when.isoformat()} is after now ({now.isoformat()})"
    if when < now - WEEK:
        return f"{what} {when.isoformat()} is more than a week before now ({now.isoformat()})"
    return None
