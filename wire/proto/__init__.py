"""Generated protobuf and gRPC code for protos/*.proto: the *_pb2* modules, never edited by hand.

Regenerate from the project root with:

    python protos/generate.py

This file is not generated: importing the package first readies protobuf's runtime
(meshdbg.wire.protobuf_runtime).
"""

from meshdbg.wire import protobuf_runtime

protobuf_runtime.load()

