"""session-signer-restarts: a rotated secret arrives with a trailing newline.

The HMAC key behind auth/session-signer lives in AWS Secrets Manager and is synced by the
external-secrets operator. Today's rotation stored the new value with a trailing "\\n";
the operator refreshed the Secret, Reloader rolled the Deployment (strategy Recreate),
and every new pod exits at start: base64 decoding of the 44-character key fails at byte
44. The login API in front of it errors loudly; the operator's AccessDenied errors for
another namespace have been noisy all morning.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from ._base import iso
from ._kit import Container, Workload
from ._scene import Line, Scene

SID = "session-signer-restarts"
NODES = [f"aks-system-{n}-vmss00000{i}" for i, n in ((0, "31377846"), (1, "31377846"),
                                                     (2, "31377846"))]
NODES += ["aks-apps-20518842-vmss000003", "aks-apps-20518842-vmss000004"]


def build(root: Path) -> None:
    """Write the scenario."""
    s = Scene(SID, "2026-08-03T08:10:00Z", seed=5906)
    refresh = s.ago(24)
    rollout = refresh + timedelta(seconds=4)
    s.nodes(NODES, itype="Standard_D8s_v5", pool="apps")
    s.namespaces("auth", "external-secrets", "payments", "reloader", "web")
    restarts = [9, 9, 8]

    def crashing(i: int, pod: dict[str, object]) -> None:
        st, meta = pod["status"], pod["metadata"]
        assert isinstance(st, dict) and isinstance(meta, dict)
        cs = st["containerStatuses"][0]
        last_fail = s.ago(2.5 + 1.3 * i)
        cs.update({"ready": False, "started": False, "restartCount": restarts[i],
                   "state": {"waiting": {"reason": "CrashLoopBackOff", "message":
                                         "back-off 5m0s restarting failed container="
                                         "session-signer pod=" + meta["name"]}},
                   "lastState": {"terminated": {"exitCode": 1, "reason": "Error",
                                                "startedAt": iso(last_fail - timedelta(
                                                    seconds=1)),
                                                "finishedAt": iso(last_fail)}}})

    sig_c = Container("session-signer", "acrprodweu.azurecr.io/auth/session-signer:3.4.2",
                      port=8443, cpu_req="100m", cpu_lim="500m", mem_req="64Mi",
                      mem_lim="128Mi", secret_env={"SESSION_HMAC_KEY": ("session-signer-keys",
                                                                       "hmac-key")},
                      env={"SESSION_KID": "2026-08", "SESSION_TTL": "12h"})
    sig = s.cluster.workload(Workload(
        "auth", "session-signer", [sig_c], NODES[3:], s.ago(60 * 24 * 510), replicas=3,
        revision=34, rollout_at=rollout, ready=[False] * 3, mutate_pod=crashing,
        previous_images={"session-signer": sig_c.image},
        annotations={"reloader.stakater.com/auto": "true"},
        template_annotations={"reloader.stakater.com/last-reloaded-from":
                              '{"type":"SECRET","name":"session-signer-keys",'
                              '"namespace":"auth","hash":"5f1d0c8e2b7a"}'},
        spec_extra={"strategy": {"type": "Recreate"}}))
    dep = s.find("Deployment", "auth", "session-signer")
    dep["status"]["conditions"][1].update({
        "reason": "ReplicaSetUpdated",
        "message": f'ReplicaSet "{sig[0].pod.rsplit("-", 1)[0]}" is progressing.',
        "lastUpdateTime": iso(rollout)})
    dep["status"]["unavailableReplicas"] = 3
    login_roll = s.ago(60 * 24 * 2)
    login = s.cluster.workload(Workload(
        "auth", "login-api",
        [Container("login-api", "acrprodweu.azurecr.io/auth/login-api:8.12.0",
                   env={"SIGNER_URL": "https://session-signer.auth.svc.cluster.local"})],
        NODES[3:], s.ago(60 * 24 * 600), replicas=3, revision=120, rollout_at=login_roll,
        previous_images={"login-api": "acrprodweu.azurecr.io/auth/login-api:8.11.2"}))
    eso = s.cluster.workload(Workload(
        "external-secrets", "external-secrets",
        [Container("external-secrets", "ghcr.io/external-secrets/external-secrets:v0.10.7",
                   port=8080, probe_path=None)], NODES[:1], s.ago(60 * 24 * 300), replicas=1,
        rollout_at=s.ago(60 * 24 * 6)))
    rel = s.cluster.workload(Workload(
        "reloader", "reloader",
        [Container("reloader", "ghcr.io/stakater/reloader:v1.2.0", port=9090, probe_path=None)],
        NODES[1:2], s.ago(60 * 24 * 300), replicas=1, rollout_at=s.ago(60 * 24 * 6)))
    s.pending_pod("web", "lighthouse-audit-29237700-m2vbq", "lighthouse-audit",
                  "acrprodweu.azurecr.io/web/lighthouse:1.4.0", cpu="2", memory="4Gi",
                  since=s.ago(45), node_selector={"agentpool": "spot"},
                  message="0/5 nodes are available: 5 node(s) didn't match Pod's node "
                  "affinity/selector. preemption: 0/5 nodes are available: 5 Preemption is "
                  "not helpful for scheduling.")

    # --- events
    rs = sig[0].pod.rsplit("-", 1)[0]
    s.cluster.event("auth", "Deployment", "session-signer", "ScalingReplicaSet",
                    "Scaled down replica set session-signer-"
                    f"{s.find('ReplicaSet', 'auth', 'session-signer-')['metadata']['name'][15:]}"
                    " to 0 from 3", first=rollout, component="deployment-controller")
    s.cluster.event("auth", "Deployment", "session-signer", "ScalingReplicaSet",
                    f"Scaled up replica set {rs} to 3", first=rollout + timedelta(seconds=31),
                    component="deployment-controller")
    for i, ref in enumerate(sig):
        s.cluster.event("auth", "Pod", ref.pod, "Pulled", f"Container image \"{sig_c.image}\" "
                        "already present on machine", first=rollout + timedelta(seconds=40),
                        last=s.ago(2.5 + 1.3 * i), count=restarts[i] + 1, host=ref.node)
        s.cluster.event("auth", "Pod", ref.pod, "BackOff", "Back-off restarting failed "
                        f"container session-signer in pod {ref.pod}_auth({ref.pod[-5:]})",
                        first=rollout + timedelta(seconds=70), last=s.ago(0.5 + i * 0.3),
                        count=96 - 7 * i, type_="Warning", host=ref.node)

    # --- logs and pod logs
    key_err = "illegal base64 data at input byte 44"
    for i, ref in enumerate(sig):
        for n in range(restarts[i] + 1):
            t = rollout + timedelta(seconds=45 + 17 * i) + (s.ago(2.5 + 1.3 * i) - rollout
                                                            ) * (n / restarts[i])
            lines = [
                ("info", "session-signer 3.4.2 (go1.22.8) starting, listen=:8443"),
                ("info", "loading HMAC signing key kid=2026-08 from env SESSION_HMAC_KEY "
                 "(44+1 bytes)"),
                ("fatal", f"cannot initialise signer: decode key kid=2026-08: {key_err}"),
            ]
            for k, (lvl, msg) in enumerate(lines):
                s.logs.add(t + timedelta(milliseconds=3 * k), ref, lvl, msg)
                if n == restarts[i]:
                    s.pod_logs.add(ref, f'{{"level":"{lvl}","ts":"{iso(t)}","msg":"{msg}"}}',
                                   previous=True)
        s.pod_logs.add(ref, "")

    def login_line(t: datetime) -> Line | None:
        r = s.rng.random()
        if t >= rollout and r < 0.6:
            return ("error", "POST /oauth/token 503: mint session: Post \"https://session-signer"
                    ".auth.svc.cluster.local/v1/sign\": dial tcp 10.0.41.87:443: connect: "
                    "connection refused", {"http.response.status_code": 503})
        if r < 0.9:
            return ("info", f"POST /oauth/token 200 client={s.pick(['web', 'ios', 'android'])} "
                    f"{s.rng.randrange(30, 120)}ms", {"http.response.status_code": 200})
        return ("warn", "rate limit: 5 failed logins for user hash 3f9a.. - captcha required",
                {})

    for ref in login:
        s.chatter(ref, login_line, every_s=9, minutes=150)
    s.logs.add(refresh, eso[0], "info", "reconciled secret",
               **{"ExternalSecret": "auth/session-signer-keys", "SecretStore":
                  "ClusterSecretStore/aws-secretsmanager", "remoteRef.key":
                  "prod/auth/session-signer", "remoteRef.version": "AWSCURRENT (rotated "
                  "2026-08-03T07:44:58Z)", "log.logger": "externalsecret"})
    s.logs.add(refresh + timedelta(seconds=3), rel[0], "info", "Changes detected in "
               "'session-signer-keys' of type 'SECRET' in namespace 'auth'; updated "
               "'session-signer' of type 'Deployment' in namespace 'auth'")

    def eso_line(t: datetime) -> Line | None:
        if s.rng.random() < 0.5:
            return ("error", "error processing spec.data[0] (key: prod/payments/stripe), err: "
                    "AccessDeniedException: User: arn:aws:sts::481726003341:assumed-role/"
                    "eso-payments/external-secrets is not authorized to perform: "
                    "secretsmanager:GetSecretValue", {"ExternalSecret": "payments/stripe-keys",
                                                      "log.logger": "externalsecret"})
        ns = s.pick(["web/cdn-token", "auth/login-oidc", "payments/adyen-hmac"])
        return ("info", "reconciled secret", {"ExternalSecret": ns, "log.logger":
                                              "externalsecret"})

    s.chatter(eso[0], eso_line, every_s=30, minutes=170)

    # --- metrics
    for i, ref in enumerate(sig):
        span = (s.ago(2.5 + 1.3 * i) - rollout).total_seconds()

        def count(t: datetime, n: int = restarts[i], span: float = span) -> int:
            return max(0, min(n, int(n * (t - rollout).total_seconds() / span)))

        s.restarts(ref, count, since=rollout + timedelta(seconds=40))
    for ref in login:
        s.http(ref, "/oauth/token", lambda t: 11.0, lambda t: 0.6 if t >= rollout else 0.003,
               lambda t: 0.07, method="POST")
        s.usage(ref, 0.2, 210e6, cpu_limit=1)
    s.counter("externalsecret_sync_calls_error", "Total number of the External Secret sync "
              "errors", {"namespace": "payments", "name": "stripe-keys"}, lambda t: 1 / 30)
    s.counter("externalsecret_sync_calls", "Total number of the External Secret sync calls",
              {"namespace": "auth", "name": "session-signer-keys"}, lambda t: 1 / 3600)

    s.write(root, title="Logins fail after a quiet secret refresh",
            report="logins are failing since ~7:45, login-api throws 503s. The external-secrets "
            "operator has been spamming AccessDenied errors all morning - is AWS auth broken "
            "for the cluster?",
            category="crash_loop", culprit=("Deployment", "auth", "session-signer"),
            evidence=[key_err, "CrashLoopBackOff", "44+1 bytes",
                      "Changes detected in 'session-signer-keys'"],
            fix="Store the rotated key in Secrets Manager without the trailing newline (or "
            "trim it in the ExternalSecret template), let the operator refresh "
            "session-signer-keys, and restart session-signer.")
