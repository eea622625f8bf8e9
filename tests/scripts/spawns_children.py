"""A rank that starts processes of its own, as a DataLoader or a tool would: a `sleep` through
subprocess and a multiprocessing child. It writes its pid and theirs to $PIDS_DIR/<rank>, then
waits: whatever ends the job must end them too."""

import multiprocessing
import os
import subprocess
import time


def nap() -> None:
    time.sleep(600)


if __name__ == "__main__":
    sleeper = subprocess.Popen(["sleep", "600"])
    child = multiprocessing.Process(target=nap, daemon=False)
    child.start()
    path = os.path.join(os.environ["PIDS_DIR"], os.environ["MESHDBG_RANK"])
    with open(path + ".tmp", "w") as out:
        out.write(f"{os.getpid()} {sleeper.pid} {child.pid}")
    os.replace(path + ".tmp", path)
    time.sleep(600)
