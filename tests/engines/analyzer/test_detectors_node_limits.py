"""A node's shared kernel limits: workloads whose file watchers run out of inotify
instances are the victims of the node agent that holds them."""

from __future__ import annotations

from engines.analyzer.detectors import exhaustion, node_limits, run_detectors
from engines.analyzer.detectors.node_limits import watcher_exhausted
from engines.analyzer.facts import Facts
from tests.engines.analyzer.helpers import (
    facts_of,
    pattern,
    patterns,
    ranked,
    scope_of,
    workload,
    workloads,
)

THUMBS = "inotify_init1 failed: Too many open files (thumbnail cache watcher disabled)"
CONFIG = "ENOSPC: System limit for number of file watchers reached, watch '/etc/config'"
AGENT = "[warn] tail: cannot add inotify watch on /var/log/pods/media_thumbs-1/app.log"
REPORT = "thumbnailer and config-sync keep failing to start since this morning"


def _cluster(*agent_lines: str) -> Facts:
    return facts_of(
        workloads(workload("thumbnailer", "media"), workload("config-sync", "ops"),
                  workload("node-shipper", "logging", kind="DaemonSet", ready="6/6")),
        patterns(pattern(THUMBS, service="thumbnailer", pod="thumbnailer-6c8d9f7b5-a1b2c",
                         count=30),
                 pattern(CONFIG, service="config-sync", pod="config-sync-5b7c8d6f9-d3e4f",
                         count=20),
                 *[pattern(line, service="node-shipper", pod="node-shipper-x7k2p", count=200,
                           level="warn") for line in agent_lines]))


def test_lines_of_a_watcher_without_inotify_instances() -> None:
    assert watcher_exhausted(THUMBS) and watcher_exhausted(CONFIG)
    assert watcher_exhausted("Error: EMFILE: too many open files, watch '/app/flags.json'")
    assert not watcher_exhausted("accept4: too many open files; retrying in 5ms")


def test_the_node_agent_that_holds_the_instances_is_blamed_for_its_victims() -> None:
    facts = _cluster(AGENT)
    (agent,) = node_limits.detect(facts, scope_of(facts, REPORT))
    assert (agent.category, agent.culprit.name) == ("resource_exhaustion", "node-shipper")
    assert {r.name for r in agent.affects} == {"thumbnailer", "config-sync"}
    assert agent.fix.startswith("DaemonSet logging/node-shipper holds its nodes' inotify")
    found = ranked(facts, REPORT, run_detectors(facts, scope_of(facts, REPORT)))
    assert found[0].culprit.name == "node-shipper"


def test_without_an_agent_in_sight_the_victim_asks_who_holds_them() -> None:
    facts = _cluster()
    assert node_limits.detect(facts, scope_of(facts, REPORT)) == []
    thumbs = next(c for c in exhaustion.detect(facts, scope_of(facts, REPORT))
                  if c.culprit.name == "thumbnailer")
    assert any(f.arguments == node_limits.FOLLOW for f in thumbs.followups)
