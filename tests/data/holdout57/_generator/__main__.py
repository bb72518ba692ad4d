"""Rewrite every scenario of holdout57: python -m tests.data.holdout57._generator."""

from __future__ import annotations

import shutil
from pathlib import Path

from . import stories


def main() -> None:
    root = Path(__file__).resolve().parent.parent
    for sid, build in stories().items():
        target = root / sid
        if target.exists():
            shutil.rmtree(target)
        build(root)


if __name__ == "__main__":
    main()
