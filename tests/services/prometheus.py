"""A real Prometheus server on loopback, holding a scenario's metrics.

Prometheus has no API to push old samples, so a scenario's `metrics.om` is written
into the TSDB with `promtool tsdb create-blocks-from openmetrics` before the server
starts; the server then serves the blocks like any it had scraped. It scrapes nothing
itself, so the scenario's series are the only ones there.
"""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from ._process import (
    LOOPBACK,
    Server,
    ServiceError,
    free_port,
    progress,
    require_executable,
    wait_until,
)

# Time retention is counted back from the newest block, but keep it long anyway so no
# setting of the machine's clock makes Prometheus delete a scenario's blocks.
RETENTION = "100y"


class PrometheusServer(Server):
    """Prometheus serving the blocks backfilled from OpenMetrics files.

    `lookback_delta` is Prometheus' own default: an instant query at the scenario's
    `now` sees a series whose last sample is at most that old, as it would live. Call
    load_openmetrics() for each file before start().
    """

    name = "prometheus"

    @classmethod
    def check_installed(cls) -> None:
        """Raise NotProvisionedError unless prometheus and promtool are on PATH."""
        require_executable("prometheus", "Prometheus (Debian package prometheus)")
        require_executable("promtool", "promtool (Debian package prometheus)")

    def __init__(self, *, lookback_delta: str = "5m", start_timeout: float = 60.0) -> None:
        self.check_installed()
        self.prometheus = require_executable("prometheus", "Prometheus")
        self.promtool = require_executable("promtool", "promtool")
        super().__init__()
        self.lookback_delta = lookback_delta
        self.start_timeout = start_timeout
        self.data_dir = self.workdir / "data"
        self.data_dir.mkdir()
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def load_openmetrics(self, path: Path) -> None:
        """Backfill one OpenMetrics file (every sample timestamped, ending in `# EOF`)."""
        if self.processes:
            raise ServiceError("load_openmetrics() must run before start(): blocks load at start")
        result = subprocess.run(
            [
                self.promtool,
                "tsdb",
                "create-blocks-from",
                "openmetrics",
                str(path),
                str(self.data_dir),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if result.returncode != 0:
            raise ServiceError(
                f"promtool could not backfill {path}:\n{result.stderr or result.stdout}"
            )
        progress(f"prometheus: backfilled {path}")

    def _start(self) -> None:
        config = self.workdir / "prometheus.yml"
        config.write_text("global:\n  scrape_interval: 1m\nscrape_configs: []\n")
        self.port = free_port()
        proc = self.spawn(
            "prometheus",
            [
                self.prometheus,
                f"--config.file={config}",
                f"--storage.tsdb.path={self.data_dir}",
                f"--storage.tsdb.retention.time={RETENTION}",
                f"--query.lookback-delta={self.lookback_delta}",
                f"--web.listen-address={LOOPBACK}:{self.port}",
                "--web.enable-lifecycle",
            ],
        )
        wait_until(self._ready, timeout=self.start_timeout, what="prometheus", proc=proc)

    def _ready(self) -> bool:
        with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as response:
            return bool(response.status == 200)

    def query(self, promql: str, time: float | str | None = None) -> list[dict[str, Any]]:
        """Instant query; returns `data.result` or raises ServiceError with Prometheus' error."""
        params: dict[str, str] = {"query": promql}
        if time is not None:
            params["time"] = str(time)
        return list(self._api("query", params)["result"])

    def query_range(self, promql: str, start: float, end: float, step: str) -> list[dict[str, Any]]:
        """Range query; returns `data.result`."""
        params = {"query": promql, "start": str(start), "end": str(end), "step": step}
        return list(self._api("query_range", params)["result"])

    def series(self, match: str, start: float, end: float) -> list[dict[str, str]]:
        """Label sets of the series that `match` selects in [start, end]."""
        params = {"match[]": match, "start": str(start), "end": str(end)}
        return list(self._api("series", params))

    def _api(self, endpoint: str, params: dict[str, str]) -> Any:
        url = f"{self.url}/api/v1/{endpoint}?{urllib.parse.urlencode(params)}"
        try:
            with urllib.request.urlopen(url, timeout=30) as response:
                body = json.load(response)
        except urllib.error.HTTPError as exc:
            raise ServiceError(f"prometheus {endpoint} failed: {exc.read().decode()}") from exc
        if body.get("status") != "success":
            raise ServiceError(f"prometheus {endpoint} failed: {body}")
        return body["data"]


def load_scenario(server: PrometheusServer, scenario_dir: Path) -> bool:
    """Backfill `<scenario>/metrics.om` if the scenario has one; True if it did."""
    metrics = scenario_dir / "metrics.om"
    if not metrics.is_file():
        return False
    server.load_openmetrics(metrics)
    return True
