"""Write every holdout50 scenario: PYTHONPATH=. python -m tests.data.holdout50._generator"""

from __future__ import annotations

from pathlib import Path

from . import stories


def main() -> None:
    root = Path(__file__).resolve().parent.parent
    for sid, build in stories().items():
        build(root)
        print("wrote", sid)


if __name__ == "__main__":
    main()
