"""A server's own limit, told only by the clients it refuses (a search cluster at its shard
cap, a cache full under a policy that evicts nothing), and an image too big for the image
filesystem of the nodes it is pulled onto."""

from __future__ import annotations

from engines.analyzer.detectors import image, run_detectors, server_limits
from engines.analyzer.facts import Ref
from tests.engines.analyzer.helpers import (
    describe,
    event,
    events,
    facts_of,
    pattern,
    patterns,
    ranked,
    scope_of,
    workload,
    workloads,
)

SHARDS = ('[output:es:es.0] error: Output {"create":{"status":400,"error":{"type":'
          '"validation_exception","reason":"Validation Failed: 1: this action would add [2] '
          'shards, but this cluster currently has [1999]/[2000] maximum normal shards open;"}}}')
FULL = "SETEX sess:<HEX> <NUM>: OOM command not allowed when used memory > 'maxmemory'."


def _search_cluster(*extra: dict[str, object]) -> list[dict[str, object]]:
    return [workload("search-logs", "observability", kind="StatefulSet",
                     images=["docker.elastic.co/elasticsearch/elasticsearch:8.12.2"]),
            workload("log-shipper", "observability", kind="DaemonSet"), *extra]


def test_a_search_cluster_at_its_shard_cap_is_exhausted_though_only_its_clients_say_so() -> None:
    facts = facts_of(workloads(*_search_cluster()), patterns(
        pattern(SHARDS, service="log-shipper", pod="log-shipper-x7k2p", count=60)))
    report = "the logs of every service stopped showing up in the search UI at midnight"
    (found,) = server_limits.detect(facts, scope_of(facts, report))
    assert (found.category, found.culprit) == (
        "resource_exhaustion", Ref("StatefulSet", "observability", "search-logs"))
    assert found.affects == (Ref("DaemonSet", "observability", "log-shipper"),)
    assert "max_shards_per_node" in found.fix and "retention" in found.fix
    two = facts_of(workloads(*_search_cluster(workload(
        "search-audit", "audit", kind="StatefulSet",
        images=["docker.elastic.co/elasticsearch/elasticsearch:8.12.2"]))),
        patterns(pattern(SHARDS, service="log-shipper", pod="log-shipper-x7k2p")))
    assert server_limits.detect(two, scope_of(two, report)) == []  # which one is not known


def test_a_full_cache_that_evicts_nothing_is_the_failing_dependency_of_each_client() -> None:
    facts = facts_of(
        workloads(workload("sessions-redis", "cache", kind="StatefulSet",
                           images=["docker.io/library/redis:7.2.4"]),
                  workload("session-api", "accounts"), workload("cart-api", "shop"),
                  workload("accounts-pg", "accounts", kind="StatefulSet",
                           images=["docker.io/library/postgres:16.2"])),
        patterns(pattern(f"cache write failed: {FULL} falling back to postgres",
                         service="session-api", pod="session-api-7d9f8-2gp7z", count=101),
                 pattern(f"cart cache: {FULL} (serving from postgres)", service="cart-api",
                         pod="cart-api-6c5d4-tzmbm", count=52)))
    report = "logins are slow and carts empty themselves since 14:00"
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    assert (found[0].category, found[0].culprit.name) == ("dependency_failure", "sessions-redis")
    assert set(found[0].affects) == {Ref("Deployment", "accounts", "session-api"),
                                     Ref("Deployment", "shop", "cart-api")}
    assert "eviction policy" in found[0].fix


NODE = "ip-10-90-32-203.us-west-2.compute.internal"
RANKER = "registry.example.com/ml/ranker:2.4.0-cuda12.1"
NO_ROOM = (f'Failed to pull image "{RANKER}": failed to extract layer sha256:9b2f: write '
           "/var/lib/containerd/snapshots/240/fs/lib/libtorch_cuda.so: no space left on device")
GC = "Failed to garbage collect required amount of images. Attempted to free 10737418240 bytes"


def test_an_image_too_big_for_its_nodes_fills_them_and_their_failing_gc_is_its_effect() -> None:
    waiting = describe("ranker-5f8b9-kqsdp", "ml", owner="ranker", status="ImagePullBackOff",
                       node=NODE, containers=[{
                           "name": "ranker", "image": RANKER, "ready": False,
                           "state": {"waiting": "ImagePullBackOff",
                                     "message": f'Back-off pulling image "{RANKER}"'}}])
    facts = facts_of(
        workloads(workload("ranker", "ml", ready="6/10", images=[RANKER],
                           pods={"statuses": {"ImagePullBackOff": 4, "Running": 6}})),
        waiting,
        events(event("Failed", "Pod/ranker-5f8b9-kqsdp", NO_ROOM, namespace="ml"),
               event("FreeDiskSpaceFailed", f"Node/{NODE}", GC, namespace="default"),
               event("ImageGCFailed", f"Node/{NODE}", GC.lower(), namespace="default")))
    report = "the new ranker pods on the new GPU nodes never start; is the driver broken?"
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    assert (found[0].category, found[0].culprit.name) == ("image_pull", "ranker")
    assert not found[0].demoted_because
    assert Ref("Node", "", NODE) in found[0].affects
    assert "image filesystem" in found[0].fix
    plain = facts_of(workloads(workload("ranker", "ml", images=[RANKER], pods={
        "statuses": {"ImagePullBackOff": 4}})), events(event(
            "Failed", "Pod/ranker-5f8b9-kqsdp", f'Failed to pull image "{RANKER}": not found',
            namespace="ml")))
    (missing,) = image.detect(plain, scope_of(plain, report))
    assert not missing.affects and "image that exists" in missing.fix
