"""meshdbg's interactive console: a prompt_toolkit client of the control API.

`run_console` is imported on first use so that importing this package (or anything beside
it) never pulls prompt_toolkit into a process that does not open a console.
"""

from __future__ import annotations

from typing import Any

__all__ = ["run_console"]


def __getattr__(name: str) -> Any:
    if name == "run_console":
        from meshdbg.debugger.console.app import run_console

        return run_console
    raise AttributeError(f"module 'meshdbg.debugger.console' has no attribute {name!r}")
