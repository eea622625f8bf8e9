"""With `close`: the program closes its stdout and stderr (as a daemon does, or `>&- 2>&-`) before
it stops; without, it keeps them. A session must go the same either way."""

import os
import sys

if sys.argv[1:] == ["close"]:
    os.close(1)
    os.close(2)
    sys.stdout = sys.stderr = None
z = 5
breakpoint()
z = 6
