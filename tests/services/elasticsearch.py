"""A real single-node Elasticsearch on loopback, holding a scenario's logs.

The node is assembled by provision.sh from Maven Central (server jar, its
dependencies, the netty4 transport module) and started by es/TriageEsNode.java:
security off (there is no x-pack in it), single-node discovery, HTTP on a free
loopback port. A scenario's `logs.ndjson` is bulk-indexed into `logs-<scenario id>`
under an index template that maps the ECS fields the tools query.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from ._process import (
    LOOPBACK,
    NotProvisionedError,
    Server,
    ServiceError,
    cache_dir,
    free_port,
    wait_until,
)

ES_VERSION = os.environ.get("TRIAGE_ES_VERSION", "8.19.21")

# One template for every `logs-*` index: ECS names, keyword for what is filtered and
# aggregated on, text for the message. Strings that the scenario adds beyond these
# (trace.id, error.type, ...) become keywords too, as ECS maps them.
LOGS_TEMPLATE: dict[str, Any] = {
    "index_patterns": ["logs-*"],
    "priority": 500,
    "template": {
        "settings": {"number_of_shards": 1, "number_of_replicas": 0},
        "mappings": {
            "dynamic_templates": [
                {
                    "strings_as_keywords": {
                        "match_mapping_type": "string",
                        "mapping": {"type": "keyword", "ignore_above": 1024},
                    }
                }
            ],
            "properties": {
                "@timestamp": {"type": "date"},
                "message": {"type": "text"},
                "log": {"properties": {"level": {"type": "keyword"}}},
                "service": {"properties": {"name": {"type": "keyword"}}},
                "kubernetes": {
                    "properties": {
                        "namespace": {"type": "keyword"},
                        "pod": {"properties": {"name": {"type": "keyword"}}},
                        "container": {"properties": {"name": {"type": "keyword"}}},
                        "node": {"properties": {"name": {"type": "keyword"}}},
                    }
                },
                "http": {
                    "properties": {"response": {"properties": {"status_code": {"type": "long"}}}}
                },
                "error": {"properties": {"message": {"type": "text"}}},
            },
        },
    },
}


class ElasticsearchServer(Server):
    """Elasticsearch node from the provisioned Maven artifacts; see the module docstring."""

    name = "elasticsearch"

    @classmethod
    def check_installed(cls) -> None:
        """Raise NotProvisionedError unless provision.sh assembled the node and its JDK is there."""
        home = cache_dir() / f"elasticsearch-{ES_VERSION}"
        if not (home / ".complete").is_file():
            raise NotProvisionedError(f"Elasticsearch {ES_VERSION}")
        java = Path((home / "java-home").read_text().strip()) / "bin" / "java"
        if not java.is_file():
            raise NotProvisionedError(f"Java for Elasticsearch ({java})")

    def __init__(self, *, heap: str = "512m", start_timeout: float = 120.0) -> None:
        self.check_installed()
        self.home = cache_dir() / f"elasticsearch-{ES_VERSION}"
        self.java = Path((self.home / "java-home").read_text().strip()) / "bin" / "java"
        super().__init__()
        self.heap = heap
        self.start_timeout = start_timeout
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def _start(self) -> None:
        self.port = free_port()
        config = self.workdir / "config"
        config.mkdir()
        (self.workdir / "tmp").mkdir()
        settings = {
            "cluster.name": "triage-test",
            "node.name": "triage-es",
            "path.data": str(self.workdir / "data"),
            "path.logs": str(self.workdir / "logs"),
            "discovery.type": "single-node",
            "network.host": LOOPBACK,
            "http.port": self.port,
            "transport.port": free_port(),
            # The test disk may be nearly full; that must not make shards read-only.
            "cluster.routing.allocation.disk.threshold_enabled": False,
            "action.destructive_requires_name": False,
        }
        (config / "elasticsearch.yml").write_text(
            "".join(f"{key}: {json.dumps(value)}\n" for key, value in settings.items())
        )
        argv = [
            str(self.java),
            f"-Xms{self.heap}",
            f"-Xmx{self.heap}",
            "-XX:+UseSerialGC",
            "-Dlog4j2.disable.jmx=true",
            "-Dlog4j2.formatMsgNoLookups=true",
            "-Dlog4j.shutdownHookEnabled=false",
            "-Dio.netty.allocator.numDirectArenas=0",
            "-Djava.locale.providers=CLDR",
            "-Dfile.encoding=UTF-8",
            f"-Djava.io.tmpdir={self.workdir / 'tmp'}",
            f"-Des.path.home={self.home}",
            f"-Des.path.conf={config}",
            "--module-path",
            str(self.home / "lib"),
            "--add-modules=ALL-MODULE-PATH",
            "-cp",
            str(self.home / "launcher"),
            "TriageEsNode",
        ]
        env = {**os.environ, "ES_TMPDIR": str(self.workdir / "tmp")}
        proc = self.spawn("elasticsearch", argv, env=env)
        wait_until(self._ready, timeout=self.start_timeout, what="elasticsearch", proc=proc)

    def _ready(self) -> bool:
        health = self.request("GET", "/_cluster/health?wait_for_status=yellow&timeout=1s")
        return health.get("status") in {"yellow", "green"}

    def request(
        self, method: str, path: str, body: Any = None, *, ndjson: bytes | None = None
    ) -> Any:
        """One REST call; JSON in and out. Raises ServiceError on an HTTP error."""
        data: bytes | None = None
        headers = {"Accept": "application/json"}
        if ndjson is not None:
            data, headers["Content-Type"] = ndjson, "application/x-ndjson"
        elif body is not None:
            data, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=60) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            raise ServiceError(
                f"elasticsearch {method} {path}: {exc.code} {exc.read()[:500]!r}"
            ) from exc
        return json.loads(raw) if raw else None


def index_name(scenario_id: str) -> str:
    """The index that holds a scenario's logs: matches `logs-*` like a log shipper's."""
    return f"logs-{scenario_id}"


def load_scenario(server: ElasticsearchServer, scenario_dir: Path, batch: int = 2000) -> int:
    """Bulk-index `<scenario>/logs.ndjson` into logs-<id>, refresh, return the count.

    Documents keep their ECS keys as written (flat dotted or nested): Elasticsearch
    maps both to the same fields. Any rejected document fails the load.
    """
    logs = scenario_dir / "logs.ndjson"
    if not logs.is_file():
        return 0
    server.request("PUT", "/_index_template/triage-logs", LOGS_TEMPLATE)
    index = index_name(scenario_dir.name)
    lines = [line for line in logs.read_text().splitlines() if line.strip()]
    action = json.dumps({"index": {"_index": index}})
    for start in range(0, len(lines), batch):
        chunk = lines[start : start + batch]
        payload = "".join(f"{action}\n{line}\n" for line in chunk).encode()
        result = server.request("POST", "/_bulk", ndjson=payload)
        if result.get("errors"):
            failed = [i for i in result["items"] if i["index"].get("error")]
            raise ServiceError(f"bulk load of {logs} rejected {len(failed)} docs: {failed[0]}")
    server.request("POST", f"/{index}/_refresh")
    count = int(server.request("GET", f"/{index}/_count")["count"])
    if count != len(lines):
        raise ServiceError(f"{index} holds {count} docs, {logs} has {len(lines)}")
    return count
