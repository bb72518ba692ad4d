"""The holdout36 generator: `stories()` names each scenario folder and the builder that
writes it, so that a test can check that every folder has its generator."""

from __future__ import annotations

from collections.abc import Callable

from . import (
    api_sunset,
    command_typo,
    ephemeral_ports,
    job_quota,
    memory_typo,
    pinned_cert,
    readonly_rootfs,
    stale_primary,
)


def stories() -> dict[str, Callable[[], None]]:
    """Scenario id -> the function that writes its folder."""
    return {
        "driver-app-trips-502": pinned_cert.pinned_cert,
        "bids-no-bid-spike": ephemeral_ports.ephemeral_ports,
        "thumbnails-lagging": command_typo.command_typo,
        "partner-nightly-missing": job_quota.job_quota,
        "invoices-not-issuing": stale_primary.readonly_primary,
        "indexer-rollout-stalled": readonly_rootfs.readonly_rootfs,
        "tiles-deploy-hanging": memory_typo.memory_typo,
        "miles-not-credited": api_sunset.api_sunset,
    }
