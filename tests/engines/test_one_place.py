"""One name, one place: the strings that two parts of Triage must agree on are spelled once.

The engine offers the submit tool and the analyzer calls it; Reflexion writes the rejection
sentence and the analyzer reads it; the history elides observations and the analyzer must
know an elided one; the tools name themselves and the analyzer reads them by name. A copy
of any of these strings can drift from its original without a test noticing, so each has
one owner and every other module imports it.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

from tools.catalog import ALL_TOOLS

ROOT = Path(__file__).parents[2]
PACKAGES = ("engines", "tools", "bot")


@cache
def _strings(path: Path) -> tuple[str, ...]:
    """The string constants of a module (f-string parts included), its docstrings left out:
    prose may name a thing, code must import it."""
    tree = ast.parse(path.read_text(), str(path))
    prose = {id(node.value) for node in ast.walk(tree)
             if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    return tuple(node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
                 and isinstance(node.value, str) and id(node) not in prose)


def _modules(*packages: str) -> list[Path]:
    return sorted(p for package in packages for p in (ROOT / package).rglob("*.py"))


def _spelling(test: str, packages: tuple[str, ...] = PACKAGES) -> set[str]:
    """The modules whose code has a string constant containing `test`."""
    return {str(path.relative_to(ROOT)) for path in _modules(*packages)
            if any(test in text for text in _strings(path))}


@pytest.mark.parametrize(("text", "owner"), [
    ("submit_diagnosis", "engines/diagnosis.py"),
    ("The previous diagnosis", "engines/diagnosis.py"),
    ("was rejected", "engines/diagnosis.py"),
    ("observation elided", "engines/_history.py"),
    ("list_tools", "engines/short_catalog.py"),
    ("Observation from", "engines/text_transcript.py"),
])
def test_a_shared_string_is_spelled_only_by_its_owner(text: str, owner: str) -> None:
    assert _spelling(text) == {owner}


def test_the_analyzer_names_no_tool_by_a_copied_string() -> None:
    """It reads each tool by the name the tool is registered under (tools/)."""
    names = {tool.name for tool in ALL_TOOLS}
    copies = {str(path.relative_to(ROOT)): sorted(names & set(_strings(path)))
              for path in _modules("engines/analyzer")}
    assert {path: found for path, found in copies.items() if found} == {}
