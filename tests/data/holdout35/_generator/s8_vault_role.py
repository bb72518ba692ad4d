"""Saltmarsh Insurance: a Terraform clean-up deleted Vault's Kubernetes auth role `quote-pdf`.
The running pods keep their tokens; every new pod's vault-agent-init fails its login with 403
permission denied and exits, so the main container never starts (Init:CrashLoopBackOff). The
routine deploy that made the new pods gets the blame; Vault and its other clients are fine."""

from __future__ import annotations

import json
import random
from datetime import timedelta

from .kube import (
    at,
    container,
    deploy_status,
    deployment,
    event,
    healthy_deployment,
    http_probe,
    ms,
    namespace,
    node,
    pod,
    pod_hash,
    replicaset,
    running,
    suffix,
    template,
    terminated,
    ts,
    uid,
    waiting,
)
from .write import Scenario, doc

NOW = at("2026-11-28T09:05:00Z")
ID = "quote-pdf-init-stuck"
NS = "policy-svc"
DELETED = NOW - timedelta(hours=2, minutes=11)
DEPLOYED = NOW - timedelta(minutes=21)
AGENT = "hashicorp/vault:1.17.6"
VAULT = "https://vault.vault.svc:8200"


def _template(image: str, with_inject: bool = True):
    ann = {
        "vault.hashicorp.com/agent-inject": "true",
        "vault.hashicorp.com/role": "quote-pdf",
        "vault.hashicorp.com/agent-inject-secret-db": "database/creds/quote-pdf-ro",
        "vault.hashicorp.com/agent-inject-secret-signing": "kv/data/policy-svc/pdf-signing",
        "vault.hashicorp.com/agent-init-first": "true",
    }
    return ann, template(
        {"app": "quote-pdf"},
        [
            container(
                "quote-pdf",
                image,
                ports=[8080],
                requests={"cpu": "300m", "memory": "512Mi"},
                limits={"memory": "768Mi"},
                env=[
                    {"name": "DB_CREDS_FILE", "value": "/vault/secrets/db"},
                    {"name": "SPRING_PROFILES_ACTIVE", "value": "prod"},
                ],
                mounts=[{"name": "vault-secrets", "mountPath": "/vault/secrets"}],
                readiness=http_probe("/actuator/health/readiness", 8080, 25),
            )
        ],
        annotations=ann,
        service_account="quote-pdf",
    )


def _inject(t: dict) -> dict:
    """What the Vault injector adds to the pods it mutates: an init container and a sidecar."""
    args = [
        "echo ${VAULT_CONFIG?} | base64 -d > /home/vault/config.json && vault agent "
        "-config=/home/vault/config.json"
    ]
    mounts = [
        {"name": "home-init", "mountPath": "/home/vault"},
        {"name": "vault-secrets", "mountPath": "/vault/secrets"},
    ]
    env = [
        {"name": "VAULT_ADDR", "value": VAULT},
        {"name": "VAULT_LOG_LEVEL", "value": "info"},
        {
            "name": "VAULT_CONFIG",
            "value": "eyJhdXRvX2F1dGgiOnsibWV0aG9kIjp7InR5cGUiOiJrdWJlcm5ldGVzIiwi"
            "bW91bnRfcGF0aCI6ImF1dGgva3ViZXJuZXRlcyIsImNvbmZpZyI6eyJyb2xl"
            "IjoicXVvdGUtcGRmIn19fSwiZXhpdF9hZnRlcl9hdXRoIjp0cnVlfQ==",
        },
    ]
    spec = dict(t["spec"])
    spec["initContainers"] = [
        container(
            "vault-agent-init",
            AGENT,
            command=["/bin/sh", "-ec"],
            args=args,
            env=env,
            mounts=mounts,
            requests={"cpu": "250m", "memory": "64Mi"},
            limits={"cpu": "500m", "memory": "128Mi"},
        )
    ]
    spec["containers"] = spec["containers"] + [
        container(
            "vault-agent",
            AGENT,
            command=["/bin/sh", "-ec"],
            args=args,
            env=env,
            mounts=[
                {"name": "home-sidecar", "mountPath": "/home/vault"},
                {"name": "vault-secrets", "mountPath": "/vault/secrets"},
            ],
            requests={"cpu": "250m", "memory": "64Mi"},
            limits={"cpu": "500m", "memory": "128Mi"},
        )
    ]
    spec["volumes"] = [
        {"name": "home-init", "emptyDir": {"medium": "Memory"}},
        {"name": "home-sidecar", "emptyDir": {"medium": "Memory"}},
        {"name": "vault-secrets", "emptyDir": {"medium": "Memory"}},
    ]
    meta = dict(t["metadata"])
    meta["annotations"] = {
        **meta["annotations"],
        "vault.hashicorp.com/agent-inject-status": "injected",
    }
    return {"metadata": meta, "spec": spec}


def _agent_log(start, attempts: int) -> list[str]:
    lines = [
        "==> Vault Agent started! Log data will stream in below:",
        "",
        "==> Vault Agent configuration:",
        "",
        "           Api Address 1: http://bufconn",
        "                     Cgo: disabled",
        "               Log Level: info",
        "                 Version: Vault v1.17.6, built 2024-09-24T19:48:40Z",
        "             Version Sha: 695ce1e2b66c4dc0e58ea42aaa4b7891c95e8f69",
        "",
    ]
    t = start
    lines.append(f"{ms(t)} [INFO]  agent.sink.server: starting sink server")
    lines.append(f"{ms(t)} [INFO]  agent.auth.handler: starting auth handler")
    for n in range(attempts):
        lines.append(
            f"{ms(t + timedelta(milliseconds=3))} [INFO]  agent.auth.handler: authenticating"
        )
        lines += [
            f"{ms(t + timedelta(milliseconds=27))} [ERROR] agent.auth.handler: error authenticating:",
            "  error=",
            "  | Error making API request.",
            "  |",
            f"  | URL: PUT {VAULT}/v1/auth/kubernetes/login",
            "  | Code: 403. Errors:",
            "  |",
            "  | * permission denied",
            f"   backoff={2**n}s",
        ]
        t += timedelta(seconds=2**n)
    lines.append(
        f"{ms(t)} [ERROR] agent.auth.handler: exceeded max retries (exit_on_retry_failure=true), exiting"
    )
    lines.append(f"{ms(t)} [INFO]  agent: (runner) stopping")
    lines.append("Error encountered during run, refer to logs for more details.")
    return lines


def build() -> Scenario:
    rng = random.Random(8)
    s = Scenario(
        id=ID,
        title="quote-pdf 3.2.1 rollout stuck in Init",
        now=ts(NOW),
        report=(
            "quote-pdf 3.2.1 rollout is broken, the new pod sits in Init:CrashLoopBackOff and "
            "never starts. 3.2.0 pods are still serving. guess the new version is bad? it only "
            "bumped the pdf library. should I just roll back?\n"
        ),
        truth={
            "category": "crash_loop",
            "culprit": {"kind": "Deployment", "namespace": NS, "name": "quote-pdf"},
            "evidence": ["permission denied", "vault-agent-init", "auth/kubernetes/role/quote-pdf"],
            "fix": (
                "Restore Vault's Kubernetes auth role quote-pdf (deleted by the Terraform run at "
                f"{ts(DELETED)}) bound to service account policy-svc/quote-pdf, or point the "
                "vault.hashicorp.com/role annotation at the role that replaced it; rolling back "
                "would fail the same way (any new pod needs a login)."
            ),
        },
    )
    nodes = [(f"worker-{c}{k}", f"10.8.{k}.{10 + k}") for c in "ab" for k in range(2)]
    s.objects += [
        namespace(n, NOW - timedelta(days=d))
        for n, d in ((NS, 540), ("vault", 900), ("claims", 540))
    ]
    for k, (n, ip) in enumerate(nodes):
        s.objects.append(
            node(
                n,
                NOW - timedelta(days=30 + k),
                address=ip,
                kubelet="v1.31.2",
                image="Talos (v1.8.3)",
                labels={"node.saltmarsh.io/zone": "a" if k < 2 else "b"},
                heartbeat=NOW - timedelta(seconds=7 + k),
                runtime="containerd://2.0.0",
            )
        )
    _old_ann, old_t = _template("registry.saltmarsh.io/policy-svc/quote-pdf:3.2.0")
    _new_ann, new_t = _template("registry.saltmarsh.io/policy-svc/quote-pdf:3.2.1")
    d = deployment(
        NS,
        "quote-pdf",
        NOW - timedelta(days=500),
        new_t,
        replicas=4,
        revision=47,
        updated=DEPLOYED,
        manager="helm",
        strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
        status=deploy_status(
            5,
            4,
            1,
            4,
            since=DEPLOYED + timedelta(minutes=10),
            progressing=(
                "False",
                "ProgressDeadlineExceeded",
                f'ReplicaSet "quote-pdf-{pod_hash("qp47")}" has timed out progressing.',
            ),
            generation=49,
            desired=4,
            max_unavailable=0,
        ),
    )
    h_new, h_old = pod_hash("qp47"), pod_hash("qp46")
    rs_new = replicaset(d, h_new, DEPLOYED, 47, replicas=1, ready=0, tmpl=new_t)
    rs_old = replicaset(
        d, h_old, NOW - timedelta(days=3, hours=5), 46, replicas=4, ready=4, tmpl=old_t
    )
    s.objects += [d, rs_new, rs_old]
    old_pods = []
    for k in range(4):
        started = NOW - timedelta(days=3, hours=5) + timedelta(seconds=40 * k)
        pname = f"quote-pdf-{h_old}-{suffix(f'qo{k}')}"
        img = "registry.saltmarsh.io/policy-svc/quote-pdf:3.2.0"
        s.objects.append(
            pod(
                rs_old,
                pname,
                started,
                node_name=nodes[k][0],
                ip=f"10.9.{k}.{21 + k}",
                host_ip=nodes[k][1],
                tmpl=_inject(old_t),
                hash_=h_old,
                statuses=[
                    running("quote-pdf", img, started + timedelta(seconds=6)),
                    running("vault-agent", AGENT, started + timedelta(seconds=6)),
                ],
                init_statuses=[
                    {
                        **running("vault-agent-init", AGENT, started),
                        "ready": True,
                        "started": False,
                        "state": {
                            "terminated": terminated(
                                0,
                                "Completed",
                                started + timedelta(seconds=1),
                                started + timedelta(seconds=3),
                            )
                        },
                    }
                ],
            )
        )
        old_pods.append(pname)
        s.log(
            NS,
            pname,
            "vault-agent",
            [
                f'{ms(NOW - timedelta(minutes=m))} [INFO]  agent: (runner) rendered "(dynamic)" => '
                '"/vault/secrets/db"'
                for m in (50, 20)
            ]
            + [f"{ms(NOW - timedelta(minutes=12))} [INFO]  agent.auth.handler: renewed auth token"],
        )
    pname = f"quote-pdf-{h_new}-{suffix('qn0')}"
    created = DEPLOYED + timedelta(seconds=1)
    last_start = NOW - timedelta(minutes=3, seconds=12)
    img = "registry.saltmarsh.io/policy-svc/quote-pdf:3.2.1"
    s.objects.append(
        pod(
            rs_new,
            pname,
            created,
            node_name=nodes[2][0],
            ip="10.9.2.57",
            host_ip=nodes[2][1],
            tmpl=_inject(new_t),
            hash_=h_new,
            phase="Pending",
            ready=False,
            statuses=[
                waiting("quote-pdf", img, "PodInitializing", ""),
                waiting("vault-agent", AGENT, "PodInitializing", ""),
            ],
            init_statuses=[
                waiting(
                    "vault-agent-init",
                    AGENT,
                    "CrashLoopBackOff",
                    f"back-off 5m0s restarting failed container=vault-agent-init pod={pname}_{NS}",
                    restarts=7,
                    last=terminated(1, "Error", last_start, last_start + timedelta(seconds=8)),
                )
            ],
        )
    )
    s.log(
        NS,
        pname,
        "vault-agent-init",
        _agent_log(last_start + timedelta(milliseconds=300), 3),
        previous=True,
    )
    s.log(NS, pname, "vault-agent-init", _agent_log(NOW - timedelta(seconds=9), 2)[:-3])
    s.objects += [
        event(
            NS,
            "Pod",
            pname,
            "BackOff",
            f"Back-off restarting failed container vault-agent-init in pod "
            f"{pname}_{NS}({uid('pod/' + pname)})",
            first=created + timedelta(seconds=30),
            last=NOW - timedelta(seconds=25),
            count=88,
            type_="Warning",
            host=nodes[2][0],
        ),
        event(
            NS,
            "Pod",
            pname,
            "Pulled",
            f'Container image "{AGENT}" already present on machine',
            first=created + timedelta(seconds=1),
            last=last_start,
            count=8,
            host=nodes[2][0],
        ),
        event(
            NS,
            "Pod",
            pname,
            "Started",
            "Started container vault-agent-init",
            first=created + timedelta(seconds=1),
            last=last_start,
            count=8,
            host=nodes[2][0],
        ),
        event(
            NS,
            "Deployment",
            "quote-pdf",
            "ScalingReplicaSet",
            f"Scaled up replica set quote-pdf-{h_new} to 1",
            first=DEPLOYED,
            last=DEPLOYED,
            source="deployment-controller",
            api="apps/v1",
        ),
    ]

    # vault itself, and another client that logs in fine
    vlabels = {"app.kubernetes.io/name": "vault", "app": "vault"}
    vt = template(
        vlabels,
        [
            container(
                "vault",
                AGENT,
                ports=[8200, 8201],
                args=["server"],
                requests={"cpu": "500m", "memory": "512Mi"},
                readiness={
                    "exec": {"command": ["/bin/sh", "-ec", "vault status -tls-skip-verify"]},
                    "initialDelaySeconds": 5,
                    "periodSeconds": 5,
                    "timeoutSeconds": 3,
                    "failureThreshold": 2,
                    "successThreshold": 1,
                },
            )
        ],
        service_account="vault",
    )
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {
            "name": "vault",
            "namespace": "vault",
            "creationTimestamp": ts(NOW - timedelta(days=800)),
            "uid": uid("sts/vault"),
            "generation": 9,
            "labels": vlabels,
        },
        "spec": {
            "replicas": 3,
            "serviceName": "vault-internal",
            "selector": {"matchLabels": {"app": "vault"}},
            "template": vt,
            "updateStrategy": {"type": "OnDelete"},
            "podManagementPolicy": "Parallel",
        },
        "status": {
            "replicas": 3,
            "readyReplicas": 3,
            "currentReplicas": 3,
            "updatedReplicas": 3,
            "availableReplicas": 3,
            "currentRevision": "vault-5c8d9f7b6",
            "updateRevision": "vault-5c8d9f7b6",
            "observedGeneration": 9,
        },
    }
    s.objects.append(sts)
    for k in range(3):
        started = NOW - timedelta(days=6, hours=k)
        s.objects.append(
            pod(
                sts,
                f"vault-{k}",
                started,
                node_name=nodes[k][0],
                ip=f"10.9.{k}.{5 + k}",
                host_ip=nodes[k][1],
                statuses=[running("vault", AGENT, started)],
            )
        )
    objs, _intake = healthy_deployment(
        "claims",
        "claims-intake",
        "registry.saltmarsh.io/claims/claims-intake:9.4.0",
        replicas=2,
        created=NOW - timedelta(days=400),
        rolled=NOW - timedelta(minutes=48),
        revision=120,
        nodes=nodes[1:],
        ip_prefix="10.9.3",
        annotations={
            "vault.hashicorp.com/agent-inject": "true",
            "vault.hashicorp.com/role": "claims-intake",
        },
    )
    s.objects += objs
    objs, rating = healthy_deployment(
        NS,
        "rating-engine",
        "registry.saltmarsh.io/policy-svc/rating-engine:14.1.2",
        replicas=3,
        created=NOW - timedelta(days=500),
        rolled=NOW - timedelta(days=2),
        revision=203,
        nodes=nodes,
        ip_prefix="10.9.1",
        annotations={
            "vault.hashicorp.com/agent-inject": "true",
            "vault.hashicorp.com/role": "rating-engine",
        },
    )
    s.objects += objs
    for obj in s.objects:  # the injector mutated these pods too: they carry the agent sidecar
        app = obj.get("metadata", {}).get("labels", {}).get("app")
        if obj["kind"] == "Pod" and app in ("claims-intake", "rating-engine"):
            sidecar = dict(_inject(old_t)["spec"]["containers"][-1])
            obj["spec"]["containers"] = obj["spec"]["containers"] + [sidecar]
            started = obj["status"]["containerStatuses"][0]["state"]["running"]["startedAt"]
            obj["status"]["containerStatuses"].append(running("vault-agent", AGENT, at(started)))
            obj["metadata"]["annotations"] = {
                **obj["metadata"].get("annotations", {}),
                "vault.hashicorp.com/agent-inject-status": "injected",
            }
    s.objects.append(
        event(
            NS,
            "Pod",
            rating[2],
            "Unhealthy",
            "Readiness probe failed: HTTP probe failed with statuscode: 503",
            first=NOW - timedelta(minutes=37),
            last=NOW - timedelta(minutes=36),
            count=2,
            type_="Warning",
            host=nodes[2][0],
        )
    )

    def audit(
        when,
        kind: str,
        path: str,
        op: str,
        display: str,
        error: str | None = None,
        remote: str = "10.9.2.57",
    ) -> dict:
        entry = {
            "time": ms(when),
            "type": kind,
            "auth": {
                "client_token": "hmac-sha256:" + f"{rng.getrandbits(128):032x}",
                "display_name": display,
                "policies": ["default"] if display else [],
            },
            "request": {
                "id": uid(ms(when) + path),
                "operation": op,
                "mount_type": "kubernetes" if "kubernetes" in path else "token",
                "path": path,
                "remote_address": remote,
                "namespace": {"id": "root"},
            },
        }
        if error:
            entry["error"] = error
        return entry

    docs_vault = []
    docs_vault.append(
        audit(
            DELETED,
            "request",
            "auth/kubernetes/role/quote-pdf",
            "delete",
            "token-terraform-ci-vault-config",
            remote="10.8.0.200",
        )
    )
    docs_vault.append(
        audit(
            DELETED + timedelta(milliseconds=8),
            "response",
            "auth/kubernetes/role/quote-pdf",
            "delete",
            "token-terraform-ci-vault-config",
            remote="10.8.0.200",
        )
    )
    docs_vault.append(
        audit(
            DELETED + timedelta(seconds=1),
            "request",
            "auth/kubernetes/role/quote-pdf-v2",
            "update",
            "token-terraform-ci-vault-config",
            remote="10.8.0.200",
        )
    )
    t = NOW - timedelta(hours=3)
    k = 0
    while t < NOW:
        if k % 3 == 0:
            who = ["claims-intake", "rating-engine"][k % 2]
            docs_vault.append(
                audit(
                    t,
                    "response",
                    "auth/kubernetes/login",
                    "update",
                    f"kubernetes-{'claims' if who == 'claims-intake' else NS}-{who}",
                    remote=f"10.9.{1 + k % 3}.{30 + k % 20}",
                )
            )
        if t > DEPLOYED and k % 2 == 0:
            docs_vault.append(
                audit(
                    t + timedelta(seconds=3),
                    "response",
                    "auth/kubernetes/login",
                    "update",
                    "",
                    error="permission denied",
                )
            )
        if k % 5 == 0:
            docs_vault.append(
                audit(
                    t + timedelta(seconds=7),
                    "response",
                    "database/creds/quote-pdf-ro",
                    "read",
                    f"kubernetes-{NS}-quote-pdf",
                    remote=f"10.9.{k % 4}.{21 + k % 4}",
                )
            )
        t += timedelta(minutes=2)
        k += 1
    for e in docs_vault:
        msg = json.dumps(e)
        s.docs.append(
            doc(
                e["time"],
                msg,
                "error" if e.get("error") else "info",
                "vault",
                "vault",
                "vault-0",
                "vault",
                event__dataset="vault.audit",
            )
        )
    s.log("vault", "vault-0", "vault", [json.dumps(e) for e in docs_vault[-40:]])
    t = NOW - timedelta(minutes=90)
    k = 0
    while t < NOW:
        s.docs.append(
            doc(
                ms(t),
                f"rendered quote {rng.randint(10**6, 10**7)}.pdf pages=4 in {rng.randint(300, 900)}ms",
                "INFO",
                "quote-pdf",
                NS,
                old_pods[k % 4],
                "quote-pdf",
                log__logger="i.s.quote.pdf.RenderController",
            )
        )
        if k % 3 == 0:
            s.docs.append(
                doc(
                    ms(t + timedelta(seconds=4)),
                    "rated policy in 41ms",
                    "INFO",
                    "rating-engine",
                    NS,
                    rating[k % 3],
                    "rating-engine",
                )
            )
        if k % 19 == 0:
            s.docs.append(
                doc(
                    ms(t + timedelta(seconds=5)),
                    "font cache miss, loading NotoSans from classpath",
                    "WARN",
                    "quote-pdf",
                    NS,
                    old_pods[(k + 1) % 4],
                    "quote-pdf",
                )
            )
        t += timedelta(seconds=50)
        k += 1
    return s
