"""The Helm chart: lint, render over every value set, validate against Kubernetes' schemas,
reject bad values with a clear message, and keep its security promises whatever the values.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helm.conftest import (
    CHART,
    NAMESPACE,
    RELEASE,
    VALUE_SETS,
    Helm,
    missing,
    of_kind,
    one,
)

Render = Callable[[str], list[dict[str, Any]]]
# The oldest Kubernetes the chart supports (Chart.yaml kubeVersion) and the newest schemas.
KUBE_VERSIONS = ("1.27.0", "1.37.0")
# Kinds that are CRDs: Kubernetes' own schemas do not describe them (checked by hand below).
CRD_KINDS = {"ServiceMonitor": "monitoring.coreos.com/v1"}
WRITE_VERBS = {"create", "update", "patch", "delete", "deletecollection", "escalate", "bind",
               "impersonate", "approve", "sign", "*"}
FULLNAME = RELEASE  # a release named like the chart keeps the short name


def _container(objects: list[dict[str, Any]]) -> dict[str, Any]:
    pod = one(objects, "Deployment")["spec"]["template"]["spec"]
    assert len(pod["containers"]) == 1
    container: dict[str, Any] = pod["containers"][0]
    return container


def _env(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in _container(objects).get("env", [])}


# --- lint and schemas ---------------------------------------------------------------------


@pytest.mark.parametrize("value_set", VALUE_SETS)
def test_helm_lint_strict_passes(helm: Helm, value_set: str) -> None:
    result = helm.run("lint", "--strict", str(CHART), *helm.value_args(VALUE_SETS[value_set]))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 chart(s) failed" in result.stdout
    assert "[WARNING]" not in result.stdout and "[ERROR]" not in result.stdout


@pytest.mark.parametrize("value_set", VALUE_SETS)
def test_every_manifest_is_valid_kubernetes(render: Render, kube_validate: Any,
                                            value_set: str) -> None:
    objects = render(value_set)
    assert objects
    for obj in objects:
        name = f"{obj['kind']}/{obj['metadata']['name']}"
        if obj["kind"] in CRD_KINDS:  # a CRD: no schema in Kubernetes' own; see test below
            assert obj["apiVersion"] == CRD_KINDS[obj["kind"]]
            continue
        for version in KUBE_VERSIONS:
            try:
                kube_validate.validate(obj, version, strict=True)
            except kube_validate.ValidationError as exc:
                path = ".".join(str(p) for p in exc.path)
                pytest.fail(f"{value_set}: {name} is invalid for Kubernetes {version}: "
                            f"{path}: {exc.message}")
            except kube_validate.SchemaNotFoundError as exc:
                pytest.fail(f"{value_set}: {name}: {exc.message}")


def test_the_kubernetes_validate_command_accepts_the_rendered_chart(
    render: Render, kube_validate: Any, tmp_path: Path
) -> None:
    """The check the library calls above make, through the command line, strict, on the
    default install (the command parses its schemas anew for every object: slow)."""
    command = shutil.which("kubernetes-validate", path=str(Path(sys.executable).parent))
    if command is None:
        missing("the kubernetes-validate command")
    documents = [o for o in render("defaults") if o["kind"] not in CRD_KINDS]
    manifest = tmp_path / "all.yaml"
    manifest.write_text(yaml.safe_dump_all(documents))
    result = subprocess.run(
        [str(command), "--strict", "--kubernetes-version", KUBE_VERSIONS[0], str(manifest)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "WARN" not in result.stdout and "ERROR" not in result.stdout
    assert result.stdout.count("passed") == len(documents)


def test_the_service_monitor_scrapes_the_metrics_port(render: Render) -> None:
    objects = render("metrics-servicemonitor")
    monitor = one(objects, "ServiceMonitor")
    service = one(objects, "Service")
    assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    selector = monitor["spec"]["selector"]["matchLabels"]
    assert selector.items() <= service["metadata"]["labels"].items()
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": [NAMESPACE]}
    [endpoint] = monitor["spec"]["endpoints"]
    assert endpoint == {"port": "http", "path": "/metrics", "interval": "15s",
                        "scrapeTimeout": "5s"}
    assert {"name": "http", "port": 3000, "targetPort": "http", "protocol": "TCP"} in \
        service["spec"]["ports"]
    assert not of_kind(render("defaults"), "ServiceMonitor")


# --- what each value set renders ------------------------------------------------------------


@pytest.mark.parametrize(("value_set", "kinds"), [
    ("defaults", {"ServiceAccount", "Secret", "ConfigMap", "ClusterRole", "ClusterRoleBinding",
                  "Service", "Deployment"}),
    ("http", {"ServiceAccount", "Secret", "ConfigMap", "ClusterRole", "ClusterRoleBinding",
              "Service", "Deployment", "Ingress"}),
    ("existing-secrets", {"ServiceAccount", "ConfigMap", "ClusterRole", "ClusterRoleBinding",
                          "Service", "Deployment"}),
    ("namespaced-rbac", {"ServiceAccount", "ConfigMap", "Role", "RoleBinding", "ClusterRole",
                         "ClusterRoleBinding", "Service", "Deployment"}),
    ("metrics-servicemonitor", {"ServiceAccount", "ConfigMap", "ClusterRole",
                                "ClusterRoleBinding", "Service", "Deployment",
                                "ServiceMonitor"}),
    ("pdb", {"ServiceAccount", "ConfigMap", "ClusterRole", "ClusterRoleBinding", "Service",
             "Deployment", "PodDisruptionBudget"}),
])
def test_each_value_set_renders_the_expected_kinds(render: Render, value_set: str,
                                                   kinds: set[str]) -> None:
    assert {o["kind"] for o in render(value_set)} == kinds


def test_namespaced_objects_go_to_the_release_namespace(render: Render) -> None:
    cluster_wide = {"ClusterRole", "ClusterRoleBinding"}
    for name in VALUE_SETS:
        for obj in render(name):
            if obj["kind"] in cluster_wide:
                assert "namespace" not in obj["metadata"]
            elif obj["kind"] not in ("Role", "RoleBinding"):
                assert obj["metadata"]["namespace"] == NAMESPACE, (name, obj["kind"])


def test_socket_mode_gets_the_app_token_and_never_the_signing_secret(render: Render) -> None:
    objects = render("socket-secrets-from-values")
    env = _env(objects)
    assert env["SLACK_APP_TOKEN"]["valueFrom"]["secretKeyRef"] == {
        "name": f"{FULLNAME}-slack", "key": "SLACK_APP_TOKEN"}
    assert "SLACK_SIGNING_SECRET" not in env
    secrets = {s["metadata"]["name"]: s for s in of_kind(objects, "Secret")}
    assert set(secrets) == {f"{FULLNAME}-slack", f"{FULLNAME}-openai",
                            f"{FULLNAME}-elasticsearch", f"{FULLNAME}-prometheus"}
    assert secrets[f"{FULLNAME}-slack"]["stringData"] == {
        "SLACK_BOT_TOKEN": "xoxb-0000-0000-test", "SLACK_APP_TOKEN": "xapp-1-A000-0000-test"}
    assert secrets[f"{FULLNAME}-openai"]["stringData"] == {
        "OPENAI_API_KEY": "sk-test-not-a-real-key", "OPENAI_BASE_URL": "http://vllm.llm.svc:8000/v1"}
    assert secrets[f"{FULLNAME}-elasticsearch"]["stringData"] == {
        "ELASTICSEARCH_USERNAME": "log-reader-7", "ELASTICSEARCH_PASSWORD": "not-a-real-password"}
    assert secrets[f"{FULLNAME}-prometheus"]["stringData"] == {
        "PROMETHEUS_TOKEN": "not-a-real-bearer-token"}


def test_http_mode_gets_the_signing_secret_and_exposes_only_slack_events(render: Render) -> None:
    objects = render("http")
    env = _env(objects)
    assert "SLACK_APP_TOKEN" not in env  # the bot would pick Socket Mode if it were set
    assert env["SLACK_SIGNING_SECRET"]["valueFrom"]["secretKeyRef"]["key"] == \
        "SLACK_SIGNING_SECRET"
    assert one(objects, "Secret")["stringData"] == {
        "SLACK_BOT_TOKEN": "xoxb-0000-0000-test",
        "SLACK_SIGNING_SECRET": "0123456789abcdef0123456789abcdef"}
    ingress = one(objects, "Ingress")
    [rule] = ingress["spec"]["rules"]
    assert rule["host"] == "triage.example.com"
    assert [(p["path"], p["pathType"]) for p in rule["http"]["paths"]] == \
        [("/slack/events", "Exact")]
    assert rule["http"]["paths"][0]["backend"]["service"] == {
        "name": one(objects, "Service")["metadata"]["name"], "port": {"name": "http"}}


def test_existing_secrets_are_referenced_with_their_own_keys(render: Render) -> None:
    objects = render("existing-secrets")
    assert not of_kind(objects, "Secret")
    refs = {name: e["valueFrom"]["secretKeyRef"] for name, e in _env(objects).items()
            if "secretKeyRef" in e.get("valueFrom", {})}
    assert refs == {
        "SLACK_BOT_TOKEN": {"name": "slack-credentials", "key": "bot-token"},
        "SLACK_APP_TOKEN": {"name": "slack-credentials", "key": "app-token"},
        "OPENAI_API_KEY": {"name": "llm-credentials", "key": "OPENAI_API_KEY"},
        "OPENAI_BASE_URL": {"name": "llm-credentials", "key": "OPENAI_BASE_URL",
                            "optional": True},
        "ELASTICSEARCH_API_KEY": {"name": "es-credentials", "key": "api_key", "optional": True},
        "ELASTICSEARCH_USERNAME": {"name": "es-credentials", "key": "username",
                                   "optional": True},
        "ELASTICSEARCH_PASSWORD": {"name": "es-credentials", "key": "password",
                                   "optional": True},
        **{f"PROMETHEUS_{k}": {"name": "prometheus-credentials", "key": f"PROMETHEUS_{k}",
                               "optional": True} for k in ("TOKEN", "USERNAME", "PASSWORD")},
    }
    assert one(objects, "ConfigMap")["data"]["ELASTICSEARCH_CA_CERTS"] == \
        "/etc/triage/elasticsearch-ca/tls.crt"
    pod = one(objects, "Deployment")["spec"]["template"]["spec"]
    assert {"name": "elasticsearch-ca", "secret": {"secretName": "es-ca", "items": [
        {"key": "tls.crt", "path": "tls.crt"}]}} in pod["volumes"]
    assert {"name": "elasticsearch-ca", "mountPath": "/etc/triage/elasticsearch-ca",
            "readOnly": True} in _container(objects)["volumeMounts"]
    assert _container(objects)["image"] == (
        "registry.example.com/platform/triage@sha256:" + "0" * 64)


def test_configuration_reaches_the_configmap_and_never_a_credential(render: Render) -> None:
    objects = render("socket-secrets-from-values")
    data = one(objects, "ConfigMap")["data"]
    assert data == {
        "TRIAGE_LOG_LEVEL": "DEBUG",
        "TRIAGE_MODEL": "gpt-4o-mini",
        "TRIAGE_ALLOWED_CHANNELS": "C0123ABCD,G0456EFGH",
        "TRIAGE_ALLOWED_USERS": "U0123ABCD,S0ONCALL1",
        "PROMETHEUS_URL": "http://prometheus-operated.monitoring.svc:9090",
        "ELASTICSEARCH_URL": "https://elasticsearch.logging.svc:9200",
        "TRIAGE_LOG_INDEX": "app-logs-*",
        "TRIAGE_MAX_STEPS": "20",
    }
    container = _container(objects)
    assert container["envFrom"][0] == {"configMapRef": {"name": FULLNAME}}
    # Credentials travel only as secretKeyRefs: no literal value of one appears outside Secrets.
    credentials = [v for s in of_kind(objects, "Secret") for v in s["stringData"].values()]
    for obj in objects:
        if obj["kind"] != "Secret":
            text = json.dumps(obj)
            assert not [c for c in credentials if c and c in text], obj["kind"]


def test_a_config_change_rolls_the_pods(helm: Helm) -> None:
    def checksums(*sets: str) -> dict[str, str]:
        deployment = one(helm.render((), sets), "Deployment")
        annotations: dict[str, str] = deployment["spec"]["template"]["metadata"]["annotations"]
        return annotations

    base = checksums()
    changed = checksums("config.logLevel=DEBUG")
    assert changed["checksum/config"] != base["checksum/config"]
    assert changed["checksum/secret"] == base["checksum/secret"]
    assert checksums("slack.botToken=xoxb-1")["checksum/secret"] != base["checksum/secret"]


@pytest.mark.parametrize("value_set", VALUE_SETS)
def test_the_pod_serves_probes_on_the_http_port_and_writes_only_to_volumes(
    render: Render, value_set: str
) -> None:
    objects = render(value_set)
    deployment = one(objects, "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    container = _container(objects)
    assert container["ports"] == [{"name": "http", "containerPort": 3000, "protocol": "TCP"}]
    assert container["args"][:2] == ["--port", "3000"]
    assert "command" not in container  # the image's entrypoint is `triage serve`
    for probe, path in (("startupProbe", "/healthz"), ("livenessProbe", "/healthz"),
                        ("readinessProbe", "/readyz")):
        assert container[probe]["httpGet"] == {"path": path, "port": "http"}, probe
    assert container["resources"]["requests"] and container["resources"]["limits"]["memory"]
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    assert mounts["/tmp"] == "tmp" and mounts["/var/lib/triage"] == "data"
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert "emptyDir" in volumes["tmp"] and "emptyDir" in volumes["data"]
    assert pod["terminationGracePeriodSeconds"] >= 30
    assert pod["serviceAccountName"] == FULLNAME
    for name in ("HOME", "MPLCONFIGDIR", "XDG_CACHE_HOME"):
        assert _env(objects)[name]["value"].startswith("/tmp"), name
    # platformdirs puts the SQLite store under XDG_DATA_HOME: on the data volume, not in /tmp
    assert _env(objects)["XDG_DATA_HOME"]["value"] == "/var/lib/triage"


def test_a_scenario_and_an_existing_claim_reach_the_pod(helm: Helm) -> None:
    objects = helm.render((), ("scenario=checkout-oom", "persistence.existingClaim=triage-data"))
    container = _container(objects)
    assert container["args"] == ["--port", "3000", "--scenario", "checkout-oom"]
    volumes = {v["name"]: v for v in one(objects, "Deployment")["spec"]["template"]["spec"][
        "volumes"]}
    assert volumes["data"] == {"name": "data",
                               "persistentVolumeClaim": {"claimName": "triage-data"}}


def test_the_pdb_protects_the_bot_without_blocking_drains(render: Render, helm: Helm) -> None:
    pdb = one(render("pdb"), "PodDisruptionBudget")
    assert pdb["spec"]["minAvailable"] == 1 and "maxUnavailable" not in pdb["spec"]
    assert pdb["spec"]["selector"]["matchLabels"] == \
        one(render("pdb"), "Deployment")["spec"]["selector"]["matchLabels"]
    default = one(helm.render((), ("podDisruptionBudget.enabled=true",)), "PodDisruptionBudget")
    assert default["spec"] == {"maxUnavailable": 1, "selector": pdb["spec"]["selector"]}


# --- security invariants --------------------------------------------------------------------


@pytest.mark.parametrize("value_set", VALUE_SETS)
def test_the_pod_runs_locked_down(render: Render, value_set: str) -> None:
    objects = render(value_set)
    pod = one(objects, "Deployment")["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert not pod.get("hostNetwork") and not pod.get("hostPID") and not pod.get("hostIPC")
    security = _container(objects)["securityContext"]
    assert security["runAsNonRoot"] is True
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["privileged"] is False
    assert security["capabilities"] == {"drop": ["ALL"]}
    assert not any("hostPath" in v for v in pod["volumes"])


def test_the_platform_may_choose_the_uid_but_not_weaken_the_rest(helm: Helm) -> None:
    objects = helm.render((), ("securityContext.runAsUser=null", "securityContext.fsGroup=null",
                               "securityContext.runAsGroup=null"))
    pod = one(objects, "Deployment")["spec"]["template"]["spec"]
    assert pod["securityContext"] == {"runAsNonRoot": True,
                                      "seccompProfile": {"type": "RuntimeDefault"}}
    for weaker in ("securityContext.readOnlyRootFilesystem=false",
                   "securityContext.privileged=true", "securityContext.runAsUser=0"):
        result = helm.template((), (weaker,))
        assert result.returncode != 0, weaker
        assert "/securityContext" in result.stderr, result.stderr


@pytest.mark.parametrize("value_set", VALUE_SETS)
def test_every_role_is_read_only_and_never_reads_secrets(render: Render, value_set: str) -> None:
    objects = render(value_set)
    roles = of_kind(objects, "ClusterRole") + of_kind(objects, "Role")
    assert roles
    for role in roles:
        name = f"{role['kind']}/{role['metadata']['name']}"
        assert "aggregationRule" not in role, name
        for rule in role["rules"]:
            resources = set(rule.get("resources", []))
            assert not resources & {"secrets", "secrets/*", "*"}, (name, rule)
            assert not any("*" in r for r in resources), (name, rule)
            assert "*" not in rule.get("apiGroups", []), (name, rule)
            assert not set(rule["verbs"]) & WRITE_VERBS, (name, rule)
            assert set(rule["verbs"]) <= {"get", "list", "watch"}, (name, rule)
            assert "nonResourceURLs" not in rule, (name, rule)
    names = {(r["kind"], r["metadata"]["name"]) for r in roles}
    service_account = one(objects, "ServiceAccount")["metadata"]["name"]
    for binding in of_kind(objects, "ClusterRoleBinding") + of_kind(objects, "RoleBinding"):
        assert (binding["roleRef"]["kind"], binding["roleRef"]["name"]) in names
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": service_account,
                                        "namespace": NAMESPACE}]


def test_rbac_can_be_left_to_the_platform_team(helm: Helm) -> None:
    objects = helm.render((), ("rbac.create=false", "serviceAccount.create=false",
                               "serviceAccount.name=triage-reader"))
    kinds = {o["kind"] for o in objects}
    assert not kinds & {"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
                        "ServiceAccount"}
    assert one(objects, "Deployment")["spec"]["template"]["spec"]["serviceAccountName"] == \
        "triage-reader"


# --- bad values are refused with a message that says what to fix ----------------------------


@pytest.mark.parametrize(("values", "expected"), [
    (("mode=grpc",), ["/mode", "socket", "http"]),
    (("replicaCount=two",), ["/replicaCount", "integer"]),
    (("rbac.scope=everything",), ["/rbac/scope", "cluster", "namespaces"]),
    (("slack.botToken=xapp-wrong-kind",), ["/slack/botToken", "xoxb-"]),
    (("slack.appToken=xoxb-wrong-kind",), ["/slack/appToken", "xapp-"]),
    (("httpPort=80",), ["/httpPort", "minimum"]),
    (("unknownKey=1",), ["unknownKey"]),
    (("config.logLevel=LOUD",), ["/config/logLevel", "INFO"]),
    (("config.allowedChannels={general}",), ["/config/allowedChannels", "general"]),
    (("elasticsearch.url=https://elastic:changeme@es:9200",), ["/elasticsearch/url"]),
    (("prometheus.url=prometheus:9090",), ["/prometheus/url"]),
    (("rbac.namespaces={Shop_Prod}",), ["/rbac/namespaces", "Shop_Prod"]),
    (("podDisruptionBudget.minAvailable=half",), ["/podDisruptionBudget/minAvailable"]),
    (("metrics.serviceMonitor.interval=often",), ["/metrics/serviceMonitor/interval"]),
], ids=lambda v: v[0] if isinstance(v, tuple) else None)
def test_the_schema_rejects_bad_values_clearly(helm: Helm, values: tuple[str, ...],
                                               expected: list[str]) -> None:
    result = helm.template((), values)
    assert result.returncode != 0, f"{values} was accepted"
    assert "values don't meet the specifications of the schema" in result.stderr
    for fragment in expected:
        assert fragment in result.stderr, (fragment, result.stderr)


@pytest.mark.parametrize(("values", "expected"), [
    (("rbac.scope=namespaces",), "rbac.namespaces is empty"),
    (("ingress.enabled=true", "ingress.host=t.example.com"), "ingress.enabled needs mode=http"),
    (("mode=http", "ingress.enabled=true"), "ingress.enabled needs ingress.host"),
    (("metrics.enabled=false", "metrics.serviceMonitor.enabled=true"),
     "metrics.serviceMonitor.enabled needs metrics.enabled=true"),
    (("podDisruptionBudget.enabled=true", "podDisruptionBudget.minAvailable=1",
      "podDisruptionBudget.maxUnavailable=1"), "not both"),
    (("config.extra.GITHUB_TOKEN=x",), "config.extra.GITHUB_TOKEN looks like a credential"),
    (("openai.baseUrl=http://ollama:11434/v1",), "openai.baseUrl needs openai.apiKey"),
], ids=lambda v: v[0] if isinstance(v, tuple) else None)
def test_contradictory_values_fail_with_the_value_to_change(helm: Helm, values: tuple[str, ...],
                                                            expected: str) -> None:
    result = helm.template((), values)
    assert result.returncode != 0, f"{values} was accepted"
    assert expected in result.stderr, result.stderr


def test_the_schema_describes_every_default_value() -> None:
    """No key in values.yaml escapes the schema (additionalProperties false all the way)."""
    schema = json.loads((CHART / "values.schema.json").read_text())
    values = yaml.safe_load((CHART / "values.yaml").read_text())

    def walk(node: Any, where: dict[str, Any], path: str) -> None:
        if not isinstance(node, dict) or where.get("type") != "object":
            return
        properties = where.get("properties")
        if properties is None:  # a free-form map (annotations, extra, resources limits)
            return
        assert where.get("additionalProperties") is False, f"{path or '/'} accepts unknown keys"
        for key, value in node.items():
            assert key in properties, f"{path}/{key} is not in values.schema.json"
            walk(value, properties[key], f"{path}/{key}")

    walk(values, schema, "")


# --- NOTES.txt: the next step ----------------------------------------------------------------


def test_notes_tell_the_next_step_for_socket_mode(helm: Helm) -> None:
    notes = helm.notes()
    assert "Socket Mode" in notes and "/invite @Triage" in notes
    assert "WARNING: the bot cannot connect to Slack yet" in notes
    assert "slack.botToken" in notes and "slack.appToken" in notes
    assert "kubectl auth can-i get secrets" in notes
    assert "offline analyzer" in notes


def test_notes_tell_the_next_step_for_http_mode(helm: Helm) -> None:
    notes = helm.notes(VALUE_SETS["http"])
    assert "https://triage.example.com/slack/events" in notes
    assert "WARNING" not in notes
    plain = helm.notes((), ("mode=http", "slack.existingSecret=s"))
    assert "port-forward svc/" in plain and "/slack/events" in plain
    assert "WARNING" not in plain


def test_notes_name_the_namespaces_of_namespaced_rbac(helm: Helm) -> None:
    notes = helm.notes(VALUE_SETS["namespaced-rbac"])
    assert "limited to: shop, payments" in notes
    assert "-n shop" in notes


def test_helm_is_v3_or_newer(helm: Helm) -> None:
    version = helm.run("version", "--short", check=True).stdout.strip()
    assert version.startswith(("v3.", "v4.")), version
    assert os.access(helm.binary, os.X_OK)
