"""Stops at breakpoint() with `word` to print, then says it continued. Its sys.stderr's flush,
once armed (the file $ARM exists), waits until a signal ends the wait, having said so in the
file $MARK: meshdbg flushes the program's streams before each pdb write, so the window in
which pdb writes holds open for a test to send its next signal into."""

import io
import os
import sys
import time

rank = int(os.environ["MESHDBG_RANK"])
word = "x"


class ArmedFlush(io.TextIOWrapper):
    def flush(self) -> None:
        if os.path.exists(os.environ["ARM"]):
            os.remove(os.environ["ARM"])
            with open(os.environ["MARK"], "w"):
                pass
            time.sleep(60)  # (a signal's KeyboardInterrupt ends it)
        super().flush()


sys.stderr = ArmedFlush(open(os.dup(2), "wb", buffering=0), write_through=True)
breakpoint()
print(f"rank {rank} continued", flush=True)
