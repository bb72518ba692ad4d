"""TRIAGE_LEASE_SECONDS and the replica id that owns leases."""

from __future__ import annotations

import pytest

from bot.investigations.leases import (
    DEFAULT_LEASE_SECONDS,
    LEASE_SECONDS_ENV,
    lease_seconds_from_env,
    replica_id,
)


def test_the_lease_ttl_comes_from_the_environment_with_a_default() -> None:
    assert lease_seconds_from_env({}) == DEFAULT_LEASE_SECONDS == 30.0
    assert lease_seconds_from_env({LEASE_SECONDS_ENV: " 2.5 "}) == 2.5


@pytest.mark.parametrize(("raw", "message"), [
    ("soon", "is not a number of seconds"),
    ("0", "between 0.5 and 3600 seconds, not 0"),
    ("7200", "not 7200"),
])
def test_a_bad_lease_ttl_names_the_variable(raw: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        lease_seconds_from_env({LEASE_SECONDS_ENV: raw})
    assert LEASE_SECONDS_ENV in str(caught.value)


def test_every_process_owns_leases_under_its_own_id() -> None:
    first, second = replica_id(), replica_id()
    assert first != second and len(first) <= 128
