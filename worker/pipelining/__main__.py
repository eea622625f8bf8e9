"""``python -m worker.pipelining``: the ``meshdbg schedule`` command on its own."""

import sys

from worker.pipelining.cli import main

sys.exit(main())
