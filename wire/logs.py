"""The log file of a long-lived process, `meshdbg serve`, `run` or `host`: what a person needs
after a crash.

Each such process writes `<runtime folder>/logs/<verb>-<UTC time>-<pid>.log` (the runtime folder
is MESHDBG_RUNTIME_DIR, else ~/.meshdbg/servers; 0700), created new with O_EXCL and mode 0600,
as the connection files are: it names peers and paths. It records who connected (peer address,
rank, pid), what was refused and why (a wrong token, another protocol version), stops, ends,
exits, lost workers and hosts, and how the process ended (a crash with its traceback), at the
level of `--log-level`, else MESHDBG_LOG, else `info`; `debug` adds every control client and
call. Other libraries' warnings (asyncio's, gRPC's) land in the same file. The newest LOGS_KEPT
of each verb are kept.

Modules log through `logger(__name__)`. Only those three verbs open a file
(`logged`): a program using meshdbg as a library (`meshdbg.proc_mesh`) keeps its own logging,
and meshdbg's records go nowhere there unless it configures some. The one-line messages a
person reads on stderr are not log records and do not change.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import logging
import os
import sys
import time
from pathlib import Path
from typing import Awaitable, Callable

from meshdbg.wire.connection import private_dir, runtime_dir
from meshdbg.wire.environment import LOG, LOG_LEVELS
from meshdbg.wire.errors import MeshdbgError, UntrustedFile

logging.getLogger("meshdbg").addHandler(logging.NullHandler())  # no stderr fallback for our records


def logger(name: str) -> logging.Logger:
    """The logger of module `name`, under `meshdbg`, whose records go nowhere until `start_log`
    (importing this module makes sure of that)."""
    return logging.getLogger(name)


log = logger(__name__)

LOGS_FOLDER = "logs"
LOGS_KEPT = 100  # of each verb, the newest: older ones are removed when a new one starts
FORMAT = "%(asctime)s.%(msecs)03dZ %(levelname)s %(name)s: %(message)s"
Main = Callable[[argparse.Namespace], Awaitable[int]]


def add_log_argument(parser: argparse.ArgumentParser) -> None:
    """`--log-level`: how much this process writes to its log file."""
    parser.add_argument("--log-level", choices=LOG_LEVELS, type=str.lower,
                        help=f"how much to write to this process's log file in the runtime folder's {LOGS_FOLDER}/ "
                             f"(default: {LOG.name}, else info)")


def start_log(what: str, level: str | None = None) -> Path | None:
    """Send meshdbg's records (at `level`, else MESHDBG_LOG's) and other libraries' warnings
    to a new private file named after `what` and this process; its path. UsageError for a
    malformed MESHDBG_LOG, before anything is created. A process whose log cannot be created
    (a read-only home, a runtime folder that is not ours) says so in one line and runs without."""
    level = level or LOG.get()
    try:
        folder = private_dir(runtime_dir() / LOGS_FOLDER)
        path = folder / f"{what}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{os.getpid()}.log"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_APPEND, 0o600)
    except (OSError, UntrustedFile) as exc:
        print(f"meshdbg: running without a log file ({exc})", file=sys.stderr, flush=True)
        return None
    _forget_old(folder, what)
    stream = os.fdopen(fd, "a", encoding="utf-8", errors="backslashreplace", buffering=1)  # a line at a time
    handler = logging.StreamHandler(stream)
    formatter = logging.Formatter(FORMAT, "%Y-%m-%dT%H:%M:%S")
    formatter.converter = time.gmtime
    handler.setFormatter(formatter)
    logging.getLogger().addHandler(handler)
    logging.getLogger("meshdbg").setLevel(level.upper())
    log.info("meshdbg %s started: pid %d, log level %s, argv %s", what, os.getpid(), level, sys.argv[1:])
    return path


def said(log: logging.Logger, line: str, level: int = logging.INFO) -> None:
    """Print `line`, a message for the person at the terminal, on stderr as it is, and keep a
    copy in the log (`log`: the saying module's logger)."""
    print(line, file=sys.stderr, flush=True)
    log.log(level, "said: %s", line)


def _forget_old(folder: Path, what: str) -> None:
    """Remove all but the newest LOGS_KEPT logs of `what` (their names sort by the time they started)."""
    for old in sorted(folder.glob(f"{what}-*.log"))[:-LOGS_KEPT]:
        try:
            old.unlink()
        except OSError:
            pass  # another process removed it first


def logged(what: str) -> Callable[[Main], Main]:
    """Decorates the `main(args)` of a long-lived verb: its log starts first (`args.log_level`),
    and how it ended, with its exit status, error or traceback, is the last record."""
    def decorate(main: Main) -> Main:
        @functools.wraps(main)
        async def logged_main(args: argparse.Namespace) -> int:
            start_log(what, args.log_level)
            try:
                status = await main(args)
            except MeshdbgError as exc:
                log.error("meshdbg %s ends: %s (exit status %d)", what, exc, exc.exit_code)
                raise
            except (KeyboardInterrupt, asyncio.CancelledError):
                log.info("meshdbg %s interrupted", what)
                raise
            except BaseException:
                log.critical("meshdbg %s crashed", what, exc_info=True)
                raise
            log.info("meshdbg %s ends: exit status %d", what, status)
            return status

        return logged_main

    return decorate
