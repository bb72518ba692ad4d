"""Budgets follow the model's window: a small model gets short observations, a big one more."""

from __future__ import annotations

import pytest

from engines.budgets import (
    CONTEXT_ENV,
    DEFAULT_CONTEXT_TOKENS,
    MAX_OBSERVATION_TOKENS,
    MIN_OBSERVATION_TOKENS,
    budgets_for,
    budgets_of_window,
    context_window,
)
from engines.errors import ConfigurationError
from engines.model import ToolSpec
from engines.short_catalog import schema_tokens


def test_known_models_by_longest_prefix() -> None:
    assert context_window("gpt-4o-mini", {}) == 128_000
    assert context_window("gpt-4", {}) == 8_192
    assert context_window("gpt-4.1-mini", {}) == 1_047_576
    assert context_window("meta/llama3.1:8b", {}) == 131_072
    assert context_window("llama3:8b", {}) == 8_192
    assert context_window("some-private-model", {}) == DEFAULT_CONTEXT_TOKENS


def test_the_setting_wins_and_is_checked() -> None:
    assert context_window("gpt-4o", {CONTEXT_ENV: "16384"}) == 16_384
    with pytest.raises(ConfigurationError, match="not a whole number"):
        context_window("gpt-4o", {CONTEXT_ENV: "lots"})
    with pytest.raises(ConfigurationError, match="too small"):
        context_window("gpt-4o", {CONTEXT_ENV: "1000"})


def test_observation_budget_is_a_bounded_share_of_the_window() -> None:
    small, default, big = (budgets_of_window(n) for n in (8_192, 32_768, 1_000_000))
    assert small.observation_tokens == MIN_OBSERVATION_TOKENS
    assert default.observation_tokens == 32_768 // 40
    assert big.observation_tokens == MAX_OBSERVATION_TOKENS
    assert budgets_for("analyzer", {}) == default


def test_tool_schemas_are_counted() -> None:
    one = ToolSpec("a_tool", "Reads a thing.", {"type": "object", "properties": {}})
    many = tuple(ToolSpec(f"tool_{i}", "Reads a thing " * 20,
                          {"type": "object", "properties": {"x": {"type": "string"}}})
                 for i in range(20))
    assert 0 < schema_tokens((one,)) < schema_tokens(many)
    assert schema_tokens(many) > 20 * 20  # every description is paid for
