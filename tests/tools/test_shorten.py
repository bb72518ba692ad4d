"""A long Kubernetes message shortened keeps its end, where it says why."""

from __future__ import annotations

from tools._toolkit import shorten


def test_a_long_error_keeps_its_cause_at_the_end() -> None:
    message = ("failed to pull and unpack image \"registry.example.com/orders/checkout:4.2.0\": "
               "failed to resolve reference \"registry.example.com/orders/checkout:4.2.0\": "
               "pulling from host registry.example.com failed with status code [manifests "
               "4.2.0]: 401 Unauthorized")
    short = shorten(message, 200, ends=True)
    assert short.startswith("failed to pull and unpack image \"registry.example.com/orders/")
    assert short.count("checkout:4.2.0") == 1, "the image is named once"
    assert short.endswith("401 Unauthorized")


def test_too_long_even_said_once_keeps_the_last_words() -> None:
    short = shorten("Error: " + "very long detail " * 30 + "because: permission denied", 120,
                    ends=True)
    assert len(short) == 120 and short.endswith("because: permission denied")


def test_short_lines_and_log_lines_keep_their_start() -> None:
    assert shorten("  a   b  ", ends=True) == "a b"
    assert shorten("y" * 200, 100) == "y" * 99 + "…", "a log line keeps its start"
