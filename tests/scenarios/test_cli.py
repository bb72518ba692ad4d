"""`triage scenarios list` and `triage scenarios validate`, through `bot.cli.main`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import bot.cli
from tools.scenarios import bundled_ids, bundled_root


def test_scenarios_is_registered() -> None:
    assert bot.cli.COMMANDS["scenarios"] == "bot.cli.scenarios"


def test_a_command_imports_only_its_own_module() -> None:
    """`triage scenarios list` must not pay for the engines, Slack and kubernetes clients."""
    probe = ("import sys, contextlib, io; import bot.cli as cli\n"
             "with contextlib.redirect_stdout(io.StringIO()): cli.main(['scenarios', 'list'])\n"
             "print(sorted(m for m in sys.modules if m.startswith('bot.cli.')))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True, cwd=Path(__file__).parents[2])
    assert done.stdout.split() == ["['bot.cli.scenarios']"]


def test_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert bot.cli.main(["scenarios", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(bundled_ids())
    row = next(line for line in lines if line.startswith("checkout-oom "))
    assert row.split()[:2] == ["checkout-oom", "oom_killed"]
    assert row.endswith("Checkout pods restarting under load")


def test_list_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert bot.cli.main(["scenarios", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in rows] == bundled_ids()
    assert all(set(r) == {"id", "category", "title"} for r in rows)


def test_validate_one_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    assert bot.cli.main(["scenarios", "validate", str(bundled_root() / "checkout-oom")]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("OK: 1 scenario valid")


def _two(tmp_path: Path) -> Path:
    for scenario_id in ("stock-sync-missing-env", "catalog-image-tag"):
        shutil.copytree(bundled_root() / scenario_id, tmp_path / scenario_id)
    return tmp_path


def test_validate_a_folder_of_scenarios(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert bot.cli.main(["scenarios", "validate", str(_two(tmp_path))]) == 0
    assert "OK: 2 scenarios valid" in capsys.readouterr().out


def test_validate_reports_problems(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _two(tmp_path)
    header = folder / "catalog-image-tag" / "scenario.yaml"
    header.write_text(header.read_text().replace("category: image_pull", "category: bad"))
    assert bot.cli.main(["scenarios", "validate", str(folder)]) == 1
    out = capsys.readouterr().out.splitlines()
    number = next(i for i, line in enumerate(header.read_text().splitlines(), 1)
                  if "category:" in line)
    assert out and out[0].startswith(f"{header}:{number}: category 'bad'")
    assert not any(line.startswith("OK") for line in out)


def test_validate_a_folder_without_scenarios(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert bot.cli.main(["scenarios", "validate", str(tmp_path)]) == 2
    assert "holds no scenario" in capsys.readouterr().err
