"""Generated protobuf and gRPC code for protos/*.proto: the *_pb2* modules, never edited by hand.

Regenerate from the project root with:

    python protos/generate.py

This file and protobuf_runtime.py are not generated: importing the package first readies
protobuf's runtime for the generated modules (protobuf_runtime.py says how).
"""

from meshdbg.wire.proto import protobuf_runtime

protobuf_runtime.load()

