"""A group of events keeps the message that says why, not the kubelet's bare status line."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tools._k8s_events import summarize_events

NOW = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
IMAGE = "registry.example.com/ml/ranker:2.4.0"
NO_ROOM = (f'Failed to pull image "{IMAGE}": failed to extract layer sha256:9b2f: write '
           "/var/lib/containerd/snapshots/240/fs/lib/libtorch_cuda.so: no space left on device")


def _failed(pod: str, message: str, last: str, count: int) -> dict[str, Any]:
    return {"type": "Warning", "reason": "Failed", "message": message, "count": count,
            "metadata": {"namespace": "ml", "name": f"{pod}.1"},
            "involvedObject": {"kind": "Pod", "name": pod, "namespace": "ml"},
            "firstTimestamp": "2026-11-30T09:00:00Z", "lastTimestamp": last}


def test_a_bare_error_status_gives_way_to_the_line_of_the_same_reason_that_says_why() -> None:
    events = [_failed("ranker-5f8b9-kqsdp", NO_ROOM, "2026-11-30T09:40:00Z", 6),
              _failed("ranker-5f8b9-25khc", "Error: ImagePullBackOff", "2026-11-30T09:59:30Z",
                      666),
              _failed("ranker-5f8b9-6vrqd", "Error: ErrImagePull", "2026-11-30T09:50:00Z", 9)]
    (row,) = summarize_events(events, NOW, 10)
    assert "no space left on device" in row["message"]
    assert row["object"] == "Pod/ranker-5f8b9-25khc" and row["count"] == 681  # still the latest
    quota = _failed("ranker-5f8b9-x1", f'Failed to pull image "{IMAGE}": disk quota exceeded',
                    "2026-11-30T09:45:00Z", 2)
    (later,) = summarize_events([events[1], events[0], quota], NOW, 10)
    assert "disk quota exceeded" in later["message"]  # the latest of the lines that say why
    bare_only = summarize_events(events[1:], NOW, 10)
    assert bare_only[0]["message"] == "Error: ImagePullBackOff"


def test_the_newest_message_still_wins_when_each_says_something() -> None:
    older = _failed("api-7d9f8-a", "Liveness probe failed: connection refused",
                    "2026-11-30T09:10:00Z", 3)
    newer = _failed("api-7d9f8-b", "Liveness probe failed: HTTP 503", "2026-11-30T09:55:00Z", 3)
    (row,) = summarize_events([newer, older], NOW, 10)
    assert row["message"] == "Liveness probe failed: HTTP 503"
