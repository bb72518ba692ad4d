"""Token budgets derived from the model's context window.

A fixed budget is wrong both ways: 24k of history starves a 128k model of evidence and
overflows an 8k one, which then fails with a 400 mid-incident. The window comes from
`TRIAGE_CONTEXT_TOKENS`, else from the known windows of common models, else a
conservative default; the observation budget is a share of it, so a small model sees
shorter observations and a large one sees more of each before anything is cut.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from engines.errors import ConfigurationError

CONTEXT_ENV = "TRIAGE_CONTEXT_TOKENS"
DEFAULT_CONTEXT_TOKENS = 32_768
REPLY_TOKENS = 2_000  # kept free for the model's answer (a diagnosis is ~600 tokens) ...
REPLY_SHARE = 8  # ... or an eighth of a small window (1024 of 8k), room enough for one
OBSERVATION_SHARE = 40  # one observation gets 1/40 of the window ...
MIN_OBSERVATION_TOKENS = 300  # ... but never less than a readable table ...
MAX_OBSERVATION_TOKENS = 4_000  # ... nor so much that one call crowds out the others

# Windows of models people run Triage with, by name prefix (the longest prefix wins).
# The offline analyzer declares the default, so that in process and over the wire it
# reads observations cut to the same budgets as a mid-sized LLM would.
KNOWN_WINDOWS: dict[str, int] = {
    "gpt-4o": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4-turbo": 128_000,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "gpt-5": 400_000,
    "o1": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "llama3.1": 131_072,
    "llama3.2": 131_072,
    "llama3": 8_192,
    "qwen2.5": 32_768,
    "mistral": 32_768,
    "analyzer": DEFAULT_CONTEXT_TOKENS,
    "triage-analyzer": DEFAULT_CONTEXT_TOKENS,
}


@dataclass(frozen=True, slots=True)
class Budgets:
    """How many tokens the conversation and each observation may take."""

    context_tokens: int
    observation_tokens: int


def context_window(model: str, environ: dict[str, str] | None = None) -> int:
    """The model's context window in tokens: the setting, a known model, or the default."""
    env = os.environ if environ is None else environ
    if configured := env.get(CONTEXT_ENV, "").strip():
        try:
            window = int(configured)
        except ValueError:
            raise ConfigurationError(
                f"{CONTEXT_ENV}={configured!r} is not a whole number of tokens"
            ) from None
        if window < 4_096:
            raise ConfigurationError(f"{CONTEXT_ENV}={window} is too small: at least 4096")
        return window
    base = model.rsplit("/", 1)[-1].lower()  # "openai/gpt-4o" on proxies, "org/llama3" on vLLM
    matches = [prefix for prefix in KNOWN_WINDOWS if base.startswith(prefix)]
    return KNOWN_WINDOWS[max(matches, key=len)] if matches else DEFAULT_CONTEXT_TOKENS


def reply_tokens(context_tokens: int) -> int:
    """What the history leaves free for the model's answer: 2000 tokens would be a quarter
    of an 8k window, taken from the evidence a small model most needs to keep."""
    return min(REPLY_TOKENS, context_tokens // REPLY_SHARE)


def budgets_for(model: str, environ: dict[str, str] | None = None) -> Budgets:
    """The budgets of this model (its window from `context_window`)."""
    return budgets_of_window(context_window(model, environ))


def budgets_of_window(context_tokens: int) -> Budgets:
    """The budgets of a model with this window."""
    share = context_tokens // OBSERVATION_SHARE
    observation = min(MAX_OBSERVATION_TOKENS, max(MIN_OBSERVATION_TOKENS, share))
    return Budgets(context_tokens, observation)


DEFAULT_BUDGETS = budgets_of_window(DEFAULT_CONTEXT_TOKENS)
