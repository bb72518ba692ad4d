"""Shape 8, image_pull: the CronJob that refreshes the registry pull secret (tokens last 12 h)
has failed since its IAM permission was removed; the token in the Secret expired at 06:00 and
pods that must pull now get 401 Unauthorized, while running pods are fine; ECR is blamed."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from . import _kit as k

SID = "checkout-scale-out-imagepull"
REG = "771203384455.dkr.ecr.eu-central-1.amazonaws.com"
ROLE = "arn:aws:sts::771203384455:assumed-role/ecr-cred-refresher"
DENIED = ("An error occurred (AccessDeniedException) when calling the GetAuthorizationToken "
          "operation: User: {role}/botocore-session-{sess} is not authorized to perform: "
          "ecr:GetAuthorizationToken on resource: * because no identity-based policy allows "
          "the ecr:GetAuthorizationToken action")


def _pull_error(image: str) -> str:
    repo, tag = image.split("/", 1)[1].rsplit(":", 1)
    return (f'failed to pull and unpack image "{image}": failed to resolve reference '
            f'"{image}": unexpected status from HEAD request to https://{REG}/v2/{repo}/'
            f"manifests/{tag}: 401 Unauthorized")


def build(root: Path) -> None:
    s = k.Story(SID, "2026-11-18T06:40:00Z", seed=5508)
    old = s.ago(days=365)
    nodes = k.eks_nodes(s, [
        ("eu-central-1a", "m6i.2xlarge", "8", "32386132Ki", "general-a"),
        ("eu-central-1b", "m6i.2xlarge", "8", "32386132Ki", "general-b"),
        ("eu-central-1c", "m6i.2xlarge", "8", "32386132Ki", "general-c"),
        ("eu-central-1a", "m6i.2xlarge", "8", "32386132Ki", "general-a"),
    ], old, s.ago(days=6, hours=3), region="eu-central-1")
    new_node_at = s.ago(22, seconds=40)
    fresh = k.eks_nodes(s, [("eu-central-1b", "m6i.2xlarge", "8", "32386132Ki",
                              "general-b")], new_node_at, new_node_at + timedelta(seconds=48),
                        region="eu-central-1")[0]
    every = [*nodes, fresh]
    base = k.standard_cluster(s, every, old, s.ago(days=6, hours=2))
    for w in base.values():
        for p, r in zip(w.pods, w.recs, strict=True):
            if p["spec"]["nodeName"] == fresh[0]:
                at = new_node_at + timedelta(seconds=s.rng.randint(50, 70))
                p["metadata"]["creationTimestamp"] = k.iso(at)
                p["status"]["startTime"] = k.iso(at)
                for st in p["status"]["containerStatuses"]:
                    st["state"] = {"running": {"startedAt": k.iso(at + timedelta(seconds=4))}}
                p["status"]["conditions"] = k.pod_conditions(at, at + timedelta(seconds=9))
                r.created = at
    s.event("Node", "", fresh[0], "RegisteredNode",
            f"Node {fresh[0]} event: Registered Node {fresh[0]} in Controller",
            first=new_node_at + timedelta(seconds=30), component="node-controller")
    s.event("Node", "", fresh[0], "NodeReady", f"Node {fresh[0]} status is now: NodeReady",
            first=new_node_at + timedelta(seconds=48), host=fresh[0])
    for ns, team in (("orders", "orders"), ("fulfillment", "fulfillment"),
                     ("platform-ops", "platform")):
        k.namespace(s, ns, old, {"team": team})
    pull = {"imagePullSecrets": [{"name": "ecr-pull"}]}
    expiry = s.now.replace(hour=6, minute=0, second=12)

    # ----- the refresher CronJob and its Jobs -----
    rc = k.container("refresher", "ghcr.io/example-platform/ecr-cred-refresher:1.4.0",
                     cpu="50m", mem="128Mi", mem_limit="128Mi",
                     env=[{"name": "AWS_REGION", "value": "eu-central-1"},
                          {"name": "REGISTRY", "value": REG},
                          {"name": "TARGET_NAMESPACES", "value": "orders,fulfillment"},
                          {"name": "SECRET_NAME", "value": "ecr-pull"}])
    rtmpl = k.template({"app.kubernetes.io/name": "ecr-cred-refresher"}, [rc],
                       sa="ecr-cred-refresher")
    rtmpl["spec"]["restartPolicy"] = "Never"
    cj = s.add({
        "apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": k.meta("ecr-cred-refresher", "platform-ops", s.ago(days=340), s.uid(),
                           labels={"app.kubernetes.io/name": "ecr-cred-refresher"},
                           annotations={"description": "ECR tokens last 12h; refresh the "
                                        "ecr-pull secret every 6h"}),
        "spec": {"schedule": "0 */6 * * *", "timeZone": "Etc/UTC",
                 "concurrencyPolicy": "Forbid", "suspend": False,
                 "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 3,
                 "jobTemplate": {"spec": {"backoffLimit": 2, "template": rtmpl}}},
        "status": {"lastScheduleTime": k.iso(s.now.replace(hour=6, minute=0, second=0)),
                   "lastSuccessfulTime": k.iso(expiry - timedelta(hours=12, seconds=-3))},
    })
    runs = [s.now.replace(hour=h, minute=0, second=0) - timedelta(days=d)
            for d, h in ((1, 6), (1, 12), (1, 18), (0, 0), (0, 6))]
    for at in runs:
        ok = at < s.now.replace(hour=0, minute=0, second=0)
        name = f"ecr-cred-refresher-{int(at.timestamp() // 60)}"
        juid = s.uid()
        labels = {"app.kubernetes.io/name": "ecr-cred-refresher",
                  "batch.kubernetes.io/controller-uid": juid,
                  "batch.kubernetes.io/job-name": name, "controller-uid": juid,
                  "job-name": name}
        jt = {"metadata": {"labels": labels}, "spec": rtmpl["spec"]}
        attempts = 1 if ok else 3
        starts = []
        t = at + timedelta(seconds=1)
        for _ in range(attempts):
            starts.append(t)
            t += timedelta(seconds=s.rng.uniform(12, 15) + (0 if ok else 10 * len(starts)))
        end = starts[-1] + timedelta(seconds=4 if not ok else 9)
        if ok:
            cond = [{"type": "Complete", "status": "True", "lastProbeTime": k.iso(end),
                     "lastTransitionTime": k.iso(end)}]
            st_extra = {"succeeded": 1, "completionTime": k.iso(end)}
        else:
            cond = [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                     "message": "Job has reached the specified backoff limit",
                     "lastProbeTime": k.iso(end), "lastTransitionTime": k.iso(end)}]
            st_extra = {"failed": 3}
        s.add({"apiVersion": "batch/v1", "kind": "Job",
               "metadata": k.meta(name, "platform-ops", at, juid, labels=labels,
                                  annotations={"batch.kubernetes.io/cronjob-scheduled-"
                                               "timestamp": k.iso(at)},
                                  owner=k.owner_ref("CronJob", "ecr-cred-refresher",
                                                    cj["metadata"]["uid"], api="batch/v1")),
               "spec": {"backoffLimit": 2, "completionMode": "NonIndexed", "completions": 1,
                        "parallelism": 1, "suspend": False,
                        "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid":
                                                     juid}}, "template": jt},
               "status": {"startTime": k.iso(at + timedelta(seconds=1)), "ready": 0,
                          "terminating": 0, "uncountedTerminatedPods": {},
                          "conditions": cond, **st_extra}})
        for st_at in starts:
            nd = every[s.rng.randint(0, 3)]
            pn = f"{name}-{s.suffix()}"
            fin_at = st_at + timedelta(seconds=(8 if ok else 3))
            code, reason = (0, "Completed") if ok else (254, "Error")
            cst = {"name": "refresher", "image": rc["image"],
                   "imageID": k._image_id(rc["image"]), "ready": False, "started": False,
                   "restartCount": 0, "lastState": {},
                   "state": {"terminated": k.terminated(reason, code, st_at, fin_at)}}
            conds = [{"type": "Initialized", "status": "True",
                      "lastTransitionTime": k.iso(st_at)},
                     {"type": "Ready", "status": "False", "reason": "PodCompleted" if ok
                      else "PodFailed", "lastTransitionTime": k.iso(fin_at)},
                     {"type": "ContainersReady", "status": "False", "reason": "PodCompleted"
                      if ok else "PodFailed", "lastTransitionTime": k.iso(fin_at)},
                     {"type": "PodScheduled", "status": "True",
                      "lastTransitionTime": k.iso(st_at)}]
            pod = k.make_pod(s, "platform-ops", pn, jt, k.owner_ref("Job", name, juid,
                                                                    api="batch/v1"),
                             nd[0], st_at, statuses=[cst], phase="Succeeded" if ok else
                             "Failed", conditions=conds, host_ip=nd[1])
            lines = _refresher_lines(s, st_at, ok, at)
            for off, lvl, msg in lines:
                s.log(st_at + timedelta(seconds=off), "platform-ops", pn, "refresher",
                      "ecr-cred-refresher", lvl, msg)
            if at == runs[-1]:
                s.event("Pod", "platform-ops", pn, "Started", "Started container refresher",
                        first=st_at, host=nd[0], uid=pod["metadata"]["uid"],
                        field_path="spec.containers{refresher}")
                s.event("Job", "platform-ops", name, "SuccessfulCreate",
                        f"Created pod: {pn}", first=st_at - timedelta(seconds=1),
                        component="job-controller", api_version="batch/v1")
                s.pod_log("platform-ops", pn, "refresher",
                          [f"{(st_at + timedelta(seconds=o)).strftime('%Y-%m-%dT%H:%M:%SZ')} "
                           f"{lv.upper()} {m}" for o, lv, m in lines])
        if at == runs[-1]:
            s.event("Job", "platform-ops", name, "BackoffLimitExceeded",
                    "Job has reached the specified backoff limit", first=end,
                    type_="Warning", component="job-controller", api_version="batch/v1")
            s.event("CronJob", "platform-ops", "ecr-cred-refresher", "SawCompletedJob",
                    f"Saw completed job: {name}, condition: Failed", first=end +
                    timedelta(seconds=1), component="cronjob-controller",
                    uid=cj["metadata"]["uid"], api_version="batch/v1")
            s.event("CronJob", "platform-ops", "ecr-cred-refresher", "SuccessfulCreate",
                    f"Created job {name}", first=at, component="cronjob-controller",
                    uid=cj["metadata"]["uid"], api_version="batch/v1")

    # ----- checkout: HPA scale-out at 06:15, two pods land on the brand-new node -----
    clab = {"app.kubernetes.io/name": "checkout"}
    cc = k.container("checkout", f"{REG}/orders/checkout:4.2.0", port=8080, cpu="1",
                     mem="1Gi", mem_limit="2Gi",
                     readiness=k.http_probe("/ready", 8080), liveness=k.http_probe(
                         "/live", 8080, delay=20))
    co = k.deployment(s, "orders", "checkout", [cc], replicas=6, nodes=nodes, created=old,
                      pods_since=s.ago(days=2, hours=7), revision=47, labels=clab,
                      pod_extra=pull, cpu=0.6, mem=780 * k.MiB)
    ost = co.pods[3]["status"]["containerStatuses"][0]
    ost["restartCount"] = 1
    ost["lastState"] = {"terminated": k.terminated("Error", 137, s.ago(days=2, hours=7),
                                                   s.ago(days=1, hours=20))}
    co.recs[3].restarts = 1
    scale = s.ago(25, seconds=5)
    h = co.rs[-1]["metadata"]["name"].rsplit("-", 1)[1]
    owner = k.owner_ref("ReplicaSet", co.rs[-1]["metadata"]["name"],
                        co.rs[-1]["metadata"]["uid"])
    ok_new = []
    bad: list[tuple[k.Obj, k.Obj, str]] = []
    for i, nd in enumerate([nodes[2], fresh, fresh]):
        pn = f"checkout-{h}-{s.suffix()}"
        created = scale + timedelta(seconds=1 + i)
        if nd is not fresh:
            p = k.make_pod(s, "orders", pn, co.template, owner, nd[0], created,
                           hash_label={"pod-template-hash": h}, host_ip=nd[1])
            ok_new.append(p)
            co.pods.append(p)
            s.pods.append(k.PodRec("orders", pn, nd[0], ["checkout"], created, cpu=0.6,
                                   mem=700 * k.MiB))
            s.event("Pod", "orders", pn, "Pulled", f'Container image "{cc["image"]}" already '
                    "present on machine", first=created + timedelta(seconds=2), host=nd[0],
                    uid=p["metadata"]["uid"], field_path="spec.containers{checkout}")
            continue
        sched = new_node_at + timedelta(seconds=75 + i)
        st = k.waiting(cc, "ImagePullBackOff", f'Back-off pulling image "{cc["image"]}"')
        p = k.make_pod(s, "orders", pn, co.template, owner, nd[0], created,
                       hash_label={"pod-template-hash": h}, statuses=[st],
                       conditions=k.pod_conditions(sched, None, message="containers with "
                                                   "unready status: [checkout]"),
                       host_ip=nd[1])
        bad.append((p, cc, nd[0]))
        s.event("Pod", "orders", pn, "FailedScheduling",
                "0/4 nodes are available: 4 Insufficient cpu. preemption: 0/4 nodes are "
                "available: 4 No preemption victims found for incoming pod.", first=created,
                last=new_node_at + timedelta(seconds=40), count=3, type_="Warning",
                component="default-scheduler", uid=p["metadata"]["uid"])
        s.event("Pod", "orders", pn, "TriggeredScaleUp",
                "pod triggered scale-up: [{eks-general-b-5ec8a0f2 3->4 (max: 8)}]",
                first=created + timedelta(seconds=11), component="cluster-autoscaler",
                uid=p["metadata"]["uid"])
        s.event("Pod", "orders", pn, "Scheduled",
                f"Successfully assigned orders/{pn} to {nd[0]}", first=sched,
                component="default-scheduler", uid=p["metadata"]["uid"])
    dep = co.obj
    dep["spec"]["replicas"] = 9
    dep["status"].update({"replicas": 9, "updatedReplicas": 9, "readyReplicas": 7,
                          "availableReplicas": 7, "unavailableReplicas": 2})
    co.rs[-1]["spec"]["replicas"] = 9
    co.rs[-1]["status"].update({"replicas": 9, "fullyLabeledReplicas": 9, "readyReplicas": 7,
                                "availableReplicas": 7})
    s.event("Deployment", "orders", "checkout", "ScalingReplicaSet",
            f"Scaled up replica set checkout-{h} to 9 from 6", first=scale,
            component="deployment-controller")
    s.event("HorizontalPodAutoscaler", "orders", "checkout", "SuccessfulRescale",
            "New size: 9; reason: cpu resource utilization (percentage of request) above "
            "target", first=scale, component="horizontal-pod-autoscaler",
            api_version="autoscaling/v2")
    s.add({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
           "metadata": k.meta("checkout", "orders", old, s.uid()),
           "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                       "name": "checkout"}, "minReplicas": 6,
                    "maxReplicas": 30,
                    "metrics": [{"type": "Resource", "resource": {
                        "name": "cpu", "target": {"type": "Utilization",
                                                  "averageUtilization": 60}}}]},
           "status": {"currentReplicas": 9, "desiredReplicas": 9,
                      "lastScaleTime": k.iso(scale),
                      "currentMetrics": [{"type": "Resource", "resource": {
                          "name": "cpu", "current": {"averageUtilization": 71,
                                                     "averageValue": "712m"}}}]}})
    k.service(s, "orders", "checkout", clab, 80, 8080, old, pods=co.pods,
              not_ready=[b[0] for b in bad])

    # ----- label-printer: a 1.9.0 rollout at 06:25 on an old node, same 401 -----
    lp_at = s.ago(15, seconds=20)
    llab = {"app.kubernetes.io/name": "label-printer"}

    def lp(tag: str) -> k.Obj:
        return k.container("label-printer", f"{REG}/fulfillment/label-printer:{tag}",
                           port=8080, cpu="200m", mem="256Mi",
                           readiness=k.http_probe("/ready", 8080))

    lpd = k.deployment(s, "fulfillment", "label-printer", [lp("1.8.4")], replicas=2,
                       nodes=nodes[:2], created=old, pods_since=s.ago(days=4), revision=12,
                       labels=llab, pod_extra=pull, cpu=0.05, mem=150 * k.MiB,
                       strategy={"type": "RollingUpdate",
                                 "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}})
    new_lp = lp("1.9.0")
    new_t = k.template(llab, [new_lp], extra=pull)
    lpd.obj["spec"]["template"] = new_t
    lpd.obj["metadata"]["annotations"]["deployment.kubernetes.io/revision"] = "13"
    lh = s.suffix(10)
    lrs = k.replicaset(s, lpd, new_t, 13, lp_at, 1, 0, hash_=lh)
    lpd.obj["status"].update({"replicas": 3, "updatedReplicas": 1, "readyReplicas": 2,
                              "availableReplicas": 2, "unavailableReplicas": 1})
    lpd.obj["status"]["conditions"][1].update({
        "reason": "ReplicaSetUpdated",
        "message": f'ReplicaSet "label-printer-{lh}" is progressing.',
        "lastUpdateTime": k.iso(lp_at)})
    s.event("Deployment", "fulfillment", "label-printer", "ScalingReplicaSet",
            f"Scaled up replica set label-printer-{lh} to 1", first=lp_at,
            component="deployment-controller")
    lpn = f"label-printer-{lh}-{s.suffix()}"
    lst = k.waiting(new_lp, "ErrImagePull", _pull_error(new_lp["image"]))
    lpod = k.make_pod(s, "fulfillment", lpn, new_t,
                      k.owner_ref("ReplicaSet", lrs["metadata"]["name"],
                                  lrs["metadata"]["uid"]), nodes[3][0], lp_at,
                      hash_label={"pod-template-hash": lh}, statuses=[lst],
                      conditions=k.pod_conditions(lp_at, None, message="containers with "
                                                  "unready status: [label-printer]"),
                      host_ip=nodes[3][1])
    bad.append((lpod, new_lp, nodes[3][0]))
    s.event("Pod", "fulfillment", lpn, "Scheduled",
            f"Successfully assigned fulfillment/{lpn} to {nodes[3][0]}", first=lp_at,
            component="default-scheduler", uid=lpod["metadata"]["uid"])
    k.service(s, "fulfillment", "label-printer", llab, 80, 8080, old, pods=lpd.pods,
              not_ready=[lpod])
    for p, c, nd in bad:
        pn = p["metadata"]["name"]
        ns = p["metadata"]["namespace"]
        uid = p["metadata"]["uid"]
        first = k.parse(p["status"]["conditions"][-1]["lastTransitionTime"]) + \
            timedelta(seconds=1)
        fp = f"spec.containers{{{c['name']}}}"
        n = int((s.now - first).total_seconds() // 300) + 4
        s.event("Pod", ns, pn, "Pulling", f'Pulling image "{c["image"]}"', first=first,
                last=s.ago(seconds=s.rng.randint(20, 200)), count=n, host=nd, uid=uid,
                field_path=fp)
        s.event("Pod", ns, pn, "Failed",
                f'Failed to pull image "{c["image"]}": {_pull_error(c["image"])}',
                first=first + timedelta(seconds=1), last=s.ago(seconds=s.rng.randint(15, 190)),
                count=n, type_="Warning", host=nd, uid=uid, field_path=fp)
        s.event("Pod", ns, pn, "Failed", "Error: ErrImagePull",
                first=first + timedelta(seconds=1), last=s.ago(seconds=s.rng.randint(15, 190)),
                count=n, type_="Warning", host=nd, uid=uid, field_path=fp)
        s.event("Pod", ns, pn, "BackOff", f'Back-off pulling image "{c["image"]}"',
                first=first + timedelta(seconds=2), last=s.ago(seconds=s.rng.randint(2, 30)),
                count=n * 5, host=nd, uid=uid, field_path=fp)
        s.event("Pod", ns, pn, "Failed", "Error: ImagePullBackOff",
                first=first + timedelta(seconds=2), last=s.ago(seconds=s.rng.randint(2, 30)),
                count=n * 5, type_="Warning", host=nd, uid=uid, field_path=fp)

    # ----- app logs -----
    k.http_logs(s, co, "checkout", s.ago(65), s.now, 45.0, [
        ("POST", "/v1/checkout", 201, 40), ("GET", "/v1/checkout/{id}", 200, 40),
        ("POST", "/v1/checkout", 402, 2), ("POST", "/v1/checkout", 504, 1)],
        fmt="{method} {path} {status} {ms}ms")
    k.lines(s, co, "checkout", s.ago(65), s.now, 300.0, [
        ("error", "payment provider adyen timeout after 3000ms for order {id}, retrying", 2),
        ("warn", "inventory reservation for order {id} took {ms}0ms", 1),
    ])
    k.lines(s, lpd, "label-printer", s.ago(65), s.now, 120.0, [
        ("info", "printed shipping label for parcel {id} (carrier dhl)", 5),
        ("warn", "carrier api ups slow ({ms}0ms), label {id} queued", 1),
    ])
    ca = k.deployment(
        s, "kube-system", "cluster-autoscaler",
        [k.container("cluster-autoscaler",
                     "registry.k8s.io/autoscaling/cluster-autoscaler:v1.30.2", port=8085,
                     cpu="100m", mem="300Mi")],
        replicas=1, nodes=nodes[:1], created=old, pods_since=s.ago(days=6), cpu=0.02,
        mem=120 * k.MiB)
    cpn = ca.pods[0]["metadata"]["name"]
    for off, msg in [
        (scale - new_node_at + timedelta(seconds=11), "Pod orders/checkout is unschedulable"),
        (scale - new_node_at + timedelta(seconds=12),
         "Best option to resize: eks-general-b-5ec8a0f2"),
        (scale - new_node_at + timedelta(seconds=12),
         "Final scale-up plan: [{eks-general-b-5ec8a0f2 3->4 (max: 8)}]"),
        (scale - new_node_at + timedelta(seconds=13),
         "Scale-up: setting group eks-general-b-5ec8a0f2 size to 4"),
    ]:
        s.log(new_node_at + off, "kube-system", cpn, "cluster-autoscaler",
              "cluster-autoscaler", "info", msg)

    # ----- metrics -----
    s.pod_metrics()
    for p, c, _ in bad:
        for reason in ("ErrImagePull", "ImagePullBackOff"):
            s.gauge("kube_pod_container_status_waiting_reason",
                    "Describes the reason the container is currently in waiting state.",
                    {"namespace": p["metadata"]["namespace"], "pod": p["metadata"]["name"],
                     "container": c["name"], "reason": reason},
                    lambda t, r=reason: (1.0 if (t.minute // 2) % 2 == (r == "ErrImagePull")
                                         else 0.0),
                    begin=k.parse(p["metadata"]["creationTimestamp"]))
    lab = {"namespace": "platform-ops", "cronjob": "ecr-cred-refresher"}
    s.gauge("kube_cronjob_status_last_successful_time",
            "LastSuccessfulTime keeps information of when was the last time the job was "
            "successfully completed.", lab,
            lambda t: float(int((expiry - timedelta(hours=12, seconds=-3)).timestamp())),
            every=2)
    s.gauge("kube_cronjob_status_last_schedule_time",
            "LastScheduleTime keeps information of when was the last time the job was "
            "successfully scheduled.", lab,
            lambda t: float(int(runs[-1].timestamp())), every=2)
    for at in runs[-2:]:
        s.gauge("kube_job_status_failed", "The number of pods which reached Phase Failed.",
                {"namespace": "platform-ops",
                 "job_name": f"ecr-cred-refresher-{int(at.timestamp() // 60)}",
                 "reason": "BackoffLimitExceeded"}, lambda t: 3.0, every=2,
                begin=at + timedelta(minutes=2))
    s.gauge("kube_deployment_status_replicas_unavailable",
            "The number of unavailable replicas per deployment.",
            {"namespace": "orders", "deployment": "checkout"},
            lambda t: 2.0 if t >= scale else 0.0)
    s.gauge("kube_deployment_status_replicas_unavailable",
            "The number of unavailable replicas per deployment.",
            {"namespace": "fulfillment", "deployment": "label-printer"},
            lambda t: 1.0 if t >= lp_at else 0.0)
    for p in co.pods:
        s.counter("http_requests_total", "Total HTTP requests.",
                  {"namespace": "orders", "service": "checkout", "pod": p["metadata"]["name"],
                   "code": "201"}, lambda t: 6.0,
                  begin=k.parse(p["metadata"]["creationTimestamp"]))

    k.scenario(
        s, title="New checkout pods stuck in ImagePullBackOff",
        report=(
            "checkout scaled out for the morning peak but the new pods are stuck in "
            "ImagePullBackOff with 401 from ECR, and label-printer's deploy is stuck the same "
            "way. Existing pods are fine. Is ECR in eu-central-1 having an outage? AWS health "
            "dashboard shows nothing yet. Two of the bad pods are on the node the autoscaler "
            "just added, maybe that node is broken?\n"
        ),
        category="image_pull", kind="CronJob", ns="platform-ops", name="ecr-cred-refresher",
        evidence=["401 Unauthorized", "not authorized to perform: ecr:GetAuthorizationToken",
                  "BackoffLimitExceeded"],
        fix=("ecr-cred-refresher has failed since 00:00 (AccessDenied on "
             "ecr:GetAuthorizationToken for its IAM role), so the ecr-pull secrets still hold "
             "the token issued at 18:00 yesterday, which expired at 06:00:12; any pod that must "
             "pull now gets 401. Restore ecr:GetAuthorizationToken to the ecr-cred-refresher "
             "role and run the CronJob by hand (kubectl create job --from=cronjob/"
             "ecr-cred-refresher); neither ECR nor the new node is at fault."),
    )
    s.write(root)
    k.check_evidence(s, root)


def _refresher_lines(s: k.Story, start: datetime, ok: bool,
                     scheduled: datetime) -> list[tuple[float, str, str]]:
    sess = int(scheduled.timestamp()) + s.rng.randint(1, 9)
    out = [(0.0, "info", "ecr-cred-refresher 1.4.0: registry "
            f"{REG}, namespaces orders,fulfillment"),
           (0.6, "info", "requesting ECR authorization token (eu-central-1)")]
    if ok:
        exp = scheduled + timedelta(hours=12, seconds=12)
        out += [(1.9, "info", f"token received, expires at {k.iso(exp)}"),
                (2.4, "info", "patched secret orders/ecr-pull"),
                (2.6, "info", "patched secret fulfillment/ecr-pull"),
                (2.7, "info", "done: 2 secret(s) refreshed")]
    else:
        out += [(1.4, "error", DENIED.format(role=ROLE, sess=sess)),
                (1.5, "error", "refresh failed, secrets left unchanged; exiting 254")]
    del start
    return out
