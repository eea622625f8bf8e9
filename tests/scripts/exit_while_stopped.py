"""A daemon thread stops in pdb; once told (a line on stdin), the main thread prints 200,000
characters and exits while that session is still open."""
import sys
import threading

threading.Thread(target=breakpoint, daemon=True).start()
sys.stdin.readline()
print("y" * 200_000)
print("main done")
