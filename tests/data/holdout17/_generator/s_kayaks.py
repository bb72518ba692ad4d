"""Kayak and canoe rental: paddlers cannot check in at the launch kiosks. 27 min ago a Helm
upgrade of the rentals chart edited the Service checkin-api and added the selector label
app.kubernetes.io/component: api, which the launch-checkin pods do not carry (their chart
values were not updated). The Service selects no pod, its Endpoints are empty, and the
gateway's calls to it are refused (502). launch-checkin itself is healthy and Ready. The
culprit is the Service. Red herrings: waiver-forms 6.0.1 rolled out 38 min before the onset
in the same namespace, photo-export with one pod not Ready while it warms its cache, an old
OOM restart of launch-checkin, and a "CRITICAL"-looking tide-feed warning in its log."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout2._generator.kit import deploy, requests
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.scenario_tools.kube import Ctr, http_probe, iso, running

from .kit17 import Incident, eks_nodes, gauge, line

ID = "kayak-launch-checkin-502"
NOW = datetime.fromisoformat("2028-07-22T09:37:00+00:00")
NS = "rentals"
REG = "registry.gitlab.com/paddleriver/platform"


def build() -> Incident:
    s = Incident(
        id=ID, title="Kayak launch check-in kiosks failing", now=NOW,
        report="""\
the check-in kiosks at all three launches show "Check-in unavailable (502)" since shortly
after 9. Online bookings and waiver signing still work. The check-in service looks green in
ArgoCD and the pods are running, so maybe the gateway? Queue at Riverside is getting long.
""",
        truth={"category": "network",
               "culprit": {"kind": "Service", "namespace": NS, "name": "checkin-api"},
               "evidence": ["app.kubernetes.io/component: api", "checkin-api",
                            "Connection refused", "kube_endpoint_address_available"],
               "fix": "The Helm upgrade at 09:10 added app.kubernetes.io/component=api to the "
                      "selector of Service checkin-api, but the launch-checkin pods do not "
                      "carry that label, so the Service has no endpoints and the gateway's "
                      "connections are refused. Remove the extra selector label (or add it "
                      "to the launch-checkin pod template) and roll back the chart values."})
    s.hours = 2.0
    c = s.cluster
    namespaces(s, {"default": 530, "kube-system": 530, NS: 512, "edge": 512})
    nodes = eks_nodes(s, 3, region="eu-north-1", subnet=52, pool="apps-c7i",
                      instance="c7i.xlarge", kubelet="v1.33.4-eks-113cf36",
                      kernel="6.1.151-178.278.amzn2023.x86_64",
                      os_image="Amazon Linux 2023.9.20251110", cpu="4", memory="7955580Ki",
                      alloc_cpu="3920m", alloc_memory="7053436Ki", days=4.6)
    edit = NOW - timedelta(minutes=27, seconds=18)

    # ---- launch-checkin and the Service that no longer selects it
    ctr = Ctr("launch-checkin", f"{REG}/launch-checkin:5.1.4", port=8080,
              requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "384Mi"},
              env={"BOOKINGS_URL": "http://booking-core.rentals.svc", "TIDE_FEED":
                   "https://tides.example-hydro.se/v2"},
              readiness=http_probe("/ready"), liveness=http_probe("/live", delay=15))
    _, pods = steady(s, NS, "launch-checkin", [ctr], nodes=nodes, replicas=2,
                        revision=27, rollout=s.ago(days=3, hours=4), service=None,
                        labels={"app.kubernetes.io/name": "launch-checkin",
                                "app.kubernetes.io/instance": "rentals"},
                        restarted={1: (s.ago(days=2, hours=9), "OOMKilled", 137)})
    svc = c.service(NS, "checkin-api", {"app.kubernetes.io/name": "launch-checkin",
                                        "app.kubernetes.io/component": "api"},
                    port=80, target="http", created=s.ago(days=301),
                    labels={"app.kubernetes.io/name": "checkin-api",
                            "app.kubernetes.io/instance": "rentals",
                            "app.kubernetes.io/managed-by": "Helm",
                            "helm.sh/chart": "rentals-3.14.0"})
    svc["metadata"]["annotations"] = {"meta.helm.sh/release-name": "rentals",
                                      "meta.helm.sh/release-namespace": NS}
    svc["metadata"]["managedFields"] = [{
        "apiVersion": "v1", "fieldsType": "FieldsV1", "manager": "helm", "operation": "Update",
        "time": iso(edit), "fieldsV1": {"f:spec": {"f:selector": {
            "f:app.kubernetes.io/component": {}, "f:app.kubernetes.io/name": {}}},
            "f:metadata": {"f:labels": {"f:helm.sh/chart": {}}}}}]
    quiet(s, pods, "launch-checkin", 190)
    for pod in pods:
        requests(s, pod, "launch-checkin", rps=lambda t: 0.9 if t < edit.timestamp() else
                 0.02, codes={"200": lambda t: 0.97, "409": lambda t: 0.03})
    chatter(s, pods, "launch-checkin", "launch-checkin", [
        ("info", "checkin BK-771203 launch=riverside boats=2 waiver=ok", {}),
        ("info", "checkin BK-771219 launch=old-mill boats=1 waiver=ok", {}),
        ("warn", "checkin BK-771240 refused: waiver missing for paddler 2", {}),
    ], 70, end=edit)
    chatter(s, pods, "launch-checkin", "launch-checkin", [
        ("info", "GET /live 200 1ms", {}),
        ("info", "booking-core cache refreshed: 412 bookings for 2028-07-22", {}),
    ], 20, start=edit)
    for k, pod in enumerate(pods):
        for j in range(4):
            line(s, pod, "launch-checkin", "launch-checkin",
                 s.ago(minutes=110 - 28 * j - 3 * k), "warn",
                 "CRITICAL tide feed stale: last reading 00:40 old for station riverside, "
                 "using forecast")
    gauge(s, "kube_endpoint_address_available", {"namespace": NS, "endpoint": "checkin-api"},
          lambda t: 2.0 if t < edit.timestamp() + 2 else 0.0,
          "Number of addresses available in endpoint.")
    gauge(s, "kube_endpoint_address_not_ready", {"namespace": NS, "endpoint": "checkin-api"},
          lambda t: 0.0, "Number of addresses not ready in endpoint")

    # ---- the gateway
    gw = Ctr("nginx", "docker.io/library/nginx:1.27.3", port=8080,
             requests={"cpu": "200m", "memory": "128Mi"}, limits={"memory": "256Mi"},
             readiness=http_probe("/healthz"))
    _, gws = steady(s, "edge", "rental-gateway", [gw], nodes=nodes, replicas=2, revision=14,
                    rollout=s.ago(days=5, hours=1), service=80, offset=1)
    quiet(s, gws, "nginx", 42)
    for pod in gws:
        for route, rps in (("checkin", 0.9), ("bookings", 2.4), ("waivers", 0.7)):
            ok = (lambda t: 1.0 if t < edit.timestamp() else 0.0) if route == "checkin" \
                else (lambda t: 0.995)
            bad = (lambda t: 0.0 if t < edit.timestamp() else 1.0) if route == "checkin" \
                else (lambda t: 0.005)
            requests(s, pod, "rental-gateway", rps=lambda t, r=rps: r / 2,
                     codes={"200": ok, "502": bad}, extra={"route": route})
    for pod in gws:
        ip = pod["status"]["podIP"]
        chatter(s, [pod], "nginx", "rental-gateway", [
            ("info", f'{ip} - - "POST /api/bookings HTTP/1.1" 200 612 "-" "PaddleApp/4.2"',
             {"http.response.status_code": 200}),
            ("info", f'{ip} - - "POST /api/checkin HTTP/1.1" 200 233 "-" "Kiosk/1.9"',
             {"http.response.status_code": 200}),
        ], 60, end=edit)
        chatter(s, [pod], "nginx", "rental-gateway", [
            ("error", "connect() failed (111: Connection refused) while connecting to "
             "upstream, client: 10.52.18.77, server: kiosk.paddleriver.example, request: "
             '"POST /api/checkin HTTP/1.1", upstream: "http://checkin-api.rentals.svc.'
             'cluster.local:80/api/checkin"', {"http.response.status_code": 502}),
            ("info", f'{ip} - - "POST /api/checkin HTTP/1.1" 502 157 "-" "Kiosk/1.9"',
             {"http.response.status_code": 502}),
            ("info", f'{ip} - - "POST /api/bookings HTTP/1.1" 200 598 "-" "PaddleApp/4.2"',
             {"http.response.status_code": 200}),
        ], 120, start=edit)

    # ---- red herrings
    roll = edit - timedelta(minutes=38)
    wf = Ctr("waiver-forms", f"{REG}/waiver-forms:6.0.1", port=8080,
             requests={"cpu": "150m", "memory": "256Mi"}, limits={"memory": "384Mi"},
             readiness=http_probe("/ready"))
    _, wfs = steady(s, NS, "waiver-forms", [wf], nodes=nodes, replicas=2, revision=52,
                    rollout=roll, service=80, offset=2,
                    old=(51, s.ago(days=6), [Ctr("waiver-forms",
                                                 f"{REG}/waiver-forms:5.9.7")]))
    quiet(s, wfs, "waiver-forms", 210)
    for pod in wfs:
        requests(s, pod, "waiver-forms", rps=lambda t: 0.35, codes={"200": lambda t: 0.99,
                                                                    "422": lambda t: 0.01})
    chatter(s, wfs, "waiver-forms", "waiver-forms", [
        ("info", "waiver-forms 6.0.1 started, new template 2028-07 (Swedish, English, German)",
         {}),
        ("info", "waiver W-2028-0722-0413 signed for booking BK-771288", {}),
        ("warn", "signature canvas too small on device 'Kiosk/1.9', rescaled", {}),
    ], 40)
    px = Ctr("photo-export", f"{REG}/photo-export:2.2.0", port=8080,
             requests={"cpu": "300m", "memory": "512Mi"}, limits={"memory": "1Gi"},
             readiness=http_probe("/ready", delay=20, period=15))
    warm = s.ago(minutes=19, seconds=30)

    def px_states(i: int, name: str, started: datetime) -> dict:
        if i == 1:
            return {"photo-export": running(warm, ready=False)}
        return {}
    px_roll = s.ago(days=4, hours=2)
    pw, pxs = deploy(s, NS, "photo-export", [px], nodes=nodes, replicas=2, revision=9,
                     rollout=px_roll, service=80, statuses=px_states,
                     born=lambda i: px_roll + timedelta(seconds=31) if i == 0 else
                     warm - timedelta(seconds=6))
    pip = pxs[1]["status"]["podIP"]
    c.event(pxs[1], "Unhealthy", 'Readiness probe failed: HTTP probe failed with statuscode: '
            "503", first=warm + timedelta(seconds=21), last=NOW - timedelta(seconds=9),
            count=int((NOW - warm).total_seconds() // 15) - 1, type_="Warning",
            field_path="spec.containers{photo-export}")
    c.event(pxs[1], "Scheduled", f"Successfully assigned {NS}/{pxs[1]['metadata']['name']} "
            f"to {pxs[1]['spec']['nodeName']}", first=warm - timedelta(seconds=6),
            component="default-scheduler", host="")
    c.event(pw.revisions[-1], "SuccessfulCreate", f"Created pod: {pxs[1]['metadata']['name']}",
            first=warm - timedelta(seconds=6), component="replicaset-controller", host="")
    quiet(s, pxs, "photo-export", 600)
    chatter(s, pxs[:1], "photo-export", "photo-export", [
        ("info", "exported 14 trip photos for BK-770911 to gallery", {}),
    ], 10)
    chatter(s, pxs[1:], "photo-export", "photo-export", [
        ("info", f"warming thumbnail cache from s3://paddleriver-photos ({pip}): 38% done",
         {}),
        ("info", "readiness: cache warm-up in progress, answering 503", {}),
    ], 14)
    return s
