"""TLS with real certificates on loopback: self-signed and pinned, or a given pair; wrong pins
and plain clients refused; a warning for binding beyond loopback in clear."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pytest

from e2e import Server, serving, start_server
from meshdbg.debugger.certificates import ServerCertificate
from meshdbg.wire.tls import insecure_bind_warning


def tls_server(tmp_path: Path, *options: str) -> Iterator[Server]:
    with serving(tmp_path, options) as server:
        yield server


@pytest.fixture
def self_signed(tmp_path: Path) -> Iterator[Server]:
    yield from tls_server(tmp_path, "--tls")


@pytest.fixture
def given_pair(tmp_path: Path) -> Iterator[Server]:
    pair = ServerCertificate.self_signed("127.0.0.1")
    (tmp_path / "cert.pem").write_bytes(pair.cert_pem)
    (tmp_path / "key.pem").write_bytes(pair.key_pem)
    yield from tls_server(tmp_path, "--tls-cert", str(tmp_path / "cert.pem"), "--tls-key", str(tmp_path / "key.pem"))


def connection_file(server: Server) -> dict:
    return json.loads(Path(server.env["MESHDBG_CONNECTION_FILE"]).read_text())


@pytest.mark.parametrize("kind", ["self_signed", "given_pair"])
def test_workers_and_clients_speak_tls_to_a_pinned_certificate(kind: str, request: pytest.FixtureRequest) -> None:
    server: Server = request.getfixturevalue(kind)
    pinned = connection_file(server)["fingerprint"]
    assert pinned.startswith("sha256:") and len(pinned) == 7 + 64
    # A worker that only has the address, the token and the fingerprint, as a launcher gives them.
    env = dict(server.env, MESHDBG_ADDR=server.addr, MESHDBG_TLS_FINGERPRINT=pinned)
    server.worker("hold.py", 0, env=env)
    server.wait_sessions(1)
    cast = server.cli("cast", "--json", "all", "p word")
    assert cast.returncode == 0 and json.loads(cast.stdout)[0]["output"].strip() == "'x'", cast.stderr


def test_a_wrong_pin_or_a_plain_client_is_refused(self_signed: Server) -> None:
    wrong = dict(self_signed.env, MESHDBG_ADDR=self_signed.addr, MESHDBG_TLS_FINGERPRINT="sha256:" + "0" * 64)
    refused = self_signed.cli("list", env=wrong)
    assert refused.returncode == 3 and "not the pinned" in refused.stderr and "Traceback" not in refused.stderr
    plain = dict(self_signed.env, MESHDBG_ADDR=self_signed.addr)
    refused = self_signed.cli("list", env=plain)
    assert refused.returncode == 3 and "Traceback" not in refused.stderr
    assert "if it serves TLS, set MESHDBG_TLS_FINGERPRINT" in refused.stderr  # what a plain client missed


def test_half_a_pair_and_unreadable_files_are_usage_errors(tmp_path: Path) -> None:
    for options, expected in ((("--tls-cert", "x.pem"), "go together"),
                              (("--tls-cert", str(tmp_path / "none.pem"), "--tls-key", "k.pem"), "cannot read")):
        with pytest.raises(AssertionError, match=expected):
            start_server(tmp_path, options=options)


def test_binding_beyond_loopback_in_clear_warns() -> None:
    assert "without TLS" in insecure_bind_warning("0.0.0.0", tls=False)
    assert insecure_bind_warning("0.0.0.0", tls=True) is None
    assert all(insecure_bind_warning(host, tls=False) is None for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2"))
