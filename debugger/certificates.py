"""The server's TLS certificate: a given PEM pair, or a self-signed one made at start-up.

The self-signed certificate lives only in the server's memory (its key is never written);
clients trust it because its fingerprint is in the server's private connection file
(meshdbg.wire.tls). It names every address a local client may dial: localhost, this host's
name, 127.0.0.1, ::1 and the address the server binds. `cryptography` is imported only here,
by servers asked for `--tls`.
"""

from __future__ import annotations

import datetime
import ipaddress
import socket
from dataclasses import dataclass
from pathlib import Path

from meshdbg.wire.errors import UsageError
from meshdbg.wire.tls import fingerprint

VALIDITY = datetime.timedelta(days=30)


@dataclass(frozen=True)
class ServerCertificate:
    """A PEM certificate and its private key, as the gRPC server takes them."""

    cert_pem: bytes
    key_pem: bytes

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.cert_pem)

    @classmethod
    def load(cls, cert_path: str, key_path: str) -> "ServerCertificate":
        """Read a PEM pair; UsageError saying which file is missing or is not PEM."""
        pair = []
        for what, path in (("certificate", cert_path), ("key", key_path)):
            try:
                data = Path(path).read_bytes()
            except OSError as exc:
                raise UsageError(f"cannot read the TLS {what} {path}: {exc.strerror}") from None
            if b"-----BEGIN" not in data:
                raise UsageError(f"the TLS {what} {path} is not a PEM file")
            pair.append(data)
        try:
            fingerprint(pair[0])
        except ValueError:
            raise UsageError(f"the TLS certificate {cert_path} holds no certificate") from None
        return cls(*pair)

    @classmethod
    def self_signed(cls, host: str) -> "ServerCertificate":
        """A fresh P-256 key and a certificate for `host` and the local names."""
        try:
            import cryptography  # noqa: F401  (the optional `tls` extra)
        except ImportError:
            raise UsageError("--tls needs the cryptography package (pip install 'meshdbg[tls]'), or give "
                             "--tls-cert and --tls-key") from None
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "meshdbg server")])
        now = datetime.datetime.now(datetime.timezone.utc)
        cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
                .not_valid_after(now + VALIDITY)
                .add_extension(x509.SubjectAlternativeName(_names(host)), critical=False)
                .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                .sign(key, hashes.SHA256()))
        return cls(cert.public_bytes(serialization.Encoding.PEM),
                   key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                     serialization.NoEncryption()))


def _names(host: str) -> list:
    from cryptography import x509

    names: list = []
    for text in dict.fromkeys(("localhost", socket.gethostname(), "127.0.0.1", "::1", host)):
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(text)))
        except ValueError:
            names.append(x509.DNSName(text))
    return names
