"""meshdbg's worker side: the remote breakpoint hook and the pdb that streams to the server.

`PYTHONBREAKPOINT=meshdbg.worker.remote_breakpointhook` or `meshdbg.worker.install()` makes `breakpoint()`
open a session. Never imports the console, the CLI or prompt_toolkit, and importing this
package imports nothing heavy: the hook loads on first use, so `meshdbg.worker.pipelining` stays
free of gRPC.
"""

from __future__ import annotations

from typing import Any

from meshdbg.worker.headroom import Headroom

__all__ = ["install", "remote_breakpointhook"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        try:
            with Headroom():  # (a first `breakpoint()` deep in a recursion imports it there)
                from meshdbg.worker import hook
        except ImportError as exc:  # (said on stderr: meshdbg.worker.dependencies)
            if name == "remote_breakpointhook":  # breakpoint() then warns and runs on, as with a hook it cannot import
                raise AttributeError(str(exc)) from exc
            raise
        return getattr(hook, name)
    raise AttributeError(f"module 'worker' has no attribute {name!r}")
