"""Rank 1 holds the GIL in C (a catastrophic regex); the others stop in pdb."""
import os
import re


def match_forever():
    re.match(r"(a+)+$", "a" * 64 + "b")  # exponential backtracking in C, GIL held


if os.environ["RANK"] == "1":
    match_forever()
else:
    breakpoint()
