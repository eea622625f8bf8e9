"""Actors on the worker side: the `endpoint` decorator and the host that runs calls.

`ProcMesh.spawn(name, cls, *args)` builds one `cls` instance per worker; its `@endpoint`
methods are what the driver may call. Calls run one at a time on the worker's main thread (so
`breakpoint()` and interrupts behave as in a script). Arguments and results are pickled, and
only inside the `payload` bytes of actor messages on the authenticated agent stream between a
launcher and the workers it started; the debugger's own messages never carry pickle.
"""

from __future__ import annotations

import importlib
import pickle
import traceback
from types import TracebackType
from typing import Any, Callable, TypeVar

from meshdbg.wire.errors import UsageError
from meshdbg.wire.proto import mesh_pb2 as mesh_pb
from meshdbg.worker.context import context_of
from meshdbg.worker.hook import post_mortem

F = TypeVar("F", bound=Callable[..., Any])
ENDPOINT_MARK = "__meshdbg_endpoint__"


def endpoint(method: F) -> F:
    """Mark an actor method as callable from the driver (`actors.method.call(...)`)."""
    setattr(method, ENDPOINT_MARK, True)
    return method


def is_endpoint(cls: type, name: str) -> bool:
    return not name.startswith("_") and getattr(getattr(cls, name, None), ENDPOINT_MARK, False)


def class_path(cls: type) -> str:
    """`package.module:QualName`, how a worker imports `cls`; UsageError when it cannot."""
    if cls.__module__ == "__main__" or "<locals>" in cls.__qualname__:
        raise UsageError(f"actor class {cls.__qualname__} must be defined at the top level of an importable "
                         f"module (not in __main__ or a function) so that every worker can import it")
    return f"{cls.__module__}:{cls.__qualname__}"


def load_class(path: str) -> type:
    module, _, qualname = path.partition(":")
    value: Any = importlib.import_module(module)
    for part in qualname.split("."):
        value = getattr(value, part)
    return value


def dumps(value: object) -> bytes:
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def loads(payload: bytes) -> Any:
    return pickle.loads(payload)


def without_leading_frames(tb: TracebackType | None, *filenames: str) -> TracebackType | None:
    """`tb` without its leading frames from these files (meshdbg's own, before the user's code)."""
    while tb is not None and tb.tb_frame.f_code.co_filename in filenames:
        tb = tb.tb_next
    return tb


def remote_error(exc: BaseException) -> mesh_pb.RemoteError:
    kind = type(exc)
    text = "".join(traceback.format_exception(kind, exc, without_leading_frames(exc.__traceback__, __file__)))
    return mesh_pb.RemoteError(type=f"{kind.__module__}.{kind.__qualname__}", message=str(exc), traceback=text)


class ActorHost:
    """The actors living in this worker, by name; runs spawns and calls in the calling thread."""

    def __init__(self, post_mortem: bool = False) -> None:
        self.actors: dict[str, object] = {}
        self.post_mortem = post_mortem

    def handle(self, command: mesh_pb.AgentCommand) -> mesh_pb.ActorResult:
        """Run one spawn or call; the result or the error, never an exception."""
        kind = command.WhichOneof("kind")
        request = getattr(command, kind)
        try:
            value = None
            if kind == "spawn":
                self._spawn(request)
            else:
                value = self._call(request)
            return mesh_pb.ActorResult(call_id=request.call_id, payload=dumps(value))
        except Exception as exc:  # reported to the caller with its traceback, like any remote error
            if self.post_mortem and exc.__traceback__ is not None:  # a caught exception has one
                post_mortem(without_leading_frames(exc.__traceback__, __file__) or exc.__traceback__,
                            context_of(exc))
            return mesh_pb.ActorResult(call_id=request.call_id, error=remote_error(exc))

    def _spawn(self, request: mesh_pb.ActorSpawn) -> None:
        if request.actor in self.actors:
            raise UsageError(f"an actor named {request.actor!r} already lives in this worker")
        args, kwargs = loads(request.payload)
        self.actors[request.actor] = load_class(request.class_path)(*args, **kwargs)

    def _call(self, request: mesh_pb.ActorCall) -> object:
        actor = self.actors.get(request.actor)
        if actor is None:
            raise UsageError(f"no actor named {request.actor!r} in this worker")
        if not is_endpoint(type(actor), request.method):
            raise UsageError(f"{type(actor).__qualname__}.{request.method} is not an @endpoint")
        args, kwargs = loads(request.payload)
        return getattr(actor, request.method)(*args, **kwargs)
