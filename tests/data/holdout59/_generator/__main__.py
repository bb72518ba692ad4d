"""Write every holdout59 scenario next to this package."""

from __future__ import annotations

import shutil
from pathlib import Path

from . import stories

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    """Regenerate all scenario folders from scratch."""
    for sid, build in stories().items():
        shutil.rmtree(ROOT / sid, ignore_errors=True)
        build(ROOT)
        print(f"wrote {sid}")


if __name__ == "__main__":
    main()
