"""dependency_failure: the KMS key that wraps ledger-api's data keys was disabled."""

from __future__ import annotations

from pathlib import Path

from ._kit import Scenario, rollout_events, rs_hash, worker_nodes

SID = "payments-ledger-500s"
NOW = "2026-07-21T09:55:00Z"
KEY = "arn:aws:kms:eu-west-1:318245507716:key/4c1f9e2a-7b3d-4e0a-9c55-1f2e8d6a0b71"
OFF = 38.0
CACHE_TTL = 5.0


def build(root: Path) -> None:
    s = Scenario(SID, NOW, 5704)
    nodes = worker_nodes(s, 6)
    s.background(nodes, ["payments", "shop"])
    fail = OFF - CACHE_TTL

    ledger = s.app("payments", "ledger-api", "registry.internal/payments/ledger-api:4.7.1",
                   nodes[:3], cpu="500m", mem="768Mi", revision=63, created_min=6 * 1440,
                   env=[{"name": "KMS_KEY_ID", "value": "alias/ledger-data"},
                        {"name": "AWS_REGION", "value": "eu-west-1"},
                        {"name": "DATA_KEY_CACHE_TTL", "value": "5m"},
                        {"name": "DB_HOST", "value": "ledger.cluster-c8x1.eu-west-1.rds"
                                                     ".amazonaws.com"}])
    s.find("Deployment", "ledger-api")["spec"]["template"]["spec"]["serviceAccountName"] = \
        "ledger-api"
    for p in ledger.pods:
        s.find("Pod", p)["spec"]["serviceAccountName"] = "ledger-api"

    def l_err(m: float, i: int) -> float:
        return 0.05 if m > fail else 7.5
    s.pod_basics(ledger, cpu=lambda m, i: 0.22, mem_mb=lambda m, i: 430.0,
                 rps=lambda m, i: 9.0 if m > fail else 1.6, err=l_err)
    for p in ledger.pods:
        s.counter("ledger_kms_decrypt_errors", "KMS Decrypt failures by error code.",
                  {"namespace": "payments", "pod": p, "error_code": "DisabledException"},
                  lambda m: 0.0 if m > fail else 0.9, start=0)
        s.gauge("ledger_data_key_cache_entries", "Unwrapped data keys held in memory.",
                {"namespace": "payments", "pod": p},
                lambda m: 212 if m > OFF else max(0, int(212 * (m - fail) / CACHE_TTL)))
        m = 60 - s.rng.uniform(0, 0.3)
        while m > 0:
            tenant = f"t-{s.rng.randint(1000, 9999)}"
            rid = s.uid(f"rid{p}{m}")
            if m < fail and s.rng.random() < 0.75:
                if s.rng.random() < 0.5:
                    s.log(s.ago(m), "error", "ledger-api", "payments", p, "ledger-api",
                          f"unwrap data key for tenant {tenant} failed: operation error KMS: "
                          f"Decrypt, https response error StatusCode: 400, RequestID: {rid}, "
                          f"DisabledException: {KEY} is disabled.",
                          error__type="DisabledException")
                else:
                    s.log(s.ago(m), "error", "ledger-api", "payments", p, "ledger-api",
                          f"POST /v1/entries 500 tenant={tenant}: envelope: cannot decrypt "
                          "record: KMS key is disabled (alias/ledger-data)",
                          http__response__status_code=500, error__type="DisabledException")
            elif s.rng.random() < 0.04:
                s.log(s.ago(m), "warn", "ledger-api", "payments", p, "ledger-api",
                      "pgx: read tcp 10.244.1.7:51234->10.20.4.18:5432: connection reset by "
                      "peer; reconnecting (pool 9/20)")
            else:
                hit = "hit" if m > OFF or s.rng.random() < (m - fail) / CACHE_TTL else "miss"
                s.log(s.ago(m), "info", "ledger-api", "payments", p, "ledger-api",
                      f"POST /v1/entries 201 tenant={tenant} {s.rng.randint(8, 40)}ms "
                      f"(data key cache {hit})", http__response__status_code=201)
            m -= 12 / 60 * s.rng.uniform(0.6, 1.4)
    s.pod_log("payments", ledger.pods[0], "ledger-api",
              [f"{s.t(2)} ERROR unwrap data key for tenant t-4410 failed: operation error KMS: "
               f"Decrypt, https response error StatusCode: 400, RequestID: {s.uid('x')}, "
               f"DisabledException: {KEY} is disabled."] * 3)

    checkout = s.app("shop", "checkout", "registry.internal/shop/checkout:9.0.4",
                     nodes[2:5], revision=112, created_min=2 * 1440)
    s.pod_basics(checkout, cpu=lambda m, i: 0.3, mem_mb=lambda m, i: 350.0,
                 rps=lambda m, i: 6.0, err=lambda m, i: 0.02 if m > fail else 4.4)
    for p in checkout.pods:
        m = 60 - s.rng.uniform(0, 0.5)
        while m > 0:
            if m < fail and s.rng.random() < 0.7:
                s.log(s.ago(m), "error", "checkout", "shop", p, "checkout",
                      "order finalisation failed: ledger-api POST /v1/entries returned 500 "
                      "Internal Server Error; payment authorised but not booked, queued for "
                      "retry", error__type="UpstreamError")
            else:
                s.log(s.ago(m), "info", "checkout", "shop", p, "checkout",
                      f"order ORD-{s.rng.randint(100000, 999999)} completed in "
                      f"{s.rng.randint(120, 480)}ms")
            m -= 28 / 60 * s.rng.uniform(0.6, 1.4)

    fraud = s.app("payments", "fraud-scorer", "registry.internal/payments/fraud-scorer:2.4.0",
                  nodes[3:5], cpu="1", mem="1536Mi", revision=30, created_min=30,
                  prev_image="registry.internal/payments/fraud-scorer:2.3.8")
    rollout_events(s, "payments", "fraud-scorer", fraud.rs,
                   "fraud-scorer-" + rs_hash("paymentsfraud-scorer29"), 30, 2)
    s.chatter(fraud, [("info", "scored txn {id} risk=0.{n} model=gbm-2026-07 in {ms}ms"),
                      ("warn", "feature 'device_age_days' missing for txn {id}, using default"),
                      ("info", "scored txn {id} risk=0.0{n} model=gbm-2026-07 in {ms}ms")],
                  every_s=20, start=0, stop=0)
    s.pod_basics(fraud, cpu=lambda m, i: 0.5, mem_mb=lambda m, i: 900.0, rps=lambda m, i: 5.0)
    wh = s.app("payments", "psp-webhooks", "registry.internal/payments/psp-webhooks:1.9.2",
               nodes[4:6], revision=17, created_min=4 * 1440)
    s.chatter(wh, [("info", "webhook adyen AUTHORISATION psp_ref={rnd}{n} accepted"),
                   ("error", "webhook signature check failed for source 203.0.113.{n}: "
                             "unknown HMAC key id, rejected (expected for probes)")], every_s=50)
    s.pod_basics(wh, cpu=lambda m, i: 0.05, mem_mb=lambda m, i: 120.0)
    o = s.find("Pod", wh.pods[0])
    cs = o["status"]["containerStatuses"][0]
    cs["restartCount"] = 1
    cs["lastState"] = {"terminated": {"exitCode": 137, "reason": "OOMKilled",
                                      "startedAt": s.t(4 * 1440), "finishedAt": s.t(2 * 1440)}}
    cs["state"] = {"running": {"startedAt": s.t(2 * 1440 - 0.3)}}

    s.scenario_yaml = {
        "id": SID,
        "title": "ledger-api returning 500s, checkout cannot book payments",
        "now": NOW,
        "report": "checkout is failing to book payments since ~09:20, ledger-api returns 500s. "
                  "fraud-scorer 2.4.0 went out right around then, so probably that? Or the RDS "
                  "failover from last night, ledger logs show connection resets. ledger pods "
                  "look healthy and nobody touched ledger-api.\n",
        "truth": {
            "category": "dependency_failure",
            "culprit": {"kind": "Deployment", "namespace": "payments", "name": "ledger-api"},
            "evidence": ["DisabledException", "KMS key is disabled", "is disabled."],
            "fix": "The KMS key behind alias/ledger-data was disabled (by the key cleanup "
                   "script) about 38 minutes ago; once ledger-api's 5-minute data key cache "
                   "expired every Decrypt fails with DisabledException. Re-enable the key in "
                   "KMS (and exclude it from the cleanup); nothing in the cluster changed.",
        },
    }
    s.write(root)
