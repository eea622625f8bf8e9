"""Whether a server that does not answer is stopped or starved, not gone: to be waited for.

A worker whose server fails to connect (meshdbg.worker.remote) and a client whose stream broke
(meshdbg.debugger.control) ask the same question: a server that was SIGSTOPped or starved by a
loaded machine for seconds is not a dead one, and a paused rank or an attach that gives up on it
loses what the person was doing. Its kernel still accepts connections for it; a dead one's
refuses them.
"""

from __future__ import annotations

import socket

from meshdbg.wire.tls import split_addr

PROBE_TIMEOUT_S = 1.0  # how long a failing server's port may take to accept a connection, and to answer on it
_HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"  # what every HTTP/2 connection opens with
_FRAME_HEADER, _FRAME_TYPE, _SETTINGS = 9, 3, 0x4  # an HTTP/2 server answers it with a SETTINGS frame


def server_waking(addr: str) -> bool:
    """Whether an HTTP/2 server that is stopped or starved listens at `addr`: a TCP connection
    is accepted (its kernel accepts for it), and to HTTP/2's client preface nothing comes back
    within PROBE_TIMEOUT_S, not even the connection's end, or an HTTP/2 SETTINGS frame does (it
    woke meanwhile). To be waited for. Not one: nothing listening (refused), a host that does
    not answer, or a listener that answers otherwise (another service, TLS against plaintext).
    Blocks for up to twice PROBE_TIMEOUT_S."""
    try:
        probe = socket.create_connection(split_addr(addr), timeout=PROBE_TIMEOUT_S)
    except (OSError, ValueError):  # refused, unreachable, silent, or no port in the address
        return False
    with probe:
        try:
            probe.sendall(_HTTP2_PREFACE)
            frame = probe.recv(_FRAME_HEADER)  # b"": the connection's end
            return len(frame) > _FRAME_TYPE and frame[_FRAME_TYPE] == _SETTINGS
        except TimeoutError:
            return True
        except OSError:  # reset: awake, and not taking us
            return False
