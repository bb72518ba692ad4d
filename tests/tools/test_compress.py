"""Observations fit their token budget and say what was cut."""

from __future__ import annotations

import yaml

from engines.tokens import count_tokens
from tools.compress import fit


def test_small_data_is_rendered_whole() -> None:
    text, cut, _ = fit({"pod": "checkout-1", "restarts": 3}, 100)
    assert text == "pod: checkout-1\nrestarts: 3"
    assert not cut


def test_long_lists_are_cut_with_a_note() -> None:
    data = {"pods": [{"name": f"web-{i}", "phase": "Running"} for i in range(300)], "ns": "a"}
    text, cut, _ = fit(data, 250)
    assert cut
    assert count_tokens(text) <= 250
    assert "web-0" in text
    assert "more omitted to fit the observation budget" in text
    assert "ns: a" in text


def test_cut_counts_add_up_when_shrunk_repeatedly() -> None:
    data = {"items": list(range(1000))}
    text, _, _ = fit(data, 60)
    items = yaml.safe_load(text)["items"]
    kept = [item for item in items if isinstance(item, int)]
    omitted = int(items[-1].split()[1])
    assert kept == list(range(len(kept)))
    assert len(kept) + omitted == 1000


def test_text_without_lists_is_truncated_with_a_count() -> None:
    text, cut, _ = fit("line of log output\n" * 500, 80)
    assert cut
    assert count_tokens(text) <= 80
    assert text.rstrip().endswith("more tokens cut to fit the observation budget]")
