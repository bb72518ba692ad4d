"""Shape 4, oom_killed: the EBS CSI node plugin is OOM-killed on a node with many volumes."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from . import _kit as k

SID = "clickhouse-2-stuck-creating"
NOW = "2026-12-11T03:15:00Z"
DRIVER = "ebs.csi.aws.com"
PLUGIN = "public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver:v1.37.0"


def build(root: Path) -> None:
    st = k.Story(SID, NOW, seed=5204)
    names = [f"ip-10-0-{i}-{57 + i * 3}.eu-west-1.compute.internal" for i in range(1, 6)]
    heavy = names[2]
    for i, n in enumerate(names):
        vols = None
        if n == heavy:
            vols = [{"name": f"kubernetes.io/csi/{DRIVER}^vol-0{st.hexid(16)}",
                     "devicePath": ""} for _ in range(39)]
        k.node(st, n, ("eu-west-1a", "eu-west-1b", "eu-west-1c")[i % 3], itype="r6i.4xlarge",
               cpu="16", memory="128Gi", volumes_attached=vols)
    k.kube_system(st, names)
    for ns in ("data", "etl", "monitoring", "web"):
        k.namespace(st, ns)

    # --- the CSI node DaemonSet ---------------------------------------------------------
    labels = {"app": "ebs-csi-node", "app.kubernetes.io/name": "aws-ebs-csi-driver"}
    plugin = k.container("ebs-plugin", PLUGIN, cpu="10m", memory="40Mi", mem_limit="128Mi",
                         port=9808, readiness=None, liveness="/healthz",
                         args=["node", "--endpoint=$(CSI_ENDPOINT)", "--logging-format=text",
                               "--v=2"])
    plugin["livenessProbe"]["httpGet"]["port"] = "healthz"
    plugin["ports"] = [{"name": "healthz", "containerPort": 9808, "protocol": "TCP"}]
    plugin["securityContext"] = {"privileged": True}
    reg = k.container("node-driver-registrar",
                      "public.ecr.aws/csi-components/csi-node-driver-registrar:v2.12.0",
                      cpu="10m", memory="20Mi", mem_limit="64Mi", port=None,
                      args=["--csi-address=$(ADDRESS)", "--kubelet-registration-path="
                            "/var/lib/kubelet/plugins/ebs.csi.aws.com/csi.sock", "--v=2"])
    probe = k.container("liveness-probe", "public.ecr.aws/csi-components/livenessprobe:v2.14.0",
                        cpu="10m", memory="20Mi", mem_limit="64Mi", port=None,
                        args=["--csi-address=/csi/csi.sock"])
    ds: k.Obj = {
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {**k.meta(st, "kube-system", "ebs-csi-node", days=220, labels=labels),
                     "generation": 6,
                     "annotations": {"deprecated.daemonset.template.generation": "6",
                                     "meta.helm.sh/release-name": "aws-ebs-csi-driver"}},
        "spec": {"selector": {"matchLabels": {"app": "ebs-csi-node"}},
                 "updateStrategy": {"type": "RollingUpdate",
                                    "rollingUpdate": {"maxUnavailable": "10%", "maxSurge": 0}},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [plugin, reg, probe],
                                       "serviceAccountName": "ebs-csi-node-sa",
                                       "priorityClassName": "system-node-critical",
                                       "tolerations": [{"operator": "Exists"}]}}},
        "status": {"currentNumberScheduled": 5, "desiredNumberScheduled": 5,
                   "numberAvailable": 4, "numberUnavailable": 1, "numberMisscheduled": 0,
                   "numberReady": 4, "updatedNumberScheduled": 5, "observedGeneration": 6},
    }
    st.add(ds)
    csi_pods = []
    for n in names:
        p = k.pod(st, "kube-system", f"ebs-csi-node-{st.suffix()}", labels=labels,
                  containers=[plugin, reg, probe], node_name=n, owner=ds,
                  created=st.ago(days=6, hours=st.rng.randint(1, 9)),
                  service_account="ebs-csi-node-sa")
        csi_pods.append(p)
        st.add(p)
    bad = csi_pods[2]
    bn = bad["metadata"]["name"]
    cs = bad["status"]["containerStatuses"][0]
    cs["restartCount"] = 14
    cs["ready"] = False
    cs["started"] = False
    cs["state"] = {"waiting": {"reason": "CrashLoopBackOff",
                               "message": f"back-off 5m0s restarting failed container=ebs-plugin "
                                          f"pod={bn}_kube-system({bad['metadata']['uid']})"}}
    cs["lastState"] = {"terminated": {"exitCode": 137, "reason": "OOMKilled",
                                      "startedAt": st.ts(4.6), "finishedAt": st.ts(3.9),
                                      "containerID": "containerd://" + st.hexid()}}
    k.set_waiting(st, bad, "CrashLoopBackOff", cs["state"]["waiting"]["message"],
                  container_name="ebs-plugin", phase="Running", since=st.ago(3.9))
    st.event(ns="kube-system", kind="Pod", name=bn, reason="BackOff", type_="Warning", host=heavy,
             field_path="spec.containers{ebs-plugin}", count=61, first=st.ago(52),
             last=st.ago(0.7), message=f"Back-off restarting failed container ebs-plugin in pod "
                                       f"{bn}_kube-system({bad['metadata']['uid']})")
    st.event(ns="kube-system", kind="Pod", name=bn, reason="Pulled", host=heavy,
             field_path="spec.containers{ebs-plugin}", count=14, first=st.ago(57),
             last=st.ago(4.6), message=f'Container image "{PLUGIN}" already present on machine')
    st.event(ns="kube-system", kind="Pod", name=bn, reason="Unhealthy", type_="Warning",
             host=heavy, field_path="spec.containers{liveness-probe}", count=9, first=st.ago(50),
             last=st.ago(5), message="Liveness probe failed: Get \"http://10.0.3.63:9808/healthz\""
                                     ": dial tcp 10.0.3.63:9808: connect: connection refused")

    restart_times = [57 - i * 3.8 for i in range(14)]

    def restarts(m: float) -> float:
        return float(sum(1 for r in restart_times if r >= m))

    def mem(m: float) -> float:
        last = max((r for r in restart_times if r >= m), default=62.0)
        return min(127.5, 30 + (last - m) * 140)

    for p in csi_pods:
        if p is bad:
            k.pod_metrics(st, p, "ebs-plugin", mem_fn=mem, cpu_fn=lambda m: 0.03,
                          restarts_fn=restarts)
            k.counter_fn(st, "container_oom_events", "Count of out of memory events observed "
                         "for the container.", {"namespace": "kube-system",
                                                "pod": bn, "container": "ebs-plugin"},
                         lambda m: (1 / k.STEP) if any(0 <= r - m < 1 for r in restart_times)
                         else 0.0, start=0.0)
        else:
            k.pod_metrics(st, p, "ebs-plugin", mem_mb=st.rng.uniform(34, 58), cpu_cores=0.004)
        k.pod_metrics(st, p, "node-driver-registrar", mem_mb=11, cpu_cores=0.001)
    k.gauge_fn(st, "kube_pod_container_status_last_terminated_reason",
               "Describes the last reason the container was in terminated state.",
               {"namespace": "kube-system", "pod": bn, "container": "ebs-plugin",
                "reason": "OOMKilled"}, lambda m: 1.0, since_min=57)

    # previous instance log of the OOM-killed plugin, and the registrar that lost it
    t0 = st.ago(4.6)
    prev = [f"I1211 {k.iso_ms(t0)[11:23]} 1 driver.go:84] \"Driver Information\" "
            "Driver=\"ebs.csi.aws.com\" Version=\"v1.37.0\"",
            f"I1211 {k.iso_ms(t0)[11:23]} 1 node.go:96] \"regionFromSession Node service\" "
            "region=\"eu-west-1\"",
            f"I1211 {k.iso_ms(t0)[11:23]} 1 node.go:120] \"Node service: rebuilding device "
            "cache\" attachedVolumes=39"]
    for i, line in enumerate(prev):
        st.log(t0 + timedelta(seconds=i), "kube-system", bn, "ebs-plugin", "ebs-csi-node",
               "info", line, previous=True)
    for j in range(39):
        t = t0 + timedelta(seconds=3 + j * 1.0)
        st.log(t, "kube-system", bn, "ebs-plugin", "ebs-csi-node", "info",
               f"I1211 {k.iso_ms(t)[11:23]} 1 node.go:412] \"NodeGetVolumeStats: called\" "
               f"args={{\"volume_id\":\"vol-0{st.hexid(16)}\",\"volume_path\":\"/var/lib/kubelet/"
               f"pods/{st.uid()}/volumes/kubernetes.io~csi/pvc-{st.uid()}/mount\"}}",
               previous=True)
    for i in range(14):
        t = st.ago(restart_times[i] - 0.2)
        st.log(t, "kube-system", bn, "node-driver-registrar", "ebs-csi-node", "error",
               "E1211 connection.go:264] \"Lost connection\" address=\"/csi/csi.sock\"")
        st.log(t + timedelta(seconds=1), "kube-system", bn, "node-driver-registrar",
               "ebs-csi-node", "info", "I1211 main.go:90] \"Received NotifyRegistrationStatus "
               "call\" status=\"&RegistrationStatus{PluginRegistered:false,Error:plugin "
               "registration failed: driver ebs.csi.aws.com is not ready,}\"")
    for p in csi_pods:
        if p is not bad:
            k.noise(st, p, "ebs-plugin", "ebs-csi-node", "info", [
                "I1211 node.go:412] \"NodeGetVolumeStats: called\"",
                "I1211 node.go:318] \"NodePublishVolume: called\"",
            ], every=180)
    st.keep_pod_logs(bad)

    # --- the CSI controller (healthy) ---------------------------------------------------
    k.app(st, "kube-system", "ebs-csi-controller", PLUGIN, nodes=[names[0], names[3]],
          replicas=2, port=9808, access_logs=False, http=False, mem_mb=60, cpu_cores=0.01,
          revision=6, rollout_hours=24 * 6)

    # --- clickhouse: the rolling restart that looks guilty ------------------------------
    ch_labels = {"app": "clickhouse", "shard": "all"}
    chc = k.container("clickhouse", "docker.io/clickhouse/clickhouse-server:24.8.6", cpu="4",
                      memory="24Gi", mem_limit="24Gi", port=8123, readiness="/ping")
    sts: k.Obj = {
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {**k.meta(st, "data", "clickhouse", days=300, labels=ch_labels),
                     "generation": 12},
        "spec": {"replicas": 3, "serviceName": "clickhouse-headless",
                 "podManagementPolicy": "OrderedReady",
                 "selector": {"matchLabels": ch_labels},
                 "updateStrategy": {"type": "RollingUpdate",
                                    "rollingUpdate": {"partition": 0}},
                 "template": {"metadata": {"labels": ch_labels,
                                           "annotations": {"checksum/config": st.hexid(16)}},
                              "spec": {"containers": [chc]}},
                 "volumeClaimTemplates": [{"metadata": {"name": "data"},
                                           "spec": {"accessModes": ["ReadWriteOnce"],
                                                    "storageClassName": "gp3",
                                                    "resources": {"requests": {
                                                        "storage": "500Gi"}}}}]},
        "status": {"replicas": 3, "readyReplicas": 2, "currentReplicas": 2, "updatedReplicas": 1,
                   "availableReplicas": 2, "currentRevision": "clickhouse-6b8d7f4c9",
                   "updateRevision": "clickhouse-7f9c5d6b8", "observedGeneration": 12,
                   "collisionCount": 0},
    }
    st.add(sts)
    ch_pods = []
    for i, n in enumerate((names[0], names[1], heavy)):
        pn = f"clickhouse-{i}"
        rev = "clickhouse-7f9c5d6b8" if i == 2 else "clickhouse-6b8d7f4c9"
        made = st.ago(41) if i == 2 else st.ago(days=5, hours=i)
        p = k.pod(st, "data", pn, labels={**ch_labels, "controller-revision-hash": rev,
                                          "statefulset.kubernetes.io/pod-name": pn},
                  containers=[chc], node_name=n, owner=sts, created=made,
                  volumes=[{"name": "data", "persistentVolumeClaim": {
                      "claimName": f"data-clickhouse-{i}"}}])
        p["metadata"].pop("generateName", None)
        ch_pods.append(p)
        st.add(p)
        pvc: k.Obj = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                      "metadata": {**k.meta(st, "data", f"data-clickhouse-{i}", days=300,
                                            labels=ch_labels),
                                   "annotations": {"pv.kubernetes.io/bind-completed": "yes",
                                                   "volume.kubernetes.io/storage-provisioner":
                                                   DRIVER}},
                      "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "gp3",
                               "volumeMode": "Filesystem",
                               "resources": {"requests": {"storage": "500Gi"}},
                               "volumeName": f"pvc-{st.uid()}"},
                      "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"],
                                 "capacity": {"storage": "500Gi"}}}
        st.add(pvc)
    stuck = ch_pods[2]
    k.set_waiting(st, stuck, "ContainerCreating", "", since=st.ago(41))
    del stuck["status"]["containerStatuses"][0]["state"]["waiting"]["message"]
    vol = next(o for o in st.objs if o["kind"] == "PersistentVolumeClaim"
               and o["metadata"]["name"] == "data-clickhouse-2")["spec"]["volumeName"]
    mount_msg = (f'MountVolume.MountDevice failed for volume "{vol}" : kubernetes.io/csi: '
                 "attacher.MountDevice failed to create newCsiDriverClient: driver name "
                 f"{DRIVER} not found in the list of registered CSI drivers")
    st.event(ns="data", kind="Pod", name="clickhouse-2", reason="Scheduled",
             component="default-scheduler", first=st.ago(41),
             message=f"Successfully assigned data/clickhouse-2 to {heavy}")
    st.event(ns="data", kind="Pod", name="clickhouse-2", reason="SuccessfulAttachVolume",
             component="attachdetach-controller", first=st.ago(40.5),
             message=f'AttachVolume.Attach succeeded for volume "{vol}" ')
    st.event(ns="data", kind="Pod", name="clickhouse-2", reason="FailedMount", type_="Warning",
             host=heavy, count=23, first=st.ago(40), last=st.ago(1.2), message=mount_msg)
    st.event(ns="data", kind="Pod", name="clickhouse-2", reason="FailedMount", type_="Warning",
             host=heavy, count=18, first=st.ago(38), last=st.ago(2.1),
             message="Unable to attach or mount volumes: unmounted volumes=[data], unattached "
                     "volumes=[], failed to process volumes=[]: timed out waiting for the "
                     "condition")
    st.event(ns="data", kind="StatefulSet", name="clickhouse", api_version="apps/v1",
             reason="SuccessfulDelete", component="statefulset-controller", first=st.ago(41.2),
             message="delete Pod clickhouse-2 in StatefulSet clickhouse successful")
    st.event(ns="data", kind="StatefulSet", name="clickhouse", api_version="apps/v1",
             reason="SuccessfulCreate", component="statefulset-controller", first=st.ago(41),
             message="create Pod clickhouse-2 in StatefulSet clickhouse successful")
    cm: k.Obj = {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {**k.meta(st, "data", "clickhouse-config", days=300),
                              "annotations": {"last-applied-by": "argocd"}},
                 "data": {"config.xml": "<clickhouse><max_concurrent_queries>200"
                                        "</max_concurrent_queries><merge_tree>"
                                        "<parts_to_throw_insert>600</parts_to_throw_insert>"
                                        "</merge_tree></clickhouse>"}}
    st.add(cm)
    svc = k.service(st, "data", "clickhouse", ch_labels, port=8123, target=8123, days=300)
    k.endpoints(st, svc, ch_pods[:2], port=8123)
    for p in ch_pods[:2]:
        k.noise(st, p, "clickhouse", "clickhouse", "info", [
            "<Information> executeQuery: Read 1804211 rows, 96.31 MiB in 0.41 sec.",
            "<Information> MergeTreeDataMergerMutator: Selected 6 parts from 202612_1_88_4",
        ], every=50)
        k.noise(st, p, "clickhouse", "clickhouse", "error", [
            "<Error> DistributedSink: Connection refused (clickhouse-2.clickhouse-headless."
            "data.svc:9000), shard 3 unavailable, will retry",
            "<Error> executeQuery: Code: 279. DB::NetException: All connection tries failed "
            "while connecting to shard 3 (clickhouse-2). (ALL_CONNECTION_TRIES_FAILED)",
        ], every=80, start_min=40)
        k.pod_metrics(st, p, "clickhouse", mem_mb=14200, cpu_cores=1.4)
    for p in ch_pods[:2]:
        st.log(st.ago(42), "data", p["metadata"]["name"], "clickhouse", "clickhouse", "info",
               "<Information> Application: Config reload: max_concurrent_queries 150 -> 200")
    st.keep_pod_logs(*ch_pods[:2])

    # --- an etl job pod on the same node, same failure; healthy bystanders ---------------
    jctr = k.container("export", "registry.corp.example/etl/exporter:1.9.2", port=None,
                       cpu="1", memory="2Gi", mem_limit="4Gi")
    job: k.Obj = {"apiVersion": "batch/v1", "kind": "Job",
                  "metadata": {**k.meta(st, "etl", "hourly-export-29422815", days=0.02),
                               "labels": {"job-name": "hourly-export-29422815"}},
                  "spec": {"parallelism": 1, "completions": 1, "backoffLimit": 2,
                           "template": {"spec": {"containers": [jctr],
                                                 "restartPolicy": "Never"}}},
                  "status": {"active": 1, "startTime": st.ts(15), "ready": 0}}
    job["metadata"]["creationTimestamp"] = st.ts(15)
    st.add(job)
    jp = k.pod(st, "etl", f"hourly-export-29422815-{st.suffix()}",
               labels={"job-name": "hourly-export-29422815"}, containers=[jctr], node_name=heavy,
               owner=job, created=st.ago(15),
               volumes=[{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
                   "accessModes": ["ReadWriteOnce"], "storageClassName": "gp3",
                   "resources": {"requests": {"storage": "100Gi"}}}}}}])
    jp["spec"]["restartPolicy"] = "Never"
    k.set_waiting(st, jp, "ContainerCreating", "", since=st.ago(15))
    del jp["status"]["containerStatuses"][0]["state"]["waiting"]["message"]
    st.add(jp)
    st.event(ns="etl", kind="Pod", name=jp["metadata"]["name"], reason="FailedMount",
             type_="Warning", host=heavy, count=9, first=st.ago(14), last=st.ago(0.4),
             message=mount_msg.replace(vol, f"pvc-{st.uid()}"))
    k.app(st, "monitoring", "grafana", "docker.io/grafana/grafana:11.3.1", nodes=names,
          replicas=1, port=3000, rps=0.3, log_every=300, http=False)
    k.app(st, "web", "status-page", "registry.corp.example/web/status-page:1.4.0", nodes=names,
          replicas=2, rps=3, log_every=120, lat_ms=8, paths=("/", "/api/status"))
    st.write(root, title="clickhouse-2 stuck in ContainerCreating after config rollout", report=(
        "clickhouse-2 has been stuck in ContainerCreating for ~40 min, ever since argo rolled the "
        "new clickhouse config (max_concurrent_queries bump). shard 3 is down and the nightly "
        "dashboards are failing. is the new config breaking clickhouse startup? thinking of "
        "reverting the configmap and force-deleting the pod\n"),
        truth={"category": "oom_killed",
               "culprit": {"kind": "DaemonSet", "namespace": "kube-system",
                           "name": "ebs-csi-node"},
               "evidence": ["OOMKilled", "not found in the list of registered CSI drivers",
                            "128Mi"],
               "fix": "Raise the ebs-plugin container's memory limit in the ebs-csi-node "
                      "DaemonSet (128Mi is too little on a node with 39 attached volumes); once "
                      "the plugin stays up and re-registers, clickhouse-2 and the etl job mount "
                      "their volumes. The clickhouse config change is not involved."})
