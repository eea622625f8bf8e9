"""pdb parity: the program's own output between pdb's lines (stdout, stderr, fd writes, C stdio)."""
import ctypes
import os
import sys


def shout(word):
    print("shout", word)
    return len(word)


def main():
    count = 1
    breakpoint()
    print("plain print", count)
    print("to stderr", file=sys.stderr)
    os.write(1, b"raw write to fd 1\n")
    ctypes.CDLL(None).printf(b"printf from C %d\n", count)
    print("no newline yet", end="")
    size = shout("word")
    print(" then the rest")
    count += size
    return count


main()
