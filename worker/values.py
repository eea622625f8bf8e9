"""One expression's value as `meshdbg compare` groups it: text equal on two ranks iff the values are.

For most values that is the repr (long ones shortened, with a checksum of the whole). A tensor's
or an array's repr shows only a few elements, so they are summarised instead: shape, dtype,
min/max/mean of the finite elements, how many NaNs and infs, and a CRC-32 of the raw bytes.
torch and numpy are never imported here: a value can only be a tensor if torch is loaded.
"""

from __future__ import annotations

import functools
import sys
import zlib
from types import CodeType, FrameType
from typing import Any, Mapping

from meshdbg.wire.proto import debugger_pb2 as pb

MAX_TEXT = 2000



@functools.lru_cache(maxsize=256)
def compiled_expression(expression: str) -> CodeType:
    """`expression` compiled once, as `eval` compiles its text in pdb's `_getval`: no future
    statement of ours inherited (pdb's module has none). Compiling `x` again is most of a
    `p x` (issue 22), and of a logpoint's every hit."""
    return compile(expression, "<string>", "eval", dont_inherit=True)

def _number(value: Any) -> str:
    return f"{float(value):.6g}"


def _summary(kind: str, shape: tuple, dtype: str, finite: Any, count: int, nan: int, inf: int, raw: bytes) -> str:
    """`finite`: the finite elements as float64 (`count` of them), for min/max/mean."""
    parts = [kind, f"shape={tuple(shape)}", f"dtype={dtype}"]
    if count:
        parts += [f"min={_number(finite.min())}", f"max={_number(finite.max())}", f"mean={_number(finite.mean())}"]
    parts += [f"nan={nan}", f"inf={inf}", f"crc32={zlib.crc32(raw):08x}"]
    return " ".join(parts)


def _tensor(torch: Any, value: Any) -> str:
    t = value.detach().cpu().contiguous()
    raw = t.reshape(-1).view(torch.uint8).numpy().tobytes()
    magnitude = t.abs() if t.is_complex() else t
    if magnitude.is_floating_point():
        finite = magnitude[torch.isfinite(magnitude)].double()
        nan, inf = int(torch.isnan(magnitude).sum()), int(torch.isinf(magnitude).sum())
    else:
        finite, nan, inf = magnitude.double(), 0, 0
    return _summary("tensor", tuple(t.shape), str(t.dtype).removeprefix("torch."), finite, finite.numel(), nan, inf, raw)


def _array(numpy: Any, value: Any) -> str:
    a = numpy.ascontiguousarray(value)
    if numpy.issubdtype(a.dtype, numpy.number) and not numpy.issubdtype(a.dtype, numpy.complexfloating):
        values = a.astype(numpy.float64)
        finite = values[numpy.isfinite(values)]
        nan, inf = int(numpy.isnan(values).sum()), int(numpy.isinf(values).sum())
    else:
        finite, nan, inf = numpy.empty(0), 0, 0
    return _summary("ndarray", a.shape, str(a.dtype), finite, int(finite.size), nan, inf, a.tobytes())


def describe(value: Any) -> str:
    """The text `compare` groups by (see the module docstring)."""
    torch, numpy = sys.modules.get("torch"), sys.modules.get("numpy")
    try:
        if torch is not None and isinstance(value, torch.Tensor):
            return _tensor(torch, value)
        if numpy is not None and isinstance(value, numpy.ndarray):
            return _array(numpy, value)
    except Exception:  # an exotic dtype or device: fall back to the repr
        pass
    text = repr(value)
    if len(text) > MAX_TEXT:
        text = f"{text[:MAX_TEXT]}... ({len(text)} chars, crc32={zlib.crc32(text.encode()):08x})"
    return text


def evaluate(request: pb.EvaluateRequest, frame: FrameType | None, local_vars: Mapping[str, Any] | None) -> pb.Evaluation:
    """EXPR in `frame` (pdb's current frame and its locals), as `p EXPR` would see it."""
    answer = pb.Evaluation(request_id=request.request_id)
    if frame is None:
        answer.error = "no current frame"
        return answer
    try:
        answer.value = describe(eval(request.expression, frame.f_globals, local_vars if local_vars is not None else frame.f_locals))
    except BaseException as exc:  # the user's expression: any error is its answer, as in `p`
        answer.error = f"{type(exc).__name__}: {exc}"
    return answer
