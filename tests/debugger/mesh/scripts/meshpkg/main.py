"""Run with -m: prints its argv and __name__."""
import os
import sys

print("module", __name__, os.environ["MESHDBG_COORDS"], sys.argv[1:])
