"""The program's output written in pieces (under -u a print writes each piece apart), to stdout
and stderr by turns: a terminal shows each line whole."""
import sys


def main():
    breakpoint()
    for i in range(400):
        print("out", i)
        print("err", i, file=sys.stderr)
    return i


main()
