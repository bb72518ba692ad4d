"""Fundraising: pledge-api's Envoy sidecar is OOM-killed again and again. pledge-api carries
the annotation sidecar.istio.io/proxyMemoryLimit: 128Mi (set two years ago to squeeze the
small pool); since the fundraising-crm namespace joined the mesh at 17:52 with ~400 endpoints,
the xDS configuration every proxy holds grew and this proxy no longer fits in 128Mi. The
application container never restarts. Other proxies have the default 1Gi limit and simply
grew. Red herrings: card declines from the payment provider, an old OOM of receipt-mailer,
istiod pushing full configurations."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from functools import partial

from tests.data.holdout._generator.base import gauge, set_times
from tests.data.holdout2._generator.kit import (
    NodeKind,
    deploy,
    kills,
    requests,
    restarts_series,
    runs_from,
    scraped,
    working_set,
)
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.scenario_tools.common import MIB, truth
from tests.scenario_tools.kube import Ctr, http_probe
from tests.scenario_tools.sim import Run, container_status, restart_events

from .kit4 import Incident, hexof, pool, uuid_of

ID = "pledge-confirmations-dropping"
NOW = datetime.fromisoformat("2027-06-11T19:41:00+00:00")
NS = "giving"
REG = "registry.gra.ovh.net/givewell-platform"
PROXY = "docker.io/istio/proxyv2:1.24.3"
__all__ = ["Incident"]


def build() -> Incident:
    s = Incident(
        id=ID,
        title="Donation confirmations intermittently fail",
        now=NOW,
        report="""\
Donors on the giving site intermittently get "We could not confirm your pledge, please try
again" since about 18:00. The gateway shows bursts of 503s for pledge-api, a few minutes
apart, and kubectl shows restarts on its pods. Tonight's TV appeal starts at 20:30, we need
this stable before then. What is going on?
""",
        truth=truth(
            "oom_killed", "Deployment", NS, "pledge-api",
            ["OOMKilled", "istio-proxy", "sidecar.istio.io/proxyMemoryLimit", "128Mi"],
            "The istio-proxy sidecar of pledge-api is OOMKilled at the 128Mi limit that the "
            "pod annotation sidecar.istio.io/proxyMemoryLimit sets, since the mesh config grew "
            "at 17:52 (fundraising-crm joined the mesh): raise the annotation (e.g. 512Mi or "
            "drop it for the 1Gi default) and scope the proxy's config with a Sidecar "
            "resource; the pledge-api container itself is fine."))
    set_times(s, 2.5, 60)
    c = s.cluster
    namespaces(s, {"default": 800, "kube-system": 800, "istio-system": 610, NS: 590,
                   "fundraising-crm": 0.08})
    kind = NodeKind("b3-16", "4", "16365280Ki", "3860m", "13591776Ki", "v1.31.6",
                    "6.8.0-57-generic", "Ubuntu 24.04.2 LTS", runtime="containerd://1.7.27")

    def namer(i: int) -> tuple[str, str]:
        return f"nodepool-0b7e41-node-{hexof(s, 'n', str(i), n=6)}", f"10.1.{i // 3}.{18 + i}"

    nodes = pool(s, 4, kind=kind, namer=namer, days=5.8, region="GRA11", zones=["gra11-a"],
                 labels=lambda i, n: {"nodepool": "general", "node.k8s.ovh/type": "standard",
                                      "node.kubernetes.io/instance-type": "b3-16"},
                 provider=lambda i, n: f"openstack:///{uuid_of(s, 'ovh', n)}",
                 cidr=lambda i: f"10.2.{i}.0/24")
    mesh_grew = NOW.replace(hour=17, minute=52, second=14)

    # ---- pledge-api: the app is fine, its proxy is killed at 128Mi
    app = Ctr("pledge-api", f"{REG}/pledge-api:5.3.2", port=8080,
              requests={"cpu": "250m", "memory": "384Mi"}, limits={"memory": "768Mi"},
              env={"SPRING_PROFILES_ACTIVE": "prod", "PAYMENTS_BASE_URL":
                   "https://api.payzenith.eu/v2"},
              readiness=http_probe("/actuator/health/readiness", delay=20),
              liveness=http_probe("/actuator/health/liveness", delay=40, period=20))
    proxy = Ctr("istio-proxy", PROXY, port=15090, port_name="http-envoy-prom",
                requests={"cpu": "50m", "memory": "64Mi"},
                limits={"cpu": "1", "memory": "128Mi"},
                args=["proxy", "sidecar", "--domain", "$(POD_NAMESPACE).svc.cluster.local",
                      "--proxyLogLevel=warning", "--log_output_level=default:info"],
                readiness=http_probe("/healthz/ready", 15021, delay=0, period=15, timeout=3,
                                     failures=4))
    init = Ctr("istio-init", PROXY, port=None, requests={"cpu": "10m", "memory": "40Mi"},
               limits={"cpu": "2", "memory": "1Gi"},
               args=["istio-iptables", "-p", "15001", "-z", "15006", "-u", "1337", "-m",
                     "REDIRECT", "-i", "*", "-x", "", "-b", "*", "-d", "15090,15021,15020"])
    rollout = s.ago(days=3, hours=5, minutes=12)
    all_runs = {}

    def life(start: datetime) -> float:
        if start < mesh_grew:
            return (mesh_grew - start).total_seconds() + s.rng.uniform(200, 500)
        return s.rng.uniform(380, 980)

    def statuses(i: int, name: str, started: datetime) -> dict[str, dict]:
        runs = runs_from(started, NOW, life, pull=0.6, jitter=lambda: s.rng.uniform(0, 0.7))
        all_runs[name] = runs
        return {"istio-proxy": container_status(runs, name, NS, "istio-proxy",
                                                reason="OOMKilled", code=137,
                                                uid=c.uid("Pod", NS, name),
                                                ready=True)}
    work, pods = deploy(s, NS, "pledge-api", [app, proxy], init=[init], replicas=3,
                        nodes=nodes, revision=41, rollout=rollout, statuses=statuses,
                        annotations={"sidecar.istio.io/proxyMemoryLimit": "128Mi",
                                     "sidecar.istio.io/proxyCPULimit": "1",
                                     "prometheus.io/path": "/stats/prometheus",
                                     "prometheus.io/port": "15020"},
                        template_labels={"sidecar.istio.io/inject": "true",
                                         "security.istio.io/tlsMode": "istio"})
    for pod in pods:
        name = pod["metadata"]["name"]
        runs = all_runs[name]
        restart_events(s, pod, "istio-proxy", runs, now=NOW, image=PROXY)
        base = 0

        def proxy_mem(t: int, runs: Sequence[Run] = runs) -> float | None:
            for r in runs:
                if r.start.timestamp() <= t and (r.end is None or t < r.end.timestamp()):
                    age = t - r.start.timestamp()
                    if t < mesh_grew.timestamp():
                        return 61 * MIB * (1 + 0.02 * ((t // 600) % 3))
                    life_ = ((r.end or NOW) - r.start).total_seconds()
                    return (97 + 30.5 * min(1.0, age / life_)) * MIB
            return None
        dead = kills(runs)
        working_set(s, pod, "istio-proxy", proxy_mem, times=scraped(s, runs, pod, 5))
        restarts_series(s, pod, "istio-proxy", base, dead)
        gauge(s, "kube_pod_container_resource_limits", {"namespace": NS, "pod": name,
              "container": "istio-proxy", "resource": "memory", "unit": "byte"},
              lambda t: 128 * MIB, "The number of requested limit resource by a container.")
        gauge(s, "kube_pod_container_status_last_terminated_reason",
              {"namespace": NS, "pod": name, "container": "istio-proxy",
               "reason": "OOMKilled"}, partial(_after_first, dead),
              "Describes the last reason the container was in terminated state.")
        quiet(s, [pod], "pledge-api", 402)
        gauge(s, "envoy_cluster_manager_active_clusters", {"namespace": NS, "pod": name},
              lambda t: 212 if t < mesh_grew.timestamp() else 641,
              "Number of currently active (warmed) clusters.",
              times=scraped(s, runs, pod, 5))

        def bad(t: int, runs: Sequence[Run] = runs) -> float:
            return 0.22 if any(r.end and 0 <= t - r.end.timestamp() < 40 for r in runs) \
                else 0.0
        requests(s, pod, "pledge-api", rps=lambda t: 3.1 + 1.4 * ((t // 900) % 3) / 2,
                 codes={"200": partial(_rest, bad), "402": lambda t: 0.025,
                        "503": bad})
        for r in runs[1:]:
            when = r.start - timedelta(seconds=s.rng.uniform(4, 9))
            for _ in range(s.rng.randrange(2, 5)):
                s.logs.add(when + timedelta(milliseconds=s.rng.randrange(0, 3000)), "error",
                           "POST /api/pledges/confirm failed: upstream connect error or "
                           "disconnect/reset before headers. reset reason: connection "
                           "termination", namespace="istio-ingress", pod="istio-ingressgateway"
                           "-5c9f7d8b6d-w2xkq", container="istio-proxy",
                           service="istio-ingressgateway", node=nodes[3]["metadata"]["name"],
                           **{"http.response.status_code": 503})
    chatter(s, pods, "pledge-api", "pledge-api", [
        ("info", "pledge confirmed: campaign SUMMER-APPEAL-27 amount EUR 25.00", {}),
        ("info", "pledge confirmed: campaign SUMMER-APPEAL-27 amount EUR 10.00", {}),
        ("warn", "PayZenith declined card payment: code 05 do_not_honor (pledge kept open "
         "for retry)", {"http.response.status_code": 402}),
        ("warn", "PayZenith /v2/intents took 1840ms (threshold 1500ms)", {}),
        ("info", "HikariPool-1 - Pool stats (total=10, active=2, idle=8, waiting=0)", {}),
    ], 240)

    # ---- istiod pushed a much bigger config
    discovery = Ctr("discovery", "docker.io/istio/pilot:1.24.3", port=15010, port_name="grpc-xds",
                    requests={"cpu": "500m", "memory": "2Gi"}, limits={})
    _, istiods = steady(s, "istio-system", "istiod", [discovery], nodes=nodes, replicas=2,
                        revision=14, rollout=s.ago(days=5, hours=3), service=15010,
                        target="grpc-xds", labels={"app": "istiod", "istio": "pilot"})
    quiet(s, istiods, "discovery", 1460)
    chatter(s, istiods, "discovery", "istiod", [
        ("info", "ads\tPush debounce stable[412] 3 for config ServiceEntry and Endpoints: "
         "100.41ms since last change", {}),
        ("info", "ads\tXDS: Pushing Services:412 ConnectedEndpoints:57", {}),
    ], 60, start=mesh_grew)
    chatter(s, istiods, "discovery", "istiod", [
        ("info", "ads\tXDS: Pushing Services:96 ConnectedEndpoints:44", {}),
    ], 20, end=mesh_grew)

    # ---- neighbours: other meshed workloads with the default 1Gi proxy limit
    crm = Ctr("supporter-crm", f"{REG}/supporter-crm:2.0.7", port=8080,
              requests={"cpu": "200m", "memory": "512Mi"}, limits={"memory": "1Gi"},
              readiness=http_probe("/ready"))
    _, crms = steady(s, "fundraising-crm", "supporter-crm", [crm, Ctr(
        "istio-proxy", PROXY, port=15090, port_name="http-envoy-prom",
        requests={"cpu": "100m", "memory": "128Mi"}, limits={"cpu": "2", "memory": "1Gi"})],
        nodes=nodes, replicas=2, revision=3, rollout=mesh_grew - timedelta(minutes=6),
        offset=1)
    quiet(s, crms, "supporter-crm", 620)
    quiet(s, crms, "istio-proxy", 171)
    mailer = Ctr("receipt-mailer", f"{REG}/receipt-mailer:1.9.0", port=8080,
                 requests={"cpu": "50m", "memory": "192Mi"}, limits={"memory": "256Mi"},
                 readiness=http_probe("/healthz"))
    _, mailers = steady(s, NS, "receipt-mailer", [mailer, Ctr(
        "istio-proxy", PROXY, port=15090, port_name="http-envoy-prom",
        requests={"cpu": "100m", "memory": "128Mi"}, limits={"cpu": "2", "memory": "1Gi"})],
        nodes=nodes, replicas=1, revision=12, rollout=s.ago(days=4, hours=2),
        restarted={0: (s.ago(days=2, hours=6), "OOMKilled", 137)}, offset=2)
    quiet(s, mailers, "receipt-mailer", 205)
    quiet(s, mailers, "istio-proxy", 168)
    chatter(s, mailers, "receipt-mailer", "receipt-mailer", [
        ("info", "tax receipt 2027-0612-88121 rendered and queued for delivery", {}),
        ("warn", "SMTP relay answered 421 4.7.0 try again later, requeue in 60s", {}),
    ], 40)
    _ = work
    return s


def _after_first(dead: Sequence[int], t: int) -> float:
    return 1.0 if dead and t >= dead[0] else 0.0


def _rest(bad: Callable[[int], float], t: int) -> float:
    return 0.97 - bad(t)
