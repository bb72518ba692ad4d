"""Writes the holdout28 scenario folders: `python -m tests.data.holdout28._generator`."""

from __future__ import annotations

from pathlib import Path

from . import stories


def main() -> None:
    root = Path(__file__).resolve().parent.parent
    for sid, build in stories().items():
        scenario = build()
        assert scenario.id == sid, (scenario.id, sid)  # type: ignore[attr-defined]
        folder = scenario.write(root)  # type: ignore[attr-defined]
        print(f"wrote {folder.name}")


if __name__ == "__main__":
    main()
