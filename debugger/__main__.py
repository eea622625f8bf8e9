"""`python -m debugger` is the `meshdbg` command."""

import sys

from debugger.cli import main

sys.exit(main())
