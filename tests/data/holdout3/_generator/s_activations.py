"""Telecom: SIM activations fail. On worker kprd-wrk-05 a host agent outside Kubernetes
(the CMDB inventory agent, nt-inventory-agent) forks `lshw` every few seconds and never
reaps its children; the zombies keep their PIDs, so tasks pile up for two days until the
node crosses the kubelet's pid.available<10% threshold (pid_max 65536 from the hardening
baseline). The kubelet reports PIDPressure, the node is tainted and the kubelet
evicts its pods one after another, highest process count first. The replacements of the
Deployments start elsewhere; activation-db-0, whose local volume lives on that node, cannot
come back (untolerated pid-pressure taint, volume node affinity elsewhere), and SIM
activations and number porting fail without their database."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from functools import partial

from tests.data.holdout._generator.base import daemonset, gauge, set_times
from tests.data.holdout2._generator.kit import (
    NodeKind,
    app_counter,
    deploy,
    drift,
    requests,
    restarts_series,
    statefulset,
    storage_class,
    working_set,
)
from tests.scenario_tools.common import MIB, truth
from tests.scenario_tools.kube import (
    Ctr,
    Obj,
    Template,
    Workload,
    http_probe,
    iso,
    tcp_probe,
)

from .kit3 import (
    Incident,
    chatter,
    log_pod,
    namespaces,
    rke2_vsphere_nodes,
    steady,
)

ID = "sim-activations-failing"
NOW = datetime.fromisoformat("2027-04-06T10:24:00+00:00")
REG = "harbor.nordtel.net"
BAD = "kprd-wrk-05"
PID_MAX = 65536
THRESHOLD = 6553  # pid.available<10%


def _evicted(pod: Obj, when: datetime, message: str, code: int, reason: str) -> None:
    """What the API shows of a pod the kubelet evicted at `when`."""
    status = pod["status"]
    for ctr in status.get("containerStatuses", []):
        started = ctr["state"].get("running", {}).get("startedAt") or iso(when)
        ctr["state"] = {"terminated": {"exitCode": code, "reason": reason, "startedAt": started,
                                       "finishedAt": iso(when + timedelta(seconds=2)),
                                       "containerID": ctr.get("containerID", "")}}
        ctr["ready"] = False
        ctr["started"] = False
    status["phase"] = "Failed"
    status["reason"] = "Evicted"
    status["message"] = message
    conds = []
    for cond in status["conditions"]:
        if cond["type"] in ("Ready", "ContainersReady"):
            cond = {**cond, "status": "False", "reason": "PodFailed",
                    "lastTransitionTime": iso(when + timedelta(seconds=2))}
            cond.pop("message", None)
        if cond["type"] == "PodReadyToStartContainers":
            cond = {**cond, "status": "False", "lastTransitionTime": iso(when +
                                                                        timedelta(seconds=3))}
        conds.append(cond)
    conds.insert(0, {"type": "DisruptionTarget", "status": "True", "lastProbeTime": None,
                     "lastTransitionTime": iso(when), "reason": "TerminationByKubelet",
                     "message": message})
    status["conditions"] = conds
    order = list(status)
    status_sorted = {k: status[k] for k in ("phase", "reason", "message", *[
        k for k in order if k not in ("phase", "reason", "message")])}
    pod["status"] = status_sorted


def build() -> Incident:
    s = Incident(
        id=ID,
        title="SIM activations and number porting failing",
        now=NOW,
        report="""\
SIM activations from the shops and the app have been failing since about 09:45 ("activation
backend unavailable, try again later"), and number porting requests error out as well. Some
pods in provisioning seem to have restarted or moved around. Customers are stuck in the
shops without working SIMs, please help quickly.
""",
        truth=truth(
            "node_failure", "Node", "", BAD,
            ["PIDPressure", "The node was low on resource: pids", "Attempting to reclaim pids",
             "node.kubernetes.io/pid-pressure", "Zombie", "lshw"],
            f"Worker {BAD} is out of PIDs: zombie lshw processes of the host's inventory agent "
            "(nt-inventory-agent, outside Kubernetes, never reaps its children) fill the pid "
            "space and the kubelet evicts every pod. Stop the agent and reboot the node (or "
            "cordon, drain and replace it), then let activation-db-0 start again on it; move "
            "the database to replicated storage so that one node cannot take it down."))
    set_times(s, 2.5, 60)
    c = s.cluster
    namespaces(s, {"default": 611, "kube-system": 611, "provisioning": 540, "selfcare": 512,
                   "billing-mediation": 470, "log-shipping": 455, "cattle-system": 611})
    vm = NodeKind("vsphere-vm.cpu-8.mem-32gb", "8", "32863468Ki", "7800m", "31585516Ki",
                  "v1.31.7+rke2r1", "6.4.0-150600.23.42-default",
                  "SUSE Linux Enterprise Server 15 SP6", runtime="containerd://1.7.26-k3s1",
                  storage="103081248Ki", alloc_storage="100632233066")
    names = [f"kprd-wrk-0{i}" for i in range(1, 7)]
    nodes = rke2_vsphere_nodes(s, names, ips=[f"10.62.14.{31 + i}" for i in range(6)],
                               kind=vm, zone="vdc2-cl-b", days=6.4)
    by = {n["metadata"]["name"]: n for n in nodes}
    bad = by[BAD]
    others = [n for n in nodes if n is not bad]

    t_p = NOW - timedelta(minutes=41, seconds=17)  # 09:42:43: pid.available below 6553
    for cond in bad["status"]["conditions"]:
        if cond["type"] == "PIDPressure":
            cond.update({"status": "True", "reason": "KubeletHasInsufficientPID",
                         "message": "kubelet has insufficient PID available",
                         "lastTransitionTime": iso(t_p)})
    bad["spec"]["taints"] = [{"key": "node.kubernetes.io/pid-pressure", "effect": "NoSchedule"}]
    c.event(bad, "NodeHasInsufficientPID", f"Node {BAD} status is now: NodeHasInsufficientPID",
            first=t_p, host=BAD)
    c.event(bad, "EvictionThresholdMet", "Attempting to reclaim pids",
            first=t_p + timedelta(seconds=6), last=NOW - timedelta(seconds=4),
            count=int((NOW - t_p).total_seconds() // 10), type_="Warning", host=BAD)

    # the tasks that pile up on the bad node (threads as the kubelet counts them)
    cross = t_p.timestamp()
    rate = 17.2 / 60  # zombies a second

    def tasks(t: int) -> float:
        return (PID_MAX - THRESHOLD) + 4 + rate * (t - cross) + 11 * s.rng.uniform(-1, 1)

    def zombies(t: int) -> float:
        return max(0.0, round(tasks(t) - 2791 + 6 * s.rng.uniform(-1, 1)))

    # ---- provisioning: the database with its volume on the bad node
    storage_class(s, "local-path", "rancher.io/local-path", {}, created=s.ago(days=601),
                       default=True)
    pg = Ctr("postgres", f"{REG}/library/postgres:16.8", port=5432, port_name="postgres",
             requests={"cpu": "500m", "memory": "2Gi"}, limits={"memory": "4Gi"},
             env={"PGDATA": "/var/lib/postgresql/data/pgdata", "POSTGRES_DB": "activation"},
             readiness=tcp_probe("postgres"),
             mounts=[{"name": "data", "mountPath": "/var/lib/postgresql/data"}])
    t_db = t_p + timedelta(seconds=34)
    pending_msg = ("0/6 nodes are available: 1 node(s) had untolerated taint "
                   "{node.kubernetes.io/pid-pressure: }, 5 node(s) had volume node affinity "
                   "conflict. preemption: 0/6 nodes are available: 6 Preemption is not helpful "
                   "for scheduling.")
    db_tpl = Template([pg], service_account="activation-db",
                      labels={"app.kubernetes.io/name": "activation-db"})
    db_created = s.ago(days=540)
    db, dbs = statefulset(
        s, "provisioning", "activation-db", db_tpl, replicas=1, nodes=[bad],
        revisions=[(3, s.ago(days=88), db_tpl)], pod_revision=lambda i: 3,
        born=lambda i: t_db + timedelta(seconds=3.2), claim=("data", "40Gi", "local-path"),
        labels={"app.kubernetes.io/name": "activation-db"}, created=db_created,
        pending={0: pending_msg}, selected=lambda i: bad)
    db_pod = dbs[0]
    db_pod["status"]["conditions"][0]["lastTransitionTime"] = iso(t_db + timedelta(seconds=4))
    c.service("provisioning", "activation-db", {"app.kubernetes.io/name": "activation-db"},
              port=5432, target="postgres", created=db_created)
    c.event(db.obj, "SuccessfulDelete", "delete Pod activation-db-0 in StatefulSet "
            "activation-db successful", first=t_db + timedelta(seconds=2.6),
            component="statefulset-controller")
    c.event(db.obj, "SuccessfulCreate", "create Pod activation-db-0 in StatefulSet "
            "activation-db successful", first=t_db + timedelta(seconds=3.2),
            component="statefulset-controller")
    c.event(db_pod, "FailedScheduling", pending_msg, first=t_db + timedelta(seconds=3.3),
            last=NOW - timedelta(seconds=s.rng.randrange(20, 70)),
            count=int((NOW - t_db).total_seconds() // 60) + 3, type_="Warning",
            component="default-scheduler", host="")
    gauge(s, "kube_statefulset_status_replicas_ready", {"namespace": "provisioning",
                                                        "statefulset": "activation-db"},
          lambda t: 1.0 if t < t_db.timestamp() + 2 else 0.0,
          "The number of ready replicas per StatefulSet.")
    gauge(s, "kube_pod_status_phase", {"namespace": "provisioning", "pod": "activation-db-0",
                                       "phase": "Pending"},
          lambda t: 0.0 if t < t_db.timestamp() + 3 else 1.0,
          "The pods current phase.")

    # ---- the Deployments: a pod on the bad node evicted, its replacement elsewhere
    evictions = {"cdr-rating": (t_p + timedelta(seconds=8.4), 412, 143, "Error"),
                 "number-porting-api": (t_p + timedelta(seconds=21.1), 163, 143, "Error"),
                 "sim-activation-worker": (t_p + timedelta(seconds=47.6), 38, 2, "Error"),
                 "selfcare-web": (t_p + timedelta(seconds=73.9), 11, 0, "Completed")}

    def message(name: str) -> str:
        when = evictions[name][0]
        left = int(THRESHOLD - 9 - rate * (when.timestamp() - cross))
        return (f"The node was low on resource: pids. Threshold quantity: {THRESHOLD}, "
                f"available: {left}. ")

    def evicting(ns: str, name: str, ctr: Ctr, replicas: int, revision: int,
                 rollout: datetime, **kw: object) -> tuple[Workload, list[Obj], Obj]:
        """`replicas` pods with the first on the bad node, plus the replacement."""
        when = evictions[name][0]
        placed = [bad, *others[1:replicas], others[(replicas + 2) % len(others)]]
        born = [rollout + timedelta(seconds=9 + 31 * i) for i in range(replicas)]
        born.append(when + timedelta(seconds=2.1))
        work, pods = deploy(s, ns, name, [ctr], replicas=replicas + 1, nodes=placed,
                            revision=revision, rollout=rollout, born=lambda i: born[i],
                            **kw)  # type: ignore[arg-type]
        victim, spare = pods[0], pods[-1]
        _evicted(victim, when, message(name), evictions[name][2], evictions[name][3])
        work.replicas = replicas
        work.obj["spec"]["replicas"] = replicas
        rs = work.revisions[-1]
        rs["spec"]["replicas"] = replicas
        rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] = \
            str(replicas)
        rs["metadata"]["annotations"]["deployment.kubernetes.io/max-replicas"] = \
            str(replicas + 1)
        c.event(victim, "Evicted", message(name), first=when, type_="Warning", host=BAD)
        c.event(victim, "Killing", f"Stopping container {ctr.name}",
                first=when + timedelta(seconds=0.2), host=BAD,
                field_path=f"spec.containers{{{ctr.name}}}")
        c.event(rs, "SuccessfulCreate", f"Created pod: {spare['metadata']['name']}",
                first=born[-1], component="replicaset-controller")
        c.event(spare, "Scheduled", f"Successfully assigned {ns}/{spare['metadata']['name']} "
                f"to {spare['spec']['nodeName']}", first=born[-1],
                component="default-scheduler", host="")
        st = spare["status"]["containerStatuses"][0]["state"]["running"]["startedAt"]
        started = datetime.fromisoformat(st.replace("Z", "+00:00"))
        field_ = f"spec.containers{{{ctr.name}}}"
        c.event(spare, "Pulling", f'Pulling image "{ctr.image}"', first=born[-1] +
                timedelta(seconds=0.9), field_path=field_)
        took = (started - born[-1]).total_seconds() - 1.5
        c.event(spare, "Pulled", f'Successfully pulled image "{ctr.image}" in {took:.3f}s '
                f"({took:.3f}s including waiting). Image size: {s.rng.randrange(60, 400)}"
                f"{s.rng.randrange(100000, 999999)} bytes.",
                first=started - timedelta(seconds=0.6), field_path=field_)
        c.event(spare, "Created", f"Created container: {ctr.name}",
                first=started - timedelta(seconds=0.3), field_path=field_)
        c.event(spare, "Started", f"Started container {ctr.name}", first=started,
                field_path=field_)
        return work, pods, victim

    jvm = {"JAVA_TOOL_OPTIONS": "-XX:MaxRAMPercentage=65"}
    rating = Ctr("cdr-rating", f"{REG}/mediation/cdr-rating:5.8.3", port=8080,
                 requests={"cpu": "1", "memory": "3Gi"}, limits={"memory": "4Gi"},
                 env={**jvm, "RATING_IO_THREADS": "384"},
                 readiness=http_probe("/q/health/ready", "http", delay=15))
    _, ratings, rating_victim = evicting("billing-mediation", "cdr-rating", rating, 2, 57,
                                         s.ago(days=4, hours=3, minutes=12))
    porting = Ctr("number-porting-api", f"{REG}/provisioning/number-porting-api:2.17.1",
                  port=8080, requests={"cpu": "500m", "memory": "1Gi"},
                  limits={"memory": "1536Mi"},
                  env={**jvm, "DB_URL": "jdbc:postgresql://activation-db.provisioning.svc:5432/"
                       "activation"},
                  readiness=http_probe("/actuator/health/readiness", "http", delay=20))
    _, portings, porting_victim = evicting("provisioning", "number-porting-api", porting, 2, 33,
                                           s.ago(days=2, hours=21, minutes=40))
    worker = Ctr("sim-activation-worker", f"{REG}/provisioning/sim-activation-worker:1.29.0",
                 port=9090, port_name="metrics", requests={"cpu": "200m", "memory": "256Mi"},
                 limits={"memory": "512Mi"},
                 env={"DATABASE_URL": "postgres://activation@activation-db-0.activation-db."
                      "provisioning.svc.cluster.local:5432/activation",
                      "HLR_ENDPOINT": "https://hlr-gw.core.nordtel.net:8443"})
    _, workers, worker_victim = evicting("provisioning", "sim-activation-worker", worker, 3, 48,
                                         s.ago(days=1, hours=5, minutes=3), service=None)
    web = Ctr("selfcare-web", f"{REG}/selfcare/selfcare-web:2027.14.2", port=3000,
              requests={"cpu": "200m", "memory": "384Mi"}, limits={"memory": "768Mi"},
              readiness=http_probe("/api/health", "http", delay=5))
    _, webs, web_victim = evicting("selfcare", "selfcare-web", web, 3, 212,
                                   s.ago(days=3, hours=1, minutes=44))

    # ---- the fluent-bit pod of the bad node: evicted, then refused again and again
    fb = Ctr("fluent-bit", "cr.fluentbit.io/fluent/fluent-bit:3.2.6", port=2020,
             requests={"cpu": "50m", "memory": "64Mi"}, limits={"memory": "256Mi"},
             mounts=[{"name": "varlog", "mountPath": "/var/log", "readOnly": True}])
    fb_ds, fbs = daemonset(s, "log-shipping", "fluent-bit", [fb], node_list=nodes, generation=11,
                           since=s.ago(days=6.3), stagger=13,
                           volumes=[{"name": "varlog", "hostPath": {"path": "/var/log",
                                                                    "type": ""}}])
    fb_bad = next(p for p in fbs if p["spec"]["nodeName"] == BAD)
    refused = ("Pod was rejected: The node had condition: [PIDPressure]. ")
    last_try = NOW - timedelta(minutes=3, seconds=41)
    fb_bad["metadata"]["creationTimestamp"] = iso(last_try - timedelta(seconds=1))
    fb_bad["status"] = {"phase": "Failed", "reason": "Evicted", "message": refused,
                        "qosClass": "Burstable"}
    fb_evicted = t_p + timedelta(seconds=60.5)
    tries = 0
    t_try, backoff = fb_evicted, 1.0
    while t_try < last_try:
        tries += 1
        backoff = min(backoff * 2, 240.0)
        t_try += timedelta(seconds=backoff + 1)
    c.event(fb_ds.obj, "FailedDaemonPod", f"Found failed daemon pod log-shipping/"
            f"{fb_bad['metadata']['name']} on node {BAD}, will try to kill it",
            first=fb_evicted + timedelta(seconds=1), last=last_try - timedelta(seconds=240),
            count=tries, type_="Warning", component="daemonset-controller")
    c.event(fb_ds.obj, "SuccessfulCreate", f"Created pod: {fb_bad['metadata']['name']}",
            first=last_try - timedelta(seconds=1), component="daemonset-controller")
    c.event(fb_bad, "Evicted", "The node had condition: [PIDPressure]. ", first=last_try,
            type_="Warning", host=BAD)
    chatter(s, [p for p in fbs if p is not fb_bad], "fluent-bit", "fluent-bit", [
        ("info", "[input:tail:tail.0] inotify_fs_add(): inode=2100391 watch_fd=88 name=/var/log/"
         "containers/cdr-rating.log", {}),
        ("warn", "[output:es:es.0] HTTP status=429 URI=/_bulk, retrying in 8 seconds", {}),
    ], 40)

    # ---- node-level agents that stay (system-node-critical)
    critical = {"priorityClassName": "system-node-critical", "priority": 2000001000}
    pex = Ctr("process-exporter", "docker.io/ncabatoff/process-exporter:0.8.5", port=9256,
              port_name="metrics", requests={"cpu": "50m", "memory": "64Mi"},
              limits={"memory": "128Mi"},
              args=["--procfs", "/host/proc", "--config.path", "/config/process-exporter.yaml"])
    _, pexs = daemonset(s, "kube-system", "process-exporter", [pex], node_list=nodes,
                        generation=3, since=s.ago(days=6.35), stagger=11)
    for pod in pexs:
        pod["spec"].update(critical)
    for n in (bad, others[0]):
        name = n["metadata"]["name"]
        for group, state, value in (
                ("lshw", "Zombie", zombies if n is bad else (lambda t: 0.0)),
                ("nt-inventory-agent", "Sleeping", lambda t: 1.0)):
            gauge(s, "namedprocess_namegroup_states", {"instance": f"{name}:9256",
                                                       "node": name, "groupname": group,
                                                       "state": state},
                  value, "Number of processes in states Running, Sleeping, Waiting, Zombie, "
                  "Other")
    # node-exporter: processes collector on
    exp = Ctr("node-exporter", "quay.io/prometheus/node-exporter:v1.9.0", port=9100,
              port_name="metrics", requests={"cpu": "50m", "memory": "32Mi"},
              limits={"memory": "128Mi"},
              args=["--path.rootfs=/host", "--collector.processes", "--web.listen-address="
                    "0.0.0.0:9100"])
    _, exps = daemonset(s, "kube-system", "node-exporter", [exp], node_list=nodes,
                        generation=4, since=s.ago(days=6.33), stagger=9)
    for pod in exps:
        pod["spec"].update(critical)
    for n in nodes:
        name = n["metadata"]["name"]
        base = s.rng.uniform(2300, 3400)
        is_bad = name == BAD
        gauge(s, "node_processes_threads", {"instance": f"{name}:9100", "node": name},
              tasks if is_bad else partial(_near, s, base, 60.0),
              "Allocated threads in system")
    gauge(s, "node_processes_max_processes", {"instance": f"{BAD}:9100", "node": BAD},
          lambda t: float(PID_MAX), "Number of max PIDs limit")
    for n in (bad, others[0]):
        name = n["metadata"]["name"]
        gauge(s, "node_processes_state", {"instance": f"{name}:9100", "node": name,
                                          "state": "Z"},
              zombies if n is bad else (lambda t: float(s.rng.randrange(0, 3))),
              "Number of processes in each state.")
    for status_ in ("true", "false"):
        gauge(s, "kube_node_status_condition", {"node": BAD, "condition": "PIDPressure",
                                                "status": status_},
              partial(_since, cross, status_ == "true"),
              "The condition of a cluster node.")
    gauge(s, "kube_node_spec_taint", {"node": BAD, "key": "node.kubernetes.io/pid-pressure",
                                      "value": "", "effect": "NoSchedule"},
          lambda t: 1.0, "The taint of a cluster node.",
          times=[t for t in s.times if t >= cross + 5])

    # ---- metrics and logs of the applications
    victims = {id(rating_victim): evictions["cdr-rating"][0],
               id(porting_victim): evictions["number-porting-api"][0],
               id(worker_victim): evictions["sim-activation-worker"][0],
               id(web_victim): evictions["selfcare-web"][0]}

    def until(pod: Obj) -> list[int]:
        end = victims.get(id(pod))
        born = datetime.fromisoformat(pod["metadata"]["creationTimestamp"].replace("Z",
                                                                                   "+00:00"))
        return [t for t in s.times if t >= born.timestamp() + 30
                and (end is None or t <= end.timestamp())]

    def end_of(pod: Obj) -> datetime:
        return victims.get(id(pod), NOW)

    down = t_db.timestamp()
    for pod in workers:
        name = pod["metadata"]["name"]
        times = until(pod)
        for result, share in (("activated", lambda t: 0.97 if t < down else 0.0),
                              ("failed", lambda t: 0.03 if t < down else 1.0)):
            app_counter(s, "sim_activations_total", {"namespace": "provisioning", "pod": name,
                                                     "result": result}, times,
                        partial(_scaled, 0.21, share), "SIM activations processed.")
    for pod in portings:
        times = until(pod)
        requests(s, pod, "number-porting-api", rps=lambda t: 1.4, times=times, codes={
            "200": lambda t: 0.998 if t < down else 0.04,
            "503": lambda t: 0.002 if t < down else 0.96})
    for pod in ratings:
        times = until(pod)
        gauge(s, "container_threads", {"namespace": "billing-mediation",
                                       "pod": pod["metadata"]["name"],
                                       "container": "cdr-rating"},
              lambda t: float(s.rng.randrange(404, 421)),
              "Number of threads running inside the container", times=times)
        working_set(s, pod, "cdr-rating", drift(s, 2710 * MIB), times=times)

    db_name = "activation-db-0"
    for when, level, msg in (
            (t_db - timedelta(minutes=37), "info", "checkpoint starting: time"),
            (t_db - timedelta(minutes=36, seconds=41), "info", "checkpoint complete: wrote 412 "
             "buffers (2.5%); 0 WAL file(s) added, 0 removed, 1 recycled; write=38.112 s, "
             "sync=0.021 s, total=38.149 s"),
            (t_db - timedelta(minutes=7), "info", "checkpoint starting: time"),
            (t_db + timedelta(seconds=0.3), "info", "received fast shutdown request"),
            (t_db + timedelta(seconds=0.3), "info", "aborting any active transactions"),
            (t_db + timedelta(seconds=0.4), "fatal", "terminating connection due to "
             "administrator command"),
            (t_db + timedelta(seconds=0.9), "info", "database system is shut down")):
        s.logs.add(when, level, msg, namespace="provisioning", pod=db_name, container="postgres",
                   service="activation-db", node=BAD)
    for pod in workers:
        name = pod["metadata"]["name"]
        where = pod["spec"]["nodeName"]
        t = max(NOW - timedelta(hours=2.5), datetime.fromisoformat(
            pod["metadata"]["creationTimestamp"].replace("Z", "+00:00")) + timedelta(seconds=20))
        while t < end_of(pod):
            iccid = f"89470{s.rng.randrange(10**13, 10**14)}"
            if t.timestamp() < down:
                msisdn = f"+47 4{s.rng.randrange(1000000, 9999999)}"
                level, msg = "info", (f"activated ICCID {iccid} (MSISDN {msisdn}, profile "
                                      f"PREPAID-5G) in {s.rng.randrange(800, 2600)}ms")
            else:
                level, msg = "error", (f"activation of ICCID {iccid} failed: dial tcp: lookup "
                                       "activation-db-0.activation-db.provisioning.svc.cluster."
                                       "local on 10.43.0.10:53: no such host; retry in 30s")
            s.logs.add(t, level, msg, namespace="provisioning", pod=name,
                       container="sim-activation-worker", service="sim-activation-worker",
                       node=where)
            t += timedelta(seconds=s.rng.uniform(70, 160) if t.timestamp() < down else
                           s.rng.uniform(30, 75))
    for pod in portings:
        log_pod(s, pod, "number-porting-api", "number-porting-api", [
            ("info", "port-in request NP-2027-0406-41172 accepted (donor operator Telia)", {}),
            ("warn", "port-in request NP-2027-0406-40901 rejected 409: number already in "
             "porting", {"http.response.status_code": 409}),
        ], 18, end=min(end_of(pod), t_db))
        log_pod(s, pod, "number-porting-api", "number-porting-api", [
            ("error", "HikariPool-1 - Exception during pool initialization / connection "
             "attempt: org.postgresql.util.PSQLException: Connection to activation-db."
             "provisioning.svc:5432 refused. Check that the hostname and port are correct",
             {"error.type": "org.postgresql.util.PSQLException"}),
            ("error", "POST /v2/porting 503: database unavailable",
             {"http.response.status_code": 503}),
        ], 30, start=t_db + timedelta(seconds=2), end=end_of(pod))
    for pod in ratings:
        log_pod(s, pod, "cdr-rating", "cdr-rating", [
            ("info", "rated batch CDR-20270406-0931 (18211 records) in 4.1s", {}),
            ("warn", "thread pool 'rating-io' at 384 threads (max 512), queue 12", {}),
            ("warn", "tariff 'ROAM-EU-2027' has no zone mapping for MCC 295, using default",
             {}),
        ], 30, end=end_of(pod))
    for pod in webs:
        log_pod(s, pod, "selfcare-web", "selfcare-web", [
            ("info", "GET /min-side 200", {"http.response.status_code": 200}),
            ("warn", "GET /api/invoices 401: session expired", {"http.response.status_code":
                                                                401}),
        ], 18, end=end_of(pod))
        log_pod(s, pod, "selfcare-web", "selfcare-web", [
            ("error", "GET /api/sim/activate-status 502 from provisioning gateway",
             {"http.response.status_code": 502}),
        ], 6, start=t_db + timedelta(seconds=20), end=end_of(pod))

    # ---- other neighbours: the hlr gateway and Rancher's agent
    hlr = Ctr("hlr-gateway", f"{REG}/core/hlr-gateway:4.2.2", port=8443, port_name="https",
              requests={"cpu": "250m", "memory": "512Mi"}, limits={"memory": "1Gi"},
              readiness=tcp_probe("https"))
    _, hlrs = steady(s, "provisioning", "hlr-gateway", [hlr], nodes=others, replicas=2,
                     revision=19, rollout=s.ago(days=5, hours=2),
                     restarted={0: (s.ago(days=3, hours=9, minutes=12), "Error", 137)},
                     service=8443, target="https")
    restarts_series(s, hlrs[0], "hlr-gateway", 1, [])
    chatter(s, hlrs, "hlr-gateway", "hlr-gateway", [
        ("info", "MAP UpdateLocation IMSI 24201******4471 ok", {}),
        ("warn", "SS7 link set LS-OSL-2 congestion level 1, throttling", {}),
    ], 30)
    agent = Ctr("cluster-register", "rancher/rancher-agent:v2.10.3", port=None,
                requests={"cpu": "50m", "memory": "128Mi"}, limits={"memory": "512Mi"})
    _, agents = steady(s, "cattle-system", "cattle-cluster-agent", [agent], nodes=others,
                       replicas=1, revision=14, rollout=s.ago(days=6, hours=1), service=None,
                       labels={"app": "cattle-cluster-agent"})
    chatter(s, agents, "cluster-register", "cattle-cluster-agent", [
        ("warn", "error in remotedialer server [400]: websocket: close 1006 (abnormal closure): "
         "unexpected EOF", {}),
        ("info", "Connecting to wss://rancher.nordtel.net/v3/connect with token starting with "
         "xk7", {}),
        ("info", "Connected to proxy", {}),
    ], 12)
    return s


def _near(s: Incident, base: float, spread: float, t: int) -> float:
    return base + spread * s.rng.uniform(-1, 1)


def _since(edge: float, value: bool, t: int) -> float:
    return float((t >= edge) == value)


def _scaled(factor: float, share: Callable[[int], float], t: int) -> float:
    return factor * share(t)
