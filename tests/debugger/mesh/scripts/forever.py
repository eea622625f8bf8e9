"""Every rank waits forever, except rank FAIL (argv[1], -1 for none) which exits 5 at once."""
import os
import sys
import threading

if len(sys.argv) > 1 and int(os.environ["RANK"]) == int(sys.argv[1]):
    sys.exit(5)
print("waiting", flush=True)
threading.Event().wait()
