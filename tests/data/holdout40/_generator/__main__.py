"""Write every holdout40 scenario folder next to this generator."""

from pathlib import Path

from . import stories

ROOT = Path(__file__).resolve().parents[1]

for build in stories().values():
    print(build().write(ROOT))
