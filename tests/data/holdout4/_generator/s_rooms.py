"""Hotels: room-availability answers with errors since its configuration change at 16:08.
Revision 32 has the same image as revision 31; only the env from the values file changed:
RATE_PLANS_TIMEOUT_MS went from 1500 to 150 (meant as "1500" with a stray edit, the chart
renamed the key from seconds to milliseconds). rate-plans answers in 90-400 ms as always, so
a share of its calls now time out and room-availability returns 504. The previous
ReplicaSet was healthy. Red herrings: rate-plans' cache warnings, a channel-manager
neighbour with an old OOM, and CoreDNS answering slowly for an external name."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import set_times
from tests.data.holdout2._generator.kit import NodeKind, deploy, requests
from tests.data.holdout3._generator.kit3 import (
    chatter,
    ghosts,
    log_pod,
    namespaces,
    quiet,
    rolling_events,
    steady,
)
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, http_probe

from .kit4 import Incident, configmap_with, hexof, pool, uuid_of

ID = "room-search-errors"
NOW = datetime.fromisoformat("2028-01-14T16:55:00+00:00")
NS = "stays"
REG = "registry.upcloud.example/staybook"
IMAGE = f"{REG}/room-availability:6.2.0"


def _ctr(timeout: str, checksum: str) -> Ctr:
    return Ctr("room-availability", IMAGE, port=8080,
               requests={"cpu": "400m", "memory": "512Mi"}, limits={"memory": "1Gi"},
               env={"RATE_PLANS_URL": "http://rate-plans.stays.svc/v1",
                    "RATE_PLANS_TIMEOUT_MS": timeout, "INVENTORY_DB_POOL": "20",
                    "CONFIG_CHECKSUM": checksum},
               readiness=http_probe("/ready", delay=8),
               liveness=http_probe("/live", delay=20, period=20))


def build() -> Incident:
    s = Incident(
        id=ID,
        title="Room search returns errors for many hotels",
        now=NOW,
        report="""\
Since a bit after four, searching for rooms on staybook.com fails for a lot of hotels with
"Availability could not be loaded" (504s in the gateway for room-availability). Partners
report lost bookings. Nobody shipped code today as far as I know. Can you find out what is
wrong?
""",
        truth=truth(
            "bad_rollout", "Deployment", NS, "room-availability",
            ["RATE_PLANS_TIMEOUT_MS", "150", "revision 32", "timed out after 150ms"],
            "Revision 32 of room-availability (a config-only change at 16:08, same image) set "
            "RATE_PLANS_TIMEOUT_MS to 150 (was 1500), shorter than rate-plans' normal "
            "latency, so calls time out and searches return 504: roll back (kubectl rollout "
            "undo deployment/room-availability) and fix the value in the chart values."))
    set_times(s, 1.5, 60)
    namespaces(s, {"default": 520, "kube-system": 520, NS: 500, "channels": 470})
    kind = NodeKind("4xCPU-8GB", "4", "8129048Ki", "3870m", "6971928Ki", "v1.31.5",
                    "6.8.0-51-generic", "Ubuntu 24.04.1 LTS", runtime="containerd://1.7.24")

    def namer(i: int) -> tuple[str, str]:
        return f"staybook-prod-default-{hexof(s, 'g', n=5)}-{hexof(s, 'n', str(i), n=5)}", \
            f"172.24.1.{10 + i * 2}"

    nodes = pool(s, 4, kind=kind, namer=namer, days=6.3, region="de-fra1", zones=["de-fra1"],
                 labels=lambda i, n: {"uks.upcloud.com/node-group": "default",
                                      "node.kubernetes.io/instance-type": "4xCPU-8GB"},
                 provider=lambda i, n: f"upcloud:////{uuid_of(s, 'srv', n)}",
                 cidr=lambda i: f"192.168.{i}.0/24")
    change = NOW.replace(hour=16, minute=8, second=31)
    old_sum, new_sum = hexof(s, "cfg", "31", n=16), hexof(s, "cfg", "32", n=16)

    # ---- room-availability: revision 31 healthy, revision 32 (config only) errs
    def born(i: int) -> datetime:
        return change + timedelta(seconds=2 + 24 * i + s.rng.randrange(0, 4))
    work, pods = deploy(s, NS, "room-availability", [_ctr("150", new_sum)], replicas=4,
                        nodes=nodes, revision=32, rollout=change, born=born,
                        old=(31, s.ago(days=6, hours=1), [_ctr("1500", old_sum)]),
                        annotations={"checksum/config": new_sum},
                        strategy={"type": "RollingUpdate", "rollingUpdate": {
                            "maxSurge": 1, "maxUnavailable": 0}})
    old_rs, new_rs = work.revisions[0], work.revisions[-1]
    old_rs["spec"]["template"]["metadata"]["annotations"] = {"checksum/config": old_sum}
    gone = [change + timedelta(seconds=23 + 24 * i) for i in range(4)]
    old = ghosts(s, old_rs, nodes, [s.ago(days=6, hours=1) + timedelta(seconds=40 * i)
                                    for i in range(4)], gone)
    rolling_events(s, work, old_rs, new_rs, pods, old, image=IMAGE, size=0)
    configmap_with(s, NS, "room-availability-values", {
        "values.yaml": "replicaCount: 4\nimage:\n  tag: 6.2.0\nenv:\n  RATE_PLANS_URL: "
        "http://rate-plans.stays.svc/v1\n  RATE_PLANS_TIMEOUT_MS: \"150\"\n"
        "  INVENTORY_DB_POOL: \"20\"\n"}, created=s.ago(days=200),
        edited=change - timedelta(seconds=40), manager="argocd-controller")

    def ok_share(t: int) -> float:
        return 0.91 if t >= change.timestamp() else 0.997
    for pod in old:
        requests(s, pod, "room-availability", rps=lambda t: 31.0, codes={
            "200": lambda t: 0.997, "504": lambda t: 0.0006, "400": lambda t: 0.002},
            median=lambda t: 0.19, buckets=(0.1, 0.25, 0.5, 1.0))
        log_pod(s, pod, "room-availability", "room-availability", [
            ("info", "search hotel=H-40112 nights=2 guests=2: 14 offers in 212ms", {}),
            ("info", "search hotel=H-11870 nights=5 guests=3: 6 offers in 331ms", {}),
        ], 25)
    for pod in pods:
        requests(s, pod, "room-availability", rps=lambda t: 31.0, codes={
            "200": ok_share, "504": lambda t: 0.993 - ok_share(t), "400": lambda t: 0.002},
            median=lambda t: 0.14, buckets=(0.1, 0.25, 0.5, 1.0))
        quiet(s, [pod], "room-availability", 430)
    chatter(s, pods, "room-availability", "room-availability", [
        ("info", "search hotel=H-40112 nights=2 guests=2: 14 offers in 121ms", {}),
        ("error", "rate-plans call timed out after 150ms (GET http://rate-plans.stays.svc/v1/"
         "plans?hotel=H-20931&from=2028-02-03&to=2028-02-06), returning 504",
         {"http.response.status_code": 504, "error.type": "TimeoutError"}),
        ("error", "rate-plans call timed out after 150ms (GET http://rate-plans.stays.svc/v1/"
         "plans?hotel=H-77105&from=2028-01-20&to=2028-01-21), returning 504",
         {"http.response.status_code": 504, "error.type": "TimeoutError"}),
        ("info", "config: RATE_PLANS_TIMEOUT_MS=150 INVENTORY_DB_POOL=20", {}),
    ], 150)

    # ---- rate-plans: as fast (and as noisy) as ever
    rp = Ctr("rate-plans", f"{REG}/rate-plans:3.11.4", port=8080,
             requests={"cpu": "300m", "memory": "768Mi"}, limits={"memory": "1Gi"},
             readiness=http_probe("/ready"))
    _, rps = steady(s, NS, "rate-plans", [rp], nodes=nodes, replicas=3, revision=77,
                    rollout=s.ago(days=4, hours=5), offset=1)
    for pod in rps:
        quiet(s, [pod], "rate-plans", 690)
        requests(s, pod, "rate-plans", rps=lambda t: 41.0, codes={"200": lambda t: 0.999},
                 median=lambda t: 0.16, buckets=(0.1, 0.25, 0.5, 1.0))
    chatter(s, rps, "rate-plans", "rate-plans", [
        ("warn", "plan cache miss for hotel H-20931 (evicted), loading from db in 288ms", {}),
        ("info", "GET /v1/plans 200 96ms", {}),
        ("info", "GET /v1/plans 200 174ms", {}),
    ], 90)
    cm = Ctr("channel-manager", f"{REG}/channel-manager:8.0.3", port=8080,
             requests={"cpu": "200m", "memory": "384Mi"}, limits={"memory": "512Mi"},
             readiness=http_probe("/ready"))
    _, cms = steady(s, "channels", "channel-manager", [cm], nodes=nodes, replicas=2,
                    revision=19, rollout=s.ago(days=5, hours=2),
                    restarted={1: (s.ago(days=2, hours=3), "OOMKilled", 137)}, offset=2)
    quiet(s, cms, "channel-manager", 350)
    chatter(s, cms, "channel-manager", "channel-manager", [
        ("info", "pushed ARI update to booking partner for H-40112 (3 room types)", {}),
        ("warn", "partner endpoint answered 429, backing off 20s", {}),
    ], 40)
    return s
