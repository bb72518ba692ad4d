"""7. probe_failure: profile-api 3.4.0 puts the actuator (management port 8081) behind Spring
Security; the readiness probe on /actuator/health/readiness gets 401 and the new pod never
becomes Ready. The rollout hangs with the old pods serving."""

from __future__ import annotations

from datetime import timedelta

from . import _kit as k

SID = "profile-api-actuator-401"

REG = "registry.pinecrest.dev"
OLD = f"{REG}/accounts/profile-api:3.3.2"
NEW = f"{REG}/accounts/profile-api:3.4.0"


def build(root) -> None:
    s = k.Scenario(SID, "2026-12-07T16:25:00Z", 4607)
    for ns in ("default", "kube-system", "accounts", "web", "data"):
        s.add(k.namespace(s, ns, s.ago(days=365)))
    nodes = []
    for i in range(4):
        ip = f"10.90.{i}.{12 + i * 5}"
        nodes.append(
            k.node(
                s,
                f"aks-apps-31415926-vmss00000{i}",
                s.ago(days=6, hours=12 - i),
                ["westeurope-1", "westeurope-2", "westeurope-3", "westeurope-1"][i],
                "Standard_D8s_v5",
                cpu="8",
                memory="32864588Ki",
                alloc_cpu="7820m",
                alloc_mem="28263756Ki",
                runtime="containerd://1.7.7-1",
                kubelet="v1.28.3",
                internal_ip=ip,
                extra_labels={"kubernetes.azure.com/agentpool": "apps"},
            )
        )
    s.add(*nodes)
    nn = [n["metadata"]["name"] for n in nodes]

    ns = "accounts"
    labels = {"app": "profile-api", "app.kubernetes.io/part-of": "accounts"}

    def spec_for(image: str, secure: bool) -> dict:
        env = [
            {
                "name": "SPRING_PROFILES_ACTIVE",
                "value": "prod,secure-actuator" if secure else "prod",
            },
            {
                "name": "JAVA_TOOL_OPTIONS",
                "value": "-XX:MaxRAMPercentage=75 -XX:+UseG1GC"
                if secure
                else "-XX:MaxRAMPercentage=60",
            },
            {
                "name": "SPRING_DATASOURCE_URL",
                "value": "jdbc:postgresql://accounts-db.postgres.database.azure.com:5432/accounts",
            },
        ]
        if secure:
            env.append(
                {
                    "name": "ACTUATOR_PASSWORD",
                    "valueFrom": {
                        "secretKeyRef": {"name": "profile-api-actuator", "key": "password"}
                    },
                }
            )
        c = k.container(
            "profile-api",
            image,
            ports=[
                {"name": "http", "containerPort": 8080, "protocol": "TCP"},
                {"name": "management", "containerPort": 8081, "protocol": "TCP"},
            ],
            cpu="500m",
            memory="1Gi",
            limit_memory="1Gi",
            env=env,
            readiness=k.http_probe(
                "/actuator/health/readiness", "management", delay=20, period=10, timeout=2
            ),
            liveness=k.tcp_probe("management", delay=40, period=20),
            mounts=[{"name": "config", "mountPath": "/config", "readOnly": True}],
        )
        return k.pod_spec(
            [c],
            sa="profile-api",
            volumes=[
                {"name": "config", "configMap": {"name": "profile-api-config", "defaultMode": 420}}
            ],
        )

    old_spec, new_spec = spec_for(OLD, False), spec_for(NEW, True)
    roll = s.ago(minutes=34)
    dep_created = s.ago(days=300)
    dep = k.deployment(
        s,
        ns,
        "profile-api",
        4,
        labels,
        new_spec,
        dep_created,
        27,
        k.deploy_status(
            5,
            4,
            1,
            4,
            30,
            ("False", "ProgressDeadlineExceeded", "", roll + timedelta(minutes=10)),
            (
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.",
                s.ago(days=4),
            ),
            s.ago(days=4),
        ),
        strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
        annotations={
            "kubernetes.io/change-cause": "profile-api 3.4.0: secure actuator endpoints (SEC-412)"
        },
    )
    old_pth, new_pth = "7d5c6b8f9d", "58f9c7d6b4"
    dep["status"]["conditions"][1]["message"] = (
        f'ReplicaSet "profile-api-{new_pth}" has timed out progressing.'
    )
    old_rs = k.replicaset(
        s,
        dep,
        f"profile-api-{old_pth}",
        old_pth,
        4,
        4,
        s.ago(days=4, hours=1),
        26,
        old_spec,
        labels,
    )
    new_rs = k.replicaset(
        s, dep, f"profile-api-{new_pth}", new_pth, 1, 0, roll, 27, new_spec, labels
    )
    s.add(dep, old_rs, new_rs)
    old_pods = []
    for i in range(4):
        pc = s.ago(days=4, hours=1) + timedelta(seconds=35 * i)
        st = k.cs_running(
            "profile-api",
            OLD,
            f"{REG}/accounts/profile-api@" + s.digest(OLD),
            pc + timedelta(seconds=3),
        )
        old_pods.append(
            k.pod(
                s,
                ns,
                f"profile-api-{old_pth}-{s.suffix()}",
                k.owner_of(old_rs),
                dict(labels, **{"pod-template-hash": old_pth}),
                old_spec,
                nn[i],
                nodes[i]["status"]["addresses"][0]["address"],
                pc,
                "Running",
                k.pod_conditions(pc, ready_at=pc + timedelta(seconds=31)),
                [st],
            )
        )
    s.add(*old_pods)
    npn = f"profile-api-{new_pth}-q7v2m"
    pc = roll + timedelta(seconds=1)
    st = k.cs_running(
        "profile-api",
        NEW,
        f"{REG}/accounts/profile-api@" + s.digest(NEW),
        pc + timedelta(seconds=9),
        ready=False,
    )
    np_ = k.pod(
        s,
        ns,
        npn,
        k.owner_of(new_rs),
        dict(labels, **{"pod-template-hash": new_pth}),
        new_spec,
        nn[1],
        nodes[1]["status"]["addresses"][0]["address"],
        pc,
        "Running",
        k.pod_conditions(pc, ready=False, message="containers with unready status: [profile-api]"),
        [st],
    )
    s.add(np_)
    uid = np_["metadata"]["uid"]
    fp = "spec.containers{profile-api}"
    probes = int((s.now - (pc + timedelta(seconds=29))).total_seconds() // 10)
    s.add(
        k.event(
            s,
            ns,
            "Deployment",
            "profile-api",
            "ScalingReplicaSet",
            f"Scaled up replica set profile-api-{new_pth} to 1",
            roll,
            component="deployment-controller",
            api_version="apps/v1",
            involved_uid=dep["metadata"]["uid"],
        ),
        k.event(
            s,
            ns,
            "ReplicaSet",
            f"profile-api-{new_pth}",
            "SuccessfulCreate",
            f"Created pod: {npn}",
            pc,
            component="replicaset-controller",
            api_version="apps/v1",
            involved_uid=new_rs["metadata"]["uid"],
        ),
        k.event(
            s,
            ns,
            "Pod",
            npn,
            "Scheduled",
            f"Successfully assigned {ns}/{npn} to {nn[1]}",
            pc,
            component="default-scheduler",
            involved_uid=uid,
        ),
        k.event(
            s,
            ns,
            "Pod",
            npn,
            "Pulling",
            f'Pulling image "{NEW}"',
            pc + timedelta(seconds=1),
            host=nn[1],
            field_path=fp,
            involved_uid=uid,
        ),
        k.event(
            s,
            ns,
            "Pod",
            npn,
            "Pulled",
            f'Successfully pulled image "{NEW}" in 6.221s (6.221s including waiting)',
            pc + timedelta(seconds=7),
            host=nn[1],
            field_path=fp,
            involved_uid=uid,
        ),
        k.event(
            s,
            ns,
            "Pod",
            npn,
            "Created",
            "Created container profile-api",
            pc + timedelta(seconds=8),
            host=nn[1],
            field_path=fp,
            involved_uid=uid,
        ),
        k.event(
            s,
            ns,
            "Pod",
            npn,
            "Started",
            "Started container profile-api",
            pc + timedelta(seconds=9),
            host=nn[1],
            field_path=fp,
            involved_uid=uid,
        ),
        k.event(
            s,
            ns,
            "Pod",
            npn,
            "Unhealthy",
            "Readiness probe failed: HTTP probe failed with statuscode: 401",
            pc + timedelta(seconds=29),
            s.ago(seconds=6),
            count=probes,
            etype="Warning",
            host=nn[1],
            field_path=fp,
            involved_uid=uid,
        ),
    )
    svc = k.service(
        s,
        ns,
        "profile-api",
        {"app": "profile-api"},
        [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": "http"}],
        dep_created,
    )
    ep = k.endpoints(s, svc, old_pods, [np_])
    ep["subsets"][0]["ports"][0]["port"] = 8080
    s.add(svc, ep)
    s.add(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": k.meta(
                s,
                "ConfigMap",
                "profile-api-config",
                ns,
                dep_created,
                annotations={
                    "pinecrest.dev/last-change": "3.4.0 SEC-412 actuator behind basic auth"
                },
            ),
            "data": {
                "application-prod.yaml": "server:\n  port: 8080\nmanagement:\n  server:\n    "
                "port: 8081\n"
                "  endpoints:\n    web:\n      exposure:\n        include: health,info,prometheus\n"
                "  endpoint:\n    health:\n      probes:\n        enabled: true\n",
                "application-secure-actuator.yaml": "spring:\n  security:\n    user:\n      name: "
                "actuator\n"
                "      password: ${ACTUATOR_PASSWORD}\n      roles: ACTUATOR\n"
                "pinecrest:\n  security:\n    actuator:\n"
                "      require-role: ACTUATOR   # applies to every /actuator/** path\n",
            },
        }
    )

    # --- neighbours -------------------------------------------------------------------------------
    redis_lbl = {"app": "session-redis"}
    rcn = k.container(
        "redis",
        "docker.io/library/redis:7.2.3",
        ports=[{"name": "redis", "containerPort": 6379, "protocol": "TCP"}],
        cpu="200m",
        memory="512Mi",
        readiness={
            "exec": {"command": ["redis-cli", "ping"]},
            "periodSeconds": 10,
            "timeoutSeconds": 1,
            "successThreshold": 1,
            "failureThreshold": 3,
            "initialDelaySeconds": 5,
        },
    )
    r_spec = k.pod_spec([rcn])
    rsts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": k.meta(
            s, "StatefulSet", "session-redis", ns, s.ago(days=300), labels=redis_lbl
        ),
        "spec": {
            "replicas": 1,
            "serviceName": "session-redis",
            "selector": {"matchLabels": redis_lbl},
            "template": {"metadata": {"labels": redis_lbl}, "spec": r_spec},
            "updateStrategy": {"type": "RollingUpdate"},
        },
        "status": {
            "replicas": 1,
            "readyReplicas": 1,
            "currentReplicas": 1,
            "updatedReplicas": 1,
            "availableReplicas": 1,
            "currentRevision": "session-redis-6c9b7d8f5",
            "updateRevision": "session-redis-6c9b7d8f5",
            "observedGeneration": 3,
            "collisionCount": 0,
        },
    }
    rpc = s.ago(days=5, hours=8)
    fin = s.ago(days=2, hours=3)
    rp = k.pod(
        s,
        ns,
        "session-redis-0",
        k.owner_of(rsts),
        dict(
            redis_lbl,
            **{
                "controller-revision-hash": "session-redis-6c9b7d8f5",
                "statefulset.kubernetes.io/pod-name": "session-redis-0",
            },
        ),
        r_spec,
        nn[2],
        nodes[2]["status"]["addresses"][0]["address"],
        rpc,
        "Running",
        k.pod_conditions(rpc, ready_at=fin + timedelta(seconds=8)),
        [
            k.cs_running(
                "redis",
                "docker.io/library/redis:7.2.3",
                "docker.io/library/redis@" + s.digest("redis"),
                fin + timedelta(seconds=2),
                True,
                1,
                k.terminated("OOMKilled", 137, rpc + timedelta(seconds=4), fin, "redis"),
            )
        ],
    )
    s.add(rsts, rp)
    bff = k.healthy_deployment(
        s,
        "web",
        "bff",
        f"{REG}/web/bff:8.1.0",
        3,
        nodes,
        s.ago(days=300),
        s.ago(days=1, hours=5),
        revision=64,
        memory="384Mi",
    )
    k.add_parts(s, bff)
    pge = k.healthy_deployment(
        s,
        "data",
        "postgres-exporter",
        "quay.io/prometheuscommunity/postgres-exporter:v0.15.0",
        1,
        nodes[3:],
        s.ago(days=200),
        s.ago(days=6),
        port=9187,
        readiness_path="/",
        memory="64Mi",
    )
    k.add_parts(s, pge)

    # --- logs -------------------------------------------------------------------------------------
    boot = pc + timedelta(seconds=9)
    lines = [
        (
            0.0,
            "INFO",
            "com.pinecrest.profile.ProfileApiApplication",
            "Starting ProfileApiApplication v3.4.0 using Java 21.0.1 with PID 1 "
            "(/app/profile-api.jar started by app in /app)",
        ),
        (
            0.1,
            "INFO",
            "com.pinecrest.profile.ProfileApiApplication",
            'The following 2 profiles are active: "prod", "secure-actuator"',
        ),
        (
            4.2,
            "INFO",
            "o.s.b.w.embedded.tomcat.TomcatWebServer",
            "Tomcat initialized with port 8080 (http)",
        ),
        (7.9, "INFO", "com.zaxxer.hikari.HikariDataSource", "HikariPool-1 - Start completed."),
        (
            10.6,
            "INFO",
            "o.s.s.web.DefaultSecurityFilterChain",
            "Will secure any request with [org.springframework.security.web.session.DisableEncodeU"
            "rlFilter@3c5dbdf8, "
            "org.springframework.security.web.context.request.async.WebAsyncManagerIntegrationFilt"
            "er@61a5b4ae, "
            "org.springframework.security.web.context.SecurityContextHolderFilter@5b1efaaf, "
            "org.springframework.security.web.header.HeaderWriterFilter@2c1b9e4b, "
            "org.springframework.security.web.authentication.www.BasicAuthenticationFilter@4ce14f0"
            "5, "
            "org.springframework.security.web.access.ExceptionTranslationFilter@6f6962ba, "
            "org.springframework.security.web.access.intercept.AuthorizationFilter@1d6dcb43]",
        ),
        (
            11.8,
            "INFO",
            "o.s.b.w.embedded.tomcat.TomcatWebServer",
            "Tomcat started on port 8080 (http) with context path ''",
        ),
        (
            12.4,
            "INFO",
            "o.s.b.a.e.web.EndpointLinksResolver",
            "Exposing 3 endpoint(s) beneath base path '/actuator'",
        ),
        (
            12.9,
            "INFO",
            "o.s.b.w.embedded.tomcat.TomcatWebServer",
            "Tomcat started on port 8081 (http) with context path ''",
        ),
        (
            13.8,
            "INFO",
            "com.pinecrest.profile.ProfileApiApplication",
            "Started ProfileApiApplication in 13.84 seconds (process running for 15.2)",
        ),
    ]
    text = []
    for off, lvl, logger, msg in lines:
        at = boot + timedelta(seconds=off)
        s.log(
            at,
            ns,
            npn,
            "profile-api",
            lvl.lower(),
            f"{logger} : {msg}",
            service="profile-api",
            **{"log.logger": logger},
        )
        text.append(f"{k.rfc_ms(at)}  {lvl} 1 --- [           main] {logger:40s} : {msg}")
    s.pod_log(ns, npn, "profile-api", text)
    t = s.ago(hours=2)
    i = 0
    while t < s.now:
        p = old_pods[i % 4]
        path = s.rng.choice(
            ["/v2/profiles/me", "/v2/profiles/{id}", "/v2/profiles/{id}/avatar", "/v2/preferences"]
        )
        s.log(
            t,
            ns,
            p["metadata"]["name"],
            "profile-api",
            "info",
            f"c.p.p.web.AccessLog : GET {path} 200 {s.rng.randint(6, 45)}ms",
            service="profile-api",
            **{
                "http.response.status_code": 200,
                "url.path": path,
                "log.logger": "c.p.p.web.AccessLog",
            },
        )
        t += timedelta(seconds=s.rng.randint(5, 15))
        i += 1
    t = s.ago(hours=2)
    while t < s.now:
        s.log(
            t,
            "web",
            bff["pods"][i % 3]["metadata"]["name"],
            "bff",
            "warn",
            "request without X-Client-Version header from app build 2025.11; header will be "
            "required from 2027-01",
            service="bff",
        )
        t += timedelta(minutes=s.rng.randint(2, 6))
        i += 1
    s.log(
        s.ago(minutes=50),
        "data",
        pge["pods"][0]["metadata"]["name"],
        "postgres-exporter",
        "warn",
        'level=warn msg="collector failed" name=stat_statements err="pq: relation '
        '\\"pg_stat_statements\\" does not exist"',
        service="postgres-exporter",
    )

    # --- metrics ----------------------------------------------------------------------------------
    pts = s.steps(120)
    ksm = {"job": "kube-state-metrics"}
    for p in [*old_pods, np_]:
        pn = p["metadata"]["name"]
        new = p is np_
        s.series(
            "up",
            "gauge",
            "1 if the scrape succeeded.",
            {
                "job": "profile-api",
                "namespace": ns,
                "pod": pn,
                "instance": f"{p['status']['podIP']}:8081",
            },
            [(t, 0 if new else 1) for t in pts if not new or t >= boot],
        )
        s.series(
            "kube_pod_status_ready",
            "gauge",
            "Describes whether the pod is ready to serve requests.",
            dict(ksm, namespace=ns, pod=pn, condition="true"),
            [(t, 0 if new else 1) for t in pts if not new or t >= pc],
        )
    s.series(
        "kube_deployment_status_replicas_updated",
        "gauge",
        "The number of updated replicas per deployment.",
        dict(ksm, namespace=ns, deployment="profile-api"),
        [(t, 1 if t >= roll else 4) for t in pts],
    )
    s.series(
        "kube_deployment_status_replicas_available",
        "gauge",
        "The number of available replicas per deployment.",
        dict(ksm, namespace=ns, deployment="profile-api"),
        [(t, 4) for t in pts],
    )
    s.series(
        "kube_deployment_status_replicas_unavailable",
        "gauge",
        "The number of unavailable replicas per deployment.",
        dict(ksm, namespace=ns, deployment="profile-api"),
        [(t, 1 if t >= roll else 0) for t in pts],
    )
    for p in old_pods:
        acc, tot = 0, 0.0
        vals = []
        for t in pts:
            n = s.rng.randint(300, 420)
            acc += n
            tot += n * s.rng.uniform(0.012, 0.03)
            vals.append((t, acc, round(tot, 3)))
        s.summary(
            "http_server_requests_seconds",
            "Duration of HTTP server request handling",
            {
                "job": "profile-api",
                "namespace": ns,
                "pod": p["metadata"]["name"],
                "uri": "/v2/profiles/me",
                "status": "200",
                "method": "GET",
                "outcome": "SUCCESS",
            },
            vals,
        )

    s.write(
        root,
        {
            "title": "profile-api 3.4.0 rollout never completes",
            "report": "profile-api 3.4.0 has been rolling out for half an hour and the new pod "
            "never goes Ready, "
            "kubectl rollout status just hangs. 3.4.0 also bumped the JVM flags (MaxRAMPercentage "
            "75, G1) so "
            "it's probably starting too slowly for the probe? should we raise "
            "initialDelaySeconds?\n",
            "truth": {
                "category": "probe_failure",
                "culprit": {"kind": "Deployment", "namespace": "accounts", "name": "profile-api"},
                "evidence": [
                    "Readiness probe failed: HTTP probe failed with statuscode: 401",
                    "Started ProfileApiApplication in 13.84 seconds",
                    "secure-actuator",
                    "/actuator/health/readiness",
                ],
                "fix": "3.4.0's secure-actuator profile requires basic auth on every /actuator/** "
                "path, so the kubelet's "
                "unauthenticated readiness probe gets 401; permitAll for /actuator/health/** "
                "(liveness/readiness "
                "groups) or probe a separate unauthenticated health port. The app starts in 14 s, "
                "so the "
                "start-up delay is not the problem.",
            },
        },
    )
