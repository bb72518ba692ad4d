"""Greenhouses: climate sensor gateways keep reconnecting and the dashboard shows gaps.
climate-broker is a three-member RabbitMQ StatefulSet (OrderedReady, rolling update). 52
minutes ago a Helm upgrade moved it from 3.12.14 straight to 4.0.5 without enabling the
stable feature flags first. The controller replaced member 2 first: RabbitMQ 4.0.5 reads the
feature-flag state in its data directory (PVC data-climate-broker-2), finds
`message_containers` not enabled and refuses to boot (BOOT FAILED, exit 1), so the pod
crash-loops and the rollout stops there; members 0 and 1 still run 3.12.14 and are fine.
Gateways pinned to member 2 fail over and reconnect. Red herrings: climate-dashboard 3.3.0
rolled out 24 minutes ago (plausible alternative), an old OOM restart of irrigation-planner,
and the surviving members' partition warnings about member 2."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import (
    PCtr,
    add_endpoints,
    add_service,
    fix_pod_ips,
    gauge,
    set_times,
)
from tests.data.holdout2._generator.kit import (
    NodeKind,
    kills,
    lines,
    restarts_series,
    runs_from,
    statefulset,
    storage_class,
)
from tests.data.holdout3._generator.kit3 import chatter, log_pod, namespaces, quiet, steady
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, Obj, Template, http_probe
from tests.scenario_tools.sim import container_status, restart_events

from .kit7 import Incident, provider_nodes

ID = "greenhouse-sensors-reconnecting"
NOW = datetime.fromisoformat("2027-08-17T06:58:00+00:00")
NS = "greenhouse-ops"
OLD, NEW = "3.12.14", "4.0.5"
REG = "registry.kas-agro.example"


def _hms(start: datetime, offset: float) -> str:
    when = start + timedelta(seconds=offset)
    return when.strftime("%H:%M:%S.") + f"{when.microsecond // 10000:02d}"


def _boot(start: datetime, node: str) -> list[str]:
    return [x for x in _all_boot(start, node) if x[:24] <= NOW.strftime("%Y-%m-%dT%H:%M:%S.000Z")]


def _all_boot(start: datetime, node: str) -> list[str]:
    return lines(start, [
        (0.0, f"rabbitmq {_hms(start, 0.0)} INFO  ==> ** Starting RabbitMQ setup **"),
        (0.4, f"rabbitmq {_hms(start, 0.4)} INFO  ==> Validating settings in RABBITMQ_* env "
              "vars.."),
        (0.9, f"rabbitmq {_hms(start, 0.9)} INFO  ==> Initializing RabbitMQ..."),
        (1.1, f"rabbitmq {_hms(start, 1.1)} INFO  ==> Persisted data detected. Restoring..."),
        (1.3, f"rabbitmq {_hms(start, 1.3)} INFO  ==> ** RabbitMQ setup finished! **"),
        (1.6, f"rabbitmq {_hms(start, 1.6)} INFO  ==> ** Starting RabbitMQ **"),
        (6.2, f"[info] <0.229.0> Starting RabbitMQ {NEW} on Erlang 26.2.5.6 [jit]"),
        (6.3, "[info] <0.229.0>  node           : rabbit@climate-broker-2.climate-broker-"
              f"headless.{NS}.svc.cluster.local"),
        (6.3, "[info] <0.229.0>  database dir   : /bitnami/rabbitmq/mnesia/rabbit@climate-"
              f"broker-2.climate-broker-headless.{NS}.svc.cluster.local"),
        (7.8, "[info] <0.229.0> Feature flags: list of feature flags found:"),
        (7.8, "[info] <0.229.0> Feature flags:   [x] classic_mirrored_queue_version"),
        (7.8, "[info] <0.229.0> Feature flags:   [ ] message_containers"),
        (7.8, "[info] <0.229.0> Feature flags:   [ ] stream_filtering"),
        (7.9, "[error] <0.229.0> Feature flags: `message_containers`: required feature flag "
              "not enabled! It must be enabled before upgrading RabbitMQ."),
        (7.9, "[error] <0.229.0> Failed to initialize feature flags registry: "
              "{disabled_required_feature_flag,message_containers}"),
        (8.1, "[error] <0.229.0> "),
        (8.1, "[error] <0.229.0> BOOT FAILED"),
        (8.1, "[error] <0.229.0> ==========="),
        (8.1, "[error] <0.229.0> Error during startup: {error,failed_to_initialize_feature_"
              "flags_registry}"),
        (8.2, "[error] <0.229.0> "),
        (8.4, f"[notice] <0.44.0> Application rabbit exited with reason: {{{{error,failed_to_"
              f"initialize_feature_flags_registry}},{{rabbit_prelaunch,start,[normal,[]]}}}} "
              f"on {node}"),
    ])


def build() -> Incident:
    s = Incident(
        id=ID, title="Greenhouse sensor gateways reconnecting, dashboard gaps", now=NOW,
        report="""\
Morning shift says the climate dashboard for houses 4-7 has gaps since about 8 this
morning (local), and the gateway screens show "reconnecting to broker" every few minutes.
Vents and heating still react, but with delay.
""",
        truth=truth(
            "crash_loop", "StatefulSet", NS, "climate-broker",
            ["BOOT FAILED", "required feature flag not enabled",
             "message_containers", "CrashLoopBackOff"],
            "The Helm upgrade of climate-broker from RabbitMQ 3.12.14 to 4.0.5 replaced "
            "member 2 first; 4.0.5 finds the required feature flag message_containers not "
            "enabled in its data directory and refuses to boot (BOOT FAILED, exit 1), so "
            "climate-broker-2 crash-loops and the rollout stalls. Roll the StatefulSet back to "
            "3.12.14, run `rabbitmqctl enable_feature_flag all` on the cluster, upgrade via "
            "3.13 and then to 4.0."))
    set_times(s, 2.0, 30)
    c = s.cluster
    namespaces(s, {"default": 700, "kube-system": 700, NS: 650, "monitoring": 690})
    kind = NodeKind("bm-epyc-16c-128g", "32", "131584064Ki", "31750m", "128438336Ki",
                    "v1.30.8", "6.1.0-28-amd64", "Debian GNU/Linux 12 (bookworm)",
                    runtime="containerd://1.7.24")
    nodes = provider_nodes(s, "kamaji", 3, kind, days=6.4)
    storage_class(s, "topolvm-ssd", "topolvm.io", {"topolvm.io/device-class": "ssd",
                                                   "csi.storage.k8s.io/fstype": "xfs"},
                  created=s.ago(days=640))
    t0 = NOW - timedelta(minutes=52, seconds=7)
    labels = {"app.kubernetes.io/name": "climate-broker", "app.kubernetes.io/instance":
              "climate-broker", "app.kubernetes.io/managed-by": "Helm"}

    def broker(version: str) -> PCtr:
        return PCtr("rabbitmq", f"docker.io/bitnami/rabbitmq:{version}", port=None,
                    requests={"cpu": "500m", "memory": "1Gi"}, limits={"memory": "2Gi"},
                    env={"RABBITMQ_USE_LONGNAME": "true", "K8S_SERVICE_NAME":
                         "climate-broker-headless", "RABBITMQ_FORCE_BOOT": "no",
                         "RABBITMQ_NODE_NAME": "rabbit@$(MY_POD_NAME).climate-broker-headless."
                         f"{NS}.svc.cluster.local"},
                    readiness={"exec": {"command": ["/bin/bash", "-ec", "rabbitmq-diagnostics "
                                                    "-q check_running && rabbitmq-diagnostics "
                                                    "-q check_local_alarms"]},
                               "initialDelaySeconds": 10, "periodSeconds": 30,
                               "timeoutSeconds": 20, "successThreshold": 1,
                               "failureThreshold": 3},
                    mounts=[{"mountPath": "/bitnami/rabbitmq/mnesia", "name": "data"}],
                    ports=[("amqp", 5672, "TCP"), ("dist", 25672, "TCP"),
                           ("stats", 15672, "TCP"), ("metrics", 9419, "TCP")])

    def tpl(version: str) -> Template:
        return Template([broker(version)], service_account="climate-broker",
                        labels={"app.kubernetes.io/version": version},
                        annotations={"checksum/config": "5c1e0b7f3e21c9d0a4b8e6f1c2d3a4b5"
                                     if version == OLD else "9a47d27f3e21c9d0a4b8e6f1c2d3a4b5"})
    old_born = [s.ago(days=5, hours=20, minutes=40 - 3 * i) for i in range(3)]
    new_born = t0 + timedelta(seconds=31)
    runs = runs_from(new_born + timedelta(seconds=4.2), NOW, lambda st: s.rng.uniform(8.2, 9.4),
                     pull=0.6, jitter=lambda: s.rng.uniform(0, 0.9))

    def states(i: int, started: datetime) -> dict[str, Obj]:
        if i == 2:
            return {"rabbitmq": container_status(
                runs, "climate-broker-2", NS, "rabbitmq", reason="Error", code=1,
                uid=c.uid("Pod", NS, "climate-broker-2"), ready=False)}
        return {}
    sts, pods = statefulset(
        s, NS, "climate-broker", tpl(NEW), replicas=3, nodes=nodes,
        revisions=[(9, s.ago(days=5, hours=20, minutes=45), tpl(OLD)), (10, t0, tpl(NEW))],
        pod_revision=lambda i: 10 if i == 2 else 9,
        born=lambda i: new_born if i == 2 else old_born[i], statuses=states,
        claim=("data", "20Gi", "topolvm-ssd"), labels=labels, created=s.ago(days=640),
        service="climate-broker-headless")
    sts.obj["metadata"]["annotations"] = {"meta.helm.sh/release-name": "climate-broker",
                                          "meta.helm.sh/release-namespace": NS}
    sts.obj["metadata"]["labels"]["helm.sh/chart"] = "rabbitmq-15.2.1"
    sts.obj["metadata"]["generation"] = 10
    fix_pod_ips(s)
    old_rev, new_rev = sts.revisions[0]["metadata"]["name"], sts.revisions[1]["metadata"]["name"]

    def sts_status(objects: list[Obj]) -> None:
        sts.obj["status"] = {"availableReplicas": 2, "collisionCount": 0, "currentReplicas": 2,
                             "currentRevision": old_rev, "observedGeneration": 10,
                             "readyReplicas": 2, "replicas": 3, "updateRevision": new_rev,
                             "updatedReplicas": 1}
    s.fixes.append(sts_status)
    ports = [{"name": "amqp", "port": 5672, "protocol": "TCP", "targetPort": "amqp"},
             {"name": "dist", "port": 25672, "protocol": "TCP", "targetPort": "dist"}]
    selector = dict(sts.obj["spec"]["selector"]["matchLabels"])
    head = add_service(s, NS, "climate-broker-headless", selector, ports,
                       created=s.ago(days=640), labels=labels, headless=True)
    add_endpoints(s, head, pods, [{"name": "amqp", "port": 5672, "protocol": "TCP"},
                                  {"name": "dist", "port": 25672, "protocol": "TCP"}])
    svc = add_service(s, NS, "climate-broker", selector, ports[:1], created=s.ago(days=640),
                      labels=labels)
    add_endpoints(s, svc, pods, [{"name": "amqp", "port": 5672, "protocol": "TCP"}])
    c.event(sts.obj, "SuccessfulDelete", "delete Pod climate-broker-2 in StatefulSet "
            "climate-broker successful", first=t0 + timedelta(seconds=1),
            component="statefulset-controller")
    c.event(sts.obj, "SuccessfulCreate", "create Pod climate-broker-2 in StatefulSet "
            "climate-broker successful", first=new_born, component="statefulset-controller")
    bad = pods[2]
    where = bad["spec"]["nodeName"]
    c.event(bad, "Scheduled", f"Successfully assigned {NS}/climate-broker-2 to {where}",
            first=new_born, component="default-scheduler", host="")
    c.event(bad, "Pulling", f'Pulling image "docker.io/bitnami/rabbitmq:{NEW}"',
            first=new_born + timedelta(seconds=0.8), field_path="spec.containers{rabbitmq}")
    c.event(bad, "Pulled", f'Successfully pulled image "docker.io/bitnami/rabbitmq:{NEW}" in '
            "3.118s (3.118s including waiting). Image size: 121904331 bytes.",
            first=runs[0].start - timedelta(seconds=0.3), field_path="spec.containers{rabbitmq}")
    restart_events(s, bad, "rabbitmq", runs, now=NOW, image=f"docker.io/bitnami/rabbitmq:{NEW}")
    restarts_series(s, bad, "rabbitmq", 0, kills(runs))
    gauge(s, "kube_pod_container_status_waiting_reason",
          {"namespace": NS, "pod": "climate-broker-2", "container": "rabbitmq",
           "reason": "CrashLoopBackOff"}, lambda t: 1.0 if t > runs[2].start.timestamp()
          else 0.0, "Describes the reason the container is currently in waiting state.",
          times=[t for t in s.times if t >= new_born.timestamp() + 25])
    node_name = f"rabbit@climate-broker-2.climate-broker-headless.{NS}.svc.cluster.local"
    s.pod_log(bad, "rabbitmq", _boot(runs[-1].start, node_name))
    s.pod_log(bad, "rabbitmq", _boot(runs[-2].start, node_name), previous=True)
    for r in runs:
        for line in _boot(r.start, node_name):
            stamp, text = line.split(" ", 1)
            level = "error" if "[error]" in text else "info"
            s.logs.add(datetime.fromisoformat(stamp.replace("Z", "+00:00")), level, text,
                       namespace=NS, pod="climate-broker-2", container="rabbitmq",
                       service="climate-broker", node=where)
    gauge(s, "kube_statefulset_status_replicas_ready", {"namespace": NS,
                                                       "statefulset": "climate-broker"},
          lambda t: 2.0 if t >= t0.timestamp() else 3.0,
          "The number of ready replicas per StatefulSet.")
    gauge(s, "kube_statefulset_status_replicas_updated", {"namespace": NS,
                                                         "statefulset": "climate-broker"},
          lambda t: 1.0 if t >= new_born.timestamp() else 3.0,
          "Number of updated replicas per StatefulSet.")
    for pod in pods[:2]:
        quiet(s, [pod], "rabbitmq", 640)
        gauge(s, "rabbitmq_connections", {"namespace": NS, "pod": pod["metadata"]["name"]},
              lambda t: 14.0 if t < t0.timestamp() else 21.0, "Connections currently open")
    log_pod(s, pods[0], "rabbitmq", "climate-broker", [
        ("info", "accepting AMQP connection 10.36.1.44:51822 -> 10.36.0.17:5672", {}),
        ("warning", f"node rabbit@climate-broker-2.climate-broker-headless.{NS}.svc.cluster."
         "local down: connection_closed", {}),
        ("info", "queue 'readings.house-5' in vhost '/': leader election, member on "
         "climate-broker-2 unavailable", {}),
    ], 50, start=t0)
    log_pod(s, pods[1], "rabbitmq", "climate-broker", [
        ("info", "accepting AMQP connection 10.36.2.19:40112 -> 10.36.1.21:5672", {}),
        ("info", "closing AMQP connection <0.8812.0> (10.36.2.19:40112 -> 10.36.1.21:5672, "
         "vhost: '/', user: 'gateway')", {}),
    ], 30)

    # ---- gateways and the dashboard
    gw = Ctr("sensor-gateway", f"{REG}/greenhouse/sensor-gateway:1.14.0", port=8080,
             requests={"cpu": "100m", "memory": "128Mi"}, limits={"memory": "256Mi"},
             env={"AMQP_URLS": "amqp://climate-broker-0.climate-broker-headless:5672,"
                  "amqp://climate-broker-1.climate-broker-headless:5672,"
                  "amqp://climate-broker-2.climate-broker-headless:5672"},
             readiness=http_probe("/healthz"))
    _, gws = steady(s, NS, "sensor-gateway", [gw], nodes=nodes, replicas=4, revision=28,
                    rollout=s.ago(days=3, hours=2), offset=1)
    quiet(s, gws, "sensor-gateway", 70)
    chatter(s, gws, "sensor-gateway", "sensor-gateway", [
        ("warn", "amqp://climate-broker-2.climate-broker-headless:5672: dial tcp "
         "10.36.2.31:5672: connect: connection refused, trying next broker", {}),
        ("warn", "publish to readings.house-6 unconfirmed after 5s, buffering 184 readings",
         {}),
        ("info", "reconnected to amqp://climate-broker-0.climate-broker-headless:5672", {}),
        ("info", "published 48 readings (house-4, house-5)", {}),
    ], 140, start=t0 + timedelta(minutes=1))
    chatter(s, gws, "sensor-gateway", "sensor-gateway", [
        ("info", "published 52 readings (house-6, house-7)", {}),
    ], 50, end=t0)

    # ---- red herrings
    db_roll = NOW - timedelta(minutes=24)
    dash = Ctr("climate-dashboard", f"{REG}/greenhouse/climate-dashboard:3.3.0", port=3000,
               requests={"cpu": "100m", "memory": "192Mi"}, limits={"memory": "256Mi"},
               readiness=http_probe("/api/health"))
    _, dashes = steady(s, NS, "climate-dashboard", [dash], nodes=nodes, replicas=2,
                       revision=64, rollout=db_roll, offset=2, old=(63, s.ago(days=6), [Ctr(
                           "climate-dashboard", f"{REG}/greenhouse/climate-dashboard:3.2.7",
                           port=3000)]))
    quiet(s, dashes, "climate-dashboard", 120)
    chatter(s, dashes, "climate-dashboard", "climate-dashboard", [
        ("warn", "series house-6/humidity: no points in last 300s", {}),
        ("info", "GET /houses/5 200 41ms", {}),
        ("warn", "deprecated chart option 'smoothLines' ignored", {}),
    ], 40, start=db_roll)
    ip = Ctr("irrigation-planner", f"{REG}/greenhouse/irrigation-planner:0.21.3", port=8080,
             requests={"cpu": "200m", "memory": "512Mi"}, limits={"memory": "768Mi"})
    _, ips = steady(s, NS, "irrigation-planner", [ip], nodes=nodes, replicas=1, revision=12,
                    rollout=s.ago(days=4, hours=9),
                    restarted={0: (s.ago(days=1, hours=3), "OOMKilled", 137)})
    quiet(s, ips, "irrigation-planner", 430)
    return s
