"""The stories, one module per family of causes; importing registers them."""

from tests.scenario_tools.stories import (  # noqa: F401
    capacity,
    containers,
    crashes,
    dependencies,
    memory,
    network,
    nodes,
    pending,
    probes,
    rollouts,
)
