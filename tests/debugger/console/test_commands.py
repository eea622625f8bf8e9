"""Unit tests of the console's pure parts: command parsing, validation, completion, board, colour."""

from __future__ import annotations

import dataclasses
import inspect

import pytest
from prompt_toolkit.document import Document
from prompt_toolkit.validation import ValidationError

from meshdbg.debugger.console.board import Board
from meshdbg.debugger.console.commands import Commands, LineError, aliases, check_line, command_names, help_overview
from meshdbg.debugger.console.completion import ConsoleCompleter
from meshdbg.debugger.console.highlight import pdb_fragments
from meshdbg.debugger.console.validation import CommandValidator
from meshdbg.debugger.format import resumed_text
from meshdbg.debugger.views import SessionView, WorkerView
from meshdbg.debugger.selection import AttachTarget, thread_session
from meshdbg.wire.errors import UsageError
from meshdbg.wire.vocabulary import EndReason, State, StopReason, WatchKind


def session(rank: int, state: State = State.STOPPED, session_id: int | None = None, name: str = "worker") -> SessionView:
    return SessionView(id=rank if session_id is None else session_id, name=name, rank=rank,
                       coords={"hosts": rank // 2, "gpus": rank % 2}, hostname="h", pid=100 + rank, thread="MainThread",
                       thread_id=1, state=state, reason=StopReason.BREAKPOINT, filename="/x/train.py", function="step",
                       lineno=12, context={})


def test_commands_and_aliases_come_from_the_do_methods() -> None:
    assert command_names() == ["attach", "break", "cast", "compare", "continue", "detach", "help", "interrupt", "list",
                               "pipeline", "quit", "stacks", "stop"]
    assert aliases() == {"l": "list", "a": "attach", "c": "continue", "h": "help", "q": "quit"}


@pytest.mark.parametrize("line, parsed", [
    ("", ("", "")),
    ("  l", ("list", "")),
    ("a 3", ("attach", "3")),
    ("cast ranks(hosts=1, gpus=0:4) p loss", ("cast", "ranks(hosts=1, gpus=0:4) p loss")),
    ("c 0,3-5", ("continue", "0,3-5")),
    ("help cast", ("help", "cast")),
    ("stacks ranks(pp=1) --threads all", ("stacks", "ranks(pp=1) --threads all")),
    ("compare all loss.item()", ("compare", "all loss.item()")),
    ("l --all ranks(hosts=1)", ("list", "--all ranks(hosts=1)")),
])
def test_check_line_resolves_aliases(line: str, parsed: tuple[str, str]) -> None:
    assert check_line(line) == parsed


@pytest.mark.parametrize("line, position, problem", [
    ("lsit", 0, "did you mean 'list'?"),
    ("  contnue", 2, "did you mean 'continue'?"),
    ("n", 0, "'n' is a pdb command"),
    ("frobnicate", 0, "help lists the commands"),
    ("cast ranks(1,,2) p x", 13, "expected an integer"),
    ("cast ranks(hosts=1 p x", 22, "unclosed ranks("),
    ("cast all", 8, "needs a pdb command"),
    ("cast", 4, "needs a selection and a pdb command"),
    ("continue 3-1", 11, "expected a rank number >= 3"),
    ("attach x", 7, "attach needs a rank"),
    ("attach ²", 7, "attach needs a rank"),  # a digit to str.isdigit, not to int()
    ("attach 99999999999", 7, "attach needs a rank"),  # beyond an int32 rank
    ("attach #x", 7, "attach needs a rank"),
    ("stacks --threads some", 16, "--threads takes main or all"),
    ("stacks ranks(1,,2)", 15, "expected an integer"),
    ("compare all", 11, "needs an expression"),
    ("compare", 7, "needs a selection and an expression"),
    ("list --all zz", 11, "expected `all`"),
    ("list --al", 5, "expected `all`"),
])
def test_check_line_points_at_the_problem(line: str, position: int, problem: str) -> None:
    with pytest.raises(LineError) as caught:
        check_line(line)
    assert problem in caught.value.problem
    assert caught.value.position == position


def test_cast_splits_selection_from_command() -> None:
    assert Commands.parse_cast("ranks(hosts=1, gpus=(0,3)) pp x[1:2]") == ("ranks(hosts=1, gpus=(0,3))", "pp x[1:2]")
    assert Commands.parse_cast("0,3-5 !import time") == ("0,3-5", "!import time")


@pytest.mark.parametrize("arg, inner", [("all 'p loss'", "p loss"), ('0,2 "!x = 1"', "!x = 1"),
                                        ("ranks(1) 'pp {\"a\": 1}'", 'pp {"a": 1}'), ("all 'n'", "n")])
def test_cast_refuses_a_pdb_command_quoted_whole_as_a_shell_needs_it(arg: str, inner: str) -> None:
    """Typed as for `meshdbg cast all 'p loss'`, pdb printed the string back on every rank."""
    with pytest.raises(LineError) as caught:
        Commands.parse_cast(arg)
    selection = arg.split(" ", 1)[0]
    assert caught.value.problem.endswith(f"(no shell takes them off here): cast {selection} {inner}")
    assert caught.value.position == len(selection) + 1  # the opening quote


@pytest.mark.parametrize("command", ["p 'loss'", "'loss'", "'p' + 'x'", "'p 1", "'' ", '"first" if x else "p"'])
def test_cast_passes_a_quoted_string_that_is_not_a_whole_pdb_command(command: str) -> None:
    assert Commands.parse_cast(f"all {command}") == ("all", command.strip())


def test_compare_refuses_an_expression_quoted_whole_and_passes_a_string_in_one() -> None:
    with pytest.raises(LineError) as caught:
        Commands.parse_compare("0-3 'loss.item()'")
    assert caught.value.problem.endswith("(no shell takes them off here): compare 0-3 loss.item()")
    assert caught.value.position == 4
    for expression in ("name == 'a'", "'a b'", "'x' in names"):
        assert Commands.parse_compare(f"all {expression}") == ("all", expression)


def test_break_refuses_an_action_quoted_as_a_shell_needs_it() -> None:
    """Typed as for `meshdbg break all '*B5'`: the quotes were read as part of the action."""
    with pytest.raises(LineError) as caught:
        Commands.parse_break("all 3B1 '*B5'")
    assert caught.value.problem.startswith("an action takes no quotes here") and caught.value.position == 8
    assert Commands.parse_break("ranks(pp=1) *B5 W") == ("ranks(pp=1)", ["*B5", "W"], "")


@pytest.mark.parametrize("flag", ["--clear", "--list"])
def test_break_says_where_a_flag_typed_after_the_selection_goes(flag: str) -> None:
    """`break all 2B1 --clear` was refused as an action ("cannot parse action '--clear'")."""
    with pytest.raises(LineError) as caught:
        Commands.parse_break(f"ranks(pp=1) 2B1 {flag}")
    assert caught.value.problem == f"{flag} comes first and takes a selection, no action: break {flag} ranks(pp=1)"
    assert caught.value.position == len("ranks(pp=1) 2B1 ")


@pytest.mark.parametrize("arg, target", [
    ("2", AttachTarget(rank=2)),
    ("trainer 2", AttachTarget(rank=2, name="trainer")),
    ("#12", AttachTarget(session_id=12)),
])
def test_attach_targets(arg: str, target: AttachTarget) -> None:
    assert Commands.parse_attach(arg) == target


def test_help_overview_gives_every_command_its_usage_line() -> None:
    overview = help_overview()
    for name in command_names():
        usage = inspect.cleandoc(getattr(Commands, "do_" + name).__doc__).splitlines()[0]
        assert f"  {usage}\n" in overview


def test_validator_keeps_the_cursor_at_the_end_and_names_the_column_only_at_the_top_prompt() -> None:
    attached = False
    validator = CommandValidator(lambda: not attached)
    with pytest.raises(ValidationError) as caught:
        validator.validate(Document("cast ranks(1,,2) p x"))
    assert caught.value.cursor_position == len("cast ranks(1,,2) p x")  # typing goes on at the end
    assert caught.value.message.startswith("expected an integer") and caught.value.message.endswith("(at column 14)")
    attached = True
    validator.validate(Document("n"))  # a pdb line: not the console's to judge


def completions(board: Board, text: str) -> list[str]:
    return [c.text for c in ConsoleCompleter(board, lambda: None).console_completions(text)]


def test_console_completion_offers_commands_ranks_names_and_dims() -> None:
    board = Board()
    board.reset([session(0), session(1), session(3, name="trainer", session_id=9)])
    assert completions(board, "co") == ["compare", "continue"] and completions(board, "con") == ["continue"]
    assert completions(board, "attach ") == ["0", "1", "3", "trainer", "worker"]
    assert completions(board, "attach trainer ") == ["3"]
    assert completions(board, "cast r") == ["ranks("]
    assert completions(board, "cast ranks(ho") == ["hosts="]
    assert completions(board, "cast all wh") == ["whatis", "where"]
    assert completions(board, "c a") == ["all"]
    assert completions(board, "help ca") == ["cast"]
    assert completions(board, "list --") == ["--all"] and completions(board, "list --all r") == ["ranks("]
    assert completions(board, "stacks all --th") == ["--threads"] and "3" in completions(board, "c 0-")


def test_board_announces_new_stops_and_exits_and_counts() -> None:
    board = Board()
    board.reset([session(0)])
    assert board.apply(WatchKind.UPDATED, session(0), None) is None  # known before the console started
    assert board.apply(WatchKind.OPENED, session(1, state=State.RUNNING), None) is None
    assert board.apply(WatchKind.UPDATED, session(1), None) == "rank 1 (hosts=0,gpus=1) stopped at train.py:12 step (breakpoint)"
    assert board.apply(WatchKind.CLOSED, session(0, state=State.EXITED), EndReason.CONTINUED) is None
    assert board.apply(WatchKind.CLOSED, session(1, state=State.EXITED), EndReason.WORKER_GONE) == \
        "rank 1 (hosts=0,gpus=1) exited: the worker went away"
    assert board.counts() == {"stopped": 0, "running": 1, "exited": 1}
    assert board.idle


def test_a_stop_says_which_of_its_rank_s_sessions_stopped_when_the_rank_has_several() -> None:
    """The children of `mp.spawn` or a pool stop as their parent's rank, in threads of one name."""
    board = Board()
    board.reset([session(1)])
    child = dataclasses.replace(session(1, session_id=7), pid=4242)
    assert board.apply(WatchKind.UPDATED, child, None) == \
        "rank 1 (hosts=0,gpus=1), thread MainThread pid 4242, stopped at train.py:12 step (breakpoint)"
    thread = dataclasses.replace(session(1, session_id=8), thread="loader", thread_id=2)
    assert board.apply(WatchKind.UPDATED, thread, None) == \
        "rank 1 (hosts=0,gpus=1), thread loader, stopped at train.py:12 step (breakpoint)"


def test_highlight_keeps_the_text_and_colours_only_code() -> None:
    listing = "> /x/train.py(2)step()\n-> y = 1\n  1  \tdef step():\n  2  ->\t    y = 1\n"
    plain = pdb_fragments(listing, color=False)
    coloured = pdb_fragments(listing, color=True)
    assert "".join(text for _, text in plain) == listing.rstrip("\n")
    assert "".join(text for _, text in coloured) == listing.rstrip("\n")
    assert ("class:pygments.keyword", "def") in coloured
    assert ("class:current", "  2  ->\t") in coloured


def test_every_parse_and_complete_method_belongs_to_a_command() -> None:
    """A command's parts sit beside its do_ method: no parser or completer for a missing command."""
    parts = [name.split("_", 1) for name in vars(Commands) if name.startswith(("parse_", "complete_"))]
    assert parts and all(command in command_names() for _, command in parts)


def worker(rank: int, state: State = State.RUNNING, exit_code: int | None = None, launcher: str = "meshdbg"
           ) -> WorkerView:
    return WorkerView(name="worker", rank=rank, coords={"hosts": rank // 2, "gpus": rank % 2}, hostname="h",
                      pid=100 + rank, state=state, reason="", filename="", function="", lineno=0, exit_code=exit_code,
                      signal=None, launcher=launcher)


def test_toolbar_counts_every_rank_of_the_mesh_with_exit_statuses() -> None:
    board = Board()
    board.reset([session(0)])
    board.know_workers([worker(0, State.STOPPED), worker(1), worker(2), worker(3)])
    assert board.summary() == "1 stopped · 3 running · 0 exited"  # ranks that never stopped count too
    assert board.apply(WatchKind.EXITED, worker(3, State.EXITED, exit_code=1), None) == \
        "rank 3 (hosts=1,gpus=1) exited (status 1)"
    assert board.apply(WatchKind.CLOSED, session(0, state=State.EXITED), EndReason.CONTINUED) is None
    assert board.summary() == "0 stopped · 3 running · 1 exited (r3: 1)"
    board.apply(WatchKind.EXITED, worker(0, State.EXITED, exit_code=0), None)  # continued, then exited
    assert board.counts() == {"stopped": 0, "running": 2, "exited": 2}
    board.reset()  # a console opened again later sees what the server keeps
    board.know_workers([worker(0, State.EXITED, 0), worker(1), worker(2), worker(3, State.EXITED, 1)])
    assert board.summary() == "0 stopped · 2 running · 2 exited (r3: 1)"


def test_a_worker_that_joins_later_is_counted_running_at_once() -> None:
    board = Board()
    board.reset([session(0)])
    board.know_workers([worker(0, State.STOPPED)])
    assert board.apply(WatchKind.JOINED, worker(5), None) is None  # nothing to announce, one more to count
    assert board.summary() == "1 stopped · 1 running · 0 exited"
    killed = worker(5, State.EXITED)  # its stream broke: no exit status was ever sent
    assert board.apply(WatchKind.EXITED, killed, None) == \
        "rank 5 (hosts=2,gpus=1) exited (no status: its stream broke, as when a process is killed)"
    assert board.summary() == "1 stopped · 0 running · 1 exited (r5: ?)"


def test_a_rank_with_no_agent_stream_is_counted_exited_not_failed() -> None:
    """Its exit (its parked session streams gone) carries no status: not a failure to name."""
    board = Board()
    board.reset()
    board.know_workers([worker(0, launcher=""), worker(1)])
    assert board.apply(WatchKind.EXITED, worker(0, State.EXITED, launcher=""), None) == \
        "rank 0 (hosts=0,gpus=0) exited (no status: it was not started through meshdbg's bootstrap)"
    assert board.summary() == "0 stopped · 1 running · 1 exited"


def test_a_rank_runs_while_a_process_of_it_lives_though_its_pool_children_exited() -> None:
    board = Board()
    board.reset()
    child = dataclasses.replace(worker(0, State.EXITED, launcher=""), pid=900)  # listed after its parent (pid 100)
    board.know_workers([worker(0), child])
    assert board.summary() == "0 stopped · 1 running · 0 exited"


def test_a_killed_rank_is_announced_once_whichever_event_comes_first() -> None:
    board = Board()
    board.reset([session(1)])
    board.know_workers([worker(1, State.STOPPED)])
    killed = worker(1, State.EXITED)
    assert board.apply(WatchKind.EXITED, killed, None) is not None
    assert board.apply(WatchKind.CLOSED, session(1, state=State.EXITED), EndReason.WORKER_GONE) is None
    board.reset([session(2)])
    assert board.apply(WatchKind.CLOSED, session(2, state=State.EXITED), EndReason.WORKER_GONE) == \
        "rank 2 (hosts=1,gpus=0) exited: the worker went away"
    assert board.apply(WatchKind.EXITED, worker(2, State.EXITED), None) is None


def test_stacks_and_compare_split_their_arguments() -> None:
    assert Commands.parse_stacks("") == ("", False)
    assert Commands.parse_stacks("ranks(1) --threads all") == ("ranks(1)", True)
    assert Commands.parse_stacks("--threads main") == ("", False)
    assert Commands.parse_compare("ranks(hosts=1) grads.norm()") == ("ranks(hosts=1)", "grads.norm()")
    board = Board()
    assert Commands.complete_stacks(board, "all --threads") == ["main", "all"]
    assert "--threads" in Commands.complete_stacks(board, "")
    assert Commands.complete_compare(board, "all lo") == []


def test_continue_says_rank_or_ranks() -> None:
    assert resumed_text([session(1)]) == "resumed 1 session (rank 1)"
    assert resumed_text([session(0), session(1, session_id=2), session(3, session_id=3)]) == \
        "resumed 3 sessions (ranks 0-1,3)"
    assert resumed_text([]) == "no stopped session could be resumed"


def test_attach_completes_a_thread_name_several_processes_share_by_each_ones_id() -> None:
    """A rank stopped in several processes (a pool's children): `MainThread` would name any of
    them, so each is offered by its thread id (a main thread's is its pid)."""
    board = Board()
    children = [dataclasses.replace(session(0, session_id=n), pid=4240 + n, thread_id=4240 + n) for n in (1, 2)]
    helper = dataclasses.replace(session(0, session_id=3), thread="loader", thread_id=77)
    board.reset([*children, helper, session(1, session_id=10)])
    assert completions(board, "attach 0 ") == ["4241", "4242", "loader"]
    assert completions(board, "attach 1 ") == ["MainThread"]
    with pytest.raises(UsageError) as caught:
        thread_session([*children, helper], AttachTarget(rank=0, thread="MainThread"))
    assert str(caught.value) == ("rank 0 is stopped in a thread MainThread in 2 processes; name one by its thread id: "
                                 "4241 (pid 4241), 4242 (pid 4242)")
    assert thread_session([*children, helper], AttachTarget(rank=0, thread="4242")) is children[1]
    assert thread_session([*children, helper], AttachTarget(rank=0, thread="loader")) is helper
    # The prompt once attached tells them apart the same way (it said `MainThread` for each).
    assert [board.thread_shown(s) for s in [*children, helper]] == ["MainThread pid 4241", "MainThread pid 4242",
                                                                    "loader"]
    assert board.thread_shown(session(1, session_id=10)) == ""  # its rank's only thread: not named
