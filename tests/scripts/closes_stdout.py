"""Stops, closes its fd 1 and stops again (nothing to capture fd 1 into: that session goes on
without the program's output), then opens the file argv[1] as fd 1 and stops a third time:
the capture kept since the first stop serves it. Prints on stderr how many capture readers
the process has at the end (meshdbg.worker.fd_capture's thread names)."""
import os
import sys
import threading

breakpoint()
os.close(1)
breakpoint()
assert os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600) == 1
breakpoint()
readers = sum(t.name in ("meshdbg-output", "meshdbg-output-idle") for t in threading.enumerate())
print(f"{readers} capture reader(s)", file=sys.stderr, flush=True)
