"""`triage doctor` and the live Setting against the running servers and a dead port.

The commands read only the environment here: HOME is a fresh folder (no config file, no
~/.kube/config) and every backend variable is set or removed by the test.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli import main
from bot.config import ENV, close_sources, live_setting, live_sources, load_config
from engines.errors import ConfigurationError
from tests.live._live import delete_service_account, service_account_kubeconfig
from tests.services._process import free_port
from tests.services.elasticsearch import ElasticsearchServer, index_name
from tests.services.kube import KubeApiServer
from tests.services.prometheus import PrometheusServer
from tools.sources.live_elasticsearch import ElasticsearchLogs
from tools.sources.live_kubernetes import KubernetesCluster
from tools.sources.live_prometheus import PrometheusMetrics

pytestmark = pytest.mark.live


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """No backend configured, no config file, not in a cluster."""
    for variable in [*ENV, "TRIAGE_CONFIG", "KUBERNETES_SERVICE_HOST"]:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    return monkeypatch


@pytest.fixture
def all_servers(environment: pytest.MonkeyPatch, kube_server: KubeApiServer,
                elasticsearch_server: ElasticsearchServer, prometheus_server: PrometheusServer,
                live_scenario: Path) -> pytest.MonkeyPatch:
    """The environment of a bot pointed at the three session servers, read-only identity."""
    environment.setenv("KUBECONFIG", str(kube_server.viewer_kubeconfig))
    environment.setenv("ELASTICSEARCH_URL", elasticsearch_server.url)
    environment.setenv("TRIAGE_LOG_INDEX", index_name(live_scenario.name))
    environment.setenv("PROMETHEUS_URL", prometheus_server.url)
    return environment


def test_doctor_is_all_green_against_the_running_servers(
    all_servers: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["doctor"])
    out = capsys.readouterr().out
    assert code == 0, out
    checks = [line for line in out.splitlines() if line.startswith("[")]
    assert not [line for line in checks if line.startswith(("[FAIL]", "[skip]"))], out
    for backend in ("kubernetes", "elasticsearch", "prometheus"):
        assert any(line.startswith(f"[ok]   {backend}: ") for line in checks), backend
    assert "authenticated as triage-viewer" in out
    assert "RBAC allows list pods, list events, list nodes" in out
    assert "all checks passed" in out


def test_doctor_names_a_dead_port_and_exits_1(
    environment: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    environment.setenv("PROMETHEUS_URL", url)
    code = main(["doctor"])
    captured = capsys.readouterr()
    assert code == 1
    assert (f"[FAIL] prometheus: cannot reach Prometheus at {url}: connection refused — "
            "fix: check PROMETHEUS_URL and that Prometheus is up") in captured.out.splitlines()
    assert "[skip] kubernetes: not configured" in captured.out
    assert "1 check(s) failed" in captured.err


def test_doctor_without_any_backend_fails(
    environment: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["doctor"]) == 1
    assert "[FAIL] config: no backend is configured" in capsys.readouterr().out


@pytest.fixture
def nobody(kube_server: KubeApiServer, tmp_path: Path) -> Iterator[Path]:
    yield service_account_kubeconfig(kube_server, "triage-nobody", tmp_path)
    delete_service_account(kube_server, "triage-nobody")


def test_doctor_names_missing_rbac_verbs(
    environment: pytest.MonkeyPatch, nobody: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    environment.setenv("KUBECONFIG", str(nobody))
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("[FAIL] kubernetes"))
    assert re.match(r"\[FAIL\] kubernetes: system:serviceaccount:default:triage-nobody may not "
                    r"list pods, list events, list nodes, .* and \d+ more — fix: apply the Helm "
                    r"chart's ClusterRole", line), line


async def test_live_setting_offers_the_healthy_sources_and_reports_the_others(
    all_servers: pytest.MonkeyPatch, live_scenario: Path
) -> None:
    setting = await live_setting(load_config(), at=None)
    try:
        assert isinstance(setting.sources.cluster, KubernetesCluster)
        assert isinstance(setting.sources.logs, ElasticsearchLogs)
        assert isinstance(setting.sources.metrics, PrometheusMetrics)
        assert setting.now is None and setting.scenario is None
    finally:
        await close_sources(setting.sources)
    dead = f"http://127.0.0.1:{free_port()}"
    all_servers.setenv("ELASTICSEARCH_URL", dead)
    all_servers.setenv("ELASTICSEARCH_PASSWORD", "pa55word-never-shown")
    all_servers.setenv("ELASTICSEARCH_USERNAME", "triage")
    sources, health = await live_sources(load_config())
    try:
        assert sources.logs is None and sources.cluster is not None
        assert sources.metrics is not None
        assert health.problems == {
            "elasticsearch": f"cannot reach Elasticsearch at {dead}: connection refused"}
        assert f"elasticsearch unavailable (cannot reach Elasticsearch at {dead}" in \
            sources.description
        assert "pa55word" not in sources.description
    finally:
        await close_sources(sources)


async def test_live_setting_fails_when_nothing_is_usable(environment: pytest.MonkeyPatch
                                                         ) -> None:
    with pytest.raises(ConfigurationError, match="no live backend is configured"):
        await live_setting(load_config())
    environment.setenv("PROMETHEUS_URL", f"http://127.0.0.1:{free_port()}")
    with pytest.raises(ConfigurationError, match=r"no live backend is usable: prometheus: "
                                                 r"cannot reach Prometheus"):
        await live_setting(load_config())
