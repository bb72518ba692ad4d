"""DIY chain: the paint colour matcher (photo in, paint recipe out) turns slow in the
evening. colour-match has run unchanged for four days with a CPU limit of 500m; its image
pipeline is multi-threaded, so when the after-work traffic more than doubles from about
17:35 the CFS quota is used up early in every period: throttled periods rise from a few
percent to about 70 %, CPU use flattens just under the limit and the p50 latency goes from
0.3 s to 4-6 s. No errors, no restarts. Red herrings: paint-catalog 5.12.0 rolled out
1 h 20 min ago in the same namespace, stock-sync timeouts against a supplier API, an old
OOM restart of loyalty-wallet in another namespace, a readiness blip of the store app's BFF
in yet another namespace."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from tests.data.holdout._generator.base import alive, gauge, set_times
from tests.data.holdout2._generator.kit import app_counter, cpu_seconds, deploy, requests
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.data.holdout4._generator.kit4 import ramp
from tests.scenario_tools.common import MIB, truth
from tests.scenario_tools.kube import Ctr, http_probe

from .kit12 import Incident, NodeKind, provider_nodes, secs

ID = "paint-colour-match-slow"
NOW = datetime.fromisoformat("2028-10-17T19:16:00+00:00")
NS = "paint"
REG = "registry.hornbach-lab.ch/diy"


def build() -> Incident:
    s = Incident(
        id=ID, title="Paint colour matching very slow this evening", now=NOW,
        report="""\
Colour matching in the app and on the in-store tablets ("scan a colour, get the paint")
has been really slow since sometime after 17:30, 5+ seconds per scan, normally it's
instant. Nothing is failing as far as I can see, it's just slow. Stores are calling.
""",
        truth=truth(
            "cpu_throttling", "Deployment", NS, "colour-match",
            ["container_cpu_cfs_throttled_periods_total", "500m", "throttled"],
            "colour-match's pods are limited to 500m CPU. With the evening traffic its "
            "multi-threaded image pipeline exhausts the CFS quota in most periods (about 70 % "
            "of periods throttled), CPU use is pinned just under the limit and scans queue: "
            "p50 latency went from 0.3 s to over 4 s. Raise or remove the CPU limit (e.g. "
            "2 cores, request 1), and/or add replicas; nothing was deployed to colour-match."))
    set_times(s, 3.0, 60)
    c = s.cluster
    namespaces(s, {"default": 640, "kube-system": 640, NS: 600, "loyalty": 580,
                   "store-app": 610})
    kind = NodeKind("a4-ram16", "4", "16367260Ki", "3800m", "14218396Ki", "v1.31.6",
                    "6.8.0-57-generic", "Ubuntu 24.04.2 LTS", runtime="containerd://1.7.26")
    nodes = provider_nodes(s, "infomaniak", 4, kind, days=5.3, group="shop")
    rush = NOW - timedelta(hours=1, minutes=41)

    def load(t: int) -> float:  # scans relative to the afternoon
        return 1.0 + 1.45 * ramp(t, rush, 35)

    # ---- colour-match: unchanged for days, throttled under the evening load
    ctr = Ctr("colour-match", f"{REG}/colour-match:3.4.1", port=8080,
              requests={"cpu": "250m", "memory": "512Mi"},
              limits={"cpu": "500m", "memory": "1Gi"},
              env={"WORKER_THREADS": "8", "MODEL": "/models/spectro-v9.onnx",
                   "PALETTE_URL": "http://paint-catalog.paint.svc/api/palettes"},
              readiness=http_probe("/ready", delay=10, timeout=2),
              liveness=http_probe("/healthz", delay=30, period=20, timeout=3))
    _, pods = deploy(s, NS, "colour-match", [ctr], replicas=3, nodes=nodes, revision=19,
                     rollout=s.ago(days=4, hours=2, minutes=13),
                     old=(18, s.ago(days=12), [Ctr("colour-match",
                                                   f"{REG}/colour-match:3.4.0")]))
    for pod in pods:
        name = pod["metadata"]["name"]
        labels = {"namespace": NS, "pod": name, "container": "colour-match"}
        times = alive(s, pod)
        quiet(s, [pod], "colour-match", 604)
        cpu_seconds(s, pod, "colour-match", lambda t: min(0.48, 0.21 * load(t)))
        base = s.rng.randrange(3_400_000, 3_700_000)  # 100 ms periods since the start
        app_counter(s, "container_cpu_cfs_periods_total", labels, times, lambda t: 10.0,
                    "Number of elapsed enforcement period intervals.", start=base)
        app_counter(s, "container_cpu_cfs_throttled_periods_total", labels, times,
                    lambda t: 10.0 * (0.04 + 0.66 * ramp(t, rush, 45)),
                    "Number of throttled period intervals.", start=int(base * 0.043))
        s.metrics.counter("container_cpu_cfs_throttled_seconds_total", labels, [
            (t, round(v / 10.0 * 0.061, 3)) for t, v in
            [(t, float(k)) for t, k in _cum(times, lambda t: 10.0 * (
                0.04 + 0.66 * ramp(t, rush, 45)), int(base * 0.043))]],
            "Total time duration the container has been throttled.")
        for res, val in (("cpu", 0.5), ("memory", 1024 * MIB)):
            gauge(s, "kube_pod_container_resource_limits",
                  {**labels, "resource": res, "unit": "core" if res == "cpu" else "byte"},
                  lambda t, v=val: v, "The number of requested limit resource by a "
                  "container.", times=times)
        requests(s, pod, "colour-match", rps=lambda t: 1.9 * load(t),
                 codes={"200": lambda t: 0.993, "422": lambda t: 0.007},
                 median=lambda t: 0.31 + 4.6 * ramp(t, rush, 45) ** 1.3,
                 buckets=(0.25, 0.5, 1.0, 2.5, 5.0, 10.0))
        chatter(s, [pod], "colour-match", "colour-match", [
            ("info", "POST /v1/match 200 palette=interior-2028 candidates=5 in 284ms",
             {"http.response.status_code": 200}),
            ("info", "white balance corrected from camera profile iphone-16-pro", {}),
            ("warn", "POST /v1/match 422 image too dark (mean luminance 0.07)",
             {"http.response.status_code": 422}),
        ], 40, end=rush + timedelta(minutes=20))
        chatter(s, [pod], "colour-match", "colour-match", [
            ("info", "POST /v1/match 200 palette=interior-2028 candidates=5 in 5214ms",
             {"http.response.status_code": 200}),
            ("info", "POST /v1/match 200 palette=facade-2028 candidates=3 in 6630ms",
             {"http.response.status_code": 200}),
            ("warn", "match queue depth 23, oldest waiting 3.9s", {}),
            ("info", "white balance corrected from camera profile galaxy-s25", {}),
        ], 70, start=rush + timedelta(minutes=20))

    # ---- red herrings
    roll = NOW - timedelta(hours=1, minutes=20)
    cat = Ctr("paint-catalog", f"{REG}/paint-catalog:5.12.0", port=8080,
              requests={"cpu": "200m", "memory": "384Mi"}, limits={"memory": "512Mi"},
              readiness=http_probe("/ready"))
    _, cats = steady(s, NS, "paint-catalog", [cat], nodes=nodes, replicas=2, revision=44,
                     rollout=roll, offset=1,
                     old=(43, s.ago(days=5), [Ctr("paint-catalog",
                                                  f"{REG}/paint-catalog:5.11.3")]))
    quiet(s, cats, "paint-catalog", 288)
    for pod in cats:
        cpu_seconds(s, pod, "paint-catalog", lambda t: 0.05 * load(t))
        requests(s, pod, "paint-catalog", rps=lambda t: 3.1 * load(t), codes={
            "200": lambda t: 0.996, "304": lambda t: 0.003, "404": lambda t: 0.001},
            median=lambda t: 0.021, buckets=(0.25, 0.5, 1.0, 2.5, 5.0, 10.0))
    chatter(s, cats, "paint-catalog", "paint-catalog", [
        ("info", "paint-catalog 5.12.0 started: palettes interior-2028, facade-2028, "
         "wood-2027 loaded", {}),
        ("warn", "deprecated field 'gloss_level' requested by client colour-match/3.4.1", {}),
        ("info", "GET /api/palettes/interior-2028 200 in 9ms", {}),
    ], 40, start=roll)
    sync = Ctr("stock-sync", f"{REG}/stock-sync:2.0.9", port=8080,
               requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "384Mi"})
    _, syncs = steady(s, NS, "stock-sync", [sync], nodes=nodes, replicas=1, revision=12,
                      rollout=s.ago(days=6, hours=1), offset=2, service=None)
    quiet(s, syncs, "stock-sync", 171)
    chatter(s, syncs, "stock-sync", "stock-sync", [
        ("info", "synced 1 842 SKUs from supplier dyrup-ch in 41s", {}),
        ("warn", "supplier api.dyrup-b2b.example timed out after 30s, retry 1/3",
         {"error.type": "ReadTimeout"}),
        ("info", "store 0417 tinting machine inventory updated", {}),
    ], 30)
    wallet = Ctr("loyalty-wallet", f"{REG}/loyalty-wallet:7.1.2", port=8080,
                 requests={"cpu": "200m", "memory": "512Mi"}, limits={"memory": "640Mi"},
                 readiness=http_probe("/ready"))
    _, wallets = steady(s, "loyalty", "loyalty-wallet", [wallet], nodes=nodes, replicas=2,
                        revision=31, rollout=s.ago(days=3, hours=6),
                        restarted={0: (s.ago(days=1, hours=15), "OOMKilled", 137)})
    quiet(s, wallets, "loyalty-wallet", 402)
    chatter(s, wallets, "loyalty-wallet", "loyalty-wallet", [
        ("info", "points credited: 120 for receipt R-0417-88123", {}),
        ("warn", "card 6011-**** not linked to an account", {}),
    ], 20)
    bff = Ctr("store-app-bff", f"{REG}/store-app-bff:12.0.4", port=3000,
              requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "512Mi"},
              readiness=http_probe("/api/health", delay=10))
    _, bffs = steady(s, "store-app", "store-app-bff", [bff], nodes=nodes, replicas=2,
                     revision=88, rollout=s.ago(days=2, hours=9), offset=3)
    quiet(s, bffs, "store-app-bff", 233)
    first = NOW - timedelta(minutes=37)
    ip = bffs[1]["status"]["podIP"]
    c.event(bffs[1], "Unhealthy", f'Readiness probe failed: Get "http://{ip}:3000/api/health"'
            ": context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            first=first, last=secs(first, 20), count=2, type_="Warning",
            field_path="spec.containers{store-app-bff}")
    chatter(s, bffs, "store-app-bff", "store-app-bff", [
        ("info", "GET /api/stores/0417/opening-hours 200 12ms", {}),
        ("warn", "upstream colour-match slow: 5.8s for /v1/match", {}),
        ("info", "GET /api/cart 200 31ms", {}),
    ], 40)
    return s


def _cum(times: list[int], rate: Callable[[int], float], start: int
         ) -> list[tuple[int, int]]:
    out, value = [], start
    for i, t in enumerate(times):
        if i:
            value += int(rate(t) * (t - times[i - 1]))
        out.append((t, value))
    return out
