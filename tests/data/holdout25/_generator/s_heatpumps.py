"""Home heating app: since about 07:00 on a cold Sunday, changing the target temperature of a
heat pump from the app spins and fails ("Could not reach your heat pump"). heatpump-commands
relays every command to the heat pump maker's cloud (api.nordvarme-connect.com); that API has
become slow: its client latency histogram climbs from ~0.3 s to ~9 s and most calls hit the
10 s client timeout. heatpump-commands itself is healthy (CPU, memory, restarts normal); the
cause is visible mainly in its outbound-call metrics. Red herrings: energy-insights rolled
out 45 min before the onset in the same namespace (the engineer suspects it), weather-sync
with a few ordinary forecast timeouts, a support-chat pod NotReady during the chat vendor's
announced maintenance, a noisy MQTT bridge."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.scenario_tools.common import (
    BUCKETS,
    MIB,
    Story,
    const,
    container_metrics,
    http_metrics,
    simple_deployment,
    truth,
)
from tests.scenario_tools.failures import not_ready, probe_events
from tests.scenario_tools.kube import Ctr, http_probe, iso
from tests.scenario_tools.parts import app, neighbour, rollout
from tests.scenario_tools.telemetry import histogram_points, integrate, spread

from .kit import base, chatter

ID = "heat-pump-setpoints-failing"
NOW = datetime.fromisoformat("2027-11-21T07:41:00+00:00")
NS = "smart-home"
REG = "ghcr.io/warmhaus-energy"
VENDOR = "api.nordvarme-connect.com"


def build() -> Story:
    s = Story(
        id=ID, title="Heat pump temperature changes failing in the app", now=NOW,
        report="""\
Lots of customers can't change the temperature of their heat pump in the app this morning,
it spins and then says "Could not reach your heat pump". Started around 7. The energy usage
charts still load. energy-insights was deployed earlier this morning, maybe related?
""",
        truth=truth(
            "dependency_failure", "Deployment", NS, "heatpump-commands",
            [VENDOR, "http_client_request_duration_seconds", "timeout"],
            "The heat pump maker's cloud API (api.nordvarme-connect.com) became slow around "
            "07:02: heatpump-commands' outbound calls to it went from ~0.3 s to ~9 s and most "
            "now hit the 10 s client timeout, so setpoint changes fail with 504. "
            "heatpump-commands itself is healthy. Escalate to the vendor (status page / "
            "support), queue commands and tell customers; nothing to roll back in the "
            "cluster."))
    onset = NOW - timedelta(minutes=39)
    edge = onset.timestamp()
    nodes = base(s, [NS, "messaging"], 4, subnet=61, region="eu-north-1",
                 instance="m7g.xlarge")

    # ---- heatpump-commands: healthy, but its vendor calls are slow
    def bad(t: int) -> float:  # 0 before the onset, 1 once the vendor API is slow
        return min(1.0, max(0.0, (t - edge) / 240))

    def rps(t: int) -> float:
        return 11.0

    _, pods = app(
        s, NS, "heatpump-commands", f"{REG}/heatpump-commands:4.6.2", nodes, replicas=3,
        revision=37, rps=rps,
        codes={"200": lambda t: 0.993 - 0.62 * bad(t), "409": const(0.006),
               "504": lambda t: 0.001 + 0.62 * bad(t)},
        median=lambda t: 0.34 + 8.9 * bad(t), cpu=lambda t: 0.21 - 0.05 * bad(t),
        memory_mib=290, limits={"cpu": "1", "memory": "640Mi"},
        requests={"cpu": "300m", "memory": "384Mi"},
        env={"VENDOR_API_BASE": f"https://{VENDOR}/v3", "VENDOR_TIMEOUT_SECONDS": "10",
             "COMMAND_RETRIES": "1", "MQTT_URL": "mqtts://mqtt-bridge.messaging.svc:8883"},
        rollout_at=NOW - timedelta(days=4, hours=2))
    fam = s.metrics.family("http_client_request_duration_seconds", "histogram",
                           "Duration of outbound HTTP requests in seconds.",
                           buckets=(*BUCKETS, 5.0, 10.0))
    for pod in pods:
        labels = {"namespace": NS, "pod": pod["metadata"]["name"], "peer": VENDOR,
                  "method": "POST", "route": "/v3/devices/{id}/setpoint"}
        fam.add(labels, histogram_points(s.times, (*BUCKETS, 5.0, 10.0), lambda t: 3.7,
                                         lambda t: 0.31 + 8.7 * bad(t), s.rng))
        for outcome, share in (("success", lambda t: 0.998 - 0.64 * bad(t)),
                               ("timeout", lambda t: 0.001 + 0.64 * bad(t)),
                               ("http_4xx", const(0.001))):
            s.metrics.counter("http_client_requests_total", {**labels, "outcome": outcome},
                              integrate(s.times, lambda t, f=share: 3.7 * f(t),
                                        start=s.rng.randrange(200_000, 900_000), rng=s.rng),
                              "Outbound HTTP requests by outcome.")
    chatter(s, pods, "heatpump-commands", "heatpump-commands", [
        ("info", "setpoint HP-7731-0412 21.5C accepted", {}),
        ("info", "mode HP-5520-1187 ECO accepted", {}),
        ("info", "setpoint HP-9102-0044 20.0C accepted", {}),
        ("warn", "device HP-3318-0921 offline per vendor, command parked for 15 min", {}),
    ], 270, end=onset)
    chatter(s, pods, "heatpump-commands", "heatpump-commands", [
        ("info", "setpoint HP-4410-0276 22.0C accepted", {}),
        ("warn", "command queue depth 212 (soft limit 150)", {}),
        ("warn", "POST /api/devices/{id}/setpoint answered 504 after 10.0s",
         {"http.response.status_code": 504}),
    ], 60, start=onset + timedelta(minutes=3))
    for i, when in enumerate(spread(s.rng, onset + timedelta(minutes=4), NOW, 9)):
        pod = pods[i % len(pods)]
        s.logs.add(when, "error", f"vendor call timeout after 10s host={VENDOR} "
                   "op=setpoint", namespace=NS, pod=pod["metadata"]["name"],
                   container="heatpump-commands", service="heatpump-commands",
                   node=pod["spec"]["nodeName"], error__type="ReadTimeout")

    # ---- energy-insights: rolled out 45 min before the onset, healthy (the suspect)
    roll_at = onset - timedelta(minutes=45)
    ins = rollout(s, NS, "energy-insights", lambda v: Ctr(
        "energy-insights", f"{REG}/energy-insights:{v}", requests={"cpu": "200m",
                                                                   "memory": "512Mi"},
        limits={"memory": "1Gi"}, readiness=http_probe("/ready"),
        liveness=http_probe("/healthz", delay=20, period=20)),
        old="2.31.0", new="2.32.0", at=roll_at, revision=92, replicas=2, node_list=nodes)
    for pod in ins.new_pods + ins.old_pods:
        container_metrics(s, pod, "energy-insights", memory=lambda t: 540 * MIB)
        http_metrics(s, "energy-insights", pod, rps=const(4.1),
                     codes={"200": const(0.998), "500": const(0.002)}, median=const(0.12))
    chatter(s, ins.new_pods, "energy-insights", "energy-insights", [
        ("info", "energy-insights 2.32.0 ready: hourly aggregates backfilled to 2027-11-20", {}),
        ("info", "GET /v1/usage/daily?home=H-88120 200 in 96ms", {}),
        ("warn", "smart meter feed for home H-10455 missing 3 intervals, interpolated", {}),
    ], 80, start=roll_at + timedelta(minutes=1))

    # ---- weather-sync: a few ordinary forecast timeouts
    neighbour(s, NS, "weather-sync", f"{REG}/weather-sync:1.9.0", nodes, replicas=1,
                      memory_mib=95, logs=[
                          ("info", "forecast refreshed for 412 grid cells", {}),
                          ("info", "forecast refreshed for 409 grid cells", {}),
                          ("warn", "timeout fetching forecast from api.met.no after 3s, "
                           "using cached forecast (age 58m)", {"error.type": "Timeout"}),
                      ], n_logs=30)

    # ---- support-chat: one pod NotReady during the vendor's announced maintenance
    chat = Ctr("support-chat", f"{REG}/support-chat:3.2.7", port=8080,
               requests={"cpu": "100m", "memory": "128Mi"}, limits={"memory": "256Mi"},
               readiness=http_probe("/ready", period=15),
               liveness=http_probe("/healthz", delay=15, period=20))
    maint = NOW - timedelta(minutes=41)
    started = NOW - timedelta(days=2, hours=3)
    _, chats = simple_deployment(s, NS, "support-chat", chat.image, replicas=2, node_list=nodes,
                                 ctr=chat, rollout=started, revision=15,
                                 restarts={0: not_ready(started + timedelta(seconds=20))})
    for cond in chats[0]["status"]["conditions"]:
        if cond["type"] in ("Ready", "ContainersReady"):
            cond["lastTransitionTime"] = iso(maint + timedelta(seconds=31))
    probe_events(s, chats[0], "support-chat", "HTTP probe failed with statuscode: 503",
                 since=maint, period=15)
    chatter(s, chats, "support-chat", "support-chat", [
        ("warn", "chat vendor in scheduled maintenance (06:00-08:30 UTC), reporting not ready",
         {}),
        ("info", "offline form submission forwarded to helpdesk queue", {}),
    ], 20, start=maint)

    # ---- mqtt-bridge: reconnect noise
    neighbour(s, "messaging", "mqtt-bridge", f"{REG}/mqtt-bridge:0.18.3", nodes, replicas=2,
              memory_mib=210, port=8883, logs=[
                  ("warn", "client hp-gw-55120 keepalive timeout, closing session", {}),
                  ("info", "client hp-gw-55120 reconnected, clean_session=false", {}),
                  ("warn", "retained message store compaction took 1.8s", {}),
              ], n_logs=50)
    return s
