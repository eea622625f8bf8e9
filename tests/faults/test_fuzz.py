"""Fuzzing every parser a user's text reaches: each accepts, or refuses with a MeshdbgError.

Selections, attach targets, coordinates, mesh shapes, schedule costs, console lines and the
identity variables a worker reads: none may raise anything else (a ValueError from a
4,301-digit number, an int32 overflow in the wire identity, `²` passing isdigit), and what is
accepted fits the wire. Bounded example counts keep it to seconds in CI.
"""

from __future__ import annotations

import contextlib
import io
import os
import socket
from typing import Iterator

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from meshdbg.debugger.cli import main
from meshdbg.debugger.console.commands import check_line
from meshdbg.debugger.mesh.shape import MeshShape
from meshdbg.debugger.selection import parse_attach_target, parse_selection
from meshdbg.wire.coords import parse_coords
from meshdbg.wire.errors import MeshdbgError
from meshdbg.worker.identity import detect_identity, session_identity
from meshdbg.worker.pipelining.cli import parse_costs
from meshdbg.worker.pipelining.errors import ScheduleError

INT32 = 2**31
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

numbers = st.one_of(st.integers(min_value=0, max_value=2**33).map(str), st.sampled_from(["1" * 4301, "9" * 5000, "²", "٣", "-1", "0x10", "1e9", " 7 ", "nan", "inf"]))
pieces = st.one_of(numbers, st.sampled_from(["ranks", "(", ")", ",", ":", "=", "-", "#", " ", "all", "*", "hosts", "gpus",
                                             "attach", "a", "cast", "continue", "list", "\x1b[31m", "\u202e", "trainer"]),
                   st.text(max_size=4))
phrases = st.lists(pieces, max_size=12).map("".join)
texts = st.one_of(phrases, st.text(max_size=40))


def refuses_cleanly(parse, text: str, errors: tuple[type[Exception], ...] = (MeshdbgError,)) -> object:
    """`parse(text)`, or None when it refused with one of `errors` whose `problem` is one line."""
    try:
        return parse(text)
    except errors as exc:
        assert "\n" not in getattr(exc, "problem", str(exc)), repr(exc)
        return None


@FUZZ
@given(texts, st.integers(min_value=0, max_value=INT32 - 1))
@example("1" * 4301, 0)
@example("1-" + "1" * 4301, 0)
@example("ranks(hosts=" + "9" * 5000 + ")", 0)
def test_selections(text: str, rank: int) -> None:
    selection = refuses_cleanly(parse_selection, text)
    if selection is not None:
        selection.matches(rank, {"hosts": 1, "gpus": rank % 8})


@FUZZ
@given(texts)
@example("1" * 4301)
@example("#" + "1" * 4301)
@example("trainer 2147483648")
def test_attach_targets(text: str) -> None:
    target = refuses_cleanly(parse_attach_target, text)
    if target is not None:
        assert (target.rank is None or 0 <= target.rank < INT32) and (target.session_id is None or target.session_id < 2**64)


@FUZZ
@given(texts)
@example("hosts=²")
@example("a=2147483648")
@example("hosts=" + "1" * 4301)
def test_coords_and_mesh_shapes(text: str) -> None:
    coords = refuses_cleanly(parse_coords, text)
    if coords is not None:
        assert all(0 <= index < INT32 for index in coords.values())
    shape = refuses_cleanly(MeshShape.parse, text)
    if shape is not None:
        assert 1 <= shape.size < INT32


@FUZZ
@given(texts)
@example("F=inf")
@example("B=" + "1" * 4301)
def test_costs(text: str) -> None:
    costs = refuses_cleanly(parse_costs, text, (ScheduleError,))  # the scheduler's own errors
    if costs is not None:
        set_values = [value for name, value in vars(costs).items() if not (name == "overlap" and value is None)]
        assert all(0 <= value < float("inf") for value in set_values)  # overlap None: its halves together


@FUZZ
@given(texts)
@example("cast 1-" + "1" * 4301 + " p 1")
@example("compare 1-" + "1" * 4301 + " x")
@example("continue 1-" + "1" * 4301)
def test_console_lines(text: str) -> None:
    refuses_cleanly(check_line, text)


CLIENT_VERBS = ("list", "cast", "continue", "stacks", "compare", "interrupt", "attach", "watch", "servers")
options = st.sampled_from(["--json", "--all", "--plain", "--clear", "--threads", "main", "all", "--timeout", "--addr",
                           "127.0.0.1:1", "-h", "--", "-", "--port"])


@settings(FUZZ, max_examples=150, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(CLIENT_VERBS), st.lists(st.one_of(options, texts), max_size=4))
@example("cast", ["1-" + "1" * 4301, "p 1"])
@example("compare", ["--timeout", "nan", "all", "x"])
@example("compare", ["--timeout", "1" * 4301, "all", "x"])
@example("attach", ["--plain", "#" + "1" * 4301])
def test_every_client_verbs_argv(verb: str, argv: list[str]) -> None:
    """Each verb, in-process with no server to reach (nor a token for --addr): it may refuse its
    arguments (argparse's exit 2) or say there is no server; it never raises anything else."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), environment_without_a_server():
        try:
            status = main([verb, *argv])
        except SystemExit as exc:  # argparse: usage errors and -h
            status = exc.code
    assert status in (0, 1, 2, 3), (status, err.getvalue())
    assert "Traceback" not in err.getvalue() and (status == 0 or (err.getvalue() + out.getvalue()).strip()), err.getvalue()


@contextlib.contextmanager
def environment_without_a_server() -> Iterator[None]:
    saved = {key: os.environ.pop(key) for key in ("MESHDBG_ADDR", "MESHDBG_TOKEN", "MESHDBG_CONNECTION_FILE")
             if key in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


identity_keys = st.sampled_from(["MESHDBG_RANK", "MESHDBG_COORDS", "MESHDBG_NAME", "RANK", "LOCAL_RANK", "GROUP_RANK",
                                 "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", "PMI_RANK", "MPI_LOCALNRANKS",
                                 "SLURM_PROCID", "SLURM_NODEID", "SLURM_LOCALID", "TORCHELASTIC_RUN_ID"])


@FUZZ
@given(st.dictionaries(identity_keys, texts, max_size=5))
@example({"MESHDBG_RANK": "2147483648"})
@example({"MESHDBG_RANK": "0", "MESHDBG_COORDS": "a=2147483648"})
@example({"MESHDBG_RANK": "0", "MESHDBG_NAME": "\udcff" * 10_000})
def test_identity_variables(env: dict[str, str]) -> None:
    worker = refuses_cleanly(detect_identity, env)
    if worker is not None:
        identity = session_identity(worker, None)  # must fit the wire's int32 fields
        identity.SerializeToString()
        assert identity.hostname == socket.gethostname()
