"""Generated protobuf and gRPC code for protos/*.proto (debugger.proto, mesh.proto). Never edit by hand.

Regenerate from the project root with:

    python -m grpc_tools.protoc -Idebugger/proto=protos --python_out=. --pyi_out=. \
        --grpc_python_out=. protos/*.proto
"""
