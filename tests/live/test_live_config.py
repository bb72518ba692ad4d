"""Live configuration: file, environment and flags, and secrets that never show.

No server is needed: these tests only read configuration.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.cli import build_parser
from bot.cli.investigate import at_time
from bot.config import DEFAULT_PATH, ENV, describe, kube_mode, load_config
from engines.errors import ConfigurationError

SECRET = "sup3r-s3cret-value-123"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """An environment with HOME in a fresh folder and nothing configured."""
    return {"HOME": str(tmp_path)}


@pytest.fixture(autouse=True)
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for variable in [*ENV, "TRIAGE_CONFIG", "KUBERNETES_SERVICE_HOST"]:
        monkeypatch.delenv(variable, raising=False)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_environment_wins_over_the_file_and_context_over_both(tmp_path: Path,
                                                              env: dict[str, str]) -> None:
    file = _write(tmp_path / "triage.yaml", f"""
kubernetes: {{kubeconfig: /etc/kube.yaml, context: from-file}}
elasticsearch: {{url: http://file:9200, index: app-logs-*, password: {SECRET}}}
prometheus: {{url: http://file:9090}}
""")
    config = load_config(file, env=env)
    assert config.kubernetes.context == "from-file"
    assert config.elasticsearch.index == "app-logs-*"
    env |= {"TRIAGE_KUBE_CONTEXT": "from-env", "PROMETHEUS_URL": "http://env:9090",
            "TRIAGE_LOG_INDEX": "logs-prod-*", "ELASTICSEARCH_API_KEY": SECRET}
    config = load_config(file, env=env)
    assert config.kubernetes.context == "from-env"
    assert config.kubernetes.kubeconfig == "/etc/kube.yaml"
    assert config.prometheus.url == "http://env:9090"
    assert config.elasticsearch.url == "http://file:9200"
    assert config.elasticsearch.index == "logs-prod-*"
    assert config.source == str(file)
    assert load_config(file, env=env, context="from-flag").kubernetes.context == "from-flag"


def test_the_file_is_found_by_flag_env_or_default(tmp_path: Path, env: dict[str, str]) -> None:
    assert load_config(env=env).source is None
    default = _write(DEFAULT_PATH.expanduser(), "prometheus: {url: http://default:9090}\n")
    assert load_config(env=env).source == str(default)
    named = _write(tmp_path / "named.yaml", "prometheus: {url: http://named:9090}\n")
    assert load_config(env=env | {"TRIAGE_CONFIG": str(named)}).prometheus.url == \
        "http://named:9090"
    with pytest.raises(ConfigurationError, match="does not exist"):
        load_config(tmp_path / "missing.yaml", env=env)


def test_mistakes_are_refused_without_echoing_secrets(tmp_path: Path, env: dict[str, str]
                                                      ) -> None:
    typo = _write(tmp_path / "typo.yaml", f"elasticsearch: {{url: http://x, passwrd: {SECRET}}}\n")
    with pytest.raises(ConfigurationError) as refused:
        load_config(typo, env=env)
    assert "elasticsearch.passwrd" in str(refused.value) and SECRET not in str(refused.value)
    bad = _write(tmp_path / "bad.yaml", f"prometheus: {{url: http://x, token: {SECRET}, "
                                        "timeout_seconds: -1}\n")
    with pytest.raises(ConfigurationError) as negative:
        load_config(bad, env=env)
    assert "prometheus.timeout_seconds" in str(negative.value) and SECRET not in str(
        negative.value)
    with pytest.raises(ConfigurationError, match="must be a mapping"):
        load_config(_write(tmp_path / "list.yaml", "- a\n- b\n"), env=env)


def test_secrets_never_print(env: dict[str, str]) -> None:
    env |= {"ELASTICSEARCH_URL": f"https://triage:{SECRET}@es:9200",
            "ELASTICSEARCH_PASSWORD": SECRET, "ELASTICSEARCH_USERNAME": "triage",
            "PROMETHEUS_URL": "http://prom:9090", "PROMETHEUS_TOKEN": SECRET}
    config = load_config(env=env)
    text = "\n".join(describe(config, env)) + repr(config) + str(config.model_dump())
    assert SECRET not in text
    assert "basic auth" in text and "bearer token" in text
    assert config.prometheus.token is not None
    assert config.prometheus.token.get_secret_value() == SECRET
    assert config.elasticsearch.url == "https://es:9200"  # credentials left the URL
    moved = load_config(env={"PROMETHEUS_URL": f"http://bot:{SECRET}@prom:9090/"})
    assert moved.prometheus.url == "http://prom:9090/" and moved.prometheus.username == "bot"
    assert moved.prometheus.password is not None
    assert moved.prometheus.password.get_secret_value() == SECRET


def test_kubernetes_mode_follows_the_readme(tmp_path: Path, env: dict[str, str]) -> None:
    assert kube_mode(load_config(env=env), env) is None
    _write(Path(env["HOME"]) / ".kube" / "config", "apiVersion: v1\n")
    assert kube_mode(load_config(env=env), env) == "kubeconfig"
    assert kube_mode(load_config(env=env | {"KUBECONFIG": "/x"}), env) == "kubeconfig"
    off = _write(tmp_path / "off.yaml", "kubernetes: {enabled: false}\n")
    assert kube_mode(load_config(off, env=env), env) is None
    forced = _write(tmp_path / "in.yaml", "kubernetes: {in_cluster: true}\n")
    assert kube_mode(load_config(forced, env=env), env) == "in-cluster"


def test_investigate_takes_at_config_and_context() -> None:
    args = build_parser().parse_args([
        "investigate", "checkout is down", "--at", "2026-11-30T10:00:00Z",
        "--config", "/tmp/t.yaml", "--context", "prod"])
    assert args.at == datetime(2026, 11, 30, 10, tzinfo=UTC)
    assert args.config == Path("/tmp/t.yaml") and args.context == "prod"
    with pytest.raises(argparse.ArgumentTypeError, match="not RFC 3339"):
        at_time("yesterday")
    doctor = build_parser().parse_args(["doctor", "--context", "prod"])
    assert doctor.context == "prod"
