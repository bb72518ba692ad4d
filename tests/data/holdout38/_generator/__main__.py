"""Write the holdout38 scenario folders next to this package."""

from __future__ import annotations

from pathlib import Path

from tests.data.holdout38._generator import stories

ROOT = Path(__file__).resolve().parents[1]

if __name__ == "__main__":
    for _scenario_id, build in stories().items():
        print("wrote", build().write(ROOT))
