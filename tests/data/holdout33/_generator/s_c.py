"""Bramble Recipes' slow search (a StatefulSet scale-up stopped by a storage quota) and
Kestrel Fitness's missing password-reset emails (an email provider revoked the key)."""

from __future__ import annotations

import json
from datetime import timedelta as td
from typing import Any

from tests.data.holdout33._generator.kit33 import (
    Scenario,
    container,
    endpoints,
    event,
    http_probe,
    iso,
    namespace,
    node,
    parse,
    pod,
    rollout,
    service,
    suffix,
    template,
    timeline,
)


def storage_quota() -> Scenario:
    now = parse("2026-11-29T10:35:00Z")
    s = Scenario(
        "recipe-search-slow-after-scale-up",
        "Recipe search slow even after adding an OpenSearch node",
        now,
        "recipe search is super slow this morning (5s+, some timeouts). sunday brunch peak. "
        "we scaled opensearch from 3 to 4 data nodes at 9 but it's not getting better, is the "
        "new node still relocating shards? cluster health is yellow-ish\n",
        {"category": "quota_exceeded",
         "culprit": {"kind": "StatefulSet", "namespace": "search", "name": "opensearch-data"},
         "evidence": ["exceeded quota: search-storage", "requests.storage=650Gi",
                      "data-opensearch-data-3"],
         "fix": "Raise the search-storage ResourceQuota's requests.storage (or drop the unused "
                "snapshot claim) so the StatefulSet can create data-opensearch-data-3."})
    old = now - td(days=500)
    names = [f"k8s-search-{i:02d}.int.bramble.cloud" for i in range(1, 6)] + \
            ["k8s-general-01.int.bramble.cloud"]
    hosts = {n: f"192.168.40.{21 + i}" for i, n in enumerate(names)}
    for i, n in enumerate(names):
        s.add(node(n, old + td(days=i * 10), now, zone="", region="fra1", instance="c2-30",
                   kubelet="v1.30.4", cpu="7800m", memory="29Gi"))
    for ns in ("search", "web", "kube-system"):
        s.add(namespace(ns, old))
    scaled = parse("2026-11-29T09:04:31Z")
    otmpl = template({"app": "opensearch-data", "role": "data"},
                     [container("opensearch", "opensearchproject/opensearch:2.15.0", cpu="3",
                                memory="16Gi", memory_limit="16Gi", port=9200,
                                env={"OPENSEARCH_JAVA_OPTS": "-Xms8g -Xmx8g",
                                     "node.roles": "data,ingest",
                                     "cluster.name": "recipes"},
                                readiness=http_probe("/_cluster/health?local=true", 9200),
                                mounts=[{"name": "data",
                                         "mountPath": "/usr/share/opensearch/data"}])])
    s.add({"apiVersion": "apps/v1", "kind": "StatefulSet",
           "metadata": {"name": "opensearch-data", "namespace": "search",
                        "creationTimestamp": iso(old), "labels": {"app": "opensearch-data"},
                        "generation": 12},
           "spec": {"replicas": 4, "serviceName": "opensearch-data-headless",
                    "podManagementPolicy": "Parallel",
                    "selector": {"matchLabels": {"app": "opensearch-data"}}, "template": otmpl,
                    "updateStrategy": {"type": "RollingUpdate"},
                    "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                        "accessModes": ["ReadWriteOnce"], "storageClassName": "csi-cinder-ssd",
                        "resources": {"requests": {"storage": "200Gi"}}}}]},
           "status": {"replicas": 4, "readyReplicas": 3, "currentReplicas": 4,
                      "updatedReplicas": 4, "availableReplicas": 3, "observedGeneration": 12,
                      "currentRevision": "opensearch-data-7c5d9f6b8",
                      "updateRevision": "opensearch-data-7c5d9f6b8", "collisionCount": 0}})
    opods = []
    for i in range(3):
        p = pod(f"opensearch-data-{i}", "search", "StatefulSet", "opensearch-data", otmpl,
                names[i], now - td(days=21, hours=i), ip=f"10.42.{i + 1}.18",
                host_ip=hosts[names[i]],
                extra_labels={"statefulset.kubernetes.io/pod-name": f"opensearch-data-{i}"})
        p["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {
            "claimName": f"data-opensearch-data-{i}"}}]
        opods.append(p)
        s.add(p)
    p3 = pod("opensearch-data-3", "search", "StatefulSet", "opensearch-data", otmpl, None,
             scaled + td(seconds=1), phase="Pending",
             extra_labels={"statefulset.kubernetes.io/pod-name": "opensearch-data-3"},
             pending_message='0/6 nodes are available: persistentvolumeclaim '
                             '"data-opensearch-data-3" not found. preemption: 0/6 nodes are '
                             "available: 6 Preemption is not helpful for scheduling.")
    p3["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {
        "claimName": "data-opensearch-data-3"}}]
    s.add(p3)
    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
          "metadata": {"name": "csi-cinder-ssd", "creationTimestamp": iso(old),
                       "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
          "provisioner": "cinder.csi.openstack.org", "reclaimPolicy": "Delete",
          "volumeBindingMode": "WaitForFirstConsumer", "allowVolumeExpansion": True}
    s.add(sc)
    def pvc(name: str, size: str, created: Any) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": name, "namespace": "search", "creationTimestamp": iso(created),
                             "labels": {"app": "opensearch-data"} if "data-" in name else {}},
                "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "csi-cinder-ssd",
                         "resources": {"requests": {"storage": size}},
                         "volumeName": f"pvc-{suffix(name, 12)}", "volumeMode": "Filesystem"},
                "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"],
                           "capacity": {"storage": size}}}
    for i in range(3):
        s.add(pvc(f"data-opensearch-data-{i}", "200Gi", old + td(hours=i)))
    s.add(pvc("snapshots-scratch", "50Gi", now - td(days=60)))
    s.add({"apiVersion": "v1", "kind": "ResourceQuota",
           "metadata": {"name": "search-storage", "namespace": "search",
                        "creationTimestamp": iso(now - td(days=60)),
                        "annotations": {"bramble.cloud/ticket": "PLAT-1182 storage budget"}},
           "spec": {"hard": {"requests.storage": "650Gi", "persistentvolumeclaims": "8"}},
           "status": {"hard": {"requests.storage": "650Gi", "persistentvolumeclaims": "8"},
                      "used": {"requests.storage": "650Gi", "persistentvolumeclaims": "4"}}})
    s.add({"apiVersion": "v1", "kind": "ResourceQuota",
           "metadata": {"name": "search-compute", "namespace": "search",
                        "creationTimestamp": iso(now - td(days=60))},
           "spec": {"hard": {"requests.cpu": "24", "requests.memory": "96Gi"}},
           "status": {"hard": {"requests.cpu": "24", "requests.memory": "96Gi"},
                      "used": {"requests.cpu": "13", "requests.memory": "66Gi"}}})
    s.add(service("opensearch-data-headless", "search", old, {"app": "opensearch-data"}, 9200,
                  9200, headless=True))
    s.add(service("opensearch", "search", old, {"app": "opensearch-data"}, 9200, 9200,
                  cluster_ip="10.43.12.5"))
    s.add(endpoints("opensearch", "search", old,
                    [(p["metadata"]["name"], p["status"]["podIP"], p["spec"]["nodeName"])
                     for p in opods], port=9200))
    # the api in front
    atmpl = template({"app": "recipe-search-api"},
                     [container("api", "ghcr.io/bramble/recipe-search-api:3.3.0", cpu="250m",
                                cpu_limit="1", readiness=http_probe("/readyz"),
                                env={"OPENSEARCH_URL": "http://opensearch.search.svc:9200",
                                     "SEARCH_TIMEOUT": "5s"})])
    _, apods = rollout(s, "recipe-search-api", "search", old,
                       [(28, atmpl, now - td(days=4))], [names[3], names[4], names[5]],
                       ips=["10.42.4.31", "10.42.5.32", "10.42.6.33"], host_ips=hosts)
    s.add({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
           "metadata": {"name": "recipe-search-api", "namespace": "search",
                        "creationTimestamp": iso(old)},
           "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                       "name": "recipe-search-api"},
                    "minReplicas": 3, "maxReplicas": 10,
                    "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                        "type": "Utilization", "averageUtilization": 75}}}]},
           "status": {"currentReplicas": 3, "desiredReplicas": 3,
                      "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu",
                                          "current": {"averageUtilization": 31}}}]}})
    wtmpl = template({"app": "recipes-web"}, [container("web", "ghcr.io/bramble/recipes-web:"
                                                        "2026.47.1", readiness=http_probe("/"))])
    rollout(s, "recipes-web", "web", old, [(311, wtmpl, now - td(hours=20))], names[3:6],
            ips=["10.42.4.60", "10.42.5.61", "10.42.6.62"], host_ips=hosts)
    # events
    msg = ('create Claim data-opensearch-data-3 for Pod opensearch-data-3 in StatefulSet '
           'opensearch-data failed error: persistentvolumeclaims "data-opensearch-data-3" is '
           'forbidden: exceeded quota: search-storage, requested: requests.storage=200Gi, used: '
           'requests.storage=650Gi, limited: requests.storage=650Gi')
    s.add(event("search", "StatefulSet", "opensearch-data", "FailedCreate", msg, scaled,
                now - td(minutes=3), count=47, component="statefulset-controller", api="apps/v1"))
    s.add(event("search", "Pod", "opensearch-data-3", "FailedScheduling",
                p3["status"]["conditions"][0]["message"], scaled + td(seconds=1),
                now - td(minutes=1), count=33, component="default-scheduler"))
    s.add(event("search", "Pod", apods[1]["metadata"]["name"], "Unhealthy",
                "Readiness probe failed: Get \"http://10.42.5.32:8080/readyz\": context deadline "
                "exceeded (Client.Timeout exceeded while awaiting headers)",
                now - td(minutes=26), now - td(minutes=25), count=2, host=names[4]))
    # opensearch logs: busy, rejecting searches, health yellow not red
    peak = parse("2026-11-29T08:50:00Z")
    for p in opods:
        pname = p["metadata"]["name"]
        lines = []
        t = now - td(hours=3)
        k = 0
        while t < now:
            st = t.strftime("%Y-%m-%dT%H:%M:%S,") + f"{(k * 53) % 1000:03d}"
            if t > peak and k % 2 == 0:
                m = (f"[{st}][WARN ][o.o.s.SearchService     ] [{pname}] query took "
                     f"[{2 + k % 5}.{k % 9}s] > slowlog threshold [2s], index [recipes-v7]")
                lines.append(m)
            if t > peak + td(minutes=20) and k % 3 == 0:
                m = (f"[{st}][DEBUG][o.o.a.s.TransportSearchAction] [{pname}] "
                     "OpenSearchRejectedExecutionException[rejected execution of "
                     "TimedRunnable on QueueResizingOpenSearchThreadPoolExecutor[name = "
                     f"{pname}/search, queue capacity = 1000, task execution EWMA = 412.3ms]]")
                lines.append(m)
                if k % 6 == 0:
                    s.doc(t, "opensearch", "search", pname, "opensearch", "warn",
                          m.split("] ", 3)[-1], **{"error.type": "rejected_execution_exception"})
            if k % 20 == 0:
                lines.append(f"[{st}][INFO ][o.o.c.r.a.AllocationService] [{pname}] "
                             "Cluster health status changed from [GREEN] to [YELLOW]"
                             if t > scaled and k % 40 == 0 else
                             f"[{st}][INFO ][o.o.m.j.JvmGcMonitorService] [{pname}] "
                             f"[gc][{8000 + k}] overhead, spent [312ms] collecting in the last "
                             "[1s]")
            t += td(seconds=30)
            k += 1
        s.log("search", pname, "opensearch", lines)
    for p in apods:
        pname = p["metadata"]["name"]
        lines = []
        t = now - td(hours=2)
        k = 0
        while t < now:
            took = (0.18 + (k % 7) * 0.02) if t < peak else (2.1 + (k * 37 % 40) / 10)
            status = 200 if took < 5 else 504
            lines.append(f'time={iso(t)} level={"info" if status == 200 else "error"} '
                         f'msg="search" q_len={5 + k % 20} status={status} took={took:.2f}s '
                         f'upstream=opensearch')
            if status != 200:
                s.doc(t, "recipe-search-api", "search", pname, "api", "error",
                      f"search upstream timeout after 5s status=504 q_len={5 + k % 20}",
                      **{"http.response.status_code": 504})
            if t > peak and k % 5 == 0:
                lines.append(f'time={iso(t)} level=warn msg="opensearch returned 429 '
                             'es_rejected_execution_exception, retrying" attempt=1')
            t += td(seconds=20)
            k += 1
        s.log("search", pname, "api", lines)
    # metrics
    ts = timeline(now, 4, 120)
    pk, sc_t = peak.timestamp(), scaled.timestamp()
    for p in opods:
        lab = {"namespace": "search", "pod": p["metadata"]["name"], "container": "opensearch"}
        s.metrics.counter("container_cpu_usage_seconds", "cpu", lab, ts,
                          lambda t: 1.4 if t < pk else 6.9 + (t % 5) * 0.1)
        s.metrics.gauge("container_memory_working_set_bytes", "mem", lab, ts,
                        lambda t: 14_100_000_000 + (t % 1000) * 100000)
        s.metrics.counter("opensearch_threadpool_threads_rejected_count", "rejections",
                          {**lab, "type": "search", "cluster": "recipes",
                           "node": p["metadata"]["name"]}, ts,
                          lambda t: 0 if t < pk + 1200 else 3.2)
    s.metrics.gauge("kube_statefulset_replicas", "desired", {"namespace": "search",
                    "statefulset": "opensearch-data", "pod": "kube-state-metrics-0"}, ts,
                    lambda t: 3 if t < sc_t else 4)
    s.metrics.gauge("kube_statefulset_status_replicas_ready", "ready", {"namespace": "search",
                    "statefulset": "opensearch-data", "pod": "kube-state-metrics-0"}, ts,
                    lambda t: 3)
    for p in apods:
        lab = {"namespace": "search", "pod": p["metadata"]["name"], "handler": "/v1/search"}
        s.metrics.histogram("http_request_duration_seconds", "latency", lab, ts,
                            lambda t: 11.0 if t < pk else 26.0,
                            lambda t: 0.19 if t < pk else 2.9, 0.5)
        s.metrics.counter("http_requests", "requests", {**lab, "code": "200"}, ts,
                          lambda t: 11.0 if t < pk else 23.5)
        s.metrics.counter("http_requests", "requests", {**lab, "code": "504"}, ts,
                          lambda t: 0.0 if t < pk else 2.5)
    return s


# --------------------------------------------------------------------------- mail


def revoked_key() -> Scenario:
    now = parse("2026-11-27T13:25:00Z")
    s = Scenario(
        "fitness-password-reset-emails-missing",
        "Password reset emails are not arriving",
        now,
        "users say password reset emails aren't arriving since around noon (support has 30+ "
        "tickets). auth-service was deployed at 11, could that have broken the reset flow? "
        "the reset endpoint still returns 200\n",
        {"category": "dependency_failure",
         "culprit": {"kind": "Deployment", "namespace": "identity", "name": "mailer"},
         "evidence": ["401", "The provided authorization grant is invalid, expired, or revoked",
                      "mailer_retry_queue_depth"],
         "fix": "Issue a new SendGrid API key, update the mailer's secret and restart the "
                "mailer; the retry queue will drain. auth-service's 11:00 rollout is unrelated."})
    old = now - td(days=180)
    names = [f"pool-kestrel-{suffix('kn' + str(i), 5)}" for i in range(3)]
    hosts = {n: f"10.114.0.{5 + i}" for i, n in enumerate(names)}
    for i, n in enumerate(names):
        s.add(node(n, old + td(days=i * 7), now, zone="", region="ams3", instance="s-4vcpu-8gb",
                   kubelet="v1.31.1", cpu="3900m", memory="6900Mi"))
    for ns in ("identity", "members", "data"):
        s.add(namespace(ns, old))
    deploy_at = parse("2026-11-27T11:02:00Z")
    revoke = parse("2026-11-27T12:03:41Z")
    def auth_tmpl(tag: str, ttl: str) -> dict[str, Any]:
        return template({"app": "auth-service"},
                        [container("app", "registry.digitalocean.com/kestrel/"
                                   f"identity-service:{tag}",
                                   readiness=http_probe("/healthz"),
                                   env={"RESET_TOKEN_TTL": ttl,
                                        "MAILER_URL": "http://mailer.identity.svc/v1/messages",
                                        "SESSION_STORE": "redis://redis.data.svc:6379/2"})])
    _, apods = rollout(s, "auth-service", "identity", old,
                       [(40, auth_tmpl("7.2.4", "15m"), now - td(days=9)),
                        (41, auth_tmpl("7.3.0", "30m"), deploy_at)], names,
                       ips=["10.244.0.40", "10.244.1.41", "10.244.2.42"], host_ips=hosts,
                       change_cause="auth-service 7.3.0: longer reset token TTL, passkey beta")
    s.add(service("auth-service", "identity", old, {"app": "auth-service"},
                  cluster_ip="10.245.10.10"))
    mtmpl = template({"app": "mailer"},
                     [container("mailer", "registry.digitalocean.com/kestrel/mailer:2.6.1",
                                cpu="100m", memory="192Mi", memory_limit="384Mi", port=3000,
                                env={"MAIL_PROVIDER": "sendgrid", "QUEUE_URL":
                                     "redis://redis.data.svc:6379/5", "MAX_ATTEMPTS": "8",
                                     "NODE_ENV": "production"},
                                env_from=[{"secretRef": {"name": "mailer-provider"}}],
                                readiness=http_probe("/health", 3000),
                                liveness=http_probe("/health", 3000, period=30))])
    _, mpods = rollout(s, "mailer", "identity", old, [(13, mtmpl, now - td(days=26))],
                       names[:2], ips=["10.244.0.77", "10.244.1.78"], host_ips=hosts)
    s.add(service("mailer", "identity", old, {"app": "mailer"}, 80, 3000,
                  cluster_ip="10.245.10.33"))
    s.add(endpoints("mailer", "identity", old,
                    [(p["metadata"]["name"], p["status"]["podIP"], p["spec"]["nodeName"])
                     for p in mpods], port=3000))
    rtmpl = template({"app": "redis"}, [container("redis", "redis:7.2.5", port=6379,
                                                  cpu="100m", memory="512Mi")])
    s.add({"apiVersion": "apps/v1", "kind": "StatefulSet",
           "metadata": {"name": "redis", "namespace": "data", "creationTimestamp": iso(old),
                        "labels": {"app": "redis"}},
           "spec": {"replicas": 1, "serviceName": "redis", "template": rtmpl,
                    "selector": {"matchLabels": {"app": "redis"}}},
           "status": {"replicas": 1, "readyReplicas": 1, "currentReplicas": 1,
                      "availableReplicas": 1, "updatedReplicas": 1}})
    s.add(pod("redis-0", "data", "StatefulSet", "redis", rtmpl, names[2], now - td(days=40),
              ip="10.244.2.9", host_ip=hosts[names[2]]))
    ptmpl = template({"app": "member-app-bff"},
                     [container("bff", "registry.digitalocean.com/kestrel/member-bff:19.1.0",
                                readiness=http_probe("/ready"))])
    _, bpods = rollout(s, "member-app-bff", "members", old, [(88, ptmpl, now - td(days=2))],
                       names[1:], ips=["10.244.1.90", "10.244.2.91"], host_ips=hosts)
    s.add(event("members", "Pod", bpods[0]["metadata"]["name"], "Unhealthy",
                "Readiness probe failed: Get \"http://10.244.1.90:8080/ready\": context deadline "
                "exceeded (Client.Timeout exceeded while awaiting headers)",
                now - td(minutes=44), now - td(minutes=44), host=names[1]))
    s.add(event("identity", "Pod", apods[2]["metadata"]["name"], "Pulled",
                'Container image "registry.digitalocean.com/kestrel/identity-service:7.3.0" '
                "already present on machine", now - td(minutes=38), now - td(minutes=38),
                type_="Normal", host=names[2]))
    # logs: auth-service asks the mailer (202 both before and after), mailer fails at sendgrid
    for i, p in enumerate(apods):
        pname = p["metadata"]["name"]
        lines = [json.dumps({"level": "info", "ts": iso(parse(p["metadata"]["creationTimestamp"])
                                                        + td(seconds=5)),
                             "msg": "auth-service 7.3.0 listening", "port": 8080})]
        t = deploy_at + td(minutes=2, seconds=i * 17)
        k = 0
        while t < now:
            if k % 3 == 0:
                lines.append(json.dumps({"level": "info", "ts": iso(t), "msg": "password reset "
                                         "requested", "user": f"u_{41000 + k * 7 + i}",
                                         "mailer_status": 202, "took_ms": 12 + k % 9}))
            else:
                lines.append(json.dumps({"level": "info", "ts": iso(t), "msg": "login ok",
                                         "method": "password" if k % 4 else "passkey"}))
            if k == 11 and i == 0:
                lines.append(json.dumps({"level": "warn", "ts": iso(t), "msg": "passkey "
                                         "attestation format 'apple' not supported, falling "
                                         "back", "user": "u_40117"}))
            t += td(seconds=40)
            k += 1
        s.log("identity", pname, "app", lines)
        for ln in lines[1::6]:
            rec = json.loads(ln)
            s.doc(parse(rec["ts"]), "auth-service", "identity", pname, "app", rec["level"],
                  rec["msg"])
    body = ('{"errors":[{"field":null,"message":"The provided authorization grant is invalid, '
            'expired, or revoked"}]}')
    for i, p in enumerate(mpods):
        pname = p["metadata"]["name"]
        lines = []
        t = now - td(hours=3) + td(seconds=i * 11)
        k = 0
        while t < now:
            epoch = int(t.timestamp() * 1000)
            tpl = ["password-reset", "welcome", "class-reminder", "receipt"][k % 4]
            if t < revoke:
                rec = {"level": 30, "time": epoch, "pid": 1, "hostname": pname,
                       "msg": "message delivered", "provider": "sendgrid", "status": 202,
                       "template": tpl, "messageId": f"{suffix(str(k) + pname, 10)}.filter"}
            else:
                attempt = 1 + k % 6
                rec = {"level": 50, "time": epoch, "pid": 1, "hostname": pname,
                       "msg": "provider rejected request", "provider": "sendgrid",
                       "status": 401, "body": body, "template": tpl, "attempt": attempt,
                       "nextRetryInSec": 30 * 2 ** attempt}
                s.doc(t, "mailer", "identity", pname, "mailer", "error",
                      f"provider rejected request provider=sendgrid status=401 body={body}",
                      **{"http.response.status_code": 401, "url.domain": "api.sendgrid.com",
                         "labels.template": tpl})
            lines.append(json.dumps(rec))
            if t > revoke and k % 15 == 0:
                lines.append(json.dumps({"level": 40, "time": epoch + 5, "pid": 1,
                                         "hostname": pname, "msg": "retry queue growing",
                                         "queue": "mail:retry",
                                         "depth": int((t - revoke).total_seconds() / 4.5)}))
            if k % 30 == 0:
                lines.append(json.dumps({"level": 30, "time": epoch + 9, "pid": 1,
                                         "hostname": pname, "msg": "GET /health 200",
                                         "responseTime": 2}))
            t += td(seconds=25)
            k += 1
        s.log("identity", pname, "mailer", lines)
    # metrics
    ts = timeline(now, 4)
    rv = revoke.timestamp()
    for p in mpods:
        lab = {"namespace": "identity", "pod": p["metadata"]["name"]}
        s.metrics.counter("mailer_provider_requests", "provider calls",
                          {**lab, "provider": "sendgrid", "status": "202"}, ts,
                          lambda t: 0.0 if t > rv else 0.11)
        s.metrics.counter("mailer_provider_requests", "provider calls",
                          {**lab, "provider": "sendgrid", "status": "401"}, ts,
                          lambda t: 0.19 if t > rv else 0.0)
        s.metrics.counter("http_requests", "requests received",
                          {**lab, "route": "/v1/messages", "code": "202"}, ts, lambda t: 0.11)
        s.metrics.gauge("container_memory_working_set_bytes", "mem",
                        {**lab, "container": "mailer"}, ts, lambda t: 96_000_000 + (t % 300) * 300)
        s.metrics.counter("kube_pod_container_status_restarts", "restarts",
                          {**lab, "container": "mailer"}, ts, lambda t: 0)
    s.metrics.gauge("mailer_retry_queue_depth", "messages waiting for a retry",
                    {"namespace": "identity", "pod": mpods[0]["metadata"]["name"],
                     "queue": "mail:retry"}, ts,
                    lambda t: max(0.0, (t - rv) / 4.5) + (t // 600) % 2)
    for p in apods:
        lab = {"namespace": "identity", "pod": p["metadata"]["name"]}
        s.metrics.counter("http_requests", "requests",
                          {**lab, "route": "/v1/password/reset", "code": "200"}, ts,
                          lambda t: 0.03 if t < rv else 0.06)
    return s


STORIES = {"recipe-search-slow-after-scale-up": storage_quota,
           "fitness-password-reset-emails-missing": revoked_key}
