"""breakpoint() in a non-daemon thread that reaches it after the main thread has left the script."""
import sys
import threading
import time


def main_left_the_script() -> bool:
    frame = sys._current_frames().get(threading.main_thread().ident)
    while frame is not None:
        if frame.f_code.co_filename == __file__:
            return False
        frame = frame.f_back
    return True


def late():
    deadline = time.monotonic() + 10
    while not main_left_the_script() and time.monotonic() < deadline:
        threading.Event().wait(0.01)
    x = 1
    breakpoint()
    print(f"after {x}", file=sys.stderr)


threading.Thread(target=late, name="late").start()
