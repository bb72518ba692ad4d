"""The chart's RBAC is exactly what the tools read: no less (a tool would get 403) and no more
(the bot would hold rights it never uses).

`tools.sources.kube_api` declares every kind the tools may read; `required_rules()` turns it
into RBAC. Here (a) the rendered ClusterRole (and the namespaced Roles) must equal it both
ways, the declaration must match the sandbox's kinds and real Kubernetes API paths, and
(b) every cluster tool is run over every bundled scenario through a recording source, and
each (kind, verb) it asked for must be granted; each declared kind must be asked for by some
tool, or the role grants something unused.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from engines.errors import BackendError, TriageError
from tests.helm._recording import (
    EmptyLogs,
    EmptyMetrics,
    RecordingCluster,
    argument_sets,
    index,
    window,
)
from tests.helm.conftest import Helm, of_kind, one
from tools.catalog import ALL_TOOLS
from tools.context import ToolContext
from tools.kubernetes import KUBERNETES_TOOLS
from tools.registry import Tool
from tools.scenarios import Scenario, bundled_ids, load_scenario
from tools.sources import kube_api, sandbox
from tools.sources.base import Sources
from tools.sources.kube_api import (
    POD_LOG,
    RESOURCES,
    Permission,
    permissions_of,
    required_permissions,
    required_rules,
    resource_for,
)
from tools.sources.sandbox import SandboxCluster

Render = Callable[[str], list[dict[str, Any]]]


def _describe(permissions: set[Permission] | frozenset[Permission]) -> str:
    return ", ".join(f"{verb} {group or 'core'}/{resource}"
                     for group, resource, verb in sorted(permissions))


def _assert_same(granted: frozenset[Permission], needed: frozenset[Permission], what: str) -> None:
    lacking = needed - granted
    unused = granted - needed
    assert not lacking, f"{what} lacks what the tools need: {_describe(lacking)}"
    assert not unused, f"{what} grants what no tool needs: {_describe(unused)}"


# --- (a) the chart against the declaration ----------------------------------------------------


def test_the_cluster_role_grants_exactly_the_required_rules(render: Render) -> None:
    [role] = of_kind(render("defaults"), "ClusterRole")
    _assert_same(permissions_of(role["rules"]), required_permissions(), "the ClusterRole")
    _assert_same(permissions_of(required_rules()), required_permissions(), "required_rules()")


def test_namespaced_rbac_splits_the_same_rules_between_roles_and_a_cluster_role(
    render: Render,
) -> None:
    objects = render("namespaced-rbac")
    roles = of_kind(objects, "Role")
    assert sorted(r["metadata"]["namespace"] for r in roles) == ["payments", "shop"]
    for role in roles:
        _assert_same(permissions_of(role["rules"]), required_permissions("namespaced"),
                     f"Role in {role['metadata']['namespace']}")
    bindings = of_kind(objects, "RoleBinding")
    assert sorted(b["metadata"]["namespace"] for b in bindings) == ["payments", "shop"]
    [cluster_role] = of_kind(objects, "ClusterRole")
    _assert_same(permissions_of(cluster_role["rules"]), required_permissions("cluster"),
                 "the cluster-scoped ClusterRole")
    assert required_permissions("namespaced") | required_permissions("cluster") == \
        required_permissions()
    config = one(objects, "ConfigMap")["data"]
    assert config["TRIAGE_NAMESPACES"] == "shop,payments"  # the bot must stay inside them


def test_namespaced_rbac_can_leave_out_every_cluster_wide_right(helm: Helm) -> None:
    objects = helm.render(("namespaced-values.yaml",), ("rbac.clusterScopedRead=false",))
    assert not of_kind(objects, "ClusterRole") and not of_kind(objects, "ClusterRoleBinding")
    assert len(of_kind(objects, "Role")) == 2


def test_the_declaration_mirrors_the_sandbox_kinds() -> None:
    assert [r.kind for r in RESOURCES] == list(sandbox.KINDS)
    assert {r.kind for r in RESOURCES if not r.namespaced} == set(sandbox.CLUSTER_SCOPED)
    assert len({r.plural for r in RESOURCES}) == len(RESOURCES)


def test_the_declaration_refuses_secrets_and_unknown_kinds() -> None:
    for kind in ("Secret", "secrets", " secret "):
        with pytest.raises(BackendError, match="never read"):
            resource_for(kind)
    with pytest.raises(BackendError, match="unknown kind"):
        resource_for("CustomThing")
    assert resource_for("pods") is resource_for("Pod") is resource_for("pod")
    assert not any("secret" in p[1] for p in required_permissions())


def test_the_declared_endpoints_are_real_kubernetes_api_paths() -> None:
    """Group, version and plural of each kind as the official client calls them."""
    import kubernetes.client.api

    sources = "\n".join(p.read_text() for p in
                        Path(kubernetes.client.api.__file__).parent.glob("*_api.py"))
    for res in RESOURCES:
        paths = [res.path()]  # the collection across the cluster (all namespaces)
        if res.namespaced:
            paths += [res.path("{namespace}"), res.path("{namespace}", "{name}")]
        else:
            paths.append(res.path(name="{name}"))
        for path in paths:
            assert f"'{path}'" in sources, f"{res.kind}: no such API path {path}"
    assert f"'{POD_LOG.path('{namespace}', '{name}')}'" in sources


def test_the_declared_api_versions_have_kubernetes_schemas(kube_validate: Any) -> None:
    validate = kube_validate
    for res in RESOURCES:
        obj = {"apiVersion": res.api_version, "kind": res.kind, "metadata": {"name": "x"}}
        for version in ("1.27.0", "1.37.0"):
            try:
                validate.validate(obj, version, strict=True)
            except validate.ValidationError:
                pass  # a bare object may be incomplete; the schema exists, which is the point
            except validate.SchemaNotFoundError as exc:
                pytest.fail(exc.message)


def test_each_source_call_maps_to_one_permission() -> None:
    assert kube_api.permission_for("list_objects", "Deployment") == ("apps", "deployments", "list")
    assert kube_api.permission_for("get_object", "nodes") == ("", "nodes", "get")
    assert kube_api.permission_for("pod_logs", "Pod") == ("", "pods/log", "get")


# --- (b) what the tools actually call --------------------------------------------------------


def fast_load(scenario_id: str) -> Scenario:
    """A bundled scenario, its cluster.yaml parsed with libyaml when PyYAML has it.

    `Scenario.cluster_objects` parses with the pure-Python loader, several seconds for all
    the scenarios; the C loader gives the same objects ten times faster. Filling the cached
    property is a test-only shortcut that keeps this file inside its time budget.
    """
    scenario = load_scenario(scenario_id)
    file = scenario.path / "cluster.yaml"
    loader = getattr(yaml, "CSafeLoader", None)
    cached = isinstance(inspect.getattr_static(Scenario, "cluster_objects", None),
                        functools.cached_property)
    if loader is not None and cached and file.is_file():
        documents = yaml.load_all(file.read_text(), Loader=loader)
        scenario.__dict__["cluster_objects"] = [d for d in documents if isinstance(d, dict)]
    return scenario


def every_tool(kubernetes: tuple[Tool, ...]) -> tuple[Tool, ...]:
    """The Kubernetes tools, then every other tool of the catalog: a metric tool that looks a
    workload's pods up reads the cluster too, and needs the same RBAC."""
    return tuple({t.name: t for t in (*kubernetes, *ALL_TOOLS)}.values())


@pytest.fixture(scope="module")
def recorded() -> dict[str, Any]:
    """Every tool over every bundled scenario, its cluster reads through the recording source."""
    kubernetes = KUBERNETES_TOOLS
    result = exercise(every_tool(kubernetes))
    result["kubernetes"] = kubernetes
    return result


def exercise(tools: tuple[Tool, ...]) -> dict[str, Any]:
    """Run each tool with many argument sets over every bundled scenario; record what it read.

    Tools are called as the toolset calls them (arguments validated, then the function with
    a context), without the toolset's rendering, which costs time and reads nothing.
    """
    assert tools, "tools.kubernetes defines no tools"
    by_tool: dict[str, Counter[Permission]] = {t.name: Counter() for t in tools}
    successes: Counter[str] = Counter()
    failures: dict[str, str] = {}
    calls = 0
    scenario_ids = bundled_ids()
    started = time.process_time()

    async def run_scenario(turn: int, scenario_id: str) -> None:
        nonlocal calls
        scenario = fast_load(scenario_id)
        cluster = SandboxCluster(scenario)  # the cluster alone: logs and metrics cost time
        objects = index(scenario.cluster_objects)
        for tool in tools:
            recorder = RecordingCluster(cluster)
            context = ToolContext(now=scenario.now, sources=Sources(
                cluster=recorder, logs=EmptyLogs(), metrics=EmptyMetrics()))
            sets = window(argument_sets(tool, objects), turn, len(scenario_ids))
            for arguments in sets:
                calls += 1
                try:
                    await tool.function(context, **tool.validate(arguments))
                except TriageError as exc:  # a wrong guess at arguments: still a real read
                    failures.setdefault(tool.name, f"{arguments}: {exc}")
                except Exception as exc:  # a tool bug; the toolset would report it likewise
                    failures.setdefault(tool.name, f"{arguments}: crashed: {exc!r}")
                else:
                    successes[tool.name] += 1
            by_tool[tool.name].update(recorder.seen)

    for turn, scenario_id in enumerate(scenario_ids):
        asyncio.run(run_scenario(turn, scenario_id))
    seen: Counter[Permission] = sum(by_tool.values(), Counter())
    return {"tools": tools, "seen": seen, "by_tool": by_tool, "successes": successes,
            "failures": failures, "calls": calls, "cpu_seconds": time.process_time() - started}


def test_every_cluster_tool_was_exercised(recorded: dict[str, Any]) -> None:
    kubernetes = recorded["kubernetes"]
    never = {t.name: recorded["failures"].get(t.name) for t in kubernetes
             if not recorded["successes"][t.name]}
    assert not never, f"these tools never succeeded over the scenarios (a first error): {never}"
    silent = [t.name for t in kubernetes if not recorded["by_tool"][t.name]]
    assert not silent, f"these Kubernetes tools never read the cluster: {silent}"


def test_every_call_the_tools_make_is_granted(render: Render, recorded: dict[str, Any]) -> None:
    [role] = of_kind(render("defaults"), "ClusterRole")
    granted = permissions_of(role["rules"])
    for tool, seen in recorded["by_tool"].items():
        lacking = set(seen) - granted
        assert not lacking, f"{tool} needs what the ClusterRole lacks: {_describe(lacking)}"


def test_every_granted_kind_is_read_by_some_tool(recorded: dict[str, Any]) -> None:
    """The role grants get/list/watch per kind; a kind no tool lists or gets is unused."""
    used = {(group, resource) for group, resource, _ in recorded["seen"]}
    granted = {(group, resource) for group, resource, _ in required_permissions()}
    unused = granted - used
    assert not unused, (
        "kube_api declares kinds that no tool reads over the bundled scenarios (narrow "
        f"the declaration, or add the tool that reads them): {sorted(r for _, r in unused)}")


def test_the_recording_run_stays_fast(recorded: dict[str, Any]) -> None:
    assert recorded["calls"] > 0
    seconds = recorded["cpu_seconds"]
    assert seconds < 10, f"{recorded['calls']} tool calls took {seconds:.1f}s of CPU"


def test_the_recorder_maps_calls_to_permissions() -> None:
    """The wrapper itself: each source method is recorded with the right verb."""
    recorder = RecordingCluster(SandboxCluster(load_scenario(bundled_ids()[0])))

    async def calls() -> None:
        pod = (await recorder.list_objects("pods"))[0]["metadata"]
        await recorder.get_object("Pod", pod["namespace"], pod["name"])
        await recorder.list_objects("Node")
        with contextlib.suppress(BackendError):  # no log file still asked for pods/log
            await recorder.pod_logs(pod["namespace"], pod["name"])

    asyncio.run(calls())
    assert set(recorder.seen) == {("", "pods", "list"), ("", "pods", "get"),
                                  ("", "nodes", "list"), ("", "pods/log", "get")}
