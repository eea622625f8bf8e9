"""A thread that outlives the script's code pickles an object of a class the script defined,
as a data loader's or a process pool's feeder thread would: compared with `python late_pickle.py`."""

import pickle
import sys
import threading
import time

MAIN_CODE = sys._getframe()


class Kept:
    pass


def main_code_returned() -> bool:
    """The main thread left this module's code and waits for the threads (in threading)."""
    frame = sys._current_frames().get(threading.main_thread().ident)
    if frame is None or frame.f_code.co_filename != threading.__file__:
        return False
    while frame is not None:
        if frame is MAIN_CODE:
            return False
        frame = frame.f_back
    return True


def pickle_when_main_code_returned() -> None:
    deadline = time.monotonic() + 30
    while not main_code_returned():
        if time.monotonic() > deadline:
            print("the main thread never waited for this one", flush=True)
            return
        time.sleep(0.005)
    try:
        print("pickled", type(pickle.loads(pickle.dumps(Kept()))).__name__, flush=True)
    except pickle.PicklingError as exc:
        print("cannot pickle:", exc, flush=True)


threading.Thread(target=pickle_when_main_code_returned).start()
