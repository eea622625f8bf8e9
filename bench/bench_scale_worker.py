"""Simulated workers for bench_scale.py: COUNT sessions stopped at their prompt, on real streams.

    python bench/bench_scale_worker.py ADDR TOKEN FIRST_RANK COUNT [--answer ROUNDS WORK_S]

Each session is what a worker thread stopped in pdb looks like to the server: a Session stream
that says hello (its own rank, coordinates and thread), gets its welcome, sends a prompt, and
then waits. Lighter than a real worker (asyncio streams, no pdb), so thousands fit in one
process; STREAMS_PER_CHANNEL streams share a connection, as a process's threads would. Prints
`ready` once every stream is started; ends them all when stdin closes.

With `--answer`, each session also answers what the server sends, as a stopped pdb would but
with no pdb: a line with a prompt whose output is the rank, a resume with the end of the
session (continued); WORK_S seconds later the same thread stops again on a new stream, ROUNDS
times in all (bench_floor.py times casts and continues to 1,024 of them this way).
"""

from __future__ import annotations

import asyncio
import collections
import sys

import grpc

from meshdbg.wire.connection import PROTOCOL_VERSION
from meshdbg.wire.keepalive import CLIENT_KEEPALIVE
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.proto import debugger_pb2_grpc as pb_grpc
from meshdbg.wire.vocabulary import EndReason

STREAMS_PER_CHANNEL = 200  # like a process of 200 threads stopped at once


FRAME = pb.Frame(filename="/bench/train.py", function="train_step", lineno=42)


async def opened(stub: pb_grpc.DebuggerStub, metadata, rank: int, thread: int) -> grpc.aio.StreamStreamCall:
    """A session stream that said hello, got its welcome and sent its prompt."""
    call = stub.Session(metadata=metadata)
    identity = pb.Identity(name="bench", rank=rank, coords=[pb.Coord(dim="hosts", index=rank // 8),
                           pb.Coord(dim="gpus", index=rank % 8)], hostname="bench-host", pid=100_000 + rank,
                           thread_id=thread, thread_name=f"Thread-{thread}", reason=1, protocol_version=PROTOCOL_VERSION)
    await call.write(pb.WorkerMessage(hello=identity))
    await call.read()  # welcome
    await call.write(pb.WorkerMessage(prompt=pb.Prompt(prompt="(Pdb) ", frame=FRAME)))
    return call


async def session(stub: pb_grpc.DebuggerStub, metadata, rank: int, thread: int, done: asyncio.Event) -> None:
    call = await opened(stub, metadata, rank, thread)
    await done.wait()
    await call.write(pb.WorkerMessage(ended=pb.Ended(reason=1)))
    await call.done_writing()


async def answering(stub: pb_grpc.DebuggerStub, metadata, rank: int, thread: int, done: asyncio.Event,
                    rounds: int, work_s: float) -> None:
    """`rounds` stops of one thread, each answering lines until a resume (see the docstring)."""
    for _ in range(rounds):
        call = await opened(stub, metadata, rank, thread)
        while not done.is_set() and isinstance(message := await call.read(), pb.ServerMessage):
            if message.HasField("input"):
                await call.write(pb.WorkerMessage(prompt=pb.Prompt(output=f"{rank}\n", prompt="(Pdb) ", frame=FRAME)))
            elif message.HasField("resume"):
                break
        await call.write(pb.WorkerMessage(ended=pb.Ended(reason=EndReason.CONTINUED.pb)))
        await call.done_writing()
        if done.is_set():
            return
        await asyncio.sleep(work_s)


async def main(addr: str, token: str, first: int, count: int, answer: tuple[int, float] | None = None) -> None:
    metadata = (("authorization", f"Bearer {token}"),)
    channels = [grpc.aio.insecure_channel(addr, options=CLIENT_KEEPALIVE)
                for _ in range((count + STREAMS_PER_CHANNEL - 1) // STREAMS_PER_CHANNEL)]
    done = asyncio.Event()
    def run(stub: pb_grpc.DebuggerStub, rank: int, thread: int):
        return answering(stub, metadata, rank, thread, done, *answer) if answer else session(stub, metadata, rank,
                                                                                              thread, done)

    opened = [asyncio.create_task(run(pb_grpc.DebuggerStub(channels[i // STREAMS_PER_CHANNEL]), first + i, i))
              for i in range(count)]
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    done.set()
    outcomes = await asyncio.gather(*opened, return_exceptions=True)
    failures = collections.Counter(f"{type(o).__name__}: {getattr(o, 'details', lambda: o)()}"
                                   for o in outcomes if isinstance(o, BaseException))
    if failures:
        print(f"bench_scale_worker: {sum(failures.values())} sessions failed: {dict(failures)}", file=sys.stderr)
    for channel in channels:
        await channel.close()


if __name__ == "__main__":
    answer = (int(sys.argv[6]), float(sys.argv[7])) if sys.argv[5:6] == ["--answer"] else None
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), answer))
