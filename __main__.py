"""`python -m meshdbg` is the `meshdbg` command."""

import sys

from meshdbg.debugger.cli import run

sys.exit(run())
