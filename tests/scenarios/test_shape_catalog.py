"""The shape catalog finds a proposed shape's nearest scenario, so repeats are caught early."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.scenario_tools.shape_catalog import Index, load_shapes, main, proposals


def _scenario(root: Path, name: str, category: str, title: str, fix: str) -> None:
    folder = root / "set" / name
    folder.mkdir(parents=True)
    truth = {"category": category, "culprit": {"kind": "Deployment", "name": name}, "fix": fix}
    document = {"id": name, "title": title, "truth": truth}
    (folder / "scenario.yaml").write_text(yaml.safe_dump(document))


def _catalog(tmp_path: Path) -> Index:
    _scenario(
        tmp_path,
        "a",
        "crash_loop",
        "indexer crashes",
        "mount an emptyDir, readOnlyRootFilesystem blocks /tmp",
    )
    _scenario(
        tmp_path,
        "b",
        "unschedulable",
        "scale-out Pending",
        "topology spread DoNotSchedule across zones",
    )
    _scenario(
        tmp_path,
        "c",
        "certificate",
        "calls fail",
        "renew the expired client certificate of the caller",
    )
    return Index(load_shapes((tmp_path,)))


def test_a_rephrased_shape_finds_the_scenario_it_repeats(tmp_path: Path) -> None:
    index = _catalog(tmp_path)
    nearest = index.nearest("hardening sets readOnlyRootFilesystem and the app cannot write /tmp")
    assert nearest[0][1].where.endswith("set/a")
    assert nearest[0][0] > nearest[1][0]


def test_a_shape_sharing_no_word_scores_zero(tmp_path: Path) -> None:
    index = _catalog(tmp_path)
    assert all(score == 0.0 for score, _ in index.nearest("gpu xid fell off the bus"))


def test_a_shape_list_splits_on_blank_lines() -> None:
    assert proposals("one\nstill one\n\n  \ntwo\n") == ["one\nstill one", "two"]


def test_the_repository_catalog_lists_every_scenario(capsys: object) -> None:
    assert main([]) == 0
    lines = capsys.readouterr().out.splitlines()  # type: ignore[attr-defined]
    assert len(lines) == len(list(Path("tests/data").rglob("scenario.yaml"))) + len(
        list(Path("tools/scenarios").rglob("scenario.yaml"))
    )
    assert all(line.count("\t") == 3 for line in lines)
