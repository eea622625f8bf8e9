"""meshdbg's central side: the DebugClient service, its sessions, the console and the CLI.

Kept free of imports so that workers can import `meshdbg.wire.proto` and `meshdbg.wire.connection`
without pulling in the console.
"""
