"""Run a script under debugpy, the reference IDE debugger: `python under_debugpy.py PORT_FILE SCRIPT [ARGS]`.

Writes the port debugpy listens on (127.0.0.1, a free one) to PORT_FILE (not stdout: debugpy's
adapter process inherits that and would hold it open), waits for the IDE, then runs SCRIPT as
__main__ with `breakpoint()` stopping in debugpy, as VS Code's own launcher does.
"""

import os
import runpy
import sys

import debugpy

if __name__ == "__main__":
    _, port = debugpy.listen(("127.0.0.1", 0))
    with open(sys.argv[1] + ".part", "w") as file:
        file.write(str(port))
    os.replace(sys.argv[1] + ".part", sys.argv[1])
    debugpy.wait_for_client()
    sys.breakpointhook = debugpy.breakpoint
    sys.argv = sys.argv[2:]
    runpy.run_path(sys.argv[0], run_name="__main__")
