"""What a script knows of where it runs, then an uncaught error: compared with `python whereami.py`."""

import sys
import traceback

print("file", __file__)
print("argv0", sys.argv[0])
print("path0", sys.path[0])
print("frame", traceback.extract_stack()[-1].filename)
raise SystemExit(f"error at {traceback.extract_stack()[-1].filename}")
