"""Write every holdout48 scenario: PYTHONPATH=. python -m tests.data.holdout48._generator"""

from __future__ import annotations

from pathlib import Path

from . import (
    s1_tickstore_compaction_oom,
    s2_ledger_key_nonroot,
    s3_dispatch_tzdata,
    s4_mesh_sidecar_cpu,
    s5_token_cert_not_reloaded,
    s6_webhook_cert_expired,
    s7_quota_no_limits,
    s8_keepalive_502,
)

MODULES = [
    s1_tickstore_compaction_oom,
    s2_ledger_key_nonroot,
    s3_dispatch_tzdata,
    s4_mesh_sidecar_cpu,
    s5_token_cert_not_reloaded,
    s6_webhook_cert_expired,
    s7_quota_no_limits,
    s8_keepalive_502,
]


def main() -> None:
    root = Path(__file__).resolve().parent.parent
    for m in MODULES:
        sc = m.build()
        sc.write(root)
        print("wrote", sc.id)


if __name__ == "__main__":
    main()
