"""Kubernetes configuration evidence: the ConfigMaps and Secrets a workload mounts.

A client that trusts a stale CA bundle fails TLS against a server whose new certificate is
valid: the fault is the client's trust store, one hop away from where the errors point.
The facts that decide are which ConfigMaps (and Secrets, by name only) the workload reads,
through which volume, path, env var or key; what certificates a bundle holds and until
when; and whether the bundle changed after the pods read it at start. Secret contents are
never read (the kind is not even requested); a ConfigMap's values are not shown either,
only their key names and, for PEM certificates, their subjects, issuers and validity.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tools._k8s_common import last_change, meta, when
from tools._k8s_templates import Workload, containers_of, find_workload
from tools._pem import certificates, has_private_key, looks_like_pem
from tools._toolkit import check_namespace, cut, finish
from tools.context import ToolContext
from tools.redact import redact_env
from tools.registry import tool
from tools.scenarios import parse_time
from tools.sources.base import KubeObject

_TLS_ENV = re.compile(r"CERT|(^|_)CA(_|$)|TLS|SSL|TRUST|BUNDLE", re.IGNORECASE)


@dataclass
class _Reference:
    """One ConfigMap or Secret the workload reads, and every way it reads it."""

    kind: str  # ConfigMap or Secret
    name: str
    uses: list[str] = field(default_factory=list)
    keys: set[str] = field(default_factory=set)
    whole: bool = False  # a volume or envFrom without items: every key
    optional: bool = False
    frozen: bool = False  # read by env or a subPath mount: never updated in a running pod


@tool(describe="Checking the config and trust bundles {namespace}/{workload} mounts")
async def k8s_mounted_config(ctx: ToolContext, namespace: str, workload: str) -> dict[str, Any]:
    """Show the ConfigMaps and Secrets a workload reads (as volumes with their mount paths,
    env vars, envFrom; which keys), whether each ConfigMap and key exists, when it last
    changed against when the pods started, and for PEM certificate bundles (CA files,
    trust stores) each certificate's subject, issuer and expiry. Secrets by name only.

    Args:
        namespace: The workload's namespace.
        workload: Deployment, StatefulSet, DaemonSet, Job or CronJob name, or a pod name.
    """
    check_namespace(ctx, namespace)
    found = await find_workload(ctx, namespace, workload)
    references = _references(found.template)
    result: dict[str, Any] = {}
    if found.note:
        result["note"] = found.note
    result["workload"] = found.ref
    findings: list[str] = []
    rows, read = [], []
    for reference in references.values():
        if reference.kind == "Secret":
            rows.append(_secret_row(reference))
            continue
        config_map = await ctx.cluster.get_object("ConfigMap", namespace, reference.name)
        if config_map is not None:
            read.append(config_map)
        row, problems = _config_map_row(ctx, reference, config_map, found)
        rows.append(row)
        findings += problems
    result["mounted"] = cut(rows, 15) or "no ConfigMap or Secret is mounted or referenced"
    tls_env = [f"{e['name']}={e.get('value', '')}" for c in containers_of(found.template)
               for e in redact_env(c.get("env")) if _TLS_ENV.search(e.get("name", ""))]
    if tls_env:
        result["tls_env"] = cut(list(dict.fromkeys(tls_env)), 8)
    if findings:
        result["findings"] = findings
    return finish(result, [found.template, *read])


def _references(template: dict[str, Any]) -> dict[tuple[str, str], _Reference]:
    """Every ConfigMap and Secret the pod spec names, through volumes, env and envFrom."""
    found: dict[tuple[str, str], _Reference] = {}

    def ref(kind: str, name: Any) -> _Reference:
        return found.setdefault((kind, str(name)), _Reference(kind, str(name)))

    mounts: dict[str, list[tuple[str, str, bool]]] = {}
    for container in containers_of(template):
        for mount in container.get("volumeMounts") or []:
            mounts.setdefault(str(mount.get("name")), []).append(
                (str(container.get("name")), str(mount.get("mountPath")),
                 bool(mount.get("subPath"))))
    for volume in template.get("volumes") or []:
        sources = [volume, *((volume.get("projected") or {}).get("sources") or [])]
        for source in sources:
            for key, kind in (("configMap", "ConfigMap"), ("secret", "Secret")):
                body = source.get(key)
                if body is None:
                    continue
                item = ref(kind, body.get("name") or body.get("secretName"))
                item.optional |= bool(body.get("optional"))
                if body.get("items"):
                    item.keys |= {str(i.get("key")) for i in body["items"]}
                else:
                    item.whole = True
                places = mounts.get(str(volume.get("name")), [])
                item.uses += [f"volume {volume.get('name')} at {path} ({container}"
                              f"{', subPath' if sub else ''})" for container, path, sub in places]
                item.frozen |= any(sub for *_, sub in places)
                if not places:
                    item.uses.append(f"volume {volume.get('name')} (mounted by no container)")
    for container in containers_of(template):
        for env in container.get("env") or []:
            source = env.get("valueFrom") or {}
            for key, kind in (("configMapKeyRef", "ConfigMap"), ("secretKeyRef", "Secret")):
                if body := source.get(key):
                    item = ref(kind, body.get("name"))
                    item.keys.add(str(body.get("key")))
                    item.optional |= bool(body.get("optional"))
                    item.frozen = True
                    item.uses.append(f"env {env.get('name')} ← key {body.get('key')} "
                                     f"({container.get('name')})")
        for env_from in container.get("envFrom") or []:
            for key, kind in (("configMapRef", "ConfigMap"), ("secretRef", "Secret")):
                if body := env_from.get(key):
                    item = ref(kind, body.get("name"))
                    item.whole = item.frozen = True
                    item.optional |= bool(body.get("optional"))
                    prefix = f" prefix {env_from['prefix']}" if env_from.get("prefix") else ""
                    item.uses.append(f"envFrom{prefix} ({container.get('name')})")
    return found


def _secret_row(reference: _Reference) -> dict[str, Any]:
    row: dict[str, Any] = {"secret_name": reference.name, "used_as": reference.uses}
    if reference.keys:
        row["keys_read"] = sorted(reference.keys)
    row["note"] = "a Secret, named only: its contents are never read"
    return row


def _config_map_row(ctx: ToolContext, reference: _Reference, config_map: KubeObject | None,
                    workload: Workload) -> tuple[dict[str, Any], list[str]]:
    row: dict[str, Any] = {"configmap": reference.name, "used_as": reference.uses}
    problems: list[str] = []
    if config_map is None:
        row["exists"] = False
        if not reference.optional:
            problems.append(f"ConfigMap {reference.name} does not exist: pods that need it "
                            "cannot start")
        return row, problems
    data = {**(config_map.get("data") or {}),
            **{k: "" for k in (config_map.get("binaryData") or {})}}
    row["keys"] = cut(sorted(data), 12)
    missing = sorted(reference.keys - set(data))
    if missing and not reference.optional:
        row["missing_keys"] = missing
        problems.append(f"ConfigMap {reference.name} has no key {', '.join(missing)}")
    changed = last_change(config_map)
    stamp = changed[0] if changed else str(meta(config_map).get("creationTimestamp") or "")
    if stamp:
        row["changed" if changed else "created"] = (
            f"{when(stamp, ctx.now)}" + (f" by {changed[1]}" if changed else ""))
    if changed:
        older = _started_before(workload.pods, changed[0])
        if older:
            how = ("env and subPath mounts never update" if reference.frozen
                   else "a process that loaded it at start keeps the old data")
            problems.append(f"ConfigMap {reference.name} changed after {len(older)} of "
                            f"{len(workload.pods)} pods started ({how})")
    bundles: dict[str, list[str]] = {}
    for key in sorted(reference.keys or set(data)) if not reference.whole else sorted(data):
        value = str(data.get(key) or "")
        if not looks_like_pem(value):
            continue
        certs, unreadable = certificates(value)
        bundles[key] = cut([c.text(ctx.now) for c in certs], 8)
        if unreadable:
            bundles[key].append(f"{unreadable} block(s) not readable as X.509")
        if has_private_key(value):
            bundles[key].append("also holds a private key (not read)")
        expired = [c for c in certs if c.not_after <= ctx.now]
        if expired and len(expired) == len(certs):
            problems.append(f"every certificate in {reference.name}/{key} has expired")
        elif expired:
            problems.append(f"{len(expired)} of {len(certs)} certificates in "
                            f"{reference.name}/{key} have expired")
    if bundles:
        row["certificates"] = bundles
    return row, problems


def _started_before(pods: list[KubeObject], stamp: str) -> list[KubeObject]:
    try:
        moment = parse_time(stamp)
    except ValueError:
        return []
    older = []
    for pod in pods:
        start = (pod.get("status") or {}).get("startTime")
        try:
            if start and parse_time(str(start)) < moment:
                older.append(pod)
        except ValueError:
            continue
    return older
