"""What a pod runs: containers, templates, probes and container states, as the API prints
them. Times are RFC 3339 with a Z, second precision, like the API server's."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

Obj = dict[str, Any]


def iso(when: datetime) -> str:
    """RFC 3339 with a Z, second precision, as the API server prints times."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def ago(now: datetime, **delta: float) -> datetime:
    return now - timedelta(**delta)


@dataclass
class Ctr:
    """A container of a pod template."""

    name: str
    image: str
    port: int | None = 8080
    port_name: str = "http"
    requests: dict[str, str] = field(default_factory=lambda: {"cpu": "100m", "memory": "128Mi"})
    limits: dict[str, str] = field(default_factory=lambda: {"memory": "256Mi"})
    env: dict[str, str] = field(default_factory=dict)
    env_from: list[Obj] = field(default_factory=list)
    readiness: Obj | None = None
    liveness: Obj | None = None
    startup: Obj | None = None
    command: list[str] | None = None
    args: list[str] | None = None
    mounts: list[Obj] = field(default_factory=list)

    def spec(self) -> Obj:
        out: Obj = {"name": self.name, "image": self.image, "imagePullPolicy": "IfNotPresent"}
        if self.command:
            out["command"] = list(self.command)
        if self.args:
            out["args"] = list(self.args)
        if self.port:
            out["ports"] = [{"containerPort": self.port, "name": self.port_name,
                             "protocol": "TCP"}]
        if self.env:
            out["env"] = [{"name": k, "value": v} for k, v in self.env.items()]
        if self.env_from:
            out["envFrom"] = list(self.env_from)
        out["resources"] = {k: v for k, v in
                            (("limits", self.limits), ("requests", self.requests)) if v}
        for key, probe in (("readinessProbe", self.readiness), ("livenessProbe", self.liveness),
                           ("startupProbe", self.startup)):
            if probe:
                out[key] = probe
        if self.mounts:
            out["volumeMounts"] = list(self.mounts)
        out["terminationMessagePath"] = "/dev/termination-log"
        out["terminationMessagePolicy"] = "File"
        return out


def http_probe(path: str, port: int | str = "http", *, delay: int = 5, period: int = 10,
               timeout: int = 1, failures: int = 3) -> Obj:
    return {"httpGet": {"path": path, "port": port, "scheme": "HTTP"},
            "initialDelaySeconds": delay, "periodSeconds": period, "timeoutSeconds": timeout,
            "successThreshold": 1, "failureThreshold": failures}


def tcp_probe(port: int | str, *, delay: int = 5, period: int = 10) -> Obj:
    return {"tcpSocket": {"port": port}, "initialDelaySeconds": delay, "periodSeconds": period,
            "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3}


@dataclass
class Template:
    """A pod template: what a revision of a workload runs."""

    containers: list[Ctr]
    init: list[Ctr] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: list[Obj] = field(default_factory=list)
    volumes: list[Obj] = field(default_factory=list)
    service_account: str = "default"
    image_pull_secrets: list[str] = field(default_factory=list)

    def spec(self) -> Obj:
        out: Obj = {}
        if self.init:
            out["initContainers"] = [c.spec() for c in self.init]
        out["containers"] = [c.spec() for c in self.containers]
        out["dnsPolicy"] = "ClusterFirst"
        if self.image_pull_secrets:
            out["imagePullSecrets"] = [{"name": n} for n in self.image_pull_secrets]
        if self.node_selector:
            out["nodeSelector"] = dict(self.node_selector)
        out["restartPolicy"] = "Always"
        out["schedulerName"] = "default-scheduler"
        out["serviceAccountName"] = self.service_account
        out["terminationGracePeriodSeconds"] = 30
        if self.tolerations:
            out["tolerations"] = list(self.tolerations)
        if self.volumes:
            out["volumes"] = list(self.volumes)
        return out


# ------------------------------------------------------------------ container states


def running(since: datetime, *, ready: bool = True, restarts: int = 0,
            last: Obj | None = None) -> Obj:
    """A container status whose current instance runs since `since`."""
    return {"state": {"running": {"startedAt": iso(since)}}, "ready": ready,
            "started": True, "restartCount": restarts, "lastState": last or {}}


def waiting(reason: str, message: str = "", *, restarts: int = 0,
            last: Obj | None = None) -> Obj:
    """A container status waiting to run (CrashLoopBackOff, ImagePullBackOff, ...)."""
    state: Obj = {"reason": reason}
    if message:
        state["message"] = message
    return {"state": {"waiting": state}, "ready": False, "started": False,
            "restartCount": restarts, "lastState": last or {}}


def ended(reason: str, code: int, started: datetime, finished: datetime,
          message: str = "") -> Obj:
    """A terminated state, for `lastState` (or `state` of a finished container)."""
    term: Obj = {"exitCode": code, "reason": reason, "startedAt": iso(started),
                 "finishedAt": iso(finished)}
    if message:
        term["message"] = message
    return {"terminated": term}
