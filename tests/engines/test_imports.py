"""The engines import each other at module level, so an import cycle shows at once.

An import inside a function runs late enough to get round a cycle, and so hides it: the
modules then depend on each other in both directions without anyone seeing it (the call
graph and the DNS detector did, through a lazy import of `dns.servers`). A piece two
modules share goes where both can import it at the top instead.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
MODULES = sorted((ROOT / "engines").rglob("*.py"))


def _name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def _late_imports(path: Path) -> list[str]:
    """`line: module` of every import of an engines module made below the module level."""
    tree = ast.parse(path.read_text(), str(path))
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if id(node) in top:
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found += [f"{node.lineno}: {name}" for name in names if name.split(".")[0] == "engines"]
    return found


def test_no_engines_module_imports_another_inside_a_function() -> None:
    late = {_name(path): found for path in MODULES if (found := _late_imports(path))}
    assert late == {}


@pytest.mark.parametrize("module", ["engines.analyzer.detectors._targets",
                                    "engines.analyzer.detectors.dns"])
def test_the_call_graph_and_the_dns_detector_each_import_first(module: str) -> None:
    """Imported first in a fresh interpreter, a module in a cycle meets a half-made one."""
    done = subprocess.run([sys.executable, "-c", f"import {module}"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
