"""Shared kit for the holdout59 generators: one container of a pod template."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from ._base import Obj


def sha(text: str) -> str:
    """Hex SHA-256 of a string (image digests, container ids)."""
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class Container:
    """One container of a pod template."""

    name: str
    image: str
    port: int | None = 8080
    cpu_req: str = "250m"
    cpu_lim: str | None = "1"
    mem_req: str = "256Mi"
    mem_lim: str | None = "512Mi"
    env: dict[str, str] = field(default_factory=dict)
    secret_env: dict[str, tuple[str, str]] = field(default_factory=dict)
    args: list[str] | None = None
    probe_path: str | None = "/healthz"
    mounts: list[Obj] = field(default_factory=list)

    def spec(self) -> Obj:
        """The container as it appears in a pod spec."""
        res: Obj = {"requests": {"cpu": self.cpu_req, "memory": self.mem_req}}
        limits: Obj = {}
        if self.cpu_lim:
            limits["cpu"] = self.cpu_lim
        if self.mem_lim:
            limits["memory"] = self.mem_lim
        if limits:
            res["limits"] = limits
        out: Obj = {"name": self.name, "image": self.image, "imagePullPolicy": "IfNotPresent"}
        if self.args:
            out["args"] = list(self.args)
        env: list[Obj] = [{"name": k, "value": v} for k, v in self.env.items()]
        for k, (secret, key) in self.secret_env.items():
            env.append({"name": k, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}})
        if env:
            out["env"] = env
        if self.port:
            out["ports"] = [{"name": "http", "containerPort": self.port, "protocol": "TCP"}]
        if self.port and self.probe_path:
            probe = {"httpGet": {"path": self.probe_path, "port": self.port}, "periodSeconds": 10}
            out["readinessProbe"] = {**probe, "failureThreshold": 3}
            out["livenessProbe"] = {**probe, "failureThreshold": 6, "initialDelaySeconds": 20}
        out["resources"] = res
        if self.mounts:
            out["volumeMounts"] = list(self.mounts)
        return out
