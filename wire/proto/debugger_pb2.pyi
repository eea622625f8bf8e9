from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class State(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STATE_UNSPECIFIED: _ClassVar[State]
    STATE_STARTING: _ClassVar[State]
    STATE_RUNNING: _ClassVar[State]
    STATE_STOPPED: _ClassVar[State]
    STATE_EXITED: _ClassVar[State]
    STATE_NOT_ANSWERING: _ClassVar[State]

class StopReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STOP_REASON_UNSPECIFIED: _ClassVar[StopReason]
    STOP_REASON_BREAKPOINT: _ClassVar[StopReason]
    STOP_REASON_INTERRUPT: _ClassVar[StopReason]
    STOP_REASON_POST_MORTEM: _ClassVar[StopReason]
    STOP_REASON_POST_MORTEM_CALL: _ClassVar[StopReason]

class EndReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    END_REASON_UNSPECIFIED: _ClassVar[EndReason]
    END_REASON_CONTINUED: _ClassVar[EndReason]
    END_REASON_QUIT: _ClassVar[EndReason]
    END_REASON_THREAD_FINISHED: _ClassVar[EndReason]
    END_REASON_WORKER_GONE: _ClassVar[EndReason]
    END_REASON_SERVER_STOPPED: _ClassVar[EndReason]
    END_REASON_STOPPED_AGAIN: _ClassVar[EndReason]

class WatchKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    WATCH_KIND_UNSPECIFIED: _ClassVar[WatchKind]
    WATCH_KIND_OPENED: _ClassVar[WatchKind]
    WATCH_KIND_SYNCED: _ClassVar[WatchKind]
    WATCH_KIND_UPDATED: _ClassVar[WatchKind]
    WATCH_KIND_CLOSED: _ClassVar[WatchKind]
    WATCH_KIND_EXITED: _ClassVar[WatchKind]
    WATCH_KIND_JOINED: _ClassVar[WatchKind]

class StackSource(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STACK_SOURCE_UNSPECIFIED: _ClassVar[StackSource]
    STACK_SOURCE_AGENT: _ClassVar[StackSource]
    STACK_SOURCE_SESSION: _ClassVar[StackSource]
    STACK_SOURCE_PY_SPY: _ClassVar[StackSource]
    STACK_SOURCE_NONE: _ClassVar[StackSource]

class QueryPromptKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    QUERY_PROMPT_KIND_UNSPECIFIED: _ClassVar[QueryPromptKind]
    QUERY_PROMPT_KIND_PDB: _ClassVar[QueryPromptKind]
    QUERY_PROMPT_KIND_COMMANDS: _ClassVar[QueryPromptKind]
    QUERY_PROMPT_KIND_INTERACT: _ClassVar[QueryPromptKind]
    QUERY_PROMPT_KIND_DEBUG: _ClassVar[QueryPromptKind]
STATE_UNSPECIFIED: State
STATE_STARTING: State
STATE_RUNNING: State
STATE_STOPPED: State
STATE_EXITED: State
STATE_NOT_ANSWERING: State
STOP_REASON_UNSPECIFIED: StopReason
STOP_REASON_BREAKPOINT: StopReason
STOP_REASON_INTERRUPT: StopReason
STOP_REASON_POST_MORTEM: StopReason
STOP_REASON_POST_MORTEM_CALL: StopReason
END_REASON_UNSPECIFIED: EndReason
END_REASON_CONTINUED: EndReason
END_REASON_QUIT: EndReason
END_REASON_THREAD_FINISHED: EndReason
END_REASON_WORKER_GONE: EndReason
END_REASON_SERVER_STOPPED: EndReason
END_REASON_STOPPED_AGAIN: EndReason
WATCH_KIND_UNSPECIFIED: WatchKind
WATCH_KIND_OPENED: WatchKind
WATCH_KIND_SYNCED: WatchKind
WATCH_KIND_UPDATED: WatchKind
WATCH_KIND_CLOSED: WatchKind
WATCH_KIND_EXITED: WatchKind
WATCH_KIND_JOINED: WatchKind
STACK_SOURCE_UNSPECIFIED: StackSource
STACK_SOURCE_AGENT: StackSource
STACK_SOURCE_SESSION: StackSource
STACK_SOURCE_PY_SPY: StackSource
STACK_SOURCE_NONE: StackSource
QUERY_PROMPT_KIND_UNSPECIFIED: QueryPromptKind
QUERY_PROMPT_KIND_PDB: QueryPromptKind
QUERY_PROMPT_KIND_COMMANDS: QueryPromptKind
QUERY_PROMPT_KIND_INTERACT: QueryPromptKind
QUERY_PROMPT_KIND_DEBUG: QueryPromptKind

class Coord(_message.Message):
    __slots__ = ("dim", "index")
    DIM_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    dim: str
    index: int
    def __init__(self, dim: _Optional[str] = ..., index: _Optional[int] = ...) -> None: ...

class Identity(_message.Message):
    __slots__ = ("name", "rank", "coords", "hostname", "pid", "thread_id", "thread_name", "reason", "protocol_version", "context", "resumes_session")
    class ContextEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    COORDS_FIELD_NUMBER: _ClassVar[int]
    HOSTNAME_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_NAME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    RESUMES_SESSION_FIELD_NUMBER: _ClassVar[int]
    name: str
    rank: int
    coords: _containers.RepeatedCompositeFieldContainer[Coord]
    hostname: str
    pid: int
    thread_id: int
    thread_name: str
    reason: StopReason
    protocol_version: int
    context: _containers.ScalarMap[str, str]
    resumes_session: int
    def __init__(self, name: _Optional[str] = ..., rank: _Optional[int] = ..., coords: _Optional[_Iterable[_Union[Coord, _Mapping]]] = ..., hostname: _Optional[str] = ..., pid: _Optional[int] = ..., thread_id: _Optional[int] = ..., thread_name: _Optional[str] = ..., reason: _Optional[_Union[StopReason, str]] = ..., protocol_version: _Optional[int] = ..., context: _Optional[_Mapping[str, str]] = ..., resumes_session: _Optional[int] = ...) -> None: ...

class Frame(_message.Message):
    __slots__ = ("filename", "function", "lineno")
    FILENAME_FIELD_NUMBER: _ClassVar[int]
    FUNCTION_FIELD_NUMBER: _ClassVar[int]
    LINENO_FIELD_NUMBER: _ClassVar[int]
    filename: str
    function: str
    lineno: int
    def __init__(self, filename: _Optional[str] = ..., function: _Optional[str] = ..., lineno: _Optional[int] = ...) -> None: ...

class ThreadStack(_message.Message):
    __slots__ = ("thread_id", "thread_name", "main", "frames")
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_NAME_FIELD_NUMBER: _ClassVar[int]
    MAIN_FIELD_NUMBER: _ClassVar[int]
    FRAMES_FIELD_NUMBER: _ClassVar[int]
    thread_id: int
    thread_name: str
    main: bool
    frames: _containers.RepeatedCompositeFieldContainer[Frame]
    def __init__(self, thread_id: _Optional[int] = ..., thread_name: _Optional[str] = ..., main: _Optional[bool] = ..., frames: _Optional[_Iterable[_Union[Frame, _Mapping]]] = ...) -> None: ...

class SampleRequest(_message.Message):
    __slots__ = ("request_id", "all_threads")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ALL_THREADS_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    all_threads: bool
    def __init__(self, request_id: _Optional[int] = ..., all_threads: _Optional[bool] = ...) -> None: ...

class SampledStacks(_message.Message):
    __slots__ = ("request_id", "threads", "error")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    THREADS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    threads: _containers.RepeatedCompositeFieldContainer[ThreadStack]
    error: str
    def __init__(self, request_id: _Optional[int] = ..., threads: _Optional[_Iterable[_Union[ThreadStack, _Mapping]]] = ..., error: _Optional[str] = ...) -> None: ...

class CompleteRequest(_message.Message):
    __slots__ = ("request_id", "text", "line", "begidx", "endidx")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    BEGIDX_FIELD_NUMBER: _ClassVar[int]
    ENDIDX_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    text: str
    line: str
    begidx: int
    endidx: int
    def __init__(self, request_id: _Optional[int] = ..., text: _Optional[str] = ..., line: _Optional[str] = ..., begidx: _Optional[int] = ..., endidx: _Optional[int] = ...) -> None: ...

class Completions(_message.Message):
    __slots__ = ("request_id", "matches")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    matches: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, request_id: _Optional[int] = ..., matches: _Optional[_Iterable[str]] = ...) -> None: ...

class WorkerMessage(_message.Message):
    __slots__ = ("hello", "prompt", "ended", "interrupted", "output", "answer")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    ENDED_FIELD_NUMBER: _ClassVar[int]
    INTERRUPTED_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    hello: Identity
    prompt: Prompt
    ended: Ended
    interrupted: Interrupted
    output: OutputChunk
    answer: QueryAnswer
    def __init__(self, hello: _Optional[_Union[Identity, _Mapping]] = ..., prompt: _Optional[_Union[Prompt, _Mapping]] = ..., ended: _Optional[_Union[Ended, _Mapping]] = ..., interrupted: _Optional[_Union[Interrupted, _Mapping]] = ..., output: _Optional[_Union[OutputChunk, _Mapping]] = ..., answer: _Optional[_Union[QueryAnswer, _Mapping]] = ...) -> None: ...

class OutputChunk(_message.Message):
    __slots__ = ("text",)
    TEXT_FIELD_NUMBER: _ClassVar[int]
    text: str
    def __init__(self, text: _Optional[str] = ...) -> None: ...

class Prompt(_message.Message):
    __slots__ = ("output", "prompt", "frame", "location", "kind")
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    FRAME_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    output: str
    prompt: str
    frame: Frame
    location: str
    kind: QueryPromptKind
    def __init__(self, output: _Optional[str] = ..., prompt: _Optional[str] = ..., frame: _Optional[_Union[Frame, _Mapping]] = ..., location: _Optional[str] = ..., kind: _Optional[_Union[QueryPromptKind, str]] = ...) -> None: ...

class Interrupted(_message.Message):
    __slots__ = ("request_id", "frame")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    FRAME_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    frame: Frame
    def __init__(self, request_id: _Optional[int] = ..., frame: _Optional[_Union[Frame, _Mapping]] = ...) -> None: ...

class Ended(_message.Message):
    __slots__ = ("output", "reason", "park")
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    PARK_FIELD_NUMBER: _ClassVar[int]
    output: str
    reason: EndReason
    park: bool
    def __init__(self, output: _Optional[str] = ..., reason: _Optional[_Union[EndReason, str]] = ..., park: _Optional[bool] = ...) -> None: ...

class ServerMessage(_message.Message):
    __slots__ = ("welcome", "input", "resume", "interrupt", "goodbye", "query")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    RESUME_FIELD_NUMBER: _ClassVar[int]
    INTERRUPT_FIELD_NUMBER: _ClassVar[int]
    GOODBYE_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    input: Input
    resume: Resume
    interrupt: Interrupt
    goodbye: KeepGoodbye
    query: QueryRequest
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., input: _Optional[_Union[Input, _Mapping]] = ..., resume: _Optional[_Union[Resume, _Mapping]] = ..., interrupt: _Optional[_Union[Interrupt, _Mapping]] = ..., goodbye: _Optional[_Union[KeepGoodbye, _Mapping]] = ..., query: _Optional[_Union[QueryRequest, _Mapping]] = ...) -> None: ...

class QueryRequest(_message.Message):
    __slots__ = ("id", "complete", "sample", "evaluate", "frames", "scopes", "variables", "inspect", "set_variable", "source", "exception")
    ID_FIELD_NUMBER: _ClassVar[int]
    COMPLETE_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_FIELD_NUMBER: _ClassVar[int]
    EVALUATE_FIELD_NUMBER: _ClassVar[int]
    FRAMES_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    VARIABLES_FIELD_NUMBER: _ClassVar[int]
    INSPECT_FIELD_NUMBER: _ClassVar[int]
    SET_VARIABLE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    EXCEPTION_FIELD_NUMBER: _ClassVar[int]
    id: int
    complete: CompleteRequest
    sample: SampleRequest
    evaluate: EvaluateRequest
    frames: QueryFrames
    scopes: QueryScopes
    variables: QueryVariables
    inspect: QueryInspect
    set_variable: QuerySetVariable
    source: QuerySource
    exception: QueryException
    def __init__(self, id: _Optional[int] = ..., complete: _Optional[_Union[CompleteRequest, _Mapping]] = ..., sample: _Optional[_Union[SampleRequest, _Mapping]] = ..., evaluate: _Optional[_Union[EvaluateRequest, _Mapping]] = ..., frames: _Optional[_Union[QueryFrames, _Mapping]] = ..., scopes: _Optional[_Union[QueryScopes, _Mapping]] = ..., variables: _Optional[_Union[QueryVariables, _Mapping]] = ..., inspect: _Optional[_Union[QueryInspect, _Mapping]] = ..., set_variable: _Optional[_Union[QuerySetVariable, _Mapping]] = ..., source: _Optional[_Union[QuerySource, _Mapping]] = ..., exception: _Optional[_Union[QueryException, _Mapping]] = ...) -> None: ...

class QueryAnswer(_message.Message):
    __slots__ = ("id", "error", "completions", "stacks", "evaluation", "frames", "variables", "value", "source", "exception")
    ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    COMPLETIONS_FIELD_NUMBER: _ClassVar[int]
    STACKS_FIELD_NUMBER: _ClassVar[int]
    EVALUATION_FIELD_NUMBER: _ClassVar[int]
    FRAMES_FIELD_NUMBER: _ClassVar[int]
    VARIABLES_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    EXCEPTION_FIELD_NUMBER: _ClassVar[int]
    id: int
    error: str
    completions: Completions
    stacks: SampledStacks
    evaluation: Evaluation
    frames: QueryFrameList
    variables: QueryVariableList
    value: QueryVariable
    source: QuerySourceText
    exception: QueryExceptionInfo
    def __init__(self, id: _Optional[int] = ..., error: _Optional[str] = ..., completions: _Optional[_Union[Completions, _Mapping]] = ..., stacks: _Optional[_Union[SampledStacks, _Mapping]] = ..., evaluation: _Optional[_Union[Evaluation, _Mapping]] = ..., frames: _Optional[_Union[QueryFrameList, _Mapping]] = ..., variables: _Optional[_Union[QueryVariableList, _Mapping]] = ..., value: _Optional[_Union[QueryVariable, _Mapping]] = ..., source: _Optional[_Union[QuerySourceText, _Mapping]] = ..., exception: _Optional[_Union[QueryExceptionInfo, _Mapping]] = ...) -> None: ...

class QueryFrames(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class QueryFrameList(_message.Message):
    __slots__ = ("frames", "current")
    FRAMES_FIELD_NUMBER: _ClassVar[int]
    CURRENT_FIELD_NUMBER: _ClassVar[int]
    frames: _containers.RepeatedCompositeFieldContainer[Frame]
    current: int
    def __init__(self, frames: _Optional[_Iterable[_Union[Frame, _Mapping]]] = ..., current: _Optional[int] = ...) -> None: ...

class QueryScopes(_message.Message):
    __slots__ = ("frame",)
    FRAME_FIELD_NUMBER: _ClassVar[int]
    frame: int
    def __init__(self, frame: _Optional[int] = ...) -> None: ...

class QueryVariables(_message.Message):
    __slots__ = ("reference", "start", "count")
    REFERENCE_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    reference: int
    start: int
    count: int
    def __init__(self, reference: _Optional[int] = ..., start: _Optional[int] = ..., count: _Optional[int] = ...) -> None: ...

class QueryVariable(_message.Message):
    __slots__ = ("name", "value", "type", "reference", "children", "output", "evaluate_name")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    REFERENCE_FIELD_NUMBER: _ClassVar[int]
    CHILDREN_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    EVALUATE_NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: str
    type: str
    reference: int
    children: int
    output: str
    evaluate_name: str
    def __init__(self, name: _Optional[str] = ..., value: _Optional[str] = ..., type: _Optional[str] = ..., reference: _Optional[int] = ..., children: _Optional[int] = ..., output: _Optional[str] = ..., evaluate_name: _Optional[str] = ...) -> None: ...

class QueryVariableList(_message.Message):
    __slots__ = ("variables",)
    VARIABLES_FIELD_NUMBER: _ClassVar[int]
    variables: _containers.RepeatedCompositeFieldContainer[QueryVariable]
    def __init__(self, variables: _Optional[_Iterable[_Union[QueryVariable, _Mapping]]] = ...) -> None: ...

class QueryInspect(_message.Message):
    __slots__ = ("frame", "expression", "statements")
    FRAME_FIELD_NUMBER: _ClassVar[int]
    EXPRESSION_FIELD_NUMBER: _ClassVar[int]
    STATEMENTS_FIELD_NUMBER: _ClassVar[int]
    frame: int
    expression: str
    statements: bool
    def __init__(self, frame: _Optional[int] = ..., expression: _Optional[str] = ..., statements: _Optional[bool] = ...) -> None: ...

class QuerySetVariable(_message.Message):
    __slots__ = ("reference", "name", "expression", "frame")
    REFERENCE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    EXPRESSION_FIELD_NUMBER: _ClassVar[int]
    FRAME_FIELD_NUMBER: _ClassVar[int]
    reference: int
    name: str
    expression: str
    frame: int
    def __init__(self, reference: _Optional[int] = ..., name: _Optional[str] = ..., expression: _Optional[str] = ..., frame: _Optional[int] = ...) -> None: ...

class QuerySource(_message.Message):
    __slots__ = ("filename",)
    FILENAME_FIELD_NUMBER: _ClassVar[int]
    filename: str
    def __init__(self, filename: _Optional[str] = ...) -> None: ...

class QuerySourceText(_message.Message):
    __slots__ = ("text",)
    TEXT_FIELD_NUMBER: _ClassVar[int]
    text: str
    def __init__(self, text: _Optional[str] = ...) -> None: ...

class QueryException(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class QueryExceptionInfo(_message.Message):
    __slots__ = ("type", "message", "traceback")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    TRACEBACK_FIELD_NUMBER: _ClassVar[int]
    type: str
    message: str
    traceback: str
    def __init__(self, type: _Optional[str] = ..., message: _Optional[str] = ..., traceback: _Optional[str] = ...) -> None: ...

class KeepGoodbye(_message.Message):
    __slots__ = ("reason",)
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: _Optional[str] = ...) -> None: ...

class EvaluateRequest(_message.Message):
    __slots__ = ("request_id", "expression")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    EXPRESSION_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    expression: str
    def __init__(self, request_id: _Optional[int] = ..., expression: _Optional[str] = ...) -> None: ...

class Evaluation(_message.Message):
    __slots__ = ("request_id", "value", "error")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    value: str
    error: str
    def __init__(self, request_id: _Optional[int] = ..., value: _Optional[str] = ..., error: _Optional[str] = ...) -> None: ...

class Interrupt(_message.Message):
    __slots__ = ("request_id",)
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    def __init__(self, request_id: _Optional[int] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: int
    def __init__(self, session_id: _Optional[int] = ...) -> None: ...

class Input(_message.Message):
    __slots__ = ("line", "eof")
    LINE_FIELD_NUMBER: _ClassVar[int]
    EOF_FIELD_NUMBER: _ClassVar[int]
    line: str
    eof: bool
    def __init__(self, line: _Optional[str] = ..., eof: _Optional[bool] = ...) -> None: ...

class Resume(_message.Message):
    __slots__ = ("clear_breakpoints",)
    CLEAR_BREAKPOINTS_FIELD_NUMBER: _ClassVar[int]
    clear_breakpoints: bool
    def __init__(self, clear_breakpoints: _Optional[bool] = ...) -> None: ...

class HandshakeRequest(_message.Message):
    __slots__ = ("protocol_version",)
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    def __init__(self, protocol_version: _Optional[int] = ...) -> None: ...

class HandshakeReply(_message.Message):
    __slots__ = ("protocol_version", "server_version")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    SERVER_VERSION_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    server_version: str
    def __init__(self, protocol_version: _Optional[int] = ..., server_version: _Optional[str] = ...) -> None: ...

class SessionInfo(_message.Message):
    __slots__ = ("id", "identity", "state", "frame", "prompt", "prompt_kind")
    ID_FIELD_NUMBER: _ClassVar[int]
    IDENTITY_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    FRAME_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    PROMPT_KIND_FIELD_NUMBER: _ClassVar[int]
    id: int
    identity: Identity
    state: State
    frame: Frame
    prompt: str
    prompt_kind: QueryPromptKind
    def __init__(self, id: _Optional[int] = ..., identity: _Optional[_Union[Identity, _Mapping]] = ..., state: _Optional[_Union[State, str]] = ..., frame: _Optional[_Union[Frame, _Mapping]] = ..., prompt: _Optional[str] = ..., prompt_kind: _Optional[_Union[QueryPromptKind, str]] = ...) -> None: ...

class ListRequest(_message.Message):
    __slots__ = ("all",)
    ALL_FIELD_NUMBER: _ClassVar[int]
    all: bool
    def __init__(self, all: _Optional[bool] = ...) -> None: ...

class ListReply(_message.Message):
    __slots__ = ("sessions", "workers")
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    WORKERS_FIELD_NUMBER: _ClassVar[int]
    sessions: _containers.RepeatedCompositeFieldContainer[SessionInfo]
    workers: _containers.RepeatedCompositeFieldContainer[WorkerInfo]
    def __init__(self, sessions: _Optional[_Iterable[_Union[SessionInfo, _Mapping]]] = ..., workers: _Optional[_Iterable[_Union[WorkerInfo, _Mapping]]] = ...) -> None: ...

class AttachTarget(_message.Message):
    __slots__ = ("session_id", "rank", "following", "program_shown")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    FOLLOWING_FIELD_NUMBER: _ClassVar[int]
    PROGRAM_SHOWN_FIELD_NUMBER: _ClassVar[int]
    session_id: int
    rank: RankTarget
    following: bool
    program_shown: bool
    def __init__(self, session_id: _Optional[int] = ..., rank: _Optional[_Union[RankTarget, _Mapping]] = ..., following: _Optional[bool] = ..., program_shown: _Optional[bool] = ...) -> None: ...

class RankTarget(_message.Message):
    __slots__ = ("rank", "name")
    RANK_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    rank: int
    name: str
    def __init__(self, rank: _Optional[int] = ..., name: _Optional[str] = ...) -> None: ...

class AttachRequest(_message.Message):
    __slots__ = ("target", "input", "complete")
    TARGET_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    COMPLETE_FIELD_NUMBER: _ClassVar[int]
    target: AttachTarget
    input: Input
    complete: CompleteRequest
    def __init__(self, target: _Optional[_Union[AttachTarget, _Mapping]] = ..., input: _Optional[_Union[Input, _Mapping]] = ..., complete: _Optional[_Union[CompleteRequest, _Mapping]] = ...) -> None: ...

class Reply(_message.Message):
    __slots__ = ("output", "prompt", "frame", "ended", "reason", "prompt_kind")
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    FRAME_FIELD_NUMBER: _ClassVar[int]
    ENDED_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    PROMPT_KIND_FIELD_NUMBER: _ClassVar[int]
    output: str
    prompt: str
    frame: Frame
    ended: bool
    reason: EndReason
    prompt_kind: QueryPromptKind
    def __init__(self, output: _Optional[str] = ..., prompt: _Optional[str] = ..., frame: _Optional[_Union[Frame, _Mapping]] = ..., ended: _Optional[bool] = ..., reason: _Optional[_Union[EndReason, str]] = ..., prompt_kind: _Optional[_Union[QueryPromptKind, str]] = ...) -> None: ...

class AttachEvent(_message.Message):
    __slots__ = ("attached", "reply", "completions", "output", "shared")
    ATTACHED_FIELD_NUMBER: _ClassVar[int]
    REPLY_FIELD_NUMBER: _ClassVar[int]
    COMPLETIONS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    SHARED_FIELD_NUMBER: _ClassVar[int]
    attached: SessionInfo
    reply: Reply
    completions: Completions
    output: OutputChunk
    shared: ProgramShared
    def __init__(self, attached: _Optional[_Union[SessionInfo, _Mapping]] = ..., reply: _Optional[_Union[Reply, _Mapping]] = ..., completions: _Optional[_Union[Completions, _Mapping]] = ..., output: _Optional[_Union[OutputChunk, _Mapping]] = ..., shared: _Optional[_Union[ProgramShared, _Mapping]] = ...) -> None: ...

class ProgramShared(_message.Message):
    __slots__ = ("echo", "output", "reply")
    ECHO_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    REPLY_FIELD_NUMBER: _ClassVar[int]
    echo: ProgramEcho
    output: OutputChunk
    reply: Reply
    def __init__(self, echo: _Optional[_Union[ProgramEcho, _Mapping]] = ..., output: _Optional[_Union[OutputChunk, _Mapping]] = ..., reply: _Optional[_Union[Reply, _Mapping]] = ...) -> None: ...

class ProgramEcho(_message.Message):
    __slots__ = ("prompt", "line")
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    prompt: str
    line: str
    def __init__(self, prompt: _Optional[str] = ..., line: _Optional[str] = ...) -> None: ...

class CastRequest(_message.Message):
    __slots__ = ("selection", "command", "timeout_s", "batched")
    SELECTION_FIELD_NUMBER: _ClassVar[int]
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_S_FIELD_NUMBER: _ClassVar[int]
    BATCHED_FIELD_NUMBER: _ClassVar[int]
    selection: str
    command: str
    timeout_s: float
    batched: bool
    def __init__(self, selection: _Optional[str] = ..., command: _Optional[str] = ..., timeout_s: _Optional[float] = ..., batched: _Optional[bool] = ...) -> None: ...

class CastResult(_message.Message):
    __slots__ = ("session", "output", "error", "ended", "no_answer")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    ENDED_FIELD_NUMBER: _ClassVar[int]
    NO_ANSWER_FIELD_NUMBER: _ClassVar[int]
    session: SessionInfo
    output: str
    error: str
    ended: bool
    no_answer: bool
    def __init__(self, session: _Optional[_Union[SessionInfo, _Mapping]] = ..., output: _Optional[str] = ..., error: _Optional[str] = ..., ended: _Optional[bool] = ..., no_answer: _Optional[bool] = ...) -> None: ...

class CastEvent(_message.Message):
    __slots__ = ("session_id", "output", "result", "results")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    session_id: int
    output: OutputChunk
    result: CastResult
    results: _containers.RepeatedCompositeFieldContainer[CastResult]
    def __init__(self, session_id: _Optional[int] = ..., output: _Optional[_Union[OutputChunk, _Mapping]] = ..., result: _Optional[_Union[CastResult, _Mapping]] = ..., results: _Optional[_Iterable[_Union[CastResult, _Mapping]]] = ...) -> None: ...

class ContinueRequest(_message.Message):
    __slots__ = ("selection", "clear_breakpoints", "timeout_s")
    SELECTION_FIELD_NUMBER: _ClassVar[int]
    CLEAR_BREAKPOINTS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_S_FIELD_NUMBER: _ClassVar[int]
    selection: str
    clear_breakpoints: bool
    timeout_s: float
    def __init__(self, selection: _Optional[str] = ..., clear_breakpoints: _Optional[bool] = ..., timeout_s: _Optional[float] = ...) -> None: ...

class ContinueReply(_message.Message):
    __slots__ = ("resumed", "no_answer", "not_resumed")
    RESUMED_FIELD_NUMBER: _ClassVar[int]
    NO_ANSWER_FIELD_NUMBER: _ClassVar[int]
    NOT_RESUMED_FIELD_NUMBER: _ClassVar[int]
    resumed: _containers.RepeatedCompositeFieldContainer[SessionInfo]
    no_answer: _containers.RepeatedCompositeFieldContainer[SessionInfo]
    not_resumed: _containers.RepeatedCompositeFieldContainer[NotResumed]
    def __init__(self, resumed: _Optional[_Iterable[_Union[SessionInfo, _Mapping]]] = ..., no_answer: _Optional[_Iterable[_Union[SessionInfo, _Mapping]]] = ..., not_resumed: _Optional[_Iterable[_Union[NotResumed, _Mapping]]] = ...) -> None: ...

class NotResumed(_message.Message):
    __slots__ = ("session", "why")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    WHY_FIELD_NUMBER: _ClassVar[int]
    session: SessionInfo
    why: str
    def __init__(self, session: _Optional[_Union[SessionInfo, _Mapping]] = ..., why: _Optional[str] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("exits",)
    EXITS_FIELD_NUMBER: _ClassVar[int]
    exits: bool
    def __init__(self, exits: _Optional[bool] = ...) -> None: ...

class WatchEvent(_message.Message):
    __slots__ = ("kind", "session", "reason", "worker")
    KIND_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    WORKER_FIELD_NUMBER: _ClassVar[int]
    kind: WatchKind
    session: SessionInfo
    reason: EndReason
    worker: WorkerInfo
    def __init__(self, kind: _Optional[_Union[WatchKind, str]] = ..., session: _Optional[_Union[SessionInfo, _Mapping]] = ..., reason: _Optional[_Union[EndReason, str]] = ..., worker: _Optional[_Union[WorkerInfo, _Mapping]] = ...) -> None: ...

class WorkerInfo(_message.Message):
    __slots__ = ("identity", "state", "launcher", "exit_code", "signal", "frame", "host_lost")
    IDENTITY_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    LAUNCHER_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    FRAME_FIELD_NUMBER: _ClassVar[int]
    HOST_LOST_FIELD_NUMBER: _ClassVar[int]
    identity: Identity
    state: State
    launcher: str
    exit_code: int
    signal: int
    frame: Frame
    host_lost: bool
    def __init__(self, identity: _Optional[_Union[Identity, _Mapping]] = ..., state: _Optional[_Union[State, str]] = ..., launcher: _Optional[str] = ..., exit_code: _Optional[int] = ..., signal: _Optional[int] = ..., frame: _Optional[_Union[Frame, _Mapping]] = ..., host_lost: _Optional[bool] = ...) -> None: ...

class InterruptRequest(_message.Message):
    __slots__ = ("selection", "session_id", "timeout_s")
    SELECTION_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_S_FIELD_NUMBER: _ClassVar[int]
    selection: str
    session_id: int
    timeout_s: float
    def __init__(self, selection: _Optional[str] = ..., session_id: _Optional[int] = ..., timeout_s: _Optional[float] = ...) -> None: ...

class InterruptReply(_message.Message):
    __slots__ = ("ranks", "sessions", "no_answer")
    RANKS_FIELD_NUMBER: _ClassVar[int]
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    NO_ANSWER_FIELD_NUMBER: _ClassVar[int]
    ranks: _containers.RepeatedScalarFieldContainer[int]
    sessions: _containers.RepeatedCompositeFieldContainer[SessionInfo]
    no_answer: _containers.RepeatedCompositeFieldContainer[SessionInfo]
    def __init__(self, ranks: _Optional[_Iterable[int]] = ..., sessions: _Optional[_Iterable[_Union[SessionInfo, _Mapping]]] = ..., no_answer: _Optional[_Iterable[_Union[SessionInfo, _Mapping]]] = ...) -> None: ...

class StacksRequest(_message.Message):
    __slots__ = ("selection", "all_threads", "timeout_s")
    SELECTION_FIELD_NUMBER: _ClassVar[int]
    ALL_THREADS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_S_FIELD_NUMBER: _ClassVar[int]
    selection: str
    all_threads: bool
    timeout_s: float
    def __init__(self, selection: _Optional[str] = ..., all_threads: _Optional[bool] = ..., timeout_s: _Optional[float] = ...) -> None: ...

class RankStacks(_message.Message):
    __slots__ = ("identity", "state", "source", "threads", "error")
    IDENTITY_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    THREADS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    identity: Identity
    state: State
    source: StackSource
    threads: _containers.RepeatedCompositeFieldContainer[ThreadStack]
    error: str
    def __init__(self, identity: _Optional[_Union[Identity, _Mapping]] = ..., state: _Optional[_Union[State, str]] = ..., source: _Optional[_Union[StackSource, str]] = ..., threads: _Optional[_Iterable[_Union[ThreadStack, _Mapping]]] = ..., error: _Optional[str] = ...) -> None: ...

class StacksReply(_message.Message):
    __slots__ = ("ranks",)
    RANKS_FIELD_NUMBER: _ClassVar[int]
    ranks: _containers.RepeatedCompositeFieldContainer[RankStacks]
    def __init__(self, ranks: _Optional[_Iterable[_Union[RankStacks, _Mapping]]] = ...) -> None: ...

class QuerySessionRequest(_message.Message):
    __slots__ = ("session_id", "query", "timeout_s")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_S_FIELD_NUMBER: _ClassVar[int]
    session_id: int
    query: QueryRequest
    timeout_s: float
    def __init__(self, session_id: _Optional[int] = ..., query: _Optional[_Union[QueryRequest, _Mapping]] = ..., timeout_s: _Optional[float] = ...) -> None: ...

class CompareRequest(_message.Message):
    __slots__ = ("selection", "expression", "timeout_s")
    SELECTION_FIELD_NUMBER: _ClassVar[int]
    EXPRESSION_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_S_FIELD_NUMBER: _ClassVar[int]
    selection: str
    expression: str
    timeout_s: float
    def __init__(self, selection: _Optional[str] = ..., expression: _Optional[str] = ..., timeout_s: _Optional[float] = ...) -> None: ...

class CompareResult(_message.Message):
    __slots__ = ("session", "value", "error", "no_answer")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    NO_ANSWER_FIELD_NUMBER: _ClassVar[int]
    session: SessionInfo
    value: str
    error: str
    no_answer: bool
    def __init__(self, session: _Optional[_Union[SessionInfo, _Mapping]] = ..., value: _Optional[str] = ..., error: _Optional[str] = ..., no_answer: _Optional[bool] = ...) -> None: ...

class CompareReply(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[CompareResult]
    def __init__(self, results: _Optional[_Iterable[_Union[CompareResult, _Mapping]]] = ...) -> None: ...

class PipelineRequest(_message.Message):
    __slots__ = ("request_id", "add_breaks", "clear_breaks", "timings")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ADD_BREAKS_FIELD_NUMBER: _ClassVar[int]
    CLEAR_BREAKS_FIELD_NUMBER: _ClassVar[int]
    TIMINGS_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    add_breaks: _containers.RepeatedScalarFieldContainer[str]
    clear_breaks: bool
    timings: bool
    def __init__(self, request_id: _Optional[int] = ..., add_breaks: _Optional[_Iterable[str]] = ..., clear_breaks: _Optional[bool] = ..., timings: _Optional[bool] = ...) -> None: ...

class PipelineStepTimes(_message.Message):
    __slots__ = ("step", "started", "starts", "ends")
    STEP_FIELD_NUMBER: _ClassVar[int]
    STARTED_FIELD_NUMBER: _ClassVar[int]
    STARTS_FIELD_NUMBER: _ClassVar[int]
    ENDS_FIELD_NUMBER: _ClassVar[int]
    step: int
    started: float
    starts: _containers.RepeatedScalarFieldContainer[float]
    ends: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, step: _Optional[int] = ..., started: _Optional[float] = ..., starts: _Optional[_Iterable[float]] = ..., ends: _Optional[_Iterable[float]] = ...) -> None: ...

class PipelineProgress(_message.Message):
    __slots__ = ("kind", "stages_per_rank", "microbatches", "stage_to_rank", "actions", "step", "position", "in_step", "since_s", "steps")
    KIND_FIELD_NUMBER: _ClassVar[int]
    STAGES_PER_RANK_FIELD_NUMBER: _ClassVar[int]
    MICROBATCHES_FIELD_NUMBER: _ClassVar[int]
    STAGE_TO_RANK_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    IN_STEP_FIELD_NUMBER: _ClassVar[int]
    SINCE_S_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    kind: str
    stages_per_rank: int
    microbatches: int
    stage_to_rank: _containers.RepeatedScalarFieldContainer[int]
    actions: _containers.RepeatedScalarFieldContainer[str]
    step: int
    position: int
    in_step: bool
    since_s: float
    steps: _containers.RepeatedCompositeFieldContainer[PipelineStepTimes]
    def __init__(self, kind: _Optional[str] = ..., stages_per_rank: _Optional[int] = ..., microbatches: _Optional[int] = ..., stage_to_rank: _Optional[_Iterable[int]] = ..., actions: _Optional[_Iterable[str]] = ..., step: _Optional[int] = ..., position: _Optional[int] = ..., in_step: _Optional[bool] = ..., since_s: _Optional[float] = ..., steps: _Optional[_Iterable[_Union[PipelineStepTimes, _Mapping]]] = ...) -> None: ...

class PipelineReport(_message.Message):
    __slots__ = ("request_id", "error", "breaks", "progress")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    BREAKS_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    error: str
    breaks: _containers.RepeatedScalarFieldContainer[str]
    progress: PipelineProgress
    def __init__(self, request_id: _Optional[int] = ..., error: _Optional[str] = ..., breaks: _Optional[_Iterable[str]] = ..., progress: _Optional[_Union[PipelineProgress, _Mapping]] = ...) -> None: ...

class PipelineQuery(_message.Message):
    __slots__ = ("selection", "add_breaks", "clear_breaks", "timings")
    SELECTION_FIELD_NUMBER: _ClassVar[int]
    ADD_BREAKS_FIELD_NUMBER: _ClassVar[int]
    CLEAR_BREAKS_FIELD_NUMBER: _ClassVar[int]
    TIMINGS_FIELD_NUMBER: _ClassVar[int]
    selection: str
    add_breaks: _containers.RepeatedScalarFieldContainer[str]
    clear_breaks: bool
    timings: bool
    def __init__(self, selection: _Optional[str] = ..., add_breaks: _Optional[_Iterable[str]] = ..., clear_breaks: _Optional[bool] = ..., timings: _Optional[bool] = ...) -> None: ...

class PipelineRank(_message.Message):
    __slots__ = ("worker", "report", "error")
    WORKER_FIELD_NUMBER: _ClassVar[int]
    REPORT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    worker: WorkerInfo
    report: PipelineReport
    error: str
    def __init__(self, worker: _Optional[_Union[WorkerInfo, _Mapping]] = ..., report: _Optional[_Union[PipelineReport, _Mapping]] = ..., error: _Optional[str] = ...) -> None: ...

class PipelineReply(_message.Message):
    __slots__ = ("ranks",)
    RANKS_FIELD_NUMBER: _ClassVar[int]
    ranks: _containers.RepeatedCompositeFieldContainer[PipelineRank]
    def __init__(self, ranks: _Optional[_Iterable[_Union[PipelineRank, _Mapping]]] = ...) -> None: ...
