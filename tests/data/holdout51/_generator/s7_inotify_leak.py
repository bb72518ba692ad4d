"""The log agent DaemonSet leaks inotify instances; other pods on its nodes get EMFILE."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from ._kit import (
    CState,
    Pod,
    PState,
    Story,
    access,
    configmap,
    ctr,
    daemonset,
    deployment,
    event,
    fix_host_ips,
    http_probe,
    namespace,
    node,
    platform,
    service,
)

SID = "storefront-emfile-restarts"
NOW = "2026-05-27T13:20:00Z"
AGENT_ROLLOUT = 4 * 1440 + 95
LIMIT = 8192


def build(root: Path) -> None:
    st = Story(SID, NOW, 5107)
    zones = ["eu-west-1a", "eu-west-1b", "eu-west-1c"]
    nodes = [f"ip-10-0-{a}-{b}.eu-west-1.compute.internal"
             for a, b in [(2, 41), (17, 9), (34, 150), (10, 222), (28, 67)]]
    for i, n in enumerate(nodes):
        st.add(node(st, n, zone=zones[i % 3], itype="m6i.2xlarge", cpu="8", mem="31758Mi",
                    age_days=25 + i))
    platform(st, nodes)
    for ns in ("observability", "shop", "payments", "platform"):
        st.add(namespace(st, ns))
    full = set(nodes[:3])  # where the agent has used up the node's inotify instances

    configmap(st, "observability", "log-agent-config", {
        "fluent-bit.conf": "[SERVICE]\n    Flush 5\n    Log_Level info\n    HTTP_Server On\n"
                           "    HTTP_Port 2020\n\n[INPUT]\n    Name tail\n    Tag kube.*\n"
                           "    Path /var/log/containers/*.log\n    multiline.parser docker, cri\n"
                           "    DB /var/fluent-bit/state/flb_kube.db\n    Mem_Buf_Limit 50MB\n"
                           "    Skip_Long_Lines On\n    Refresh_Interval 10\n"
                           "    Rotate_Wait 30\n    Inotify_Watcher true\n\n[OUTPUT]\n"
                           "    Name es\n    Match kube.*\n    Host logs.es.internal\n"
                           "    Logstash_Format On\n"}, created_min=AGENT_ROLLOUT)
    configmap(st, "kube-system", "node-sysctls", {
        "99-k8s.conf": "fs.inotify.max_user_instances=8192\nfs.inotify.max_user_watches=524288\n"
                       "fs.file-max=2097152\n"}, age_days=300)
    agent = daemonset(st, "observability", "log-agent",
                      [ctr("fluent-bit", "cr.fluentbit.io/fluent/fluent-bit:3.1.4", port=2020,
                           cpu="100m", mem="128Mi", mem_limit="256Mi",
                           mounts=[{"name": "varlog", "mountPath": "/var/log",
                                    "readOnly": True},
                                   {"name": "state", "mountPath": "/var/fluent-bit/state"}])],
                      nodes, age_days=500, rollout_min=AGENT_ROLLOUT, revision=14,
                      spec_extra={"hostPID": False, "securityContext": {"runAsUser": 0}})
    event(st, "observability", "DaemonSet", "log-agent", "SuccessfulCreate",
          f"Created pod: {agent.pods[-1].name}", first_min=50, component="daemonset-controller",
          api="apps/v1")
    fds = {p.node: (8184.0 if p.node in full else 5200.0 + 600 * i)
           for i, p in enumerate(agent.pods)}
    for p in agent.pods:
        wfd = int(fds[p.node]) - 40
        t = st.at(60) + timedelta(seconds=st.rng.uniform(0, 30))
        while t < st.now:
            inode = st.rng.randint(1000000, 9999999)
            app = st.rng.choice(["storefront", "checkout", "coredns", "fraud-scorer",
                                 "feature-flags"])
            f = (f"/var/log/containers/{app}-"
                 f"{st.suffix(10)}-{st.suffix()}_{st.rng.choice(['shop', 'payments'])}_"
                 f"app-{st.uid(str(inode))[:12]}.log")
            st.log(t, p, "info", f"[ info] [input:tail:tail.0] inode={inode} handle "
                                 f"rotation(): {f} => {f}.{st.rng.randint(1, 9)}")
            wfd += 1 if p.node not in full else 0
            if p.node in full and st.rng.random() < 0.5:
                st.log(t + timedelta(milliseconds=3), p, "warn",
                       f"[ warn] [input:tail:tail.0] inotify_fs_add(): inode={inode} "
                       f"watch_fd=-1 name={f} (falling back to stat)")
            else:
                st.log(t + timedelta(milliseconds=3), p, "info",
                       f"[ info] [input:tail:tail.0] inotify_fs_add(): inode={inode} "
                       f"watch_fd={wfd} name={f}")
            t += timedelta(seconds=st.rng.uniform(40, 120))

    # victims
    sf_nodes = [nodes[0], nodes[1], nodes[3], nodes[4]]
    sf_states = []
    for n in sf_nodes:
        if n in full:
            sf_states.append(PState(containers=[CState(
                ready=False, restarts=st.rng.randint(8, 14),
                waiting=("CrashLoopBackOff", "back-off 2m40s restarting failed container"),
                last=("Error", 1, 3.5, 3.4))]))
        else:
            sf_states.append(PState())
    sf = deployment(st, "shop", "storefront",
                    [ctr("storefront", "ghcr.io/example/storefront:5.3.0", port=3000,
                         cpu="300m", mem="512Mi", readiness=http_probe("/healthz", 3000))],
                    sf_nodes, age_days=700, revision=71, rollout_min=20 * 60, states=sf_states)
    service(st, "shop", "storefront", {"app.kubernetes.io/name": "storefront"}, 80, 3000,
            pods=[p for p in sf.pods if p.node not in full])
    fraud = deployment(st, "payments", "fraud-scorer",
                       [ctr("fraud-scorer", "ghcr.io/example/fraud-scorer:11.2.0", cpu="1",
                            mem="2Gi", mem_limit="3Gi", readiness=http_probe("/actuator/health"
                                                                             "/readiness"))],
                       [nodes[2], nodes[4]], age_days=400, revision=33, rollout_min=9 * 1440,
                       states=[PState(containers=[CState(
                           ready=False, restarts=6,
                           waiting=("CrashLoopBackOff", "back-off 5m0s restarting failed "
                                                        "container"),
                           last=("Error", 1, 6.1, 5.8))]), PState()])
    flags = deployment(st, "platform", "feature-flags",
                       [ctr("feature-flags", "ghcr.io/example/feature-flags:0.22.1", cpu="50m",
                            mem="64Mi")], [nodes[1], nodes[3]], age_days=250, revision=5,
                       rollout_min=30 * 1440,
                       states=[PState(containers=[CState(restarts=11, started_min=6,
                                                         last=("Error", 1, 12, 6.1))]),
                               PState()])
    crashers: list[tuple[Pod, list[str], float]] = []
    for p in sf.pods:
        if p.node in full:
            crashers.append((p, [
                "> storefront@5.3.0 start", "> node dist/server.js",
                '{"level":"info","msg":"storefront 5.3.0 listening","port":3000}',
                '{"level":"info","msg":"watching feature flags","file":"/etc/storefront/'
                'flags.json"}',
                "node:internal/fs/watchers:247", "    throw error;", "    ^", "",
                "Error: EMFILE: too many open files, watch '/etc/storefront/flags.json'",
                "    at FSWatcher.<computed> (node:internal/fs/watchers:247:19)",
                "    at Object.watch (node:fs:2469:36)",
                "    at FlagStore.start (/app/dist/flags.js:41:12)", "  errno: -24,",
                "  syscall: 'watch',", "  code: 'EMFILE',",
                "  path: '/etc/storefront/flags.json',",
                "  filename: '/etc/storefront/flags.json'", "}", "", "Node.js v20.14.0"], 3))
    crashers.append((fraud.pods[0], [
        "INFO  o.s.b.StartupInfoLogger - Starting FraudScorerApplication v11.2.0",
        "INFO  c.e.f.rules.RuleReloader - watching /etc/fraud/rules for changes",
        "ERROR o.s.boot.SpringApplication - Application run failed",
        "java.io.IOException: User limit of inotify instances reached or too many open files",
        "\tat java.base/sun.nio.fs.LinuxWatchService.<init>(LinuxWatchService.java:73)",
        "\tat java.base/sun.nio.fs.LinuxFileSystem.newWatchService(LinuxFileSystem.java:47)",
        "\tat com.example.fraud.rules.RuleReloader.start(RuleReloader.java:58)"], 4))
    crashers.append((flags.pods[0], [
        'level=info msg="feature-flags 0.22.1 starting"',
        'level=error msg="failed to create fsnotify watcher" err="too many open files"',
        'level=fatal msg="config reload disabled, exiting" err="inotify_init: too many open '
        'files"'], 6))
    for p, lines, every in crashers:
        st.pod_log(p, lines, previous=True)
        st.pod_log(p, lines[:2])
        key = next(ln for ln in lines if "too many open files" in ln)
        t = st.at(60) + timedelta(minutes=st.rng.uniform(0, every))
        while t < st.now:
            st.log(t, p, "info", lines[0])
            st.log(t + timedelta(seconds=2), p, "error", key.strip(),
                   {"error.type": "EMFILE"})
            t += timedelta(minutes=every * st.rng.uniform(0.8, 1.3))
        rs = next(o for o in st.objects if o["kind"] == "Pod"
                  and o["metadata"]["name"] == p.name)["metadata"]["ownerReferences"][0]["name"]
        assert rs
        event(st, p.ns, "Pod", p.name, "BackOff",
              f"Back-off restarting failed container {p.container} in pod {p.name}_{p.ns}"
              f"({st.uid('Pod', p.ns, p.name)})", type_="Warning", count=40,
              first_min=59, last_min=0.7, field_path=f"spec.containers{{{p.container}}}",
              host=p.node)
    healthy_sf = [p for p in sf.pods if p.node not in full]
    st.chatter(healthy_sf, access(["/", "/product/3321", "/cart", "/healthz"], "storefront",
                                  50), every_s=25)
    st.chatter(healthy_sf, lambda r: ("warn", "deprecated header X-Client-Version received, "
                                              "ignoring"), every_s=500)
    st.chatter(fraud.pods[1:], lambda r: ("info", f"scored txn={r.getrandbits(48):012x} "
                                                  f"score=0.0{r.randint(1, 9)} rules=212"),
               every_s=30)
    chk = deployment(st, "shop", "checkout",
                     [ctr("checkout", "ghcr.io/example/checkout:3.9.2", cpu="300m",
                          mem="384Mi", readiness=http_probe("/ready"))], nodes[2:5],
                     age_days=600, revision=48, rollout_min=3 * 1440)
    st.chatter(chk.pods, access(["+/checkout", "/checkout/status"], "checkout", 80),
               every_s=40)

    # metrics
    for p in agent.pods:
        base = fds[p.node]
        full_node = p.node in full
        st.gauge("container_file_descriptors", "Number of open file descriptors for the "
                 "container.", {"namespace": p.ns, "pod": p.name, "container": "fluent-bit",
                                "node": p.node},
                 lambda m, b=base, f=full_node: min(LIMIT + 12, b + (0 if f else
                                                                      (60 - m) * 0.9)))
        st.pod_metrics(p, cpu=0.06, mem_mib=110)
    for p, _, every in crashers:
        st.pod_metrics(p, cpu=0.05, mem_mib=150,
                       restarts=lambda m, e=every: 6 + int((60 - m) / e),
                       resets=[60 - k * every for k in range(1, int(60 / every))])
    for p in [*sf.pods, *fraud.pods, *flags.pods, *chk.pods]:
        st.gauge("container_file_descriptors", "Number of open file descriptors for the "
                 "container.", {"namespace": p.ns, "pod": p.name, "container": p.container,
                                "node": p.node}, lambda m: st.rng.randint(38, 90))
        if p not in [c[0] for c in crashers]:
            st.pod_metrics(p, cpu=0.2, mem_mib=300)
    st.http("shop", "storefront", 24.0, lambda m: 0.004)
    fix_host_ips(st.objects)
    st.write(root, "storefront restarting, EMFILE too many open files",
             "storefront pods keep restarting with EMFILE: too many open files since yesterday's "
             "5.3.0 release,\nhalf the replicas are in CrashLoopBackOff. Probably an fd leak in "
             "the new code - roll back to\n5.2.x or just raise the nofile ulimit?\n",
             {"category": "resource_exhaustion",
              "culprit": {"kind": "DaemonSet", "namespace": "observability",
                          "name": "log-agent"},
              "evidence": ["EMFILE: too many open files",
                           "User limit of inotify instances reached or too many open files",
                           "inotify_fs_add()"],
              "fix": "Roll the log-agent DaemonSet back from fluent-bit 3.1.4 (it leaks an "
                     "inotify instance per rotated file) and restart its pods on the full "
                     "nodes to release the instances; storefront 5.3.0 is not leaking."})
