"""Freight customs: declarations slow since the tariff-classifier 5.0.0 rollout. The new
version (Spring Boot 3, larger HS-code model) needs ~75 s to start, but its startupProbe
allows 30 s (period 10, failureThreshold 3): the kubelet kills each new pod during warm-up
(exit 143), the rollout never progresses and two old pods of 4.8.2 carry the load (the
third was replaced by the surge). Red herrings: exit 143 looks like a crash, GC warnings,
slow tariff-db queries."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import set_times
from tests.data.holdout2._generator.kit import (
    NodeKind,
    kills,
    requests,
    restarts_series,
    runs_from,
)
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, Template, http_probe, running
from tests.scenario_tools.sim import container_status, restart_events

from .kit5 import Incident, provider_nodes

ID = "customs-declarations-sluggish"
NOW = datetime.fromisoformat("2027-02-17T11:14:00+00:00")
NS = "freight-customs"
REG = "harbor.tkg.example/customs"


def _ctr(version: str, startup: bool) -> Ctr:
    return Ctr("tariff-classifier", f"{REG}/tariff-classifier:{version}", port=8080,
               requests={"cpu": "1", "memory": "2Gi"}, limits={"cpu": "2", "memory": "3Gi"},
               env={"JAVA_TOOL_OPTIONS": "-XX:MaxRAMPercentage=70", "MODEL": "hs-2027-v3"},
               readiness=http_probe("/actuator/health/readiness", delay=0, period=5),
               liveness=http_probe("/actuator/health/liveness", delay=0, period=10),
               startup=http_probe("/actuator/health/liveness", delay=0, period=10,
                                  failures=3) if startup else None)


def build() -> Incident:
    s = Incident(
        id=ID, title="Customs declarations slow after a release", now=NOW,
        report="""\
tariff-classifier: brokers say submitting customs declarations takes 10+ seconds and some
fail with "classification unavailable". We deployed 5.0.0 about 50 minutes ago and Argo still
shows it progressing. The new pods restart with exit code 143, is the new version crashing?
""",
        truth=truth(
            "probe_failure", "Deployment", NS, "tariff-classifier",
            ["Startup probe failed", "failed startup probe, will be restarted",
             "connection refused", "Started TariffClassifierApplication in 7"],
            "tariff-classifier 5.0.0 needs about 75 s to warm up (model load, Spring Boot 3), "
            "but its startupProbe gives it 30 s (periodSeconds 10, failureThreshold 3): the "
            "kubelet kills every new pod during start-up (exit 143). Raise the startupProbe's "
            "failureThreshold (e.g. 18) and the rollout will complete; 4.8.2 serves meanwhile."))
    set_times(s, 2.0, 30)
    c = s.cluster
    namespaces(s, {"default": 900, "kube-system": 900, NS: 720, "broker-portal": 610})
    kind = NodeKind("best-effort-large", "8", "32880248Ki", "7910m", "32265848Ki",
                    "v1.29.4+vmware.3-fips.1", "5.15.0-113-generic", "Ubuntu 22.04.4 LTS")
    nodes = provider_nodes(s, "tkg", 4, kind, days=6.9)
    rollout = NOW - timedelta(minutes=51, seconds=20)
    old, new = _ctr("4.8.2", False), _ctr("5.0.0", True)
    work = c.workload("Deployment", NS, "tariff-classifier",
                      Template([new], service_account="tariff-classifier"), replicas=3,
                      created=s.ago(days=500))
    old_rs = c.revision(work, 44, s.ago(days=9), Template([old],
                        service_account="tariff-classifier"), replicas=2)
    new_rs = c.revision(work, 45, rollout, replicas=2)
    olds = []
    for i in range(2):
        born = s.ago(days=5, hours=3) + timedelta(seconds=30 * i)
        olds.append(c.pod(work, old_rs, node=nodes[i], created=born,
                          statuses={"tariff-classifier": running(born + timedelta(
                              seconds=58))}))
    news = []
    for i in range(2):
        born = rollout + timedelta(seconds=1 + 74 * i)
        name = f"{new_rs['metadata']['name']}-{c.token(5)}"
        runs = runs_from(born + timedelta(seconds=6), NOW,
                         lambda t: 31.0 + s.rng.uniform(0, 1.5), pull=0.4,
                         jitter=lambda: s.rng.uniform(0, 0.5))
        st = container_status(runs, name, NS, "tariff-classifier", reason="Error", code=143,
                              uid=c.uid("Pod", NS, name), ready=False)
        pod = c.pod(work, new_rs, node=nodes[2 + i], created=born, name=name,
                    statuses={"tariff-classifier": st})
        news.append((pod, runs))
        fp = "spec.containers{tariff-classifier}"
        c.event(new_rs, "SuccessfulCreate", f"Created pod: {name}", first=born,
                component="replicaset-controller")
        c.event(pod, "Scheduled", f"Successfully assigned {NS}/{name} to "
                f"{pod['spec']['nodeName']}", first=born, component="default-scheduler",
                host="")
        restart_events(s, pod, "tariff-classifier", runs, now=NOW, image=new.image)
        probes = sum(3 for r in runs if r.end is not None) + 1
        ip = pod["status"]["podIP"]
        c.event(pod, "Unhealthy", "Startup probe failed: Get \"http://" + ip + ":8080/actuator/"
                "health/liveness\": dial tcp " + ip + ":8080: connect: connection refused",
                first=runs[0].start + timedelta(seconds=10), last=runs[-1].start +
                timedelta(seconds=10), count=probes, type_="Warning", field_path=fp)
        c.event(pod, "Killing", "Container tariff-classifier failed startup probe, will be "
                "restarted", first=runs[0].start + timedelta(seconds=30), last=[
                    r for r in runs if r.end][-1].end or NOW, count=len(kills(runs)) or 1,
                field_path=fp)
        restarts_series(s, pod, "tariff-classifier", 0, kills(runs))
        boot = runs[-2] if runs[-1].end is None else runs[-1]
        t0 = boot.start
        s.pod_log(pod, "tariff-classifier", [
            f"{t0:%Y-%m-%dT%H:%M:%S}.201Z  INFO 1 --- [main] c.c.TariffClassifierApplication"
            " : Starting TariffClassifierApplication v5.0.0 using Java 21.0.5",
            f"{t0 + timedelta(seconds=9):%Y-%m-%dT%H:%M:%S}.877Z  INFO 1 --- [main] "
            "c.c.model.HsModelLoader : loading model hs-2027-v3 (1.9 GB, 512k codes)",
            f"{t0 + timedelta(seconds=29):%Y-%m-%dT%H:%M:%S}.412Z  INFO 1 --- [main] "
            "c.c.model.HsModelLoader : model 38% loaded",
            f"{t0 + timedelta(seconds=30):%Y-%m-%dT%H:%M:%S}.990Z  INFO 1 --- [ionShutdownHook]"
            " o.s.b.w.e.tomcat.GracefulShutdown : Commencing graceful shutdown"],
            previous=True)
    work.progressing = ("ReplicaSetUpdated", f'ReplicaSet "{new_rs["metadata"]["name"]}" is '
                        "progressing.", rollout + timedelta(seconds=75))
    c.event(work.obj, "ScalingReplicaSet", f"Scaled down replica set "
            f"{old_rs['metadata']['name']} from 3 to 2", first=rollout + timedelta(seconds=74),
            component="deployment-controller")
    c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set "
            f"{new_rs['metadata']['name']} from 1 to 2", first=rollout + timedelta(seconds=75),
            component="deployment-controller")
    cut = rollout.timestamp() + 74
    for pod in olds:
        quiet(s, [pod], "tariff-classifier", 2150)
        requests(s, pod, "tariff-classifier", rps=lambda t: 9.0 if t < cut else 13.5, codes={
            "200": lambda t: 0.995 if t < cut else 0.93,
            "503": lambda t: 0.0 if t < cut else 0.07},
            median=lambda t: 0.4 if t < cut else 4.8, buckets=(0.5, 1.0, 2.5, 5.0, 10.0))
    chatter(s, olds, "tariff-classifier", "tariff-classifier", [
        ("info", "classified declaration CD-27-0044812 (34 lines) in 380ms", {}),
        ("warn", "tariff-db query duties_by_origin took 1210ms", {}),
        ("warn", "G1 humongous allocation 64M, young GC 88ms", {}),
    ], 180)
    chatter(s, olds, "tariff-classifier", "tariff-classifier", [
        ("error", "request rejected: executor queue full (200), returning 503", {}),
    ], 60, start=rollout + timedelta(minutes=2))
    pg = Ctr("postgres", f"{REG}/postgres:15.8", port=5432, port_name="pg",
             requests={"cpu": "1", "memory": "4Gi"}, limits={"memory": "4Gi"})
    _, pgs = steady(s, NS, "tariff-db", [pg], nodes=nodes, replicas=1, revision=5,
                    rollout=s.ago(days=6), service=5432, target="pg", offset=3)
    quiet(s, pgs, "postgres", 2900)
    chatter(s, pgs, "postgres", "tariff-db", [
        ("warn", "duration: 1210.4 ms statement: SELECT * FROM duties WHERE origin = $1", {}),
        ("info", "automatic vacuum of table \"customs.public.declaration_line\"", {}),
    ], 40)
    bp = Ctr("broker-portal", f"{REG}/broker-portal:3.9.0", port=8080,
             requests={"cpu": "200m", "memory": "512Mi"}, limits={"memory": "768Mi"})
    _, bps = steady(s, "broker-portal", "broker-portal", [bp], nodes=nodes, replicas=2,
                    revision=27, rollout=s.ago(days=1, hours=20))
    quiet(s, bps, "broker-portal", 400)
    chatter(s, bps, "broker-portal", "broker-portal", [
        ("warn", "tariff-classifier answered 503 for CD-27-0044901, retrying", {}),
        ("info", "declaration CD-27-0044877 submitted to customs authority", {}),
    ], 80, start=rollout)
    return s
