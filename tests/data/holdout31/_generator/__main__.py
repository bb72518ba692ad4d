"""Write every scenario of the set next to this package (its folder's parent)."""

from __future__ import annotations

from pathlib import Path

from . import BUILDERS


def main() -> None:
    root = Path(__file__).resolve().parent.parent
    for module in BUILDERS:
        folder = module.build().write(root)
        print(f"wrote {folder.relative_to(root)}")


if __name__ == "__main__":
    main()
