"""Everything a run reports while it works, and the one channel it reaches listeners by.

Owns the stream events (`TextDelta`, `ReasoningDelta`, `ToolCallStarted`, `ToolCallDelta`,
`ToolCallFinished`, `StreamEnd`), the run events (`MessageAdded`, `RequestSent`, `RetryEvent`,
`WireNotes`, `ModelChosen`, `ReplyReceived`, `ToolStarted`, `ToolFinished`, `ToolNote`,
`FirstToken`, `FirstToolStart`, `ToolAbandoned`, `ToolProgress`, `ToolAsked`, `ApprovalAwaited`,
`RunResumed`, `RunStopped`, `Compacted`, `FileSeen`), the
`Event` union of both, and the channel: `emit` and `listen`.

The channel is a context variable. A run listens (`listen`) while it waits on its model, so a
model shared by many runs at once reports each retry and each set of wire notes (`emit`) to the
run that is waiting on that request, and to no other. The loop hands every other event of a run
to the same listener, which passes it on to the run's listeners: its ``on_event`` callback and
its run log (`toolwire.agent.runlog.RunLog` is one such listener). Code that calls a model
directly hears its retries with ``with listen(callback): ...``. Imports only the transcript
values and the errors.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import Context, ContextVar, Token, copy_context
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING

from toolwire.errors import ProviderError, WireFormatError
from toolwire.transcript import Message, Reply, Request, ToolCallPart, ToolResultPart, Usage

if TYPE_CHECKING:
    from asyncio import AbstractEventLoop

# --------------------------------------------------------------------------- a reply as it streams


@dataclass(frozen=True, kw_only=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallStarted:
    index: int
    id: str
    name: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallDelta:
    index: int
    fragment: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallFinished:
    index: int
    call: ToolCallPart


@dataclass(frozen=True, kw_only=True, slots=True)
class StreamEnd:
    """The last event of every stream: the whole reply, as `decode_response` would give it."""

    reply: Reply


StreamEvent = (
    TextDelta | ReasoningDelta | ToolCallStarted | ToolCallDelta | ToolCallFinished | StreamEnd
)


# --------------------------------------------------------------------------- a run as it works


@dataclass(frozen=True, slots=True)
class MessageAdded:
    """The harness added a message to the history (the task, tool results, a nudge); ``index``
    is its place in the history."""

    index: int
    message: Message


@dataclass(frozen=True, slots=True)
class RequestSent:
    """Model call number ``turn`` is about to be made with ``request``."""

    turn: int
    request: Request


@dataclass(frozen=True, slots=True)
class RetryEvent:
    """A failed attempt at a model request that will be tried again after ``wait`` seconds.

    ``error`` is the provider's error, or a `WireFormatError` for a reply that arrived but could
    not be used. Deltas a stream gave before it broke belong to the failed attempt: the reply
    starts over."""

    attempt: int
    wait: float
    error: ProviderError | WireFormatError


@dataclass(frozen=True, slots=True)
class WireNotes:
    """What a codec changed to fit a request to its wire (names mapped, schemas rewritten,
    reasoning of another wire dropped...), each note as text."""

    wire: str
    notes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ModelChosen:
    """A fallback chain (`toolwire.fallback`) answered a model call. ``model`` is the name of
    the model whose reply it is (None: none did, and the run ends with the last error);
    ``failed`` holds, for each model tried before it, its name, why the chain moved on (or
    ended: a row of `toolwire.failover.table.FAILURES`) and the error's text; ``losses``, what
    the conversation lost or changed on its way to ``model``'s wire (when the model that
    answered before was another)."""

    model: str | None
    failed: tuple[tuple[str, str, str], ...] = ()
    losses: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ToolNote:
    """What a tool says about how it ran, for the run's notes (each text kept once per run): a
    command that ran without a sandbox says so. A tool gives one with `emit` while it runs."""

    source: str
    note: str


@dataclass(frozen=True, slots=True)
class ReplyReceived:
    """The model's reply to call ``turn``, which becomes history entry ``index``; ``seconds``
    the call took."""

    turn: int
    index: int
    reply: Reply
    seconds: float


@dataclass(frozen=True, slots=True)
class ToolStarted:
    """A tool call passed its checks and is about to run; ``early`` when it starts while its
    reply is still streaming (its block closed, the rest of the reply not yet in)."""

    turn: int
    call: ToolCallPart
    early: bool = False


@dataclass(frozen=True, slots=True)
class ToolFinished:
    """A tool call has its result (an error result too); ``seconds`` it took to run."""

    turn: int
    call: ToolCallPart
    result: ToolResultPart
    seconds: float


@dataclass(frozen=True, slots=True)
class FirstToken:
    """The first piece of model call ``turn``'s streamed reply came ``seconds`` after the
    request was about to be sent (the time to first token)."""

    turn: int
    seconds: float


@dataclass(frozen=True, slots=True)
class FirstToolStart:
    """The first tool of turn ``turn`` started ``seconds`` after its request was about to be
    sent; ``early`` when the reply was still streaming then."""

    turn: int
    seconds: float
    early: bool


@dataclass(frozen=True, slots=True)
class ToolAbandoned:
    """A call started early, for a reply that never became history (a stream that broke, was
    cut off, or was retried with other calls): its result goes to no one. ``finished`` says
    whether it ran to the end (its effects are whole: ``result`` holds what it returned) or
    was cancelled part of the way (``result`` is None); ``reason`` says why."""

    turn: int
    call: ToolCallPart
    finished: bool
    reason: str
    result: ToolResultPart | None = None


@dataclass(frozen=True, slots=True)
class ToolProgress:
    """A running tool said how far it has got (an MCP server's progress notification):
    ``progress`` of ``total`` (None when it does not know), with an optional ``message``;
    ``count`` is how many reports it stands for (the run log keeps one a second: the latest,
    counting those it left out; `toolwire.agent.pacing`)."""

    tool: str
    progress: float
    total: float | None = None
    message: str | None = None
    count: int = 1


@dataclass(frozen=True, slots=True)
class ToolAsked:
    """A running tool asked the user something (an MCP server's elicitation request):
    ``question``, what came of it (``action``: accept, decline or cancel) and ``reason`` when
    the user gave no answer."""

    tool: str
    question: str
    action: str
    reason: str = ""


@dataclass(frozen=True, slots=True)
class FileSeen:
    """A built-in file tool is about to touch ``path`` (relative to its workspace) for the
    first time: the SHA-256 of the file's content then (None: there was no file)."""

    path: str
    sha256: str | None


@dataclass(frozen=True, slots=True)
class ApprovalAwaited:
    """The run stops to wait for decisions on ``calls``, made by the reply of ``turn``."""

    turn: int
    calls: tuple[ToolCallPart, ...]


@dataclass(frozen=True, slots=True)
class RunResumed:
    """A run goes on from its log, which held ``messages`` history entries and ``turns``."""

    messages: int
    turns: int


@dataclass(frozen=True, slots=True)
class RunStopped:
    """The run ended: ``stop`` is its `toolwire.agent.run.RunStop` value, ``error`` what was
    raised when the stop is an error."""

    stop: str
    turns: int
    usage: Usage
    notes: tuple[str, ...]
    error: BaseException | None = None


@dataclass(frozen=True, slots=True)
class Compacted:
    """The history was made smaller to fit the model's context window: ``how`` (the strategy
    that did it), ``why`` (the threshold or the provider's error), its estimated tokens
    ``before`` and ``after``, and the history as it now stands."""

    how: str
    why: str
    before: int
    after: int
    messages: tuple[Message, ...]


RunEvent = (
    MessageAdded | RequestSent | RetryEvent | WireNotes | ReplyReceived | ToolStarted
    | ToolFinished | ToolNote | FirstToken | FirstToolStart | ToolAbandoned | ToolProgress
    | ToolAsked | ApprovalAwaited | RunResumed | RunStopped | Compacted | FileSeen | ModelChosen
)
Event = StreamEvent | RunEvent
"""Everything a run's listeners may be given."""

Listener = Callable[[Event], None]
"""Takes each event as it happens. It runs inside the run, so it should be quick and not raise."""


# --------------------------------------------------------------------------- the channel

_listener: ContextVar[Listener | None] = ContextVar("toolwire_listener", default=None)

hearing = _listener
"""The channel itself, for code that listens on every turn with no object made for it:
``token = hearing.set(callback)`` then ``hearing.reset(token)`` in a ``finally`` is
``with listen(callback):``."""


def emit(event: Event) -> None:
    """Give ``event`` to whoever listens in the current context (nobody: nothing happens).

    A model calls this for each retry it makes and with the notes of each request it encodes;
    a tool, with a `ToolNote` on how it ran.
    """
    listener = _listener.get()
    if listener is not None:
        listener(event)


def thread_context(loop: AbstractEventLoop) -> Context:
    """A copy of the current context for work handed to another thread: what that work emits
    reaches the current listener in ``loop``'s thread, in the order it was emitted."""
    context = copy_context()
    listener = _listener.get()
    if listener is not None:
        def relay(event: Event) -> None:
            if not loop.is_closed():  # else the run is over (a tool left running past it)
                loop.call_soon_threadsafe(listener, event)

        context.run(_listener.set, relay)
    return context


class listen:  # lower case: it is used like a function, ``with listen(callback):``
    """``with listen(callback):`` gives ``callback`` what is emitted inside the block, in this
    task and the tasks it starts; the listener that was there before is back afterwards."""

    __slots__ = ("_listener", "_token")

    def __init__(self, listener: Listener | None) -> None:
        self._listener = listener
        self._token: Token[Listener | None] | None = None

    def __enter__(self) -> None:
        self._token = _listener.set(self._listener)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._token is not None:
            _listener.reset(self._token)
            self._token = None


__all__ = [
    "ApprovalAwaited",
    "Event",
    "FileSeen",
    "FirstToken",
    "FirstToolStart",
    "Listener",
    "MessageAdded",
    "ModelChosen",
    "ReasoningDelta",
    "ReplyReceived",
    "RequestSent",
    "RetryEvent",
    "RunEvent",
    "RunResumed",
    "RunStopped",
    "StreamEnd",
    "StreamEvent",
    "TextDelta",
    "ToolAbandoned",
    "ToolAsked",
    "ToolCallDelta",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolFinished",
    "ToolNote",
    "ToolProgress",
    "ToolStarted",
    "WireNotes",
    "emit",
    "hearing",
    "listen",
    "thread_context",
]
