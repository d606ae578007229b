"""What a run reports while it works, besides the stream of the model's reply.

Owns `RetryEvent`, `ToolStarted`, `ToolFinished` and `retry_hook`. The loop passes each of these
to its ``on_event`` callback and writes retries to the run log. `retry_hook` is how a model tells
the run that is waiting on it that it is retrying: a context variable, so that many runs sharing
one model each hear only about their own requests. Imports only the transcript values.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass

from .errors import ProviderError
from .transcript import ToolCallPart, ToolResultPart


@dataclass(frozen=True, slots=True)
class RetryEvent:
    """A failed attempt at a model request that will be tried again after ``wait`` seconds."""

    attempt: int
    wait: float
    error: ProviderError


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


retry_hook: ContextVar[Callable[[RetryEvent], None] | None] = ContextVar(
    "toolwire_retry_hook", default=None
)
"""Set by the run waiting on a model; a model calls it before each retry it makes."""

__all__ = ["RetryEvent", "ToolFinished", "ToolStarted", "retry_hook"]
