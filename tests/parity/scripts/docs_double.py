"""pdb's documentation, "The Python Debugger": the first example (its print sent to stderr)."""
import sys


def double(x):
   breakpoint()
   return x * 2
val = 3
print(f"{val} * 2 is {double(val)}", file=sys.stderr)
