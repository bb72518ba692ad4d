"""Bike share: riders cannot unlock bikes at some docks. The platform team is moving the
AKS cluster's user workloads to a new arm64 node pool (Cobalt 100, `cobalt`, added two days
ago) and at 09:20 drained two of the four amd64 nodes of the old `apps` pool. Three of
dock-unlock's six pods were evicted and their replacements scheduled onto cobalt nodes: the
image dock-unlock:5.3.0 is built for linux/amd64 only, so containerd finds no arm64 entry
("no match for platform in manifest") and the pods sit in ImagePullBackOff. The Deployment
pins no architecture (no nodeSelector or affinity on kubernetes.io/arch), which is its
fault. The three remaining pods carry double load: slower unlocks and a few 503s. Red
herrings: ride-pricing 8.2.0 rolled out 34 min ago onto the cobalt pool (plausible
alternative, multi-arch, healthy), an old OOM restart of trip-ledger, MQTT broker
reconnect warnings."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gauge, set_times
from tests.data.holdout2._generator.kit import cpu_seconds, deleted, deploy, requests
from tests.data.holdout3._generator.kit3 import (
    chatter,
    ksm_deployment,
    log_pod,
    namespaces,
    quiet,
    steady,
)
from tests.data.holdout4._generator.kit4 import ramp
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, http_probe, waiting

from .kit8 import Incident, NodeKind, provider_nodes, stamp

ID = "dock-unlocks-hanging"
NOW = datetime.fromisoformat("2028-01-18T10:06:00+00:00")
NS = "bikeshare"
ACR = "crmobilityprod.azurecr.io"
IMAGE = f"{ACR}/dock/dock-unlock:5.3.0"
PULL_ERR = (f'Failed to pull image "{IMAGE}": rpc error: code = NotFound desc = failed to pull '
            f'and unpack image "{IMAGE}": no match for platform in manifest: not found')


def build() -> Incident:
    s = Incident(
        id=ID, title="Bike dock unlocks hanging", now=NOW,
        report="""\
Riders are stuck on "Unlocking..." in the app at a lot of stations since around 09:20-09:30,
sometimes it works on the second try. Support has 40 tickets already. Can someone check
the bikeshare backend?
""",
        truth=truth(
            "image_pull", "Deployment", NS, "dock-unlock",
            ["ImagePullBackOff", "no match for platform in manifest",
             "kubernetes.io/arch: arm64", "dock-unlock:5.3.0"],
            "Three dock-unlock pods, rescheduled at 09:20 when two amd64 nodes of the apps "
            "pool were drained, landed on the new arm64 cobalt pool and cannot pull "
            "dock-unlock:5.3.0, which is published for linux/amd64 only (no match for "
            "platform in manifest). Pin dock-unlock to kubernetes.io/arch=amd64 with a "
            "nodeSelector (or build and push a multi-arch image) before draining further "
            "amd64 nodes; the remaining three pods are overloaded."))
    set_times(s, 2.0, 60)
    c = s.cluster
    namespaces(s, {"default": 610, "kube-system": 610, NS: 575, "rides": 575,
                   "messaging": 540})
    amd = NodeKind("Standard_D8ds_v5", "8", "32864812Ki", "7820m", "28373548Ki",
                   "v1.31.3", "5.15.173.1-1.cm2", "CBL-Mariner/Linux",
                   runtime="containerd://1.6.26", pods="250")
    arm = NodeKind("Standard_D8ps_v6", "8", "32864812Ki", "7820m", "28373548Ki",
                   "v1.31.3", "6.6.57.1-2.azl3", "Microsoft Azure Linux 3.0",
                   runtime="containerd://2.0.0", pods="250", arch="arm64")
    apps = provider_nodes(s, "aks", 4, amd, days=6.4, group="apps")
    cobalt = provider_nodes(s, "aks", 3, arm, days=2.1, group="cobalt", first=8)
    drain = NOW - timedelta(minutes=46, seconds=12)
    for i, n in enumerate(apps[2:]):
        n["spec"]["unschedulable"] = True
        n["spec"]["taints"] = [{"effect": "NoSchedule",
                                "key": "node.kubernetes.io/unschedulable",
                                "timeAdded": stamp(drain + timedelta(seconds=41 * i))}]
        c.event(n, "NodeNotSchedulable", f"Node {n['metadata']['name']} status is now: "
                "NodeNotSchedulable", first=drain + timedelta(seconds=41 * i),
                host=n["metadata"]["name"])

    # ---- dock-unlock: three pods left on amd64, three stuck on arm64
    ctr = Ctr("dock-unlock", IMAGE, port=8080, requests={"cpu": "500m", "memory": "512Mi"},
              limits={"memory": "768Mi"},
              env={"MQTT_URL": "mqtts://dock-broker.messaging.svc:8883",
                   "UNLOCK_ACK_TIMEOUT": "6s", "LEDGER_URL": "http://trip-ledger.rides.svc"},
              readiness=http_probe("/health/ready", delay=5, period=10),
              liveness=http_probe("/health/live", delay=20, period=15, timeout=3))
    rollout = s.ago(days=5, hours=4, minutes=12)
    moved = [drain + timedelta(seconds=3 + 41 * (i // 2) + i) for i in range(3)]

    def born(i: int) -> datetime:
        return rollout + timedelta(seconds=9 + 17 * i) if i < 3 else moved[i - 3]

    def states(i: int, name: str, started: datetime) -> dict[str, dict]:
        if i < 3:
            return {}
        if i == 4:
            return {"dock-unlock": waiting("ErrImagePull", PULL_ERR)}
        return {"dock-unlock": waiting("ImagePullBackOff", f'Back-off pulling image "{IMAGE}"')}
    work, pods = deploy(s, NS, "dock-unlock", [ctr], replicas=6,
                        nodes=[apps[0], apps[1], apps[0], *cobalt], revision=31,
                        rollout=rollout, born=born, statuses=states, service=80,
                        annotations={"prometheus.io/scrape": "true",
                                     "prometheus.io/port": "8080"},
                        old=(30, s.ago(days=12), [Ctr("dock-unlock",
                                                     f"{ACR}/dock/dock-unlock:5.2.4")]))
    rs = work.revisions[-1]
    ghosts = [deleted(s, NS, f"{rs['metadata']['name']}-{c.token(5)}",
                      apps[2 + i // 2]["metadata"]["name"], born(i), moved[i] -
                      timedelta(seconds=2)) for i in range(3)]
    field_ = "spec.containers{dock-unlock}"
    for i, pod in enumerate(pods[3:]):
        meta = pod["metadata"]
        created = moved[i]
        c.event(rs, "SuccessfulCreate", f"Created pod: {meta['name']}", first=created,
                component="replicaset-controller", host="")
        c.event(pod, "Scheduled", f"Successfully assigned {NS}/{meta['name']} to "
                f"{pod['spec']['nodeName']}", first=created + timedelta(seconds=0.3),
                component="default-scheduler", host="")
        first = created + timedelta(seconds=2.1)
        tries = 12 + (i % 2)
        last_try = NOW - timedelta(seconds=s.rng.randrange(50, 240))
        c.event(pod, "Pulling", f'Pulling image "{IMAGE}"', first=first, last=last_try,
                count=tries, field_path=field_)
        c.event(pod, "Failed", PULL_ERR, first=first + timedelta(seconds=0.9),
                last=last_try + timedelta(seconds=0.9), count=tries, type_="Warning",
                field_path=field_)
        c.event(pod, "Failed", "Error: ErrImagePull", first=first + timedelta(seconds=0.9),
                last=last_try + timedelta(seconds=0.9), count=tries, type_="Warning",
                field_path=field_)
        c.event(pod, "BackOff", f'Back-off pulling image "{IMAGE}"',
                first=first + timedelta(seconds=1.6), last=NOW - timedelta(seconds=6 + i),
                count=236 + 5 * i, field_path=field_)
        c.event(pod, "Failed", "Error: ImagePullBackOff", first=first + timedelta(seconds=1.6),
                last=NOW - timedelta(seconds=6 + i), count=236 + 5 * i, type_="Warning",
                field_path=field_)
        gauge(s, "kube_pod_container_status_waiting_reason",
              {"namespace": NS, "pod": meta["name"], "container": "dock-unlock",
               "reason": "ImagePullBackOff"}, lambda t: 1.0,
              "Describes the reason the container is currently in waiting state.",
              times=[t for t in s.times if t >= first.timestamp() + 40])
    ksm_deployment(s, NS, "dock-unlock", lambda t: 6.0,
                   lambda t: 6.0 if t < drain.timestamp() else 3.0,
                   lambda t: 0.0 if t < drain.timestamp() else 3.0)

    def load(t: int) -> float:  # share of the unlock traffic one running pod takes
        return 1.0 + ramp(t, drain, 1)

    def lat(t: int) -> float:
        return 0.21 + 0.9 * ramp(t, drain + timedelta(minutes=1), 4)

    for pod in pods[:3]:
        quiet(s, [pod], "dock-unlock", 405)
        cpu_seconds(s, pod, "dock-unlock", lambda t: 0.24 * load(t) + 0.1 * (load(t) - 1))
        requests(s, pod, "dock-unlock", rps=lambda t: 4.2 * load(t), codes={
            "200": lambda t: 0.996 - 0.07 * (load(t) - 1),
            "503": lambda t: 0.001 + 0.07 * (load(t) - 1),
            "409": lambda t: 0.003}, median=lat, buckets=(0.25, 1.0, 2.5, 6.0))
    for ghost in ghosts:
        log_pod(s, ghost, "dock-unlock", "dock-unlock", [
            ("info", "unlock dock ST-0417/07 bike 88213 acked in 0.22s", {}),
            ("info", "unlock dock ST-1102/12 bike 40971 acked in 0.19s", {}),
        ], 22)
        requests(s, ghost, "dock-unlock", rps=lambda t: 4.2, codes={
            "200": lambda t: 0.996, "503": lambda t: 0.001, "409": lambda t: 0.003})
    chatter(s, pods[:3], "dock-unlock", "dock-unlock", [
        ("info", "unlock dock ST-0417/07 bike 88213 acked in 0.22s", {}),
        ("info", "unlock dock ST-2230/03 bike 10455 acked in 0.31s", {}),
        ("warn", "dock ST-0881/11 reported lock jammed, unlock refused (409)",
         {"http.response.status_code": 409}),
    ], 60, end=drain)
    chatter(s, pods[:3], "dock-unlock", "dock-unlock", [
        ("info", "unlock dock ST-1550/02 bike 77120 acked in 1.84s", {}),
        ("warn", "unlock worker pool saturated (64/64 in flight), queueing request", {}),
        ("warn", "unlock dock ST-0310/09 ack took 5.62s (timeout 6s)", {}),
        ("error", "POST /v2/unlocks 503 no unlock worker available within 2s",
         {"http.response.status_code": 503}),
        ("info", "unlock dock ST-0417/05 bike 31008 acked in 0.97s", {}),
    ], 150, start=drain + timedelta(minutes=1))

    # ---- red herrings
    roll = NOW - timedelta(minutes=34)
    price = Ctr("ride-pricing", f"{ACR}/rides/ride-pricing:8.2.0", port=8080,
                requests={"cpu": "250m", "memory": "384Mi"}, limits={"memory": "512Mi"},
                readiness=http_probe("/readyz"))
    _, prices = steady(s, "rides", "ride-pricing", [price], nodes=cobalt, replicas=3,
                       revision=64, rollout=roll, offset=1,
                       old=(63, s.ago(days=8), [Ctr("ride-pricing",
                                                    f"{ACR}/rides/ride-pricing:8.1.3")]))
    for pod in prices:
        quiet(s, [pod], "ride-pricing", 260)
        requests(s, pod, "ride-pricing", rps=lambda t: 2.3, codes={
            "200": lambda t: 0.998, "500": lambda t: 0.002})
    chatter(s, prices, "ride-pricing", "ride-pricing", [
        ("info", "ride-pricing 8.2.0 started (linux/arm64, go1.23.4)", {}),
        ("info", "tariff table zone-berlin-ring-a reloaded (214 rules)", {}),
        ("warn", "surge multiplier clamped to 2.5 for zone friedrichshain-03", {}),
    ], 45, start=roll)
    led = Ctr("trip-ledger", f"{ACR}/rides/trip-ledger:3.9.1", port=8080,
              requests={"cpu": "200m", "memory": "512Mi"}, limits={"memory": "640Mi"})
    _, leds = steady(s, "rides", "trip-ledger", [led], nodes=apps[:2], replicas=2,
                     revision=19, rollout=s.ago(days=3, hours=6),
                     restarted={0: (s.ago(hours=27), "OOMKilled", 137)})
    quiet(s, leds, "trip-ledger", 470)
    chatter(s, leds, "trip-ledger", "trip-ledger", [
        ("info", "trip T-9918221 closed: 14 min, 2.10 EUR", {}),
        ("info", "trip T-9918240 opened at ST-0417", {}),
    ], 50)
    broker = Ctr("emqx", "docker.io/emqx/emqx:5.8.4", port=8883, port_name="mqtts",
                 requests={"cpu": "500m", "memory": "1Gi"}, limits={"memory": "2Gi"})
    _, brokers = steady(s, "messaging", "dock-broker", [broker], nodes=cobalt, replicas=3,
                        revision=7, rollout=s.ago(days=1, hours=22), service=8883,
                        target="mqtts")
    quiet(s, brokers, "emqx", 690)
    chatter(s, brokers, "emqx", "dock-broker", [
        ("warn", "clientid=dock-ST-0881 socket_closed: keepalive_timeout, reconnecting", {}),
        ("info", "clientid=dock-ST-2230 connected, clean_start=false", {}),
        ("warn", "clientid=dock-ST-1904 socket_closed: tcp_closed", {}),
    ], 70)
    return s
