"""Stops in code compiled under a filename, and named, with terminal escapes in both."""

import threading

EVIL = "\x1b]0;evil\x07\x1b[2J\u202e"
threading.current_thread().name = f"main{EVIL}"
namespace: dict = {}
exec(compile("def step():\n    breakpoint()\n", f"{EVIL}.py", "exec"), namespace)
step = namespace["step"]
step.__code__ = step.__code__.replace(co_name=f"step{EVIL}")
step()
