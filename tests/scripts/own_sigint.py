"""Stops at breakpoint() in a program with a SIGINT handler of its own, which says when it runs."""

import signal


def on_sigint(signum: int, frame: object) -> None:
    print("the program's handler ran", flush=True)


signal.signal(signal.SIGINT, on_sigint)
breakpoint()
print("finished", flush=True)
