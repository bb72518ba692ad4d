"""Hollowbrook Health: member-directory's certificate was renewed by hand and the new chain file
holds only the leaf. Go's server presents just that; the Java client (no AIA fetching) fails
with PKIX "unable to find valid certification path", the .NET client fetches the intermediate
from the AIA URL and works, so the server looks fine from most angles."""

from __future__ import annotations

import random
from datetime import timedelta

from .kube import (
    at,
    config_map,
    container,
    deploy_status,
    deployment,
    endpoints,
    event,
    healthy_deployment,
    ms,
    namespace,
    node,
    pod,
    pod_hash,
    replicaset,
    running,
    service,
    suffix,
    template,
    ts,
)
from .pki import chain
from .write import Scenario, doc

NOW = at("2026-11-26T10:35:00Z")
ID = "eligibility-ssl-errors"
NS = "identity"
RENEWED = NOW - timedelta(minutes=52)
DNS = [
    "member-directory.identity.svc",
    "member-directory.identity.svc.cluster.local",
    "members.hollowbrook.internal",
]
IMAGE = "harbor.hollowbrook.internal/identity/member-directory:1.41.2"
PKIX = (
    "javax.net.ssl.SSLHandshakeException: PKIX path building failed: "
    "sun.security.provider.certpath.SunCertPathBuilderException: unable to find valid "
    "certification path to requested target"
)


def build() -> Scenario:
    rng = random.Random(6)
    root, inter, leaf = chain(RENEWED - timedelta(minutes=5), DNS)
    s = Scenario(
        id=ID,
        title="Eligibility checks failing with SSL errors",
        now=ts(NOW),
        report=(
            "eligibility-checker started failing member lookups about 45 min ago, everything is "
            "SSLHandshakeException. claims-portal calls the same member-directory and works "
            "fine, so member-directory must be ok? I think the eligibility-checker base image "
            "bump (temurin 21.0.5) last week messed up the java truststore\n"
        ),
        truth={
            "category": "certificate",
            "culprit": {"kind": "Deployment", "namespace": NS, "name": "member-directory"},
            "evidence": [
                "unable to find valid certification path",
                "1 certificate(s)",
                "issued by CN=Hollowbrook Issuing CA G2",
            ],
            "fix": (
                "Put the full chain (leaf + Hollowbrook Issuing CA G2) back into ConfigMap "
                "member-directory-tls-chain and restart member-directory; the renewal at "
                f"{ts(RENEWED)} wrote the leaf alone. Clients' truststores are fine."
            ),
        },
    )
    nodes = [(f"k8s-prod-w{k:02d}", f"10.60.0.{21 + k}") for k in range(1, 5)]
    s.objects += [
        namespace(n, NOW - timedelta(days=d))
        for n, d in ((NS, 900), ("claims", 900), ("platform", 900))
    ]
    for k, (n, ip) in enumerate(nodes):
        s.objects.append(
            node(
                n,
                NOW - timedelta(days=40),
                address=ip,
                kubelet="v1.29.10",
                image="Rocky Linux 9.4 (Blue Onyx)",
                labels={"node-role.kubernetes.io/worker": ""},
                heartbeat=NOW - timedelta(seconds=11 + k),
            )
        )
    s.objects.append(
        config_map(
            NS,
            "member-directory-tls-chain",
            NOW - timedelta(days=400),
            {"tls-chain.pem": leaf},
            edited=RENEWED,
            editor="kubectl-client-side-apply",
            labels={"app": "member-directory"},
        )
    )
    s.objects.append(
        config_map(
            "claims",
            "hollowbrook-ca-bundle",
            NOW - timedelta(days=600),
            {"ca.crt": root},
            labels={"pki.hollowbrook.internal/bundle": "root"},
        )
    )
    s.objects.append(
        config_map(
            "platform",
            "hollowbrook-ca-bundle",
            NOW - timedelta(days=600),
            {"ca.crt": root, "issuing-ca-g2.crt": inter},
            labels={"pki.hollowbrook.internal/bundle": "published"},
        )
    )

    def md_template(chk: str):
        return template(
            {"app": "member-directory"},
            [
                container(
                    "member-directory",
                    IMAGE,
                    ports=[8443],
                    requests={"cpu": "200m", "memory": "192Mi"},
                    limits={"memory": "384Mi"},
                    env=[
                        {"name": "TLS_CERT_FILE", "value": "/etc/tls/chain/tls-chain.pem"},
                        {"name": "TLS_KEY_FILE", "value": "/etc/tls/key/tls.key"},
                        {"name": "PG_DSN_FILE", "value": "/etc/member-directory/dsn"},
                    ],
                    mounts=[
                        {"name": "chain", "mountPath": "/etc/tls/chain", "readOnly": True},
                        {"name": "key", "mountPath": "/etc/tls/key", "readOnly": True},
                    ],
                    readiness={
                        "tcpSocket": {"port": 8443},
                        "initialDelaySeconds": 3,
                        "periodSeconds": 10,
                        "timeoutSeconds": 1,
                        "failureThreshold": 3,
                        "successThreshold": 1,
                    },
                )
            ],
            volumes=[
                {"name": "chain", "configMap": {"name": "member-directory-tls-chain"}},
                {"name": "key", "secret": {"secretName": "member-directory-tls-key"}},
            ],
            annotations={"checksum/tls-chain": chk},
            service_account="member-directory",
        )

    new_t = md_template("9f1c2e" + "77ab31d0")
    rolled = RENEWED + timedelta(minutes=1)
    d = deployment(
        NS,
        "member-directory",
        NOW - timedelta(days=700),
        new_t,
        replicas=3,
        revision=34,
        updated=rolled,
        manager="kubectl-rollout",
        status=deploy_status(3, 3, 3, 3, since=rolled + timedelta(seconds=40), generation=36),
    )
    h = pod_hash("md34")
    rs = replicaset(d, h, rolled, 34, replicas=3, ready=3)
    rs_old = replicaset(
        d,
        pod_hash("md33"),
        NOW - timedelta(days=6, hours=3),
        33,
        replicas=0,
        ready=0,
        tmpl=md_template("41d07a" + "c3e9f215"),
    )
    s.objects += [d, rs, rs_old]
    md = []
    for k in range(3):
        started = rolled + timedelta(seconds=6 + 12 * k)
        pname = f"member-directory-{h}-{suffix(f'md{k}')}"
        s.objects.append(
            pod(
                rs,
                pname,
                started - timedelta(seconds=3),
                node_name=nodes[k][0],
                ip=f"10.61.{k}.{15 + k}",
                host_ip=nodes[k][1],
                statuses=[running("member-directory", IMAGE, started)],
            )
        )
        md.append(pname)
    s.objects += [
        service(
            NS,
            "member-directory",
            NOW - timedelta(days=700),
            {"app": "member-directory"},
            443,
            8443,
            "10.96.44.10",
        ),
        endpoints(
            NS,
            "member-directory",
            NOW - timedelta(days=700),
            [(p, f"10.61.{k}.{15 + k}") for k, p in enumerate(md)],
            [],
            8443,
        ),
        event(
            NS,
            "Deployment",
            "member-directory",
            "ScalingReplicaSet",
            f"Scaled up replica set member-directory-{h} to 3",
            first=rolled,
            last=rolled,
            source="deployment-controller",
            api="apps/v1",
        ),
        event(
            NS,
            "Deployment",
            "member-directory",
            "ScalingReplicaSet",
            f"Scaled down replica set member-directory-{pod_hash('md33')} to 0 from 1",
            first=rolled + timedelta(seconds=40),
            last=rolled + timedelta(seconds=40),
            source="deployment-controller",
            api="apps/v1",
        ),
    ]

    objs, elig = healthy_deployment(
        "claims",
        "eligibility-checker",
        "harbor.hollowbrook.internal/claims/eligibility-checker:4.3.0",
        replicas=2,
        created=NOW - timedelta(days=800),
        rolled=NOW - timedelta(days=5, hours=4),
        revision=61,
        nodes=nodes[2:],
        ip_prefix="10.61.3",
        requests={"cpu": "500m", "memory": "768Mi"},
        limits={"memory": "1Gi"},
        env=[
            {"name": "MEMBER_DIRECTORY_URL", "value": "https://member-directory.identity.svc"},
            {
                "name": "JAVA_TOOL_OPTIONS",
                "value": "-Djavax.net.ssl.trustStore=/etc/pki/java/hollowbrook.p12",
            },
        ],
    )
    s.objects += objs
    objs, portal = healthy_deployment(
        "claims",
        "claims-portal",
        "harbor.hollowbrook.internal/claims/claims-portal:2026.11.2",
        replicas=3,
        created=NOW - timedelta(days=800),
        rolled=NOW - timedelta(days=1, hours=2),
        revision=203,
        nodes=nodes,
        ip_prefix="10.61.2",
        port=5000,
    )
    s.objects += objs
    objs, audit = healthy_deployment(
        "platform",
        "audit-sink",
        "harbor.hollowbrook.internal/platform/audit-sink:0.19.1",
        replicas=1,
        created=NOW - timedelta(days=300),
        rolled=NOW - timedelta(days=12),
        revision=8,
        nodes=nodes[:1],
        ip_prefix="10.61.0",
    )
    s.objects += objs
    s.objects.append(
        event(
            "platform",
            "Pod",
            audit[0],
            "Unhealthy",
            'Liveness probe failed: Get "http://10.61.0.20:8080/healthz": context deadline exceeded',
            first=NOW - timedelta(minutes=25),
            last=NOW - timedelta(minutes=25),
            type_="Warning",
            host=nodes[0][0],
        )
    )

    # server logs: startup with the chain it loaded; handshake errors from the Java clients only
    for k, p in enumerate(md):
        started = rolled + timedelta(seconds=6 + 12 * k)
        lines = [
            f"{ms(started)} INFO  starting member-directory 1.41.2 (go1.23.3)",
            f"{ms(started + timedelta(milliseconds=4))} INFO  tls: loaded /etc/tls/chain/tls-chain.pem: "
            "1 certificate(s); leaf CN=member-directory.identity.svc serial=5c3e99 "
            f"notAfter={ts(RENEWED + timedelta(days=90) - timedelta(minutes=5))}",
            f"{ms(started + timedelta(milliseconds=40))} INFO  postgres pool ready (max=20)",
            f"{ms(started + timedelta(milliseconds=41))} INFO  listening on :8443 (TLS)",
        ]
        t = started + timedelta(seconds=30)
        while t < NOW:
            if rng.random() < 0.55:
                lines.append(
                    f"{ms(t)} INFO  GET /v2/members/{rng.randint(10**7, 10**8)} 200 "
                    f"{rng.randint(3, 19)}ms client=10.61.2.{20 + 7 * rng.randint(0, 2)}"
                )
            else:
                lines.append(
                    f"{ms(t)} ERROR http: TLS handshake error from 10.61.3.{20 + 7 * rng.randint(0, 1)}:"
                    f"{rng.randint(32768, 60999)}: remote error: tls: unknown certificate"
                )
            t += timedelta(seconds=rng.uniform(20, 50))
        s.log(NS, p, "member-directory", lines)
    old = [f"member-directory-{pod_hash('md33')}-{suffix('mdold' + str(k))}" for k in range(3)]
    for k, p in enumerate(old):
        t0 = NOW - timedelta(days=6, hours=3) + timedelta(seconds=8 * k)
        s.docs.append(
            doc(
                ms(t0),
                "tls: loaded /etc/tls/chain/tls-chain.pem: 2 certificate(s); leaf "
                "CN=member-directory.identity.svc serial=41f0a2 notAfter=2026-12-04T09:12:00Z",
                "info",
                "member-directory",
                NS,
                p,
                "member-directory",
            )
        )
    for k, p in enumerate(md):
        started = rolled + timedelta(seconds=6 + 12 * k)
        s.docs.append(
            doc(
                ms(started + timedelta(milliseconds=4)),
                "tls: loaded /etc/tls/chain/tls-chain.pem: "
                "1 certificate(s); leaf CN=member-directory.identity.svc serial=5c3e99 "
                f"notAfter={ts(RENEWED + timedelta(days=90) - timedelta(minutes=5))}",
                "info",
                "member-directory",
                NS,
                p,
                "member-directory",
            )
        )
    t = NOW - timedelta(minutes=90)
    k = 0
    while t < NOW:
        e = elig[k % 2]
        if t < rolled + timedelta(seconds=20):
            s.docs.append(
                doc(
                    ms(t),
                    f"eligibility decided member={rng.randint(10**7, 10**8)} plan=PPO-2 "
                    f"result=ELIGIBLE in {rng.randint(20, 60)}ms",
                    "INFO",
                    "eligibility-checker",
                    "claims",
                    e,
                    "eligibility-checker",
                    log__logger="c.h.elig.EligibilityService",
                )
            )
        else:
            s.docs.append(
                doc(
                    ms(t),
                    'I/O error on GET request for "https://member-directory.identity.svc/v2/'
                    f'members/{rng.randint(10**7, 10**8)}": PKIX path building failed: '
                    "sun.security.provider.certpath.SunCertPathBuilderException: unable to find "
                    "valid certification path to requested target",
                    "ERROR",
                    "eligibility-checker",
                    "claims",
                    e,
                    "eligibility-checker",
                    error__type="org.springframework.web.client.ResourceAccessException",
                    log__logger="c.h.elig.MemberDirectoryClient",
                )
            )
        s.docs.append(
            doc(
                ms(t + timedelta(seconds=4)),
                f"member lookup ok ({rng.randint(8, 30)} ms)",
                "Information",
                "claims-portal",
                "claims",
                portal[k % 3],
                "claims-portal",
                log__logger="Hollowbrook.Claims.Portal.MemberClient",
            )
        )
        if k % 15 == 0:
            s.docs.append(
                doc(
                    ms(t + timedelta(seconds=9)),
                    "Slow SQL: claim_lines query 1240 ms",
                    "Warning",
                    "claims-portal",
                    "claims",
                    portal[(k + 1) % 3],
                    "claims-portal",
                )
            )
        t += timedelta(seconds=40)
        k += 1
    for e in elig:
        s.log(
            "claims",
            e,
            "eligibility-checker",
            [
                f"{(NOW - timedelta(seconds=45 * j)).strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3]}Z ERROR 1 --- [eligibility] "
                f"[http-nio-8080-exec-{j % 10 + 1}] c.h.elig.MemberDirectoryClient : member lookup failed\n"
                "org.springframework.web.client.ResourceAccessException: I/O error on GET request for "
                '"https://member-directory.identity.svc/v2/members/48120331": PKIX path building failed: '
                "sun.security.provider.certpath.SunCertPathBuilderException: unable to find valid certification "
                f"path to requested target\nCaused by: {PKIX}\n"
                "\tat java.base/sun.security.ssl.Alert.createSSLException(Alert.java:130)\n"
                "\tat java.base/sun.security.ssl.TransportContext.fatal(TransportContext.java:383)"
                for j in range(12, 0, -1)
            ],
        )
    return s
