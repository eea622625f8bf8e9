"""How soon a dead or hung peer is noticed: HTTP/2 keepalive pings on every connection.

A peer that dies closes its socket and is noticed at once. A peer that hangs (SIGSTOP, a
frozen host) keeps its socket open, so every connection pings the other side every
PING_INTERVAL_MS and gives up after PING_TIMEOUT_MS without an answer: a hung peer is found
within about 4 s, in both directions. gRPC answers pings on its own threads, so a worker that is
merely busy (a long `n`, a `p` that sleeps) still answers. Plain option lists, no gRPC import.

A broken stream is not a lost rank: a paused worker whose server went silent (hung, killed and
restarted on the same connection file) keeps trying to reach it again for the reconnect window
(meshdbg.wire.environment.RECONNECT_S, default 60 s) and re-registers the same stop; the server keeps a silent
rank listed "not answering" for as long. Only a server that says goodbye lets workers go at once.
"""

from __future__ import annotations

PING_INTERVAL_MS = 2_000
PING_TIMEOUT_MS = 2_000


def client_keepalive(timeout_ms: int = PING_TIMEOUT_MS) -> list[tuple[str, int]]:
    """A client's options: ping the server even while no call is active, without limit, and
    give up after `timeout_ms` without an answer."""
    return [
        ("grpc.keepalive_time_ms", PING_INTERVAL_MS),
        ("grpc.keepalive_timeout_ms", timeout_ms),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.http2.ping_timeout_ms", timeout_ms),  # else a minute, whatever keepalive says
    ]


# Workers and control clients. A `meshdbg host` agent waits longer for its run's answer
# (meshdbg.host.remote): the reconnect window, as a paused worker does.
CLIENT_KEEPALIVE = client_keepalive()

# The server: ping every peer, and accept the peers' pings at that rate (by default a gRPC
# server refuses pings more often than every 5 minutes and closes the connection).
SERVER_KEEPALIVE = [
    ("grpc.keepalive_time_ms", PING_INTERVAL_MS),
    ("grpc.keepalive_timeout_ms", PING_TIMEOUT_MS),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.http2.ping_timeout_ms", PING_TIMEOUT_MS),
    ("grpc.http2.min_ping_interval_without_data_ms", PING_INTERVAL_MS // 2),
    ("grpc.http2.max_ping_strikes", 0),
]

