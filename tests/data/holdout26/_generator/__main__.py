"""Write the twenty-sixth held-out set: `.venv/bin/python -m tests.data.holdout26._generator
[ID ...]` (all scenarios without arguments). Same bytes on every run."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.data.holdout2._generator.__main__ import write

from . import stories

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    known = stories()
    unknown = [a for a in argv if a not in known]
    if unknown:
        print(f"unknown scenarios: {', '.join(unknown)}", file=sys.stderr)
        return 2
    for key in argv or sorted(known):
        print(write(known[key](), ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
