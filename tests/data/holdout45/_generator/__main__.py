"""Write every holdout45 scenario from its module, deterministically."""

from . import (
    s1_mtls_client_cert,
    s2_disk_pressure,
    s3_pid_pressure,
    s4_pvc_quota,
    s5_gomaxprocs,
    s6_producer_rename,
    s7_s3_slowdown,
    s8_egress_cidr,
)

MODULES = [
    s1_mtls_client_cert,
    s2_disk_pressure,
    s3_pid_pressure,
    s4_pvc_quota,
    s5_gomaxprocs,
    s6_producer_rename,
    s7_s3_slowdown,
    s8_egress_cidr,
]


def main():
    for m in MODULES:
        sc = m.build()
        sc.write()
        print(f"wrote {sc.id}")


if __name__ == "__main__":
    main()
