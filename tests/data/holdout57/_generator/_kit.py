"""Shared helpers that build the objects, logs and metrics of one scenario."""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

Obj = dict[str, Any]
Labels = tuple[tuple[str, str], ...]
STEP = 60


def parse(ts: str) -> datetime:
    return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def hexid(seed: str, n: int) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:n]


def suffix(seed: str) -> str:
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(alphabet[b % len(alphabet)] for b in digest[:5])


def rs_hash(seed: str) -> str:
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    digest = hashlib.sha256(("rs" + seed).encode()).digest()
    return "".join(alphabet[b % len(alphabet)] for b in digest[:10])


@dataclass
class Family:
    name: str
    kind: str
    help: str
    series: dict[tuple[str, Labels], list[tuple[int, float]]] = field(default_factory=dict)


@dataclass
class App:
    """A workload's pods, as the scenario created them."""

    ns: str
    name: str
    rs: str
    pods: list[str]
    ips: list[str]
    nodes: list[str]
    image: str
    tpl: Obj = field(default_factory=dict)


class Scenario:
    def __init__(self, sid: str, now: str, seed: int) -> None:
        self.sid = sid
        self.now = parse(now)
        self.rng = random.Random(seed)
        self.objects: list[Obj] = []
        self.logs: list[Obj] = []
        self.families: dict[str, Family] = {}
        self.pod_logs: dict[str, list[str]] = {}
        self.node_zone: dict[str, str] = {}
        self.node_ip: dict[str, str] = {}
        self._ip_next: dict[str, int] = {}
        self._node_index: dict[str, int] = {}
        self.scenario_yaml: Obj = {}

    # ---- time -------------------------------------------------------------------------
    def ago(self, minutes: float) -> datetime:
        return self.now - timedelta(minutes=minutes)

    def t(self, minutes: float) -> str:
        return iso(self.ago(minutes))

    def uid(self, seed: str) -> str:
        h = hexid(self.sid + seed, 32)
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"

    # ---- objects ----------------------------------------------------------------------
    def add(self, obj: Obj) -> Obj:
        self.objects.append(obj)
        return obj

    def meta(self, name: str, ns: str | None, created_min: float, **extra: Any) -> Obj:
        m: Obj = {"name": name}
        if ns is not None:
            m["namespace"] = ns
        m["uid"] = self.uid(f"{ns or ''}/{name}")
        m["creationTimestamp"] = self.t(created_min)
        m.update(extra)
        return m

    def namespace(self, name: str, created_days: float = 400) -> None:
        self.add({"apiVersion": "v1", "kind": "Namespace",
                  "metadata": self.meta(name, None, created_days * 1440,
                                        labels={"kubernetes.io/metadata.name": name}),
                  "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})

    def node(self, name: str, zone: str, pool: str, *, cpu: str = "8", memory: str = "32Gi",
             instance: str = "m6i.2xlarge", runtime: str = "containerd://1.7.13",
             kernel: str = "6.1.79", created_days: float = 30, labels: Obj | None = None,
             capacity: Obj | None = None, allocatable: Obj | None = None,
             conditions: list[Obj] | None = None, taints: list[Obj] | None = None,
             annotations: Obj | None = None) -> None:
        idx = len(self._node_index) + 1
        self._node_index[name] = idx
        ip = f"10.0.{idx // 200}.{idx % 200 + 10}"
        self.node_ip[name] = ip
        self.node_zone[name] = zone
        self._ip_next[name] = 2
        region = zone[:-1]
        lab: Obj = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                    "kubernetes.io/arch": "amd64", "node.kubernetes.io/instance-type": instance,
                    "topology.kubernetes.io/region": region,
                    "topology.kubernetes.io/zone": zone, "nodepool": pool}
        lab.update(labels or {})
        cap: Obj = {"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "100Gi",
                    "hugepages-1Gi": "0", "hugepages-2Mi": "0"}
        cap.update(capacity or {})
        alloc = dict(cap)
        alloc["cpu"] = f"{int(cpu) * 1000 - 190}m"
        alloc.update(allocatable or {})
        hb = self.t(0.4)
        since = self.t(min(created_days * 1440, 6 * 1440))
        conds = conditions or [
            {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory",
             "message": "kubelet has sufficient memory available"},
            {"type": "DiskPressure", "status": "False", "reason": "KubeletHasNoDiskPressure",
             "message": "kubelet has no disk pressure"},
            {"type": "PIDPressure", "status": "False", "reason": "KubeletHasSufficientPID",
             "message": "kubelet has sufficient PID available"},
            {"type": "Ready", "status": "True", "reason": "KubeletReady",
             "message": "kubelet is posting ready status"},
        ]
        for c in conds:
            c.setdefault("lastHeartbeatTime", hb)
            c.setdefault("lastTransitionTime", since)
        spec: Obj = {"podCIDR": f"10.244.{idx}.0/24",
                     "providerID": f"aws:///{zone}/i-0{hexid(name, 16)}"}
        if taints:
            spec["taints"] = taints
        meta = self.meta(name, None, created_days * 1440, labels=lab)
        if annotations:
            meta["annotations"] = annotations
        self.add({"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": spec,
                  "status": {"capacity": cap, "allocatable": alloc, "conditions": conds,
                             "addresses": [{"type": "InternalIP", "address": ip},
                                           {"type": "Hostname", "address": name}],
                             "nodeInfo": {"architecture": "amd64",
                                          "containerRuntimeVersion": runtime,
                                          "kernelVersion": kernel,
                                          "kubeletVersion": "v1.29.6",
                                          "kubeProxyVersion": "v1.29.6",
                                          "operatingSystem": "linux",
                                          "osImage": "Amazon Linux 2023"}}})

    def find(self, kind: str, name: str) -> Obj:
        for o in self.objects:
            if o["kind"] == kind and o["metadata"]["name"] == name:
                return o
        raise KeyError(name)

    def retime_pod(self, name: str, created_min: float) -> None:
        o = self.find("Pod", name)
        o["metadata"]["creationTimestamp"] = self.t(created_min)
        o["status"]["startTime"] = self.t(created_min - 0.1)
        for c in o["status"]["conditions"]:
            c["lastTransitionTime"] = self.t(created_min - 0.3)
        for cs in o["status"].get("containerStatuses", []):
            if "running" in cs["state"]:
                cs["state"]["running"]["startedAt"] = self.t(created_min - 0.1)

    def pod_name(self, rs: str, key: str) -> str:
        return f"{rs}-{suffix(self.sid + rs + key)}"

    def pod_ip(self, node: str) -> str:
        n = self._ip_next[node]
        self._ip_next[node] = n + 1
        return f"10.244.{self._node_index[node]}.{n}"

    def deployment(self, ns: str, name: str, template: Obj, *, replicas: int, ready: int,
                   updated: int, revision: int, created_days: float = 200,
                   strategy: Obj | None = None, annotations: Obj | None = None,
                   conditions: list[Obj] | None = None, progressed_min: float = 3000,
                   unavailable: int = 0) -> None:
        ann = {"deployment.kubernetes.io/revision": str(revision)}
        ann.update(annotations or {})
        conds = conditions or [
            {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
             "message": "Deployment has minimum availability.",
             "lastUpdateTime": self.t(progressed_min),
             "lastTransitionTime": self.t(progressed_min)},
            {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
             "message": f'ReplicaSet "{name}-{rs_hash(ns + name + str(revision))}" has '
                        "successfully progressed.",
             "lastUpdateTime": self.t(progressed_min),
             "lastTransitionTime": self.t(progressed_min)},
        ]
        status: Obj = {"observedGeneration": revision + 2, "replicas": replicas + 0,
                       "updatedReplicas": updated, "readyReplicas": ready,
                       "availableReplicas": ready, "conditions": conds}
        if unavailable:
            status["unavailableReplicas"] = unavailable
        self.add({"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": self.meta(name, ns, created_days * 1440, annotations=ann,
                                        generation=revision + 2, labels={"app": name}),
                  "spec": {"replicas": replicas, "revisionHistoryLimit": 10,
                           "selector": {"matchLabels": {"app": name}},
                           "strategy": strategy or {"type": "RollingUpdate", "rollingUpdate": {
                               "maxSurge": "25%", "maxUnavailable": "25%"}},
                           "template": template},
                  "status": status})

    def replicaset(self, ns: str, name: str, revision: int, template: Obj, *, replicas: int,
                   ready: int, created_min: float) -> str:
        h = rs_hash(ns + name + str(revision))
        rs = f"{name}-{h}"
        tpl = json.loads(json.dumps(template))
        tpl["metadata"].setdefault("labels", {})["pod-template-hash"] = h
        self.add({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                  "metadata": self.meta(rs, ns, created_min, labels={
                      "app": name, "pod-template-hash": h},
                      annotations={"deployment.kubernetes.io/revision": str(revision),
                                   "deployment.kubernetes.io/desired-replicas": str(replicas)},
                      ownerReferences=[{"apiVersion": "apps/v1", "kind": "Deployment",
                                        "name": name, "uid": self.uid(f"{ns}/{name}"),
                                        "controller": True, "blockOwnerDeletion": True}]),
                  "spec": {"replicas": replicas,
                           "selector": {"matchLabels": {"app": name, "pod-template-hash": h}},
                           "template": tpl},
                  "status": {"replicas": replicas, "readyReplicas": ready,
                             "availableReplicas": ready, "fullyLabeledReplicas": replicas,
                             "observedGeneration": 1}})
        return rs

    def pod(self, ns: str, rs: str, app: str, template: Obj, node: str | None, *,
            created_min: float, key: str, phase: str = "Running",
            statuses: list[Obj] | None = None, ready: bool = True,
            conditions: list[Obj] | None = None, owner_kind: str = "ReplicaSet") -> tuple[str, str]:
        name = self.pod_name(rs, key)
        spec = json.loads(json.dumps(template["spec"]))
        ip = self.pod_ip(node) if node and phase == "Running" else ""
        if node:
            spec["nodeName"] = node
        spec.setdefault("restartPolicy", "Always")
        spec.setdefault("schedulerName", "default-scheduler")
        spec.setdefault("serviceAccountName", "default")
        spec.setdefault("terminationGracePeriodSeconds", 30)
        started = self.t(created_min - 0.1)
        labels = dict(template["metadata"].get("labels", {}))
        labels["app"] = app
        if owner_kind == "ReplicaSet":
            labels["pod-template-hash"] = rs.rsplit("-", 1)[1]
        meta = self.meta(name, ns, created_min, labels=labels,
                         ownerReferences=[{"apiVersion": "apps/v1", "kind": owner_kind,
                                           "name": rs, "uid": self.uid(f"{ns}/{rs}"),
                                           "controller": True, "blockOwnerDeletion": True}])
        if template["metadata"].get("annotations"):
            meta["annotations"] = dict(template["metadata"]["annotations"])
        if statuses is None:
            statuses = []
            for c in spec["containers"]:
                statuses.append(self.cstatus(c, ns, name, started))
        rd = "True" if ready else "False"
        conds = conditions or [
            {"type": "Initialized", "status": "True", "lastTransitionTime": started},
            {"type": "Ready", "status": rd, "lastTransitionTime": self.t(created_min - 0.3)},
            {"type": "ContainersReady", "status": rd,
             "lastTransitionTime": self.t(created_min - 0.3)},
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": self.t(created_min)},
        ]
        status: Obj = {"phase": phase, "conditions": conds, "qosClass": "Burstable"}
        if node:
            status.update({"hostIP": self.node_ip[node], "podIP": ip, "startTime": started,
                           "containerStatuses": statuses})
        self.add({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
                  "status": status})
        return name, ip

    def cstatus(self, c: Obj, ns: str, pod: str, started: str, *, ready: bool = True,
                restarts: int = 0, state: Obj | None = None, last: Obj | None = None) -> Obj:
        cs: Obj = {"name": c["name"], "image": c["image"],
                   "imageID": c["image"].split(":")[0] + "@sha256:" + hexid(c["image"], 64),
                   "containerID": "containerd://" + hexid(ns + pod + c["name"] + str(restarts),
                                                          64),
                   "ready": ready, "started": ready, "restartCount": restarts,
                   "state": state or {"running": {"startedAt": started}}}
        if last:
            cs["lastState"] = last
        else:
            cs["lastState"] = {}
        return cs

    def service(self, ns: str, name: str, selector: Obj, port: int, target: int,
                pods: list[tuple[str, str, str]], *, annotations: Obj | None = None,
                created_days: float = 200, not_ready: list[tuple[str, str, str]] | None = None
                ) -> None:
        meta = self.meta(name, ns, created_days * 1440, labels={"app": name})
        if annotations:
            meta["annotations"] = annotations
        h = int(hexid(ns + name, 4), 16)
        self.add({"apiVersion": "v1", "kind": "Service", "metadata": meta,
                  "spec": {"type": "ClusterIP", "clusterIP": f"172.20.{h % 250}.{h // 250 % 250}",
                           "selector": selector, "sessionAffinity": "None",
                           "ports": [{"name": "http", "port": port, "protocol": "TCP",
                                      "targetPort": target}]},
                  "status": {"loadBalancer": {}}})
        subset: Obj = {"ports": [{"name": "http", "port": target, "protocol": "TCP"}]}

        def addr(p: tuple[str, str, str]) -> Obj:
            return {"ip": p[1], "nodeName": p[2],
                    "targetRef": {"kind": "Pod", "name": p[0], "namespace": ns,
                                  "uid": self.uid(f"{ns}/{p[0]}")}}
        if pods:
            subset["addresses"] = [addr(p) for p in pods]
        if not_ready:
            subset["notReadyAddresses"] = [addr(p) for p in not_ready]
        self.add({"apiVersion": "v1", "kind": "Endpoints",
                  "metadata": self.meta(name, ns, created_days * 1440, labels={"app": name}),
                  "subsets": [subset] if (pods or not_ready) else []})

    def event(self, ns: str, kind: str, name: str, reason: str, message: str, *,
              type_: str = "Normal", count: int = 1, first: float = 30, last: float = 1,
              component: str = "kubelet", host: str | None = None,
              container: str | None = None) -> None:
        key = f"{ns}/{kind}/{name}/{reason}/{message[:40]}/{first}"
        src: Obj = {"component": component}
        if host:
            src["host"] = host
        io: Obj = {"kind": kind, "name": name, "uid": self.uid(f"{ns}/{name}")}
        if ns:
            io["namespace"] = ns
        if kind == "Pod":
            io["apiVersion"] = "v1"
            if container:
                io["fieldPath"] = "spec.containers{" + container + "}"
        self.add({"apiVersion": "v1", "kind": "Event",
                  "metadata": self.meta(f"{name}.{hexid(key, 16)}", ns or "default", last),
                  "involvedObject": io, "reason": reason, "message": message, "type": type_,
                  "count": count, "firstTimestamp": self.t(first), "lastTimestamp": self.t(last),
                  "source": src, "reportingComponent": component})

    # ---- workloads --------------------------------------------------------------------
    def template(self, app: str, containers: list[Obj], *, annotations: Obj | None = None,
                 extra_spec: Obj | None = None, labels: Obj | None = None) -> Obj:
        meta: Obj = {"labels": {"app": app, **(labels or {})}}
        if annotations:
            meta["annotations"] = annotations
        spec: Obj = {"containers": containers}
        spec.update(extra_spec or {})
        return {"metadata": meta, "spec": spec}

    def app(self, ns: str, name: str, image: str, nodes: list[str], *, port: int = 8080,
            cpu: str = "250m", mem: str = "512Mi", cpu_lim: str | None = None,
            mem_lim: str | None = None, revision: int = 7, created_min: float = 4000,
            service: bool = True, env: list[Obj] | None = None,
            svc_annotations: Obj | None = None, prev_image: str | None = None) -> App:
        res: Obj = {"requests": {"cpu": cpu, "memory": mem},
                    "limits": {"memory": mem_lim or mem}}
        if cpu_lim:
            res["limits"]["cpu"] = cpu_lim
        c: Obj = {"name": name, "image": image, "ports": [{"containerPort": port,
                                                           "name": "http",
                                                           "protocol": "TCP"}],
                  "resources": res,
                  "readinessProbe": {"httpGet": {"path": "/healthz", "port": port},
                                     "periodSeconds": 10, "failureThreshold": 3}}
        if env:
            c["env"] = env
        tpl = self.template(name, [c])
        self.deployment(ns, name, tpl, replicas=len(nodes), ready=len(nodes),
                        updated=len(nodes), revision=revision, progressed_min=created_min - 2)
        if prev_image:
            old = json.loads(json.dumps(tpl))
            old["spec"]["containers"][0]["image"] = prev_image
            self.replicaset(ns, name, revision - 1, old, replicas=0, ready=0,
                            created_min=created_min + 4 * 1440)
            self.objects[-1]["status"] = {"replicas": 0, "observedGeneration": 3}
        rs = self.replicaset(ns, name, revision, tpl, replicas=len(nodes), ready=len(nodes),
                             created_min=created_min)
        pods, ips = [], []
        for i, n in enumerate(nodes):
            p, ip = self.pod(ns, rs, name, tpl, n, created_min=created_min - i * 0.5, key=str(i))
            pods.append(p)
            ips.append(ip)
        if service:
            trio = list(zip(pods, ips, nodes, strict=True))
            self.service(ns, name, {"app": name}, 80, port, trio, annotations=svc_annotations)
        return App(ns, name, rs, pods, ips, nodes, image, tpl)

    # ---- logs -------------------------------------------------------------------------
    def log(self, dt: datetime, level: str, svc: str, ns: str, pod: str, container: str,
            msg: str, **extra: Any) -> None:
        doc: Obj = {"@timestamp": iso_ms(dt), "message": msg, "log.level": level,
                    "service.name": svc, "kubernetes.namespace": ns,
                    "kubernetes.pod.name": pod, "kubernetes.container.name": container}
        for k, v in extra.items():
            doc[k.replace("__", ".")] = v
        self.logs.append(doc)

    def chatter(self, app: App, lines: list[tuple[str, str]], *, every_s: float = 90,
                minutes: float = 60, start: float = 0, stop: float = 0) -> None:
        """Periodic lines (level, message template) from every pod of an app."""
        for pod in app.pods:
            sec = self.rng.uniform(0, every_s)
            while sec < (minutes - start - stop) * 60:
                dt = self.ago(minutes - start) + timedelta(seconds=sec)
                lvl, tpl = self.rng.choice(lines)
                msg = tpl.format(ms=self.rng.randint(3, 90), n=self.rng.randint(1, 400),
                                 id=hexid(pod + str(sec), 8), rnd=self.rng.randint(1000, 9999))
                self.log(dt, lvl, app.name, app.ns, pod, app.name, msg)
                sec += every_s * self.rng.uniform(0.6, 1.4)

    def pod_log(self, ns: str, pod: str, container: str, lines: list[str],
                previous: bool = False) -> None:
        name = "previous.log" if previous else "log"
        self.pod_logs[f"{ns}/{pod}/{container}.{name}"] = lines

    # ---- metrics ----------------------------------------------------------------------
    def fam(self, name: str, kind: str, help_: str) -> Family:
        if name not in self.families:
            self.families[name] = Family(name, kind, help_)
        return self.families[name]

    def steps(self) -> list[int]:
        end = int(self.now.timestamp())
        return [end - 3600 + i * STEP for i in range(3600 // STEP + 1)]

    def gauge(self, name: str, help_: str, labels: Obj, fn: Any) -> None:
        f = self.fam(name, "gauge", help_)
        key = (name, tuple(sorted(labels.items())))
        pts = [(ts, fn((self.steps()[-1] - ts) / 60)) for ts in self.steps()]
        f.series[key] = [(ts, float(v)) for ts, v in pts if v is not None]

    def counter(self, name: str, help_: str, labels: Obj, rate: Any, start: float = 0.0,
                resets: list[float] | None = None) -> None:
        """rate(minutes_ago) per second; resets: minutes ago where the counter restarts."""
        f = self.fam(name, "counter", help_)
        key = (name + "_total", tuple(sorted(labels.items())))
        val = start
        out: list[tuple[int, float]] = []
        pending = sorted(resets or [], reverse=True)
        for ts in self.steps():
            m = (self.steps()[-1] - ts) / 60
            if pending and m <= pending[0]:
                val = 0.0
                pending.pop(0)
            r = rate(m)
            if r is None:
                continue
            val += max(0.0, float(r)) * STEP
            out.append((ts, round(val, 1)))
        f.series[key] = out

    def histogram(self, name: str, help_: str, labels: Obj, rate: Any, p_fast: Any,
                  buckets: list[float]) -> None:
        """Latency histogram: p_fast(m, le) is the share of requests at or under le."""
        f = self.fam(name, "histogram", help_)
        acc = {le: 0.0 for le in buckets}
        tot = 0.0
        ssum = 0.0
        series: dict[tuple[str, Labels], list[tuple[int, float]]] = {}
        for ts in self.steps():
            m = (self.steps()[-1] - ts) / 60
            n = max(0.0, float(rate(m))) * STEP
            tot += n
            prev = 0.0
            for le in buckets:
                share = max(prev, min(1.0, float(p_fast(m, le))))
                acc[le] += n * share
                prev = share
            ssum += n * float(p_fast(m, -1.0))
            for le in buckets:
                k = (name + "_bucket", tuple(sorted({**labels, "le": str(le)}.items())))
                series.setdefault(k, []).append((ts, round(acc[le], 2)))
            k = (name + "_bucket", tuple(sorted({**labels, "le": "+Inf"}.items())))
            series.setdefault(k, []).append((ts, round(tot, 2)))
            series.setdefault((name + "_sum", tuple(sorted(labels.items()))), []).append(
                (ts, round(ssum, 3)))
            series.setdefault((name + "_count", tuple(sorted(labels.items()))), []).append(
                (ts, round(tot, 2)))
        f.series.update(series)

    def pod_basics(self, app: App, *, cpu: Any, mem_mb: Any, rps: Any | None = None,
                   err: Any | None = None, svc: str | None = None) -> None:
        for i, pod in enumerate(app.pods):
            lab = {"namespace": app.ns, "pod": pod, "container": app.name}
            j = 1 + 0.08 * ((i % 3) - 1)
            self.counter("container_cpu_usage_seconds", "Cumulative cpu time consumed.", lab,
                         lambda m, i=i, j=j: _scale(cpu(m, i), j * self.rng.uniform(0.9, 1.1)),
                         start=3000 + 400 * i)
            self.gauge("container_memory_working_set_bytes", "Current working set in bytes.",
                       lab, lambda m, i=i, j=j: _scale(mem_mb(m, i), j * 1048576
                                                       * self.rng.uniform(0.98, 1.02), True))
            if rps is not None:
                hl = {"namespace": app.ns, "pod": pod, "service": svc or app.name}
                self.counter("http_requests", "Total HTTP requests.", {**hl, "code": "200"},
                             lambda m, i=i: _scale(rps(m, i), self.rng.uniform(0.9, 1.1)),
                             start=100000 + 7000 * i)
                if err is not None:
                    self.counter("http_requests", "Total HTTP requests.", {**hl, "code": "500"},
                                 lambda m, i=i: err(m, i), start=40 + 3 * i)

    # ---- output -----------------------------------------------------------------------
    def write(self, root: Path) -> None:
        d = root / self.sid
        d.mkdir(parents=True, exist_ok=True)
        (d / "scenario.yaml").write_text(yaml.safe_dump(self.scenario_yaml, sort_keys=False,
                                                        width=100, allow_unicode=True))
        (d / "cluster.yaml").write_text(yaml.safe_dump_all(self.objects, sort_keys=False,
                                                           width=1000))
        logs = sorted(self.logs, key=lambda x: x["@timestamp"])
        (d / "logs.ndjson").write_text("".join(json.dumps(x, sort_keys=False) + "\n"
                                               for x in logs))
        out: list[str] = []
        for f in self.families.values():
            out.append(f"# TYPE {f.name} {f.kind}")
            out.append(f"# HELP {f.name} {f.help}")
            for (sample, labels), points in f.series.items():
                lab = ",".join(f'{k}="{v}"' for k, v in labels)
                for ts, v in points:
                    val = repr(v) if not float(v).is_integer() else str(int(v))
                    out.append(f"{sample}{{{lab}}} {val} {ts}")
        out.append("# EOF")
        (d / "metrics.om").write_text("\n".join(out) + "\n")
        pl = d / "pod-logs"
        for rel, lines in self.pod_logs.items():
            p = pl / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("".join(line + "\n" for line in lines))

    # ---- common background ------------------------------------------------------------
    def background(self, nodes: list[str], extra_ns: list[str] | None = None) -> list[App]:
        """kube-system, monitoring and ingress workloads that stay healthy all hour."""
        for ns in ["default", "kube-system", "monitoring", "ingress-nginx", *(extra_ns or [])]:
            self.namespace(ns)
        apps: list[App] = []
        dns = self.app("kube-system", "coredns", "registry.k8s.io/coredns/coredns:v1.11.1",
                       nodes[:2], port=53, cpu="100m", mem="70Mi", mem_lim="170Mi",
                       revision=3, created_min=8000)
        self.chatter(dns, [("info", "[INFO] Reloading complete"),
                           ("info", '[INFO] 10.244.3.{n}:{rnd} - {rnd} "A IN '
                                    'api.internal. udp 41 false 512" NOERROR qr,aa,rd 86 0.000'
                                    '{ms}s')], every_s=400)
        apps.append(dns)
        ksm = self.app("monitoring", "kube-state-metrics",
                       "registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.12.0",
                       nodes[-1:], cpu="100m", mem="190Mi", revision=5, created_min=7000)
        apps.append(ksm)
        ing = self.app("ingress-nginx", "ingress-nginx-controller",
                       "registry.k8s.io/ingress-nginx/controller:v1.10.1", nodes[1:3], port=80,
                       cpu="200m", mem="256Mi", mem_lim="512Mi", revision=9, created_min=6500)
        apps.append(ing)
        self.chatter(ing, [("info", "Configuration changes detected, backend reload required"),
                           ("info", "Backend successfully reloaded"),
                           ("warn", "Error obtaining Endpoints for Service \"default/legacy-"
                                    "docs\": no object matching key \"default/legacy-docs\" in "
                                    "local store")], every_s=500)
        return apps


def backoff_starts(first_min: float) -> list[float]:
    """Minutes-ago of each start of a container that exits at once, with kubelet back-off."""
    out = [first_min]
    delay = 10.0
    t = first_min
    while True:
        t -= (delay + 2) / 60
        if t <= 0.2:
            return out
        out.append(t)
        delay = min(delay * 2, 300.0)


def worker_nodes(scn: Scenario, count: int, *, region: str = "eu-west-1", pool: str = "general",
                 first: int = 11, **kw: Any) -> list[str]:
    names = []
    for i in range(count):
        zone = region + "abc"[i % 3]
        name = f"ip-10-0-{(i % 3) * 16 + 1}-{first + 7 * i}.{region}.compute.internal"
        scn.node(name, zone, pool, **kw)
        names.append(name)
    return names


def rollout_events(scn: Scenario, ns: str, name: str, new_rs: str, old_rs: str, at: float,
                   replicas: int) -> None:
    scn.event(ns, "Deployment", name, "ScalingReplicaSet",
              f"Scaled up replica set {new_rs} to {replicas}", first=at, last=at - 1.5,
              component="deployment-controller")
    scn.event(ns, "Deployment", name, "ScalingReplicaSet",
              f"Scaled down replica set {old_rs} to 0 from {replicas}", first=at - 1,
              last=at - 2.5, component="deployment-controller")


def pending_job_pod(scn: Scenario, ns: str, job: str, mem: str, nodes: int, at: float) -> str:
    """A batch Job whose pod waits for memory: a bystander that looks alarming."""
    c = {"name": job, "image": f"registry.internal/{ns}/{job}:2024.11",
         "resources": {"requests": {"cpu": "2", "memory": mem}, "limits": {"memory": mem}}}
    tpl = scn.template(job, [c], extra_spec={"restartPolicy": "Never"})
    scn.add({"apiVersion": "batch/v1", "kind": "Job",
             "metadata": scn.meta(job, ns, at, labels={"app": job}),
             "spec": {"backoffLimit": 2, "completions": 1, "parallelism": 1,
                      "template": tpl},
             "status": {"active": 1, "startTime": scn.t(at)}})
    name, _ = scn.pod(ns, job, job, tpl, None, created_min=at, key="0", phase="Pending",
                      ready=False, owner_kind="Job",
                      conditions=[{"type": "PodScheduled", "status": "False",
                                   "reason": "Unschedulable", "lastTransitionTime": scn.t(at),
                                   "message": f"0/{nodes} nodes are available: {nodes} "
                                              "Insufficient memory. preemption: 0/"
                                              f"{nodes} nodes are available: {nodes} No "
                                              "preemption victims found for incoming pod."}])
    scn.event(ns, "Pod", name, "FailedScheduling",
              f"0/{nodes} nodes are available: {nodes} Insufficient memory. preemption: 0/{nodes}"
              f" nodes are available: {nodes} No preemption victims found for incoming pod.",
              type_="Warning", count=int(at / 5) + 1, first=min(at, 59), last=2,
              component="default-scheduler")
    return name


def crashed_status(scn: Scenario, c: Obj, ns: str, pod: str, starts: list[float], *,
                   reason: str, code: int, running: bool) -> Obj:
    """Container status after len(starts) starts, each ending in reason/code."""
    last = starts[-1]
    if running:
        cs = scn.cstatus(c, ns, pod, scn.t(last), restarts=len(starts) - 1)
        prev_start = starts[-2] if len(starts) > 1 else last + 1
        cs["lastState"] = {"terminated": {"exitCode": code, "reason": reason,
                                          "startedAt": scn.t(prev_start),
                                          "finishedAt": scn.t(last + 0.05)}}
        return cs
    cs = scn.cstatus(c, ns, pod, scn.t(last), ready=False, restarts=len(starts) - 1)
    cs["state"] = {"waiting": {"reason": "CrashLoopBackOff",
                               "message": f"back-off 5m0s restarting failed container="
                                          f"{c['name']} pod={pod}_{ns}({scn.uid(ns + '/' + pod)})"}}
    cs["lastState"] = {"terminated": {"exitCode": code, "reason": reason,
                                      "startedAt": scn.t(last),
                                      "finishedAt": scn.t(max(0.1, last - 1.5))}}
    return cs


def _scale(v: float | None, k: float, whole: bool = False) -> float | None:
    if v is None:
        return None
    return float(int(v * k)) if whole else v * k
