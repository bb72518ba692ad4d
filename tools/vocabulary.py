"""The cluster's own names, so that a reply is read with them (engines.steering).

Listed once per investigation (the caller keeps the result), from the live API as from a
scenario: a reply can only exclude a namespace the cluster has. A cluster that cannot be
read gives an empty vocabulary and the reading goes on with the words alone.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

from engines.errors import TriageError
from engines.steering import Vocabulary
from tools.sources.base import ClusterSource, Sources

log = logging.getLogger(__name__)
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "CronJob", "Job")
LIST_SECONDS = 10.0


async def _names(cluster: ClusterSource, kind: str) -> list[str]:
    objects = await cluster.list_objects(kind)
    return [str(o.get("metadata", {}).get("name", "")) for o in objects]


async def cluster_vocabulary(sources: Sources, tools: Iterable[str] = ()) -> Vocabulary:
    """Namespaces and workloads of the cluster, and the tools' names."""
    tool_names = tuple(tools)
    if sources.cluster is None:
        return Vocabulary.of(tools=tool_names)
    try:
        async with asyncio.timeout(LIST_SECONDS):
            listed = await asyncio.gather(
                *(_names(sources.cluster, kind) for kind in ("Namespace", *WORKLOAD_KINDS)))
    except (TriageError, TimeoutError, OSError) as exc:
        log.warning("could not list the cluster's names for reading replies: %s", exc)
        return Vocabulary.of(tools=tool_names)
    namespaces, *workloads = listed
    return Vocabulary.of(namespaces, (name for names in workloads for name in names),
                         tool_names)
