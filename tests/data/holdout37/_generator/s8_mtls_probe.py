# ruff: noqa: E501  (data literals: log lines and event messages are kept whole)
"""Shape 8: a new revision requires client certificates on its port; the HTTPS readiness probe fails the handshake."""

from __future__ import annotations

from datetime import timedelta

from .common import (
    Scenario,
    available_status,
    container,
    deployment,
    endpoints,
    healthy_deployment,
    iso_ms,
    namespace,
    pod,
    replicaset,
    running,
    service,
    std_nodes,
)

NS = "accounts"


def build() -> Scenario:
    s = Scenario(
        "accounts-profile-mtls-readiness",
        "profile-svc rollout stuck at 1 of 4",
        "2026-11-26T11:52:00Z",
        "profile-svc 7.3 has been rolling out for 40 min and is stuck, argo says Progressing forever. the new "
        "pod runs, no errors of its own, just never goes ready. security asked us to turn on mTLS between "
        "services this sprint, not sure if that's related. old pods are serving fine",
        {
            "category": "probe_failure",
            "culprit": {"kind": "Deployment", "namespace": NS, "name": "profile-svc"},
            "evidence": [
                "Readiness probe failed",
                "remote error: tls: certificate required",
                "TLS_CLIENT_AUTH",
            ],
            "fix": "The kubelet's HTTPS probe presents no client certificate: serve /readyz on a separate "
            "plain or server-TLS-only port (or use a tcpSocket/exec probe), or set client auth to "
            "verify-if-given for the probe path, then let the rollout finish",
        },
    )
    now = s.now
    nodes = std_nodes(s, "10.88.3", 3, zone="eu-north-1")
    s.add(namespace(NS, s.ago(days=420)))
    old_img, new_img = (
        "cr.nordvik.cloud/accounts/profile-svc:7.2.5",
        "cr.nordvik.cloud/accounts/profile-svc:7.3.0",
    )
    probe = {
        "httpGet": {"path": "/readyz", "port": 8443, "scheme": "HTTPS"},
        "periodSeconds": 10,
        "timeoutSeconds": 2,
        "failureThreshold": 3,
    }
    mounts = [{"name": "tls", "mountPath": "/etc/profile/tls", "readOnly": True}]
    vols = [{"name": "tls", "secret": {"secretName": "profile-svc-mesh-tls", "defaultMode": 420}}]

    def ctr(img: str, mtls: bool) -> dict:
        env = {
            "TLS_CERT_FILE": "/etc/profile/tls/tls.crt",
            "TLS_CLIENT_CA_FILE": "/etc/profile/tls/ca.crt",
            "LISTEN": ":8443",
            "DB_HOST": "profile-db.accounts.svc",
        }
        if mtls:
            env["TLS_CLIENT_AUTH"] = "require-and-verify"
        return container(
            "profile",
            img,
            ports=[8443],
            env=env,
            requests={"cpu": "300m", "memory": "384Mi"},
            limits={"memory": "512Mi"},
            readinessProbe=probe,
            livenessProbe={"tcpSocket": {"port": 8443}, "periodSeconds": 20, "failureThreshold": 3},
            volumeMounts=mounts,
        )

    oh, nh = "6c7f5b8d94", "84d6c9b7f5"
    olab = {"app": "profile-svc", "pod-template-hash": oh}
    nlab = {"app": "profile-svc", "pod-template-hash": nh}
    t0 = s.ago(minutes=41)
    s.add(
        deployment(
            "profile-svc",
            NS,
            {"app": "profile-svc"},
            nlab,
            [ctr(new_img, True)],
            4,
            s.ago(days=400),
            36,
            29,
            available_status(
                5,
                t0,
                updated=1,
                ready=4,
                available=4,
                progressing=(
                    "True",
                    "ReplicaSetUpdated",
                    f'ReplicaSet "profile-svc-{nh}" is progressing.',
                ),
            ),
            strategy={
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
            },
            volumes=vols,
        )
    )
    s.add(
        replicaset(
            f"profile-svc-{oh}",
            NS,
            "profile-svc",
            olab,
            [ctr(old_img, False)],
            4,
            4,
            s.ago(days=12),
            28,
        )
    )
    s.add(
        replicaset(f"profile-svc-{nh}", NS, "profile-svc", nlab, [ctr(new_img, True)], 1, 0, t0, 29)
    )
    old = []
    for i, sfx in enumerate(("d4xk7", "r8pqw", "t2mvn", "k6jzs")):
        pn = f"profile-svc-{oh}-{sfx}"
        ip = f"10.88.{4 + i % 3}.{50 + i}"
        s.add(
            pod(
                pn,
                NS,
                olab,
                ("ReplicaSet", f"profile-svc-{oh}"),
                nodes[i % 3],
                [ctr(old_img, False)],
                [running("profile", old_img, s.ago(days=12, minutes=-i))],
                s.ago(days=12),
                ip=ip,
                volumes=vols,
            )
        )
        old.append((ip, pn, nodes[i % 3]))
    npn, nip, nnd = f"profile-svc-{nh}-w9bfc", "10.88.5.119", nodes[1]
    s.add(
        pod(
            npn,
            NS,
            nlab,
            ("ReplicaSet", f"profile-svc-{nh}"),
            nnd,
            [ctr(new_img, True)],
            [running("profile", new_img, t0 + timedelta(seconds=6), ready=False)],
            t0,
            ready=False,
            ip=nip,
            volumes=vols,
        )
    )
    s.add(
        service(
            "profile-svc", NS, {"app": "profile-svc"}, 443, 8443, s.ago(days=400), "172.20.77.31"
        )
    )
    s.add(endpoints("profile-svc", NS, old, 8443, s.ago(days=400), not_ready=[(nip, npn, nnd)]))
    kubelet_ip = "10.88.3.48"
    st = t0 + timedelta(seconds=6)
    lines = [
        f'{iso_ms(st)} level=info msg="profile-svc 7.3.0 starting" go=go1.23.3',
        f'{iso_ms(st + timedelta(milliseconds=40))} level=info msg="connected to profile-db.accounts.svc:5432"',
        f'{iso_ms(st + timedelta(milliseconds=52))} level=info msg="client auth mode" mode=RequireAndVerifyClientCert',
        f'{iso_ms(st + timedelta(milliseconds=60))} level=info msg="listening" addr=:8443 tls=true',
    ]
    t = st + timedelta(seconds=4)
    k = 0
    while t < now:
        k += 1
        lines.append(
            f"{iso_ms(t)} http: TLS handshake error from {kubelet_ip}:{40000 + (k * 97) % 20000}: "
            "tls: client didn't provide a certificate"
        )
        s.doc(
            t,
            f"http: TLS handshake error from {kubelet_ip}:{40000 + (k * 97) % 20000}: tls: client didn't "
            "provide a certificate",
            "error",
            "profile-svc",
            NS,
            npn,
            "profile",
        )
        if k % 9 == 0:
            lines.append(
                f'{iso_ms(t + timedelta(milliseconds=300))} level=info msg="cache warm" entries={k * 31}'
            )
        t += timedelta(seconds=10)
    s.log(NS, npn, "profile", lines[:4] + lines[-70:])
    s.events.add(
        NS,
        "Pod",
        npn,
        "Unhealthy",
        f'Readiness probe failed: Get "https://{nip}:8443/readyz": remote error: tls: certificate required',
        t0 + timedelta(seconds=16),
        now - timedelta(seconds=4),
        count=244,
        type_="Warning",
        host=nnd,
        field_path="spec.containers{profile}",
    )
    s.events.add(
        NS,
        "Deployment",
        "profile-svc",
        "ScalingReplicaSet",
        f"Scaled up replica set profile-svc-{nh} to 1 from 0",
        t0,
        component="deployment-controller",
        api="apps/v1",
    )
    for _ip, pn, _nd in old:
        for m in range(0, 80, 2):
            s.doc(
                s.ago(minutes=m, seconds=len(pn) % 11),
                "GET /v1/profiles/me 200",
                "info",
                "profile-svc",
                NS,
                pn,
                "profile",
                **{"http.response.status_code": 200},
            )
    acc = healthy_deployment(
        s,
        "account-api",
        NS,
        "cr.nordvik.cloud/accounts/account-api:11.0.4",
        nodes,
        "10.88.9",
        port=8080,
        replicas=2,
        age_days=1,
        hash_="5b9d8c7f64",
    )
    for m in range(1, 70, 6):
        s.doc(
            s.ago(minutes=m),
            "profile lookup via https://profile-svc.accounts.svc 200 (12ms)",
            "info",
            "account-api",
            NS,
            acc[m % 2],
            "api",
        )
    s.doc(
        s.ago(minutes=23),
        "x509: certificate signed by unknown authority (retrying with refreshed bundle)",
        "warn",
        "account-api",
        NS,
        acc[0],
        "api",
    )
    s.events.add(
        NS,
        "Pod",
        acc[1],
        "Unhealthy",
        "Readiness probe failed: HTTP probe failed with statuscode: 503",
        s.ago(minutes=33),
        type_="Warning",
        host=nodes[1],
        field_path="spec.containers{api}",
    )
    return s
