"""`python -m meshdbg` is the `meshdbg` command."""

import sys

from meshdbg.debugger.cli import main

sys.exit(main())
