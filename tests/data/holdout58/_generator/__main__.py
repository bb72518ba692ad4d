"""Entry point: write the holdout58 scenarios."""

from . import main

main()
