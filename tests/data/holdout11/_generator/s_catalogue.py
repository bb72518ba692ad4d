"""Public library network: catalogue search returns errors or holdings missing for some
branches. At 11:27 node ip-10-58-...-.eu-north-1 stopped posting status (kubelet gone
silent: Ready Unknown, "Kubelet stopped posting node status.", unreachable taints). Five
minutes later the taint manager marked its pods for deletion. catalogue-api got a
replacement pod, but the StatefulSet member holdings-index-2 stays Terminating on the
unreachable node and is never recreated, so the shards it held are unassigned and search
fails for the branches on them. The node is the culprit. Red herrings: cover-images rolled
out 71 min ago in the same namespace, an old OOM restart of holdings-index-0 four days ago,
slow LDAP bind warnings of patron-auth, and a readiness blip of the events calendar in
another namespace."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gauge
from tests.data.holdout2._generator.kit import (
    cpu_seconds,
    deploy,
    drift,
    requests,
    start_events,
    statefulset,
    storage_class,
    working_set,
)
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.scenario_tools.common import kube_system, node_conditions, truth
from tests.scenario_tools.kube import Ctr, Template, ended, http_probe, iso, running
from tests.scenario_tools.parts import readiness_blip

from .kit11 import Incident, apps_pool, secs

ID = "library-catalogue-search-gaps"
NOW = datetime.fromisoformat("2028-05-09T11:54:00+00:00")
NS = "catalogue"
REG = "660318274455.dkr.ecr.eu-north-1.amazonaws.com/biblio"
DOWN = NOW - timedelta(minutes=27, seconds=31)
EVICT = DOWN + timedelta(seconds=300)


def build() -> Incident:
    s = Incident(
        id=ID, title="Library catalogue search failing for some branches", now=NOW,
        report="""\
Branch staff say the online catalogue shows "Search is temporarily unavailable" for a lot
of searches since before noon, and when it works some branches' holdings are missing
(Nordhavn and Lindholm show no copies at all). Started maybe half an hour ago. Please
check the catalogue.
""",
        truth=truth("node_failure", "Node", "", "", ["NodeNotReady",
                    "Kubelet stopped posting node status.", "node.kubernetes.io/unreachable",
                    "holdings-index-2"], ""))
    namespaces(s, {"default": 700, "kube-system": 700, NS: 612, "patrons": 612,
                   "events-web": 280})
    nodes = apps_pool(s, 4, region="eu-north-1", subnet=58, pool="workers-r7i",
                      instance="r7i.xlarge", cpu="4", memory="32315892Ki",
                      alloc_cpu="3920m", alloc_memory="31299060Ki", days=5.7)
    bad = nodes[2]
    name = bad["metadata"]["name"]
    s.truth["culprit"]["name"] = name
    s.truth["fix"] = (f"Node {name} went NotReady at {iso(DOWN)} (kubelet stopped posting "
                      "status) and holdings-index-2 is stuck Terminating on it, so its shards "
                      "are unassigned. Check the instance (EC2 status checks, console log); "
                      "if it cannot be recovered, terminate it or force-delete "
                      "holdings-index-2 so the StatefulSet recreates it on a healthy node "
                      "and the shards recover.")
    beat = DOWN - timedelta(seconds=12)
    for cond in bad["status"]["conditions"]:
        cond.update({"status": "Unknown", "reason": "NodeStatusUnknown",
                     "message": "Kubelet stopped posting node status.",
                     "lastHeartbeatTime": iso(beat), "lastTransitionTime": iso(DOWN)})
    bad["spec"]["taints"] = [
        {"effect": "NoSchedule", "key": "node.kubernetes.io/unreachable",
         "timeAdded": iso(DOWN + timedelta(seconds=1))},
        {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable",
         "timeAdded": iso(DOWN + timedelta(seconds=1))}]
    c = s.cluster
    c.event(bad, "NodeNotReady", f"Node {name} status is now: NodeNotReady", first=DOWN,
            component="node-controller", host="")
    kube = kube_system(s, nodes)
    storage_class(s, "gp3", "ebs.csi.aws.com", {"type": "gp3", "fsType": "ext4"},
                  created=s.ago(days=700), default=True)

    # ---- holdings-index: the search cluster, one member on the lost node
    os_ctr = Ctr("opensearch", "public.ecr.aws/opensearchproject/opensearch:2.17.1",
                 port=9200, requests={"cpu": "1", "memory": "8Gi"},
                 limits={"memory": "8Gi"},
                 env={"cluster.name": "holdings", "OPENSEARCH_JAVA_OPTS": "-Xms4g -Xmx4g",
                      "discovery.seed_hosts": "holdings-index-headless"},
                 readiness=http_probe("/_cluster/health?local=true", delay=20, period=10,
                                      timeout=3),
                 mounts=[{"name": "data", "mountPath": "/usr/share/opensearch/data"}])
    tpl = Template([os_ctr], service_account="holdings-index")
    created = s.ago(days=212)
    started = [s.ago(days=5, hours=3, minutes=40 - 6 * i) for i in range(3)]

    def idx_states(i: int, start: datetime) -> dict:
        if i == 0:
            oom = s.ago(days=4, hours=1, minutes=12)
            return {"opensearch": running(oom + timedelta(seconds=21), restarts=1,
                                          last=ended("OOMKilled", 137, started[0], oom))}
        return {"opensearch": running(started[i])}
    _, members = statefulset(
        s, NS, "holdings-index", tpl, replicas=3, nodes=[nodes[0], nodes[1], bad],
        revisions=[(4, s.ago(days=5, hours=3, minutes=41), tpl)], pod_revision=lambda i: 4,
        born=lambda i: started[i] - timedelta(seconds=7), statuses=idx_states,
        claim=("data", "200Gi", "gp3"), created=created, service="holdings-index-headless")
    lost = members[2]
    c.service(NS, "holdings-index-headless", {"app.kubernetes.io/name": "holdings-index"},
              port=9200, target="http", created=created)

    # ---- catalogue-api: one pod on the lost node, replaced after the eviction
    api_ctr = Ctr("catalogue-api", f"{REG}/catalogue-api:6.8.2", port=8080,
                  requests={"cpu": "300m", "memory": "512Mi"}, limits={"memory": "768Mi"},
                  env={"SEARCH_URL": "http://holdings-index-headless:9200",
                       "SEARCH_TIMEOUT_MS": "2500"},
                  readiness=http_probe("/ready"), liveness=http_probe("/live", delay=15))
    api_at = s.ago(days=3, hours=22)
    api, apis = deploy(s, NS, "catalogue-api", [api_ctr], replicas=3,
                       nodes=[nodes[0], nodes[1], bad], revision=41, rollout=api_at)
    rs = api.revisions[-1]
    fresh_at = secs(EVICT, 0.6)
    fresh = c.pod(api, rs, node=nodes[3], created=fresh_at,
                  statuses={"catalogue-api": running(secs(fresh_at, 9))})
    stuck = [lost, apis[2]]
    for pod in stuck:
        pod["metadata"]["deletionTimestamp"] = iso(EVICT + timedelta(seconds=30))
        pod["metadata"]["deletionGracePeriodSeconds"] = 30
        for cond in pod["status"]["conditions"]:
            if cond["type"] == "Ready":
                cond.update({"status": "False", "lastTransitionTime": iso(DOWN +
                                                                           timedelta(seconds=2))})
                cond.pop("reason", None)
                cond.pop("message", None)
        meta = pod["metadata"]
        c.event(pod, "NodeNotReady", "Node is not ready", first=DOWN + timedelta(seconds=2),
                type_="Warning", component="node-controller", host="")
        c.event(pod, "TaintManagerEviction", f"Marking for deletion Pod {NS}/{meta['name']}",
                first=EVICT, component="taint-eviction-controller", host="")
    for pod in kube:
        if pod["spec"].get("nodeName") == name:
            pod["status"]["conditions"][2].update({"status": "False", "lastTransitionTime":
                                                   iso(DOWN + timedelta(seconds=2))})
            c.event(pod, "NodeNotReady", "Node is not ready", first=DOWN + timedelta(
                seconds=2), type_="Warning", component="node-controller", host="")
    c.event(rs, "SuccessfulCreate", f"Created pod: {fresh['metadata']['name']}",
            first=fresh_at, component="replicaset-controller", host="")
    start_events(s, fresh, scheduled=fresh_at + timedelta(seconds=0.4),
                 started=secs(fresh_at, 9))

    # ---- metrics
    cut = DOWN.timestamp()
    node_conditions(s, nodes, {(name, "Ready"): lambda t: None if t >= cut else True})
    for pod in members:
        times = [t for t in s.times if t < cut] if pod is lost else None
        working_set(s, pod, "opensearch", drift(s, 6100 * 1024 * 1024), times=times)
        cpu_seconds(s, pod, "opensearch", lambda t: 0.7, times=times)
    gauge(s, "kube_statefulset_status_replicas_ready", {"namespace": NS, "statefulset":
                                                        "holdings-index"},
          lambda t: 3.0 if t < cut + 40 else 2.0, "The number of ready replicas per "
          "StatefulSet.")
    gauge(s, "kube_statefulset_replicas", {"namespace": NS, "statefulset": "holdings-index"},
          lambda t: 3.0, "Number of desired pods for a StatefulSet.")

    def err(t: int) -> float:
        return 0.002 if t < cut + 50 else 0.31
    for pod in [*apis, fresh]:
        times = [t for t in s.times if t < cut] if pod is apis[2] else None
        requests(s, pod, "catalogue-api", rps=lambda t: 6.5, times=times, codes={
            "200": lambda t: 0.99 - err(t), "404": lambda t: 0.008, "503": err})
        working_set(s, pod, "catalogue-api", drift(s, 420 * 1024 * 1024), times=times)

    # ---- logs
    ok = [("info", "GET /search?q=moomin&branch=all 200 in 84ms (hits=212)", {}),
          ("info", "GET /search?q=dune+herbert&branch=hovedbibliotek 200 in 61ms (hits=37)",
           {}),
          ("info", "GET /records/b2291837/holdings 200 in 22ms", {})]
    bad_lines = [
        ("error", "search failed: 503 from holdings-index: search_phase_execution_exception "
         "(all shards failed) index=holdings-branch-nordhavn",
         {"http.response.status_code": 503, "error.type": "SearchPhaseExecutionException"}),
        ("warn", "partial search result: 4 of 12 shards failed, returning 129 hits "
         "(q=knausgaard)", {}),
        ("error", "GET /search?q=harry+potter&branch=lindholm 503 in 2504ms",
         {"http.response.status_code": 503}),
        ("info", "GET /records/b1188204/holdings 200 in 31ms", {})]
    chatter(s, apis, "catalogue-api", "catalogue-api", ok, 120, end=DOWN)
    chatter(s, [apis[0], apis[1]], "catalogue-api", "catalogue-api", bad_lines, 140,
            start=DOWN + timedelta(seconds=50))
    chatter(s, [fresh], "catalogue-api", "catalogue-api", bad_lines, 60,
            start=fresh_at + timedelta(seconds=20))
    chatter(s, members, "opensearch", "holdings-index", [
        ("info", "[holdings-index-0] Cluster health status changed from [YELLOW] to [GREEN]",
         {}),
        ("info", "[gc][young][41890] overhead, spent [212ms] collecting in the last [1s]", {}),
    ], 40, end=DOWN)
    for k, pod in enumerate(members[:2]):
        for offset, level, text in (
                (11, "warn", "failed to ping [{holdings-index-2}]: ConnectTransportException"
                 "[[holdings-index-2][connect_timeout[30s]]"),
                (42, "info", "node-left[{holdings-index-2}{followers check retry count "
                 "exceeded}], term: 19, version: 88412, reason: NodeLeftCluster"),
                (55, "warn", "Cluster health status changed from [GREEN] to [RED] (reason: "
                 "[shards failed: unassigned primary shards holdings-branch-nordhavn[0], "
                 "holdings-branch-lindholm[1]])")):
            s.logs.add(DOWN + timedelta(seconds=offset + 0.3 * k), level, text,
                       namespace=NS, pod=pod["metadata"]["name"], container="opensearch",
                       service="holdings-index", node=pod["spec"]["nodeName"])
        chatter(s, [pod], "opensearch", "holdings-index", [
            ("warn", "unassigned shards remain: 6 (delayed allocation timeout passed, no "
             "data copy available)", {})], 8, start=DOWN + timedelta(minutes=2))

    # ---- red herrings
    cov_at = NOW - timedelta(hours=1, minutes=11)
    _, covers = steady(s, NS, "cover-images", [Ctr(
        "cover-images", f"{REG}/cover-images:3.0.4", port=8080,
        requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "384Mi"},
        readiness=http_probe("/ready"))], nodes=[nodes[0], nodes[1], nodes[3]], replicas=2,
        revision=22, rollout=cov_at, old=(21, s.ago(days=16), [Ctr(
            "cover-images", f"{REG}/cover-images:3.0.3")]))
    quiet(s, covers, "cover-images", 180)
    chatter(s, covers, "cover-images", "cover-images", [
        ("info", "cover 9788202xxxx fetched from upstream in 312ms, cached", {}),
        ("warn", "upstream cover service returned 404 for isbn 9788203364181", {}),
    ], 30)
    _, auth = steady(s, "patrons", "patron-auth", [Ctr(
        "patron-auth", f"{REG}/patron-auth:2.11.0", port=8080,
        requests={"cpu": "200m", "memory": "384Mi"}, limits={"memory": "512Mi"},
        readiness=http_probe("/ready"))], nodes=[nodes[0], nodes[1], nodes[3]], replicas=2,
        revision=15, rollout=s.ago(days=2, hours=5))
    quiet(s, auth, "patron-auth", 260)
    chatter(s, auth, "patron-auth", "patron-auth", [
        ("warn", "LDAP bind to ldaps://dc2.kommune.local took 1240ms (slow)", {}),
        ("info", "patron 2000418822 authenticated via card+pin", {}),
        ("info", "patron 2000733107 authenticated via card+pin", {}),
    ], 60)
    readiness_blip(s, "events-web", "events-calendar", f"{REG}/events-calendar:1.4.2",
                   [nodes[0], nodes[3]], minutes_ago=44)
    return s
