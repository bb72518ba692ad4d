"""Writes the holdout35 scenario folders: `PYTHONPATH=. python -m tests.data.holdout35._generator
[module ...]` (all of them when no module is named)."""

from __future__ import annotations

import sys

from . import MODULES, modules


def main() -> int:
    only = set(sys.argv[1:])
    for name, module in zip(MODULES, modules(), strict=True):
        if not only or name in only:
            print(f"wrote {module.build().write()}")
    return 0


raise SystemExit(main())
