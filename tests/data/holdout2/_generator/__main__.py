"""Write the second held-out set: `.venv/bin/python -m tests.data.holdout2._generator [ID ...]`
(all scenarios without arguments). Same bytes on every run."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from tests.data.holdout._generator.base import fix_pod_ips
from tests.scenario_tools.common import Story
from tests.scenario_tools.generate import derived_pod_logs, dump

from . import stories
from .kit import Incident

ROOT = Path(__file__).resolve().parents[1]


def write(built: Story, root: Path) -> Path:
    folder = root / built.id
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / "scenario.yaml").write_text(dump(built.header()))
    fix_pod_ips(built)
    objects = built.cluster.objects()
    for obj in objects:  # what a controller that observed its last edit shows
        if obj["kind"] in ("DaemonSet", "StatefulSet") and obj.get("status"):
            obj["status"]["observedGeneration"] = obj["metadata"].get("generation", 1)
    if isinstance(built, Incident):
        for fix in built.fixes:
            fix(objects)
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


def main(argv: list[str]) -> int:
    known = stories()
    unknown = [a for a in argv if a not in known]
    if unknown:
        print(f"unknown scenarios: {', '.join(unknown)}", file=sys.stderr)
        return 2
    for key in argv or sorted(known):
        print(write(known[key](), ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
