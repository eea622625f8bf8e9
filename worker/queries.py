"""Structured questions a stopped pdb answers at its prompt: one handler per kind of question.

The server asks (a `QueryRequest` on the session stream, beside the lines pdb reads) and the
pdb thread answers between two lines (`answer`), so every answer is data from the paused pdb,
never parsed from its text: completions, the process's stacks, `compare`'s value, the user's
frames as `where` shows them, a frame's scopes, the children of a value, an expression
evaluated in a frame, a variable set, a source file, the exception of a post-mortem stop.
A new question is one handler in `_HANDLERS` and one message in protos/debugger.proto.

Values that can be expanded (a scope, a dict, a sequence, an object) get a `reference`, a
number into a per-stop table (`StopTable`): it is emptied when pdb leaves the stop, so the
worker holds no user object while it runs and a stale reference is an error, not a wrong value.

A frame's locals are read through pdb's own copy (`curframe_locals`) for the frame pdb stands
in, and read once per stop for the others: on 3.11/3.12 reading `frame.f_locals` again would
overwrite what `!x = 1` or a set variable wrote into pdb's copy before the frame resumes.
"""

from __future__ import annotations

import ast
import contextlib
import io
import linecache
import pdb
import reprlib
import sys
import traceback
import weakref
from types import FrameType
from typing import Any, Callable, Mapping, MutableMapping

from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.text import wire_text
from meshdbg.wire.vocabulary import PromptKind
from meshdbg.worker.frames import is_own
from meshdbg.worker.stacks import answer_sample
from meshdbg.worker.values import evaluate

MAX_CHILDREN = 1000  # children listed per `variables` question when none is asked for


def _bounded_repr() -> reprlib.Repr:
    """reprlib, with bounds for an IDE's variables view (3.11's Repr takes no arguments)."""
    bounded = reprlib.Repr()
    bounded.maxlevel = 3
    bounded.maxstring = bounded.maxother = 500
    bounded.maxlong = 200
    for kind in ("maxdict", "maxlist", "maxtuple", "maxset", "maxfrozenset", "maxdeque", "maxarray"):
        setattr(bounded, kind, 100)
    return bounded


_REPR = _bounded_repr()


def value_text(value: Any) -> str:
    """A value as the variables view shows it: its repr, bounded (reprlib)."""
    try:
        return wire_text(_REPR.repr(value))
    except Exception as exc:  # a broken __repr__ is shown, not raised
        return f"<repr failed: {type(exc).__name__}: {exc}>"


class _Scope:
    """A frame's locals or globals in the table: lists the live mapping's items by name and
    writes through to it (pdb's own copy, for the frame pdb stands in)."""

    def __init__(self, mapping: MutableMapping[str, Any]) -> None:
        self.mapping = mapping


class StopTable:
    """The references of one stop: objects by number (1, 2, ...), each with the expression that
    reaches it in its frame ("" when none does), and each frame's locals."""

    def __init__(self, stack: list) -> None:
        self.stack = stack  # pdb's stack of the stop these references belong to
        self._objects: list[tuple[Any, str]] = []
        self._locals: dict[int, Mapping[str, Any]] = {}

    def reference(self, value: Any, expression: str = "") -> int:
        """A number for `value` (0 when it has nothing to expand)."""
        return self.keep(value, expression) if _expandable(value) else 0

    def keep(self, value: Any, expression: str = "") -> int:
        """A number for `value`, whatever it is."""
        self._objects.append((value, expression))
        return len(self._objects)

    def get(self, reference: int) -> Any:
        return self.entry(reference)[0]

    def entry(self, reference: int) -> tuple[Any, str]:
        """The value of `reference` and the expression that reaches it."""
        if not 0 < reference <= len(self._objects):
            raise LookupError(f"no value with reference {reference} at this stop (it was resumed since)")
        return self._objects[reference - 1]

    def locals_of(self, debugger: pdb.Pdb, index: int) -> Mapping[str, Any]:
        """Frame `index`'s locals: pdb's copy for its current frame, else read once per stop."""
        frame = frame_at(debugger, index)
        if index == debugger.curindex and getattr(debugger, "curframe_locals", None) is not None:
            return debugger.curframe_locals
        if index not in self._locals:
            self._locals[index] = frame.f_locals
        return self._locals[index]


_tables: "weakref.WeakKeyDictionary[pdb.Pdb, StopTable]" = weakref.WeakKeyDictionary()


def table_of(debugger: pdb.Pdb) -> StopTable:
    """The table of `debugger`'s current stop (a new stop, a new `stack`: a fresh table)."""
    table = _tables.get(debugger)
    if table is None or table.stack is not debugger.stack:
        table = _tables[debugger] = StopTable(debugger.stack)
    return table


def forget_stop(debugger: pdb.Pdb) -> None:
    """`debugger` leaves its stop: every reference of it lapses and no user object is held."""
    _tables.pop(debugger, None)


def _expandable(value: Any) -> bool:
    if isinstance(value, (str, bytes, bytearray, int, float, complex, bool, type(None))):
        return False
    if isinstance(value, (Mapping, list, tuple, set, frozenset)):
        return len(value) > 0
    return bool(getattr(value, "__dict__", None))


def _children(value: Any, expression: str) -> list[tuple[str, Any, str]]:
    """(name, child, the expression that reaches it) triples: a scope's or dict's items, a
    sequence's elements, an object's attributes; the expressions built on `expression`, the
    parent's, as debugpy builds them (`table['b'][0]`, `point.x`: "" where none reaches it)."""
    if isinstance(value, _Scope):
        return [(name, item, name if name.isidentifier() else "") for name, item in sorted(value.mapping.items())]
    base = expression if not expression or _postfix(expression) else f"({expression})"
    if isinstance(value, Mapping):
        return [(value_text(key), item, f"{base}[{key!r}]" if base and _literal_key(key) else "")
                for key, item in value.items()]
    if isinstance(value, (list, tuple)):
        return [(str(index), item, f"{base}[{index}]" if base else "") for index, item in enumerate(value)]
    if isinstance(value, (set, frozenset)):
        return [(str(index), item, "") for index, item in enumerate(value)]
    return [(name, item, f"{base}.{name}" if base and name.isidentifier() else "")
            for name, item in sorted(vars(value).items())]


def _postfix(expression: str) -> bool:
    """Whether `expression` takes a subscript or an attribute as it is (a name, an attribute,
    a subscript, a call: `a + b` needs brackets first)."""
    try:
        body = ast.parse(expression, mode="eval").body
    except SyntaxError:
        return False
    return isinstance(body, (ast.Name, ast.Attribute, ast.Subscript, ast.Call))


def _literal_key(key: Any) -> bool:
    """Whether `repr(key)` is an expression for `key` (a string, a number, a tuple of them...)."""
    if isinstance(key, tuple):
        return all(_literal_key(item) for item in key)
    return type(key) in (str, bytes, int, float, bool, type(None)) and key == key  # (not nan)


def _variable(table: StopTable, name: str, value: Any, expression: str = "") -> pb.QueryVariable:
    reference = table.reference(value, expression)
    children = len(value) if reference and hasattr(value, "__len__") else 0
    return pb.QueryVariable(name=wire_text(name), value=value_text(value), type=type(value).__name__,
                            reference=reference, children=children, evaluate_name=wire_text(expression))


# ---- where pdb stands ------------------------------------------------------------------------


def standing(debugger: pdb.Pdb) -> pdb.Pdb:
    """The pdb whose position questions are about: one `debug` started inside `debugger`
    (the thread's tracer while its prompt reads through ours), else `debugger` itself."""
    nested = getattr(sys.gettrace(), "__self__", None)
    return nested if isinstance(nested, pdb.Pdb) and nested is not debugger and nested.stack else debugger


def prompt_kind(debugger: pdb.Pdb) -> PromptKind:
    """Who reads the next line of `debugger`'s session."""
    if getattr(debugger, "interacting", False):
        return PromptKind.INTERACT
    if debugger.commands_defining:
        return PromptKind.COMMANDS
    return PromptKind.DEBUG if standing(debugger) is not debugger else PromptKind.PDB


def user_stack(debugger: pdb.Pdb) -> list[tuple[FrameType, int]]:
    """pdb's stack up to the first of meshdbg's own frames (worker/frames.py), as `where` shows it."""
    stack = debugger.stack
    end = next((i for i in range(1, len(stack)) if is_own(stack[i][0])), len(stack))
    return stack[:end]


def frame_at(debugger: pdb.Pdb, index: int) -> FrameType:
    stack = user_stack(debugger)
    if not 0 <= index < len(stack):
        raise LookupError(f"no frame {index} (the stack has {len(stack)})")
    return stack[index][0]


def _namespace(debugger: pdb.Pdb, table: StopTable, index: int) -> tuple[dict, Mapping[str, Any]]:
    return frame_at(debugger, index).f_globals, table.locals_of(debugger, index)


# ---- the handlers: (the pdb that stands, its table, the question) -> answer fields ----------------


def wire_frame(frame: FrameType, lineno: int, canonic: Callable[[str], str] | None = None) -> pb.Frame:
    """A frame as it travels: its file as pdb's `where` shows it when given pdb's `canonic`
    (absolute, so an IDE on the DAP bridge opens it and `list --json` names it whole: a script
    run as `meshdbg run train.py` has the relative `train.py` as its code's filename), else as
    its code names it; its function and its line.

    Without `canonic` no Python code outside meshdbg's runs: the answer to an interrupt is
    built on the session's reader thread right after `break_in`, where a call into bdb or
    posixpath could stop in pdb, on the very thread that reads pdb's lines (under load, one
    interrupt in a dozen hung so)."""
    code = frame.f_code
    filename = canonic(code.co_filename) if canonic is not None else code.co_filename
    return pb.Frame(filename=wire_text(filename), function=wire_text(code.co_name), lineno=lineno)


def _frames(debugger: pdb.Pdb, table: StopTable, request: pb.QueryFrames) -> pb.QueryAnswer:
    frames = [wire_frame(frame, lineno, debugger.canonic) for frame, lineno in user_stack(debugger)]
    return pb.QueryAnswer(frames=pb.QueryFrameList(frames=frames, current=debugger.curindex))


def _scopes(debugger: pdb.Pdb, table: StopTable, request: pb.QueryScopes) -> pb.QueryAnswer:
    global_vars, local_vars = _namespace(debugger, table, request.frame)
    scopes = [("Locals", local_vars)] + ([("Globals", global_vars)] if global_vars is not local_vars else [])
    listed = [pb.QueryVariable(name=name, reference=table.keep(_Scope(mapping)), children=len(mapping))
              for name, mapping in scopes]
    return pb.QueryAnswer(variables=pb.QueryVariableList(variables=listed))


def _variables(debugger: pdb.Pdb, table: StopTable, request: pb.QueryVariables) -> pb.QueryAnswer:
    children = _children(*table.entry(request.reference))
    count = request.count or MAX_CHILDREN
    chosen = children[request.start:request.start + count]
    return pb.QueryAnswer(variables=pb.QueryVariableList(variables=[_variable(table, *child) for child in chosen]))


def _inspect(debugger: pdb.Pdb, table: StopTable, request: pb.QueryInspect) -> pb.QueryAnswer:
    global_vars, local_vars = _namespace(debugger, table, request.frame)
    try:
        code, statement = compile(request.expression, "<meshdbg>", "eval"), False
    except SyntaxError:
        if not request.statements:
            raise
        code, statement = compile(request.expression + "\n", "<meshdbg>", "exec"), True
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        value = eval(code, global_vars, local_vars)
    answer = (pb.QueryVariable(name=wire_text(request.expression)) if statement
              else _variable(table, request.expression, value, request.expression))
    answer.output = wire_text(printed.getvalue())
    return pb.QueryAnswer(value=answer)


def _set_variable(debugger: pdb.Pdb, table: StopTable, request: pb.QuerySetVariable) -> pb.QueryAnswer:
    global_vars, local_vars = _namespace(debugger, table, request.frame)
    value = eval(request.expression, global_vars, local_vars)
    target = table.get(request.reference)
    if isinstance(target, _Scope):
        target.mapping[request.name] = value
    elif isinstance(target, list):
        target[int(request.name)] = value
    elif isinstance(target, MutableMapping):
        key = next((k for k in target if value_text(k) == request.name), None)
        if key is None:
            raise LookupError(f"no key {request.name}")
        target[key] = value
    elif isinstance(target, (tuple, set, frozenset, Mapping)):
        raise TypeError(f"a {type(target).__name__} cannot be changed")
    else:
        setattr(target, request.name, value)
    return pb.QueryAnswer(value=_variable(table, request.name, value))


def _source(debugger: pdb.Pdb, table: StopTable, request: pb.QuerySource) -> pb.QueryAnswer:
    lines = linecache.getlines(request.filename)
    if not lines:
        raise LookupError(f"no source for {request.filename} on this host")
    return pb.QueryAnswer(source=pb.QuerySourceText(text=wire_text("".join(lines))))


def _exception(debugger: pdb.Pdb, table: StopTable, request: pb.QueryException) -> pb.QueryAnswer:
    """The error a post-mortem stop stands on (its session runs inside the handler that caught it)."""
    error = sys.exc_info()[1]
    if error is None:
        raise LookupError("this stop is not on an exception")
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    return pb.QueryAnswer(exception=pb.QueryExceptionInfo(type=type(error).__qualname__, message=wire_text(str(error)),
                                                          traceback=wire_text(text)))


def _complete(debugger: pdb.Pdb, table: StopTable, request: pb.CompleteRequest) -> pb.QueryAnswer:
    matches = debugger.complete_remote(request)  # type: ignore[attr-defined]
    return pb.QueryAnswer(completions=pb.Completions(matches=[wire_text(m) for m in matches]))


def _sample(debugger: pdb.Pdb, table: StopTable, request: pb.SampleRequest) -> pb.QueryAnswer:
    return pb.QueryAnswer(stacks=answer_sample(request))


def _evaluate(debugger: pdb.Pdb, table: StopTable, request: pb.EvaluateRequest) -> pb.QueryAnswer:
    """`compare`'s text of EXPR in the frame pdb stands in (pdb's output and state untouched)."""
    return pb.QueryAnswer(evaluation=evaluate(request, debugger.curframe, getattr(debugger, "curframe_locals", None)))


Handler = Callable[[pdb.Pdb, StopTable, Any], pb.QueryAnswer]
_HANDLERS: dict[str, Handler] = {
    "complete": _complete, "sample": _sample, "evaluate": _evaluate, "frames": _frames, "scopes": _scopes,
    "variables": _variables, "inspect": _inspect, "set_variable": _set_variable, "source": _source,
    "exception": _exception,
}
_OWN_PDB = {"complete"}  # asked of the session's own pdb (its completer), not of a `debug` inside it


def answer(debugger: pdb.Pdb, request: pb.QueryRequest) -> pb.QueryAnswer:
    """The answer to one question; whatever goes wrong (a user's expression raising, a stale
    reference) is the answer's `error`, never an exception on the pdb thread."""
    kind = request.WhichOneof("kind")
    handler = _HANDLERS.get(kind or "")
    if handler is None:
        return pb.QueryAnswer(id=request.id, error=f"this worker cannot answer {kind or 'an empty question'}")
    asked = debugger if kind in _OWN_PDB else standing(debugger)
    try:
        result = handler(asked, table_of(asked), getattr(request, kind))
    except BaseException as exc:  # the user's code runs in evaluation: any error is the answer
        result = pb.QueryAnswer(error=wire_text(f"{type(exc).__name__}: {exc}"))
    result.id = request.id
    return result
