"""A job whose current folder was deleted under it (a scratch folder cleaned up) stops: local
pdb needs no current folder, and neither may meshdbg's first stop (it looks for the job's
folders when it imports gRPC)."""

import os
import tempfile

scratch = tempfile.mkdtemp()
os.chdir(scratch)
os.rmdir(scratch)
w = 1
breakpoint()
w = 2
