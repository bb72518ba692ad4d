"""resource_exhaustion: the application runs out of an inner resource: connection pool, file
descriptors, threads, disk space.

Signals: the words applications use when that happens, in the exhausted workload's own
logs, weighed by level, volume and timing (a pool warning that was always there is noise).
A saturated thread pool, worker pool or queue often says so only in figures ("16 of 16
threads active", "pool size = 8, active threads = 8", "queue 500/500", a task "rejected
from" an executor): `saturation` recognises those shapes, whatever the numbers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from engines.analyzer.candidates import Candidate, Clue
from engines.analyzer.detectors._common import (
    EVENT_TOOLS,
    LOG_PATTERNS,
    LOG_TOOLS,
    METRICS,
    POD_LOGS,
    SIGNALS,
    event_workload,
    phrase_in,
    recent_events,
)
from engines.analyzer.detectors._logs import Sighting, by_workload, sightings
from engines.analyzer.detectors._targets import named
from engines.analyzer.detectors.node_limits import FOLLOW, watcher_exhausted
from engines.analyzer.facts import Facts, MetricRow, Ref, owns
from engines.analyzer.scope import Scope

KINDS: dict[str, tuple[str, ...]] = {
    "file descriptors": ("too many open files", "emfile", "out of file descriptors",
                         "file descriptor limit"),
    "inotify watches": ("number of file watchers", "max_user_watches", "max_user_instances"),
    "connection pool": ("pool exhausted", "connection pool exhausted", "pool is exhausted",
                        "timeout waiting for connection from pool",
                        "connection is not available, request timed out",
                        "unable to acquire connection", "could not acquire connection",
                        "no available connection", "cannot get a connection", "pool timeout",
                        "pool limit", "max pool size", "too many connections",
                        "remaining connection slots", "sorry, too many clients",
                        "queuepool limit", "waiting for a connection"),
    "threads": ("unable to create native thread", "unable to create new native thread",
                "rejectedexecutionexception", "taskrejectedexception", "did not accept task",
                "thread pool exhausted", "thread pool is full", "thread pool is exhausted",
                "thread pool saturated", "thread pool is saturated", "threadpool exhausted",
                "executor exhausted", "executor saturated", "executor is saturated",
                "thread starvation", "no available threads", "no idle threads",
                "no free threads", "can't start new thread", "resource temporarily unavailable",
                "pthread_create"),
    "workers": ("no available workers", "no workers available", "no free workers",
                "no idle workers", "all workers are busy", "all workers busy",
                "worker pool exhausted", "worker pool is exhausted", "max_children",
                "worker_connections are not enough"),
    # a server at its own cap of client connections (websockets, streams) turns new ones away
    "connection slots": ("connection limit reached", "connection limit exceeded",
                         "max connections reached", "maximum connections reached",
                         "max_connections reached", "connections limit reached"),
    # channels multiplexed on one AMQP connection: the client that opens one per publish and
    # never closes them uses up the budget it negotiated; the broker only enforces it
    "channels": ("negotiated channel_max", "number of channels opened", "too many channels",
                 "channel limit reached"),
    "disk space": ("no space left on device", "enospc", "disk full", "disk quota exceeded",
                   "not enough space", "insufficient disk space", "filesystem is full",
                   # a search or storage cluster saying its own disks are past their marks
                   "flood stage disk watermark", "high disk watermark",
                   # a message broker that stops taking publishes while its disk is low
                   "free disk space is insufficient", "disk resource limit alarm",
                   "disk alarm", "low on disk"),
    # a client that opens a connection per call runs out of local (ephemeral) ports
    "local ports": ("cannot assign requested address", "eaddrnotavail",
                    "ephemeral ports exhausted", "no ephemeral ports"),
    # a JVM out of room for class metadata (classes generated per request, a class-loader
    # leak): it throws and keeps running, nothing is OOM-killed
    "class metadata space": ("outofmemoryerror: metaspace",
                             "outofmemoryerror: compressed class space"),
    # a database that has used up its transaction ids stops taking writes until vacuumed
    "transaction ids": ("wraparound data loss", "transaction id wraparound",
                        "xid wraparound"),
    "queue capacity": ("queue is full", "queue full", "buffer full", "backlog full",
                       "queue at capacity", "queue is at capacity", "queue capacity reached",
                       "queue limit reached", "queue overflow"),
}
PHRASES = tuple(p for phrases in KINDS.values() for p in phrases)

_UNITS = r"(?:threads?|workers?|executors?|slots?|handlers?|processes|goroutines)"
_BUSY = r"(?:busy|in[- ]use|occupied|taken|exhausted|blocked)"
# How pools and queues say they are full, most telling first; a shape with groups `used`
# and `cap` counts only when used reaches the capacity, whatever the figures.
_SHAPES = (
    # a task refused by a saturated executor: "Task X rejected from ...ThreadPoolExecutor@1f"
    (re.compile(r"\brejected from\s+\S*?(?:executor|pool)\w*", re.I), "threads"),
    # "16 of 16 threads active", "8/8 workers busy", "32 out of 32 pdf-render slots in use"
    (re.compile(rf"(?<![\w.])(?P<used>\d+)\s*(?:/|of|out of)\s*(?P<cap>\d+)\s+"
                rf"(?:[\w-]+\s+)?{_UNITS}\s+(?:are\s+)?(?:currently\s+|all\s+)?"
                rf"(?:active|{_BUSY})\b", re.I), "threads"),
    # "active threads: 16/16", "busy workers = 8 / 8"
    (re.compile(rf"\b(?:active|{_BUSY})\s+{_UNITS}\s*[:=]?\s*(?P<used>\d+)\s*(?:/|of)\s*"
                rf"(?P<cap>\d+)(?![\w.])", re.I), "threads"),
    # java.util.concurrent.ThreadPoolExecutor: "pool size = 16, active threads = 16"
    (re.compile(r"\bpool size\s*=\s*(?P<cap>\d+),\s*active threads\s*=\s*(?P<used>\d+)"
                r"(?![\w.])", re.I), "threads"),
    # "queue 500/500", "queued tasks: 500 of 500", "backlog depth 128/128"
    (re.compile(r"\b(?:queue|queued tasks|backlog)\s*(?:size|length|depth)?\s*[:=]?\s*"
                r"(?P<used>\d+)\s*(?:/|of|out of)\s*(?P<cap>\d+)(?![\w.])", re.I),
     "queue capacity"),
    # Tomcat "All threads (200) are currently busy", "all 16 render workers busy"
    (re.compile(rf"\ball\s+(?:\(?\d+\)?\s+)?(?:[\w-]+\s+)?{_UNITS}\s+(?:\(\d+\)\s+)?"
                rf"(?:are\s+)?(?:currently\s+)?{_BUSY}\b", re.I), "threads"),
)
# "active" alone is also what a healthy pool says at start: it needs a word of trouble.
_TROUBLE = re.compile(r"saturat|exhaust|busy|block|reject|full|starv|capacity|limit|waiting",
                      re.I)
SERVER_FULL = ("too many clients", "too many connections", "remaining connection slots")
PER_CLIENT = ("pg_stat_activity_count",)  # connections by application_name, usename, state
PER_CONNECTION = frozenset({"channels"})  # a budget of each client connection, not the server's
CLIENT_LABELS = ("application_name", "usename", "user", "client", "app")
HOLDER_SHARE = 0.5  # a client holding at least half of the server's connections...
HOLDER_LEAD = 2.0  # ...and twice as many as the next one


def _saturated(text: str) -> tuple[str, str] | None:
    """The piece of `text` that shows a pool or queue used to capacity, and its kind."""
    for regex, kind in _SHAPES:
        for match in regex.finditer(text):
            if "cap" in regex.groupindex:
                used, capacity = int(match.group("used")), int(match.group("cap"))
                if not capacity or used < capacity:
                    continue
                if "active" in match.group(0).lower() and not _TROUBLE.search(text):
                    continue
            return match.group(0), kind
    return None


def saturation(text: str) -> str | None:
    """The piece of `text` that shows a thread pool, worker pool or queue at capacity."""
    found = _saturated(text)
    return found[0] if found else None


def _kind(text: str) -> str:
    low = text.lower()
    if named := next((k for k, phrases in KINDS.items() if any(p in low for p in phrases)), ""):
        return named
    found = _saturated(text)
    return found[1] if found else "an inner resource"


def _clients(rows: list[MetricRow]) -> dict[str, float]:
    """Connections now held by each client (summed over states and databases)."""
    held: dict[str, float] = {}
    for row in rows:
        if name := next((row.labels[k] for k in CLIENT_LABELS if row.labels.get(k)), ""):
            held[name] = held.get(name, 0.0) + row.last
    return held


def _workload_of_client(facts: Facts, client: str) -> Ref | None:
    """The workload a database client names: the same name, one generated from it, or a
    role named after its namespace and a part of its name ("billing_export" for billing's
    invoice-export). Roles spell with underscores what workloads spell with hyphens."""
    refs = sorted((r for r in facts.workloads if r.kind != "Job"), key=str)
    name = client.lower().replace("_", "-")
    found = next((r for r in refs if r.name == name), None) or next(
        (r for r in refs if owns(r.name, name) or owns(name, r.name)), None)
    if found is not None:
        return found
    parts = [p for p in name.split("-") if p]
    qualified = [r for r in refs if len(parts) > 1 and parts[0] == r.namespace
                 and set(parts[1:]) <= set(r.name.split("-"))]
    return qualified[0] if len(qualified) == 1 else None


def _holder(facts: Facts, victims: tuple[Ref, ...]) -> Candidate | None:
    """The client that holds most of a refusing server's connections."""
    for metric in PER_CLIENT:
        rows = facts.metric_rows.get(metric) or []
        held = _clients(rows)
        total = sum(held.values())
        if not (ranked := sorted(held.items(), key=lambda kv: (-kv[1], kv[0]))) or total <= 0:
            continue
        client, count = ranked[0]
        runner = ranked[1][1] if len(ranked) > 1 else 0.0
        ref = _workload_of_client(facts, client)
        if ref is None or count < HOLDER_SHARE * total or count < HOLDER_LEAD * runner:
            continue
        source = next((r.source for r in rows if client in r.labels.values()), None)
        servers = {facts.workload_of_pod(r.labels.get("namespace", ""), r.labels.get("pod", ""))
                   for r in rows}
        if not (victims := tuple(v for v in victims if v not in servers and v != ref)):
            continue
        entry = Candidate("resource_exhaustion", ref, affects=victims)
        entry.add(0.6, f"{client} holds {count:g} of the {total:g} connections the database has "
                  f"({count / total:.0%}), while {' and '.join(v.name for v in victims[:2])} "
                  f"{'is' if len(victims) == 1 else 'are'} refused", (client, metric), source,
                  (METRICS,), "holds-connections")
        grew = [r for r in rows if client in r.labels.values() and r.change_at is not None
                and (r.after or 0.0) > (r.before or 0.0)]
        if grew or any(r.maximum > r.mean * 1.2 for r in rows if client in r.labels.values()):
            entry.add(0.2, f"{client}'s connections keep growing", (client,), source, (METRICS,),
                      "connections-grow")
        entry.fix = (f"{ref.kind} {ref.namespace}/{ref.name} holds most of the database's "
                     "connections: restart it to release them now, then make it close or pool "
                     "its connections; cap it with a per-role connection limit and an idle "
                     "session timeout so one client cannot starve the others.")
        return entry
    return None


def refused_callers(facts: Facts, scope: Scope) -> tuple[Ref, ...]:
    """Workloads that a shared server refuses for want of free connections."""
    return tuple(dict.fromkeys(s.workload for s in sightings(facts, scope, SERVER_FULL)
                               if s.factor >= 0.3))


# The kubelet evicting a pod for outgrowing its own ephemeral-storage limit: the pod's
# disk runs out, not the node's (node.py leaves these evictions alone).
OWN_LIMIT = ("exceeds the total limit of containers", "exceeded its local ephemeral storage",
             "ephemeral local storage usage exceeds", "usage exceeds the limit",
             "emptydir usage exceeds")


def _own_limit_evictions(facts: Facts) -> dict[Ref, Candidate]:
    found: dict[Ref, Candidate] = {}
    for event in recent_events(facts, reason="Evicted"):
        if (phrase := phrase_in(event.message, OWN_LIMIT)) is None or (
                ref := event_workload(facts, event)) is None:
            continue
        entry = found.setdefault(ref, Candidate("resource_exhaustion", ref))
        entry.add(0.6, f"the kubelet evicts {ref.name}'s pods for outgrowing their own "
                  f"storage: {event.message[:90]}", (event.message[:60], phrase), event.source,
                  EVENT_TOOLS, "exhausted-disk space")
        entry.fix = (f"{ref.kind} {ref.namespace}/{ref.name} outgrows its ephemeral-storage "
                     "limit: raise it, or move what it spills (temporary files, caches) to a "
                     "sized volume, and clean up after each piece of work.")
    return found


# Images of servers that other workloads call (databases, caches, brokers, search).
SERVERS = ("postgres", "mysql", "mariadb", "redis", "valkey", "mongo", "rabbitmq", "kafka",
           "elasticsearch", "opensearch", "cassandra", "clickhouse", "memcached", "nats")


def _serves(facts: Facts, ref: Ref) -> bool:
    workload = facts.workloads.get(ref)
    return workload is not None and any(
        server in image.lower() for image in workload.images for server in SERVERS)


CORROBORATED = 0.25  # a server's own exhaustion, for each client that reports it (two at most)


def _relayed(facts: Facts, found: list[Candidate], *, corroborate: bool = True) -> None:
    """A server (a database, a broker) that logs its own exhaustion owns it: a client that
    logs the same kind of exhaustion relays the server's error, and is its victim. Each
    such client also corroborates the server's word, however quietly the server logs it (a
    broker warns once that it blocks publishers; its clients fail on every publish), unless
    one client is known to hold what the server ran out of."""
    kinds = {id(c): {clue.topic for clue in c.clues} for c in found}
    for server in (c for c in found if _serves(facts, c.culprit)):
        for client in found:
            shared = kinds[id(client)] & kinds[id(server)] - {"exhausted-requests",
                                                              "exhausted-latency"}
            if client is server or not shared or _serves(facts, client.culprit):
                continue
            client.demote(0.5, f"it relays {server.culprit.name}'s own exhaustion")
            if corroborate and len(server.affects) < 2 and client.culprit not in server.affects:
                quote = next(c for c in client.clues if c.topic in shared)
                server.clues.append(replace(quote, weight=CORROBORATED, note=(
                    f"{client.culprit.name} reports it too: {quote.note}")[:160],
                    topic=f"exhausted-seen-by-{client.culprit.name}"))
            server.affects = tuple(dict.fromkeys((*server.affects, client.culprit)))


# A server's reply that it is full for this client ("421 4.7.0 Too many connections from
# your IP"): the server's limit, a dependency that refuses, not the client's own pool.
_REMOTE = re.compile(r"\bfrom your ip\b|\b[45]\d\d[ -][245]\.\d{1,3}\.\d{1,3}\b", re.I)


def _refused_by_server(ref: Ref, seen: Sequence[Sighting]) -> Candidate:
    entry = Candidate("dependency_failure", ref)
    for sighting in seen[:3]:
        entry.clues.append(Clue(0.6 * sighting.factor, f"a server refuses {ref.name}: "
                                f"{sighting.quote[:90]!r} ×{sighting.pattern.count}",
                                (sighting.quote, sighting.phrase), sighting.pattern.source,
                                LOG_TOOLS, "dep-refused-full"))
    entry.fix = (f"The server {ref.name} calls refuses it for its own limit: spread or slow "
                 f"the sends (fewer connections, backoff), or ask the provider to raise it; "
                 f"{ref.kind} {ref.namespace}/{ref.name} itself is healthy.")
    return entry


def _told_by_server(facts: Facts, grouped: dict[Ref, list[Sighting]]) -> dict[Ref, Sighting]:
    """For each client, a server's line that blames it by name for using up a budget of its
    own connection (channels): the server enforces the limit, the client exhausts it."""
    told: dict[Ref, Sighting] = {}
    for server, seen in grouped.items():
        for sighting in seen:
            if _kind(sighting.pattern.text) not in PER_CONNECTION:
                continue
            for client in named(sighting.pattern.text, server, facts):
                if client in grouped:
                    told.setdefault(client, sighting)
    return told


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    found = []
    victims = refused_callers(facts, scope)
    holder = _holder(facts, victims) if victims else None
    if holder is not None:
        found.append(holder)
    evicted = _own_limit_evictions(facts)
    grouped = by_workload(sightings(facts, scope, PHRASES, find=saturation))
    told = _told_by_server(facts, grouped)
    for ref, seen in grouped.items():
        if all(_REMOTE.search(s.pattern.text) for s in seen):
            found.append(_refused_by_server(ref, seen))
            continue
        kind = _kind(seen[0].pattern.text)
        if any(said.workload == ref for said in told.values()):
            continue  # a server naming the client whose connection used its budget up
        entry = evicted.pop(ref, None) or Candidate("resource_exhaustion", ref)
        if (said := told.get(ref)) is not None:
            entry.clues.append(Clue(0.3, f"{said.workload.name} refuses it for the same reason: "
                                    f"{said.quote[:80]!r}", (said.quote, said.phrase),
                                    said.pattern.source, LOG_TOOLS, f"exhausted-{kind}-server"))
        server = _serves(facts, ref)  # a server says so once; its clients fail on every call
        for sighting in seen[:3]:
            count = sighting.pattern.count
            weight = (0.6 if count >= 10 or sighting.pattern.previous or server else 0.35) \
                * sighting.factor
            entry.clues.append(Clue(weight, f"{ref.name} logs {sighting.quote[:90]!r}"
                                    + (f" ×{count}" if count > 1 else ""),
                                    (sighting.quote, sighting.phrase), sighting.pattern.source,
                                    LOG_TOOLS, f"exhausted-{_kind(sighting.pattern.text)}"))
            if sighting.why:
                entry.demote(0.85, sighting.why)
        signals = facts.signals_of(ref)
        if signals is not None:
            for name in ("requests", "latency"):
                if signals.get(name).get("abnormal"):
                    entry.add(0.15, str(signals.get(name).get("why")), ("rose from", "5xx ratio"),
                              signals.source, (SIGNALS,), f"exhausted-{name}")
        entry.fix = (f"{ref.kind} {ref.namespace}/{ref.name} runs out of {kind}: raise that limit "
                     "(pool size, ulimit, thread cap, volume size) and fix what holds the "
                     "resource (leaked connections or files, unbounded work, old data).")
        entry.follow(POD_LOGS, ref.pod_args, f"read {ref.name}'s own log around the exhaustion")
        if any(watcher_exhausted(s.pattern.text) for s in seen):
            entry.follow(LOG_PATTERNS, FOLLOW, "inotify limits are the node's: see which node "
                         "agent holds them")
        if ref in victims:
            for metric in PER_CLIENT:
                entry.follow(METRICS, {"metric": metric, "since": "1h"},
                             "see who holds the database's connections")
        found.append(entry)
    _relayed(facts, found, corroborate=holder is None)  # a holder's doing, not the server's
    for entry in evicted.values():
        entry.follow(POD_LOGS, entry.culprit.pod_args, f"see what {entry.culprit.name} writes")
        found.append(entry)
    return found
