"""The catalog of incident shapes the repository already holds, and a check of new ones.

A held-out set measures generalisation only if its shapes are new. Twice a list of "new"
shapes repeated earlier sets' because it was checked by reading a few README tables by
hand. This module makes the check mechanical: every scenario's title, category, culprit
kind, report and fix become one document, and each proposed shape is ranked against all
of them by TF-IDF cosine, so whoever writes the next shape list sees its nearest
neighbours before a writer is briefed.

    python -m tests.scenario_tools.shape_catalog                # one line per scenario
    python -m tests.scenario_tools.shape_catalog --near FILE    # FILE: one shape per paragraph

It reads scenario files only; it never reads the analyzer.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOTS = (Path("tools/scenarios"), Path("tests/data"))
_WORD = re.compile(r"[a-z][a-z0-9_.-]{2,}")
# Words every incident shares; they would make all shapes look alike.
_COMMON_WORDS = """
the and for with from that this are was were has have not but its into after since when
while which their them they then than all any one two new old pod pods service services
deployment namespace cluster error errors failing fails failed because
"""
_COMMON = frozenset(_COMMON_WORDS.split())


@dataclass(frozen=True)
class Shape:
    """One scenario as the catalog sees it: where it lives and what it is about."""

    where: str
    category: str
    culprit_kind: str
    title: str
    text: str


def _words(text: str) -> list[str]:
    return [w.strip(".-") for w in _WORD.findall(text.lower()) if w not in _COMMON]


def load_shapes(roots: tuple[Path, ...] = ROOTS) -> list[Shape]:
    """Every scenario under the roots, sorted by folder."""
    shapes: list[Shape] = []
    for root in roots:
        for path in sorted(root.rglob("scenario.yaml")):
            data = yaml.safe_load(path.read_text()) or {}
            truth = data.get("truth") or {}
            culprit = truth.get("culprit") or {}
            parts = (data.get("title"), data.get("report"), truth.get("fix"), truth.get("category"))
            text = " ".join(str(part) for part in parts if part)
            shapes.append(
                Shape(
                    where=str(path.parent),
                    category=str(truth.get("category", "?")),
                    culprit_kind=str(culprit.get("kind", "?")),
                    title=str(data.get("title", "")).strip(),
                    text=text,
                )
            )
    return shapes


class Index:
    """TF-IDF vectors of the catalog, so a proposed shape finds its nearest scenarios."""

    def __init__(self, shapes: list[Shape]) -> None:
        self.shapes = shapes
        counts = [Counter(_words(shape.text)) for shape in shapes]
        documents = Counter(word for count in counts for word in count)
        total = len(shapes) or 1
        self._idf = {word: math.log(total / seen) + 1.0 for word, seen in documents.items()}
        self._vectors = [self._vector(count) for count in counts]

    def _vector(self, count: Counter[str]) -> dict[str, float]:
        # Words unknown to the catalog cannot make a proposal look like anything in it.
        weights = {w: (1 + math.log(n)) * self._idf[w] for w, n in count.items() if w in self._idf}
        norm = math.sqrt(sum(v * v for v in weights.values())) or 1.0
        return {w: v / norm for w, v in weights.items()}

    def nearest(self, text: str, top: int = 3) -> list[tuple[float, Shape]]:
        """The `top` scenarios most like `text`, most alike first."""
        query = self._vector(Counter(_words(text)))
        scored = [
            (sum(weight * vector.get(word, 0.0) for word, weight in query.items()), shape)
            for vector, shape in zip(self._vectors, self.shapes, strict=True)
        ]
        scored.sort(key=lambda pair: -pair[0])
        return scored[:top]


def proposals(text: str) -> list[str]:
    """A shape list split into its shapes: one per blank-line-separated paragraph."""
    return [part.strip() for part in re.split(r"\n\s*\n", text) if part.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--near", type=Path, help="a file of proposed shapes, one per paragraph")
    parser.add_argument("--top", type=int, default=3)
    args = parser.parse_args(argv)
    shapes = load_shapes()
    if args.near is None:
        for shape in shapes:
            print(f"{shape.where}\t{shape.category}\t{shape.culprit_kind}\t{shape.title}")
        return 0
    index = Index(shapes)
    for number, proposal in enumerate(proposals(args.near.read_text()), start=1):
        print(f"{number}. {proposal.splitlines()[0][:100]}")
        for score, shape in index.nearest(proposal, args.top):
            kind = f"{shape.category}/{shape.culprit_kind}"
            print(f"   {score:.2f}  {shape.where}  [{kind}] {shape.title}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
