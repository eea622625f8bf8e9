from meshdbg.wire.proto import debugger_pb2 as _debugger_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class HostState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    HOST_STATE_UNSPECIFIED: _ClassVar[HostState]
    HOST_STATE_JOINING: _ClassVar[HostState]
    HOST_STATE_UP: _ClassVar[HostState]
    HOST_STATE_LOST: _ClassVar[HostState]
    HOST_STATE_DONE: _ClassVar[HostState]
HOST_STATE_UNSPECIFIED: HostState
HOST_STATE_JOINING: HostState
HOST_STATE_UP: HostState
HOST_STATE_LOST: HostState
HOST_STATE_DONE: HostState

class HostMessage(_message.Message):
    __slots__ = ("hello", "digest", "spawned", "exit", "output", "stacks", "flushed")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    SPAWNED_FIELD_NUMBER: _ClassVar[int]
    EXIT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    STACKS_FIELD_NUMBER: _ClassVar[int]
    FLUSHED_FIELD_NUMBER: _ClassVar[int]
    hello: HostHello
    digest: HostDigest
    spawned: HostSpawned
    exit: HostExit
    output: HostOutput
    stacks: HostStacks
    flushed: HostFlushed
    def __init__(self, hello: _Optional[_Union[HostHello, _Mapping]] = ..., digest: _Optional[_Union[HostDigest, _Mapping]] = ..., spawned: _Optional[_Union[HostSpawned, _Mapping]] = ..., exit: _Optional[_Union[HostExit, _Mapping]] = ..., output: _Optional[_Union[HostOutput, _Mapping]] = ..., stacks: _Optional[_Union[HostStacks, _Mapping]] = ..., flushed: _Optional[_Union[HostFlushed, _Mapping]] = ...) -> None: ...

class HostHello(_message.Message):
    __slots__ = ("hostname", "addresses", "index_hint", "meshdbg_version", "python_version", "protocol_version", "master_port")
    HOSTNAME_FIELD_NUMBER: _ClassVar[int]
    ADDRESSES_FIELD_NUMBER: _ClassVar[int]
    INDEX_HINT_FIELD_NUMBER: _ClassVar[int]
    MESHDBG_VERSION_FIELD_NUMBER: _ClassVar[int]
    PYTHON_VERSION_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    MASTER_PORT_FIELD_NUMBER: _ClassVar[int]
    hostname: str
    addresses: _containers.RepeatedScalarFieldContainer[str]
    index_hint: int
    meshdbg_version: str
    python_version: str
    protocol_version: int
    master_port: int
    def __init__(self, hostname: _Optional[str] = ..., addresses: _Optional[_Iterable[str]] = ..., index_hint: _Optional[int] = ..., meshdbg_version: _Optional[str] = ..., python_version: _Optional[str] = ..., protocol_version: _Optional[int] = ..., master_port: _Optional[int] = ...) -> None: ...

class HostDigest(_message.Message):
    __slots__ = ("script_digest",)
    SCRIPT_DIGEST_FIELD_NUMBER: _ClassVar[int]
    script_digest: str
    def __init__(self, script_digest: _Optional[str] = ...) -> None: ...

class HostSpawned(_message.Message):
    __slots__ = ("rank", "pid")
    RANK_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    rank: int
    pid: int
    def __init__(self, rank: _Optional[int] = ..., pid: _Optional[int] = ...) -> None: ...

class HostExit(_message.Message):
    __slots__ = ("rank", "code")
    RANK_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    rank: int
    code: int
    def __init__(self, rank: _Optional[int] = ..., code: _Optional[int] = ...) -> None: ...

class HostOutput(_message.Message):
    __slots__ = ("stream", "text", "rank", "shown")
    STREAM_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    SHOWN_FIELD_NUMBER: _ClassVar[int]
    stream: int
    text: bytes
    rank: int
    shown: bool
    def __init__(self, stream: _Optional[int] = ..., text: _Optional[bytes] = ..., rank: _Optional[int] = ..., shown: _Optional[bool] = ...) -> None: ...

class HostCommand(_message.Message):
    __slots__ = ("welcome", "assignment", "stop", "sample", "flush")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    ASSIGNMENT_FIELD_NUMBER: _ClassVar[int]
    STOP_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_FIELD_NUMBER: _ClassVar[int]
    FLUSH_FIELD_NUMBER: _ClassVar[int]
    welcome: HostWelcome
    assignment: HostPlan
    stop: HostStop
    sample: HostSample
    flush: HostFlush
    def __init__(self, welcome: _Optional[_Union[HostWelcome, _Mapping]] = ..., assignment: _Optional[_Union[HostPlan, _Mapping]] = ..., stop: _Optional[_Union[HostStop, _Mapping]] = ..., sample: _Optional[_Union[HostSample, _Mapping]] = ..., flush: _Optional[_Union[HostFlush, _Mapping]] = ...) -> None: ...

class HostFlush(_message.Message):
    __slots__ = ("request_id", "rank")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    rank: int
    def __init__(self, request_id: _Optional[int] = ..., rank: _Optional[int] = ...) -> None: ...

class HostFlushed(_message.Message):
    __slots__ = ("request_id",)
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    def __init__(self, request_id: _Optional[int] = ...) -> None: ...

class HostSample(_message.Message):
    __slots__ = ("request_id", "pid", "all_threads", "timeout_s")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    ALL_THREADS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_S_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    pid: int
    all_threads: bool
    timeout_s: float
    def __init__(self, request_id: _Optional[int] = ..., pid: _Optional[int] = ..., all_threads: _Optional[bool] = ..., timeout_s: _Optional[float] = ...) -> None: ...

class HostStacks(_message.Message):
    __slots__ = ("request_id", "threads", "error")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    THREADS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    threads: _containers.RepeatedCompositeFieldContainer[_debugger_pb2.ThreadStack]
    error: str
    def __init__(self, request_id: _Optional[int] = ..., threads: _Optional[_Iterable[_Union[_debugger_pb2.ThreadStack, _Mapping]]] = ..., error: _Optional[str] = ...) -> None: ...

class HostWelcome(_message.Message):
    __slots__ = ("argv", "cwd")
    ARGV_FIELD_NUMBER: _ClassVar[int]
    CWD_FIELD_NUMBER: _ClassVar[int]
    argv: _containers.RepeatedScalarFieldContainer[str]
    cwd: str
    def __init__(self, argv: _Optional[_Iterable[str]] = ..., cwd: _Optional[str] = ...) -> None: ...

class HostPlan(_message.Message):
    __slots__ = ("index", "argv", "cwd", "ranks")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    ARGV_FIELD_NUMBER: _ClassVar[int]
    CWD_FIELD_NUMBER: _ClassVar[int]
    RANKS_FIELD_NUMBER: _ClassVar[int]
    index: int
    argv: _containers.RepeatedScalarFieldContainer[str]
    cwd: str
    ranks: _containers.RepeatedCompositeFieldContainer[HostRank]
    def __init__(self, index: _Optional[int] = ..., argv: _Optional[_Iterable[str]] = ..., cwd: _Optional[str] = ..., ranks: _Optional[_Iterable[_Union[HostRank, _Mapping]]] = ...) -> None: ...

class HostRank(_message.Message):
    __slots__ = ("rank", "label", "env")
    class EnvEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    RANK_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    ENV_FIELD_NUMBER: _ClassVar[int]
    rank: int
    label: str
    env: _containers.ScalarMap[str, str]
    def __init__(self, rank: _Optional[int] = ..., label: _Optional[str] = ..., env: _Optional[_Mapping[str, str]] = ...) -> None: ...

class HostStop(_message.Message):
    __slots__ = ("grace_s",)
    GRACE_S_FIELD_NUMBER: _ClassVar[int]
    grace_s: float
    def __init__(self, grace_s: _Optional[float] = ...) -> None: ...

class HostListRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class HostInfo(_message.Message):
    __slots__ = ("index", "hostname", "address", "state", "ranks", "placer")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    HOSTNAME_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    RANKS_FIELD_NUMBER: _ClassVar[int]
    PLACER_FIELD_NUMBER: _ClassVar[int]
    index: int
    hostname: str
    address: str
    state: HostState
    ranks: _containers.RepeatedScalarFieldContainer[int]
    placer: str
    def __init__(self, index: _Optional[int] = ..., hostname: _Optional[str] = ..., address: _Optional[str] = ..., state: _Optional[_Union[HostState, str]] = ..., ranks: _Optional[_Iterable[int]] = ..., placer: _Optional[str] = ...) -> None: ...

class HostListReply(_message.Message):
    __slots__ = ("hosts",)
    HOSTS_FIELD_NUMBER: _ClassVar[int]
    hosts: _containers.RepeatedCompositeFieldContainer[HostInfo]
    def __init__(self, hosts: _Optional[_Iterable[_Union[HostInfo, _Mapping]]] = ...) -> None: ...
