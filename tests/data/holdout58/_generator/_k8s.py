"""Kubernetes object builders shaped like ``kubectl get -o yaml`` output."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ._kit import Obj, Story, iso


def meta(name: str, ns: str | None, created: datetime, uid: str,
         labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None,
         owner: Obj | None = None, generation: int | None = None) -> Obj:
    """An ObjectMeta."""
    m: Obj = {"name": name}
    if ns is not None:
        m["namespace"] = ns
    m["uid"] = uid
    m["creationTimestamp"] = iso(created)
    if generation is not None:
        m["generation"] = generation
    if labels:
        m["labels"] = dict(labels)
    if annotations:
        m["annotations"] = dict(annotations)
    if owner:
        m["ownerReferences"] = [owner]
    return m


def owner_ref(kind: str, name: str, uid: str, api: str = "apps/v1") -> Obj:
    """A controller ownerReference."""
    return {"apiVersion": api, "kind": kind, "name": name, "uid": uid,
            "controller": True, "blockOwnerDeletion": True}


def namespace(s: Story, name: str, created: datetime) -> Obj:
    """A Namespace."""
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": meta(name, None, created, s.uid(),
                             {"kubernetes.io/metadata.name": name}),
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}


def node(s: Story, name: str, created: datetime, *, ip: str, labels: dict[str, str],
         cpu: str = "8", memory: str = "32386300Ki", storage: str = "104845292Ki",
         os_image: str = "Amazon Linux 2", kernel: str = "5.10.219-208.866.amzn2.x86_64",
         runtime: str = "containerd://1.7.11", kubelet: str = "v1.29.6-eks-1552ad0",
         extra_conditions: dict[str, tuple[str, str, str]] | None = None,
         images: list[Obj] | None = None, taints: list[Obj] | None = None,
         gpu: int = 0, ready_since: datetime | None = None) -> Obj:
    """A Ready Node; extra_conditions maps type to (status, reason, message)."""
    since = iso(ready_since or max(created, s.now - timedelta(days=6, hours=20)))
    conds: list[Obj] = []
    base = {"MemoryPressure": ("False", "KubeletHasSufficientMemory",
                               "kubelet has sufficient memory available"),
            "DiskPressure": ("False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            "PIDPressure": ("False", "KubeletHasSufficientPID",
                            "kubelet has sufficient PID available"),
            "Ready": ("True", "KubeletReady", "kubelet is posting ready status")}
    base.update(extra_conditions or {})
    for typ, (st, reason, msg) in base.items():
        conds.append({"type": typ, "status": st, "reason": reason, "message": msg,
                      "lastHeartbeatTime": iso(s.ago(0.5)), "lastTransitionTime": since})
    cap: Obj = {"cpu": cpu, "memory": memory, "ephemeral-storage": storage, "pods": "58"}
    if gpu:
        cap["nvidia.com/gpu"] = str(gpu)
    alloc = dict(cap)
    alloc["cpu"] = f"{int(cpu) * 1000 - 90}m"
    lab = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
           "kubernetes.io/arch": "amd64", **labels}
    zone = labels.get("topology.kubernetes.io/zone", "eu-west-1a")
    spec: Obj = {"providerID": f"aws:///{zone}/i-0{s.rng.getrandbits(60):015x}"}
    if taints:
        spec["taints"] = taints
    status: Obj = {"addresses": [{"type": "InternalIP", "address": ip},
                                 {"type": "Hostname", "address": name}],
                   "capacity": cap, "allocatable": alloc, "conditions": conds,
                   "nodeInfo": {"architecture": "amd64", "containerRuntimeVersion": runtime,
                                "kernelVersion": kernel, "kubeProxyVersion": kubelet,
                                "kubeletVersion": kubelet, "operatingSystem": "linux",
                                "osImage": os_image}}
    if images is not None:
        status["images"] = images
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": meta(name, None, created, s.uid(), lab), "spec": spec, "status": status}


def container(name: str, image: str, *, port: int | None = 8080, cpu: str = "250m",
              memory: str = "512Mi", cpu_limit: str | None = None,
              mem_limit: str | None = None, env: list[Obj] | None = None,
              args: list[str] | None = None, probe_path: str | None = "/healthz",
              command: list[str] | None = None) -> Obj:
    """A container spec."""
    c: Obj = {"name": name, "image": image, "imagePullPolicy": "IfNotPresent"}
    if command:
        c["command"] = command
    if args:
        c["args"] = args
    if port:
        c["ports"] = [{"name": "http", "containerPort": port, "protocol": "TCP"}]
    if env:
        c["env"] = env
    res: Obj = {"requests": {"cpu": cpu, "memory": memory}}
    lim: Obj = {}
    if cpu_limit:
        lim["cpu"] = cpu_limit
    lim["memory"] = mem_limit or memory
    res["limits"] = lim
    c["resources"] = res
    if probe_path and port:
        c["readinessProbe"] = {"httpGet": {"path": probe_path, "port": port},
                               "periodSeconds": 10, "timeoutSeconds": 2,
                               "failureThreshold": 3}
        c["livenessProbe"] = {"httpGet": {"path": probe_path, "port": port},
                              "initialDelaySeconds": 20, "periodSeconds": 20,
                              "timeoutSeconds": 2, "failureThreshold": 3}
    c["terminationMessagePath"] = "/dev/termination-log"
    c["terminationMessagePolicy"] = "File"
    return c


def running(since: datetime) -> Obj:
    """A running state."""
    return {"running": {"startedAt": iso(since)}}


def waiting(reason: str, message: str | None = None) -> Obj:
    """A waiting state."""
    w: Obj = {"reason": reason}
    if message:
        w["message"] = message
    return {"waiting": w}


def terminated(reason: str, code: int, start: datetime, end: datetime,
               message: str | None = None) -> Obj:
    """A terminated state."""
    t: Obj = {"exitCode": code, "reason": reason, "startedAt": iso(start),
              "finishedAt": iso(end), "containerID": ""}
    if message:
        t["message"] = message
    return {"terminated": t}


@dataclass
class PodSpecBits:
    """What varies between pods of one workload."""

    containers: list[Obj]
    labels: dict[str, str]
    extra_spec: dict[str, Any] = field(default_factory=dict)


def pod(s: Story, ns: str, name: str, bits: PodSpecBits, *, node_name: str | None, ip: str | None,
        start: datetime, owner: Obj | None, statuses: list[Obj] | None = None,
        phase: str = "Running", ready: bool = True, host_ip: str | None = None,
        conditions: list[Obj] | None = None, extra_status: dict[str, Any] | None = None,
        annotations: dict[str, str] | None = None) -> Obj:
    """A Pod; statuses default to every container running and ready since start."""
    spec: Obj = {"containers": bits.containers, "restartPolicy": "Always",
                 "serviceAccountName": "default", "terminationGracePeriodSeconds": 30,
                 "dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler",
                 **bits.extra_spec}
    if node_name:
        spec["nodeName"] = node_name
    if statuses is None:
        statuses = [cstatus(c["name"], c["image"], running(start), ready=True)
                    for c in bits.containers]
    rs = "True" if ready else "False"
    conds = conditions or [
        {"type": "Initialized", "status": "True", "lastTransitionTime": iso(start)},
        {"type": "Ready", "status": rs, "lastTransitionTime": iso(start)},
        {"type": "ContainersReady", "status": rs, "lastTransitionTime": iso(start)},
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": iso(start)}]
    status: Obj = {"phase": phase, "conditions": conds, "qosClass": "Burstable",
                   "startTime": iso(start)}
    if node_name:
        status["hostIP"] = host_ip or "10.0.0.1"
        status["containerStatuses"] = statuses
    if ip:
        status["podIP"] = ip
        status["podIPs"] = [{"ip": ip}]
    status.update(extra_status or {})
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": meta(name, ns, start, s.uid(), bits.labels, annotations, owner),
            "spec": spec, "status": status}


def cstatus(name: str, image: str, state: Obj, *, ready: bool, restarts: int = 0,
            last: Obj | None = None, started: bool | None = None) -> Obj:
    """A containerStatus."""
    digest = hashlib.sha256(image.encode()).hexdigest()
    return {"name": name, "image": image, "imageID": f"{image.split(':')[0]}@sha256:{digest}",
            "ready": ready, "restartCount": restarts,
            "started": started if started is not None else ready, "state": state,
            "lastState": last or {}}


def deployment(s: Story, ns: str, name: str, *, labels: dict[str, str], containers: list[Obj],
               replicas: int, ready: int, created: datetime, revision: int,
               updated: int | None = None, generation: int = 1,
               annotations: dict[str, str] | None = None, strategy: Obj | None = None,
               available: bool | None = None, progressing: tuple[str, str, str] | None = None,
               pod_extra: dict[str, Any] | None = None,
               changed: datetime | None = None) -> tuple[Obj, str]:
    """A Deployment and its uid."""
    uid = s.uid()
    ann = {"deployment.kubernetes.io/revision": str(revision), **(annotations or {})}
    avail = available if available is not None else ready >= max(1, replicas - replicas // 4)
    chg = iso(changed or created)
    prog = progressing or ("True", "NewReplicaSetAvailable",
                           f'ReplicaSet "{name}" has successfully progressed.')
    tpl_spec: Obj = {"containers": containers, **(pod_extra or {})}
    d: Obj = {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": meta(name, ns, created, uid, labels, ann, generation=generation),
         "spec": {"replicas": replicas, "revisionHistoryLimit": 10,
                  "selector": {"matchLabels": {"app": labels["app"]}},
                  "strategy": strategy or {"type": "RollingUpdate", "rollingUpdate": {
                      "maxSurge": "25%", "maxUnavailable": "25%"}},
                  "template": {"metadata": {"labels": {"app": labels["app"]}},
                               "spec": tpl_spec}},
         "status": {"observedGeneration": generation, "replicas": replicas,
                    "updatedReplicas": replicas if updated is None else updated,
                    "readyReplicas": ready, "availableReplicas": ready,
                    "unavailableReplicas": max(0, replicas - ready),
                    "conditions": [
                        {"type": "Available", "status": "True" if avail else "False",
                         "reason": "MinimumReplicasAvailable" if avail
                         else "MinimumReplicasUnavailable",
                         "message": "Deployment has minimum availability." if avail
                         else "Deployment does not have minimum availability.",
                         "lastUpdateTime": chg, "lastTransitionTime": chg},
                        {"type": "Progressing", "status": prog[0], "reason": prog[1],
                         "message": prog[2], "lastUpdateTime": chg,
                         "lastTransitionTime": chg}]}}
    if ready == replicas:
        del d["status"]["unavailableReplicas"]
    return d, uid


def replicaset(s: Story, ns: str, deploy: str, deploy_uid: str, pod_hash: str, *,
               containers: list[Obj], replicas: int, ready: int, revision: int,
               created: datetime, app: str,
               pod_extra: dict[str, Any] | None = None) -> tuple[Obj, str]:
    """A ReplicaSet owned by a Deployment, and its uid."""
    uid = s.uid()
    name = f"{deploy}-{pod_hash}"
    labels = {"app": app, "pod-template-hash": pod_hash}
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
          "metadata": meta(name, ns, created, uid, labels,
                           {"deployment.kubernetes.io/revision": str(revision),
                            "deployment.kubernetes.io/desired-replicas": str(replicas)},
                           owner_ref("Deployment", deploy, deploy_uid)),
          "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                   "template": {"metadata": {"labels": labels},
                                "spec": {"containers": containers, **(pod_extra or {})}}},
          "status": {"replicas": replicas, "readyReplicas": ready, "availableReplicas": ready,
                     "fullyLabeledReplicas": replicas, "observedGeneration": 1}}
    if replicas == 0:
        rs["status"] = {"replicas": 0, "observedGeneration": 2}
    return rs, uid


def service(s: Story, ns: str, name: str, app: str, created: datetime, port: int = 80,
            target: int = 8080) -> Obj:
    """A ClusterIP Service."""
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": meta(name, ns, created, s.uid(), {"app": app}),
            "spec": {"type": "ClusterIP", "selector": {"app": app},
                     "clusterIP": f"172.20.{s.rng.randint(0, 255)}.{s.rng.randint(2, 254)}",
                     "ports": [{"name": "http", "port": port, "targetPort": target,
                                "protocol": "TCP"}]},
            "status": {"loadBalancer": {}}}


def endpoints(s: Story, ns: str, name: str, ready: list[tuple[str, str, str]],
              not_ready: list[tuple[str, str, str]], created: datetime,
              port: int = 8080) -> Obj:
    """Endpoints from (pod, ip, node) triples."""
    def addr(p: tuple[str, str, str]) -> Obj:
        return {"ip": p[1], "nodeName": p[2],
                "targetRef": {"kind": "Pod", "name": p[0], "namespace": ns}}
    subset: Obj = {"ports": [{"name": "http", "port": port, "protocol": "TCP"}]}
    if ready:
        subset["addresses"] = [addr(p) for p in ready]
    if not_ready:
        subset["notReadyAddresses"] = [addr(p) for p in not_ready]
    return {"apiVersion": "v1", "kind": "Endpoints",
            "metadata": meta(name, ns, created, s.uid(), {"app": name}),
            "subsets": [subset] if (ready or not_ready) else []}


@dataclass
class App:
    """A healthy Deployment's pods: names, ips, nodes."""

    name: str
    ns: str
    pods: list[str]
    ips: list[str]
    nodes: list[str]
    image: str


def app(s: Story, ns: str, name: str, image: str, *, replicas: int, nodes: list[str],
        node_ips: dict[str, str], created: datetime, rolled: datetime, revision: int = 3,
        port: int = 8080, cpu: str = "250m", memory: str = "512Mi", svc: bool = True,
        env: list[Obj] | None = None, restarts: dict[int, Obj] | None = None) -> App:
    """A healthy Deployment with ReplicaSet, Pods, Service and Endpoints.

    ``restarts`` maps a pod index to its lastState (an old restart, see ``old_restart``).
    """
    labels = {"app": name, "app.kubernetes.io/name": name,
              "app.kubernetes.io/version": image.rsplit(":", 1)[-1]}
    cs = [container(name, image, port=port, cpu=cpu, memory=memory, env=env)]
    d, duid = deployment(s, ns, name, labels=labels, containers=cs, replicas=replicas,
                         ready=replicas, created=created, revision=revision, changed=rolled)
    h = s.suffix(10)
    rs, rsuid = replicaset(s, ns, name, duid, h, containers=cs, replicas=replicas,
                           ready=replicas, revision=revision, created=rolled, app=name)
    s.add(d, rs)
    out = App(name, ns, [], [], [], image)
    for i in range(replicas):
        pn = f"{name}-{h}-{s.suffix()}"
        nd = nodes[i % len(nodes)]
        ip = f"10.42.{s.rng.randint(0, 31)}.{s.rng.randint(2, 250)}"
        last = (restarts or {}).get(i)
        if last:
            ended = last["terminated"]["finishedAt_dt"]
            prev = {"terminated": {k: v for k, v in last["terminated"].items()
                                   if k != "finishedAt_dt"}}
            statuses = [cstatus(name, image, running(ended), ready=True, restarts=1, last=prev)]
        else:
            statuses = [cstatus(name, image, running(rolled), ready=True)]
        bits = PodSpecBits(cs, {"app": name, "pod-template-hash": h})
        s.add(pod(s, ns, pn, bits, node_name=nd, ip=ip, start=rolled,
                  owner=owner_ref("ReplicaSet", f"{name}-{h}", rsuid),
                  statuses=statuses, host_ip=node_ips.get(nd)))
        out.pods.append(pn)
        out.ips.append(ip)
        out.nodes.append(nd)
    if svc:
        s.add(service(s, ns, name, name, created, target=port),
              endpoints(s, ns, name, list(zip(out.pods, out.ips, out.nodes, strict=True)), [],
                        created, port))
    return out


def old_restart(reason: str, code: int, start: datetime, end: datetime) -> Obj:
    """A lastState for ``app(restarts=...)``: a container that ended at ``end``."""
    t = terminated(reason, code, start, end)
    t["terminated"]["finishedAt_dt"] = end
    return t
