"""What crosses the wire between hosts: TLS records only, no HTTP/2 preface, no token."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

from e2e import wait_for
from netns import HOST_SCRIPTS


def test_traffic_between_hosts_is_tls(multi_run, cluster, tmp_path) -> None:
    capture = subprocess.Popen(["nsenter", f"--net=/run/netns/{cluster.ns('sw')}", sys.executable,
                                str(HOST_SCRIPTS / "capture.py"), "v2", str(tmp_path / "h1.pcap")],
                               stdout=subprocess.PIPE, text=True)  # v2: h1's port on the switch
    try:
        assert capture.stdout.readline().strip() == "capturing"
        run = multi_run("--mesh", "hosts=2,gpus=1", "where.py")
        run.join("h1", "h2")
        wait_for(lambda: (r := run.cli("h1", "list", "--json")).returncode == 0 and len(json.loads(r.stdout)) == 2,
                 30, "2 ranks stopped")
        assert run.cli("h1", "cast", "all", "p here").returncode == 0
        assert run.cli("h1", "continue").returncode == 0
        assert run.finish() == 0, run.stderr
    finally:
        capture.send_signal(signal.SIGTERM)
        capture.wait(timeout=10)
    wire = (tmp_path / "h1.pcap").read_bytes()
    assert len(wire) > 10_000  # it did see the job's traffic
    assert b"\x16\x03\x03" in wire or b"\x16\x03\x01" in wire  # TLS handshake records
    assert b"PRI * HTTP/2.0" not in wire  # no plaintext HTTP/2
    assert run.env["MESHDBG_TOKEN"].encode() not in wire and b"Bearer" not in wire
    assert b"WHERE" not in wire and b"'h1'" not in wire  # output and pdb text are encrypted too
