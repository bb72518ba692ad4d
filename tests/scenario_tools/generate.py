"""Write the bundled scenarios from their stories (deterministic: same bytes every run).

    .venv/bin/python -m tests.scenario_tools.generate [--out DIR] [ID ...]
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from tests.scenario_tools.common import STORIES, Story
from tools.scenarios import flatten, parse_time

ROOT = Path(__file__).resolve().parents[2] / "tools" / "scenarios"


class _Dumper(yaml.SafeDumper):
    """Block style, no anchors, multi-line strings as literal blocks (as kubectl prints)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def dump(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, width=4096,
                     default_flow_style=False, allow_unicode=True)


def write(built: Story, root: Path) -> Path:
    """Replace the scenario folder with what the story built."""
    folder = root / built.id
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / "scenario.yaml").write_text(dump(built.header()))
    objects = built.cluster.objects()
    (folder / "cluster.yaml").write_text("---\n".join(dump(o) for o in objects))
    for path, text in sorted({**derived_pod_logs(built, objects), **built.pod_logs}.items()):
        file = folder / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text)
    if built.logs.docs:
        (folder / "logs.ndjson").write_text(built.logs.render())
    if built.metrics.families:
        (folder / "metrics.om").write_text(built.metrics.render())
    return folder


def derived_pod_logs(built: Story, objects: list[dict[str, Any]]) -> dict[str, str]:
    """`kubectl logs` of running containers that shipped ECS documents: the same lines, as
    the container printed them, from its current instance's start on."""
    started: dict[tuple[str, str, str], datetime] = {}
    for obj in objects:
        if obj["kind"] != "Pod" or obj["status"].get("phase") != "Running":
            continue
        for status in obj["status"].get("containerStatuses", []):
            if "running" in status["state"]:
                key = (obj["metadata"]["namespace"], obj["metadata"]["name"], status["name"])
                started[key] = parse_time(status["state"]["running"]["startedAt"])
    lines: dict[tuple[str, str, str], list[str]] = {}
    for when, doc in sorted(built.logs.docs, key=lambda d: d[0]):
        flat = flatten(doc)
        key = (flat["kubernetes.namespace"], flat["kubernetes.pod.name"],
               flat["kubernetes.container.name"])
        if key in started and when >= started[key]:
            stamp = when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"
            level = str(flat["log.level"]).upper()
            lines.setdefault(key, []).append(f"{stamp} {level:<5} {flat['message']}")
    return {f"pod-logs/{ns}/{pod}/{ctr}.log": "\n".join(text) + "\n"
            for (ns, pod, ctr), text in lines.items()}


def load_stories() -> dict[str, Callable[[], Story]]:
    """Import every story module so that its stories register."""
    import tests.scenario_tools.stories  # noqa: F401

    return STORIES


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("ids", nargs="*", help="stories to write (default: all)")
    parser.add_argument("--out", type=Path, default=ROOT)
    args = parser.parse_args(argv)
    stories = load_stories()
    unknown = [i for i in args.ids if i not in stories]
    if unknown:
        print(f"unknown stories: {', '.join(unknown)}", file=sys.stderr)
        return 2
    for id_ in args.ids or sorted(stories):
        print(write(stories[id_](), args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
