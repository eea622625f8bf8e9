"""How every peer finds and authenticates to the server: address, token, connection files.

Each server (`meshdbg serve`, `meshdbg run`) publishes one connection file of its own, like a
Jupyter kernel file, and removes only its own when it stops:
- `MESHDBG_CONNECTION_FILE` set: exactly that file (a job script pins its server so);
- else `server-<pid>-<nonce>.json` in the private runtime directory (`MESHDBG_RUNTIME_DIR`,
  else ~/.meshdbg/servers), created mode 0700 and refused when another user owns it.
Every file is written to a fresh O_EXCL temp file of mode 0600 and moved into place, so no
reader sees half a file and nobody can pre-create the name to read the token.

Clients resolve the server (DESIGN §2) from `--addr`, else `MESHDBG_ADDR`, else
`MESHDBG_CONNECTION_FILE`, else the only live server's file; with several live, a
`ServerChoice` error (exit 2) names them. The token comes from `MESHDBG_TOKEN`, else the file.
An address may also be a multi-host run's join URL, `meshdbg://ADDR:PORT#sha256=HEX`: the
address and the certificate fingerprint to pin in one string. Kept light: a worker imports it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import string
import time
from dataclasses import dataclass
from pathlib import Path

from meshdbg.wire.coords import PORT_LIMIT, bounded_float, bounded_int
from meshdbg.wire.environment import ADDR, CONNECTION_FILE, RUNTIME_DIR, TLS_FINGERPRINT, TOKEN
from meshdbg.wire.errors import ConnectionFailed, UntrustedFile, UsageError

PROTOCOL_VERSION = 6  # 2: states, reasons and watch kinds are enums; 3: output in chunks; 4: worker joins watched;
# 5: reconnecting stops, goodbyes and deadlines, shared attach, the program's output, structured queries;
# 6: a program's own pdb.post_mortem() has a stop reason of its own (an older peer would misread it)
AUTH_HEADER = "authorization"
SERVER_FILE_GLOB = "server-*.json"
PID_LIMIT = 2**22  # Linux's pid_max ceiling
URL_SCHEME = "meshdbg://"
SHA256_HEX_DIGITS = 64


@dataclass(frozen=True)
class ConnectionInfo:
    """Where the server listens and the token that opens it (all of it goes in the file)."""

    addr: str
    token: str
    fingerprint: str = ""  # the server's TLS certificate (meshdbg.wire.tls), empty without TLS
    join: str = ""  # a multi-host run's join URL (join_url), which `meshdbg host --join` takes

    def metadata(self) -> tuple[tuple[str, str], ...]:
        """gRPC call metadata that authenticates one RPC."""
        return ((AUTH_HEADER, f"Bearer {self.token}"),)


@dataclass(frozen=True)
class ServerFile:
    """One server's connection file: how to reach it, and who it is (for `meshdbg servers`)."""

    path: Path
    info: ConnectionInfo
    pid: int
    what: str  # e.g. "serve" or "run train.py"
    started: float  # time.time() when it started

    @property
    def live(self) -> bool:
        return pid_alive(self.pid)


def join_url(addr: str, fingerprint: str) -> str:
    """`meshdbg://ADDR:PORT#sha256=HEX`: where a host agent dials, and the certificate it pins."""
    algorithm, _, digest = fingerprint.partition(":")
    return f"{URL_SCHEME}{addr}" + (f"#{algorithm}={digest}" if fingerprint else "")


def parse_url(text: str) -> tuple[str, str]:
    """An address (`host:port`, or a join URL) → (host:port, fingerprint or ""); UsageError
    for a malformed URL or a port out of range, saying what is wrong: a URL cut short where a
    terminal wrapped it is told apart from a server that presents another certificate, and
    `host:99999` from a server that is not there (gRPC takes that port modulo 65,536)."""
    if not text.startswith(URL_SCHEME):
        _, colon, port = text.rpartition(":")
        problem = _port_problem(port) if colon and port.isdigit() else ""
        if problem:
            raise UsageError(f"bad address {text!r}: {problem}")
        return text, ""
    addr, _, pin = text[len(URL_SCHEME):].partition("#")
    algorithm, equals, digest = pin.partition("=")
    _, colon, port = addr.rpartition(":")
    if not colon or not port.isdigit() or (pin and (algorithm != "sha256" or not equals)):
        problem = f"expected {URL_SCHEME}ADDR:PORT#sha256=HEX"
    else:
        problem = _port_problem(port)
    if not problem and pin and (len(digest) != SHA256_HEX_DIGITS or any(c not in string.hexdigits for c in digest)):
        problem = f"the sha256 fingerprint has {SHA256_HEX_DIGITS} hex digits (was the URL cut short?)"
    if problem:
        raise UsageError(f"bad meshdbg URL {text!r}: {problem}")
    return addr, f"{algorithm}:{digest.lower()}" if pin else ""


def _port_problem(port: str) -> str:
    """What is wrong with the digits `port` as a port ("" if nothing)."""
    return "" if bounded_int(port, PORT_LIMIT) not in (None, 0) else f"port {port} is not between 1 and {PORT_LIMIT - 1}"


# ---- the file's contents: one writer, one reader ----------------------------------------

def _record(info: ConnectionInfo, what: str) -> dict[str, object]:
    """What a server writes: every ConnectionInfo field, plus who wrote it."""
    return {**dataclasses.asdict(info), "pid": os.getpid(), "what": what, "started": time.time()}


def read_server_file(path: Path) -> ServerFile:
    """Parse one connection file; ConnectionFailed saying what is wrong with it, UntrustedFile
    when another user owns it or could have written it."""
    try:
        with open(path) as handle:
            refuse_untrusted(path, os.fstat(handle.fileno()), "the connection file")
            data = json.loads(handle.read())
        fields = {f.name: data[f.name] for f in dataclasses.fields(ConnectionInfo) if f.name in data}
        info = ConnectionInfo(**fields)
        if not isinstance(info.addr, str) or not isinstance(info.token, str):
            raise TypeError("addr and token must be strings")
        pid, started = bounded_int(str(data.get("pid", 0)), PID_LIMIT), bounded_float(str(data.get("started", 0)), 1e12)
        if pid is None or started is None:
            raise ValueError("pid and started must be plain numbers")
        return ServerFile(path, info, pid, str(data.get("what", "")), started)
    except FileNotFoundError:
        raise
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        raise ConnectionFailed(f"cannot read the connection file {path}: {exc}") from exc


# ---- where files live -------------------------------------------------------------------

def runtime_dir() -> Path:
    """The private directory of per-server connection files (and, in `logs/`, of their log files)."""
    return RUNTIME_DIR.get() or Path.home() / ".meshdbg" / "servers"


def refuse_untrusted(path: Path, info: os.stat_result, what: str) -> None:
    """Raise UntrustedFile unless `path` (whose stat is `info`) belongs to this user and nobody
    else can write it: ssh's rule for its keys. Servers check the folder they write their file
    into, and workers and clients every connection file and runtime folder they read, so a
    file another local user planted (in /tmp, a team folder) never receives our token nor
    makes our workers join that user's server."""
    mine = os.getuid()
    if info.st_uid != mine:
        raise UntrustedFile(f"refusing {what} {path}: it belongs to uid {info.st_uid}, not to this user (uid {mine})")
    if stat.S_IMODE(info.st_mode) & 0o022:
        raise UntrustedFile(f"refusing {what} {path}: group or others can write it (mode "
                            f"{stat.S_IMODE(info.st_mode):03o}); `chmod go-w` it")


def private_dir(path: Path) -> Path:
    """`path` as a directory only this user can enter: created 0700 (parents too), tightened
    when looser, refused (UntrustedFile) when it is a symlink or another user's."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise UntrustedFile(f"refusing to keep secrets in {path}: it is not a directory")
    if info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(path, 0o700)
        info = os.lstat(path)
    refuse_untrusted(path, info, "to keep secrets in")
    return path


def private_file(path: Path) -> Path:
    """`path` as a file readable by its owner only: created empty with O_EXCL and mode 0600
    when missing, tightened when looser (for files that hold typed lines, like the history)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
    except FileExistsError:
        if stat.S_IMODE(os.stat(path).st_mode) & 0o077:
            os.chmod(path, 0o600)
    return path


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid runs (a zombie, exited but not yet reaped, does not)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return process_state(pid) not in ("Z", "X")  # None (no /proc here): the signal said it exists


_PF_EXITING = 0x4  # the kernel's task flag of a process that is exiting (/proc/PID/stat's 9th field)


def process_state(pid: int) -> str | None:
    """The state letter of a local process in /proc/PID/stat (`R`, `S`, `T` stopped, `Z`
    zombie; `X` for one still exiting, whose sockets may close before it is a zombie), None
    if it is gone or this host has no /proc."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rpartition(")")[2].split()
        return "X" if fields[0] not in "ZX" and int(fields[6]) & _PF_EXITING else fields[0]
    except (OSError, IndexError, ValueError):
        return None


# ---- servers: publish and withdraw --------------------------------------------------------

def _write_private(path: Path, text: str) -> Path:
    """A fresh temp file beside `path` (O_EXCL, 0600, unguessable name) holding `text`."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(6).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    return tmp


def write_connection_file(info: ConnectionInfo, what: str = "serve") -> Path:
    """Publish `info` for local clients; returns the file, which only this server removes.

    With MESHDBG_CONNECTION_FILE set, that file: replaced when stale, refused (UsageError)
    while another live server owns it. Otherwise a new file in the runtime directory."""
    text = json.dumps(_record(info, what))
    path = CONNECTION_FILE.get()
    if path is not None:
        if not path.parent.exists():
            private_dir(path.parent)
        try:
            owner = read_server_file(path)
        except (FileNotFoundError, ConnectionFailed):
            owner = None
        if owner is not None and owner.pid != os.getpid() and owner.live:
            raise UsageError(f"{CONNECTION_FILE.name}={path} belongs to the live server {owner.info.addr} "
                             f"(pid {owner.pid}); stop it or name another file")
        tmp = _write_private(path, text)
        try:
            os.replace(tmp, path)
        except OSError as exc:
            os.unlink(tmp)
            raise UsageError(f"cannot write the connection file {path}: {exc.strerror}") from exc
        return path
    folder = private_dir(runtime_dir())
    path = folder / f"server-{os.getpid()}-{os.urandom(3).hex()}.json"
    tmp = _write_private(path, text)
    try:
        os.link(tmp, path)  # exclusive: never replaces a file someone else put there
    finally:
        os.unlink(tmp)
    return path


def remove_connection_file(path: Path, info: ConnectionInfo) -> None:
    """Remove `path` if it is still this server's (same pid and address)."""
    try:
        owner = read_server_file(path)
        if owner.pid == os.getpid() and owner.info.addr == info.addr:
            path.unlink()
    except (OSError, ConnectionFailed, UntrustedFile):
        pass


# ---- clients: find the server -------------------------------------------------------------

def live_servers() -> list[ServerFile]:
    """The live servers of the runtime directory, oldest first (unreadable and stale files
    skipped); UntrustedFile when the directory is another user's or others can write it."""
    folder = runtime_dir()
    try:
        refuse_untrusted(folder, os.stat(folder), "the runtime folder")
    except FileNotFoundError:
        return []
    found = []
    for path in sorted(folder.glob(SERVER_FILE_GLOB)):
        try:
            server = read_server_file(path)
        except (OSError, ConnectionFailed):
            continue
        if server.live:
            found.append(server)
    return sorted(found, key=lambda s: s.started)


class ServerChoice(UsageError):
    """Several live servers and nothing saying which: the user picks one (exit 2 in scripts)."""

    def __init__(self, servers: list[ServerFile]) -> None:
        self.servers = servers
        listed = "; ".join(f"{s.info.addr} ({s.what}, pid {s.pid})" for s in servers)
        super().__init__(f"{len(servers)} meshdbg servers are running: {listed}. Choose one with --addr ADDR "
                         f"(or {ADDR.name}, or {CONNECTION_FILE.name}=FILE; meshdbg servers lists them)")


def new_token() -> str:
    """The token a server uses: `MESHDBG_TOKEN` when set, else a fresh random one."""
    import secrets  # servers only: clients, which start often, never pay for it

    return TOKEN.get() or secrets.token_urlsafe(32)


def resolve_connection(addr: str | None = None) -> ConnectionInfo:
    """Find the server and its token, or raise ConnectionFailed (none) / ServerChoice (several)."""
    addr, pinned = parse_url(addr or ADDR.get())
    token = TOKEN.get()
    if addr and token:
        return ConnectionInfo(addr, token, pinned or TLS_FINGERPRINT.get())
    named = CONNECTION_FILE.get()
    if named is not None:
        try:
            server = read_server_file(named)
        except FileNotFoundError:
            if addr:
                raise ConnectionFailed(f"no token for {addr}: set MESHDBG_TOKEN (no connection file at {named})"
                                       ) from None
            raise ConnectionFailed(f"no meshdbg server found: {CONNECTION_FILE.name}={named} does not exist "
                                   f"(start one with `meshdbg serve`)") from None
        if addr and addr != server.info.addr:
            raise ConnectionFailed(f"no token for {addr}: set MESHDBG_TOKEN (the connection file {named} "
                                   f"is for {server.info.addr})")
        return dataclasses.replace(server.info, token=token or server.info.token)
    servers = live_servers()
    if addr:
        servers = [s for s in servers if s.info.addr == addr]
        if not servers:
            raise ConnectionFailed(f"no token for {addr}: set MESHDBG_TOKEN (no live server's connection file "
                                   f"in {runtime_dir()} is for it)")
    if not servers:
        raise ConnectionFailed(f"no meshdbg server found: start one with `meshdbg serve` or `meshdbg run`, or set "
                               f"MESHDBG_ADDR and MESHDBG_TOKEN (no live server's file in {runtime_dir()})")
    if len(servers) > 1:
        raise ServerChoice(servers)
    return dataclasses.replace(servers[0].info, token=token or servers[0].info.token)
