"""One import point for the scenario modules: the object builders, the records and the writer."""

from .objects import (
    SET_DIR,
    Obj,
    ago,
    configmap,
    container,
    deployment,
    endpoints,
    iso,
    iso_ms,
    meta,
    namespace,
    node,
    parse,
    pod,
    replicaset,
    running_state,
    service,
)
from .records import Metrics, ecs, event
from .writer import rng, write_scenario

__all__ = [
    "SET_DIR",
    "Metrics",
    "Obj",
    "ago",
    "configmap",
    "container",
    "deployment",
    "ecs",
    "endpoints",
    "event",
    "iso",
    "iso_ms",
    "meta",
    "namespace",
    "node",
    "parse",
    "pod",
    "replicaset",
    "rng",
    "running_state",
    "service",
    "write_scenario",
]
