"""`triage lessons list|show ID|delete ID`: what Reflexion has learnt, and forgetting it.

A wrong lesson misleads every later investigation that retrieves it, so people need to see
them and delete the bad ones. `list --search TEXT` shows what a new incident would
retrieve, best first, which is how to check why a lesson was (or was not) used. Each lesson
says its state: "confirmed" (a human's word, or a reflection whose diagnosis a human
confirmed: retrieved) or "pending" (Reflexion's reflection, waiting for that confirmation:
never retrieved); the thread of an investigation names the ids of the lessons it applied.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bot.store import Lesson, UnknownLessonError, opened
from bot.store.timeline import clip


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "lessons",
        help="list, show or delete the lessons learnt from past incidents",
        description="Lessons are what Reflexion learnt from past incidents (its reflections "
        "and human corrections); new investigations retrieve the most relevant confirmed "
        "ones. A reflection stays pending until a human confirms its diagnosis.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    listing = actions.add_parser("list", help="the lessons, newest first")
    listing.add_argument(
        "--search", metavar="TEXT", help="only lessons relevant to TEXT, the most relevant first"
    )
    listing.add_argument("--limit", type=int, default=50, metavar="N", help="at most N (50)")
    listing.add_argument("--state", choices=("pending", "confirmed"),
                         help="only pending (unconfirmed reflections) or confirmed lessons")
    listing.set_defaults(handler=list_lessons)
    show = actions.add_parser("show", help="one lesson in full")
    show.add_argument("id", type=int, metavar="ID")
    show.set_defaults(handler=show_lesson)
    delete = actions.add_parser("delete", help="forget a lesson")
    delete.add_argument("id", type=int, metavar="ID")
    delete.set_defaults(handler=delete_lesson)


def line(lesson: Lesson) -> str:
    tags = ",".join(lesson.tags) or "-"
    return (
        f"{lesson.id:>4}  {lesson.created_at.strftime('%Y-%m-%d')}  {lesson.state:<9}  "
        f"[{clip(tags, 40)}]  {clip(lesson.text, 80)}"
    )


def full(lesson: Lesson) -> str:
    source = lesson.source_investigation or "-"
    return "\n".join(
        [
            f"Lesson {lesson.id}",
            f"Created     {lesson.created_at.strftime('%Y-%m-%d %H:%M:%S UTC')}",
            f"State       {lesson.state}" + ("" if lesson.state == "confirmed" else
                                             " (retrieved once a human confirms the diagnosis)"),
            f"From        investigation {source}",
            f"Services    {', '.join(lesson.services) or '-'}",
            f"Namespaces  {', '.join(lesson.namespaces) or '-'}",
            f"Symptoms    {', '.join(lesson.symptoms) or '-'}",
            "",
            lesson.text,
        ]
    ) + "\n"


def _unknown(exc: UnknownLessonError) -> int:
    print(f"triage: error: {exc} (see `triage lessons list`)", file=sys.stderr)
    return 1


async def list_lessons(args: argparse.Namespace) -> int:
    async with opened() as store:
        if args.search:  # what a new incident would retrieve: confirmed ones only
            found = [lesson for lesson in await store.search_lessons(args.search, args.limit)
                     if args.state in (None, lesson.state)]
        else:
            found = await store.lessons(args.limit, state=args.state)
    if not found:
        print("no lessons match" if args.search else "no lessons yet")
        return 0
    for lesson in found:
        print(line(lesson))
    return 0


async def show_lesson(args: argparse.Namespace) -> int:
    async with opened() as store:
        try:
            lesson = await store.lesson(args.id)
        except UnknownLessonError as exc:
            return _unknown(exc)
    sys.stdout.write(full(lesson))
    return 0


async def delete_lesson(args: argparse.Namespace) -> int:
    async with opened() as store:
        try:
            await store.delete_lesson(args.id)
        except UnknownLessonError as exc:
            return _unknown(exc)
    print(f"deleted lesson {args.id}")
    return 0
