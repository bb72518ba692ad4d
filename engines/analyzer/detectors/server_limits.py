"""A server's own limit or state, told by the clients it refuses.

Some servers refuse a client's request for a limit that is the server's, not the client's:
a search cluster at its shard cap refuses every new index ("this cluster currently has
[999]/[1000] maximum normal shards open"), so a log shipper's daily indices are never made
and ingestion stops across the fleet, while the cluster stays green and says nothing in its
own log. A cache at its memory cap that evicts nothing, or an object store with too few
drives online, refuses writes the same way. The client is only the messenger: the culprit is
the server, which the line names by host or by name, or else the one workload that runs
such a server.
"""

from __future__ import annotations

from engines.analyzer.candidates import Candidate
from engines.analyzer.detectors._common import LOG_TOOLS, METRICS
from engines.analyzer.detectors._logs import by_workload, sightings
from engines.analyzer.detectors._targets import hosts_in, named, resolve, target_workload
from engines.analyzer.facts import Facts, Ref
from engines.analyzer.scope import Scope

# What a server says when a limit or a state of its own refuses a request, by what it is.
CAPS: dict[str, tuple[str, ...]] = {
    "shards": ("maximum normal shards open", "maximum shards open", "max_shards_per_node",
               "shards_per_node", "too many shards"),
    # a cache at its memory cap whose policy evicts nothing refuses every write
    "memory": ("oom command not allowed", "used memory > 'maxmemory'"),
    # an erasure-coded object store with too few drives online refuses writes
    "write quorum": ("xminiowritequorum", "write quorum", "insufficient number of drives online",
                     "multiple disk failures unable to write"),
}
PHRASES = tuple(p for phrases in CAPS.values() for p in phrases)
# The servers that say so, by the images they run: the words name the server's software.
SERVED_BY = {"shards": ("elasticsearch", "opensearch"), "memory": ("redis", "valkey", "keydb"),
             "write quorum": ("minio",)}
# A budget the server counts out is its exhaustion; a state in which it refuses writes makes
# it the failing dependency of its clients.
CATEGORY = {"shards": "resource_exhaustion", "memory": "dependency_failure",
            "write quorum": "dependency_failure"}
WATCH = {"shards": "elasticsearch_cluster_health_active_shards",  # the figure that nears it
         "memory": "redis_memory_used_bytes", "write quorum": "minio_cluster_drive_offline_total"}
FIXES = {
    "shards": ("delete or close old indices (shorten the retention), use fewer shards and "
               "replicas per index or roll indices by size instead of by day, and only then "
               "raise cluster.max_shards_per_node or add data nodes"),
    "memory": ("give it an eviction policy that fits a cache (allkeys-lru, volatile-lru), set "
               "TTLs on what its clients write, or raise maxmemory and the pod's memory with it"),
    "write quorum": ("bring the offline drives or their node back (or replace them and let it "
                     "heal) so that enough drives of each erasure set are online again"),
}
SEEN_BY_ANOTHER = 0.25  # each further client that reports the same refusal


def _runs(facts: Facts, ref: Ref, cap: str) -> bool:
    """Whether the workload runs a server of the kind that says `cap` (by its images)."""
    workload = facts.workloads.get(ref)
    return workload is not None and any(
        server in image.lower() for image in workload.images for server in SERVED_BY[cap])


def _server(text: str, client: Ref, facts: Facts, cap: str) -> Ref | None:
    """The server that refused the client: the one the line names (by host or by name)
    that runs such a server, or else the one workload of the cluster that does."""
    hosts = [target_workload(resolve(host, port, client.namespace, facts), facts)
             for host, port in hosts_in(text)]
    said = [r for r in (*hosts, *named(text, client, facts)) if r is not None and r != client
            and _runs(facts, r, cap)]
    if said:
        return said[0]
    running = [r for r in facts.workloads if r != client and _runs(facts, r, cap)]
    return running[0] if len(running) == 1 else None


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    found: dict[Ref, Candidate] = {}
    for client, seen in by_workload(sightings(facts, scope, PHRASES)).items():
        sighting = seen[0]
        cap = next(k for k, phrases in CAPS.items() if sighting.phrase in phrases)
        if (server := _server(sighting.pattern.text, client, facts, cap)) is None:
            continue
        if (entry := found.get(server)) is None:
            entry = found[server] = Candidate(CATEGORY[cap], server)
            entry.fix = (f"{server.kind} {server.namespace}/{server.name} refuses its clients "
                         f"for its own {cap}: {FIXES[cap]}.")
            entry.follow(METRICS, {"metric": WATCH[cap], "since": "3d"},
                         f"see {server.name}'s {cap} over time")
        count = sighting.pattern.count
        told = f"{sighting.quote[:90]!r}" + (f" ×{count}" if count > 1 else "")
        weight = SEEN_BY_ANOTHER if entry.affects else 0.6
        entry.affects = tuple(dict.fromkeys((*entry.affects, client)))
        entry.add(weight * sighting.factor, f"{server.name} refuses {client.name} for its own "
                  f"{cap}: {told}", (sighting.quote, sighting.phrase), sighting.pattern.source,
                  LOG_TOOLS, f"server-cap-{cap}-{client.name}")
    return list(found.values())
