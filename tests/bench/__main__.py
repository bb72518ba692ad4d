"""`python -m tests.bench [NAME ...]`: run the benchmarks (all of them by default)."""

from __future__ import annotations

import asyncio
import importlib
import pkgutil
import sys
from pathlib import Path


def available() -> list[str]:
    folder = Path(__file__).parent
    return sorted(
        m.name.removeprefix("bench_")
        for m in pkgutil.iter_modules([str(folder)])
        if m.name.startswith("bench_")
    )


def main(argv: list[str]) -> int:
    names = argv or available()
    unknown = [n for n in names if n not in available()]
    if unknown:
        print(
            f"unknown benchmark(s): {', '.join(unknown)}; have: {', '.join(available())}",
            file=sys.stderr,
        )
        return 2
    for name in names:
        print(f"== {name}")
        module = importlib.import_module(f"tests.bench.bench_{name}")
        asyncio.run(module.main())
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
