"""`python -m tests.bench replies`: the steering parser scored on the replies corpora.

Each corpus (tests/data/replies*, written by people who did not write the parser) lists
replies with the constraints they must yield. A reply is right when its constraints match
exactly as a multiset of (kind, value) (for `fact` and `rule` only the kind counts) and its
question flag matches. Figures: accuracy overall and per kind, the same on the replies the
rules claim (sure of), false namespace exclusions, and the after-end corrections.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from engines.steering import Vocabulary, read_reply
from engines.steering.corrections import is_correction
from tools.catalog import ALL_TOOLS

DATA = Path(__file__).resolve().parents[1] / "data"
FREE_TEXT = frozenset({"fact", "rule"})
BOT = "UTRIAGE"  # the bot's user id in the corpora (their README)


def _key(kind: str, value: str) -> tuple[str, str]:
    return (kind, "" if kind in FREE_TEXT else value.strip().lower())


@dataclass
class Score:
    """Right/total overall, on claimed replies, and per kind expected."""

    total: int = 0
    right: int = 0
    claimed: int = 0
    claimed_right: int = 0
    false_namespace: list[str] = field(default_factory=list)
    per_kind: Counter[str] = field(default_factory=Counter)
    per_kind_right: Counter[str] = field(default_factory=Counter)
    misses: list[str] = field(default_factory=list)
    corrections: int = 0
    corrections_right: int = 0
    correction_misses: list[str] = field(default_factory=list)


def _expected_kinds(entry: dict[str, Any]) -> list[str]:
    kinds = [str(c["kind"]) for c in entry.get("constraints") or []]
    if entry.get("question"):
        kinds.append("question")
    return kinds or ["none"]


def score_file(path: Path, score: Score) -> None:
    data = yaml.safe_load(path.read_text())
    if "diagnosis" in data:
        for entry in data["replies"]:
            score.corrections += 1
            if is_correction(entry["text"], BOT) == bool(entry["correction"]):
                score.corrections_right += 1
            else:
                score.correction_misses.append(f"{path.name}: {entry['text']!r} "
                                               f"(want correction={entry['correction']})")
        return
    cluster = data.get("cluster") or {}
    vocab = Vocabulary.of(cluster.get("namespaces") or [], cluster.get("workloads") or [],
                          (t.name for t in ALL_TOOLS))
    for entry in data["replies"]:
        reading = read_reply(entry["text"], vocab, bot_user_id=BOT)
        want = Counter(_key(c["kind"], str(c.get("value", "")))
                       for c in entry.get("constraints") or [])
        got = Counter(_key(c.kind, c.value) for c in reading.constraints)
        right = want == got and bool(entry.get("question")) == reading.question
        score.total += 1
        score.right += right
        if reading.confident:
            score.claimed += 1
            score.claimed_right += right
        named = {str(n).lower() for n in cluster.get("namespaces") or []}
        for c in reading.constraints:
            if c.kind == "exclude_namespace" and \
                    ("exclude_namespace", c.value) not in want and c.value in named:
                score.false_namespace.append(f"{path.name}: {entry['text']!r}")
        for kind in _expected_kinds(entry):
            score.per_kind[kind] += 1
            score.per_kind_right[kind] += right
        if not right:
            shown = sorted(f"{k}={v}" for k, v in got.elements())
            wanted = sorted(f"{k}={v}" for k, v in want.elements())
            score.misses.append(
                f"{path.name}: {entry['text']!r}\n    want {wanted} q={bool(entry.get('question'))}"
                f"\n    got  {shown} q={reading.question} sure={reading.confident}")


def score_corpus(folder: Path) -> Score:
    score = Score()
    for path in sorted(folder.glob("*.yaml")):
        score_file(path, score)
    return score


def _pct(right: int, total: int) -> str:
    return f"{right}/{total} ({right / total:.1%})" if total else "0/0"


def report(name: str, score: Score, *, verbose: bool = False) -> None:
    print(f"{name}: overall {_pct(score.right, score.total)}; "
          f"claimed by the rules {_pct(score.claimed_right, score.claimed)} "
          f"(coverage {_pct(score.claimed, score.total)})")
    for kind in sorted(score.per_kind):
        print(f"  {kind:18} {_pct(score.per_kind_right[kind], score.per_kind[kind])}")
    print(f"  false namespace exclusions: {len(score.false_namespace)}")
    if score.corrections:
        print(f"  after the end, corrections told apart: "
              f"{_pct(score.corrections_right, score.corrections)}")
    if verbose:
        for miss in (*score.misses, *score.correction_misses, *score.false_namespace):
            print("  MISS", miss)


async def main() -> None:
    verbose = bool(os.environ.get("BENCH_VERBOSE"))
    for folder in sorted(p for p in DATA.glob("replies*") if p.is_dir()):
        report(folder.name, score_corpus(folder), verbose=verbose)
