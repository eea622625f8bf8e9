"""pdb parity: `!x = ...` on a function local sticks (pdb's edited copy of the locals)."""
import sys


def compute():
    x = 41
    breakpoint()
    y = x + 1
    print(y, file=sys.stderr)
    return y


compute()
