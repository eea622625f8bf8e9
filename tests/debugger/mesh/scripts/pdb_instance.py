"""A `pdb.Pdb` the program makes itself, then a subclass of it (as ipdb's debugger is), each
asked to `set_trace()` in every rank; and one with its own lines, which runs where it is."""
import io
import os
import pdb

rank = int(os.environ.get("MESHDBG_RANK", "0"))
x = rank * 10
pdb.Pdb().set_trace()
y = x + 1


class Custom(pdb.Pdb):
    """A library's debugger."""


Custom(skip=["email.*"]).set_trace()
scripted = pdb.Pdb(stdin=io.StringIO("p 'its own lines'\nc\n"), stdout=(said := io.StringIO()))
scripted.use_rawinput = False
scripted.set_trace()
print("rank", rank, "done", y, "scripted", said.getvalue().count("'its own lines'\n"), flush=True)
