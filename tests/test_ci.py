"""The suite's own rules, proved on inner runs: skips are counted and shown at the end, and
under CI=true a skip fails the run (a missing prerequisite fails its tests); a developer's
LLM settings do not reach the tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import tests.conftest
from engines import openai_model
from tests._ci import SkipReport
from tests.services._process import NotProvisionedError
from tests.services.postgres import PostgresServer

pytest_plugins = ["pytester"]

SKIPS = """
import pytest
from tests._ci import skip_or_fail

def test_passes():
    pass

def test_skips():
    pytest.skip("no widget here")

@pytest.mark.parametrize("n", [1, 2])
def test_skips_twice(n):
    pytest.skip("no gadget here")

@pytest.mark.xfail(reason="known")
def test_expected_to_fail():
    assert False

def test_skip_or_fail():
    skip_or_fail("no gizmo here")
"""


INI = "[pytest]\nasyncio_default_fixture_loop_scope = function\n"


def run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, source: str, *,
        ci: bool) -> pytest.RunResult:
    if ci:
        monkeypatch.setenv("CI", "true")
    else:
        monkeypatch.delenv("CI", raising=False)
    pytester.makepyfile(test_inner=source)
    pytester.makeini(INI)
    return pytester.runpytest("-p", "no:cacheprovider", plugins=[SkipReport()])


def test_outside_ci_skips_are_counted_by_reason_and_the_run_passes(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
) -> None:
    result = run(pytester, monkeypatch, SKIPS, ci=False)
    result.assert_outcomes(passed=1, skipped=4, xfailed=1)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["skipped: 4", "     2 × no gadget here",
                                 "     1 × no gizmo here", "     1 × no widget here"])
    result.stdout.no_fnmatch_line("*CI=true*")


def test_under_ci_a_skip_fails_the_run(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
) -> None:
    result = run(pytester, monkeypatch, SKIPS, ci=True)
    # skip_or_fail fails under CI; the plain skips stay skips but fail the session
    result.assert_outcomes(passed=1, skipped=3, failed=1, xfailed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*FAILED*test_skip_or_fail*no gizmo here*", "skipped: 3",
                                 "     2 × no gadget here", "     1 × no widget here",
                                 "CI=true: a skipped test is a failure here*"])


def test_under_ci_a_skip_alone_fails_the_run(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = "import pytest\n\n@pytest.mark.skipif(True, reason='absent')\ndef test_x(): pass\n"
    result = run(pytester, monkeypatch, source, ci=True)
    result.assert_outcomes(skipped=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["skipped: 1", "     1 × absent"])


def test_a_module_skipped_at_import_is_counted(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = "import pytest\n\npytest.importorskip('no_such_module_here')\n"
    result = run(pytester, monkeypatch, source, ci=True)
    assert result.ret != pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["skipped: 1", "*× could not import 'no_such_module_here'*"])


def test_under_ci_a_run_without_skips_passes_and_says_so(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
) -> None:
    result = run(pytester, monkeypatch, "def test_x(): pass\n", ci=True)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["skipped: 0"])
    result.stdout.no_fnmatch_line("*CI=true*")


def test_under_ci_a_failing_run_keeps_its_status(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = "import pytest\n\ndef test_x(): pytest.skip('s')\n\ndef test_y(): assert False\n"
    result = run(pytester, monkeypatch, source, ci=True)
    result.assert_outcomes(skipped=1, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED


# ------------------------------------------------- the suite's own missing prerequisites

ROOT = Path(__file__).resolve().parents[1]
PROMTOOL_TEST = ("tests/scenarios/test_bundled.py::"
                 "test_promtool_backfills_the_metrics[checkout-oom]")
POSTGRES_TEST = ("tests/bot/test_memory.py::"
                 "test_a_correction_becomes_a_lesson_that_changes_the_next_investigation"
                 "[postgresql]")


def no_promtool(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # found on PATH, like the Prometheus server's


def no_postgres(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def absent() -> None:
        raise NotProvisionedError("PostgreSQL (Debian package postgresql)")

    monkeypatch.setattr(PostgresServer, "check_installed", absent)


@pytest.mark.parametrize(("test", "remove"), [(PROMTOOL_TEST, no_promtool),
                                              (POSTGRES_TEST, no_postgres)],
                         ids=["promtool", "postgresql"])
@pytest.mark.parametrize("ci", [False, True], ids=["outside-ci", "ci"])
def test_a_missing_prerequisite_skips_outside_ci_and_fails_under_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path_factory:
    pytest.TempPathFactory, test: str, remove: Callable[..., None], ci: bool,
) -> None:
    remove(monkeypatch, tmp_path_factory.mktemp("empty"))
    if ci:
        monkeypatch.setenv("CI", "true")
    else:
        monkeypatch.delenv("CI", raising=False)
    result = pytester.runpytest("-p", "no:cacheprovider", f"--rootdir={ROOT}", str(ROOT / test))
    if ci:
        result.assert_outcomes(errors=1)
        result.stdout.fnmatch_lines(["*is not installed*", "skipped: 0"])
    else:
        result.assert_outcomes(skipped=1)
        result.stdout.fnmatch_lines(["skipped: 1", "*× *is not installed*"])


# ------------------------------------------------- a developer's LLM settings


def test_a_developers_llm_settings_do_not_reach_the_tests(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With a key and a model name in the shell, the suite's tests still default to the
    offline analyzer, and the switch against real model requests is off."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-developer-key")
    monkeypatch.setenv("OPENAI_BASE_URL", "https://api.openai.com/v1")
    monkeypatch.setenv("TRIAGE_MODEL", "gpt-4o")
    monkeypatch.setattr(openai_model, "ALLOW_MODEL_REQUESTS", True)  # the inner run turns it off
    pytester.makepyfile(test_inner="""
import os
from bot.wiring import ANALYZER, build_model, default_model_name
from engines import openai_model

def test_defaults():
    assert not [k for k in os.environ if k.startswith("OPENAI_") or k == "TRIAGE_MODEL"]
    assert default_model_name() == ANALYZER
    assert build_model().name == ANALYZER
    assert openai_model.ALLOW_MODEL_REQUESTS is False
""")
    pytester.makeini(INI)
    result = pytester.runpytest("-p", "no:cacheprovider", plugins=[tests.conftest])
    result.assert_outcomes(passed=1)
