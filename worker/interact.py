"""pdb's `interact` in a remote session: a Python console whose lines come from the session's
prompt (`>>> `, `... `) and whose output goes where pdb's does; Ctrl-D or `exit()` comes back
to pdb, with local pdb's banners.
"""

from __future__ import annotations

import code
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from meshdbg.worker.pdb_wrapper import PdbWrapper


def interact(debugger: "PdbWrapper", namespace: dict) -> None:
    """Run the console in `namespace` until Ctrl-D or `exit()`."""
    banner, exitmsg = _INTERACT_BANNERS
    debugger.interacting = True  # the prompt says who reads its lines (meshdbg.worker.queries.prompt_kind)
    try:
        _RemoteConsole(debugger, namespace).interact(banner=banner, exitmsg=exitmsg)
    finally:
        debugger.interacting = False


# What local pdb prints around `interact` (3.13 reworded it and made exit() leave it only).
_INTERACT_BANNERS = (("*pdb interact start*", "*exit from pdb interact command*") if sys.version_info >= (3, 13)
                     else ("*interactive*", "now exiting InteractiveConsole..."))


class _RemoteConsole(code.InteractiveConsole):
    """`interact` over the session: lines come from the remote prompt (`>>> `, `... `), output
    goes to pdb's; Ctrl-D (an empty read) or `exit()` comes back to pdb."""

    def __init__(self, debugger: "PdbWrapper", namespace: dict) -> None:
        super().__init__(namespace)
        self._debugger = debugger
        self._exited = False

    def raw_input(self, prompt: str = "") -> str:
        if self._exited:
            raise EOFError
        self.write(prompt)
        line = self._debugger.read_remote_line()
        if not line:
            raise EOFError
        return line.rstrip("\n")

    def write(self, data: str) -> None:
        self._debugger.stdout.write(data)

    def runcode(self, code: object) -> None:
        saved = sys.stdin, sys.stdout, sys.stderr, sys.displayhook
        sys.stdin, sys.stdout, sys.stderr = self._debugger.stdin, self._debugger.stdout, self._debugger.stdout
        sys.displayhook = sys.__displayhook__
        try:
            exec(code, self.locals)
        except SystemExit:
            self._exited = True
        except BaseException:
            self.showtraceback()
        finally:
            sys.stdin, sys.stdout, sys.stderr, sys.displayhook = saved
