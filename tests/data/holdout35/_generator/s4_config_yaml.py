"""Tidewater Payments: an engineer edits fx-rates' mounted ConfigMap with `kubectl edit` and
leaves an unquoted colon in a YAML value. Reloader sees the change and rolls the Deployment
(Recreate strategy, same image); every new pod exits at start on the YAML parse error."""

from __future__ import annotations

import hashlib
import random
from datetime import timedelta

import yaml

from .kube import (
    at,
    config_map,
    container,
    deploy_status,
    deployment,
    endpoints,
    event,
    healthy_deployment,
    http_probe,
    ms,
    namespace,
    node,
    pod,
    pod_hash,
    replicaset,
    service,
    suffix,
    template,
    terminated,
    ts,
    waiting,
)
from .write import Scenario, doc

NOW = at("2026-11-30T16:20:00Z")
ID = "fx-rates-restarted-itself"
NS = "treasury"
EDIT = NOW - timedelta(minutes=24)
IMAGE = "ghcr.io/tidewater-pay/fx-rates:3.4.0"

GOOD = """\
# fx-rates providers: order is priority
refresh_interval: 60s
stale_after: 15m
base_currencies: [EUR, GBP, USD]
providers:
  - name: refinitiv
    url: https://api.refinitiv.example.net/fx/v2/spot
    timeout: 2s
    weight: 10
  - name: ecb
    url: https://data-api.ecb.europa.eu/service/data/EXR
    timeout: 5s
    weight: 5
    daily_only: true
"""
BAD = (
    GOOD
    + """\
  - name: openexchangerates
    url: https://openexchangerates.org/api/latest.json
    timeout: 3s
    note: fallback only: use while refinitiv contract renews
    weight: 1
rounding:
  mode: half_even
  decimals: 6
"""
)


def _parse_error() -> str:
    try:
        yaml.safe_load(BAD)
    except yaml.YAMLError as exc:
        problem = str(exc).replace('"<unicode string>"', '"/etc/fx-rates/providers.yaml"')
        return problem
    raise AssertionError("the edited config must not parse")


def build() -> Scenario:
    rng = random.Random(4)
    err = _parse_error()
    s = Scenario(
        id=ID,
        title="FX rates down, payment quotes failing",
        now=ts(NOW),
        report=(
            "payment-quotes returns 503 for anything non-EUR, the FX rates service is down. "
            "fx-rates restarted by itself ~25 min ago and never came back, nobody merged to the "
            "fx-rates repo today. ledger-writer was deployed right before that, related? "
            "or is refinitiv down again?\n"
        ),
        truth={
            "category": "crash_loop",
            "culprit": {"kind": "Deployment", "namespace": NS, "name": "fx-rates"},
            "evidence": [
                "mapping values are not allowed here",
                "providers.yaml",
                "CrashLoopBackOff",
            ],
            "fix": (
                "Fix the YAML in ConfigMap fx-rates-config (quote the `note` value added at "
                f"{ts(EDIT)} or revert the kubectl edit); Reloader then rolls fx-rates again. "
                "Image and code are unchanged."
            ),
        },
    )
    nodes = [(f"aks-system-31415926-vmss0000{k}", f"10.224.0.{4 + k}") for k in range(3)]
    s.objects += [
        namespace(n, NOW - timedelta(days=d))
        for n, d in ((NS, 700), ("kube-tools", 700), ("payments", 700))
    ]
    for k, (n, ip) in enumerate(nodes):
        s.objects.append(
            node(
                n,
                NOW - timedelta(days=12),
                address=ip,
                kubelet="v1.30.4",
                image="Ubuntu 22.04.5 LTS",
                labels={"agentpool": "system"},
                heartbeat=NOW - timedelta(seconds=8 + k),
            )
        )
    cm = config_map(
        NS,
        "fx-rates-config",
        NOW - timedelta(days=180),
        {"providers.yaml": BAD},
        edited=EDIT,
        labels={"app": "fx-rates"},
    )
    s.objects.append(cm)
    digest = hashlib.sha1(BAD.encode()).hexdigest()
    old_digest = hashlib.sha1(GOOD.encode()).hexdigest()

    def tmpl_for(d: str):
        return template(
            {"app": "fx-rates", "tier": "core"},
            [
                container(
                    "fx-rates",
                    IMAGE,
                    ports=[8000],
                    requests={"cpu": "200m", "memory": "256Mi"},
                    limits={"memory": "512Mi"},
                    env=[
                        {"name": "FX_CONFIG_PATH", "value": "/etc/fx-rates/providers.yaml"},
                        {"name": "LOG_LEVEL", "value": "INFO"},
                        {"name": "STAKATER_FX_RATES_CONFIG_CONFIGMAP", "value": d},
                    ],
                    mounts=[{"name": "config", "mountPath": "/etc/fx-rates", "readOnly": True}],
                    readiness=http_probe("/ready", 8000, 5),
                    liveness=http_probe("/live", 8000, 15, 20),
                )
            ],
            volumes=[{"name": "config", "configMap": {"name": "fx-rates-config"}}],
            service_account="fx-rates",
        )

    new_t, old_t = tmpl_for(digest), tmpl_for(old_digest)
    d = deployment(
        NS,
        "fx-rates",
        NOW - timedelta(days=540),
        new_t,
        replicas=2,
        revision=23,
        updated=EDIT + timedelta(seconds=2),
        manager="reloader-reloader",
        annotations={"reloader.stakater.com/auto": "true"},
        strategy={"type": "Recreate"},
        status=deploy_status(
            2,
            0,
            2,
            0,
            since=EDIT + timedelta(seconds=14),
            progressing=(
                "False",
                "ProgressDeadlineExceeded",
                f'ReplicaSet "fx-rates-{pod_hash("fx23")}" has timed out progressing.',
            ),
            generation=25,
        ),
    )
    h_new, h_old = pod_hash("fx23"), pod_hash("fx22")
    rs_new = replicaset(d, h_new, EDIT + timedelta(seconds=6), 23, replicas=2, ready=0, tmpl=new_t)
    rs_old = replicaset(d, h_old, NOW - timedelta(days=34), 22, replicas=0, ready=0, tmpl=old_t)
    s.objects += [d, rs_new, rs_old]
    dpods = []
    for k in range(2):
        created = EDIT + timedelta(seconds=8 + k)
        pname = f"fx-rates-{h_new}-{suffix(f'fx{k}')}"
        restarts = 9 - k
        last_start = NOW - timedelta(minutes=2, seconds=50 - 40 * k)
        last = terminated(1, "Error", last_start, last_start + timedelta(seconds=1))
        s.objects.append(
            pod(
                rs_new,
                pname,
                created,
                node_name=nodes[k][0],
                ip=f"10.244.{k}.{61 + k}",
                host_ip=nodes[k][1],
                ready=False,
                statuses=[
                    waiting(
                        "fx-rates",
                        IMAGE,
                        "CrashLoopBackOff",
                        f"back-off 5m0s restarting failed container=fx-rates "
                        f"pod={pname}_{NS}({'0a1b' * 2})",
                        restarts=restarts,
                        last=last,
                    )
                ],
            )
        )
        dpods.append(pname)
        stamp = last_start.strftime("%Y-%m-%d %H:%M:%S")
        prefix = f"{stamp},{rng.randint(100, 999)}"
        s.log(
            NS,
            pname,
            "fx-rates",
            [
                f"{prefix} INFO fx_rates.main: starting fx-rates 3.4.0 (python 3.12.7, pid 1)",
                f"{prefix} INFO fx_rates.config: loading providers from /etc/fx-rates/providers.yaml",
                "Traceback (most recent call last):",
                '  File "/app/fx_rates/main.py", line 58, in <module>',
                '    settings = load_settings(os.environ["FX_CONFIG_PATH"])',
                '  File "/app/fx_rates/config.py", line 31, in load_settings',
                "    raw = yaml.safe_load(fh)",
                '  File "/usr/local/lib/python3.12/site-packages/yaml/__init__.py", line 125, in safe_load',
                "    return load(stream, SafeLoader)",
                '  File "/usr/local/lib/python3.12/site-packages/yaml/scanner.py", line 577, in fetch_value',
                "    raise ScannerError(None, None,",
                "yaml.scanner.ScannerError: " + err,
            ],
            previous=True,
        )
        s.log(
            NS,
            pname,
            "fx-rates",
            [
                f"{(NOW - timedelta(seconds=20)).strftime('%Y-%m-%d %H:%M:%S')},114 INFO fx_rates.main: "
                "starting fx-rates 3.4.0 (python 3.12.7, pid 1)"
            ],
        )
        s.objects += [
            event(
                NS,
                "Pod",
                pname,
                "BackOff",
                f"Back-off restarting failed container fx-rates in pod {pname}_{NS}({'0a1b' * 2})",
                first=created + timedelta(seconds=20),
                last=NOW - timedelta(seconds=30 + 20 * k),
                count=95 - 4 * k,
                type_="Warning",
                host=nodes[k][0],
            ),
            event(
                NS,
                "Pod",
                pname,
                "Pulled",
                f'Container image "{IMAGE}" already present on machine',
                first=created + timedelta(seconds=2),
                last=last_start,
                count=restarts + 1,
                host=nodes[k][0],
            ),
            event(
                NS,
                "Pod",
                pname,
                "Started",
                "Started container fx-rates",
                first=created + timedelta(seconds=2),
                last=last_start,
                count=restarts + 1,
                host=nodes[k][0],
            ),
        ]
    s.objects += [
        event(
            NS,
            "Deployment",
            "fx-rates",
            "ScalingReplicaSet",
            f"Scaled down replica set fx-rates-{h_old} to 0 from 2",
            first=EDIT + timedelta(seconds=3),
            last=EDIT + timedelta(seconds=3),
            source="deployment-controller",
            api="apps/v1",
        ),
        event(
            NS,
            "Deployment",
            "fx-rates",
            "ScalingReplicaSet",
            f"Scaled up replica set fx-rates-{h_new} to 2",
            first=EDIT + timedelta(seconds=6),
            last=EDIT + timedelta(seconds=6),
            source="deployment-controller",
            api="apps/v1",
        ),
        service(
            NS, "fx-rates", NOW - timedelta(days=540), {"app": "fx-rates"}, 80, 8000, "10.0.41.7"
        ),
        endpoints(
            NS,
            "fx-rates",
            NOW - timedelta(days=540),
            [],
            [(p, f"10.244.{k}.{61 + k}") for k, p in enumerate(dpods)],
            8000,
        ),
    ]

    # bystanders: a real deploy just before, reloader itself, the caller
    objs, ledger = healthy_deployment(
        NS,
        "ledger-writer",
        "ghcr.io/tidewater-pay/ledger-writer:7.0.3",
        replicas=2,
        created=NOW - timedelta(days=600),
        rolled=EDIT - timedelta(minutes=9),
        revision=140,
        nodes=nodes,
        ip_prefix="10.244.2",
    )
    s.objects += objs
    objs, rel = healthy_deployment(
        "kube-tools",
        "reloader-reloader",
        "ghcr.io/stakater/reloader:v1.1.0",
        replicas=1,
        created=NOW - timedelta(days=400),
        rolled=NOW - timedelta(days=5),
        revision=6,
        nodes=nodes[2:],
        ip_prefix="10.244.2",
        port=9090,
    )
    s.objects += objs
    objs, quotes = healthy_deployment(
        "payments",
        "payment-quotes",
        "ghcr.io/tidewater-pay/payment-quotes:12.2.0",
        replicas=3,
        created=NOW - timedelta(days=650),
        rolled=NOW - timedelta(days=2),
        revision=388,
        nodes=nodes,
        ip_prefix="10.244.1",
    )
    s.objects += objs
    s.objects.append(
        event(
            NS,
            "Deployment",
            "ledger-writer",
            "ScalingReplicaSet",
            f"Scaled up replica set ledger-writer-{pod_hash('treasury/ledger-writer/140')} to 2",
            first=EDIT - timedelta(minutes=9),
            last=EDIT - timedelta(minutes=9),
            source="deployment-controller",
            api="apps/v1",
        )
    )
    s.log(
        "kube-tools",
        rel[0],
        "reloader-reloader",
        [
            f'time="{(NOW - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")}" level=info msg="Changes detected in '
            "'payment-limits' of type 'CONFIGMAP' in namespace 'payments'; updated 'payment-quotes' of type "
            "'Deployment' in namespace 'payments'\"",
            f'time="{ts(EDIT + timedelta(seconds=1))}" level=info msg="Changes detected in \'fx-rates-config\' of '
            "type 'CONFIGMAP' in namespace 'treasury'; updated 'fx-rates' of type 'Deployment' in namespace "
            "'treasury'\"",
        ],
    )
    t = NOW - timedelta(minutes=70)
    k = 0
    while t < NOW:
        q = quotes[k % 3]
        if t < EDIT + timedelta(seconds=5):
            s.docs.append(
                doc(
                    ms(t),
                    f"quote issued pair=EUR{['GBP', 'USD', 'PLN'][k % 3]} "
                    f"rate_age_s={rng.randint(3, 58)}",
                    "info",
                    "payment-quotes",
                    "payments",
                    q,
                    "payment-quotes",
                    http__response__status_code=200,
                )
            )
            if k % 5 == 0:
                s.docs.append(
                    doc(
                        ms(t + timedelta(seconds=1)),
                        "refreshed rates from refinitiv: 168 pairs",
                        "info",
                        "fx-rates",
                        NS,
                        f"fx-rates-{h_old}-{suffix('fxold' + str(k % 2))}",
                        "fx-rates",
                    )
                )
        else:
            s.docs.append(
                doc(
                    ms(t),
                    "fx lookup failed: GET http://fx-rates.treasury/v1/rates?base=EUR: "
                    "dial tcp 10.0.41.7:80: connect: connection refused",
                    "error",
                    "payment-quotes",
                    "payments",
                    q,
                    "payment-quotes",
                    http__response__status_code=503,
                    error__type="ConnectError",
                )
            )
        if k % 4 == 0:
            s.docs.append(
                doc(
                    ms(t + timedelta(seconds=3)),
                    f"posted journal batch size={rng.randint(20, 80)}",
                    "info",
                    "ledger-writer",
                    NS,
                    ledger[k % 2],
                    "ledger-writer",
                )
            )
        if k % 23 == 0:
            s.docs.append(
                doc(
                    ms(t + timedelta(seconds=2)),
                    "slow ledger commit 1.8s (lock wait)",
                    "warn",
                    "ledger-writer",
                    NS,
                    ledger[(k + 1) % 2],
                    "ledger-writer",
                )
            )
        t += timedelta(seconds=20)
        k += 1
    return s
