"""Write every holdout30 scenario folder next to this package (same bytes every run), or
only the story modules named on the command line."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from . import SCENARIOS


def main(argv: list[str]) -> int:
    root = Path(__file__).resolve().parent.parent
    for module in argv or list(SCENARIOS):
        world = importlib.import_module(f"{__package__}.{module}").build()
        if world.sid != SCENARIOS[module]:
            raise SystemExit(f"{module} writes {world.sid}, SCENARIOS says {SCENARIOS[module]}")
        folder = world.write(root)
        print(f"wrote {folder.relative_to(root.parents[2])}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
