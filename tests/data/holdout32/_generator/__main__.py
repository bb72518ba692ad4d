"""Write every holdout32 scenario folder next to this package."""

from __future__ import annotations

from . import stories


def main() -> None:
    for sid, build in stories().items():
        build()
        print("wrote", sid)


if __name__ == "__main__":
    main()
