"""Writes every holdout37 scenario folder: `python -m tests.data.holdout37._generator`."""

from __future__ import annotations

from . import stories

for sid, write in stories().items():
    write()
    print("wrote", sid)
