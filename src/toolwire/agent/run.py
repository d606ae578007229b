"""The values of one agent run: why it stopped, its steps, its result, and its live state.

Owns `RunStop`, `Continue` and `Next` (what comes after a step), `Step`, `RunResult`,
`AgentRun` (a run in progress, iterated step by step) and `RunState` (everything a run changes
as it goes, and the run's channel: `RunState.emit` hands each `toolwire.events` event to the
run's listeners, the run log among them), and `Task` with `task_messages` (what a run starts
from, as the messages it begins with). The loop drives
them; this module does nothing by itself. Must not import the loop, dispatch, codecs, the
transport or the run log (a log is just one of the listeners).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from types import TracebackType
from typing import Any, Generic, TypeVar

from toolwire.agent.toollist import ToolList
from toolwire.errors import (
    ContextLengthError,
    ProviderError,
    ResponseTooLarge,
    TranscriptError,
    WireFormatError,
)
from toolwire.events import (
    Event,
    Listener,
    MessageAdded,
    ReplyReceived,
    RequestSent,
    RunStopped,
    ToolNote,
    WireNotes,
)
from toolwire.transcript import (
    MediaPart,
    Message,
    Reply,
    Request,
    TextPart,
    ToolResultPart,
    Usage,
)

T = TypeVar("T")
OutputType = type[Any] | Mapping[str, Any]
"""A Pydantic model class (the output is an instance) or a JSON Schema (the output is a dict)."""


Task = str | Message | Sequence[Message] | Sequence[str | TextPart | MediaPart]
"""A run starts from a user message text, a message, a conversation to continue, or the parts of
one user message: text and media (``[text, toolwire.Image.from_path("chart.png")]``)."""


def task_messages(task: Task) -> list[Message]:
    """The messages a run starts from; a `TranscriptError` naming an item that is neither."""
    if isinstance(task, str):
        return [Message.user(task)]
    if isinstance(task, Message):
        return [task]
    items = list(task)
    if all(isinstance(item, Message) for item in items):
        return items  # type: ignore[return-value]
    parts: list[TextPart | MediaPart] = []
    for n, item in enumerate(items):
        if isinstance(item, str):
            parts.append(TextPart(text=item))
        elif isinstance(item, (TextPart, MediaPart)):
            parts.append(item)
        else:
            raise TranscriptError(
                f"task item {n} is a {type(item).__name__}: a task is a text, a message, a list "
                "of messages, or a list of text and media parts (toolwire.Image, Document, "
                "Audio) for one user message, not a mix")
    return [Message(role="user", parts=tuple(parts))]


class RunStop(StrEnum):
    """Why a run ended. Each member equals its string value (``RunStop.ANSWERED == "answered"``)."""

    ANSWERED = "answered"
    """The model gave its answer: a reply with no tool calls, or a valid structured output."""
    TURN_LIMIT = "turn_limit"
    """``max_turns`` model calls were made."""
    TOKEN_BUDGET = "token_budget"
    """The run's summed tokens reached ``token_budget``."""
    COST_BUDGET = "cost_budget"
    """The run's summed cost (`Usage.cost`, as the model reported it) reached ``cost_budget``."""
    TIME_LIMIT = "time_limit"
    """``time_limit`` seconds of wall time passed: checked before each model call, and it also
    interrupts a model call (a stream that trickles) or a tool still running at that moment."""
    CUT_OFF = "cut_off"
    """A reply hit the output token limit: an answer cut short, or a call cut off mid-way
    (such calls are not run; each gets an error result saying so)."""
    REFUSED = "refused"
    """The model refused (reply stop ``refusal``)."""
    CONTENT_FILTER = "content_filter"
    """The provider's content filter stopped the reply."""
    CONTEXT_FULL = "context_full"
    """The conversation no longer fits the model's context window."""
    STOPPED = "stopped"
    """Stopped by the caller: `AgentRun.stop`, or the step iteration was closed or cancelled."""
    PROVIDER_ERROR = "provider_error"
    """The provider refused or failed: the model raised a `ProviderError` (after its own
    retries); see `RunResult.error`."""
    BAD_REPLY = "bad_reply"
    """A reply arrived but could not be used: not the wire's shape, unreadable bytes or events,
    an error body sent with a success status, or a reply that holds nothing (no text, no tool
    call); the model raised a `WireFormatError` (after sending the request once more) or gave
    such a reply. The bad reply is not added to the transcript; see `RunResult.error`."""
    MODEL_ERROR = "model_error"
    """The reply itself ended in an error (reply stop ``error`` or ``tool_call_failed``)."""
    OUTPUT_INVALID = "output_invalid"
    """Structured output was still missing or invalid after ``output_retries`` retries."""
    TOO_LARGE = "too_large"
    """A model server sent more than a bound allows: the model raised
    `toolwire.errors.ResponseTooLarge`, which names the bound (`toolwire.http.limits.Limits`)."""
    AWAITING_APPROVAL = "awaiting_approval"
    """A reply's calls need a decision (their tool's policy is ``defer``): none of them ran;
    the run log holds them, and `toolwire.Agent.resume` with ``decisions`` goes on."""


@dataclass(frozen=True, slots=True)
class Continue:
    """The run goes on to another model call; ``why`` says what let it (its calls were
    answered, the provider paused the turn, the model was asked again for its output...)."""

    why: str


Next = RunStop | Continue
"""What comes after a step, decided explicitly: the run ends (a `RunStop`, which says why) or
goes on (`Continue`). The loop reads it with ``match``."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Step:
    """One model call and what the loop did with it.

    ``results`` answer the reply's calls in call order (empty when there were none).
    ``stop`` is None when the loop goes on to the next model call, else why the run ended.
    ``usage`` is the run's total so far; ``seconds`` is how long the model took.
    """

    turn: int
    request: Request
    reply: Reply
    results: tuple[ToolResultPart, ...]
    stop: RunStop | None
    usage: Usage
    seconds: float

    @property
    def done(self) -> bool:
        return self.stop is not None


@dataclass(frozen=True, kw_only=True, slots=True)
class RunResult(Generic[T]):
    """How a run ended.

    ``messages`` is the whole transcript (the system prompt is not in it). ``answer`` is the
    text of the last assistant message. ``output`` is the parsed structured output when one was
    asked for and given. ``notes`` say what the loop changed or noticed along the way.
    """

    stop: RunStop
    messages: tuple[Message, ...]
    answer: str
    output: T | None
    usage: Usage
    turns: int
    notes: tuple[str, ...] = ()
    error: BaseException | None = None

    @property
    def ok(self) -> bool:
        return self.stop is RunStop.ANSWERED


@dataclass(slots=True)
class RunState:
    """Everything one run changes as it goes.

    ``listeners`` get every event of the run through `emit`, in order; the wire notes and tool
    notes among them also go into ``notes``, each once. ``close`` is called when the run stops
    before it ends (a bug, a crash): it lets a run log close without a stop line, so it can be
    resumed.
    """

    messages: list[Message]
    request_base: Request
    output: Any = None  # a toolwire.agent.output.OutputTool or None
    listeners: tuple[Listener, ...] = ()
    close: Callable[[], None] | None = None
    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    notes: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)
    deadline: float | None = None
    """When the run's ``time_limit`` runs out (`time.monotonic`), if it has one."""
    output_value: Any = None
    output_failures: int = 0
    stop_reason: str | None = None
    result: RunResult[Any] | None = None
    last_usage: Usage | None = None
    """The last reply's usage, and the place of its message in ``messages`` (`last_index`):
    what the context held then (None once the history was compacted)."""
    last_index: int = 0
    tool_list: ToolList | None = None
    """The tools the run shows beyond its first request's, when they can grow (see
    `toolwire.agent.toollist`)."""

    def emit(self, event: Event) -> None:
        """Hand ``event`` to the run: its wire notes to ``notes``, the event to each listener."""
        if type(event) is WireNotes:
            for note in event.notes:  # the same notes come every turn: keep each once
                self.note_once(f"{event.wire}: {note}")
        elif type(event) is ToolNote:
            self.note_once(f"{event.source}: {event.note}")
        for listener in self.listeners:
            listener(event)

    def note_once(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def add(self, message: Message) -> None:
        """Add a message the harness wrote (the task, tool results, a nudge)."""
        if self.listeners:
            self.emit(MessageAdded(len(self.messages), message))
        self.messages.append(message)
        if self.tool_list is not None and message.role == "tool" and len(self.messages) > 1:
            self.notes.extend(self.tool_list.answered(
                self.request_base.tools, self.messages[-2], message, self.turns,
                len(self.messages)))

    def next_request(self) -> Request:
        """The request for the next model call: the fixed parts and the history as it stands."""
        base = self.request_base
        tools = base.tools
        messages = tuple(self.messages)
        if self.tool_list is not None:  # tools added mid-run: where they were added
            self.notes.extend(self.tool_list.poll(tools, self.turns + 1, len(messages)))
            messages = self.tool_list.messages(messages)
        request = Request(
            model=base.model, messages=messages, system=base.system,
            tools=tools, tool_choice=base.tool_choice, max_tokens=base.max_tokens,
            temperature=base.temperature, provider_options=base.provider_options,
            cache=base.cache, context_management=base.context_management,
            reasoning=base.reasoning,
        )
        if self.listeners:
            self.emit(RequestSent(self.turns + 1, request))
        return request

    def add_reply(self, reply: Reply, seconds: float) -> None:
        """Count the turn and its usage and append the reply's message exactly as it came."""
        self.turns += 1
        self.usage = self.usage + reply.usage
        self.last_usage, self.last_index = reply.usage, len(self.messages)
        if self.listeners:
            self.emit(ReplyReceived(self.turns, len(self.messages), reply, seconds))
        self.messages.append(reply.message)

    def finish(self, stop: RunStop, error: BaseException | None = None) -> None:
        if self.result is not None:
            return
        answer = ""
        if self.messages and self.messages[-1].role == "assistant":
            answer = self.messages[-1].text
        elif len(self.messages) > 1 and self.messages[-2].role == "assistant":
            answer = self.messages[-2].text
        self.result = RunResult(
            stop=stop, messages=tuple(self.messages), answer=answer, output=self.output_value,
            usage=self.usage, turns=self.turns, notes=tuple(self.notes), error=error,
        )
        if self.listeners:
            self.emit(RunStopped(str(stop), self.turns, self.usage, tuple(self.notes), error))

    def abort(self) -> None:
        """The run cannot go on and has no stop to report (a bug, a test double's complaint)."""
        if self.close is not None:
            self.close()


class AgentRun(Generic[T]):
    """A run in progress, from `Agent.steps`: an async iterator of `Step`, one per model call.

    Iterate to drive the run; between steps, `stop` ends it before the next model call (the
    iteration then ends with ``result.stop == RunStop.STOPPED``). ``result`` is set once the
    iteration has ended; `drain` runs what is left and returns it. Leaving an
    ``async with agent.steps(task) as run:`` block closes a run that has not ended (stop
    ``stopped``).
    """

    def __init__(self, state: RunState, steps: AsyncIterator[Step]) -> None:
        self._state = state
        self._steps = steps

    def __aiter__(self) -> AgentRun[T]:
        return self

    async def __anext__(self) -> Step:
        return await self._steps.__anext__()

    @property
    def messages(self) -> tuple[Message, ...]:
        """The transcript so far."""
        return tuple(self._state.messages)

    def stop(self, reason: str = "") -> None:
        """End the run before its next model call; ``reason`` goes into the notes."""
        self._state.stop_reason = reason or "stopped by the caller"

    @property
    def result(self) -> RunResult[T]:
        if self._state.result is None:
            raise RuntimeError("the run has not ended yet; iterate it to the end or await drain()")
        return self._state.result

    async def drain(self) -> RunResult[T]:
        async for _ in self._steps:
            pass
        return self.result

    async def aclose(self) -> None:
        close = getattr(self._steps, "aclose", None)
        if close is not None:
            await close()
        self._state.finish(RunStop.STOPPED)

    async def __aenter__(self) -> AgentRun[T]:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def error_stop(exc: ProviderError | WireFormatError) -> RunStop:
    """The stop for what a model raised: a reply it could not use, or the provider failing."""
    if isinstance(exc, ContextLengthError):
        return RunStop.CONTEXT_FULL
    if isinstance(exc, ResponseTooLarge):
        return RunStop.TOO_LARGE
    if isinstance(exc, WireFormatError):
        return RunStop.BAD_REPLY
    return RunStop.PROVIDER_ERROR


__all__ = ["AgentRun", "Continue", "Next", "OutputType", "RunResult", "RunState", "RunStop",
           "Step"]
