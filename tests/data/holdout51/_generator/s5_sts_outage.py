"""A regional STS outage: IRSA credential refresh fails, S3 and SQS calls follow."""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path

from ._kit import (
    CState,
    PState,
    Story,
    access,
    ctr,
    deployment,
    event,
    fix_host_ips,
    http_probe,
    namespace,
    node,
    platform,
    service,
)

SID = "thumbnails-s3-access-errors"
NOW = "2026-08-18T16:05:00Z"
OUTAGE = 38.0
STS = "https://sts.eu-west-1.amazonaws.com/"


def _irsa(role: str) -> list[dict[str, str]]:
    return [{"name": "AWS_STS_REGIONAL_ENDPOINTS", "value": "regional"},
            {"name": "AWS_DEFAULT_REGION", "value": "eu-west-1"},
            {"name": "AWS_REGION", "value": "eu-west-1"},
            {"name": "AWS_ROLE_ARN", "value": f"arn:aws:iam::481516234200:role/{role}"},
            {"name": "AWS_WEB_IDENTITY_TOKEN_FILE",
             "value": "/var/run/secrets/eks.amazonaws.com/serviceaccount/token"}]


def build(root: Path) -> None:
    st = Story(SID, NOW, 5105)
    zones = ["eu-west-1a", "eu-west-1b", "eu-west-1c"]
    nodes = [f"ip-10-0-{a}-{b}.eu-west-1.compute.internal"
             for a, b in [(12, 5), (26, 118), (39, 240), (14, 76), (30, 31)]]
    for i, n in enumerate(nodes):
        st.add(node(st, n, zone=zones[i % 3], age_days=6 + i))
    platform(st, nodes)
    for ns in ("media", "orders", "analytics"):
        st.add(namespace(st, ns))

    thumb = deployment(st, "media", "thumbnailer",
                       [ctr("thumbnailer", "ghcr.io/example/thumbnailer:2.9.1", port=9102,
                            cpu="500m", mem="768Mi", mem_limit="1536Mi",
                            env=[*_irsa("media-thumbnailer"),
                                 {"name": "BUCKET", "value": "example-media-prod"}])],
                       nodes[:3], age_days=400, revision=27, rollout_min=6 * 1440 + 200,
                       sa="thumbnailer")
    # each pod's cached credentials run out at a different time after the outage began
    fail_from = {p.name: OUTAGE - d for p, d in zip(thumb.pods, (3, 10, 16), strict=True)}
    for p in thumb.pods:
        t = st.at(60) + timedelta(seconds=st.rng.uniform(0, 20))
        while t < st.now:
            m = (st.now - t).total_seconds() / 60
            key = f"uploads/{st.rng.getrandbits(40):010x}.jpg"
            if m > fail_from[p.name]:
                st.log(t, p, "info", f"thumbnail written s3://example-media-prod/thumbs/"
                                     f"{key} sizes=3 took={st.rng.randint(180, 600)}ms")
            else:
                if st.rng.random() < 0.5:
                    err = (f"botocore.exceptions.ConnectTimeoutError: Connect timeout on "
                           f'endpoint URL: "{STS}"')
                else:
                    err = ("botocore.exceptions.ClientError: An error occurred "
                           "(ServiceUnavailable) when calling the AssumeRoleWithWebIdentity "
                           "operation (reached max retries: 4): Service Unavailable")
                st.log(t, p, "error", f"job failed key={key} stage=upload: {err}",
                       {"error.type": err.split(":")[0]})
                if st.rng.random() < 0.3:
                    st.log(t + timedelta(milliseconds=5), p, "error",
                           f"S3 PutObject s3://example-media-prod/thumbs/{key} denied: "
                           "Unable to refresh credentials for role media-thumbnailer, "
                           "retrying in 30s")
            t += timedelta(seconds=st.rng.uniform(14, 30))

    consumer = deployment(st, "orders", "order-events",
                          [ctr("order-events", "ghcr.io/example/order-events:5.0.3",
                               port=9090, cpu="200m", mem="256Mi",
                               env=_irsa("orders-events"))],
                          nodes[2:4], age_days=300, revision=19, rollout_min=12 * 1440,
                          sa="order-events")
    for i, p in enumerate(consumer.pods):
        t = st.at(60)
        start = OUTAGE - 7 - 9 * i
        while t < st.now:
            m = (st.now - t).total_seconds() / 60
            if m > start:
                st.log(t, p, "info", f'msg="batch processed" queue=order-events '
                                     f"messages={st.rng.randint(3, 10)}")
            else:
                st.log(t, p, "error",
                       'msg="receive failed" queue=order-events err="operation error SQS: '
                       "ReceiveMessage, get identity: get credentials: failed to refresh "
                       "cached credentials, failed to retrieve credentials, operation error "
                       "STS: AssumeRoleWithWebIdentity, exceeded maximum number of attempts, "
                       "3, https response error StatusCode: 503, RequestID: "
                       f"{st.rng.getrandbits(128):032x}, api error ServiceUnavailable: "
                       'Service Unavailable"')
            t += timedelta(seconds=st.rng.uniform(15, 30))

    # image-api rolled out 45 minutes ago: healthy, serves reads through the CDN
    api = deployment(st, "media", "image-api",
                     [ctr("image-api", "ghcr.io/example/image-api:4.1.0", cpu="300m",
                          mem="384Mi", readiness=http_probe("/ready"))], nodes[1:4],
                     age_days=400, revision=64, rollout_min=45)
    service(st, "media", "image-api", {"app.kubernetes.io/name": "image-api"}, 80, 8080,
            pods=api.pods)
    event(st, "media", "Deployment", "image-api", "ScalingReplicaSet",
          f"Scaled up replica set {api.objects[1]['metadata']['name']} to 3 from 2",
          first_min=44, component="deployment-controller", api="apps/v1")
    st.chatter(api.pods, access(["/i/8812/w400.webp", "/i/1120/w1200.jpg", "/ready"],
                                "image-api", 20), every_s=25)
    # analytics/report-sync: denied for days by a genuine, unrelated bucket policy gap
    rsync = deployment(st, "analytics", "report-sync",
                       [ctr("report-sync", "ghcr.io/example/report-sync:0.4.0", port=None,
                            cpu="100m", mem="128Mi", env=_irsa("analytics-report-sync"))],
                       nodes[4:5], age_days=6, revision=1, rollout_min=6 * 1440,
                       sa="report-sync",
                       states=[PState(containers=[CState(restarts=1, started_min=3 * 1440,
                                                         last=("Error", 1, 6 * 1440,
                                                               3 * 1440))])])

    def deny(r: random.Random) -> tuple[str, str]:
        return "error", ("sync failed: An error occurred (AccessDenied) when calling the "
                         "GetObject operation: User: arn:aws:sts::481516234200:assumed-role/"
                         "analytics-report-sync/botocore-session-1755" + str(r.randint(100, 999))
                         + " is not authorized to perform: s3:GetObject on resource: "
                         "arn:aws:s3:::example-finance-exports/daily/ because no "
                         "resource-based policy allows the s3:GetObject action")

    st.chatter(rsync.pods, deny, every_s=300)
    bx = deployment(st, "monitoring", "blackbox-exporter",
                    [ctr("blackbox-exporter", "quay.io/prometheus/blackbox-exporter:v0.25.0",
                         port=9115, cpu="20m", mem="64Mi")], nodes[4:5], age_days=300)
    st.chatter(bx.pods, lambda r: ("info", f'ts=2026-08-18 level=info msg="Probe failed" '
                                           f'module=http_2xx target={STS} '
                                           'err="context deadline exceeded"'),
               every_s=120, start_min=OUTAGE)
    pend = deployment(st, "media", "video-transcoder",
                      [ctr("transcoder", "ghcr.io/example/transcoder:1.2.0", port=None,
                           cpu="7", mem="12Gi", mem_limit="12Gi")], nodes[:1], replicas=1,
                      age_days=20, rollout_min=3 * 60,
                      states=[PState(phase="Pending", scheduled=False,
                                     unschedulable="0/5 nodes are available: 5 Insufficient "
                                                   "cpu.")])
    event(st, "media", "Pod", pend.pods[0].name, "FailedScheduling",
          "0/5 nodes are available: 5 Insufficient cpu. preemption: 0/5 nodes are available: "
          "5 No preemption victims found for incoming pod.", type_="Warning", count=44,
          first_min=3 * 60, last_min=4, component="default-scheduler")
    event(st, "media", "Pod", pend.pods[0].name, "NotTriggerScaleUp",
          "pod didn't trigger scale-up: 1 max node group size reached", type_="Normal",
          count=30, first_min=3 * 60, last_min=7, component="cluster-autoscaler")

    # metrics
    for w in (thumb, consumer, api, rsync, bx):
        for p in w.pods:
            st.pod_metrics(p, cpu=0.2, mem_mib=300,
                           restarts=(lambda m: 1) if w is rsync else None)
    for target, down in [(STS, True), ("https://s3.eu-west-1.amazonaws.com/", False),
                         ("https://sqs.eu-west-1.amazonaws.com/", False)]:
        lab = {"job": "blackbox-external", "instance": target}
        st.gauge("probe_success", "Displays whether or not the probe was a success", lab,
                 lambda m, d=down: 0 if d and m < OUTAGE else 1)
        st.gauge("probe_duration_seconds", "Returns how long the probe took to complete in "
                 "seconds", lab,
                 lambda m, d=down: 10.0 if d and m < OUTAGE else
                 round(st.rng.uniform(0.03, 0.09), 3))
    for p in thumb.pods:
        for res in ("ok", "error"):
            st.counter("thumbnailer_jobs_total", "Thumbnail jobs by result.",
                       {"namespace": "media", "pod": p.name, "result": res},
                       lambda m, r=res, f=fail_from[p.name]:
                       (0.07 if m > f else 0.0) if r == "ok" else (0.0 if m > f else 0.07),
                       start=80000.0 if res == "ok" else 40.0)
    st.gauge("aws_sqs_approximate_number_of_messages_visible_average",
             "CloudWatch metric AWS/SQS ApproximateNumberOfMessagesVisible",
             {"job": "cloudwatch", "queue_name": "order-events"},
             lambda m: 30 + max(0, OUTAGE - 8 - m) * 55)
    st.gauge("aws_sqs_approximate_number_of_messages_visible_average",
             "CloudWatch metric AWS/SQS ApproximateNumberOfMessagesVisible",
             {"job": "cloudwatch", "queue_name": "media-thumbnail-jobs"},
             lambda m: 12 + max(0, OUTAGE - 3 - m) * 120)
    st.http("media", "image-api", 25.0, lambda m: 0.001)
    fix_host_ips(st.objects)
    st.write(root, "Thumbnails not generated, S3 errors",
             "new uploads have no thumbnails since ~15:30. thumbnailer logs are full of S3 "
             "errors, looks like\naccess denied / credentials. Did someone touch the bucket "
             "policy or the IAM role? image-api\nwas deployed around 15:20, could that be it?\n",
             {"category": "dependency_failure",
              "culprit": {"kind": "Deployment", "namespace": "media", "name": "thumbnailer"},
              "evidence": ["AssumeRoleWithWebIdentity", "sts.eu-west-1.amazonaws.com",
                           "ServiceUnavailable"],
              "fix": "Nothing in the cluster to roll back: the regional STS endpoint is down "
                     "(AWS incident). Wait for it or point AWS_STS_REGIONAL_ENDPOINTS/the SDK "
                     "at another region's STS for thumbnailer and order-events; re-drive the "
                     "queued jobs afterwards."})
