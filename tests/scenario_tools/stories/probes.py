"""probe_failure stories: a readiness path the app no longer serves, a liveness probe that
kills a slow-starting JVM before it is up."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from tests.scenario_tools.common import (
    MIB,
    Story,
    const,
    container_metrics,
    deployment_metrics,
    http_metrics,
    kube_system,
    namespaces,
    nodes,
    noise_logs,
    story,
    truth,
)
from tests.scenario_tools.failures import not_ready, probe_events
from tests.scenario_tools.kube import Ctr, Obj, Template, http_probe
from tests.scenario_tools.parts import ghost_pod, neighbour, readiness_blip, rollout
from tests.scenario_tools.sim import Run, container_status, deaths, lifecycle, restart_events

ACR = "acmeprod.azurecr.io"


@story
def profile_readiness_path() -> Story:
    s = Story("profile-readiness-path", "profile-api pods never become ready",
              datetime(2026, 12, 8, 10, 20, tzinfo=UTC),
              "profile-api 6.3.0 rollout hangs: the new pods are Running but stay 0/1 "
              "ready. their logs look clean. accounts namespace",
              truth("probe_failure", "Deployment", "accounts", "profile-api",
                    ["Readiness probe failed", "statuscode: 404", "/healthz"],
                    "6.3.0 serves its health check at /health/ready (framework upgrade); the "
                    "readiness probe still asks /healthz and gets 404: point the probe at the "
                    "new path"),
              hours=2.0, nested_logs=True)
    namespaces(s, "accounts", "identity")
    node_list = nodes(s, 3, subnet=81, region="westeurope", instance="Standard_D4s_v5")
    kube_system(s, node_list)
    at = s.ago(minutes=23)

    def ctr(version: str) -> Ctr:
        return Ctr("profile-api", f"{ACR}/accounts/profile-api:{version}",
                   requests={"cpu": "250m", "memory": "384Mi"}, limits={"memory": "512Mi"},
                   readiness=http_probe("/healthz", delay=5, period=10),
                   liveness=http_probe("/livez", delay=20, period=20),
                   env={"ASPNETCORE_URLS": "http://+:8080", "Profiles__Store": "cosmos"})

    roll = rollout(s, "accounts", "profile-api", ctr, old="6.2.0", new="6.3.0", at=at,
                   revision=74, replicas=4, node_list=node_list, complete=False, old_left=3,
                   pods_of_new=2, statuses=lambda i, t, n: {"profile-api": not_ready(t)})
    deployment_metrics(s, roll.work, lambda t: 4 if t < at.timestamp() else 3)
    for pod in roll.new_pods:
        ip = pod["status"]["podIP"]
        started = datetime.fromisoformat(pod["status"]["containerStatuses"][0]["state"][
            "running"]["startedAt"].replace("Z", "+00:00"))
        probe_events(s, pod, "profile-api", "HTTP probe failed with statuscode: 404",
                     since=started + timedelta(seconds=5), period=10)
        container_metrics(s, pod, "profile-api", memory=lambda t: 141 * MIB, cpu=const(0.01))
        http_metrics(s, "profile-api", pod, rps=const(0.15), codes={"404": const(1.0)},
                     median=const(0.002))
        lines = [_aspnet(started + timedelta(seconds=1), "Information",
                         "Microsoft.Hosting.Lifetime", "Now listening on: http://[::]:8080"),
                 _aspnet(started + timedelta(seconds=1, milliseconds=40), "Information",
                         "Microsoft.Hosting.Lifetime", "Application started. Press Ctrl+C to "
                         "shut down."),
                 _aspnet(started + timedelta(seconds=1, milliseconds=41), "Information",
                         "Microsoft.Hosting.Lifetime", "Hosting environment: Production")]
        for k in range(12):
            when = started + timedelta(seconds=5 + 10 * k, milliseconds=s.rng.randrange(900))
            lines.append(_aspnet(when, "Information", "Microsoft.AspNetCore.Hosting.Diagnostics",
                                 f"Request finished HTTP/1.1 GET http://{ip}:8080/healthz - 404 "
                                 "0 - 0.4127ms"))
        s.pod_log(pod, "profile-api", lines)
        for _ in range(12):
            when = started + timedelta(seconds=s.rng.uniform(10, (s.now - started).seconds))
            s.logs.add(when, "info", f"Request finished HTTP/1.1 GET http://{ip}:8080/healthz "
                       "- 404 0 - 0.3981ms", namespace="accounts", pod=pod["metadata"]["name"],
                       container="profile-api", service="profile-api",
                       node=pod["spec"]["nodeName"], http__response__status_code=404,
                       url__path="/healthz", user_agent__original="kube-probe/1.33")
    for pod in roll.old_pods:
        container_metrics(s, pod, "profile-api", memory=lambda t: 233 * MIB, cpu=const(0.09))
        http_metrics(s, "profile-api", pod, rps=const(11.0), codes={
            "200": const(0.97), "401": const(0.02), "404": const(0.01)}, median=const(0.03))
        if "_deleted" not in pod["metadata"]:
            noise_logs(s, pod, "profile-api", "profile-api", [
                ("info", "Request finished HTTP/1.1 GET /v1/profiles/{id} - 200", {}),
                ("warn", "Request finished HTTP/1.1 GET /v1/profiles/{id} - 401 (token "
                 "expired)", {"http.response.status_code": 401})], 20)
    neighbour(s, "identity", "token-service", f"{ACR}/identity/token-service:11.0.2", node_list,
              logs=[("warn", "JWKS refresh took 1200ms", {}), ("info", "token issued", {}),
                    ("error", "invalid_grant: refresh token revoked", {})], n_logs=30, rps=40,
              codes={"200": 0.97, "400": 0.03}, revision=31)
    readiness_blip(s, "identity", "admin-portal", f"{ACR}/identity/admin-portal:2.0.1",
                   node_list, port=8080, path="/ready", minutes_ago=51)
    return s


def _aspnet(when: datetime, level: str, category: str, message: str) -> str:
    return json.dumps({"Timestamp": when.isoformat(timespec="milliseconds").replace(
        "+00:00", "Z"), "LogLevel": level, "Category": category, "Message": message},
        separators=(",", ":"))


def _spring(when: datetime, level: str, logger: str, message: str) -> str:
    stamp = when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"
    return f"{stamp} {level:>5} 1 --- [search-api] [main] {logger:<40} : {message}"


@story
def search_api_liveness() -> Story:
    s = Story("search-api-liveness", "search-api restarting after node maintenance",
              datetime(2026, 12, 12, 7, 45, tzinfo=UTC),
              "search is down since the node maintenance this morning, search-api pods keep "
              "restarting and the search page shows errors",
              truth("probe_failure", "Deployment", "search", "search-api",
                    ["Liveness probe failed", "failed liveness probe, will be restarted",
                     "connection refused", "exit code 143"],
                    "search-api now needs ~85 s to start (the synonym dictionaries grew) and "
                    "the liveness probe kills it after 60 s: add a startupProbe or raise "
                    "initialDelaySeconds"),
              hours=2.0, interventions=[{"after_step": 2, "text": "the maintenance was "
                                         "a planned AMI rotation, all nodes are new and Ready"}])
    namespaces(s, "search", "web")
    c = s.cluster
    rotated = s.ago(minutes=41)
    old_nodes = [{"metadata": {"name": f"ip-10-58-{i}-{40 + 17 * i}.ap-southeast-2.compute."
                               "internal"}} for i in range(1, 4)]
    node_list = nodes(s, 3, subnet=58, region="ap-southeast-2", instance="r6i.xlarge",
                      memory="32Gi", allocatable_memory="30310Mi", days=0.031,
                      stagger_hours=0.04)
    for node in node_list:
        name = node["metadata"]["name"]
        born = datetime.fromisoformat(node["metadata"]["creationTimestamp"].replace("Z",
                                                                                    "+00:00"))
        c.event(node, "NodeReady", f"Node {name} status is now: NodeReady",
                first=born + timedelta(seconds=35), host=name)
        c.event(node, "RegisteredNode", f"Node {name} event: Registered Node {name} in "
                "Controller", first=born + timedelta(seconds=3), component="node-controller")
    kube_system(s, node_list)
    image = "ghcr.io/acme-search/search-api:2.15.3"
    liveness = http_probe("/actuator/health/liveness", delay=30, period=10, failures=3)
    tpl = Template([Ctr("search-api", image, requests={"cpu": "1", "memory": "3Gi"},
                        limits={"memory": "3Gi"}, env={"JAVA_TOOL_OPTIONS":
                                                       "-XX:MaxRAMPercentage=75"},
                        readiness=http_probe("/actuator/health/readiness", delay=20, period=5),
                        liveness=liveness)], service_account="search-api")
    work = c.workload("Deployment", "search", "search-api", tpl, replicas=3,
                      created=s.ago(days=400))
    rs_at = s.ago(days=6, hours=2)
    rs = c.revision(work, 57, rs_at, tpl, replicas=3)
    c.service("search", "search-api", {"app.kubernetes.io/name": "search-api"},
              created=s.ago(days=400))
    ghosts = [ghost_pod(s, rs, old_nodes[i], rs_at + timedelta(seconds=20 * i),
                        rotated + timedelta(minutes=2 * i)) for i in range(3)]
    for i, node in enumerate(node_list):
        created = rotated + timedelta(minutes=2 * i, seconds=1)
        runs = lifecycle(created + timedelta(seconds=25), s.now,
                         lambda t: 61 + s.rng.uniform(0, 4))
        name = f"{rs['metadata']['name']}-{c.token(5)}"
        status = container_status(runs, name, "search", "search-api", reason="Error", code=143,
                                  uid=c.uid("Pod", "search", name), ready=False)
        pod = c.pod(work, rs, node=node, created=created, name=name,
                    statuses={"search-api": status})
        _liveness_pod(s, pod, runs, image, ghosts[i])
    work.availability_changed = rotated
    deployment_metrics(s, work, lambda t: 3 if t < rotated.timestamp() else 0)
    neighbour(s, "web", "search-frontend", "ghcr.io/acme-search/search-frontend:5.4.0",
              node_list, logs=[
                  ("error", "upstream search-api.search.svc:80 returned 503 (no healthy "
                   "upstream)", {"http.response.status_code": 503}),
                  ("info", "GET /search?q=... 200 (cached)", {})], n_logs=40, revision=18)
    neighbour(s, "search", "opensearch-exporter", "quay.io/prometheuscommunity/"
              "elasticsearch-exporter:v1.8.0", node_list, replicas=1, memory_mib=50,
              port=9114, logs=[("warn", "failed to fetch and decode node stats: context "
                                "deadline exceeded", {})], n_logs=6)
    return s


def _liveness_pod(s: Story, pod: Obj, runs: list[Run], image: str, ghost: Obj) -> None:
    """Events, logs and metrics of a pod whose liveness probe kills it during start-up."""
    ip, name = pod["status"]["podIP"], pod["metadata"]["name"]
    restart_events(s, pod, "search-api", runs, now=s.now, image=image)
    field = "spec.containers{search-api}"
    starts = [r.start for r in runs]
    url = f"http://{ip}:8080/actuator/health/liveness"
    s.cluster.event(pod, "Unhealthy", f'Liveness probe failed: Get "{url}": dial tcp {ip}:8080: '
                    "connect: connection refused", first=starts[0] + timedelta(seconds=40),
                    last=starts[-1] + timedelta(seconds=min(50, (s.now - starts[-1]).seconds)),
                    count=3 * len(deaths(runs)) + 1, type_="Warning", field_path=field)
    s.cluster.event(pod, "Unhealthy", f'Readiness probe failed: Get "http://{ip}:8080/actuator/'
                    f'health/readiness": dial tcp {ip}:8080: connect: connection refused',
                    first=starts[0] + timedelta(seconds=21), last=starts[-1] + timedelta(
                        seconds=min(21, (s.now - starts[-1]).seconds)),
                    count=8 * len(starts), type_="Warning", field_path=field)
    ends = deaths(runs)
    s.cluster.event(pod, "Killing", "Container search-api failed liveness probe, will be "
                    "restarted", first=ends[0] - timedelta(seconds=1), last=ends[-1] -
                    timedelta(seconds=1), count=len(ends), field_path=field)
    kills = [int(d.timestamp()) for d in ends]
    container_metrics(s, pod, "search-api", memory=lambda t: 1.4 * 1024 * MIB, cpu=const(0.95),
                      restarts=kills, limit_memory=3 * 1024 * MIB)
    container_metrics(s, ghost, "search-api", memory=lambda t: 2.2 * 1024 * MIB,
                      cpu=const(0.4))
    http_metrics(s, "search-api", ghost, rps=const(45.0), codes={"200": const(0.998), "400":
                                                                 const(0.002)},
                 median=const(0.04))

    def instance(run: Run) -> list[str]:
        t0 = run.start
        out = [_spring(t0 + timedelta(seconds=2), "INFO", "c.a.search.SearchApiApplication",
                       "Starting SearchApiApplication v2.15.3 using Java 21.0.5"),
               _spring(t0 + timedelta(seconds=9), "INFO", "c.a.search.synonyms.SynonymLoader",
                       "Loading synonyms from /data/synonyms (4 languages)"),
               _spring(t0 + timedelta(seconds=31), "INFO", "c.a.search.synonyms.SynonymLoader",
                       "Loaded synonyms-de.txt: 1204311 entries in 22.1s"),
               _spring(t0 + timedelta(seconds=54), "INFO", "c.a.search.synonyms.SynonymLoader",
                       "Loaded synonyms-fr.txt: 987120 entries in 23.0s")]
        if run.end is not None:
            out.append(_spring(run.end, "INFO", "o.s.b.w.e.tomcat.GracefulShutdown",
                               "Commencing graceful shutdown. Waiting for active requests to "
                               "complete"))
        return out
    s.pod_log(pod, "search-api", instance(runs[-1]))
    died = [r for r in runs if r.end is not None]
    if died:
        s.pod_log(pod, "search-api", instance(died[-1]), previous=True)
    for run in died[-6:]:
        for line in instance(run)[1:]:
            when = datetime.fromisoformat(line.split(" ", 1)[0].replace("Z", "+00:00"))
            message = line.split(" : ", 1)[1]
            s.logs.add(when, "info", message, namespace="search", pod=name,
                       container="search-api", service="search-api", node=pod["spec"][
                           "nodeName"], log__logger=line.split(" : ")[0].split()[-1])
