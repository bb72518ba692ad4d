"""`triage scenarios`: list the bundled scenarios, validate scenario folders.

`validate` is for authors: it prints every broken rule as `path:line: message` (the shape
editors and CI annotate) and exits 1 when there is any, so it can gate a pull request.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from engines.errors import ScenarioError
from tools.scenarios import bundled_ids, load_scenario
from tools.scenarios.validate import validate_scenario


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "scenarios",
        help="list or validate incident scenarios",
        description="List the bundled incident scenarios, or validate scenario folders "
        "against the scenario format.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    listing = actions.add_parser("list", help="the bundled scenarios: id, category, title")
    listing.add_argument("--json", action="store_true", help="a JSON list of objects")
    listing.set_defaults(handler=list_scenarios)
    check = actions.add_parser(
        "validate",
        help="check scenario folders against the format",
        description="DIR is one scenario (it holds scenario.yaml) or a folder of scenarios.",
    )
    check.add_argument("dir", type=Path, metavar="DIR")
    check.set_defaults(handler=validate)


async def list_scenarios(args: argparse.Namespace) -> int:
    rows = []
    for scenario_id in bundled_ids():
        scenario = load_scenario(scenario_id)
        rows.append(
            {"id": scenario.id, "category": scenario.truth.category, "title": scenario.title}
        )
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    width = max((len(r["id"]) for r in rows), default=0)
    category_width = max((len(r["category"]) for r in rows), default=0)
    for row in rows:
        print(f"{row['id']:<{width}}  {row['category']:<{category_width}}  {row['title']}")
    return 0


def scenario_folders(root: Path) -> list[Path]:
    """`root` itself when it is a scenario, else its subfolders that are scenarios."""
    if not root.is_dir():
        raise ScenarioError(f"{root} is not a folder")
    if (root / "scenario.yaml").is_file():
        return [root]
    folders = sorted(p for p in root.iterdir() if (p / "scenario.yaml").is_file())
    if not folders:
        raise ScenarioError(f"{root} holds no scenario (no scenario.yaml in it or its subfolders)")
    return folders


async def validate(args: argparse.Namespace) -> int:
    folders = scenario_folders(args.dir)
    count = 0
    for folder in folders:
        for problem in validate_scenario(folder):
            print(problem)
            count += 1
    if count:
        return 1
    noun = "scenario" if len(folders) == 1 else "scenarios"
    print(f"OK: {len(folders)} {noun} valid ({', '.join(f.name for f in folders)})")
    return 0
