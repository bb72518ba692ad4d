"""Write every holdout49 scenario: `PYTHONPATH=. python -m tests.data.holdout49._generator`."""

from __future__ import annotations

import importlib

from . import MODULES


def main() -> None:
    for name in MODULES:
        try:
            mod = importlib.import_module(f"{__package__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.endswith(name):
                print(f"skip {name} (not written yet)")
                continue
            raise
        sc = mod.build()
        sc.write()
        print(f"wrote {sc.id}")


if __name__ == "__main__":
    main()
