"""meshdbg's wire: what the worker side and the central side both speak.

The generated protobuf code (`proto`), how a peer finds and authenticates to a server
(`connection`), mesh coordinates (`coords`), the error tree (`errors`, no gRPC) and the one
place gRPC status codes turn into those errors and back (`status`). Nothing here imports the
worker side or the central side, so both can import it.
"""
