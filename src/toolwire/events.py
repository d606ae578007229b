"""What a run reports while it works, besides the stream of the model's reply.

Owns `RetryEvent`, `WireNotes`, `ToolStarted`, `ToolFinished` and `model_hook`. The loop passes
each of these to its ``on_event`` callback, writes retries to the run log and keeps the wire
notes in the run's notes. `model_hook` is how a model tells the run waiting on it that it is
retrying, or what its codec changed to fit the wire: a context variable, so that many runs
sharing one model each hear only about their own requests. Imports only the transcript values.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass

from toolwire.errors import ProviderError
from toolwire.transcript import Reply, ToolCallPart, ToolResultPart

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
class RetryEvent:
    """A failed attempt at a model request that will be tried again after ``wait`` seconds."""

    attempt: int
    wait: float
    error: ProviderError


@dataclass(frozen=True, slots=True)
class WireNotes:
    """What a codec changed to fit a request to its wire (names mapped, schemas rewritten,
    reasoning of another wire dropped...), each note as text."""

    wire: str
    notes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ToolStarted:
    """A tool call passed its checks and is about to run."""

    turn: int
    call: ToolCallPart


@dataclass(frozen=True, slots=True)
class ToolFinished:
    """A tool call has its result (an error result too); ``seconds`` it took to run."""

    turn: int
    call: ToolCallPart
    result: ToolResultPart
    seconds: float


model_hook: ContextVar[Callable[[RetryEvent | WireNotes], None] | None] = ContextVar(
    "toolwire_model_hook", default=None
)
"""Set by the run waiting on a model; the model calls it with the notes of each request it
encodes and before each retry it makes."""

__all__ = [
    "ReasoningDelta",
    "RetryEvent",
    "StreamEnd",
    "StreamEvent",
    "TextDelta",
    "ToolCallDelta",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolFinished",
    "ToolStarted",
    "WireNotes",
    "model_hook",
]
