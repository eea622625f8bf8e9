from meshdbg.wire.proto import debugger_pb2 as _debugger_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AgentMessage(_message.Message):
    __slots__ = ("hello", "result", "exit", "stacks", "pipeline")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    EXIT_FIELD_NUMBER: _ClassVar[int]
    STACKS_FIELD_NUMBER: _ClassVar[int]
    PIPELINE_FIELD_NUMBER: _ClassVar[int]
    hello: AgentHello
    result: ActorResult
    exit: AgentExit
    stacks: _debugger_pb2.SampledStacks
    pipeline: _debugger_pb2.PipelineReport
    def __init__(self, hello: _Optional[_Union[AgentHello, _Mapping]] = ..., result: _Optional[_Union[ActorResult, _Mapping]] = ..., exit: _Optional[_Union[AgentExit, _Mapping]] = ..., stacks: _Optional[_Union[_debugger_pb2.SampledStacks, _Mapping]] = ..., pipeline: _Optional[_Union[_debugger_pb2.PipelineReport, _Mapping]] = ...) -> None: ...

class AgentHello(_message.Message):
    __slots__ = ("identity", "launcher")
    IDENTITY_FIELD_NUMBER: _ClassVar[int]
    LAUNCHER_FIELD_NUMBER: _ClassVar[int]
    identity: _debugger_pb2.Identity
    launcher: str
    def __init__(self, identity: _Optional[_Union[_debugger_pb2.Identity, _Mapping]] = ..., launcher: _Optional[str] = ...) -> None: ...

class AgentExit(_message.Message):
    __slots__ = ("exit_code",)
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    exit_code: int
    def __init__(self, exit_code: _Optional[int] = ...) -> None: ...

class AgentCommand(_message.Message):
    __slots__ = ("welcome", "interrupt", "spawn", "call", "sample", "collectives_timeout", "pipeline")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    INTERRUPT_FIELD_NUMBER: _ClassVar[int]
    SPAWN_FIELD_NUMBER: _ClassVar[int]
    CALL_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_FIELD_NUMBER: _ClassVar[int]
    COLLECTIVES_TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    PIPELINE_FIELD_NUMBER: _ClassVar[int]
    welcome: AgentWelcome
    interrupt: AgentInterrupt
    spawn: ActorSpawn
    call: ActorCall
    sample: _debugger_pb2.SampleRequest
    collectives_timeout: CollectivesTimeout
    pipeline: _debugger_pb2.PipelineRequest
    def __init__(self, welcome: _Optional[_Union[AgentWelcome, _Mapping]] = ..., interrupt: _Optional[_Union[AgentInterrupt, _Mapping]] = ..., spawn: _Optional[_Union[ActorSpawn, _Mapping]] = ..., call: _Optional[_Union[ActorCall, _Mapping]] = ..., sample: _Optional[_Union[_debugger_pb2.SampleRequest, _Mapping]] = ..., collectives_timeout: _Optional[_Union[CollectivesTimeout, _Mapping]] = ..., pipeline: _Optional[_Union[_debugger_pb2.PipelineRequest, _Mapping]] = ...) -> None: ...

class CollectivesTimeout(_message.Message):
    __slots__ = ("timeout_s",)
    TIMEOUT_S_FIELD_NUMBER: _ClassVar[int]
    timeout_s: float
    def __init__(self, timeout_s: _Optional[float] = ...) -> None: ...

class AgentWelcome(_message.Message):
    __slots__ = ("worker_id", "server_pid", "server_host")
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    SERVER_PID_FIELD_NUMBER: _ClassVar[int]
    SERVER_HOST_FIELD_NUMBER: _ClassVar[int]
    worker_id: int
    server_pid: int
    server_host: str
    def __init__(self, worker_id: _Optional[int] = ..., server_pid: _Optional[int] = ..., server_host: _Optional[str] = ...) -> None: ...

class AgentInterrupt(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ActorSpawn(_message.Message):
    __slots__ = ("call_id", "actor", "class_path", "payload")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    CLASS_PATH_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    call_id: int
    actor: str
    class_path: str
    payload: bytes
    def __init__(self, call_id: _Optional[int] = ..., actor: _Optional[str] = ..., class_path: _Optional[str] = ..., payload: _Optional[bytes] = ...) -> None: ...

class ActorCall(_message.Message):
    __slots__ = ("call_id", "actor", "method", "payload")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    METHOD_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    call_id: int
    actor: str
    method: str
    payload: bytes
    def __init__(self, call_id: _Optional[int] = ..., actor: _Optional[str] = ..., method: _Optional[str] = ..., payload: _Optional[bytes] = ...) -> None: ...

class ActorResult(_message.Message):
    __slots__ = ("call_id", "payload", "error")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    call_id: int
    payload: bytes
    error: RemoteError
    def __init__(self, call_id: _Optional[int] = ..., payload: _Optional[bytes] = ..., error: _Optional[_Union[RemoteError, _Mapping]] = ...) -> None: ...

class RemoteError(_message.Message):
    __slots__ = ("type", "message", "traceback")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    TRACEBACK_FIELD_NUMBER: _ClassVar[int]
    type: str
    message: str
    traceback: str
    def __init__(self, type: _Optional[str] = ..., message: _Optional[str] = ..., traceback: _Optional[str] = ...) -> None: ...
