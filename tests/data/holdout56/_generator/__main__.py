"""Rewrite every holdout56 scenario: ``python -m tests.data.holdout56._generator``."""

from __future__ import annotations

from pathlib import Path

from . import stories


def main() -> None:
    root = Path(__file__).resolve().parent.parent
    for build in stories().values():
        build(root)


if __name__ == "__main__":
    main()
