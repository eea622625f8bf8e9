"""A program for the IDE tests: one stop with locals of every kind, two calls deep.

`crash` as its argument: it also raises, and a post-mortem session opens on the error.
"""

import sys


class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y


def inner(scale):
    values = [1, 2, 3]
    table = {"a": 1, "b": [4, 5]}
    point = Point(3, 4)
    name = "mesh"
    total = scale * sum(values)
    breakpoint()
    print(f"total={total}", flush=True)
    return total


def outer():
    return inner(2)


def crash():
    ratio = 1 / 0
    return ratio


if __name__ == "__main__":
    outer()
    if sys.argv[1:] == ["crash"]:
        try:
            crash()
        except ZeroDivisionError as error:
            from meshdbg.worker.hook import post_mortem

            post_mortem(error.__traceback__)
