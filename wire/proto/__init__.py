"""Generated protobuf and gRPC code for protos/*.proto (debugger.proto, mesh.proto). Never edit by hand.

Regenerate from the project root with:

    python protos/generate.py
"""
