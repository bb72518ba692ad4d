"""No import cycle between the modules of bot/, engines/ and tools/.

Two modules that import each other are one module in two files: neither can be read, tested or
moved alone, and which of them Python happens to import first decides whether the import works.
An import under `if TYPE_CHECKING:` counts like any other: it is the same dependency, deferred,
and mypy and the reader follow it all the same. Imports inside a function body are left out:
they run only when the function does and are a deliberate choice of load order (one such cycle
in engines/analyzer/detectors is being removed in its own change).
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bot", "engines", "tools")

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def modules(root: Path, packages: tuple[str, ...]) -> dict[str, Path]:
    """Every module of the packages by dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _top_level_imports(node: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """The imports run at import time (or read by a type checker): module and class bodies and
    any `if`/`try` block in them, but no function body."""
    found: list[ast.Import | ast.ImportFrom] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            found.append(child)
        elif not isinstance(child, _FUNCTIONS):
            found.extend(_top_level_imports(child))
    return found


def imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules among `known` that module `name` imports at its top level."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    targets: set[str] = set()
    for statement in _top_level_imports(ast.parse(path.read_text(), str(path))):
        if isinstance(statement, ast.Import):
            targets.update(alias.name for alias in statement.names)
            continue
        base = statement.module or ""
        if statement.level:
            parent = package[: len(package) - statement.level + 1]
            base = ".".join([*parent, *([base] if base else [])])
        for alias in statement.names:  # `from package import module` imports that module
            submodule = f"{base}.{alias.name}"
            targets.add(submodule if submodule in known else base)
    return {target for target in targets if target in known and target != name}


def graph(root: Path, packages: tuple[str, ...]) -> dict[str, set[str]]:
    known = modules(root, packages)
    return {name: imported(name, path, known) for name, path in known.items()}


def cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as the modules along it, or None when the graph has none."""
    try:
        TopologicalSorter(edges).prepare()
    except CycleError as error:
        return list(error.args[1])
    return None


def test_bot_engines_and_tools_import_no_cycle() -> None:
    edges = graph(ROOT, PACKAGES)
    assert len(edges) > 100, "the graph covers every module of the three packages"
    assert "bot.listeners" in edges["bot.app"], "the graph sees real imports"
    found = cycle(edges)
    assert found is None, "import cycle: " + " -> ".join(found or [])


def test_a_type_checking_import_closes_a_cycle(tmp_path: Path) -> None:
    """The checker itself: a cycle through `if TYPE_CHECKING:` and a relative import is found,
    one through a function-level import is not."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg import b\n")
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import A\n"
    )
    (package / "c.py").write_text("import pkg.d\n")
    (package / "d.py").write_text("def late():\n    from pkg import c\n")
    edges = graph(tmp_path, ("pkg",))
    assert edges["pkg.a"] == {"pkg.b"} and edges["pkg.b"] == {"pkg.a"}
    assert edges["pkg.c"] == {"pkg.d"} and edges["pkg.d"] == set()
    assert sorted(set(cycle(edges) or [])) == ["pkg.a", "pkg.b"]
