"""Stops, sends its fd 1 to the file argv[1], stops again, prints: the second session captures
fd 1 from the file (where the program sent it since), and gives it back to the file after."""
import os
import sys

breakpoint()
moved = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
os.dup2(moved, 1)
os.close(moved)
breakpoint()
print("after", flush=True)
