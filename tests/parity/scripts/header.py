"""`breakpoint(header=...)` prints its header as the stop begins, as pdb.set_trace(header=...)
does, and so does one that a step (`n`) reaches."""


def main():
    x = 3
    breakpoint(header="checking x before the update")
    y = x + 1
    breakpoint(header="and y after it")
    print("after", x, y)


main()
