"""`meshdbg dap`: a Debug Adapter Protocol server over the whole mesh (DESIGN §3c).

Shaped as debugpy's adapter (`src/debugpy/adapter/`): one component per peer, each owning its
connection and its handlers named after the requests (`protocol.Channel`, `clients.IdeClient`),
and one object that ties them (`mesh.Mesh`, the ranks and their groups as the control API shows
them). Like the console, it reaches sessions only through the control API.
"""
