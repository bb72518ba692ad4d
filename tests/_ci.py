"""What CI=true means for the suite: nothing is skipped.

Outside CI a test whose tool or server is missing skips with one line on how to get it
(`skip_or_fail`); under CI=true the same test fails, because a green CI run must have
proved everything the suite claims, not part of it. `SkipReport` counts a run's skips,
prints them at the end (also when there are none), and under CI=true fails a run that
skipped anything, so a skip that does not go through `skip_or_fail` (a plain
`pytest.skip`, a `skipif`, a module-level `importorskip`) cannot hide a failure either.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Generator
from typing import NoReturn

import pytest


def in_ci() -> bool:
    """Whether this run is CI's: `CI=true` in the environment (read each time)."""
    return os.environ.get("CI", "").lower() == "true"


def skip_or_fail(reason: str) -> NoReturn:
    """Skip the current test, or fail it under CI=true."""
    if in_ci():
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


def _reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    """The reason a skip gave, without pytest's "Skipped: " prefix."""
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return text.removeprefix("Skipped: ")


class SkipReport:
    """A plugin: `skipped: N` and each reason with its count at the end of the run; under
    CI=true a run that skipped anything ends with a non-zero exit status."""

    def __init__(self) -> None:
        self.reasons: Counter[str] = Counter()

    @property
    def total(self) -> int:
        return sum(self.reasons.values())

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.skipped and not hasattr(report, "wasxfail"):  # an xfail is no skip
            self.reasons[_reason(report)] += 1

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.skipped:  # a whole module skipped at import (importorskip, allow_module_level)
            self.reasons[_reason(report)] += 1

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        # Runs before the terminal summary is written and before pytest returns the status.
        if in_ci() and self.total and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(
        self, terminalreporter: pytest.TerminalReporter
    ) -> Generator[None, object, object]:
        """After pytest's own summary (the outermost wrapper), right above its last line."""
        result = yield
        terminalreporter.write_line(f"skipped: {self.total}")
        for reason, count in sorted(self.reasons.items(), key=lambda item: (-item[1], item[0])):
            terminalreporter.write_line(f"  {count:>4} × {reason}")
        if in_ci() and self.total:
            terminalreporter.write_line(
                "CI=true: a skipped test is a failure here (it proves nothing), so this run "
                "fails; install what the reasons above name", red=True, bold=True)
        return result
