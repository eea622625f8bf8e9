"""The parent stops at breakpoint() (creating its channel), then forks a child that stops too."""

import os

breakpoint()
pid = os.fork()
if pid == 0:
    role = "child"
    breakpoint()
    os._exit(0)
os.waitpid(pid, 0)
print("parent done", flush=True)
