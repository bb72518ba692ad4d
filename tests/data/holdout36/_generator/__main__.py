"""Writes the holdout36 scenario folders: `python -m tests.data.holdout36._generator`."""

from . import stories

for build in stories().values():
    build()
