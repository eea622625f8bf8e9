"""pdb's documentation, `!` and `global` (`! n=42`, `global list_options; list_options = ['-l']`)
on a function's frame, whose assignments must reach the running program."""
import sys

list_options = []


def configure(n):
    options = ["-v"]
    breakpoint()
    options.extend(list_options)
    print(n, options, file=sys.stderr)
    return n, options


configure(1)
