"""Scenario 3: calico-node re-rolled with VXLAN and veth_mtu 1500 over a 1500-byte fabric.

Encapsulated full-size packets no longer fit the host MTU; small requests and same-node
traffic work, large cross-node responses stall until the client times out.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ._k8s import PodSpecBits, app, container, meta, namespace, node, old_restart, owner_ref, pod
from ._kit import Obj, Story, accumulate, at, grid, iso, mins

CAL = "docker.io/calico/node:v3.27.3"


def _cm_ref(key: str) -> Obj:
    return {"valueFrom": {"configMapKeyRef": {"name": "calico-config", "key": key}}}


def _felix(st: datetime, ip: str, i: int) -> list[str]:
    """calico-node start-up output."""
    f = st.strftime("%Y-%m-%d %H:%M:%S")
    return [
        f"{f}.102 [INFO][1] startup/startup.go 432: Early log level set to info",
        f"{f}.215 [INFO][1] startup/autodetection_methods.go 103: Using autodetected IPv4 "
        f"address on interface eth0: {ip}/24",
        f"{f}.388 [INFO][1] startup/startup.go 561: Calico networking backend: vxlan",
        f"{f}.940 [INFO][78] felix/config_params.go 661: Parsed value for VXLANEnabled: true "
        "(from datastore (global))",
        f"{f}.941 [INFO][78] felix/config_params.go 661: Parsed value for VXLANMTU: 1500 "
        "(from environment variable)",
        f"{f}.941 [INFO][78] felix/config_params.go 661: Parsed value for IpInIpEnabled: "
        "false (from datastore (global))",
        f"{f}.977 [INFO][78] felix/int_dataplane.go 1189: Determined MTU of host interfaces "
        "hostMTU=1500 interfaceRegex=\"^((en|wl|ww|sl|ib)[Popsx].*|(eth|wlan|wwan).*)\"",
        f"{f}.981 [INFO][78] felix/vxlan_mgr.go 612: Assigning address to VXLAN device "
        f"address=10.244.{16 * i}.0/32",
        f"{f}.983 [INFO][78] felix/vxlan_mgr.go 440: VXLAN tunnel device created "
        "device=\"vxlan.calico\" ipVersion=0x4 mtu=1500 vni=4096 port=4789",
        f"{f}.990 [INFO][78] felix/route_table.go 1185: Removing stale route "
        f"dest=10.244.{16 * ((i + 1) % 6)}.0/26 ifaceName=\"tunl0\"",
        f"{f}.995 [INFO][78] felix/health.go 336: Overall health status changed: "
        "live=true ready=true"]


def build() -> Story:
    """Build the scenario."""
    now = at("2026-07-08T13:45:00Z")
    s = Story(
        "report-exports-spin-forever", "Report exports hang since lunch", now,
        "the reports export page spins forever since around lunch, small reports are fine, "
        "big CSV exports never finish. Did the new network policy in reporting break "
        "something? it went in this morning.",
        "network", {"kind": "DaemonSet", "namespace": "kube-system", "name": "calico-node"},
        ["veth_mtu", "Parsed value for VXLANMTU: 1500", "hostMTU=1500", "mtu=1500",
         "CALICO_IPV4POOL_VXLAN", "node_network_mtu_bytes"],
        "Set calico-config veth_mtu to 1450 (host MTU 1500 minus 50 bytes VXLAN overhead), or "
        "leave it empty for auto-detection, and restart calico-node; pods get the new MTU on "
        "restart.",
        seed=5803)
    rng = s.rng
    change = s.ago(48)
    for ns in ("kube-system", "reporting", "warehouse", "storefront", "catalog", "default"):
        s.add(namespace(s, ns, now - timedelta(days=900)))
    ips: dict[str, str] = {}
    nodes: list[str] = []
    for i in range(6):
        n = f"k8s-prod-w{i + 1:02d}.dc2.acme.lan"
        ips[n] = f"10.8.{2 + i // 3}.{11 + i}"
        nodes.append(n)
        s.add(node(s, n, now - timedelta(days=300), ip=ips[n], os_image="Ubuntu 22.04.4 LTS",
                   kernel="5.15.0-107-generic", kubelet="v1.28.9", runtime="containerd://1.7.13",
                   labels={"node-role.kubernetes.io/worker": "", "rack": f"r{1 + i // 3}"}))
    s.add({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": meta("calico-config", "kube-system", now - timedelta(days=300), s.uid(),
                            annotations={"platform.acme.lan/change":
                                         "CHG-20417 IPPool default-ipv4-ippool IPIP -> VXLAN "
                                         "(cross-rack routing)"}),
           "data": {"calico_backend": "vxlan", "veth_mtu": "1500", "typha_service_name": "none",
                    "cni_network_config": '{"name": "k8s-pod-network", "cniVersion": "0.3.1", '
                    '"plugins": [{"type": "calico", "mtu": __CNI_MTU__, "ipam": {"type": '
                    '"calico-ipam"}, "policy": {"type": "k8s"}}]}'}})
    env = [{"name": "DATASTORE_TYPE", "value": "kubernetes"},
           {"name": "CALICO_NETWORKING_BACKEND", **_cm_ref("calico_backend")},
           {"name": "CALICO_IPV4POOL_IPIP", "value": "Never"},
           {"name": "CALICO_IPV4POOL_VXLAN", "value": "Always"},
           {"name": "FELIX_IPINIPMTU", **_cm_ref("veth_mtu")},
           {"name": "FELIX_VXLANMTU", **_cm_ref("veth_mtu")},
           {"name": "FELIX_WIREGUARDMTU", **_cm_ref("veth_mtu")},
           {"name": "CALICO_IPV4POOL_CIDR", "value": "10.244.0.0/16"},
           {"name": "IP_AUTODETECTION_METHOD", "value": "interface=eth0"}]
    cc = container("calico-node", CAL, port=None, cpu="250m", memory="256Mi", env=env,
                   probe_path=None)
    ds_uid = s.uid()
    s.add({"apiVersion": "apps/v1", "kind": "DaemonSet",
           "metadata": meta("calico-node", "kube-system", now - timedelta(days=300), ds_uid,
                            {"k8s-app": "calico-node"},
                            {"deprecated.daemonset.template.generation": "9"}, generation=9),
           "spec": {"selector": {"matchLabels": {"k8s-app": "calico-node"}},
                    "updateStrategy": {"type": "RollingUpdate",
                                       "rollingUpdate": {"maxUnavailable": 1}},
                    "template": {"metadata": {"labels": {"k8s-app": "calico-node"}},
                                 "spec": {"hostNetwork": True, "containers": [cc],
                                          "priorityClassName": "system-node-critical"}}},
           "status": {"currentNumberScheduled": 6, "desiredNumberScheduled": 6,
                      "numberAvailable": 6, "numberMisscheduled": 0, "numberReady": 6,
                      "observedGeneration": 9, "updatedNumberScheduled": 6}})
    ts = grid(now - timedelta(hours=6), now, 60)
    for i, n in enumerate(nodes):
        pn = f"calico-node-{s.suffix()}"
        st = change + timedelta(seconds=40 * i)
        s.add(pod(s, "kube-system", pn, PodSpecBits([cc], {"k8s-app": "calico-node"},
                                                     {"hostNetwork": True}),
                  node_name=n, ip=ips[n], start=st, host_ip=ips[n],
                  owner=owner_ref("DaemonSet", "calico-node", ds_uid)))
        s.event("kube-system", "DaemonSet", "calico-node", "SuccessfulCreate",
                f"Created pod: {pn}", component="daemonset-controller", last=st, api="apps/v1")
        s.event("kube-system", "Pod", pn, "Started", "Started container calico-node", last=st,
                host=n)
        lines = _felix(st, ips[n], i)
        head = len(lines)
        t = st + mins(1)
        while t < now:
            lines.append(f"{t.strftime('%Y-%m-%d %H:%M:%S')}.4{rng.randint(10, 99)} [INFO][78] "
                         f"felix/summary.go 100: Summarising {rng.randint(9, 14)} dataplane "
                         f"reconciliation loops over 1m0.{rng.randint(1, 9)}s: avg="
                         f"{rng.randint(3, 9)}ms longest={rng.randint(12, 40)}ms ()")
            t += mins(1)
        s.pod_log("kube-system", pn, "calico-node", lines)
        for ln in lines[:head]:
            s.log(st, "kube-system", pn, "calico-node", "calico-node", "info",
                  ln.split(": ", 1)[1] if ": " in ln else ln)
        old = f"calico-node-{s.suffix()}"
        s.log(now - timedelta(days=3), "kube-system", old, "calico-node", "calico-node",
              "info", "Parsed value for IpInIpMtu: 1440 (from environment variable)")
        s.chatter("kube-system", [old], "calico-node", "calico-node", now - timedelta(hours=6),
                  change, 600.0, [(1, "info", "Summarising 11 dataplane reconciliation loops "
                                              "over 1m0.2s: avg=4ms longest=17ms ()")])
        inst = {"instance": f"{ips[n]}:9100", "node": n}
        s.metrics.gauge("node_network_mtu_bytes", "interface MTU", inst | {"device": "eth0"},
                        [(t, 1500.0) for t in ts])
        s.metrics.gauge("node_network_mtu_bytes", "interface MTU", inst | {"device": "tunl0"},
                        [(t, 1440.0) for t in ts if t < st])
        s.metrics.gauge("node_network_mtu_bytes", "interface MTU",
                        inst | {"device": "vxlan.calico"}, [(t, 1500.0) for t in ts if t >= st])
        def retrans(t: datetime, st: datetime = st) -> float:
            return (2.0 if t < st else 95.0) * (0.7 + 0.6 * rng.random())
        s.metrics.counter("node_netstat_Tcp_RetransSegs", "TCP retransmits", inst, accumulate(
            ts, retrans, float(rng.randint(10**6, 3 * 10**6))))
    _apps(s, nodes, ips, change)
    _metrics(s, change)
    return s


def _apps(s: Story, nodes: list[str], ips: dict[str, str], change: datetime) -> None:
    """Victims, the NetworkPolicy red herring, coredns noise, a Pending pod."""
    now = s.now
    ex = app(s, "warehouse", "export-svc", "registry.acme.lan/warehouse/export-svc:3.4.1",
             replicas=2, nodes=nodes[3:], node_ips=ips, created=now - timedelta(days=400),
             rolled=now - timedelta(days=4),
             restarts={0: old_restart("Error", 2, now - timedelta(days=4),
                                      now - timedelta(days=2, hours=5))})
    ra = app(s, "reporting", "report-api", "registry.acme.lan/reporting/report-api:1.19.0",
             replicas=3, nodes=nodes[:3], node_ips=ips, created=now - timedelta(days=400),
             rolled=s.ago(185), revision=31)
    s.chatter("reporting", ra.pods, "report-api", "report-api", now - timedelta(hours=6), change,
              12.0, [(5, "info", "GET /reports/export?format=csv&rows={id} 200 {ms}ms "
                                 "bytes=2{n}41877 upstream=export-svc"),
                     (8, "info", "GET /reports/summary 200 {ms}ms bytes=1{n}2")])
    s.chatter("reporting", ra.pods, "report-api", "report-api", change, now, 6.0, [
        (5, "error", "GET /reports/export?format=csv&rows={id} 504 after 30000ms: export-svc: "
                     "context deadline exceeded (Client.Timeout or context cancellation while "
                     "reading body) received 1{n}48 of 2{n}41877 bytes"),
        (1, "info", "GET /reports/export?format=csv&rows={n} 200 {ms}ms bytes=9{n}0"),
        (8, "info", "GET /reports/summary 200 {ms}ms bytes=1{n}2")])
    s.chatter("warehouse", ex.pods, "export-svc", "export-svc", now - timedelta(hours=6), now,
              15.0, [(5, "info", "export {id} rendered: {id} rows in {ms}ms"),
                     (1, "warning", "slow query on stock_movements took {n}00ms")])
    s.chatter("warehouse", ex.pods, "export-svc", "export-svc", change, now, 14.0, [
        (4, "warning", "write tcp 10.244.{n}.17:8080->{ip}:4{n}12: i/o timeout while streaming "
                       "export {id} (written 1{n}48 bytes)"),
        (1, "warning", "client {ip} went away: broken pipe")])
    pa = app(s, "catalog", "product-api", "registry.acme.lan/catalog/product-api:8.2.0",
             replicas=3, nodes=nodes[2:5], node_ips=ips, created=now - timedelta(days=400),
             rolled=now - timedelta(days=3))
    s.chatter("catalog", pa.pods, "product-api", "product-api", now - timedelta(hours=6), now,
              8.0, [(9, "info", "GET /products/{id} 200 {ms}ms bytes=8{n}4"),
                    (1, "info", "GET /categories/{n}/products?limit=500 200 {ms}ms bytes=4{n}812")])
    web = app(s, "storefront", "web", "registry.acme.lan/storefront/web:12.7.3", replicas=3,
              nodes=nodes, node_ips=ips, created=now - timedelta(days=400),
              rolled=now - timedelta(days=2))
    s.chatter("storefront", web.pods, "web", "web", change, now, 45.0, [
        (3, "warning", "product-api GET /categories/{n}/products?limit=500 timed out after "
                       "5000ms, serving cached listing"),
        (6, "info", "GET / 200 {ms}ms")])
    s.add({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
           "metadata": meta("allow-report-api-ingress", "reporting", s.ago(250), s.uid(),
                            annotations={"acme.lan/ticket": "SEC-1182 default-deny rollout"}),
           "spec": {"podSelector": {"matchLabels": {"app": "report-api"}},
                    "policyTypes": ["Ingress"],
                    "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {
                        "kubernetes.io/metadata.name": "ingress-nginx"}}},
                        {"namespaceSelector": {"matchLabels": {
                            "kubernetes.io/metadata.name": "storefront"}}}],
                        "ports": [{"protocol": "TCP", "port": 8080}]}]}})
    dns = [f"coredns-6d4b75cb6d-{s.suffix()}" for _ in range(2)]
    s.chatter("kube-system", dns, "coredns", "coredns", now - timedelta(hours=6), now, 90.0, [
        (3, "error", "[ERROR] plugin/errors: 2 metrics-gw.dc2.acme.lan. A: read udp "
                     "10.244.3.4:{id}->10.8.0.2:53: i/o timeout"),
        (2, "info", "[INFO] Reloading complete")])
    pn = f"pdf-renderer-6f7d8c9b5-{s.suffix()}"
    s.add(pod(s, "reporting", pn, PodSpecBits([container(
        "pdf-renderer", "registry.acme.lan/reporting/pdf-renderer:0.9.0", cpu="6")],
        {"app": "pdf-renderer"}), node_name=None, ip=None, start=s.ago(95), owner=None,
        phase="Pending", ready=False, conditions=[{
            "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
            "lastTransitionTime": iso(s.ago(95)),
            "message": "0/6 nodes are available: 6 Insufficient cpu."}]))
    s.event("reporting", "Pod", pn, "FailedScheduling", "0/6 nodes are available: 6 Insufficient "
            "cpu. preemption: 0/6 nodes are available: 6 No preemption victims found for "
            "incoming pod.", type_="Warning", count=21, first=s.ago(59), last=s.ago(3),
            component="default-scheduler")


def _metrics(s: Story, change: datetime) -> None:
    """Export codes before and after, summary traffic, and a probe that stays green."""
    now, rng = s.now, s.rng
    ts = grid(now - timedelta(hours=6), now, 60)
    for code, before, after in (("200", 0.09, 0.004), ("504", 0.0005, 0.08)):
        def rate(t: datetime, b: float = before, a: float = after) -> float:
            return b if t < change else a
        s.metrics.counter("http_requests_total", "HTTP requests", {
            "namespace": "reporting", "service": "report-api", "route": "/reports/export",
            "code": code}, accumulate(ts, rate))
    s.metrics.counter("http_requests_total", "HTTP requests", {
        "namespace": "reporting", "service": "report-api", "route": "/reports/summary",
        "code": "200"}, accumulate(ts, lambda t: 0.12 * (0.8 + 0.4 * rng.random())))
    probe = {"job": "blackbox", "instance": "http://report-api.reporting.svc/healthz"}
    s.metrics.gauge("probe_success", "probe success", probe, [(t, 1.0) for t in ts])
    s.metrics.gauge("probe_duration_seconds", "probe duration", probe,
                    [(t, 0.004 + 0.003 * rng.random()) for t in ts])
