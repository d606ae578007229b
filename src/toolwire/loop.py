"""The agent loop: ask the model, answer every call it makes, repeat until something ends the run.

Owns `Agent`, `AgentRun`, `Step`, `RunResult` and `RunStop`. The loop itself is `Agent._loop`,
one async generator: limits are checked before each model call; the reply is appended exactly as
it came; then exactly one result per call, in call order, goes into one tool message. Each step
says what comes next, and the run's `RunResult.stop` says why it ended. `Agent.run` is a thin
sync wrapper over `Agent.arun`, which drains `Agent.steps`.

Tool calls are run by `toolwire.dispatch`; structured output and resuming from a run log live in
`toolwire._loop_extra`. Must not import codecs, the transport or the client: the model is
anything with the `toolwire.model.Model` protocol.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from types import TracebackType
from typing import Any, Generic, TypeVar, overload

from ._loop_extra import answer_calls, nudge_for_output, resume_state, start_state
from .codecs._base import StreamEnd
from .dispatch import Approver, Dispatcher, Policy
from .errors import ContextLengthError, ProviderError, StreamError
from .model import Model, model_name
from .runlog import RunLog
from .schema import Tool, Toolset
from .transcript import (
    Message,
    Reply,
    Request,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    Usage,
)

T = TypeVar("T")
OutputType = type[Any] | Mapping[str, Any]
"""A Pydantic model class (the output is an instance) or a JSON Schema (the output is a dict)."""


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
    """``time_limit`` seconds of wall time passed."""
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
    """The model raised a `ProviderError` (after its own retries); see `RunResult.error`."""
    MODEL_ERROR = "model_error"
    """The reply itself ended in an error (reply stop ``error`` or ``tool_call_failed``)."""
    OUTPUT_INVALID = "output_invalid"
    """Structured output was still missing or invalid after ``output_retries`` retries."""


_REPLY_STOPS: dict[str, RunStop] = {
    "max_tokens": RunStop.CUT_OFF,
    "refusal": RunStop.REFUSED,
    "content_filter": RunStop.CONTENT_FILTER,
    "context_window_exceeded": RunStop.CONTEXT_FULL,
    "error": RunStop.MODEL_ERROR,
    "tool_call_failed": RunStop.MODEL_ERROR,
}
"""Reply stops that end a run without an answer; any other stop without calls is an answer."""


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
class _State:
    """Everything one run changes as it goes."""

    messages: list[Message]
    request_base: Request
    output: Any = None  # a _loop_extra.OutputTool or None
    log: RunLog | None = None
    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    notes: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)
    output_value: Any = None
    output_failures: int = 0
    stop_reason: str | None = None
    result: RunResult[Any] | None = None

    def add(self, message: Message) -> None:
        if self.log is not None:
            self.log.message(len(self.messages), message)
        self.messages.append(message)

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
        if self.log is not None:
            detail = None if error is None else f"{type(error).__name__}: {error}"
            self.log.stop(stop, turns=self.turns, usage=self.usage, notes=self.notes,
                          error=detail)
            self.log.close()


class AgentRun(Generic[T]):
    """A run in progress, from `Agent.steps`: an async iterator of `Step`, one per model call.

    Iterate to drive the run; between steps, `stop` ends it before the next model call (the
    iteration then ends with ``result.stop == RunStop.STOPPED``). ``result`` is set once the
    iteration has ended; `drain` runs what is left and returns it. Leaving an
    ``async with agent.steps(task) as run:`` block closes a run that has not ended (stop
    ``stopped``).
    """

    def __init__(self, state: _State, steps: AsyncIterator[Step]) -> None:
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


Task = str | Message | Sequence[Message]
"""A run starts from a user message text, a message, or a conversation to continue."""


class Agent:
    """A model, its tools and the rules of the loop; reusable for many runs, also at once.

    Limits, checked before each model call: ``max_turns`` model calls, ``token_budget`` total
    tokens, ``cost_budget`` (summed `Usage.cost`), ``time_limit`` seconds. Tools: ``approval``
    is a `Policy` for all tools or a mapping of tool name to policy (``"*"`` for the rest) and
    ``approve`` decides ``ask`` calls; ``tool_timeout`` seconds for tools that set none;
    ``max_concurrency`` calls at once; results longer than ``max_output_chars`` are cut.
    Structured output: ``can_force_tool=False`` for a model that rejects a forced tool choice
    (Anthropic with extended thinking); ``output_retries`` bounds the retries of a bad answer.
    ``stream=True`` uses the model's ``stream`` when it has one, passing each event to
    ``on_event``. ``log`` is a run log path for every run (see `toolwire.runlog`).
    """

    def __init__(
        self,
        *,
        model: Model,
        tools: Iterable[Tool | Callable[..., Any]] = (),
        system: str | None = None,
        max_turns: int = 50,
        token_budget: int | None = None,
        cost_budget: float | None = None,
        time_limit: float | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        parallel_calls: bool | None = None,
        approval: Policy | Mapping[str, Policy] = "allow",
        approve: Approver | None = None,
        tool_timeout: float | None = 300.0,
        max_concurrency: int = 8,
        max_output_chars: int = 50_000,
        can_force_tool: bool = True,
        output_tool: str = "final_answer",
        output_retries: int = 2,
        stream: bool = False,
        on_event: Callable[[object], None] | None = None,
        log: str | os.PathLike[str] | None = None,
    ) -> None:
        self.model = model
        toolset = Toolset(tools)
        self.tools: tuple[Tool, ...] = tuple(toolset.values())
        self.system = system
        self.max_turns = max_turns
        self.token_budget = token_budget
        self.cost_budget = cost_budget
        self.time_limit = time_limit
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.parallel_calls = parallel_calls
        self.can_force_tool = can_force_tool
        self.output_tool = output_tool
        self.output_retries = output_retries
        self.stream = stream
        self.on_event = on_event
        self.log = log
        self.dispatcher = Dispatcher(
            toolset, policy=approval, approve=approve, max_concurrency=max_concurrency,
            timeout=tool_timeout, max_output_chars=max_output_chars,
        )
        self.specs: tuple[ToolSpec, ...] = tuple(t.spec for t in self.tools)

    # ------------------------------------------------------------------ entry points

    @overload
    def steps(self, task: Task, *, output: type[T], log: Any = None) -> AgentRun[T]: ...
    @overload
    def steps(
        self, task: Task, *, output: Mapping[str, Any] | None = None, log: Any = None
    ) -> AgentRun[Any]: ...

    def steps(
        self,
        task: Task,
        *,
        output: OutputType | None = None,
        log: str | os.PathLike[str] | None = None,
    ) -> AgentRun[Any]:
        """Start a run and return it as an async iterator of `Step` (see `AgentRun`)."""
        log = log if log is not None else self.log
        state = start_state(self, _task_messages(task), output, log)
        return AgentRun(state, self._loop(state))

    @overload
    async def arun(self, task: Task, *, output: type[T], log: Any = None) -> RunResult[T]: ...
    @overload
    async def arun(
        self, task: Task, *, output: Mapping[str, Any] | None = None, log: Any = None
    ) -> RunResult[Any]: ...

    async def arun(
        self,
        task: Task,
        *,
        output: OutputType | None = None,
        log: str | os.PathLike[str] | None = None,
    ) -> RunResult[Any]:
        """Run until something ends the run, and say what did."""
        return await self.steps(task, output=output, log=log).drain()

    @overload
    def run(self, task: Task, *, output: type[T], log: Any = None) -> RunResult[T]: ...
    @overload
    def run(
        self, task: Task, *, output: Mapping[str, Any] | None = None, log: Any = None
    ) -> RunResult[Any]: ...

    def run(
        self,
        task: Task,
        *,
        output: OutputType | None = None,
        log: str | os.PathLike[str] | None = None,
    ) -> RunResult[Any]:
        """`arun` for code without an event loop."""
        _no_running_loop("run")
        return asyncio.run(self.arun(task, output=output, log=log))

    async def aresume(
        self, log: str | os.PathLike[str], *, output: OutputType | None = None
    ) -> RunResult[Any]:
        """Continue the run recorded in ``log`` (see `toolwire._loop_extra.resume_state`)."""
        state = await resume_state(self, log, output)
        if state.result is not None:
            return state.result
        return await AgentRun[Any](state, self._loop(state)).drain()

    def resume(
        self, log: str | os.PathLike[str], *, output: OutputType | None = None
    ) -> RunResult[Any]:
        """`aresume` for code without an event loop."""
        _no_running_loop("resume")
        return asyncio.run(self.aresume(log, output=output))

    # ------------------------------------------------------------------ the loop

    async def _loop(self, s: _State) -> AsyncIterator[Step]:
        try:
            while True:
                stop = self._limit_reached(s)
                if stop is not None:
                    s.finish(stop)
                    return
                base = s.request_base
                request = Request(
                    model=base.model, messages=tuple(s.messages), system=base.system,
                    tools=base.tools, tool_choice=base.tool_choice, max_tokens=base.max_tokens,
                    temperature=base.temperature,
                )
                if s.log is not None:
                    s.log.request(s.turns + 1, len(s.messages), request.tool_choice)
                started = time.perf_counter()
                try:
                    reply = await self._ask(request)
                except ProviderError as exc:
                    full = isinstance(exc, ContextLengthError)
                    s.finish(RunStop.CONTEXT_FULL if full else RunStop.PROVIDER_ERROR, exc)
                    return
                seconds = time.perf_counter() - started
                s.turns += 1
                s.usage = s.usage + reply.usage
                if s.log is not None:
                    s.log.reply(s.turns, len(s.messages), reply, seconds)
                s.messages.append(reply.message)
                results, stop = await self._answer(s, reply)
                if stop is not None:
                    s.finish(stop)
                yield Step(turn=s.turns, request=request, reply=reply, results=results,
                           stop=stop, usage=s.usage, seconds=seconds)
                if stop is not None:
                    return
        except (GeneratorExit, asyncio.CancelledError):
            s.notes.append("the run was closed or cancelled before it ended")
            s.finish(RunStop.STOPPED)
            raise

    def _limit_reached(self, s: _State) -> RunStop | None:
        if s.stop_reason is not None:
            s.notes.append(s.stop_reason)
            return RunStop.STOPPED
        if s.turns >= self.max_turns:
            return RunStop.TURN_LIMIT
        if self.token_budget is not None and s.usage.total_tokens >= self.token_budget:
            return RunStop.TOKEN_BUDGET
        if self.cost_budget is not None and (s.usage.cost or 0.0) >= self.cost_budget:
            return RunStop.COST_BUDGET
        if self.time_limit is not None and time.monotonic() - s.started >= self.time_limit:
            return RunStop.TIME_LIMIT
        return None

    async def _ask(self, request: Request) -> Reply:
        stream = getattr(self.model, "stream", None) if self.stream else None
        if stream is None:
            return await self.model.complete(request)
        reply: Reply | None = None
        async for event in stream(request):
            if self.on_event is not None:
                self.on_event(event)
            if isinstance(event, StreamEnd):
                reply = event.reply
        if reply is None:
            raise StreamError("the model's stream ended without a whole reply")
        return reply

    async def _answer(
        self, s: _State, reply: Reply
    ) -> tuple[tuple[ToolResultPart, ...], RunStop | None]:
        """Answer the reply's calls (if any) and decide whether the run goes on."""
        calls = reply.tool_calls
        if reply.truncated_call:
            s.notes.append(
                f"turn {s.turns}: the reply was cut off by the token limit in the middle of a "
                "tool call; its calls were not run"
            )
            results = tuple(_cut_off(c) for c in calls)
            if results:
                s.add(Message(role="tool", parts=results))
            return results, RunStop.CUT_OFF
        if calls:
            found, stop = await answer_calls(self, s, calls)
            results = tuple(found)
            s.add(Message(role="tool", parts=results))
            return results, stop
        if reply.stop == "pause_turn":
            return (), None
        stop = _REPLY_STOPS.get(reply.stop, RunStop.ANSWERED)
        if stop is RunStop.ANSWERED and s.output is not None:
            return (), nudge_for_output(self, s)
        return (), stop

    async def run_calls(self, s: _State, calls: Sequence[ToolCallPart]) -> list[ToolResultPart]:
        """Dispatch ``calls``, logging each one's start and end when the run has a log."""
        log, turn = s.log, s.turns
        if log is None:
            return await self.dispatcher.run(calls)
        return await self.dispatcher.run(
            calls,
            on_start=lambda call: log.call_start(turn, call),
            on_end=lambda call, result, seconds: log.call_end(turn, result, seconds),
        )

    def __repr__(self) -> str:
        return f"Agent(model={model_name(self.model)!r}, tools={[t.name for t in self.tools]})"


def _cut_off(call: ToolCallPart) -> ToolResultPart:
    return ToolResultPart(
        call_id=call.id, name=call.name, is_error=True,
        content="Not run: the reply was cut off by the output token limit while this call was "
        "being written, so its arguments may be incomplete.",
    )


def _task_messages(task: Task) -> list[Message]:
    if isinstance(task, str):
        return [Message.user(task)]
    if isinstance(task, Message):
        return [task]
    return list(task)


def _no_running_loop(name: str) -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise RuntimeError(
        f"Agent.{name}() cannot run inside a running event loop; use `await agent.a{name}(...)`"
    )


__all__ = ["Agent", "AgentRun", "RunResult", "RunStop", "Step", "Task"]
