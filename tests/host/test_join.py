"""The join protocol on loopback (one host, no namespaces): what an agent of another
version, and a script that differs between hosts, get."""

from __future__ import annotations

import asyncio
import os
import secrets
import subprocess

import grpc

from e2e import wait_for
from meshdbg.wire.connection import parse_url
from meshdbg.wire.proto import host_pb2 as host_pb
from meshdbg.wire.proto import host_pb2_grpc as host_grpc
from netns import HOST_SCRIPTS, meshdbg


def test_an_agent_of_another_protocol_version_is_refused(tmp_path) -> None:
    token = secrets.token_urlsafe(16)
    env = dict(os.environ, MESHDBG_TOKEN=token)
    with open(tmp_path / "run.err", "w") as err:
        run = subprocess.Popen(meshdbg("run", "--on", "join", "--wait-hosts", "20", "--mesh", "hosts=1", "where.py"),
                               env=env, cwd=HOST_SCRIPTS, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    try:
        url = wait_for(lambda: next((w for w in (tmp_path / "run.err").read_text().split() if w.startswith("meshdbg://")),
                                    ""), 20, "the join line")

        async def join_as_version_1() -> grpc.aio.AioRpcError:
            async with grpc.aio.insecure_channel(parse_url(url)[0]) as channel:
                hello = host_pb.HostMessage(hello=host_pb.HostHello(hostname="old", protocol_version=1,
                                                                    meshdbg_version="0.0.1"))
                call = host_grpc.HostsStub(channel).Join(iter([hello]), metadata=(("authorization", f"Bearer {token}"),))
                try:
                    async for _ in call:
                        pass
                except grpc.aio.AioRpcError as exc:
                    return exc
            raise AssertionError("the old agent was let in")

        refused = asyncio.run(join_as_version_1())
        assert refused.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert refused.details().startswith("refused by the run: protocol version 1 (meshdbg 0.0.1) is not the run's")
        assert "refused host old (127.0.0.1)" in (tmp_path / "run.err").read_text()
    finally:
        run.kill()
        run.wait(timeout=10)


def test_a_script_that_differs_between_hosts_is_named(multi_run, cluster, tmp_path) -> None:
    other = tmp_path / "where.py"
    other.write_text((HOST_SCRIPTS / "where.py").read_text() + "# changed on h2\n")
    run = multi_run("--mesh", "hosts=2,gpus=1", "where.py")
    run.join("h1")
    with open(tmp_path / "h2.err", "w") as err:  # h2 has its own mount namespace: its where.py is another file
        cluster.start("h2", ["sh", "-c", f'mount --bind {other} {HOST_SCRIPTS / "where.py"} && exec "$@"', "-",
                             *meshdbg("host", "--join", run.url)], run.env, stdout=err, stderr=subprocess.STDOUT)
    warning = wait_for(lambda: next((line for line in run.stderr.splitlines() if "script differs" in line), ""),
                       20, "the warning")
    assert warning.startswith("meshdbg: warning: the script differs between hosts (host 0 h1 (198.18.0.2): sha256:")
    assert ", host 1 h2 (198.18.0.3): sha256:" in warning
    resumed: list[int] = []

    def both_done() -> bool:  # each `continue` resumes the ranks stopped by then: h2's may stop later than h1's
        resumed.append(run.cli("h1", "continue", "--addr", run.url).returncode)
        return "DONE 0" in run.stdout and "DONE 1" in run.stdout

    wait_for(both_done, 20, "both ranks resumed")
    assert 0 in resumed
    assert run.finish() == 0
