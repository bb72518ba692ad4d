"""Write every holdout47 scenario folder from its module."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path


def main() -> int:
    here = Path(__file__).resolve().parent
    mods = sorted(
        m.name
        for m in pkgutil.iter_modules([str(here)])
        if m.name.startswith("s") and m.name[1].isdigit()
    )
    for name in mods:
        mod = importlib.import_module(f"{__package__}.{name}")
        out = mod.build().write()
        print(f"wrote {out.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
