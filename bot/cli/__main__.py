"""`python -m bot.cli` runs the `triage` command line."""

import sys

from bot.cli import main

sys.exit(main())
