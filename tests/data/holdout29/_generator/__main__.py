"""Write every holdout29 scenario folder next to this package."""

from __future__ import annotations

import importlib

MODULES = ("s1_cronjob_limitrange", "s2_statefulset_storageclass", "s3_coredns_throttled",
           "s4_node_disk_pressure", "s5_hpa_metrics_api", "s6_registry_rate_limit",
           "s7_readiness_dependency", "s8_jvm_cpu_limit")


def main() -> None:
    for name in MODULES:
        module = importlib.import_module(f"tests.data.holdout29._generator.{name}")
        folder = module.build()
        print(f"wrote {folder}")


if __name__ == "__main__":
    main()
