"""Court e-filing: filings are slow and some time out. At 08:45 Argo CD rolled out
generation 18 of the otel-node-agent DaemonSet (OpenTelemetry collector 0.118 on every node)
whose new config scrapes the hostmetrics `process` scraper every second (was 30 s, and the
process scraper was off) and dropped the agent's CPU limit. Node by node, as the rollout
went, each agent went from ~0.06 to ~2.3 cores, the nodes' CPU pressure rose and the
application pods on them (no CPU limits, so not throttled) got slower: efiling-api's
latency rose from ~0.15 s to over 1 s and the ingress times out some uploads (504). The
previous generation was healthy for weeks. Red herrings: docket-search 3.3.0 rolled out
84 min ago (plausible alternative, before the slowdown), an old OOM of pdf-validator,
PDF/A validation warnings."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from tests.data.holdout._generator.base import daemonset, set_times
from tests.data.holdout2._generator.kit import (
    app_counter,
    cpu_seconds,
    deleted,
    requests,
    start_events,
)
from tests.data.holdout3._generator.kit3 import chatter, log_pod, namespaces, quiet, steady
from tests.data.holdout4._generator.kit4 import configmap_with, ramp
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, http_probe

from .kit8 import Incident, NodeKind, provider_nodes

ID = "efiling-uploads-sluggish"
NOW = datetime.fromisoformat("2028-04-19T09:37:00+00:00")
NS = "efiling"
OBS = "observability"
REG = "acr.justiz-land.local/efiling"
AGENT = "otel/opentelemetry-collector-contrib:0.118.0"
OLD_AGENT = "otel/opentelemetry-collector-contrib:0.111.0"
CONFIG = """\
receivers:
  hostmetrics:
    collection_interval: 1s
    root_path: /hostfs
    scrapers:
      cpu: {}
      memory: {}
      filesystem: {}
      network: {}
      process:
        mute_process_name_error: true
        mute_process_exe_error: true
        metrics:
          process.threads: {enabled: true}
          process.open_file_descriptors: {enabled: true}
  filelog:
    include: [/var/log/pods/*/*/*.log]
    start_at: end
processors:
  batch: {send_batch_size: 8192, timeout: 5s}
  resourcedetection: {detectors: [env, system]}
exporters:
  otlphttp:
    endpoint: http://otel-gateway.observability.svc:4318
service:
  pipelines:
    metrics:
      receivers: [hostmetrics]
      processors: [resourcedetection, batch]
      exporters: [otlphttp]
    logs: {receivers: [filelog], processors: [batch], exporters: [otlphttp]}
"""


def build() -> Incident:
    s = Incident(
        id=ID, title="E-filing uploads sluggish", now=NOW,
        report="""\
E-filing is really slow this morning. Lawyers report uploads of pleadings taking ages and a
few got a gateway timeout. Roughly since 08:50. The court's filing deadline is 12:00.
""",
        truth=truth(
            "bad_rollout", "DaemonSet", OBS, "otel-node-agent",
            ["otel-node-agent", "collection_interval: 1s", "pod-template-generation: 18",
             "container_cpu_usage_seconds_total", "node_pressure_cpu_waiting_seconds_total"],
            "Generation 18 of the otel-node-agent DaemonSet, rolled out node by node from "
            "08:45, scrapes host and per-process metrics every second and has no CPU limit: "
            "each agent burns ~2.3 cores, the nodes' CPU pressure rose and efiling-api (and "
            "its neighbours) got slow, with 504s at the ingress. Roll otel-node-agent back to "
            "generation 17 (collection_interval 30s, no process scraper, CPU limit 200m), "
            "then reintroduce the process scraper with a sane interval and a limit."))
    set_times(s, 2.0, 60)
    c = s.cluster
    namespaces(s, {"default": 720, "kube-system": 720, NS: 690, OBS: 690, "ingress": 690})
    kind = NodeKind("Standard_A4_v2-arc", "8", "32862100Ki", "7800m", "30191012Ki",
                    "v1.30.5", "5.15.173.1-2.cm2", "CBL-Mariner/Linux",
                    runtime="containerd://1.6.26", pods="110")
    nodes = provider_nodes(s, "aksarc", 5, kind, days=6.8, group="linuxpool1")
    roll = NOW - timedelta(minutes=52, seconds=8)
    gap = 71.0  # seconds between nodes (maxUnavailable 1, pod ready in ~60 s)
    swap = [roll + timedelta(seconds=gap * i) for i in range(len(nodes))]

    def hot(i: int, t: float) -> float:  # 0..1: how hot node i's new agent runs
        return ramp(int(t), swap[i] + timedelta(seconds=20), 2)

    def lin(k: int, a: float, b: float) -> Callable[[int], float]:
        return lambda t: a + b * hot(k, t)

    # ---- the agent DaemonSet, new generation
    agent = Ctr("otel-collector", AGENT, port=8888, port_name="metrics",
                requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "512Mi"},
                args=["--config=/conf/otel-node-agent.yaml"],
                env={"K8S_NODE_NAME": "$(K8S_NODE_NAME)"},
                mounts=[{"name": "hostfs", "mountPath": "/hostfs", "readOnly": True},
                        {"name": "varlogpods", "mountPath": "/var/log/pods", "readOnly": True},
                        {"name": "conf", "mountPath": "/conf"}],
                liveness=http_probe("/", 13133, delay=10),
                readiness=http_probe("/", 13133, delay=5))
    ds, agents = daemonset(s, OBS, "otel-node-agent", [agent], node_list=nodes, generation=18,
                           since=roll, stagger=gap, offset=2, volumes=[
                               {"name": "hostfs", "hostPath": {"path": "/"}},
                               {"name": "varlogpods", "hostPath": {"path": "/var/log/pods"}},
                               {"name": "conf", "configMap": {"name": "otel-node-agent"}}],
                           annotations={"checksum/config": "4f0c9ad1e2b7" + "3" * 52})
    ds.obj["metadata"]["annotations"] = {
        "argocd.argoproj.io/tracking-id": "otel-node-agent:apps/DaemonSet:observability/"
                                          "otel-node-agent",
        "deprecated.daemonset.template.generation": "18"}
    configmap_with(s, OBS, "otel-node-agent", {"otel-node-agent.yaml": CONFIG},
                   created=s.ago(days=200), edited=roll - timedelta(seconds=3),
                   manager="argocd-controller",
                   labels={"app.kubernetes.io/name": "otel-node-agent",
                           "app.kubernetes.io/instance": "otel-node-agent"})
    old_pods = [deleted(s, OBS, f"otel-node-agent-{c.token(5)}", n["metadata"]["name"],
                        s.ago(days=6, hours=2) + timedelta(seconds=40 * i),
                        swap[i] - timedelta(seconds=1))
                for i, n in enumerate(nodes)]
    for i, (pod, ghost) in enumerate(zip(agents, old_pods, strict=True)):
        meta = pod["metadata"]
        created = datetime.fromisoformat(meta["creationTimestamp"].replace("Z", "+00:00"))
        c.event(ds.obj, "SuccessfulDelete", f"Deleted pod: {ghost['metadata']['name']}",
                first=swap[i] - timedelta(seconds=1), component="daemonset-controller",
                host="")
        c.event(ds.obj, "SuccessfulCreate", f"Created pod: {meta['name']}", first=created,
                component="daemonset-controller", host="")
        start_events(s, pod, scheduled=created + timedelta(seconds=0.2),
                     started=created + timedelta(seconds=5.5),
                     pull=3.1 if i == 0 else 2.2, size=93_914_006)
        cpu_seconds(s, ghost, "otel-collector", lambda t: 0.06)
        cpu_seconds(s, pod, "otel-collector", lin(i, 0.06, 2.25))
        quiet(s, [pod], "otel-collector", 210)
        log_pod(s, ghost, "otel-collector", "otel-node-agent", [
            ("info", "Everything is ready. Begin running and processing data.", {}),
        ], 1)
        node = nodes[i]["metadata"]["name"]
        app_counter(s, "node_pressure_cpu_waiting_seconds_total",
                    {"instance": node, "job": "node-exporter"}, s.times,
                    lin(i, 0.015, 0.55),
                    "Total time in seconds that processes have waited for CPU time")
    chatter(s, agents, "otel-collector", "otel-node-agent", [
        ("info", "Everything is ready. Begin running and processing data.", {}),
        ("warn", "Failed to scrape process metrics: error reading process name for pid "
         "31877: open /hostfs/proc/31877/comm: no such file or directory", {}),
        ("warn", "Exporting failed. Will retry the request after interval. "
         "error=\"rpc error: code = ResourceExhausted\" interval=1.2s", {}),
        ("info", "metrics exported: 41288 data points", {}),
    ], 90)

    # ---- efiling-api and its neighbours: slower as their node's agent turns hot
    def heat(t: int) -> float:
        return sum(hot(k, t) for k in range(len(nodes))) / len(nodes)

    api = Ctr("efiling-api", f"{REG}/efiling-api:6.11.3", port=8080,
              requests={"cpu": "1", "memory": "1536Mi"}, limits={"memory": "2Gi"},
              readiness=http_probe("/q/health/ready"), liveness=http_probe("/q/health/live",
                                                                        delay=30))
    _, apis = steady(s, NS, "efiling-api", [api], nodes=nodes, replicas=3, revision=92,
                     rollout=s.ago(days=3, hours=2, minutes=17))
    for j, pod in enumerate(apis):
        k = j % len(nodes)
        quiet(s, [pod], "efiling-api", 1180)
        cpu_seconds(s, pod, "efiling-api", lambda t: 0.55)
        requests(s, pod, "efiling-api", rps=lambda t: 3.1, codes={
            "201": lin(k, 0.995, -0.05),
            "500": lin(k, 0.001, 0.01)},
            median=lin(k, 0.15, 1.05), buckets=(0.5, 2.5))
    chatter(s, apis, "efiling-api", "efiling-api", [
        ("info", "POST /v1/filings 201 142ms (case 3 O 118/28, 4 attachments)", {}),
        ("warn", "PDF/A validation: attachment 2 is PDF 1.7 without embedded fonts, accepted "
         "with warning", {}),
    ], 70, end=roll + timedelta(minutes=3))
    chatter(s, apis, "efiling-api", "efiling-api", [
        ("info", "POST /v1/filings 201 1388ms (case 7 C 2291/27, 9 attachments)", {}),
        ("warn", "slow request: POST /v1/filings took 4.81s (virus scan 0.4s, store 1.2s, "
         "signature check 3.1s)", {}),
        ("warn", "PDF/A validation: attachment 1 is PDF 1.7 without embedded fonts, accepted "
         "with warning", {}),
        ("error", "POST /v1/filings 500 signature check aborted after 10s",
         {"http.response.status_code": 500}),
        ("info", "POST /v1/filings 201 962ms (case 2 U 41/28, 2 attachments)", {}),
    ], 190, start=roll + timedelta(minutes=3))
    ing = Ctr("controller", "registry.k8s.io/ingress-nginx/controller:v1.12.1", port=443,
              port_name="https", requests={"cpu": "200m", "memory": "256Mi"},
              limits={"memory": "512Mi"})
    _, ings = steady(s, "ingress", "ingress-nginx-controller", [ing], nodes=nodes,
                     replicas=2, revision=11, rollout=s.ago(days=5, hours=20), offset=2,
                     service=443, target="https")
    quiet(s, ings, "controller", 180)
    for pod in ings:
        requests(s, pod, "ingress-nginx", rps=lambda t: 8.0, codes={
            "200": lambda t: 0.996 - 0.03 * heat(t), "504": lambda t: 0.001 + 0.03 * heat(t)})
    chatter(s, ings, "controller", "ingress-nginx", [
        ("error", 'upstream timed out (110: Operation timed out) while reading response '
         'header from upstream, request: "POST /v1/filings HTTP/2.0", upstream: '
         '"http://10.244.2.31:8080/v1/filings", host: "efiling.justiz-land.de"',
         {"http.response.status_code": 504}),
    ], 30, start=roll + timedelta(minutes=6))

    # ---- red herrings
    ds_roll = NOW - timedelta(minutes=84)
    ds_ctr = Ctr("docket-search", f"{REG}/docket-search:3.3.0", port=8080,
                 requests={"cpu": "500m", "memory": "1Gi"}, limits={"memory": "1536Mi"},
                 readiness=http_probe("/health"))
    _, dss = steady(s, NS, "docket-search", [ds_ctr], nodes=nodes, replicas=2, revision=40,
                    rollout=ds_roll, offset=1,
                    old=(39, s.ago(days=9), [Ctr("docket-search",
                                                 f"{REG}/docket-search:3.2.7")]))
    for pod in dss:
        quiet(s, [pod], "docket-search", 760)
        requests(s, pod, "docket-search", rps=lambda t: 1.4, codes={
            "200": lambda t: 0.997, "500": lambda t: 0.003})
    chatter(s, dss, "docket-search", "docket-search", [
        ("info", "docket-search 3.3.0 started, index docket-2028-04 (1.2M entries)", {}),
        ("warn", "query 'Az. 3 O 118/28' fell back to fuzzy match", {}),
    ], 30, start=ds_roll)
    pv = Ctr("pdf-validator", f"{REG}/pdf-validator:2.0.4", port=8080,
             requests={"cpu": "300m", "memory": "768Mi"}, limits={"memory": "1Gi"})
    _, pvs = steady(s, NS, "pdf-validator", [pv], nodes=nodes, replicas=2, revision=15,
                    rollout=s.ago(days=4, hours=13), offset=3,
                    restarted={0: (s.ago(days=2, hours=3), "OOMKilled", 137)})
    quiet(s, pvs, "pdf-validator", 540)
    chatter(s, pvs, "pdf-validator", "pdf-validator", [
        ("warn", "veraPDF: 6.2.11.4.1 font not embedded (Arial,Bold)", {}),
        ("info", "validated 2 files, PDF/A-2b conformant: 1", {}),
    ], 40)
    return s
