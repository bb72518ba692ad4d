"""crash_loop: the PDF engine's date-based license key expired; new pods refuse to start."""

from __future__ import annotations

import random
from pathlib import Path

from . import _kit as k

SID = "renderer-license-expired"
NOW = "2026-03-14T08:45:00Z"
IMG = "registry.ledgerline.dev/report-renderer:7.2.0"


def build(root: Path) -> None:
    c = k.Clock(NOW)
    old = c.s(days=200)
    old_nodes = [f"ip-10-40-{i}-17.ec2.internal" for i in (1, 2)]
    new_nodes = [f"ip-10-40-{i}-88.ec2.internal" for i in (3, 4, 5)]
    objs = [k.namespace(n, old) for n in ("analytics", "web", "ops")]
    objs.append(k.node(old_nodes[0], c.s(days=90), {"eks.amazonaws.com/nodegroup": "ng-1-28"},
                       ip="10.40.1.17"))
    objs.append(k.node(old_nodes[1], c.s(days=90), {"eks.amazonaws.com/nodegroup": "ng-1-28"},
                       ip="10.40.2.17", unschedulable=True, since=c.s(hours=3, minutes=50)))
    for i, n in enumerate(new_nodes):
        objs.append(k.node(n, c.s(hours=4, minutes=10 - i),
                           {"eks.amazonaws.com/nodegroup": "ng-1-29"}, ip=f"10.40.{3 + i}.88"))
    cm = {"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": k.meta("ConfigMap", "renderer-license", "analytics", c.s(days=366)),
          "data": {"license.key": "licensee=Ledgerline Analytics Ltd\nproduct=Folioprint "
                   "Server\nseats=unlimited\nissued=2025-03-14\nexpires=2026-03-13\n"
                   "signature=MEUCIQDr3x9kq0Lw7cR2yV8bPz1mAq6hT5sN0uJ4eK7fW2gYbQIgH8s1a\n"}}
    objs.append(cm)
    ctr = k.container("renderer", IMG, cpu_req="500m", mem_req="1Gi", cpu_lim="2",
                      mem_lim="2Gi", env={"FOLIOPRINT_LICENSE_FILE": "/etc/folioprint/license.key",
                                          "RENDER_WORKERS": "4"}, ports=[8080], probe="/healthz",
                      volumeMounts=[{"name": "license", "mountPath": "/etc/folioprint",
                                     "readOnly": True}])
    tmpl = k.template({"app": "report-renderer"}, [ctr],
                      volumes=[{"name": "license", "configMap": {"name": "renderer-license",
                                                                   "defaultMode": 420}}])
    dep = k.deployment("analytics", "report-renderer", c.s(days=180), 3, tmpl, 9, ready=1,
                       updated=c.s(hours=3, minutes=40))
    rs = k.replicaset(dep, 9, c.s(days=38), 3, tmpl, ready=1)
    objs += [dep, rs]
    t = rs["spec"]["template"]
    base = rs["metadata"]["name"]
    good = k.pod(rs, f"{base}-x7kqd", t, old_nodes[0], c.s(days=5, hours=3), ip="10.40.1.52")
    objs.append(good)
    pod_logs = {}
    for j, (suffix, node) in enumerate([("m2p9w", new_nodes[0]), ("tq4zc", new_nodes[2])]):
        pn = f"{base}-{suffix}"
        fin = c.ago(minutes=2 + 3 * j)
        st = {"waiting": {"reason": "CrashLoopBackOff", "message": f"back-off 5m0s restarting "
                          f"failed container=renderer pod={pn}_analytics"
                          f"({k.uid('Pod', 'analytics', pn)})"}}
        last = {"terminated": {"exitCode": 78, "reason": "Error",
                               "startedAt": k.iso(fin - k.timedelta(seconds=3)),
                               "finishedAt": k.iso(fin)}}
        p = k.pod(rs, pn, t, node, c.s(hours=3, minutes=48 - j), ready=False, restarts=44 - j,
                  state=st, last=last, ip=f"10.40.{3 + 2 * j}.{120 + j}")
        objs.append(p)
        objs.append(k.event(p, "BackOff", f"Back-off restarting failed container renderer in "
                            f"pod {pn}_analytics({p['metadata']['uid']})", c.s(minutes=59),
                            c.s(minutes=1 + j), count=212, etype="Warning", host=node))
        objs.append(k.event(p, "Pulled", f'Container image "{IMG}" already present on machine',
                            c.s(minutes=58), c.s(minutes=7), count=12, host=node))
        ts0 = k.isoms(fin - k.timedelta(seconds=3))
        pod_logs[f"analytics/{pn}/renderer.previous.log"] = (
            f"{ts0} INFO  folioprint-server 7.2.0 (build 2025-11-02) starting, workers=4\n"
            f"{ts0} INFO  reading license from /etc/folioprint/license.key\n"
            f"{ts0} INFO  licensee=\"Ledgerline Analytics Ltd\" product=\"Folioprint Server\" "
            "issued=2025-03-14 expires=2026-03-13\n"
            f"{ts0} FATAL license check failed: license key expired on 2026-03-13 "
            "(today is 2026-03-14); renew at https://folioprint.example/licensing\n"
            f"{ts0} INFO  exiting with status 78 (EX_CONFIG)\n")
    objs.append(k.event(dep, "ScalingReplicaSet", "Scaled up replica set "
                        f"{base} to 3", c.s(minutes=55), c.s(minutes=55),
                        component="deployment-controller"))
    objs.append(k.event(objs[4], "NodeNotSchedulable", f"Node {old_nodes[1]} status is now: "
                        "NodeNotSchedulable", c.s(minutes=50), c.s(minutes=50)))
    _, _, web_pods = k.simple_app(objs, "web", "portal", old, 3,
                                    "registry.ledgerline.dev/portal:12.8.1", new_nodes,
                                    "10.40.6", c.s(hours=3, minutes=45), revision=57,
                                    ports=[3000], probe="/health")
    _, _, thumbs = k.simple_app(objs, "analytics", "thumbnailer", old, 2,
                 "registry.ledgerline.dev/thumbnailer:1.4.3", new_nodes, "10.40.7",
                 c.s(hours=3, minutes=44), revision=12)
    k.simple_app(objs, "ops", "cluster-autoscaler", old, 1,
                 "registry.k8s.io/autoscaling/cluster-autoscaler:v1.29.4", new_nodes,
                 "10.40.8", c.s(hours=3, minutes=46), revision=4)
    svc = k.service("analytics", "report-renderer", old, {"app": "report-renderer"}, 80, 8080,
                    "172.20.61.14")
    objs += [svc, k.endpoints(svc, old, [("10.40.1.52", good["metadata"]["name"], old_nodes[0])],
                              [("10.40.3.120", f"{base}-m2p9w", new_nodes[0]),
                               ("10.40.5.121", f"{base}-tq4zc", new_nodes[2])])]

    rnd = random.Random(502)
    logs = []
    for m in range(0, 170, 1):
        tt = c.ago(minutes=170 - m)
        if rnd.random() < 0.5:
            logs.append(k.log(tt, "portal", "web", web_pods[m % 3]["metadata"]["name"],
                              "POST /api/reports/export -> report-renderer 503 "
                              "upstream overloaded, retry 1/3", level="warn",
                              **{"http.response.status_code": 503}))
        if rnd.random() < 0.6:
            logs.append(k.log(tt, "report-renderer", "analytics", good["metadata"]["name"],
                              f"rendered report id=r-{40100 + m} pages={rnd.randint(2, 40)} "
                              f"in {rnd.randint(900, 4200)}ms queue_depth={20 + m // 4}",
                              container_name="renderer"))
        if m % 9 == 0:
            logs.append(k.log(tt, "thumbnailer", "analytics",
                              thumbs[m % 2]["metadata"]["name"], "S3 PutObject slow: "
                              "2.4s for thumbs/2026/03/14/…", level="warn"))
    for j in range(40):
        tt = c.ago(minutes=165 - j * 4)
        pn = f"{base}-{'m2p9w' if j % 2 else 'tq4zc'}"
        logs.append(k.log(tt, "report-renderer", "analytics", pn,
                          "license check failed: license key expired on 2026-03-13 "
                          "(today is 2026-03-14); renew at https://folioprint.example/licensing",
                          level="fatal", container_name="renderer"))
    logs.append(k.log(c.ago(hours=3, minutes=52), "cluster-autoscaler", "ops",
                      "cluster-autoscaler", f"draining node {old_nodes[1]} for nodegroup "
                      "upgrade ng-1-28 -> ng-1-29, evicting 9 pods"))

    mx = k.Metrics()
    ts = k.steps(c, 3)
    now = int(c.now.timestamp())
    for pn, start_age in ((good["metadata"]["name"], 99999), (f"{base}-m2p9w", 228),
                          (f"{base}-tq4zc", 227)):
        lab = {"namespace": "analytics", "pod": pn, "container": "renderer"}
        pts = [(t, float(0 if start_age > 9999 else max(0, (start_age - (now - t) / 60) // 5)))
               for t in ts if (now - t) / 60 <= start_age]
        mx.add("kube_pod_container_status_restarts", "counter", "The number of container "
               "restarts per container.", "kube_pod_container_status_restarts_total", lab, pts)
    for code, rate in (("200", 6.0), ("503", 0.0)):
        v = 5.0e5 if code == "200" else 120.0
        pts = []
        for t in ts:
            age = (now - t) / 60
            r = rate if age > 225 else (2.1 if code == "200" else 3.9)
            v += r * 60
            pts.append((t, float(int(v))))
        mx.add("http_requests", "counter", "HTTP requests.", "http_requests_total",
               {"namespace": "web", "service": "portal", "route": "/api/reports/export",
                "code": code}, pts)
    sc = {"id": SID, "title": "Report exports failing after the node group upgrade", "now": NOW,
          "report": "report exports in the portal mostly fail with 503 since the night. we "
                    "upgraded the node group to 1.29 around 5am, I bet the new nodes are broken "
                    "(renderer pods on them never come up). nobody deployed anything.\n",
          "truth": {"category": "crash_loop",
                    "culprit": {"kind": "Deployment", "namespace": "analytics",
                                "name": "report-renderer"},
                    "evidence": ["license key expired on 2026-03-13", "CrashLoopBackOff",
                                 "exit code 78"],
                    "fix": "Renew the Folioprint license and update ConfigMap renderer-license; "
                           "the pod still running only survived because it started before "
                           "the expiry"}}
    k.write(root, SID, sc, objs, logs, mx, pod_logs)
