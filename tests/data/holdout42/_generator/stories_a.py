# ruff: noqa: E501 - story data: log lines and messages are kept whole, as the tools print them
"""Stories 1 and 2: a tmpfs cache that eats the memory limit; a migration that cannot get
its lock."""

from __future__ import annotations

import random
from datetime import timedelta

from tests.data.holdout42._generator import kit
from tests.data.holdout42._generator.kit import Series, Story, parse


def tmpfs_cache_oom() -> Story:
    """Lumen Photos: the thumbnailer keeps rendered thumbnails in an emptyDir with medium
    Memory. tmpfs pages are charged to the container's memory cgroup, so as the cache fills
    the container passes its 1536Mi limit and is OOM-killed while its Go heap stays small."""
    now = parse("2026-11-26T14:20:00Z")
    rnd = random.Random(1)
    ns = "media"
    s = Story("thumbnail-cache-tmpfs-oom", "Gallery thumbnails broken, thumbnailer restarting",
              now, "gallery pages show broken thumbnails on and off since this morning. the "
              "thumbnailer pods restart every so often but the heap graphs are flat at ~150MB so "
              "it's not a memory leak. maybe the image CDN? can someone look",
              {"category": "oom_killed",
               "culprit": {"kind": "Deployment", "namespace": ns, "name": "thumbnailer"},
               "evidence": ["OOMKilled", "medium: Memory", "1536Mi"],
               "fix": "Move the render cache off tmpfs (a disk-backed emptyDir) or bound it with a "
                      "sizeLimit well under the container's memory limit and raise the limit to "
                      "cover heap plus cache."})
    old = now - timedelta(days=60)
    s.objects += [kit.namespace(ns, old), kit.namespace("kube-system", old - timedelta(days=90)),
                  kit.namespace("default", old - timedelta(days=90))]
    nodes = [f"ip-10-12-{i}-{20 + i}.eu-west-1.compute.internal" for i in (1, 2, 3)]
    for i, n in enumerate(nodes):
        s.objects.append(kit.node(n, old + timedelta(days=i), now, cpu="8", memory="32Gi",
                                  allocatable_cpu="7910m", allocatable_memory="29Gi",
                                  ip=f"10.12.{i + 1}.{20 + i + 1}",
                                  labels={"eks.amazonaws.com/nodegroup": "general-m6i"}))
    image = "registry.lumen.photos/media/thumbnailer:4.12.0"
    labels = {"app": "thumbnailer", "team": "media-platform"}
    tmpl = kit.template(labels, [kit.container(
        "thumbnailer", image, ports=[8080, 9090],
        requests={"cpu": "500m", "memory": "1Gi"}, limits={"cpu": "2", "memory": "1536Mi"},
        env=kit.env(CACHE_DIR="/var/cache/thumbs", CACHE_MAX_ENTRIES="400000",
                    GOMEMLIMIT="1100MiB", ORIGIN_BUCKET="s3://lumen-originals-eu"),
        mounts=[{"name": "render-cache", "mountPath": "/var/cache/thumbs"}],
        readiness=kit.http_probe("/readyz", 8080), liveness=kit.http_probe("/healthz", 8080, delay=15))],
        volumes=[{"name": "render-cache", "emptyDir": {"medium": "Memory", "sizeLimit": "4Gi"}}],
        annotations={"prometheus.io/scrape": "true", "prometheus.io/port": "9090"})
    rollout = now - timedelta(days=9)
    s.objects.append(kit.deployment(ns, "thumbnailer", old, tmpl, replicas=3, revision=7,
                                    ready=2, available=2, changed=now - timedelta(minutes=6)))
    rs, h = kit.replicaset(ns, "thumbnailer", 7, rollout, tmpl, replicas=3, ready=2)
    rs_old, _ = kit.replicaset(ns, "thumbnailer", 6, old + timedelta(days=20), tmpl, replicas=0)
    s.objects += [rs, rs_old]
    # Each pod restarts when its cache reaches ~1.35GiB of tmpfs on top of ~150MiB heap.
    kills = {0: [now - timedelta(hours=h) for h in (6.1, 3.9, 1.7)] + [now - timedelta(minutes=23)],
             1: [now - timedelta(hours=h) for h in (5.2, 2.9, 0.6)],
             2: [now - timedelta(hours=h) for h in (4.4, 2.2)] + [now - timedelta(minutes=5)]}
    pods = []
    for i in range(3):
        name = f"thumbnailer-{h}-{kit.suffix(f'thumb{i}')}"
        last_kill = kills[i][-1]
        started = last_kill + timedelta(seconds=14)
        prev_start = kills[i][-2] + timedelta(seconds=14)
        last = kit.terminated("OOMKilled", 137, prev_start, last_kill, seed=name)
        ready = i != 2
        status = kit.running("thumbnailer", started, restarts=len(kills[i]) + 1, ready=ready,
                             last=last, image=image)
        p = kit.pod(ns, name, rollout + timedelta(minutes=i), tmpl, owner=("ReplicaSet", rs["metadata"]["name"]),
                    node_name=nodes[i], statuses=[status], host_ip=f"10.12.{i + 1}.{21 + i}")
        pods.append(p)
        s.objects.append(p)
        # pod logs: current instance and the killed one
        s.log(ns, name, "thumbnailer", _thumb_log(started, now, rnd, i), previous=False)
        s.log(ns, name, "thumbnailer", _thumb_log(prev_start, last_kill, rnd, i), previous=True)
    s.objects.append(kit.event(ns, "Pod", pods[2]["metadata"]["name"], "Unhealthy",
                               "Readiness probe failed: Get \"http://10.4.9.41:8080/readyz\": dial tcp "
                               "10.4.9.41:8080: connect: connection refused",
                               now - timedelta(minutes=5), now - timedelta(minutes=4), count=3,
                               type_="Warning"))
    s.objects.append(kit.event(ns, "Pod", pods[0]["metadata"]["name"], "Pulled",
                               f'Container image "{image}" already present on machine',
                               now - timedelta(minutes=23), now - timedelta(minutes=23)))
    s.objects.append(kit.event(ns, "Pod", pods[0]["metadata"]["name"], "Started",
                               "Started container thumbnailer", now - timedelta(minutes=23),
                               now - timedelta(minutes=23)))
    s.objects.append(kit.service(ns, "thumbnailer", old, {"app": "thumbnailer"}, [("http", 80, 8080)],
                                 cluster_ip="172.20.41.9"))
    s.objects.append(kit.endpoints(ns, "thumbnailer", old, pods, [("http", 8080)]))
    # bystanders: gallery-api (healthy, calls thumbnailer) and an uploads worker with a stale warning
    _bystanders_media(s, ns, old, now, nodes, rnd)
    # kube-system noise
    s.objects.append(kit.event("default", "Node", nodes[1], "NodeHasSufficientMemory",
                               f"Node {nodes[1]} status is now: NodeHasSufficientMemory",
                               now - timedelta(minutes=41), now - timedelta(minutes=41), source="kubelet"))
    # metrics: working set (heap + tmpfs), Go heap flat, restarts
    ws = Series("container_memory_working_set_bytes", "gauge", "Current working set of the container in bytes")
    heap = Series("go_memstats_heap_inuse_bytes", "gauge", "Number of bytes in in-use spans.")
    restarts = Series("kube_pod_container_status_restarts_total", "counter",
                      "The number of container restarts per container.")
    cache = Series("thumbnailer_cache_entries", "gauge", "Thumbnails held in the render cache")
    times = kit.steps(now - timedelta(hours=7), now, timedelta(minutes=1))
    for i, p in enumerate(pods):
        name = p["metadata"]["name"]
        lab = {"namespace": ns, "pod": name, "container": "thumbnailer"}
        starts = [now - timedelta(hours=7, minutes=30)] + [k + timedelta(seconds=14) for k in kills[i]]
        count = 1
        for at in times:
            began = max(b for b in starts if b <= at)
            age = (at - began).total_seconds() / 60
            heap_b = 128e6 + 24e6 * min(1.0, age / 10) + rnd.uniform(-6e6, 6e6)
            tmpfs = min(1.45e9, age * 10.6e6)
            ws.add(lab, at, round(heap_b + 40e6 + tmpfs))
            heap.add({"namespace": ns, "pod": name, "job": "thumbnailer"}, at, round(heap_b))
            cache.add({"namespace": ns, "pod": name}, at, int(tmpfs / 3900))
            count = 1 + sum(1 for k in kills[i] if k <= at)
            restarts.add({"namespace": ns, "pod": name, "container": "thumbnailer"}, at, count)
    for p in [o for o in s.objects if o["kind"] == "Pod" and o["metadata"]["name"].startswith("gallery-api")]:
        for at in times:
            ws.add({"namespace": ns, "pod": p["metadata"]["name"], "container": "gallery-api"}, at,
                   round(410e6 + rnd.uniform(-20e6, 20e6)))
    s.metrics += [ws, heap, cache, restarts]
    return s


def _thumb_log(start, end, rnd, index):
    lines = [f'{{"time":"{kit.iso_ms(start)}","level":"INFO","msg":"starting thumbnailer","version":"4.12.0","go":"go1.22.7"}}',
             f'{{"time":"{kit.iso_ms(start + timedelta(milliseconds=300))}","level":"INFO","msg":"render cache ready","dir":"/var/cache/thumbs","max_entries":400000,"evict":"lru-by-count"}}',
             f'{{"time":"{kit.iso_ms(start + timedelta(milliseconds=420))}","level":"INFO","msg":"listening","addr":":8080"}}']
    at = start + timedelta(seconds=30)
    while at < end - timedelta(seconds=20):
        age = (at - start).total_seconds() / 60
        entries = int(min(1.45e9, age * 10.6e6) / 3900)
        if rnd.random() < 0.15:
            lines.append(f'{{"time":"{kit.iso_ms(at)}","level":"WARN","msg":"origin fetch slow","bucket":"lumen-originals-eu","ms":{rnd.randint(900, 2400)}}}')
        lines.append(f'{{"time":"{kit.iso_ms(at)}","level":"INFO","msg":"stats","heap_inuse_mb":{rnd.randint(138, 162)},"goroutines":{rnd.randint(180, 260)},"cache_entries":{entries},"hit_ratio":{min(0.93, 0.2 + age / 140):.2f},"rps":{rnd.randint(310, 420)}}}')
        at += timedelta(minutes=5)
    return lines


def _bystanders_media(s, ns, old, now, nodes, rnd):
    image = "registry.lumen.photos/media/gallery-api:2.31.4"
    tmpl = kit.template({"app": "gallery-api"}, [kit.container(
        "gallery-api", image, ports=[8000], requests={"cpu": "250m", "memory": "512Mi"},
        limits={"memory": "768Mi"}, env=kit.env(THUMBNAILER_URL="http://thumbnailer.media.svc"),
        readiness=kit.http_probe("/health", 8000))])
    s.objects.append(kit.deployment(ns, "gallery-api", old, tmpl, replicas=2, revision=31))
    rs, h = kit.replicaset(ns, "gallery-api", 31, now - timedelta(days=3), tmpl, replicas=2)
    s.objects.append(rs)
    gpods = []
    for i in range(2):
        name = f"gallery-api-{h}-{kit.suffix(f'gal{i}')}"
        p = kit.pod(ns, name, now - timedelta(days=3), tmpl, owner=("ReplicaSet", rs["metadata"]["name"]),
                    node_name=nodes[i + 1], statuses=[kit.running("gallery-api", now - timedelta(days=3), image=image)])
        gpods.append(p)
        s.objects.append(p)
        lines = []
        at = now - timedelta(hours=2)
        while at < now:
            code = 502 if rnd.random() < 0.04 else 200
            lines.append(f'{kit.iso(at)} INFO  gallery.render album={rnd.randint(1000, 99999)} thumbs=24 status={code} took={rnd.randint(40, 180)}ms')
            if code == 502:
                lines.append(f'{kit.iso(at)} WARN  gallery.thumbs upstream thumbnailer.media.svc returned 502 Bad Gateway, serving placeholder')
            at += timedelta(seconds=rnd.randint(40, 120))
        s.log(ns, name, "gallery-api", lines)
        for line in lines:
            if "WARN" in line:
                stamp = kit.parse(line.split()[0])
                s.docs.append(kit.log_doc(stamp, line.split("  ", 1)[1], "warn", "gallery-api", ns, name,
                                          "gallery-api", http__response__status_code=502))
    s.objects.append(kit.service(ns, "gallery-api", old, {"app": "gallery-api"}, [("http", 80, 8000)],
                                 cluster_ip="172.20.41.30"))
    s.objects.append(kit.endpoints(ns, "gallery-api", old, gpods, [("http", 8000)]))
    wimage = "registry.lumen.photos/media/uploads-worker:1.8.2"
    wt = kit.template({"app": "uploads-worker"}, [kit.container(
        "worker", wimage, requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "512Mi"})])
    s.objects.append(kit.deployment(ns, "uploads-worker", old, wt, replicas=1, revision=12))
    rs, h = kit.replicaset(ns, "uploads-worker", 12, now - timedelta(days=14), wt, replicas=1)
    s.objects.append(rs)
    wname = f"uploads-worker-{h}-{kit.suffix('upw')}"
    s.objects.append(kit.pod(ns, wname, now - timedelta(days=14), wt, owner=("ReplicaSet", rs["metadata"]["name"]),
                             node_name=nodes[0], statuses=[kit.running("worker", now - timedelta(days=14), image=wimage)]))
    s.objects.append(kit.event(ns, "Pod", wname, "FailedMount",
                               'MountVolume.SetUp failed for volume "kube-api-access-9xk2p" : object "media"/"kube-root-ca.crt" not registered',
                               now - timedelta(minutes=52), now - timedelta(minutes=52), type_="Warning"))
    s.log(ns, wname, "worker", [f"{kit.iso(now - timedelta(minutes=m))} info processed upload batch size={rnd.randint(3, 40)}"
                                for m in range(120, 0, -7)])
    for m in range(120, 0, -7):
        s.docs.append(kit.log_doc(now - timedelta(minutes=m), f"processed upload batch size={rnd.randint(3, 40)}",
                                  "info", "uploads-worker", ns, wname, "worker"))


def migration_lock_timeout() -> Story:
    """Quillpay billing: invoice-api 3.18 runs Alembic at start. Its migration adds a column
    to `invoices`, which needs an ACCESS EXCLUSIVE lock; a finance analytics query (from a BI
    tool outside the cluster) holds a share lock on the table for an hour. lock_timeout is 15s,
    the migration fails, the container exits 1, the new pods crash-loop; the old ReplicaSet
    still serves."""
    now = parse("2026-11-24T09:42:00Z")
    rnd = random.Random(2)
    ns = "billing"
    s = Story("invoice-migration-lock-timeout", "invoice-api deploy stuck", now,
              "deploy of invoice-api 3.18 has been 'in progress' for 40 min, argo shows it degraded. "
              "is the database ok? invoices still load for customers afaik",
              {"category": "crash_loop",
               "culprit": {"kind": "Deployment", "namespace": ns, "name": "invoice-api"},
               "evidence": ["canceling statement due to lock timeout", "CrashLoopBackOff",
                            "exit code 1"],
               "fix": "Stop or wait out the long analytics query holding the invoices lock (or run "
                      "the migration in a window / as a separate Job with retries) and let the "
                      "rollout proceed; the old ReplicaSet keeps serving meanwhile."})
    old = now - timedelta(days=200)
    s.objects += [kit.namespace(ns, old), kit.namespace("platform", old)]
    nodes = [f"gke-prod-pool-b-{kit.suffix(f'n{i}', 4)}-{kit.suffix(f'm{i}', 4)}" for i in range(3)]
    for i, n in enumerate(nodes):
        s.objects.append(kit.node(n, now - timedelta(days=30 + i), now, labels={
            "cloud.google.com/gke-nodepool": "pool-b"}, ip=f"10.128.0.{40 + i}"))
    labels = {"app": "invoice-api", "tier": "backend"}

    def tmpl_for(version: str):
        return kit.template(labels, [kit.container(
            "invoice-api", f"europe-docker.pkg.dev/quillpay/apps/invoice-api:{version}",
            ports=[8000], requests={"cpu": "300m", "memory": "512Mi"}, limits={"memory": "1Gi"},
            command=["/bin/sh", "-c"], args=["alembic upgrade head && exec gunicorn invoice.app:app -c gunicorn.conf.py"],
            env=kit.env(DB_HOST="10.91.0.5", DB_NAME="billing", PGOPTIONS="-c lock_timeout=15s",
                        DB_SSLMODE="require"),
            readiness=kit.http_probe("/ready", 8000, delay=10),
            liveness=kit.http_probe("/live", 8000, delay=30))])
    t_old, t_new = tmpl_for("3.17.2"), tmpl_for("3.18.0")
    rollout = now - timedelta(minutes=41)
    s.objects.append(kit.deployment(
        ns, "invoice-api", old, t_new, replicas=3, revision=44, ready=3, updated=1, available=3,
        unavailable=1, changed=rollout + timedelta(minutes=10),
        progressing=("False", "ProgressDeadlineExceeded",
                     f'ReplicaSet "invoice-api-{kit.rs_hash(f"{ns}/invoice-api/44")}" has timed out progressing.')))
    rs_new, hn = kit.replicaset(ns, "invoice-api", 44, rollout, t_new, replicas=1, ready=0)
    rs_old, ho = kit.replicaset(ns, "invoice-api", 43, now - timedelta(days=6), t_old, replicas=3)
    s.objects += [rs_new, rs_old]
    old_pods = []
    for i in range(3):
        name = f"invoice-api-{ho}-{kit.suffix(f'inv{i}')}"
        p = kit.pod(ns, name, now - timedelta(days=6), t_old, owner=("ReplicaSet", rs_old["metadata"]["name"]),
                    node_name=nodes[i], statuses=[kit.running("invoice-api", now - timedelta(days=6),
                                                              image="europe-docker.pkg.dev/quillpay/apps/invoice-api:3.17.2")])
        old_pods.append(p)
        s.objects.append(p)
        lines = []
        at = now - timedelta(hours=1)
        while at < now:
            path = rnd.choice(["/v1/invoices", "/v1/invoices/{id}", "/v1/invoices/{id}/pdf", "/v1/customers/{id}/balance"])
            lat = rnd.randint(12, 140)
            lines.append(f'[{at.strftime("%Y-%m-%d %H:%M:%S +0000")}] [{rnd.randint(8, 12)}] [INFO] 10.4.{rnd.randint(1, 9)}.{rnd.randint(2, 200)} "GET {path} HTTP/1.1" 200 {rnd.randint(300, 9000)} {lat}ms')
            at += timedelta(seconds=rnd.randint(20, 70))
        s.log(ns, name, "invoice-api", lines)
        for line in lines[::3]:
            stamp = kit.parse(line[1:20].replace(" ", "T") + "Z")
            s.docs.append(kit.log_doc(stamp, line.split("] ", 3)[3], "info", "invoice-api", ns, name,
                                      "invoice-api", http__response__status_code=200))
    new_name = f"invoice-api-{hn}-{kit.suffix('invnew')}"
    restarts = 9
    last_start = now - timedelta(minutes=3, seconds=40)
    last_end = last_start + timedelta(seconds=19)
    image_new = "europe-docker.pkg.dev/quillpay/apps/invoice-api:3.18.0"
    status = kit.waiting("invoice-api", "CrashLoopBackOff",
                         f"back-off 5m0s restarting failed container=invoice-api pod={new_name}_{ns}({kit.uid(new_name)})",
                         restarts=restarts, last=kit.terminated("Error", 1, last_start, last_end, seed=new_name),
                         image=image_new)
    p = kit.pod(ns, new_name, rollout, t_new, owner=("ReplicaSet", rs_new["metadata"]["name"]),
                node_name=nodes[1], statuses=[status])
    s.objects.append(p)

    def migration_log(start):
        t = start
        out = []
        def add(sec, text):
            nonlocal t
            t = t + timedelta(seconds=sec)
            out.append(text.replace("{T}", t.strftime("%Y-%m-%d %H:%M:%S,") + f"{t.microsecond // 1000:03d}"))
        add(1.2, "{T} INFO  [invoice.settings] loading settings profile=production")
        add(0.4, "{T} INFO  [alembic.runtime.migration] Context impl PostgresqlImpl.")
        add(0.01, "{T} INFO  [alembic.runtime.migration] Will assume transactional DDL.")
        add(0.3, "{T} INFO  [alembic.runtime.migration] Running upgrade 7b1e40c2aa19 -> c93f5d0e8b71, invoices: add settled_at and dunning_stage")
        add(15.02, "{T} ERROR [alembic.runtime.migration] upgrade 7b1e40c2aa19 -> c93f5d0e8b71 failed")
        out += [
            "Traceback (most recent call last):",
            '  File "/usr/local/lib/python3.12/site-packages/sqlalchemy/engine/base.py", line 1967, in _exec_single_context',
            "    self.dialect.do_execute(",
            '  File "/usr/local/lib/python3.12/site-packages/sqlalchemy/engine/default.py", line 941, in do_execute',
            "    cursor.execute(statement, parameters)",
            "psycopg2.errors.LockNotAvailable: canceling statement due to lock timeout",
            "",
            "The above exception was the direct cause of the following exception:",
            "",
            "Traceback (most recent call last):",
            '  File "/usr/local/bin/alembic", line 8, in <module>',
            "    sys.exit(main())",
            '  File "/app/migrations/versions/c93f5d0e8b71_invoices_settled_at.py", line 21, in upgrade',
            '    op.add_column("invoices", sa.Column("settled_at", sa.DateTime(timezone=True), nullable=True))',
            "sqlalchemy.exc.OperationalError: (psycopg2.errors.LockNotAvailable) canceling statement due to lock timeout",
            "",
            "[SQL: ALTER TABLE invoices ADD COLUMN settled_at TIMESTAMP WITH TIME ZONE]",
            "(Background on this error at: https://sqlalche.me/e/20/e3q8)",
        ]
        return out, t
    cur, _ = migration_log(last_start)
    s.log(ns, new_name, "invoice-api", cur)
    prev_start = last_start - timedelta(minutes=5, seconds=20)
    prev, _ = migration_log(prev_start)
    s.log(ns, new_name, "invoice-api", prev, previous=True)
    # log store: each attempt's error, restart loop for 40 min
    attempt = rollout + timedelta(seconds=8)
    n = 0
    while attempt < now:
        s.docs.append(kit.log_doc(attempt + timedelta(seconds=2), "Running upgrade 7b1e40c2aa19 -> c93f5d0e8b71, invoices: add settled_at and dunning_stage",
                                  "info", "invoice-api", ns, new_name, "invoice-api", log__logger="alembic.runtime.migration"))
        s.docs.append(kit.log_doc(attempt + timedelta(seconds=17), "sqlalchemy.exc.OperationalError: (psycopg2.errors.LockNotAvailable) canceling statement due to lock timeout",
                                  "error", "invoice-api", ns, new_name, "invoice-api",
                                  error__type="sqlalchemy.exc.OperationalError", log__logger="alembic.runtime.migration"))
        n += 1
        attempt += timedelta(seconds=min(300, 10 * 2 ** n) + 19)
    s.objects.append(kit.event(ns, "Pod", new_name, "BackOff", "Back-off restarting failed container invoice-api in pod "
                               f"{new_name}_{ns}({kit.uid(new_name)})", rollout + timedelta(minutes=1), now - timedelta(minutes=1),
                               count=143, type_="Warning"))
    s.objects.append(kit.event(ns, "Pod", new_name, "Pulled", f'Container image "{image_new}" already present on machine',
                               rollout + timedelta(seconds=30), last_start, count=restarts))
    s.objects.append(kit.event(ns, "ReplicaSet", rs_new["metadata"]["name"], "SuccessfulCreate",
                               f"Created pod: {new_name}", rollout, rollout))
    s.objects.append(kit.event(ns, "Deployment", "invoice-api", "ScalingReplicaSet",
                               f"Scaled up replica set {rs_new['metadata']['name']} to 1", rollout, rollout,
                               source="deployment-controller"))
    s.objects.append(kit.service(ns, "invoice-api", old, {"app": "invoice-api"}, [("http", 80, 8000)],
                                 cluster_ip="10.96.14.7"))
    s.objects.append(kit.endpoints(ns, "invoice-api", old, [*old_pods, p], [("http", 8000)]))
    # bystanders: a dunning CronJob and a PgBouncer-less config; platform's external-secrets warning
    s.objects.append(kit.configmap(ns, "invoice-api-config", old, {
        "gunicorn.conf.py": "workers = 4\nthreads = 2\ntimeout = 30\nbind = '0.0.0.0:8000'\n",
        "MIGRATIONS": "run at container start (alembic upgrade head)"}))
    cron = {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": kit.metadata("dunning-reminders", ns, old),
            "spec": {"schedule": "0 * * * *", "concurrencyPolicy": "Forbid",
                     "jobTemplate": {"spec": {"template": kit.template({"app": "dunning-reminders"}, [kit.container(
                         "dunning", "europe-docker.pkg.dev/quillpay/apps/invoice-api:3.17.2",
                         command=["python", "-m", "invoice.jobs.dunning"])])}}},
            "status": {"lastScheduleTime": kit.iso(now.replace(minute=0)), "lastSuccessfulTime": kit.iso(now.replace(minute=1))}}
    s.objects.append(cron)
    s.objects.append(kit.event(ns, "Pod", old_pods[2]["metadata"]["name"], "Unhealthy",
                               "Readiness probe failed: Get \"http://10.4.7.31:8000/ready\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
                               now - timedelta(minutes=33), now - timedelta(minutes=33), type_="Warning"))
    # dunning job log mentions slow queries (misleading toward the database)
    s.docs.append(kit.log_doc(now.replace(minute=1), "dunning run finished reminders=214 took=41.8s (slow: invoices scan 38.2s)",
                              "warning", "dunning-reminders", ns, f"dunning-reminders-2934{kit.suffix('dj', 4)}-{kit.suffix('djp')}", "dunning"))
    # metrics: restarts of the new pod; request rate served by the old pods steady
    rest = Series("kube_pod_container_status_restarts_total", "counter", "The number of container restarts per container.")
    reqs = Series("http_requests_total", "counter", "Requests served")
    times = kit.steps(now - timedelta(hours=2), now, timedelta(minutes=1))
    for at in times:
        if at >= rollout + timedelta(seconds=30):
            elapsed = (at - rollout).total_seconds()
            count, back, t = 0, 10, 27
            while t <= elapsed:
                count += 1
                t += min(300, back) + 19
                back *= 2
            rest.add({"namespace": ns, "pod": new_name, "container": "invoice-api"}, at, count)
    for op in old_pods:
        counter_labels = {"namespace": ns, "pod": op["metadata"]["name"], "status": "200", "service": "invoice-api"}
        kit.counter_walk(reqs, counter_labels, times, lambda at: 11 + rnd.uniform(-1, 1), start=2.1e6)
    s.metrics += [rest, reqs]
    return s
