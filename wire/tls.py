"""TLS for the debugger's connections: the server's certificate, and clients that pin it.

A server started with `--tls` makes a self-signed certificate (meshdbg.debugger.certificates);
with `--tls-cert/--tls-key` it uses the given pair. Either way it publishes the certificate's
SHA-256 fingerprint in its connection file (and launched workers get it as
MESHDBG_TLS_FINGERPRINT). A client with a fingerprint fetches the certificate the server
presents, refuses it unless the fingerprint matches, then trusts exactly that certificate for
the gRPC channel: no CA, no trust on first use. Light (ssl, hashlib, grpc): workers import it.
"""

from __future__ import annotations

import ssl

import grpc

from meshdbg.wire.coords import PORT_LIMIT, bounded_int
from meshdbg.wire.errors import ConnectionFailed

FETCH_TIMEOUT_S = 5.0


def fingerprint(cert_pem: bytes | str) -> str:
    """`sha256:<hex>` of a PEM certificate's DER form."""
    import hashlib  # here, not at the top: 1.3 ms of every CLI start without TLS (issue 22)

    text = cert_pem.decode() if isinstance(cert_pem, bytes) else cert_pem
    return "sha256:" + hashlib.sha256(ssl.PEM_cert_to_DER_cert(text)).hexdigest()


def split_addr(addr: str) -> tuple[str, int]:
    """`host:port` or `[v6]:port` → (host, port)."""
    host, _, port = addr.rpartition(":")
    number = bounded_int(port, PORT_LIMIT)
    if number is None:
        raise ValueError(f"no port in {addr!r}")
    return host.strip("[]"), number


def pinned_certificate(addr: str, expected: str) -> bytes:
    """The PEM certificate the server at `addr` presents, if its fingerprint is `expected`;
    ConnectionFailed otherwise (unreachable, not TLS, or another certificate)."""
    try:
        pem = ssl.get_server_certificate(split_addr(addr), timeout=FETCH_TIMEOUT_S)
    except (OSError, ValueError) as exc:
        raise ConnectionFailed(f"no TLS meshdbg server reachable at {addr} ({exc})") from exc
    presented = fingerprint(pem)
    if presented != expected:
        raise ConnectionFailed(f"the server at {addr} presented a certificate with fingerprint {presented}, not the "
                               f"pinned {expected}: refusing to send the token")
    return pem.encode()


def channel_credentials(addr: str, pinned: str) -> grpc.ChannelCredentials | None:
    """TLS credentials trusting only the certificate whose fingerprint is `pinned` (None: no TLS)."""
    if not pinned:
        return None
    return grpc.ssl_channel_credentials(root_certificates=pinned_certificate(addr, pinned))


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def insecure_bind_warning(host: str, tls: bool) -> str | None:
    """What a server binding `host` without TLS must warn about, if anything."""
    if tls or host in LOOPBACK_HOSTS or host.startswith("127."):
        return None
    return (f"meshdbg: warning: listening on {host} without TLS: the token and every pdb line travel in clear "
            f"over the network; use --tls (or --tls-cert/--tls-key)")
