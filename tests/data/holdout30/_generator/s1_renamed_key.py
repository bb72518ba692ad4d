"""Shape 1: a rollout renames a config key; the new pods exit at start (CrashLoopBackOff)
while the previous ReplicaSet's pods keep serving. A neighbour in the namespace carries
restarts from an OOM kill two days earlier."""

from __future__ import annotations

from datetime import datetime, timedelta

from .k8s import (
    MiB,
    PodState,
    Revision,
    backends,
    configmap,
    container,
    deployment,
    http_probe,
    namespace,
    node,
    service,
    terminated,
)
from .kit import World, iso_ms, parse
from .signals import bystander, container_metrics, daily, http_metrics, pod_series, wobble


def crash_starts(first: datetime, now: datetime, run_s: float) -> list[datetime]:
    """Container start times of a crash loop: kubelet's back-off doubles from 10s to 5m."""
    starts, moment, delay = [], first, 10.0
    while moment < now:
        starts.append(moment)
        moment += timedelta(seconds=run_s + delay)
        delay = min(delay * 2, 300.0)
    return starts


def build() -> World:
    now = parse("2026-11-24T15:02:00Z")
    w = World(
        "fulfilment-restarts-after-deploy",
        "Restarts alert in fulfilment after the afternoon deploy",
        now,
        "restart alerts firing in fulfilment since ~14:25. shipment-api and label-printer both "
        "show restarts on the dashboard, label-printer was OOMing earlier this week too so "
        "maybe memory again? warehouse says labels are coming through but slower. can "
        "someone look before the 16:00 cutoff",
        {"category": "crash_loop",
         "culprit": {"kind": "Deployment", "namespace": "fulfilment", "name": "shipment-api"},
         "evidence": ['required key "rates.provider.base_url" is not set',
                      "CrashLoopBackOff", "exiting with status 78",
                      "rates.provider_url"],
         "fix": "Rename rates.provider_url to rates.provider.base_url in the shipment-api-config "
                "ConfigMap (or roll shipment-api back to 3.7.4) so that 3.8.0 starts; the "
                "label-printer restarts are two days old and unrelated."},
        seed=3001,
    )
    long_ago = parse("2025-03-11T09:14:00Z")
    namespace(w, "fulfilment", long_ago)
    namespace(w, "kube-system", long_ago)
    nodes = [f"ip-10-20-{n}.eu-west-1.compute.internal" for n in ("14-203", "31-77", "42-118")]
    for i, name in enumerate(nodes):
        node(w, name, now - timedelta(days=9 + i), zone=f"eu-west-1{'abc'[i]}")

    # shipment-api: revision 13 (3.7.4) serves; revision 14 (3.8.0) crash-loops.
    rollout = now - timedelta(minutes=38)
    settings = [{"name": "config", "configMap": {"name": "shipment-api-config"}}]
    mount = [{"name": "config", "mountPath": "/etc/shipment", "readOnly": True}]
    env = [{"name": "SPRING_PROFILES_ACTIVE", "value": "prod"},
           {"name": "SHIPMENT_CONFIG", "value": "/etc/shipment/application.yaml"}]

    def api(tag: str) -> dict[str, object]:
        return container("shipment-api", f"registry.corp.example/fulfilment/shipment-api:{tag}",
                         memory="768Mi", cpu="500m", env=env, mounts=mount,
                         liveness=http_probe("/actuator/health/liveness", 8080, delay=30),
                         readiness=http_probe("/actuator/health/readiness", 8080, delay=10))
    old_start = now - timedelta(days=3, hours=4, minutes=12)
    old = Revision(13, old_start, [api("3.7.4")], volumes=settings, pods=[
        PodState(node=nodes[i], created=old_start + timedelta(seconds=50 * i)) for i in range(3)])
    new_pods = []
    loops = []
    for i in range(2):
        created = rollout + timedelta(seconds=2 + 61 * i)
        starts = crash_starts(created + timedelta(seconds=6), now, 4.5)
        loops.append(starts)
        last_start = starts[-1]
        finished = last_start + timedelta(seconds=4)
        in_backoff = now > finished
        new_pods.append(PodState(
            node=nodes[(i + 1) % 3], created=created, ready=False,
            waiting=("CrashLoopBackOff", "back-off 5m0s restarting failed container="
                     "shipment-api pod=shipment-api-{rs}") if in_backoff else None,
            last=terminated("Error", 78, starts[-1 if in_backoff else -2],
                            starts[-1 if in_backoff else -2] + timedelta(seconds=4)),
            restarts=len(starts) - 1, started=last_start))
    new = Revision(14, rollout, [api("3.8.0")], volumes=settings, pods=new_pods)
    deployment(w, "fulfilment", "shipment-api", long_ago, [old, new], replicas=4,
               team="fulfilment", progressing=(
                   "False", "ProgressDeadlineExceeded",
                   'ReplicaSet "shipment-api-{h}" has timed out progressing.'))
    _fix_placeholders(w, new.hash)
    service(w, "fulfilment", "shipment-api", long_ago, target=8080,
            backends=backends(w, "fulfilment", [old]),
            not_ready=[(n, s.ip or "") for n, s in zip(new.pod_names, new.pods, strict=True)])
    configmap(w, "fulfilment", "shipment-api-config", long_ago + timedelta(days=200), {
        "application.yaml": (
            "server:\n  port: 8080\n"
            "rates:\n  provider_url: https://rates.carrier-hub.example/v2\n"
            "  timeout_ms: 2500\n  cache_ttl: 10m\n"
            "labels:\n  printer_service: http://label-printer.fulfilment.svc:8080\n"
            "datasource:\n  url: jdbc:postgresql://fulfilment-db.fulfilment.svc:5432/shipments\n"
            "  pool_size: 20\n")})

    # The serving pods: steady traffic, 3.7.4's own deprecation warning at start-up.
    for pod_name, state in zip(old.pod_names, old.pods, strict=True):
        s = pod_series(w, "fulfilment", pod_name, "shipment-api", state.node, state.created)
        base = wobble(w, 430 * MiB)
        container_metrics(w, s, memory=lambda t, b=base: b, cpu=lambda t: 0.21 * daily(t),
                          memory_limit=768 * MiB)
        http_metrics(w, s, rate=lambda t: 14 * daily(t) * (1.3 if t > rollout else 1.0),
                     error_share=lambda t: 0.001, latency=lambda t: 0.06 if t < rollout else 0.085,
                     handler="/v1/shipments", histogram=False)
        boot = state.created + timedelta(seconds=9)
        w.pod_log("fulfilment", pod_name, "shipment-api", [
            f"{iso_ms(boot)} INFO  shipment-api 3.7.4 starting (commit 41c0d9e, profile=prod)",
            f"{iso_ms(boot + timedelta(seconds=1))} INFO  loading configuration from "
            "/etc/shipment/application.yaml",
            f"{iso_ms(boot + timedelta(seconds=1))} WARN  config key rates.provider_url is "
            "deprecated and will no longer be read from 3.8, use rates.provider.base_url",
            f"{iso_ms(boot + timedelta(seconds=6))} INFO  Started ShipmentApiApplication in "
            "6.2 seconds",
            *(f"{iso_ms(now - timedelta(seconds=17 * k + 3))} INFO  POST /v1/shipments 201 "
              f"{w.rng.randint(40, 160)}ms" for k in range(40, 0, -1)),
        ])
        w.log(boot + timedelta(seconds=1), "fulfilment", pod_name, "shipment-api",
              "shipment-api", "warn", "config key rates.provider_url is deprecated and will no "
              "longer be read from 3.8, use rates.provider.base_url")
    moment = now - timedelta(hours=3)
    while moment < now:
        pod = w.rng.choice(old.pod_names)
        w.log(moment, "fulfilment", pod, "shipment-api", "shipment-api", "info",
              f"POST /v1/shipments 201 {w.rng.randint(40, 160)}ms")
        if w.rng.random() < 0.03:
            w.log(moment, "fulfilment", pod, "shipment-api", "shipment-api", "warn",
                  "carrier-hub rate quote took 2.1s (timeout 2.5s), serving cached rate")
        moment += timedelta(seconds=w.rng.uniform(20, 70))

    # The crash-looping pods: the same four lines at every start.
    for pod_name, state, starts in zip(new.pod_names, new.pods, loops, strict=True):
        def boot_lines(at: datetime) -> list[tuple[datetime, str, str]]:
            return [
                (at, "info", "shipment-api 3.8.0 starting (commit 9f3e1c2, profile=prod)"),
                (at + timedelta(milliseconds=240), "info",
                 "loading configuration from /etc/shipment/application.yaml"),
                (at + timedelta(milliseconds=300), "error",
                 'config validation failed: required key "rates.provider.base_url" is not '
                 "set (1 error)"),
                (at + timedelta(milliseconds=302), "fatal",
                 "cannot start without a valid configuration, exiting with status 78"),
            ]
        for at in starts:
            for when, level, text in boot_lines(at):
                w.log(when, "fulfilment", pod_name, "shipment-api", "shipment-api", level, text)
        in_backoff = state.waiting is not None
        for previous, at in ((True, starts[-1 if in_backoff else -2]), (False, starts[-1])):
            if not previous and state.waiting is not None:
                continue
            w.pod_log("fulfilment", pod_name, "shipment-api",
                      [f"{iso_ms(t)} {lvl.upper():5} {text}" for t, lvl, text in boot_lines(at)],
                      previous=previous)
        s = pod_series(w, "fulfilment", pod_name, "shipment-api", state.node, state.created)
        container_metrics(w, s, memory=lambda t: 180 * MiB, cpu=lambda t: 0.02,
                          memory_limit=768 * MiB, restarts=state.restarts,
                          restart_at=starts[1:], last_reason="Error")
        first = state.created
        w.event("fulfilment", "Pod", pod_name, "Scheduled",
                f"Successfully assigned fulfilment/{pod_name} to {state.node}",
                first=first, component="default-scheduler")
        w.event("fulfilment", "Pod", pod_name, "Pulled",
                'Container image "registry.corp.example/fulfilment/shipment-api:3.8.0" already '
                "present on machine", first=first + timedelta(seconds=5), last=starts[-1],
                count=len(starts), host=state.node, field_path="spec.containers{shipment-api}")
        w.event("fulfilment", "Pod", pod_name, "Created", "Created container shipment-api",
                first=first + timedelta(seconds=5), last=starts[-1], count=len(starts),
                host=state.node, field_path="spec.containers{shipment-api}")
        w.event("fulfilment", "Pod", pod_name, "Started", "Started container shipment-api",
                first=first + timedelta(seconds=6), last=starts[-1], count=len(starts),
                host=state.node, field_path="spec.containers{shipment-api}")
        w.event("fulfilment", "Pod", pod_name, "BackOff",
                f"Back-off restarting failed container shipment-api in pod {pod_name}"
                "_fulfilment(" + w.uid() + ")", first=starts[1] - timedelta(seconds=8),
                last=now - timedelta(seconds=20), count=4 * len(starts) + 3, type_="Warning",
                host=state.node, field_path="spec.containers{shipment-api}")
    rs_new, rs_old = f"shipment-api-{new.hash}", f"shipment-api-{old.hash}"
    w.event("fulfilment", "Deployment", "shipment-api", "ScalingReplicaSet",
            f"Scaled up replica set {rs_new} to 1", first=rollout,
            component="deployment-controller")
    w.event("fulfilment", "Deployment", "shipment-api", "ScalingReplicaSet",
            f"Scaled down replica set {rs_old} to 3 from 4", first=rollout + timedelta(seconds=1),
            component="deployment-controller")
    w.event("fulfilment", "Deployment", "shipment-api", "ScalingReplicaSet",
            f"Scaled up replica set {rs_new} to 2 from 1", first=rollout + timedelta(seconds=62),
            component="deployment-controller")

    # label-printer: two OOM kills on Saturday, healthy since.
    lp = bystander(w, "fulfilment", "label-printer", replicas=2, nodes=nodes[1:],
                   image="registry.corp.example/fulfilment/label-printer:1.19.2",
                   created=long_ago, rev_created=now - timedelta(days=6, hours=2),
                   memory_mib=610, memory_limit="1Gi", cpu_cores=0.12, rps=5, median_s=0.18,
                   team="fulfilment", revision=22,
                   messages=[("rendered ZPL label for shipment {n} in {ms}ms", "info"),
                             ("printer pool: 6 of 6 printers online", "debug")])
    oom_at = now - timedelta(days=2, hours=3, minutes=40)
    for pod_obj in w.objects:
        meta = pod_obj.get("metadata", {})
        if pod_obj["kind"] == "Pod" and meta.get("name") in lp.pod_names:
            restarts = 2 if meta["name"] == lp.pod_names[0] else 1
            cs = pod_obj["status"]["containerStatuses"][0]
            cs["restartCount"] = restarts
            cs["lastState"] = {"terminated": terminated(
                "OOMKilled", 137, oom_at - timedelta(hours=5, minutes=restarts * 7), oom_at +
                timedelta(minutes=restarts * 11))}
            cs["state"] = {"running": {"startedAt": cs["lastState"]["terminated"]["finishedAt"]}}
    for pod_name in lp.pod_names:
        restarts = 2 if pod_name == lp.pod_names[0] else 1
        w.gauge("kube_pod_container_status_last_terminated_reason",
                {"namespace": "fulfilment", "pod": pod_name, "container": "label-printer",
                 "reason": "OOMKilled"}, w.steps(), lambda t: 1.0)
        _set_restarts(w, "fulfilment", pod_name, "label-printer", restarts)

    router = bystander(w, "fulfilment", "order-router", replicas=3, nodes=nodes,
              image="registry.corp.example/fulfilment/order-router:2.4.0", created=long_ago,
              rev_created=now - timedelta(days=5, hours=1), memory_mib=300, memory_limit="512Mi",
              cpu_cores=0.08, rps=22, median_s=0.03, team="fulfilment", revision=31,
              messages=[("routed order {n} to warehouse DUB-2", "info")])
    w.event("fulfilment", "Pod", router.pod_names[1], "Unhealthy",
            'Readiness probe failed: Get "http://' + (router.pods[1].ip or "") + ':8080/ready": '
            "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            first=now - timedelta(minutes=51), last=now - timedelta(minutes=49), count=2,
            type_="Warning", host=router.pods[1].node, field_path="spec.containers{order-router}")
    return w


def _fix_placeholders(w: World, new_hash: str) -> None:
    """Pod names are only known once the ReplicaSet exists; fill them into the waiting
    messages and the Deployment's condition."""
    for obj in w.objects:
        if obj["kind"] == "Pod":
            for cs in obj["status"].get("containerStatuses", []):
                waiting = cs.get("state", {}).get("waiting")
                if waiting and "{rs}" in waiting.get("message", ""):
                    waiting["message"] = waiting["message"].replace(
                        "shipment-api-{rs}", f"{obj['metadata']['name']}_fulfilment("
                        f"{obj['metadata']['uid']})")
        if obj["kind"] == "Deployment":
            for cond in obj["status"]["conditions"]:
                cond["message"] = cond["message"].replace("{h}", new_hash)


def _set_restarts(w: World, ns: str, pod: str, cname: str, value: int) -> None:
    family = w.families["kube_pod_container_status_restarts_total"]
    for (name, labels), samples in family.series.items():
        if dict(labels).get("pod") == pod:
            family.series[(name, labels)] = [(t, float(value)) for t, _ in samples]
