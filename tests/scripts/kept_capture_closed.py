"""Stops, then closes the write ends of the capture kept for its next stop and reuses their
numbers for /dev/null (as a daemon that closes every descriptor, then opens files, may), and
stops again: that stop must not capture into /dev/null (meshdbg.worker.fd_capture)."""
import os

from meshdbg.worker.fd_capture import program_output

breakpoint()
kept = program_output._kept
assert kept is not None, "no capture kept after the first stop"
for fd in kept._writes.values():
    os.close(fd)
reused = [os.open(os.devnull, os.O_WRONLY) for _ in kept._writes]
breakpoint()
print("after", flush=True)
