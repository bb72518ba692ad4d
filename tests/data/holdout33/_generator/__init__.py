"""Generator of the holdout33 set: `python -m tests.data.holdout33._generator` rewrites
every scenario folder from the stories below, so timestamps and volumes stay consistent."""

from __future__ import annotations

from tests.data.holdout33._generator import s_a, s_b, s_c, s_d

STORIES = {**s_a.STORIES, **s_b.STORIES, **s_c.STORIES, **s_d.STORIES}


def stories() -> dict:
    return STORIES


def main() -> None:
    for build in STORIES.values():
        print(build().write())
