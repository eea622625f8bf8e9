"""A `breakpoint()` deep in a recursion, MARGIN frames short of the recursion limit: local pdb
stops there (its import and its prompt need about 55 frames above the stop)."""

import sys

MARGIN = 75


def descend(n):
    if n == 0:
        breakpoint()
        return 0
    return descend(n - 1) + 1


def depth():
    """How many frames the stack holds here."""
    frame, count = sys._getframe(), 0
    while frame is not None:
        frame, count = frame.f_back, count + 1
    return count


print("descended", descend(sys.getrecursionlimit() - depth() - MARGIN), file=sys.stderr)
