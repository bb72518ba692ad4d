"""Live configuration: which Kubernetes, Elasticsearch and Prometheus to read, and how.

Settings come from a YAML file (`--config PATH`, else `$TRIAGE_CONFIG`, else
`~/.config/triage/config.yaml` when it exists) and from environment variables, which win
over the file (a deployment sets secrets in the environment, defaults in the file); a
command-line `--context` wins over both. bot/README-config.md documents every key.

Secrets are `SecretStr`: they print as `**********`, are handed to a client once, and
never appear in a log line, a `describe()` line or an error (validation errors name the
field, never its value). `live_setting()` builds the sources, checks each at start, and
offers only the healthy ones: a backend that is down is reported, not fatal, unless no
backend at all is usable.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, model_validator

from bot.wiring import Setting
from engines.errors import BackendError, ConfigurationError
from tools.redact import redact
from tools.sources.base import ClusterSource, LogSource, MetricSource, Sources
from tools.sources.live_elasticsearch import DEFAULT_INDEX, ElasticsearchLogs, LogFields
from tools.sources.live_kubernetes import KubernetesCluster
from tools.sources.live_prometheus import PrometheusMetrics

log = logging.getLogger(__name__)

DEFAULT_PATH = Path("~/.config/triage/config.yaml")
SERVICE_ACCOUNT_TOKEN = Path("/var/run/secrets/kubernetes.io/serviceaccount/token")
CHECK_SECONDS = 15.0  # a start-up health check that takes longer counts as down


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _credentials_out_of_url(data: Any) -> Any:
    """`https://user:pass@host` keeps only `https://host`: the user and password move to
    their own fields (an explicit field wins), so no URL ever carries a secret."""
    if not isinstance(data, dict) or not isinstance(data.get("url"), str):
        return data
    parts = urlsplit(data["url"])
    if not parts.username and not parts.password:
        return data
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    data = {**data, "url": urlunsplit(parts._replace(netloc=netloc))}
    if parts.username and not data.get("username"):
        data["username"] = unquote(parts.username)
    if parts.password and not data.get("password"):
        data["password"] = unquote(parts.password)
    return data


class KubernetesSettings(_Section):
    enabled: bool = True
    kubeconfig: str | None = None
    context: str | None = None
    in_cluster: bool | None = None  # None: detect (KUBERNETES_SERVICE_HOST and a token)
    timeout_seconds: float = Field(default=15.0, gt=0)


class ElasticsearchSettings(_Section):
    _split = model_validator(mode="before")(_credentials_out_of_url)

    url: str | None = None
    api_key: SecretStr | None = None
    username: str | None = None
    password: SecretStr | None = None
    ca_certs: str | None = None
    verify_certs: bool = True
    index: str = DEFAULT_INDEX
    fields: dict[str, str] = Field(default_factory=dict)
    timeout_seconds: float = Field(default=15.0, gt=0)


class PrometheusSettings(_Section):
    _split = model_validator(mode="before")(_credentials_out_of_url)

    url: str | None = None
    token: SecretStr | None = None
    username: str | None = None
    password: SecretStr | None = None
    ca_certs: str | None = None
    verify_certs: bool = True
    timeout_seconds: float = Field(default=15.0, gt=0)


class TriageConfig(_Section):
    """The whole file; every section optional."""

    kubernetes: KubernetesSettings = KubernetesSettings()  # pydantic copies defaults
    elasticsearch: ElasticsearchSettings = ElasticsearchSettings()
    prometheus: PrometheusSettings = PrometheusSettings()
    source: str | None = Field(default=None, exclude=True)  # the file read, for messages


# Environment variable -> (section, key). Env wins over the file.
ENV: dict[str, tuple[str, str]] = {
    "KUBECONFIG": ("kubernetes", "kubeconfig"),
    "TRIAGE_KUBE_CONTEXT": ("kubernetes", "context"),
    "ELASTICSEARCH_URL": ("elasticsearch", "url"),
    "ELASTICSEARCH_API_KEY": ("elasticsearch", "api_key"),
    "ELASTICSEARCH_USERNAME": ("elasticsearch", "username"),
    "ELASTICSEARCH_PASSWORD": ("elasticsearch", "password"),
    "ELASTICSEARCH_CA_CERTS": ("elasticsearch", "ca_certs"),
    "TRIAGE_LOG_INDEX": ("elasticsearch", "index"),
    "PROMETHEUS_URL": ("prometheus", "url"),
    "PROMETHEUS_TOKEN": ("prometheus", "token"),
    "PROMETHEUS_USERNAME": ("prometheus", "username"),
    "PROMETHEUS_PASSWORD": ("prometheus", "password"),
}


def config_path(explicit: str | Path | None, env: Mapping[str, str]) -> Path | None:
    """The file to read: the flag, else $TRIAGE_CONFIG, else the default if it exists."""
    if explicit:
        return Path(explicit).expanduser()
    if env.get("TRIAGE_CONFIG"):
        return Path(env["TRIAGE_CONFIG"]).expanduser()
    default = DEFAULT_PATH.expanduser()
    return default if default.is_file() else None


def load_config(
    path: str | Path | None = None,
    *,
    env: Mapping[str, str] | None = None,
    context: str | None = None,
) -> TriageConfig:
    """Read the file (if any), apply the environment, then `context` (the --context flag)."""
    environ = os.environ if env is None else env
    file = config_path(path, environ)
    raw: dict[str, Any] = {}
    if file is not None:
        if not file.is_file():
            raise ConfigurationError(f"config file {file} does not exist")
        try:
            loaded = yaml.safe_load(file.read_text()) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise ConfigurationError(f"cannot read config file {file}: {exc}") from None
        if not isinstance(loaded, dict):
            raise ConfigurationError(f"config file {file} must be a mapping of sections")
        raw = loaded
    for variable, (section, key) in ENV.items():
        if value := environ.get(variable, "").strip():
            target = raw.setdefault(section, {})
            if not isinstance(target, dict):
                raise ConfigurationError(f"config file {file}: {section} must be a mapping")
            target[key] = value
    if context:
        raw.setdefault("kubernetes", {})["context"] = context
    try:
        config = TriageConfig.model_validate(raw)
    except ValidationError as exc:  # name the fields, never echo values (secrets)
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
                             for e in exc.errors())
        raise ConfigurationError(f"invalid configuration ({file or 'environment'}): "
                                 f"{problems}") from None
    return config.model_copy(update={"source": str(file) if file else None})


def kube_mode(config: TriageConfig, env: Mapping[str, str] | None = None) -> str | None:
    """"kubeconfig", "in-cluster" or None (not configured), by the rules of the README."""
    settings = config.kubernetes
    environ = os.environ if env is None else env
    if not settings.enabled:
        return None
    if settings.in_cluster:
        return "in-cluster"
    if settings.kubeconfig:
        return "kubeconfig"
    if settings.in_cluster is None and environ.get("KUBERNETES_SERVICE_HOST") and \
            SERVICE_ACCOUNT_TOKEN.is_file():
        return "in-cluster"
    if Path("~/.kube/config").expanduser().is_file():
        return "kubeconfig"
    return None


def describe(config: TriageConfig, env: Mapping[str, str] | None = None) -> list[str]:
    """One line per backend, safe to print: URLs redacted, secrets only as "set"."""
    k, e, p = config.kubernetes, config.elasticsearch, config.prometheus
    lines = [f"config: {config.source or 'no file (environment only)'}"]
    mode = kube_mode(config, env)
    if mode == "kubeconfig":
        lines.append(f"kubernetes: kubeconfig {k.kubeconfig or '~/.kube/config'}"
                     f"{f', context {k.context}' if k.context else ''}")
    else:
        lines.append(f"kubernetes: {mode or 'not configured'}")
    auth = "api key" if e.api_key else ("basic auth" if e.username else "no auth")
    lines.append(f"elasticsearch: {redact(e.url)} index {e.index}, {auth}" if e.url
                 else "elasticsearch: not configured")
    auth = "bearer token" if p.token else ("basic auth" if p.username else "no auth")
    lines.append(f"prometheus: {redact(p.url)}, {auth}" if p.url else
                 "prometheus: not configured")
    return lines


def _secret(value: SecretStr | None) -> str | None:
    return value.get_secret_value() if value is not None else None


async def build_cluster(config: TriageConfig) -> KubernetesCluster | None:
    """The cluster source, or None when Kubernetes is not configured. Loading a kubeconfig
    reads files and may run a credential plugin, hence the worker thread."""
    return await asyncio.to_thread(_cluster, config)


def _cluster(config: TriageConfig) -> KubernetesCluster | None:
    settings = config.kubernetes
    mode = kube_mode(config)
    if mode == "in-cluster":
        return KubernetesCluster.in_cluster(timeout=settings.timeout_seconds)
    if mode == "kubeconfig":
        path = settings.kubeconfig
        if path and os.pathsep not in path:  # KUBECONFIG may list several files
            path = str(Path(path).expanduser())
        return KubernetesCluster.from_kubeconfig(path, settings.context,
                                                 timeout=settings.timeout_seconds)
    return None


def build_logs(config: TriageConfig) -> ElasticsearchLogs | None:
    settings = config.elasticsearch
    if not settings.url:
        return None
    return ElasticsearchLogs.connect(
        settings.url, index=settings.index, field_names=LogFields.from_mapping(settings.fields),
        api_key=_secret(settings.api_key), username=settings.username,
        password=_secret(settings.password), ca_certs=settings.ca_certs,
        verify_certs=settings.verify_certs, timeout=settings.timeout_seconds)


def build_metrics(config: TriageConfig) -> PrometheusMetrics | None:
    settings = config.prometheus
    if not settings.url:
        return None
    return PrometheusMetrics.connect(
        settings.url, token=_secret(settings.token), username=settings.username,
        password=_secret(settings.password), ca_certs=settings.ca_certs,
        verify_certs=settings.verify_certs, timeout=settings.timeout_seconds)


@dataclass
class Health:
    """What the start-up checks found, backend by backend."""

    healthy: dict[str, str] = field(default_factory=dict)  # backend -> description
    problems: dict[str, str] = field(default_factory=dict)  # backend -> what is wrong
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        parts = [f"live: {', '.join(self.healthy.values())}" if self.healthy else "live: none"]
        parts += [f"{name} unavailable ({why})" for name, why in self.problems.items()]
        return "; ".join(parts)


async def _checked(name: str, source: Any, health: Health) -> bool:
    """Run a source's start-up check; record it healthy or what is wrong."""
    try:
        async with asyncio.timeout(CHECK_SECONDS):
            notes = await source.check()
    except BackendError as exc:
        health.problems[name] = redact(str(exc))
    except TimeoutError:
        health.problems[name] = f"no answer within {CHECK_SECONDS:g}s"
    else:
        health.healthy[name] = redact(source.description)
        health.notes += [f"{name}: {redact(n)}" for n in notes or []]
        return True
    log.warning("%s is not usable: %s", name, health.problems[name])
    await close_source(source)
    return False


async def live_sources(config: TriageConfig) -> tuple[Sources, Health]:
    """Build every configured source, check them concurrently, keep the healthy ones."""
    health = Health()
    try:
        cluster = await build_cluster(config)
    except BackendError as exc:
        cluster, health.problems["kubernetes"] = None, redact(str(exc))
    built: dict[str, Any] = {"kubernetes": cluster, "elasticsearch": build_logs(config),
                             "prometheus": build_metrics(config)}
    configured = {name: s for name, s in built.items() if s is not None}
    if not configured and not health.problems:
        raise ConfigurationError(
            "no live backend is configured: set KUBECONFIG (or run in a cluster), "
            "ELASTICSEARCH_URL and/or PROMETHEUS_URL, or write a config file (see "
            "bot/README-config.md); or pass --scenario ID|DIR for a recorded incident"
        )
    results = await asyncio.gather(*(_checked(n, s, health) for n, s in configured.items()))
    kept = {name: source for (name, source), ok in zip(configured.items(), results,
                                                       strict=True) if ok}
    if not kept:
        reasons = "; ".join(f"{n}: {why}" for n, why in health.problems.items())
        raise ConfigurationError(f"no live backend is usable: {reasons}")
    cluster_source: ClusterSource | None = kept.get("kubernetes")
    log_source: LogSource | None = kept.get("elasticsearch")
    metric_source: MetricSource | None = kept.get("prometheus")
    return Sources(cluster_source, log_source, metric_source, health.summary()), health


async def live_setting(config: TriageConfig, at: datetime | None = None) -> Setting:
    """The live Setting: healthy sources only, and the clock at `at` (None: wall clock)."""
    sources, _ = await live_sources(config)
    return Setting(sources, now=at)


async def close_source(source: object) -> None:
    """Close a source's client, whether its close() is sync or async."""
    closer = getattr(source, "close", None)
    if closer is None:
        return
    result = closer()
    if inspect.isawaitable(result):
        await result


async def close_sources(sources: Sources) -> None:
    """Release every client of a live Setting (sandbox sources have nothing to close)."""
    for source in (sources.cluster, sources.logs, sources.metrics):
        if source is not None:
            await close_source(source)
