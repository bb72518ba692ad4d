"""Pensions: the yearly benefit statements run crawls. The indexed Job
annual-statements-2026 asks for 10 parallel render pods, but the namespace's ResourceQuota
allows 20 pods and the services of member-statements already run 17 (two of them are new
this year). The job controller gets three pods; every other creation is refused with
"exceeded quota ... pods=20" and the run goes at a third of its speed. The render pods that
do run are healthy; nothing errs in their logs."""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import partial

from tests.data.holdout._generator.base import daemonset, gauge, set_times
from tests.data.holdout2._generator.kit import NodeKind, app_counter, set_condition
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import (
    Ctr,
    Obj,
    Template,
    Workload,
    ended,
    http_probe,
    iso,
    running,
)

from .kit3 import Incident, chatter, iks_nodes, log_pod, namespaces, quiet, steady

ID = "pension-statements-crawling"
NOW = datetime.fromisoformat("2027-03-02T09:14:00+00:00")
NS = "member-statements"
REG = "de.icr.io/vorsorgekasse"
JOB = "annual-statements-2026"
QUOTA = "member-statements-quota"
BATCHES, PARALLEL = 240, 10


def build() -> Incident:
    s = Incident(
        id=ID,
        title="Annual benefit statements run far too slow",
        now=NOW,
        report="""\
The yearly benefit statements run (annual-statements-2026, started by ops at 08:02) is
crawling: after more than an hour only about 20 of the 240 batches are done. Last year the
same run was finished before lunch. The render pods that are running look fine, nothing in
their logs. The print house needs the files by 16:00, can someone check what's holding it
back?
""",
        truth=truth(
            "quota_exceeded", "Job", NS, JOB,
            ["exceeded quota: member-statements-quota", "requested: pods=1, used: pods=20, "
             "limited: pods=20", "FailedCreate", "parallelism: 10"],
            "The ResourceQuota member-statements-quota allows 20 pods and the namespace's "
            "services already run 17, so the job controller can only run 3 of the 10 parallel "
            "render pods of annual-statements-2026 and every other creation is refused: raise "
            "the pods quota (to about 30) for the run, or scale statement-preview down "
            "meanwhile; the Job then proceeds at full parallelism without a restart."))
    set_times(s, 2.5, 60)
    c = s.cluster
    namespaces(s, {"default": 820, "kube-system": 820, "ibm-system": 820, NS: 760,
                   "member-portal": 700})
    bx2 = NodeKind("bx2.8x32", "8", "32880048Ki", "7910m", "29111728Ki", "v1.31.6+IKS",
                   "6.8.0-55-generic", "Ubuntu 24.04.2 LTS", runtime="containerd://1.7.25",
                   storage="102626232Ki", alloc_storage="94580335255")
    nodes = iks_nodes(s, 3, account="4c1f0b7e9a2d48e5b6c3a1f2e7d9c0b4",
                      cluster_id="cv8d2kqf0r3m1n7p5s9g", pool="default", kind=bx2,
                      region="eu-de", subnet="10.243.0", days=6.2)

    # ---- the quota and the defaults of the namespace
    quota_meta = c.meta("ResourceQuota", QUOTA, NS, s.ago(days=412),
                        {"app.kubernetes.io/managed-by": "platform-baseline"})
    hard = {"limits.memory": "64Gi", "pods": "20", "requests.cpu": "24",
            "requests.memory": "48Gi", "services.loadbalancers": "0"}
    c.add({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": quota_meta,
           "spec": {"hard": dict(hard)},
           "status": {"hard": dict(hard),
                      "used": {"limits.memory": "27904Mi", "pods": "20",
                               "requests.cpu": "7450m", "requests.memory": "15488Mi",
                               "services.loadbalancers": "0"}}})
    c.add({"apiVersion": "v1", "kind": "LimitRange",
           "metadata": c.meta("LimitRange", "member-statements-defaults", NS, s.ago(days=412),
                              {"app.kubernetes.io/managed-by": "platform-baseline"}),
           "spec": {"limits": [{"type": "Container",
                                "default": {"cpu": "500m", "memory": "512Mi"},
                                "defaultRequest": {"cpu": "100m", "memory": "256Mi"},
                                "max": {"memory": "8Gi"}}]}})

    # ---- the namespace's services: 17 pods
    def svc(name: str, version: str, replicas: int, mib: float, revision: int,
            days: float, cpu: str = "250m", memory: str = "512Mi", limit: str = "1Gi",
            restarted: dict[int, tuple[datetime, str, int]] | None = None,
            port: int = 8080) -> list[Obj]:
        ctr = Ctr(name, f"{REG}/{name}:{version}", port=port,
                  requests={"cpu": cpu, "memory": memory}, limits={"memory": limit},
                  readiness=http_probe("/health/ready", "http", delay=10))
        _, pods = steady(s, NS, name, [ctr], nodes=nodes, replicas=replicas,
                         revision=revision, rollout=s.ago(days=days), restarted=restarted,
                         offset=revision % 3,
                         labels={"app.kubernetes.io/name": name,
                                 "app.kubernetes.io/part-of": "member-statements"})
        quiet(s, pods, name, mib)
        return pods
    apis = svc("statement-api", "5.3.1", 4, 610, 71, 3.9, cpu="500m", memory="1Gi",
               limit="2Gi", restarted={2: (s.ago(days=1, hours=20, minutes=4), "Error", 137)})
    docs = svc("document-store-gateway", "2.0.9", 3, 280, 33, 5.1)
    addr = svc("address-verifier", "1.7.2", 2, 190, 18, 4.4, cpu="100m", memory="256Mi",
               limit="512Mi")
    sftp = svc("print-house-sftp", "0.9.4", 1, 75, 12, 5.8, cpu="50m", memory="128Mi",
               limit="256Mi", port=2222)
    previews = svc("statement-preview", "1.2.0", 3, 540, 9, 2.2)
    notifier = svc("statement-notifier", "1.4.3", 2, 160, 15, 4.8, cpu="100m",
                   memory="256Mi", limit="512Mi")
    letters = svc("member-letters-worker", "0.6.1", 2, 320, 6, 3.3)
    assert len(apis + docs + addr + sftp + previews + notifier + letters) == 17
    chatter(s, apis, "statement-api", "statement-api", [
        ("info", "GET /v1/members/4410923/statements/2026 200", {"http.response.status_code":
                                                                 200}),
        ("info", "GET /v1/members/1183302/statements 200", {"http.response.status_code": 200}),
        ("warn", "GET /v1/members/0000000/statements 404: unknown member",
         {"http.response.status_code": 404}),
    ], 60)
    chatter(s, previews, "statement-preview", "statement-preview", [
        ("info", "preview rendered for member 3391201 (4 pages, 310ms)", {}),
        ("warn", "preview cache evicted 120 entries (max 5000)", {}),
    ], 30)
    chatter(s, addr, "address-verifier", "address-verifier", [
        ("warn", "address of member 2291840 not verifiable (street 'Am Anger 3a' unknown in "
         "PLZ 99084), flagged for manual check", {}),
        ("info", "verified 250 addresses in 1.2s", {}),
    ], 24)

    # ---- the Job
    t_j = NOW - timedelta(minutes=71, seconds=49)  # 08:02:11
    labels = {"app.kubernetes.io/name": "statement-renderer",
              "app.kubernetes.io/part-of": "member-statements"}
    juid = c.uid("Job", NS, JOB)
    jl = {"batch.kubernetes.io/controller-uid": juid, "batch.kubernetes.io/job-name": JOB,
          "controller-uid": juid, "job-name": JOB}
    renderer = Ctr("statement-renderer", f"{REG}/statement-renderer:2026.12.0", port=None,
                   requests={"cpu": "1", "memory": "2Gi"}, limits={"memory": "3Gi"},
                   args=["render", "--year=2026", "--batch=$(JOB_COMPLETION_INDEX)",
                         f"--batches={BATCHES}", "--out=cos://statements-2026/batches"],
                   env={"STATEMENT_API": "http://statement-api.member-statements.svc",
                        "FONTS_DIR": "/usr/share/fonts/corporate"})
    tpl = Template([renderer], service_account="statement-renderer",
                   labels={**labels, **jl})
    spec_tpl = {"metadata": {"labels": dict(labels)}, "spec": {
        **tpl.spec(), "restartPolicy": "Never"}}
    job = c.add({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": c.meta("Job", JOB, NS, t_j, {**labels, **jl},
                           annotations={"batch.kubernetes.io/job-tracking": "",
                                        "vorsorgekasse.de/started-by": "ops-runbook RB-114"},
                           generation=1),
        "spec": {"backoffLimit": 6, "completionMode": "Indexed", "completions": BATCHES,
                 "manualSelector": False, "parallelism": PARALLEL,
                 "podReplacementPolicy": "TerminatingOrFailed",
                 "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": juid}},
                 "suspend": False, "ttlSecondsAfterFinished": 86400, "template": spec_tpl},
        "status": {}})
    work = Workload(job, tpl, PARALLEL)

    # three lanes: a slot frees when a render pod completes, the next index takes it
    lanes = [t_j + timedelta(seconds=0.4 + 0.3 * k) for k in range(3)]
    index = 0
    done: list[tuple[int, datetime, datetime, datetime]] = []  # index, created, start, end
    active: list[tuple[int, datetime, datetime]] = []
    while True:
        k = min(range(3), key=lambda x: lanes[x])
        born = lanes[k]
        if born >= NOW:
            break
        start = born + timedelta(seconds=s.rng.uniform(2.2, 4.5))
        end = start + timedelta(seconds=s.rng.uniform(545, 655))
        if end >= NOW:
            active.append((index, born, start))
            lanes[k] = datetime.max.replace(tzinfo=NOW.tzinfo)
        else:
            done.append((index, born, start, end))
            lanes[k] = end + timedelta(seconds=s.rng.uniform(1.1, 2.4))
        index += 1
        if all(lane.year == datetime.max.year for lane in lanes):
            break
    render_pods: list[tuple[Obj, int, datetime, datetime | None]] = []
    for i, (idx, born, start, end) in enumerate(done):
        name = f"{JOB}-{idx}-{c.token(5)}"
        pod = c.pod(work, None, node=nodes[i % 3], created=born, name=name,
                    phase="Succeeded", statuses={"statement-renderer": {
                        "state": ended("Completed", 0, start, end), "ready": False,
                        "started": False, "restartCount": 0, "lastState": {}}})
        for cond in ("Ready", "ContainersReady"):
            set_condition(pod, cond, status="False", reason="PodCompleted", message=None,
                          lastTransitionTime=iso(end + timedelta(seconds=1)))
        set_condition(pod, "PodReadyToStartContainers", status="False",
                      lastTransitionTime=iso(end + timedelta(seconds=2)))
        render_pods.append((pod, idx, start, end))
    for i, (idx, born, start) in enumerate(active):
        name = f"{JOB}-{idx}-{c.token(5)}"
        pod = c.pod(work, None, node=nodes[(i + 1) % 3], created=born, name=name,
                    statuses={"statement-renderer": running(start)})
        render_pods.append((pod, idx, start, None))
    for pod, idx, _, _ in render_pods:
        meta = pod["metadata"]
        meta["generateName"] = f"{JOB}-{idx}-"
        meta["labels"]["batch.kubernetes.io/job-completion-index"] = str(idx)
        meta["annotations"] = {"batch.kubernetes.io/job-completion-index": str(idx),
                               "batch.kubernetes.io/job-tracking": ""}
        pod["spec"]["restartPolicy"] = "Never"
        pod["spec"]["hostname"] = f"{JOB}-{idx}"
        env = pod["spec"]["containers"][0].setdefault("env", [])
        env.insert(0, {"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
            "apiVersion": "v1",
            "fieldPath": "metadata.labels['batch.kubernetes.io/job-completion-index']"}}})
    job["status"] = {"active": len(active), "completedIndexes": f"0-{len(done) - 1}"
                     if done else "", "ready": len(active), "startTime": iso(t_j),
                     "succeeded": len(done), "terminating": 0, "uncountedTerminatedPods": {}}

    # the job controller's events (only those updated within the hour survive)
    hour = NOW - timedelta(hours=1)
    refused_first = t_j + timedelta(seconds=1.3)
    refused = int((NOW - refused_first).total_seconds() / 13.5)
    last_idx = max(i for i, _, _ in active) + 1
    c.event(job, "FailedCreate", f"(combined from similar events): Error creating: pods "
            f"\"{JOB}-{last_idx}-{c.token(5)}\" is forbidden: exceeded quota: {QUOTA}, "
            "requested: pods=1, used: pods=20, limited: pods=20", first=refused_first,
            last=NOW - timedelta(seconds=s.rng.uniform(2, 12)), count=refused,
            type_="Warning", component="job-controller")
    for pod, _, start, _ in render_pods:
        born = datetime.fromisoformat(pod["metadata"]["creationTimestamp"].replace("Z",
                                                                                   "+00:00"))
        if born >= hour:
            c.event(job, "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}",
                    first=born, component="job-controller")
            c.event(pod, "Scheduled", f"Successfully assigned {NS}/{pod['metadata']['name']} "
                    f"to {pod['spec']['nodeName']}", first=born, component="default-scheduler",
                    host="")
            for reason, msg, off in (
                    ("Pulled", f'Container image "{renderer.image}" already present on '
                     "machine", 0.5),
                    ("Created", "Created container: statement-renderer", 0.2),
                    ("Started", "Started container statement-renderer", 0.0)):
                c.event(pod, reason, msg, first=start - timedelta(seconds=off),
                        field_path="spec.containers{statement-renderer}")

    # what the renderers wrote
    for pod, idx, start, finish in render_pods:
        name = pod["metadata"]["name"]
        where = pod["spec"]["nodeName"]
        members = s.rng.randrange(4700, 5200)
        stop = finish or NOW
        t = start
        steps = [(0.4, "info", f"statement-renderer 2026.12.0 batch {idx}/{BATCHES} year 2026"),
                 (1.9, "info", f"fetched {members} members of batch {idx} from statement-api"),
                 (2.3, "info", "loaded templates benefit-statement-2026-v3 (de, en), fonts "
                  "from /usr/share/fonts/corporate")]
        for off, level, msg in steps:
            s.logs.add(t + timedelta(seconds=off), level, msg, namespace=NS, pod=name,
                       container="statement-renderer", service="statement-renderer",
                       node=where)
        t = start + timedelta(seconds=40)
        n = 0
        while t < stop - timedelta(seconds=15):
            n += 500
            s.logs.add(t, "info", f"batch {idx}: rendered {min(n, members)}/{members} "
                       "statements", namespace=NS, pod=name, container="statement-renderer",
                       service="statement-renderer", node=where)
            if s.rng.random() < 0.5:
                s.logs.add(t + timedelta(seconds=s.rng.uniform(1, 30)), "warn",
                           s.rng.choice([
                               "font 'Frutiger LT 55 Roman' not embeddable, substituting "
                               "'Liberation Sans'",
                               f"member {s.rng.randrange(10**6, 10**7)} has no postal address, "
                               "statement goes to the portal only",
                               "table 'Anwartschaften' split across pages 2-3"]),
                           namespace=NS, pod=name, container="statement-renderer",
                           service="statement-renderer", node=where)
            t += timedelta(seconds=s.rng.uniform(55, 70))
        if finish:
            s.logs.add(finish - timedelta(seconds=2.1), "info", f"batch {idx}: uploaded "
                       f"{members} PDFs to cos://statements-2026/batches/{idx:03d}/ "
                       f"({s.rng.uniform(380, 460):.0f} MiB)", namespace=NS, pod=name,
                       container="statement-renderer", service="statement-renderer",
                       node=where)
        app_counter(s, "statements_rendered_total", {"namespace": NS, "pod": name},
                    [t_ for t_ in s.times if start.timestamp() + 20 <= t_ <= stop.timestamp()],
                    partial(_per_second, members / 600.0), "Statements rendered by this pod.",
                    start=0)

    # ---- kube-state-metrics: the Job, the quota
    jlabels = {"namespace": NS, "job_name": JOB}
    since_job = [t for t in s.times if t >= t_j.timestamp() + 15]
    ends = sorted(e.timestamp() for _, _, _, e in done)
    gauge(s, "kube_job_spec_parallelism", jlabels, lambda t: float(PARALLEL),
          "The maximum desired number of pods the job should run at any given time.",
          times=since_job)
    gauge(s, "kube_job_spec_completions", jlabels, lambda t: float(BATCHES),
          "The desired number of successfully finished pods the job should be run with.",
          times=since_job)
    gauge(s, "kube_job_status_active", jlabels, lambda t: 3.0,
          "The number of actively running pods.", times=since_job)
    gauge(s, "kube_job_status_succeeded", jlabels,
          lambda t: float(sum(1 for e in ends if e <= t)),
          "The number of pods which reached Phase Succeeded.", times=since_job)
    for kind, value in (("hard", lambda t: 20.0),
                        ("used", lambda t: 17.0 if t < t_j.timestamp() else 20.0)):
        gauge(s, "kube_resourcequota", {"namespace": NS, "resourcequota": QUOTA,
                                        "resource": "pods", "type": kind}, value,
              "Information about resource quota.")
    gauge(s, "kube_resourcequota", {"namespace": NS, "resourcequota": QUOTA,
                                    "resource": "requests.cpu", "type": "used"},
          lambda t: 4.45 if t < t_j.timestamp() else 7.45,
          "Information about resource quota.")

    # ---- other namespaces
    portal = Ctr("portal-web", f"{REG}/portal-web:3.18.0", port=8080,
                 requests={"cpu": "200m", "memory": "384Mi"}, limits={"memory": "768Mi"},
                 readiness=http_probe("/health", "http", delay=5, timeout=1))
    _, portals = steady(s, "member-portal", "portal-web", [portal], nodes=nodes, replicas=2,
                        revision=102, rollout=s.ago(days=1, hours=2, minutes=30))
    quiet(s, portals, "portal-web", 250)
    chatter(s, portals, "portal-web", "portal-web", [
        ("info", "GET /mein-konto/dokumente 200", {"http.response.status_code": 200}),
        ("warn", "GET /wp-login.php 404", {"http.response.status_code": 404}),
        ("warn", "login failed for member 7719024: wrong password (3rd attempt)", {}),
    ], 40)
    blip = NOW - timedelta(minutes=19, seconds=5)
    c.event(portals[1], "Unhealthy", f'Readiness probe failed: Get "http://'
            f'{portals[1]["status"]["podIP"]}:8080/health": context deadline exceeded '
            "(Client.Timeout exceeded while awaiting headers)", first=blip, type_="Warning",
            field_path="spec.containers{portal-web}")
    calico = Ctr("calico-node", "icr.io/ibm/calico/node:v3.29.2", port=None,
                 requests={"cpu": "250m", "memory": "80Mi"}, limits={})
    _, calicos = daemonset(s, "kube-system", "calico-node", [calico], node_list=nodes,
                           generation=21, since=s.ago(days=6.1),
                           labels={"k8s-app": "calico-node"})
    chatter(s, calicos, "calico-node", "calico-node", [
        ("info", "[INFO][83] felix/summary.go 100: Summarising 11 dataplane reconciliation loops "
         "over 1m2.4s: avg=6ms longest=21ms (resync-filter-v4)", {}),
        ("warn", "[WARNING][83] felix/ipip_mgr.go 112: Failed to add IPIP tunnel device error="
         "exit status 2", {}),
    ], 16)
    log_pod(s, sftp[0], "print-house-sftp", "print-house-sftp", [
        ("info", "sftp session from 203.0.113.41 (print house) listed /outbox", {}),
    ], 5)
    return s


def _per_second(rate: float, t: int) -> float:
    return rate
