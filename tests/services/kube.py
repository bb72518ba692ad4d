"""A real Kubernetes API server on loopback: etcd, kube-apiserver and a kubelet stand-in.

No scheduler, controller manager or kubelet runs: the objects of a scenario are
written through the API as recorded (kube_loader.py), and nothing reconciles them
afterwards, so they stay exactly as the incident left them. The API server is the
real one (built by provision.sh), so the tools meet real discovery, real validation,
real RBAC, real field selectors and the real pod-log proxy.

Authentication is a static token file with two users: `admin` (system:masters) and
`triage-viewer` (group triage:viewers, bound to ClusterRole `triage-viewer`: read
access to everything a troubleshooter needs, Secrets excluded), for tests of what a
read-only bot can see.
"""

from __future__ import annotations

import json
import secrets
import ssl
import subprocess
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
    require_executable,
    wait_until,
)
from .kubelet import KubeletServer

ADMISSION_DISABLED = [
    # These mutate or refuse objects based on other objects or controllers that a
    # recorded scenario does not have (service accounts, priority classes, runtime
    # classes, computed quota usage, namespace pod-security levels). Disabled so that
    # objects load exactly as recorded.
    "ServiceAccount",
    "ResourceQuota",
    "LimitRanger",
    "Priority",
    "DefaultTolerationSeconds",
    "TaintNodesByCondition",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "RuntimeClass",
    "DefaultIngressClass",
    "PodSecurity",
]

# What a read-only troubleshooter may read: everything it needs, never Secrets. Written
# out, because the built-in `view` role is an aggregated role that only the controller
# manager (not running here) fills in.
_READ = ["get", "list", "watch"]
VIEWER_RBAC: list[dict[str, Any]] = [
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "triage-viewer"},
        "rules": [
            {
                "apiGroups": [""],
                "resources": [
                    "pods",
                    "pods/log",
                    "events",
                    "services",
                    "endpoints",
                    "configmaps",
                    "persistentvolumeclaims",
                    "persistentvolumes",
                    "namespaces",
                    "nodes",
                    "replicationcontrollers",
                    "resourcequotas",
                    "limitranges",
                    "serviceaccounts",
                ],
                "verbs": _READ,
            },
            {
                "apiGroups": [
                    "apps",
                    "batch",
                    "autoscaling",
                    "networking.k8s.io",
                    "policy",
                    "storage.k8s.io",
                    "events.k8s.io",
                    "discovery.k8s.io",
                ],
                "resources": ["*"],
                "verbs": _READ,
            },
        ],
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "triage-viewer"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "triage-viewer",
        },
        "subjects": [
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "triage:viewers"}
        ],
    },
]


def _openssl(*args: str) -> None:
    openssl = require_executable("openssl", "openssl (Debian package openssl)")
    result = subprocess.run(
        [openssl, *args], capture_output=True, text=True, timeout=60, check=False
    )
    if result.returncode != 0:
        raise ServiceError(f"openssl {args[0]} failed: {result.stderr}")


class KubeClient:
    """Minimal JSON client for the API server: enough for loading and for assertions."""

    def __init__(self, url: str, token: str, ca_file: Path) -> None:
        self.url = url
        self.token = token
        self._context = ssl.create_default_context(cafile=str(ca_file))

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str = "application/json",
        raw: bool = False,
        timeout: float = 30.0,
    ) -> Any:
        """Call the API; JSON (or text with raw=True) back. HTTPError carries the Status."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.token}")
        req.add_header("Accept", "*/*" if raw else "application/json")
        if data is not None:
            req.add_header("Content-Type", content_type)
        with urllib.request.urlopen(req, timeout=timeout, context=self._context) as response:
            payload = response.read()
        if raw:
            return payload.decode(errors="replace")
        return json.loads(payload) if payload else None

    def get(self, path: str) -> Any:
        return self.request("GET", path)

    def create(self, path: str, obj: dict[str, Any]) -> Any:
        return self.request("POST", path, obj)

    def merge_patch(self, path: str, patch: dict[str, Any]) -> Any:
        return self.request("PATCH", path, patch, content_type="application/merge-patch+json")


def http_error_text(exc: urllib.error.HTTPError) -> str:
    """The API server's Status message of an HTTP error, for error reports."""
    try:
        return str(json.loads(exc.read()).get("message", exc))
    except (ValueError, AttributeError):
        return str(exc)


class KubeApiServer(Server):
    """etcd + kube-apiserver + kubelet stand-in; see the module docstring.

    After start(): `url`, `etcd_url`, `ca_file`, `admin_token`, `viewer_token`, `kubeconfig`
    (a kubeconfig file for the admin user), `viewer_kubeconfig`, `client()`.
    Point `kubelet.logs_root` at a scenario's pod-logs dir (load_scenario does).
    """

    name = "kube"

    @classmethod
    def check_installed(cls) -> None:
        """Raise NotProvisionedError unless etcd and the built kube-apiserver are there."""
        require_executable("etcd", "etcd (Debian package etcd-server)")
        require_executable("openssl", "openssl (Debian package openssl)")
        binary = cache_dir() / "bin" / "kube-apiserver"
        if not binary.is_file():
            raise NotProvisionedError(f"kube-apiserver ({binary})")

    def __init__(
        self,
        *,
        service_cidr: str = "10.96.0.0/12",
        start_timeout: float = 90.0,
    ) -> None:
        self.check_installed()
        self.etcd = require_executable("etcd", "etcd")
        self.apiserver = str(cache_dir() / "bin" / "kube-apiserver")
        super().__init__()
        self.service_cidr = service_cidr
        self.start_timeout = start_timeout
        self.admin_token = secrets.token_hex(16)
        self.viewer_token = secrets.token_hex(16)
        self.port = 0
        self.etcd_url = ""  # http://127.0.0.1:<port> once started (etcd's v3 JSON gateway too)
        self.pki = self.workdir / "pki"
        self.kubelet: KubeletServer | None = None

    @property
    def url(self) -> str:
        return f"https://{LOOPBACK}:{self.port}"

    @property
    def ca_file(self) -> Path:
        """The API server's self-signed serving certificate (it is its own CA)."""
        return self.pki / "apiserver.crt"

    @property
    def kubeconfig(self) -> Path:
        return self.workdir / "kubeconfig-admin.yaml"

    @property
    def viewer_kubeconfig(self) -> Path:
        return self.workdir / "kubeconfig-viewer.yaml"

    def client(self, *, viewer: bool = False) -> KubeClient:
        token = self.viewer_token if viewer else self.admin_token
        return KubeClient(self.url, token, self.ca_file)

    def _start(self) -> None:
        self.pki.mkdir()
        self._make_keys()
        self.kubelet = KubeletServer(
            self.workdir / "no-pod-logs", self.pki / "kubelet.crt", self.pki / "kubelet.key"
        )
        self.kubelet.start()
        etcd_port, peer_port = free_port(), free_port()
        etcd_url = self.etcd_url = f"http://{LOOPBACK}:{etcd_port}"
        etcd = self.spawn(
            "etcd",
            [
                self.etcd,
                "--name=triage",
                f"--data-dir={self.workdir / 'etcd'}",
                f"--listen-client-urls={etcd_url}",
                f"--advertise-client-urls={etcd_url}",
                f"--listen-peer-urls=http://{LOOPBACK}:{peer_port}",
                f"--initial-advertise-peer-urls=http://{LOOPBACK}:{peer_port}",
                f"--initial-cluster=triage=http://{LOOPBACK}:{peer_port}",
                "--log-level=warn",
            ],
        )
        wait_until(lambda: _http_ok(f"{etcd_url}/health"), timeout=30, what="etcd", proc=etcd)
        tokens = self.workdir / "tokens.csv"
        tokens.write_text(
            f'{self.admin_token},admin,uid-admin,"system:masters"\n'
            f'{self.viewer_token},triage-viewer,uid-viewer,"triage:viewers"\n'
        )
        tokens.chmod(0o600)
        self.port = free_port()
        sa_key = self.pki / "sa.key"
        apiserver = self.spawn(
            "kube-apiserver",
            [
                self.apiserver,
                f"--etcd-servers={etcd_url}",
                f"--bind-address={LOOPBACK}",
                f"--advertise-address={LOOPBACK}",
                f"--secure-port={self.port}",
                # The lease reconciler refuses a loopback advertise address; with one
                # API server there is nothing to reconcile anyway.
                "--endpoint-reconciler-type=none",
                f"--cert-dir={self.pki}",
                f"--token-auth-file={tokens}",
                "--authorization-mode=RBAC",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                f"--service-account-key-file={sa_key}",
                f"--service-account-signing-key-file={sa_key}",
                f"--service-cluster-ip-range={self.service_cidr}",
                f"--disable-admission-plugins={','.join(ADMISSION_DISABLED)}",
                # Pod logs: the loader gives every Node an InternalDNS address of
                # 127.0.0.1 and the stand-in's port, and only that type is used.
                f"--kubelet-certificate-authority={self.pki / 'kubelet.crt'}",
                "--kubelet-preferred-address-types=InternalDNS",
                # Recorded Events must outlive a long test run (the default is 1h).
                "--event-ttl=168h",
                "--profiling=false",
                "--v=1",
            ],
        )
        wait_until(self._ready, timeout=self.start_timeout, what="kube-apiserver", proc=apiserver)
        client = self.client()
        for obj in VIEWER_RBAC:
            kind = "clusterroles" if obj["kind"] == "ClusterRole" else "clusterrolebindings"
            client.create(f"/apis/rbac.authorization.k8s.io/v1/{kind}", obj)
        self._write_kubeconfig(self.kubeconfig, "admin", self.admin_token)
        self._write_kubeconfig(self.viewer_kubeconfig, "triage-viewer", self.viewer_token)

    def _make_keys(self) -> None:
        _openssl("genrsa", "-out", str(self.pki / "sa.key"), "2048")
        _openssl(
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "7",
            "-keyout", str(self.pki / "kubelet.key"), "-out", str(self.pki / "kubelet.crt"),
            "-subj", "/CN=triage-kubelet-stand-in",
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
        )  # fmt: skip

    def _ready(self) -> bool:
        if not self.ca_file.is_file():
            return False
        text = self.client().request("GET", "/readyz", raw=True, timeout=5)
        return str(text).strip() == "ok"

    def _write_kubeconfig(self, path: Path, user: str, token: str) -> None:
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "triage-test",
                    "cluster": {"server": self.url, "certificate-authority": str(self.ca_file)},
                }
            ],
            "users": [{"name": user, "user": {"token": token}}],
            "contexts": [
                {"name": "triage-test", "context": {"cluster": "triage-test", "user": user}}
            ],
            "current-context": "triage-test",
        }
        path.write_text(json.dumps(config, indent=2))  # JSON is YAML: no PyYAML needed here
        path.chmod(0o600)

    def stop(self, *, remove_workdir: bool = True) -> None:
        # The API server first, so it does not log etcd errors while stopping.
        super().stop(remove_workdir=remove_workdir)
        if self.kubelet is not None:
            self.kubelet.stop()
            self.kubelet = None


def _http_ok(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=2) as response:
        return bool(response.status == 200)
