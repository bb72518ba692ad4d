"""Small shared helpers for the holdout50 scenario generator."""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml


def parse(s: str) -> datetime:
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def isoms(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


class Clock:
    def __init__(self, now: str) -> None:
        self.now = parse(now)

    def ago(self, minutes: float = 0, hours: float = 0, days: float = 0) -> datetime:
        return self.now - timedelta(minutes=minutes, hours=hours, days=days)

    def s(self, minutes: float = 0, hours: float = 0, days: float = 0) -> str:
        return iso(self.ago(minutes, hours, days))


def uid(*parts: str) -> str:
    h = hashlib.sha1("/".join(parts).encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def meta(kind: str, name: str, ns: str | None, created: str, **kw: Any) -> dict[str, Any]:
    m: dict[str, Any] = {"name": name}
    if ns:
        m["namespace"] = ns
    m["uid"] = uid(kind, ns or "", name)
    m["creationTimestamp"] = created
    for k, v in kw.items():
        if v is not None:
            m[k] = v
    return m


def namespace(name: str, created: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": meta("Namespace", name, None, created,
                             labels={"kubernetes.io/metadata.name": name}),
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}


def node(name: str, created: str, labels: dict[str, str], cpu: str = "4", mem: str = "16Gi",
         pods: str = "110", ready: bool = True, since: str | None = None,
         ip: str = "10.0.0.1", unschedulable: bool = False) -> dict[str, Any]:
    since = since or created
    conds = [
        {"type": t, "status": "False", "reason": r, "message": m,
         "lastHeartbeatTime": since, "lastTransitionTime": since}
        for t, r, m in [
            ("MemoryPressure", "KubeletHasSufficientMemory",
             "kubelet has sufficient memory available"),
            ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        ]
    ]
    conds.append({"type": "Ready", "status": "True" if ready else "Unknown",
                  "reason": "KubeletReady" if ready else "NodeStatusUnknown",
                  "message": "kubelet is posting ready status" if ready
                  else "Kubelet stopped posting node status.",
                  "lastHeartbeatTime": since, "lastTransitionTime": since})
    lab = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
           "kubernetes.io/arch": "amd64"}
    lab.update(labels)
    iid = uid(name)[:16].replace("-", "")
    spec: dict[str, Any] = {"providerID": f"aws:///eu-west-1a/i-0{iid}"}
    if unschedulable:
        spec["unschedulable"] = True
        spec["taints"] = [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule",
                           "timeAdded": since}]
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": meta("Node", name, None, created, labels=lab),
            "spec": spec,
            "status": {"capacity": {"cpu": cpu, "memory": mem, "pods": pods},
                       "allocatable": {"cpu": cpu, "memory": mem, "pods": pods},
                       "conditions": conds,
                       "addresses": [{"type": "InternalIP", "address": ip},
                                     {"type": "Hostname", "address": name}],
                       "nodeInfo": {"kubeletVersion": "v1.29.8", "containerRuntimeVersion":
                                    "containerd://1.7.20", "osImage": "Amazon Linux 2023",
                                    "kernelVersion": "6.1.102-111.182.amzn2023.x86_64"}}}


def container(name: str, image: str, cpu_req: str = "100m", mem_req: str = "128Mi",
              cpu_lim: str | None = None, mem_lim: str | None = None,
              env: dict[str, str] | None = None, ports: list[int] | None = None,
              probe: str | None = None, **kw: Any) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": image, "imagePullPolicy": "IfNotPresent"}
    res: dict[str, Any] = {"requests": {"cpu": cpu_req, "memory": mem_req}}
    lim = {k: v for k, v in (("cpu", cpu_lim), ("memory", mem_lim)) if v}
    if lim:
        res["limits"] = lim
    c["resources"] = res
    if env:
        c["env"] = [{"name": k, "value": v} for k, v in env.items()]
    if ports:
        c["ports"] = [{"containerPort": p, "protocol": "TCP", "name": "http" if i == 0
                       else f"p{p}"} for i, p in enumerate(ports)]
    if probe and ports:
        c["readinessProbe"] = {"httpGet": {"path": probe, "port": ports[0], "scheme": "HTTP"},
                               "periodSeconds": 10, "timeoutSeconds": 1,
                               "successThreshold": 1, "failureThreshold": 3}
    c.update(kw)
    return c


def template(labels: dict[str, str], containers: list[dict[str, Any]],
             annotations: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    md: dict[str, Any] = {"labels": dict(labels)}
    if annotations:
        md["annotations"] = annotations
    s: dict[str, Any] = {"containers": containers, "restartPolicy": "Always",
                         "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst"}
    s.update(spec)
    return {"metadata": md, "spec": s}


def deployment(ns: str, name: str, created: str, replicas: int, tmpl: dict[str, Any],
               revision: int, ready: int | None = None, updated: str | None = None,
               labels: dict[str, str] | None = None) -> dict[str, Any]:
    ready = replicas if ready is None else ready
    updated = updated or created
    conds = [
        {"type": "Available", "status": "True" if ready >= max(1, replicas - 1) else "False",
         "reason": "MinimumReplicasAvailable" if ready >= max(1, replicas - 1)
         else "MinimumReplicasUnavailable",
         "message": "Deployment has minimum availability." if ready >= max(1, replicas - 1)
         else "Deployment does not have minimum availability.",
         "lastUpdateTime": updated, "lastTransitionTime": updated},
        {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
         "message": f'ReplicaSet "{name}-{phash(ns, name, revision)}" has successfully progressed.',
         "lastUpdateTime": updated, "lastTransitionTime": created},
    ]
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": meta("Deployment", name, ns, created, generation=revision,
                             labels=labels or {"app": name},
                             annotations={"deployment.kubernetes.io/revision": str(revision)}),
            "spec": {"replicas": replicas, "revisionHistoryLimit": 10,
                     "selector": {"matchLabels": {"app": name}},
                     "strategy": {"type": "RollingUpdate", "rollingUpdate":
                                  {"maxSurge": "25%", "maxUnavailable": "25%"}},
                     "template": tmpl},
            "status": {"observedGeneration": revision, "replicas": replicas,
                       "updatedReplicas": replicas, "readyReplicas": ready,
                       "availableReplicas": ready,
                       **({"unavailableReplicas": replicas - ready} if ready < replicas else {}),
                       "conditions": conds}}


def phash(ns: str, name: str, revision: int) -> str:
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    h = int(hashlib.sha1(f"{ns}/{name}/{revision}".encode()).hexdigest(), 16)
    out = ""
    for _ in range(10):
        h, r = divmod(h, len(alphabet))
        out += alphabet[r]
    return out


def replicaset(dep: dict[str, Any], revision: int, created: str, replicas: int,
               tmpl: dict[str, Any], ready: int | None = None) -> dict[str, Any]:
    ns, name = dep["metadata"]["namespace"], dep["metadata"]["name"]
    h = phash(ns, name, revision)
    ready = replicas if ready is None else ready
    t = json.loads(json.dumps(tmpl))
    t["metadata"]["labels"]["pod-template-hash"] = h
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": meta("ReplicaSet", f"{name}-{h}", ns, created,
                             labels={"app": name, "pod-template-hash": h},
                             annotations={"deployment.kubernetes.io/revision": str(revision),
                                          "deployment.kubernetes.io/desired-replicas":
                                          str(dep["spec"]["replicas"])},
                             ownerReferences=[owner(dep)]),
            "spec": {"replicas": replicas, "selector": {"matchLabels": {
                "app": name, "pod-template-hash": h}}, "template": t},
            "status": {"replicas": replicas, "readyReplicas": ready,
                       "availableReplicas": ready, "fullyLabeledReplicas": replicas,
                       "observedGeneration": 1}}


def owner(obj: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"],
            "name": obj["metadata"]["name"], "uid": obj["metadata"]["uid"],
            "controller": True, "blockOwnerDeletion": True}


def pod(owner_obj: dict[str, Any], name: str, tmpl: dict[str, Any], node_name: str | None,
        started: str, phase: str = "Running", ready: bool = True, restarts: int = 0,
        state: dict[str, Any] | None = None, last: dict[str, Any] | None = None,
        ip: str = "10.1.0.10", pending_msg: str | None = None,
        extra_labels: dict[str, str] | None = None) -> dict[str, Any]:
    ns = owner_obj["metadata"]["namespace"]
    spec = json.loads(json.dumps(tmpl["spec"]))
    labels = dict(tmpl["metadata"].get("labels", {}))
    if owner_obj["kind"] == "ReplicaSet":
        labels.update(owner_obj["spec"]["selector"]["matchLabels"])
    labels.update(extra_labels or {})
    if node_name:
        spec["nodeName"] = node_name
    conds: list[dict[str, Any]] = []
    statuses = []
    if phase == "Pending" and not node_name:
        conds.append({"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                      "message": pending_msg or "", "lastProbeTime": None,
                      "lastTransitionTime": started})
    else:
        rs = "True" if ready else "False"
        conds += [{"type": "Initialized", "status": "True", "lastTransitionTime": started},
                  {"type": "Ready", "status": rs, "lastTransitionTime": started},
                  {"type": "ContainersReady", "status": rs, "lastTransitionTime": started},
                  {"type": "PodScheduled", "status": "True", "lastTransitionTime": started}]
        if not ready:
            for c in conds[1:3]:
                c["reason"] = "ContainersNotReady"
                c["message"] = f"containers with unready status: [{spec['containers'][0]['name']}]"
        for i, c in enumerate(spec["containers"]):
            st = state if (state and i == 0) else {"running": {"startedAt": started}}
            cs: dict[str, Any] = {"name": c["name"], "image": c["image"],
                                  "imageID": f"{c['image'].split(':')[0]}@sha256:"
                                  + hashlib.sha256(c["image"].encode()).hexdigest(),
                                  "containerID": "containerd://"
                                  + hashlib.sha256((name + c["name"]).encode()).hexdigest(),
                                  "ready": ready, "started": "running" in st,
                                  "restartCount": restarts if i == 0 else 0, "state": st}
            if last and i == 0:
                cs["lastState"] = last
            else:
                cs["lastState"] = {}
            statuses.append(cs)
    status: dict[str, Any] = {"phase": phase, "conditions": conds, "qosClass": "Burstable"}
    if node_name:
        status.update({"hostIP": "10.0.0.1", "podIP": ip, "startTime": started,
                       "containerStatuses": statuses})
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": meta("Pod", name, ns, started, labels=labels,
                             ownerReferences=[owner(owner_obj)]),
            "spec": spec, "status": status}


def service(ns: str, name: str, created: str, selector: dict[str, str], port: int,
            target: int, cluster_ip: str, **spec: Any) -> dict[str, Any]:
    s: dict[str, Any] = {"type": "ClusterIP", "clusterIP": cluster_ip, "clusterIPs": [cluster_ip],
                         "selector": selector, "sessionAffinity": "None",
                         "ports": [{"name": "http", "port": port, "targetPort": target,
                                    "protocol": "TCP"}]}
    s.update(spec)
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": meta("Service", name, ns, created, labels={"app": name}),
            "spec": s, "status": {"loadBalancer": {}}}


def endpoints(svc: dict[str, Any], created: str, addrs: list[tuple[str, str, str]],
              not_ready: list[tuple[str, str, str]] | None = None) -> dict[str, Any]:
    ns = svc["metadata"]["namespace"]

    def a(ip: str, pod_name: str, node_name: str) -> dict[str, Any]:
        return {"ip": ip, "nodeName": node_name,
                "targetRef": {"kind": "Pod", "namespace": ns, "name": pod_name,
                              "uid": uid("Pod", ns, pod_name)}}

    sub: dict[str, Any] = {"ports": [{"name": p["name"], "port": p["targetPort"],
                                      "protocol": "TCP"} for p in svc["spec"]["ports"]]}
    if addrs:
        sub["addresses"] = [a(*x) for x in addrs]
    if not_ready:
        sub["notReadyAddresses"] = [a(*x) for x in not_ready]
    return {"apiVersion": "v1", "kind": "Endpoints",
            "metadata": meta("Endpoints", svc["metadata"]["name"], ns, created,
                             labels={"app": svc["metadata"]["name"]}),
            "subsets": [sub] if (addrs or not_ready) else []}


def event(obj: dict[str, Any], reason: str, message: str, first: str, last: str,
          count: int = 1, etype: str = "Normal", component: str = "kubelet",
          host: str | None = None) -> dict[str, Any]:
    md = obj["metadata"]
    ns = md.get("namespace", "default")
    name = f"{md['name']}.{hashlib.sha1((reason + message + first).encode()).hexdigest()[:16]}"
    src: dict[str, Any] = {"component": component}
    if host:
        src["host"] = host
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": name, "namespace": ns, "creationTimestamp": first,
                         "uid": uid("Event", ns, name)},
            "involvedObject": {"apiVersion": obj["apiVersion"], "kind": obj["kind"],
                               "name": md["name"], "namespace": md.get("namespace", ""),
                               "uid": md["uid"]},
            "reason": reason, "message": message, "type": etype, "count": count,
            "firstTimestamp": first, "lastTimestamp": last, "source": src,
            "reportingComponent": component, "reportingInstance": host or ""}


class Metrics:
    """Collects OpenMetrics families; samples are (unix_seconds, value)."""

    def __init__(self) -> None:
        self.fam: dict[str, tuple[str, str, list[str]]] = {}

    def add(self, family: str, mtype: str, help_: str, sample: str,
            labels: dict[str, str], points: list[tuple[int, float]]) -> None:
        if family not in self.fam:
            self.fam[family] = (mtype, help_, [])
        lab = ",".join(f'{k}="{v}"' for k, v in labels.items())
        lines = self.fam[family][2]
        for t, v in points:
            val = f"{v:.6g}" if isinstance(v, float) and not float(v).is_integer() else str(int(v))
            if isinstance(v, float) and abs(v) >= 1e6:
                val = f"{v:.1f}" if not v.is_integer() else str(int(v))
            lines.append(f"{sample}{{{lab}}} {val} {t}")

    def text(self) -> str:
        out = []
        for name, (mtype, help_, lines) in self.fam.items():
            out.append(f"# TYPE {name} {mtype}")
            out.append(f"# HELP {name} {help_}")
            out.extend(lines)
        out.append("# EOF")
        return "\n".join(out) + "\n"


def steps(c: Clock, hours: float, step: int = 60) -> list[int]:
    end = int(c.now.timestamp())
    start = end - int(hours * 3600)
    return list(range(start - start % step + step, end + 1, step))


def log(t: datetime, svc: str, ns: str, pod_name: str, msg: str, level: str = "info",
        container_name: str | None = None, **extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"@timestamp": isoms(t), "message": msg, "log.level": level,
                         "service.name": svc, "kubernetes.namespace": ns,
                         "kubernetes.pod.name": pod_name,
                         "kubernetes.container.name": container_name or svc}
    d.update(extra)
    return d


def write(root: Path, sid: str, scenario: dict[str, Any], objects: list[dict[str, Any]],
          logs: list[dict[str, Any]] | None = None, metrics: Metrics | None = None,
          pod_logs: dict[str, str] | None = None) -> None:
    floor = iso(parse(scenario["now"]) - timedelta(days=6, hours=12))
    for o in objects:
        if "status" in o:
            o["status"] = _clamp(o["status"], floor)
    have = {o["metadata"]["name"] for o in objects if o["kind"] == "Namespace"}
    used = {o["metadata"].get("namespace") for o in objects} - {None}
    for n in sorted(used - have):
        objects.insert(0, namespace(n, objects[0]["metadata"]["creationTimestamp"]))
    d = root / sid
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    (d / "scenario.yaml").write_text(yaml.safe_dump(scenario, sort_keys=False, width=100))
    (d / "cluster.yaml").write_text(yaml.safe_dump_all(objects, sort_keys=False, width=100))
    if logs:
        logs = sorted(logs, key=lambda x: x["@timestamp"])
        (d / "logs.ndjson").write_text("".join(json.dumps(x) + "\n" for x in logs))
    if metrics:
        (d / "metrics.om").write_text(metrics.text())
    for rel, text in (pod_logs or {}).items():
        p = d / "pod-logs" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def statefulset(ns: str, name: str, created: str, replicas: int, tmpl: dict[str, Any],
                ready: int | None = None, storage: str | None = None,
                storage_class: str = "gp3") -> dict[str, Any]:
    ready = replicas if ready is None else ready
    spec: dict[str, Any] = {"replicas": replicas, "serviceName": name,
                            "podManagementPolicy": "OrderedReady",
                            "selector": {"matchLabels": {"app": name}}, "template": tmpl,
                            "updateStrategy": {"type": "RollingUpdate",
                                               "rollingUpdate": {"partition": 0}}}
    if storage:
        spec["volumeClaimTemplates"] = [{"metadata": {"name": "data"}, "spec": {
            "accessModes": ["ReadWriteOnce"], "storageClassName": storage_class,
            "resources": {"requests": {"storage": storage}}}}]
    rev = f"{name}-{phash(ns, name, 1)}"
    return {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": meta("StatefulSet", name, ns, created, generation=1,
                             labels={"app": name}),
            "spec": spec,
            "status": {"observedGeneration": 1, "replicas": replicas, "readyReplicas": ready,
                       "currentReplicas": replicas, "updatedReplicas": replicas,
                       "availableReplicas": ready, "currentRevision": rev,
                       "updateRevision": rev, "collisionCount": 0}}


def pvc(ns: str, name: str, created: str, size: str, sc: str = "gp3") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": meta("PersistentVolumeClaim", name, ns, created,
                             annotations={"pv.kubernetes.io/bind-completed": "yes"}),
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": sc,
                     "volumeMode": "Filesystem", "resources": {"requests": {"storage": size}},
                     "volumeName": "pvc-" + uid("pv", ns, name)},
            "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"],
                       "capacity": {"storage": size}}}


def simple_app(objs: list[dict[str, Any]], ns: str, name: str, created: str, replicas: int,
               image: str, nodes: list[str], ip_base: str, started: str, revision: int = 1,
               **ckw: Any) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    """A healthy Deployment with its ReplicaSet and Running pods, appended to objs."""
    tmpl = template({"app": name}, [container(name, image, **ckw)])
    dep = deployment(ns, name, created, replicas, tmpl, revision, updated=started)
    rs = replicaset(dep, revision, started, replicas, tmpl)
    pods = []
    for i in range(replicas):
        pname = f"{rs['metadata']['name']}-{phash(ns, name + str(i), revision)[:5]}"
        pods.append(pod(rs, pname, rs["spec"]["template"], nodes[i % len(nodes)], started,
                        ip=f"{ip_base}.{10 + i}"))
    objs += [dep, rs, *pods]
    return dep, rs, pods


def _clamp(v: Any, floor: str) -> Any:
    """Status times may not predate the scenario's week: heartbeats are refreshed."""
    if isinstance(v, dict):
        return {a: _clamp(b, floor) for a, b in v.items()}
    if isinstance(v, list):
        return [_clamp(b, floor) for b in v]
    if isinstance(v, str) and len(v) == 20 and v[10] == "T" and v.endswith("Z") and v < floor:
        return floor
    return v
