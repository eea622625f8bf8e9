"""Stops with a helper that prints from another thread a moment later (while pdb waits)."""
import threading
import time


def later(text: str) -> None:
    def run() -> None:
        time.sleep(0.2)
        print(text, flush=True)

    threading.Thread(target=run).start()


value = 41
breakpoint()
value += 1
print("value is", value)
