"""Write every holdout44 scenario: PYTHONPATH=. python -m tests.data.holdout44._generator"""

from . import (
    s1_ledger_oom,
    s2_notify_config,
    s3_search_targetport,
    s4_cart_readonly,
    s5_resizer_fds,
    s6_ingest_antiaffinity,
    s7_quote_probe,
    s8_storefront_hpa,
)

MODULES = [
    s1_ledger_oom,
    s2_notify_config,
    s3_search_targetport,
    s4_cart_readonly,
    s5_resizer_fds,
    s6_ingest_antiaffinity,
    s7_quote_probe,
    s8_storefront_hpa,
]


def main() -> None:
    for mod in MODULES:
        mod.build()
        print("wrote", mod.__name__.rsplit(".", 1)[-1])


if __name__ == "__main__":
    main()
