"""A kubelet stand-in that serves a scenario's container logs to the API server.

`kubectl logs` does not read logs from the API server's storage: the API server opens
`https://<node address>:<kubelet port>/containerLogs/<ns>/<pod>/<container>` on the
pod's node and streams the answer back. To test that path for real, this server
answers that one endpoint from `pod-logs/<ns>/<pod>/<container>[.previous].log`,
speaking TLS with a self-signed certificate that the API server is told to trust
(--kubelet-certificate-authority). It runs in a thread of the test process.

Supported query parameters: previous, tailLines, limitBytes. follow returns what
there is and closes; timestamps and sinceSeconds/sinceTime are ignored, because the
recorded lines carry no kubelet timestamps.
"""

from __future__ import annotations

import ssl
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from ._process import LOOPBACK


def select_log(text: str, *, tail_lines: int | None, limit_bytes: int | None) -> bytes:
    """Apply tailLines then limitBytes, as the kubelet does."""
    data = text
    if tail_lines is not None:
        lines = data.splitlines(keepends=True)
        data = "".join(lines[-tail_lines:]) if tail_lines > 0 else ""
    raw = data.encode()
    if limit_bytes is not None:
        raw = raw[:limit_bytes]
    return raw


class _Handler(BaseHTTPRequestHandler):
    server: KubeletServer._HTTPServer

    def do_GET(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        parts = [urllib.parse.unquote(p) for p in url.path.strip("/").split("/")]
        if parts == ["healthz"]:
            self._reply(200, b"ok")
            return
        if len(parts) != 4 or parts[0] != "containerLogs":
            self._reply(404, f"404 page not found: {url.path}".encode())
            return
        _, namespace, pod, container = parts
        if any(p in {"", ".", ".."} or "/" in p for p in (namespace, pod, container)):
            self._reply(400, b"bad path")
            return
        query = urllib.parse.parse_qs(url.query)
        previous = query.get("previous", ["false"])[0].lower() in {"true", "1"}
        try:
            tail = int(query["tailLines"][0]) if "tailLines" in query else None
            limit = int(query["limitBytes"][0]) if "limitBytes" in query else None
        except ValueError:
            self._reply(400, b"tailLines and limitBytes must be integers")
            return
        suffix = ".previous.log" if previous else ".log"
        path = self.server.logs_root / namespace / pod / f"{container}{suffix}"
        if not path.is_file():
            if previous:
                # The kubelet's own wording, which kubectl shows as is.
                message = f'previous terminated container "{container}" in pod "{pod}" not found'
                self._reply(400, message.encode())
            else:
                self._reply(200, b"")  # a running container that has printed nothing
            return
        text = path.read_text(errors="replace")
        self._reply(200, select_log(text, tail_lines=tail, limit_bytes=limit))

    def _reply(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the API server's log already records each proxied request."""


class KubeletServer:
    """HTTPS server on loopback serving containerLogs from a scenario's pod-logs dir."""

    class _HTTPServer(ThreadingHTTPServer):
        daemon_threads = True
        logs_root: Path

    def __init__(self, logs_root: Path, cert_file: Path, key_file: Path) -> None:
        self._httpd = self._HTTPServer((LOOPBACK, 0), _Handler)
        self._httpd.logs_root = logs_root
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(cert_file), str(key_file))
        self._httpd.socket = context.wrap_socket(self._httpd.socket, server_side=True)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, name="kubelet-stand-in", daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def logs_root(self) -> Path:
        return self._httpd.logs_root

    @logs_root.setter
    def logs_root(self, root: Path) -> None:
        """Point at another scenario's pod-logs dir (e.g. when a test loads a new one)."""
        self._httpd.logs_root = root

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=10)
