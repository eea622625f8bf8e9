"""The environment contract: every `MESHDBG_*` variable meshdbg reads, declared once.

Each `Variable` has a name, a type (what a value must be), a default and a meaning, and one
accessor, `get()`, that reads and validates it: a value that is not of its type is a
UsageError naming the variable in one line (`MESHDBG_RANK='two': expected a whole number
below 2147483648`), which every command prints as `meshdbg: ...` and a worker says before it
carries on. An empty value is the same as none. Code that sets a variable for a child
process (the launcher, a host agent) uses the same declarations' `name`.

The README's environment table is this module's (`tests/wire/test_environment.py` checks it):

    python -m meshdbg.wire.environment --markdown

In the wire layer, so that workers, host agents and the central side share it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Generic, Mapping, TypeVar

from meshdbg.wire.coords import RANK_LIMIT, SECONDS_LIMIT, bounded_float, bounded_int, parse_coords, shown
from meshdbg.wire.errors import UsageError

T = TypeVar("T")


@dataclass(frozen=True)
class Variable(Generic[T]):
    """One environment variable: what it is, and the one way to read it."""

    name: str
    kind: str  # what a value must be: the table's type, and the error's "expected ..."
    default: T  # what get() returns when the variable is unset or empty
    shown_default: str  # the default as the README says it
    meaning: str  # who reads it, and for what
    parse: Callable[[str], T]  # a set value → its typed value; ValueError when it is not `kind`

    def get(self, env: Mapping[str, str] | None = None) -> T:
        """The value in `env` (default: this process's environment), typed; the default when
        unset or empty; UsageError naming the variable when it is not of its type."""
        text = (os.environ if env is None else env).get(self.name, "")
        if not text:
            return self.default
        try:
            return self.parse(text)
        except ValueError:
            raise UsageError(f"{self.name}={shown(text)}: expected {self.kind}") from None


def _text(text: str) -> str:
    return text


def _path(text: str) -> Path | None:
    return Path(text)


def _whole(text: str) -> int | None:
    number = bounded_int(text.strip())
    if number is None:
        raise ValueError(text)
    return number


def _seconds(text: str) -> float:
    seconds = bounded_float(text.strip(), SECONDS_LIMIT)
    if seconds is None:
        raise ValueError(text)
    return seconds


def _switch(text: str) -> bool:
    switch = {"0": False, "1": True}.get(text.strip())
    if switch is None:
        raise ValueError(text)
    return switch


def _coords(text: str) -> dict[str, int]:
    try:
        return parse_coords(text)
    except UsageError as exc:
        raise ValueError(text) from exc


LOG_LEVELS = ("debug", "info", "warning", "error")


def _level(text: str) -> str:
    level = text.strip().lower()
    if level not in LOG_LEVELS:
        raise ValueError(text)
    return level


SWITCH = "0 or 1"
SECONDS = f"a number of seconds below {SECONDS_LIMIT:.0f}"

# ---- where the server is, and the secret that opens it -----------------------------------

ADDR = Variable("MESHDBG_ADDR", "HOST:PORT or a join URL", "", "none",
                "the server clients and workers reach (`--addr` wins; a run's join URL "
                "`meshdbg://ADDR:PORT#sha256=FP` pins its certificate too); without it, the connection file", _text)
TOKEN = Variable("MESHDBG_TOKEN", "text (a secret)", "", "none",
                 "the server's token: `serve` and `run` use it when set (else a random one), clients and workers "
                 "present it (else the connection file's), `meshdbg host` needs it (or `--token-file`)", _text)
CONNECTION_FILE = Variable("MESHDBG_CONNECTION_FILE", "path", None, "none",
                           "the one connection file a server writes and clients and workers read (a job script "
                           "pins its server so); without it, each server's own file in the runtime folder", _path)
RUNTIME_DIR = Variable("MESHDBG_RUNTIME_DIR", "path", None, "`~/.meshdbg/servers`",
                       "the private folder (0700) of the servers' connection files and of the log files of "
                       "`serve`, `run` and `host` (`logs/`)", _path)
TLS_FINGERPRINT = Variable("MESHDBG_TLS_FINGERPRINT", "`sha256:HEX`", "", "none",
                           "the certificate a client or worker pins for a TLS server it reaches by MESHDBG_ADDR "
                           "(`serve --tls` prints it; the launcher gives it to its ranks)", _text)

# ---- who a worker is ---------------------------------------------------------------------

RANK = Variable("MESHDBG_RANK", f"a whole number below {RANK_LIMIT}", None, "none",
                "a worker's rank; set, it wins over torchrun's, Open MPI's, MPICH's and SLURM's variables", _whole)
COORDS: Variable[dict[str, int]] = Variable(
    "MESHDBG_COORDS", "dim=index pairs like `hosts=1,gpus=3`", {}, "none",
    "a worker's mesh coordinates (with MESHDBG_RANK)", _coords)
NAME = Variable("MESHDBG_NAME", "text", "worker", "`worker`",
                "a worker's name in listings (`run --name` sets it for every rank)", _text)

# ---- how workers and servers behave ------------------------------------------------------

RECONNECT_S = Variable("MESHDBG_RECONNECT_S", SECONDS, 60.0, "60",
                       "how long a paused worker keeps trying to reach a silent server before it continues, how "
                       "long a client waits for a stopped or starved server, and how long a server keeps a silent "
                       "rank listed `not answering`", _seconds)
PAUSE_TIMEOUT = Variable("MESHDBG_PAUSE_TIMEOUT", SECONDS, 3600.0, "3600",
                         "on the server: the torch.distributed timeout every worker's process groups get while any "
                         "rank is paused in pdb (0: leave the timeouts alone)", _seconds)
POST_MORTEM = Variable("MESHDBG_POST_MORTEM", SWITCH, True, "1",
                       "0: a mesh worker's uncaught exception ends it without a post-mortem session "
                       "(`run --no-post-mortem` sets it)", _switch)
READRC = Variable("MESHDBG_READRC", SWITCH, True, "1",
                  "0: a remote pdb reads no `.pdbrc` (local pdb reads `~/.pdbrc` and `./.pdbrc`)", _switch)
SHOWN_MARKS = Variable("MESHDBG_SHOWN_MARKS", SWITCH, False, "0",
                       "set to 1 by `run` for its ranks: output a console already shows is marked, so the "
                       "launcher does not print it twice", _switch)

# ---- the people's side -------------------------------------------------------------------

HISTORY = Variable("MESHDBG_HISTORY", "path", None, "`~/.meshdbg/history`",
                   "the console's history file (0600; the pdb prompt's is the same name with `-pdb`)", _path)
LOG = Variable("MESHDBG_LOG", " / ".join(LOG_LEVELS), "info", "`info`",
               "how much `serve`, `run` and `host` write to their log files (`--log-level` wins)", _level)

# ---- Python's own ---------------------------------------------------------------------------

PYTHONBREAKPOINT = "PYTHONBREAKPOINT"  # what breakpoint() calls: `meshdbg run` sets it for its ranks
BREAKPOINTS_OFF = "0"  # PYTHONBREAKPOINT=0: breakpoint() does nothing


def breakpoints_off(env: Mapping[str, str]) -> bool:
    """Whether `env` turns breakpoint() off, Python's way (PYTHONBREAKPOINT=0): a run started so
    passes it to its ranks, whose breakpoint() then does nothing, as without meshdbg."""
    return env.get(PYTHONBREAKPOINT) == BREAKPOINTS_OFF


VARIABLES: tuple[Variable[Any], ...] = (ADDR, TOKEN, CONNECTION_FILE, RUNTIME_DIR, TLS_FINGERPRINT, RANK, COORDS,
                                           NAME, RECONNECT_S, PAUSE_TIMEOUT, POST_MORTEM, READRC, SHOWN_MARKS,
                                           HISTORY, LOG)


def markdown() -> str:
    """The README's table of every variable."""
    rows = ["| variable | type | default | meaning |", "|---|---|---|---|"]
    rows += [f"| `{v.name}` | {v.kind} | {v.shown_default} | {v.meaning} |" for v in VARIABLES]
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    if sys.argv[1:] != ["--markdown"]:
        sys.exit("usage: python -m meshdbg.wire.environment --markdown")
    sys.stdout.write(markdown())
