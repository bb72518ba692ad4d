# ruff: noqa: E501 - story data: log lines and messages are kept whole, as the tools print them
"""Stories 3 and 4: transcoders Pending on a node group at its maximum; a renewed server
certificate that mTLS clients reject for its key usage."""

from __future__ import annotations

import random
from datetime import timedelta

from tests.data.holdout42._generator import kit
from tests.data.holdout42._generator.kit import Series, Story, parse


def pending_node_group_max() -> Story:
    """Vantage Render: video-transcoder was scaled from 6 to 10 for a campaign. Each pod asks
    for 3 CPUs and must run on the transcode node group (6 nodes of 4 CPUs, max size 6). Four
    pods stay Pending with Insufficient cpu; the cluster autoscaler cannot add a node because
    the group is at its maximum. The general nodes have room but do not match the selector."""
    now = parse("2026-11-28T18:05:00Z")
    rnd = random.Random(3)
    ns = "exports"
    s = Story("transcoder-pending-node-group-max", "Video exports stuck in the queue", now,
              "video exports stuck in 'queued' for about an hour now, support has 30+ tickets. "
              "transcoder workers look busy but fine in grafana, cpu ~90% which is normal for them. "
              "we bumped them up for the black friday campaign so there should be plenty??",
              {"category": "unschedulable",
               "culprit": {"kind": "Deployment", "namespace": ns, "name": "video-transcoder"},
               "evidence": ["Insufficient cpu", "max node group size reached", "Pending"],
               "fix": "Raise the transcode node group's maximum size (or lower the transcoder's "
                      "3-CPU request / let it run on the general nodes) so the four Pending "
                      "replicas can be placed."})
    old = now - timedelta(days=300)
    s.objects += [kit.namespace(n, old) for n in (ns, "kube-system", "web")]
    transcode = [f"ip-10-30-{i}-{11 + i * 7}.us-east-2.compute.internal" for i in range(6)]
    general = [f"ip-10-30-{8 + i}-{90 + i}.us-east-2.compute.internal" for i in range(3)]
    for i, n in enumerate(transcode):
        s.objects.append(kit.node(n, now - timedelta(days=2, hours=i), now, cpu="4", memory="8Gi",
                                  allocatable_cpu="3920m", allocatable_memory="7Gi", ip=f"10.30.{i}.{11 + i * 7}",
                                  labels={"eks.amazonaws.com/nodegroup": "transcode-c6i", "workload": "transcode",
                                          "node.kubernetes.io/instance-type": "c6i.xlarge"}))
    for i, n in enumerate(general):
        s.objects.append(kit.node(n, now - timedelta(days=5, hours=i), now, cpu="8", memory="32Gi",
                                  allocatable_cpu="7910m", allocatable_memory="29Gi", ip=f"10.30.{8 + i}.{90 + i}",
                                  labels={"eks.amazonaws.com/nodegroup": "general-m6i",
                                          "node.kubernetes.io/instance-type": "m6i.2xlarge"}))
    image = "ghcr.io/vantage-render/video-transcoder:7.3.1"
    labels = {"app": "video-transcoder", "queue": "exports"}
    tmpl = kit.template(labels, [kit.container(
        "transcoder", image, ports=[9100], requests={"cpu": "3", "memory": "3Gi"},
        limits={"cpu": "3500m", "memory": "5Gi"},
        env=kit.env(QUEUE_URL="amqp://exports-mq.exports.svc:5672", FFMPEG_THREADS="3", PREFETCH="1"))],
        node_selector={"workload": "transcode"})
    scaled = now - timedelta(minutes=52)
    rollout = now - timedelta(days=2, hours=6)
    s.objects.append(kit.deployment(ns, "video-transcoder", old, tmpl, replicas=10, revision=58,
                                    ready=6, updated=10, available=6, unavailable=4, changed=scaled))
    rs, h = kit.replicaset(ns, "video-transcoder", 58, rollout, tmpl, replicas=10, ready=6)
    s.objects.append(rs)
    rsname = rs["metadata"]["name"]
    running_pods = []
    for i in range(6):
        name = f"video-transcoder-{h}-{kit.suffix(f'vt{i}')}"
        started = now - timedelta(days=2, hours=i % 3)
        p = kit.pod(ns, name, started, tmpl, owner=("ReplicaSet", rsname), node_name=transcode[i],
                    statuses=[kit.running("transcoder", started, image=image)], host_ip=f"10.30.{i}.{11 + i * 7}")
        running_pods.append(p)
        s.objects.append(p)
    msg = ("0/9 nodes are available: 3 node(s) didn't match Pod's node affinity/selector, 6 Insufficient cpu. "
           "preemption: 0/9 nodes are available: 3 Preemption is not helpful for scheduling, "
           "6 No preemption victims found for incoming pod.")
    pending = []
    for i in range(4):
        name = f"video-transcoder-{h}-{kit.suffix(f'vtp{i}')}"
        created = scaled + timedelta(seconds=1)
        p = kit.pod(ns, name, created, tmpl, owner=("ReplicaSet", rsname), node_name=None, statuses=None,
                    phase="Pending", pod_conditions=[{"type": "PodScheduled", "status": "False",
                                                      "reason": "Unschedulable", "message": msg,
                                                      "lastProbeTime": None,
                                                      "lastTransitionTime": kit.iso(created)}])
        pending.append(p)
        s.objects.append(p)
        s.objects.append(kit.event(ns, "Pod", name, "FailedScheduling", msg, created, now - timedelta(minutes=2 + i),
                                   count=9 + i, type_="Warning", source="default-scheduler"))
        s.objects.append(kit.event(ns, "Pod", name, "NotTriggerScaleUp",
                                   "pod didn't trigger scale-up: 1 node(s) didn't match Pod's node affinity/selector, "
                                   "1 max node group size reached", created + timedelta(seconds=10),
                                   now - timedelta(minutes=1, seconds=10 * i), count=31 - i, source="cluster-autoscaler"))
    s.objects.append(kit.event(ns, "Deployment", "video-transcoder", "ScalingReplicaSet",
                               f"Scaled up replica set {rsname} to 10 from 6", scaled, scaled,
                               source="deployment-controller"))
    s.objects.append(kit.event(ns, "ReplicaSet", rsname, "SuccessfulCreate",
                               f"Created pod: {pending[0]['metadata']['name']}", scaled, scaled, count=4,
                               source="replicaset-controller"))
    s.objects.append(kit.configmap("kube-system", "cluster-autoscaler-status", old, {"status": (
        f"Cluster-autoscaler status at {kit.iso(now - timedelta(seconds=8))}:\n"
        "Cluster-wide:\n"
        f"  Health:      Healthy (ready=9 unready=0 notStarted=0 longNotStarted=0 registered=9 longUnregistered=0)\n"
        f"               LastProbeTime:      {kit.iso(now - timedelta(seconds=8))}\n"
        f"               LastTransitionTime: {kit.iso(now - timedelta(days=5))}\n"
        "  ScaleUp:     NoActivity (ready=9 registered=9)\n"
        f"               LastProbeTime:      {kit.iso(now - timedelta(seconds=8))}\n"
        f"               LastTransitionTime: {kit.iso(now - timedelta(days=2, hours=1))}\n"
        "  ScaleDown:   NoCandidates (candidates=0)\n"
        f"               LastProbeTime:      {kit.iso(now - timedelta(seconds=8))}\n"
        f"               LastTransitionTime: {kit.iso(now - timedelta(hours=9))}\n\n"
        "NodeGroups:\n"
        "  Name:        eks-general-m6i-20250312\n"
        "  Health:      Healthy (ready=3 unready=0 notStarted=0 longNotStarted=0 registered=3 longUnregistered=0 cloudProviderTarget=3 (minSize=3, maxSize=12))\n"
        "  ScaleUp:     NoActivity (ready=3 cloudProviderTarget=3)\n"
        "  ScaleDown:   NoCandidates (candidates=0)\n\n"
        "  Name:        eks-transcode-c6i-20250312\n"
        "  Health:      Healthy (ready=6 unready=0 notStarted=0 longNotStarted=0 registered=6 longUnregistered=0 cloudProviderTarget=6 (minSize=2, maxSize=6))\n"
        "  ScaleUp:     NoActivity (ready=6 cloudProviderTarget=6)\n"
        "  ScaleDown:   NoCandidates (candidates=0)\n")},
        annotations={"cluster-autoscaler.kubernetes.io/last-updated": kit.iso(now - timedelta(seconds=8))}))
    # bystanders
    _, _, api_pods = kit.app(s, ns, "export-api", "ghcr.io/vantage-render/export-api:3.40.0", general,
                             replicas=2, revision=112, port=8000, rolled=timedelta(days=1, hours=3),
                             requests={"cpu": "250m", "memory": "256Mi"}, limits={"memory": "512Mi"})
    _, _, mq_pods = kit.app(s, ns, "exports-mq", "rabbitmq:3.13.7-management", general[2:], replicas=1,
                            revision=4, port=5672, rolled=timedelta(days=5), requests={"cpu": "500m", "memory": "1Gi"},
                            limits={"memory": "2Gi"})
    kit.app(s, "web", "storefront", "ghcr.io/vantage-render/storefront:2026.11.27", general, replicas=3,
            revision=301, port=3000, rolled=timedelta(hours=20))
    s.objects.append(kit.event("web", "Pod", next(o for o in s.objects if o["kind"] == "Pod" and
                                              o["metadata"]["name"].startswith("storefront"))["metadata"]["name"],
                               "Unhealthy", 'Readiness probe failed: HTTP probe failed with statuscode: 503',
                               now - timedelta(minutes=37), now - timedelta(minutes=36), count=2, type_="Warning"))
    depth = {"v": 40.0}

    def api_line(at, r):
        if r.random() < 0.3:
            depth["v"] += r.randint(2, 9)
            return "info", f"export job queued id=exp_{r.randint(10**6, 10**7)} preset=1080p-h264 queue_depth={int(depth['v'])}"
        return "info", f"GET /v1/exports/{r.randint(10**6, 10**7)} 200 {r.randint(3, 30)}ms status=queued"
    kit.chatter(s, ns, "export-api", api_pods, "export-api", api_line, seed=31)

    def tc_line(at, r):
        if r.random() < 0.1:
            return "warn", f"segment retry job=exp_{r.randint(10**6, 10**7)} seg={r.randint(1, 80)} reason=\"input stall 5s\""
        return "info", f"job done id=exp_{r.randint(10**6, 10**7)} frames={r.randint(2000, 40000)} took={r.randint(40, 600)}s speed={r.uniform(1.1, 3.4):.1f}x"
    kit.chatter(s, ns, "video-transcoder", running_pods, "transcoder", tc_line, seed=32, every=(60, 240),
                fmt=lambda at, lv, tx: f'level={lv} ts={kit.iso_ms(at)} caller=worker.go:{rnd.randint(80, 300)} msg="{tx}"')
    kit.chatter(s, ns, "exports-mq", mq_pods, "exports-mq",
                lambda at, r: ("info", f"accepting AMQP connection <0.{r.randint(1000, 9999)}.0> (10.30.8.{r.randint(2, 200)}:{r.randint(30000, 60000)} -> 10.30.10.92:5672)"),
                seed=33, every=(120, 400))
    # metrics
    queue = Series("rabbitmq_queue_messages_ready", "gauge", "Messages ready to be delivered to consumers")
    cpu = Series("container_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed")
    times = kit.steps(now - timedelta(hours=3), now, timedelta(minutes=1))
    for at in times:
        before = at < scaled - timedelta(minutes=30)
        v = 30 + rnd.randint(-8, 8) if before else 30 + (at - (scaled - timedelta(minutes=30))).total_seconds() / 60 * 5.2
        queue.add({"namespace": ns, "queue": "exports.transcode", "vhost": "/"}, at, int(v))
    for p in running_pods:
        kit.counter_walk(cpu, {"namespace": ns, "pod": p["metadata"]["name"], "container": "transcoder"}, times,
                         lambda at: 3.3 + rnd.uniform(-0.2, 0.15), start=5.1e5)
    s.metrics += [queue, cpu]
    return s


def server_cert_wrong_eku() -> Story:
    """Brightledger: posting-gateway serves its internal mTLS API on 8443 with a certificate
    that a vault-agent sidecar renews. Today's renewal came from a PKI role that issues client
    certificates only (extended key usage clientAuth), so Go clients that verify the server
    refuse it with "certificate specifies an incompatible key usage". The public API behind
    the Ingress (plain HTTP to 8080) is unaffected."""
    now = parse("2026-11-30T16:40:00Z")
    rnd = random.Random(4)
    ns, cns = "ledger", "settlement"
    renewed = now - timedelta(hours=2, minutes=12)
    s = Story("posting-gateway-cert-eku", "Settlement batches failing to post", now,
              "settlement batches are failing since early afternoon, settlement-worker logs are full of "
              "TLS errors. statements site is totally fine and uses the same ledger so I doubt it's the "
              "ledger. did someone rotate the settlement client cert?",
              {"category": "certificate",
               "culprit": {"kind": "Deployment", "namespace": ns, "name": "posting-gateway"},
               "evidence": ["certificate specifies an incompatible key usage", "remote error: tls: bad certificate",
                            "pki_int/issue/mesh-client"],
               "fix": "Reissue posting-gateway's serving certificate from the server role (extended key "
                      "usage serverAuth) and point its vault-agent template back at that role."})
    old = now - timedelta(days=400)
    s.objects += [kit.namespace(n, old) for n in (ns, cns, "ingress-nginx")]
    nodes = [f"aks-system-{kit.suffix(f'vm{i}', 6)}-vmss00000{i}" for i in range(4)]
    for i, n in enumerate(nodes):
        s.objects.append(kit.node(n, now - timedelta(days=3, hours=i * 5), now, ip=f"10.224.0.{4 + i}",
                                  labels={"kubernetes.azure.com/agentpool": "system"}))
    gimage = "brightledger.azurecr.io/ledger/posting-gateway:1.44.2"
    agent_image = "hashicorp/vault:1.17.6"
    labels = {"app": "posting-gateway"}
    vol = [{"name": "vault-secrets", "emptyDir": {"medium": "Memory"}},
           {"name": "agent-config", "configMap": {"name": "posting-gateway-vault-agent"}}]
    gw = kit.container("gateway", gimage, ports=[8080, 8443], requests={"cpu": "200m", "memory": "256Mi"},
                       limits={"memory": "512Mi"},
                       env=kit.env(TLS_CERT_FILE="/vault/secrets/tls.crt", TLS_KEY_FILE="/vault/secrets/tls.key",
                                   TLS_CLIENT_CA_FILE="/vault/secrets/ca.crt", MTLS_LISTEN=":8443", HTTP_LISTEN=":8080"),
                       mounts=[{"name": "vault-secrets", "mountPath": "/vault/secrets", "readOnly": True}],
                       readiness=kit.http_probe("/healthz", 8080), liveness=kit.http_probe("/healthz", 8080, delay=10))
    agent = kit.container("vault-agent", agent_image, requests={"cpu": "25m", "memory": "64Mi"},
                          limits={"memory": "128Mi"}, args=["agent", "-config=/etc/vault/agent.hcl"],
                          mounts=[{"name": "vault-secrets", "mountPath": "/vault/secrets"},
                                  {"name": "agent-config", "mountPath": "/etc/vault"}])
    tmpl = kit.template(labels, [gw, agent], volumes=vol, service_account="posting-gateway")
    rolled = now - timedelta(days=4, hours=2)
    s.objects.append(kit.deployment(ns, "posting-gateway", old, tmpl, replicas=3, revision=77, changed=rolled))
    rs, h = kit.replicaset(ns, "posting-gateway", 77, rolled, tmpl, replicas=3)
    s.objects.append(rs)
    gpods = []
    for i in range(3):
        name = f"posting-gateway-{h}-{kit.suffix(f'pg{i}')}"
        p = kit.pod(ns, name, rolled + timedelta(seconds=i * 20), tmpl, owner=("ReplicaSet", rs["metadata"]["name"]),
                    node_name=nodes[i], statuses=[kit.running("gateway", rolled, image=gimage),
                                                  kit.running("vault-agent", rolled, image=agent_image)])
        gpods.append(p)
        s.objects.append(p)
    s.objects.append(kit.service(ns, "posting-gateway", old, labels, [("http", 80, 8080), ("mtls", 8443, 8443)],
                                 cluster_ip="10.0.118.40"))
    s.objects.append(kit.endpoints(ns, "posting-gateway", old, gpods, [("http", 8080), ("mtls", 8443)]))
    s.objects.append(kit.configmap(ns, "posting-gateway-vault-agent", old, {"agent.hcl": (
        'auto_auth {\n  method "kubernetes" {\n    mount_path = "auth/aks-prod"\n    config = { role = "posting-gateway" }\n  }\n}\n'
        'template_config {\n  static_secret_render_interval = "10m"\n}\n'
        'template {\n  destination = "/vault/secrets/tls.crt"\n'
        '  contents = "{{ with pkiCert \\"pki_int/issue/mesh-client\\" \\"common_name=posting-gateway.ledger.svc\\" '
        '\\"alt_names=posting-gateway.ledger.svc.cluster.local\\" \\"ttl=72h\\" }}{{ .Cert }}{{ .CA }}{{ end }}"\n}\n'
        'template {\n  destination = "/vault/secrets/tls.key"\n'
        '  contents = "{{ with pkiCert \\"pki_int/issue/mesh-client\\" \\"common_name=posting-gateway.ledger.svc\\" }}{{ .Key }}{{ end }}"\n}\n')},
        annotations={"ledger.brightledger.io/changed-by": "pki-consolidation (PLAT-2291)"}))
    ingress = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
               "metadata": kit.metadata("posting-gateway-public", ns, old,
                                        annotations={"cert-manager.io/cluster-issuer": "letsencrypt-prod"}),
               "spec": {"ingressClassName": "nginx",
                        "tls": [{"hosts": ["api.brightledger.io"], "secretName": "api-brightledger-io-tls"}],
                        "rules": [{"host": "api.brightledger.io", "http": {"paths": [{
                            "path": "/ledger", "pathType": "Prefix",
                            "backend": {"service": {"name": "posting-gateway", "port": {"number": 80}}}}]}}]},
               "status": {"loadBalancer": {"ingress": [{"ip": "20.61.14.201"}]}}}
    s.objects.append(ingress)
    # gateway logs: cert reload at renewal time, then handshake errors from settlement pods
    cimage = "brightledger.azurecr.io/settlement/settlement-worker:5.2.0"
    _, _, wpods = kit.app(s, cns, "settlement-worker", cimage, nodes[1:], replicas=2, revision=19, port=9000,
                          service_port=None, rolled=timedelta(days=6),
                          env_vars={"LEDGER_URL": "https://posting-gateway.ledger.svc:8443",
                                    "CLIENT_CERT": "/etc/mesh/client.crt"})
    wips = [p["status"]["podIP"] for p in wpods]
    for gi, gp in enumerate(gpods):
        name = gp["metadata"]["name"]
        lines, agent_lines = [], []
        at = now - timedelta(hours=4)
        agent_lines.append(f"{kit.iso_ms(renewed - timedelta(hours=24))} [INFO]  (runner) rendered \"(dynamic)\" => \"/vault/secrets/tls.crt\"")
        while at < now:
            if renewed <= at < renewed + timedelta(seconds=60) and not any("reloaded" in x for x in lines):
                agent_lines.append(f"{kit.iso_ms(renewed + timedelta(seconds=gi * 3))} [INFO]  (runner) rendered \"(dynamic)\" => \"/vault/secrets/tls.crt\"")
                agent_lines.append(f"{kit.iso_ms(renewed + timedelta(seconds=gi * 3, milliseconds=40))} [INFO]  (runner) rendered \"(dynamic)\" => \"/vault/secrets/tls.key\"")
                lines.append(f'time={kit.iso_ms(renewed + timedelta(seconds=gi * 3 + 1))} level=INFO msg="serving certificate reloaded" '
                             f'subject="CN=posting-gateway.ledger.svc" issuer="CN=Brightledger Intermediate CA G3" '
                             f'not_after={kit.iso(renewed + timedelta(hours=72))} serial=3e:{rnd.randint(10, 99)}:a1:{rnd.randint(10, 99)}')
            if at > renewed and rnd.random() < 0.7:
                ip = rnd.choice(wips)
                lines.append(f"time={kit.iso_ms(at)} level=WARN msg=\"http: TLS handshake error from {ip}:{rnd.randint(32768, 60999)}: "
                             "remote error: tls: bad certificate\" listener=mtls")
            path = rnd.choice(["/ledger/v2/accounts/{id}/balance", "/ledger/v2/statements", "/ledger/v2/accounts/{id}/entries"])
            lines.append(f'time={kit.iso_ms(at)} level=INFO msg=request listener=http method=GET path={path} status=200 dur={rnd.randint(4, 60)}ms')
            if at < renewed and rnd.random() < 0.5:
                lines.append(f'time={kit.iso_ms(at)} level=INFO msg=request listener=mtls method=POST path=/ledger/v2/postings status=201 '
                             f'dur={rnd.randint(8, 70)}ms peer="CN=settlement-worker.settlement.svc"')
            at += timedelta(seconds=rnd.randint(20, 60))
        s.log(ns, name, "gateway", lines)
        s.log(ns, name, "vault-agent", agent_lines)
        for line in lines[::2]:
            stamp = kit.parse(line.split()[0][5:])
            lvl = "warn" if "level=WARN" in line else "info"
            s.docs.append(kit.log_doc(stamp, line.split(" msg=", 1)[1], lvl, "posting-gateway", ns, name, "gateway"))
    for p in wpods:
        name = p["metadata"]["name"]
        lines = []
        at = now - timedelta(hours=4)
        while at < now:
            batch = f"stl-{at.strftime('%H%M')}-{rnd.randint(100, 999)}"
            if at < renewed + timedelta(seconds=8):
                text = f"batch {batch} posted entries={rnd.randint(40, 400)} ledger_status=201"
                lines.append(f"{kit.iso_ms(at)}\tINFO\tsettle/poster.go:88\t{text}")
                s.docs.append(kit.log_doc(at, text, "info", "settlement-worker", cns, name, "settlement-worker"))
            else:
                err = ('Post "https://posting-gateway.ledger.svc:8443/ledger/v2/postings": tls: failed to verify certificate: '
                       "x509: certificate specifies an incompatible key usage")
                text = f"batch {batch} failed, will retry in 60s: {err}"
                lines.append(f"{kit.iso_ms(at)}\tERROR\tsettle/poster.go:102\t{text}")
                s.docs.append(kit.log_doc(at, text, "error", "settlement-worker", cns, name, "settlement-worker",
                                          error__type="*tls.CertificateVerificationError"))
            at += timedelta(seconds=rnd.randint(50, 80))
        s.log(cns, name, "settlement-worker", lines)
    # a healthy non-mTLS client in the ledger namespace
    _, _, web = kit.app(s, ns, "statements-web", "brightledger.azurecr.io/ledger/statements-web:9.1.0", nodes, replicas=2,
                        revision=203, port=3000, rolled=timedelta(days=1, hours=5),
                        env_vars={"LEDGER_API": "http://posting-gateway.ledger.svc/ledger"})
    kit.chatter(s, ns, "statements-web", web, "statements-web",
                lambda at, r: ("info", f"GET /statements/{r.randint(2020, 2026)}-{r.randint(1, 12):02d} 200 {r.randint(30, 300)}ms ledger=ok"),
                seed=41, every=(30, 100))
    s.objects.append(kit.event(ns, "Pod", web[0]["metadata"]["name"], "Unhealthy",
                               "Readiness probe failed: Get \"http://10.244.2.17:3000/healthz\": context deadline exceeded",
                               now - timedelta(minutes=48), now - timedelta(minutes=48), type_="Warning"))
    s.objects.append(kit.event(cns, "Pod", wpods[0]["metadata"]["name"], "Pulled",
                               f'Container image "{cimage}" already present on machine',
                               now - timedelta(minutes=57), now - timedelta(minutes=57)))
    errs = Series("settlement_ledger_post_failures_total", "counter", "Failed postings to the ledger")
    reqs = Series("http_requests_total", "counter", "HTTP requests by listener and code")
    times = kit.steps(now - timedelta(hours=4), now, timedelta(minutes=1))
    for p in wpods:
        kit.counter_walk(errs, {"namespace": cns, "pod": p["metadata"]["name"]}, times,
                         lambda at: (1 / 65) if at > renewed else 0.0)
    for p in gpods:
        kit.counter_walk(reqs, {"namespace": ns, "pod": p["metadata"]["name"], "listener": "http", "code": "200"},
                         times, lambda at: 2.4 + rnd.uniform(-0.3, 0.3), start=8.8e5)
        kit.counter_walk(reqs, {"namespace": ns, "pod": p["metadata"]["name"], "listener": "mtls", "code": "201"},
                         times, lambda at: 0.8 if at < renewed else 0.0, start=2.1e5)
    s.metrics += [errs, reqs]
    return s
