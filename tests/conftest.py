"""What every test runs under: a count of what was skipped.

`tests._ci.SkipReport` prints `skipped: N` and the reasons at the end of the run, and fails a
CI=true run that skipped anything.
"""

from __future__ import annotations

import pytest

from tests._ci import SkipReport


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(SkipReport(), "triage-skip-report")
