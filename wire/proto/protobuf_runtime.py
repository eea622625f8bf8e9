"""protobuf's runtime, imported without the pure-Python message code that the upb backend never runs.

protobuf's `descriptor_pool`, which every generated `*_pb2` module imports, imports
`google.protobuf.internal.python_message` whatever the backend, and that imports
`text_format`, the decoder, the encoder and the well-known types: 6–7 ms of the ~100 ms a
CLI verb takes to start (issue 22: CLI start within 1.3× `import grpc`), and of every worker's
first stop, for code only the pure-Python backend uses. With upb (the backend of protobuf's
wheels), `load` registers that one module to be executed on first use
(importlib.util.LazyLoader), which never comes; with any other backend it does nothing, and
the module is imported at once as before.
"""

from __future__ import annotations

import importlib.util
import sys

PURE_PYTHON_MESSAGES = "google.protobuf.internal.python_message"


def load() -> None:
    """Import protobuf's backend choice, deferring the pure-Python message module under upb."""
    import google.protobuf.internal as internal
    from google.protobuf.internal import api_implementation

    if api_implementation.Type() != "upb" or PURE_PYTHON_MESSAGES in sys.modules:
        return
    spec = importlib.util.find_spec(PURE_PYTHON_MESSAGES)
    if spec is None or spec.loader is None:
        return
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[PURE_PYTHON_MESSAGES] = module
    setattr(internal, "python_message", module)  # `from ...internal import python_message` finds it here, unexecuted
    spec.loader.exec_module(module)
