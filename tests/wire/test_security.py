"""Secure by default: loopback bind, private connection file, token checked on every RPC."""

from __future__ import annotations

import stat
from pathlib import Path

import grpc
import pytest

from e2e import Server
from meshdbg.wire.connection import PROTOCOL_VERSION
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.proto import debugger_pb2_grpc as pb_grpc


def test_serve_binds_loopback_and_writes_a_private_connection_file(server: Server) -> None:
    assert server.addr.startswith("127.0.0.1:")
    path = Path(server.env["MESHDBG_CONNECTION_FILE"])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert server.addr in path.read_text()


def test_every_rpc_refuses_a_wrong_token(server: Server) -> None:
    channel = grpc.insecure_channel(server.addr)
    stub = pb_grpc.DebuggerStub(channel)
    bad = (("authorization", "Bearer wrong"),)
    calls = [
        lambda: stub.List(pb.ListRequest(), metadata=bad, timeout=5),
        lambda: stub.Handshake(pb.HandshakeRequest(protocol_version=1), timeout=5),
        lambda: next(stub.Cast(pb.CastRequest(selection="all", command="p 1"), metadata=bad, timeout=5)),
        lambda: stub.Continue(pb.ContinueRequest(), metadata=bad, timeout=5),
        lambda: next(stub.Watch(pb.WatchRequest(), metadata=bad, timeout=5)),
        lambda: next(stub.Attach(iter([pb.AttachRequest(target=pb.AttachTarget(session_id=1))]), metadata=bad, timeout=5)),
        lambda: next(stub.Session(iter([pb.WorkerMessage(hello=pb.Identity(protocol_version=1))]), metadata=bad, timeout=5)),
    ]
    for call in calls:
        try:
            call()
        except grpc.RpcError as exc:
            assert exc.code() == grpc.StatusCode.UNAUTHENTICATED
        else:
            raise AssertionError("a call without the right token was served")
    channel.close()


def test_protocol_version_is_checked(server: Server) -> None:
    channel = grpc.insecure_channel(server.addr)
    stub = pb_grpc.DebuggerStub(channel)
    good = (("authorization", "Bearer test-token"),)
    try:
        stub.Handshake(pb.HandshakeRequest(protocol_version=99), metadata=good, timeout=5)
    except grpc.RpcError as exc:
        assert exc.code() == grpc.StatusCode.FAILED_PRECONDITION and "protocol version 99" in exc.details()
    else:
        raise AssertionError("a foreign protocol version was accepted")
    current = pb.HandshakeRequest(protocol_version=PROTOCOL_VERSION)
    assert stub.Handshake(current, metadata=good, timeout=5).protocol_version == PROTOCOL_VERSION
    channel.close()


def test_serve_never_shares_a_port_and_rejects_bad_ones(server: Server) -> None:
    taken = server.addr.rsplit(":", 1)[1]
    for args, message in ((["--port", taken], "the port is taken"), (["--port", "99999"], OUT_OF_RANGE),
                          (["--host", "192.0.2.1"], "not one of this machine's")):
        result = server.cli("serve", *args, timeout=20)
        assert result.returncode == 2, result.stderr
        assert message in result.stderr and "Traceback" not in result.stderr
        said = [line for line in result.stderr.splitlines() if not line.startswith(("usage:", " "))]  # argparse's usage aside
        assert len(said) == 1  # one line: no gRPC log noise


OUT_OF_RANGE = "expected a whole number from 0 to below 65536"


@pytest.mark.parametrize("verb", ["run", "dap"])
def test_a_port_in_use_is_refused_before_any_rank_runs(server: Server, tmp_path: Path, verb: str) -> None:
    """(`run --dap PORT` with PORT in use started the whole mesh, ran the job, then failed.)"""
    taken = server.addr.rsplit(":", 1)[1]
    ran = tmp_path / "ran"
    (tmp_path / "job.py").write_text(f"open({str(ran)!r}, 'w').close()\n")
    argv = ["run", "--dap", taken, "--mesh", "gpus=2", str(tmp_path / "job.py")] if verb == "run" else ["dap", "--port", taken]
    env = {key: value for key, value in server.env.items() if key != "MESHDBG_CONNECTION_FILE"}  # a run of its own
    result = server.cli(*argv, env=env if verb == "run" else None, timeout=30)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == f"meshdbg: cannot listen on 127.0.0.1:{taken}: the port is taken", result.stderr
    assert not ran.exists()


@pytest.mark.parametrize("argv", [["dap", "--port", "99999"], ["dap", "--port", "-1"],
                                  ["run", "--dap", "99999", "--mesh", "gpus=1", "job.py"]])
def test_a_port_out_of_range_is_refused_before_anything_starts(server: Server, argv: list[str]) -> None:
    """(`dap --port 99999` listened on 34463, the remainder; `--port -1` said "Unknown error -8".)"""
    result = server.cli(*argv, timeout=20)
    assert result.returncode == 2, result.stderr
    assert OUT_OF_RANGE in result.stderr and "ready" not in result.stderr and "listening" not in result.stdout
