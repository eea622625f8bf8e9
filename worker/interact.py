"""pdb's `interact` in a remote session: a Python console whose lines come from the session's
prompt (`>>> `, `... `) and whose output goes where pdb's does; Ctrl-D or `exit()` comes back
to pdb, with local pdb's banners. Names a line binds or rebinds are written back to pdb's
copy of the frame's locals, as `!x = ...` writes them, so `x = 7` sticks (local pdb's console
works on a copy and forgets them).
"""

from __future__ import annotations

import code
import sys
from types import CodeType
from typing import TYPE_CHECKING, MutableMapping

if TYPE_CHECKING:
    from meshdbg.worker.pdb_wrapper import PdbWrapper


def interact(debugger: "PdbWrapper", frame_locals: MutableMapping[str, object]) -> None:
    """Run the console over the current frame's globals and `frame_locals` (pdb's copy of its
    locals) until Ctrl-D or `exit()`."""
    banner, exitmsg = _INTERACT_BANNERS
    debugger.interacting = True  # the prompt says who reads its lines (meshdbg.worker.queries.prompt_kind)
    try:
        _RemoteConsole(debugger, frame_locals).interact(banner=banner, exitmsg=exitmsg)
    finally:
        debugger.interacting = False


# What local pdb prints around `interact` (3.13 reworded it and made exit() leave it only).
_INTERACT_BANNERS = (("*pdb interact start*", "*exit from pdb interact command*") if sys.version_info >= (3, 13)
                     else ("*interactive*", "now exiting InteractiveConsole..."))


class _RemoteConsole(code.InteractiveConsole):
    """`interact` over the session: lines come from the remote prompt (`>>> `, `... `), output
    goes to pdb's; Ctrl-D (an empty read) or `exit()` comes back to pdb."""

    def __init__(self, debugger: "PdbWrapper", frame_locals: MutableMapping[str, object]) -> None:
        assert debugger.curframe is not None  # pdb runs `interact` stopped in a frame
        super().__init__({**debugger.curframe.f_globals, **frame_locals})
        self._frame_locals = frame_locals
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

    def runcode(self, code: CodeType) -> None:
        saved = sys.stdin, sys.stdout, sys.stderr, sys.displayhook
        sys.stdin, sys.stdout, sys.stderr = self._debugger.stdin, self._debugger.stdout, self._debugger.stdout
        sys.displayhook = sys.__displayhook__
        before = dict(self.locals)
        try:
            exec(code, self.locals)
        except SystemExit:
            self._exited = True
        except BaseException:
            self.showtraceback()
        finally:
            sys.stdin, sys.stdout, sys.stderr, sys.displayhook = saved
            self._frame_locals.update({name: value for name, value in self.locals.items()
                                       if name not in before or before[name] is not value})
