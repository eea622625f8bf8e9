"""pdb parity: a pdb the program makes itself, with its own choices (`python own_pdb.py
[readrc|norc] [SKIP]`): whether it reads .pdbrc, and the modules it skips (`json*`)."""
import json
import pdb
import sys


def visit(n):
    seen = n * 10
    return seen


choice = sys.argv[1] if len(sys.argv) > 1 else "readrc"
skip = sys.argv[2:] or None
pdb.Pdb(skip=skip, readrc=choice == "readrc").set_trace()
text = json.dumps({"k": visit(1)})
for k in range(3):
    visit(k)
finished = json.loads(text)
