"""How a channel's pending steps are merged into fewer sends, so a fast engine costs a
handful of Slack calls rather than one per step.

Apart from bot.outbox because it is a pure rule over the queue's items (which may merge
with which, and what order must be kept), with no Slack call, retry or timing in it: the
worker decides when to send, these functions decide what one send carries.
"""

from __future__ import annotations

from collections import deque

from bot.outbox_items import Item, Live, Steps
from bot.render import fits, step_message


def coalesce_stream(first: Live | Steps, items: deque[Item]) -> tuple[Live, deque[Item]]:
    """Every step item of the thread up to its next item of another kind, as one append
    (the views are rendered at send time, so a running step shows its latest state), and
    the items left to send. The complete steps are kept apart: they are what a fallback
    posts."""
    merged = Live(first.thread, [], [])
    kept: deque[Item] = deque()
    blocked = False
    for item in (first, *items):
        if blocked or item.thread is not first.thread:
            kept.append(item)
        elif isinstance(item, Live | Steps):
            merged.views.extend(v for v in item.views
                                if all(v is not w for w in merged.views))
            merged.done.extend(item.done if isinstance(item, Live) else item.views)
        else:
            blocked = True
            kept.append(item)
    return merged, kept


def coalesce_steps(first: Steps, items: deque[Item]) -> tuple[Steps, deque[Item]]:
    """`first` with the thread's later pending steps merged in while the message fits, and
    the items left to send (`items` is consumed).

    Items of other threads may be passed over; an item of another kind in the same
    thread may not, so that the thread keeps its order.
    """
    views = list(first.views)
    kept: deque[Item] = deque()
    blocked = False
    while items:
        item = items.popleft()
        if blocked or item.thread is not first.thread:
            kept.append(item)
            continue
        if isinstance(item, Steps) and fits(step_message([*views, *item.views])):
            views.extend(item.views)
            continue
        blocked = True
        kept.append(item)
    return Steps(first.thread, views), kept
