"""Rewrite every scenario of holdout53: python -m tests.data.holdout53._generator."""

from __future__ import annotations

import shutil
from pathlib import Path

from . import stories

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    for sid, build in stories().items():
        target = ROOT / sid
        if target.exists():
            shutil.rmtree(target)
        build(ROOT)
        print(f"wrote {sid}")


if __name__ == "__main__":
    main()
