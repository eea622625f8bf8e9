"""``python -m meshdbg.worker.pipelining``: the ``meshdbg schedule`` command on its own."""

import sys

from meshdbg.worker.pipelining.cli import main

sys.exit(main())
