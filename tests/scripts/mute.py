"""A session that is connected but never answers: it says hello, shows a prompt, then reads the
server's messages without ever replying (a worker whose pdb thread is stuck while its gRPC
threads still run). Ends when its stdin closes."""

import os
import queue
import socket
import sys
import threading

import grpc

from meshdbg.wire.connection import PROTOCOL_VERSION, resolve_connection
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.proto import debugger_pb2_grpc as pb_grpc

connection = resolve_connection()
outgoing: queue.SimpleQueue = queue.SimpleQueue()
outgoing.put(pb.WorkerMessage(hello=pb.Identity(
    name="worker", rank=int(os.environ["MESHDBG_RANK"]), hostname=socket.gethostname(), pid=os.getpid(),
    thread_id=threading.get_ident(), thread_name="MainThread", protocol_version=PROTOCOL_VERSION)))
outgoing.put(pb.WorkerMessage(prompt=pb.Prompt(prompt="(Pdb) ", frame=pb.Frame(filename=__file__, function="<module>",
                                                                                lineno=1))))
with grpc.insecure_channel(connection.addr) as channel:
    replies = pb_grpc.DebuggerStub(channel).Session(iter(outgoing.get, None), metadata=connection.metadata())
    threading.Thread(target=lambda: [None for _ in replies], daemon=True).start()  # read, never answer
    print("ready", flush=True)
    sys.stdin.read()
    outgoing.put(None)
