"""One model call as it streams: its timings, and the calls started before the reply is whole.

Owns `TurnWatch`. The loop gives it every event of a model call (the stream's events, and the
retries the model reports); it emits `FirstToken` at the first piece of the reply and
`FirstToolStart` at the turn's first tool start, and, when eager execution is on, starts each
call whose block has closed in the stream as soon as the dispatcher says it may start early (a
``read_only`` tool whose policy lets it run; an ``ask`` tool is asked at once). The results of
those calls are not sent anywhere yet: once the reply is whole, `TurnWatch.claim` hands the
dispatcher, for each call of the reply, the result of the early call that matches it (same
name and arguments, the same id first), so every call still gets one result, in call order,
after the reply. A call of an attempt the model gave up on (a broken stream retried as a
whole) is kept for the retried reply when that reply carries the same call, and is not run
twice. Early calls no reply claims (the reply broke off, was cut off, or came back with other
calls) are cancelled when still running and reported by `TurnWatch.abandon`: a `ToolAbandoned`
event (the run log keeps it) and a note, saying which finished and which were cancelled.

Must not import the loop, codecs, the transport or the run log: it works on `toolwire.events`,
canonical values and the `Dispatcher`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from toolwire.agent.dispatch import Dispatcher
from toolwire.events import (
    Event,
    FirstToken,
    FirstToolStart,
    ReasoningDelta,
    RetryEvent,
    TextDelta,
    ToolAbandoned,
    ToolCallDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolFinished,
    ToolStarted,
)
from toolwire.transcript import ToolCallPart, ToolResultPart, replace

_PIECES = (TextDelta, ReasoningDelta, ToolCallStarted, ToolCallDelta)

_leftover: set[asyncio.Task[ToolResultPart]] = set()
"""Cancelled early calls still winding down, held so they end quietly."""


@dataclass(slots=True)
class _Early:
    call: ToolCallPart
    task: asyncio.Task[ToolResultPart]
    attempt: int
    claimed: bool = False


class TurnWatch:
    """Watches one model call (turn ``turn``) for its run, whose events go to ``emit``.

    ``dispatcher`` and ``deadline`` run the early calls when ``eager`` is on; ``started`` is
    when the request was about to be sent (`time.perf_counter`).
    """

    def __init__(self, turn: int, emit: Callable[[Event], None], dispatcher: Dispatcher, *,
                 eager: bool, deadline: float | None, notes: list[str]) -> None:
        self.turn = turn
        self._emit = emit
        self._dispatcher = dispatcher
        self._eager = eager
        self._deadline = deadline
        self._notes = notes
        self.started = time.perf_counter()
        self.streaming = True
        self.first_token: float | None = None
        self.first_tool: float | None = None
        self._attempt = 0
        self.early: list[_Early] = []
        """The calls started early this turn (none: `abandon` has nothing to do)."""
        self._asking: asyncio.Future[None] | None = None  # the last early approval asked

    # ------------------------------------------------------------------ what the run hears

    def emit(self, event: Event) -> None:
        """Pass ``event`` to the run, after noting what it says about this model call."""
        kind = type(event)
        if kind is RetryEvent:
            self._attempt += 1
        elif self.first_token is None and kind in _PIECES:
            self.first_token = time.perf_counter() - self.started
            self._emit(event)
            self._emit(FirstToken(self.turn, self.first_token))
            return
        self._emit(event)
        if kind is ToolCallFinished and self._eager:
            self._offer(event.call)  # type: ignore[union-attr]

    def tool_started(self, turn: int, call: ToolCallPart, early: bool = False) -> None:
        """A tool is starting: `ToolStarted`, after `FirstToolStart` for the turn's first."""
        if self.first_tool is None:
            self.first_tool = time.perf_counter() - self.started
            self._emit(FirstToolStart(turn, self.first_tool, early))
        self._emit(ToolStarted(turn=turn, call=call, early=early))

    def tool_finished(self, turn: int, call: ToolCallPart, result: ToolResultPart,
                      seconds: float) -> None:
        self._emit(ToolFinished(turn=turn, call=call, result=result, seconds=seconds))

    # ------------------------------------------------------------------ early calls

    def _offer(self, call: ToolCallPart) -> None:
        """A call's block closed: keep a matching call of an abandoned attempt, else start it
        if it may start early."""
        for early in self.early:
            if early.attempt < self._attempt and not early.claimed and _same(early.call, call):
                early.attempt = self._attempt  # the retried reply carries it: kept, not rerun
                return
        if not self._dispatcher.may_start_early(call) or any(
                e.call.id == call.id and e.attempt == self._attempt for e in self.early):
            return  # a second call of one id never starts: the reply is refused (loop)
        before, asked = self._asking, asyncio.get_running_loop().create_future()
        self._asking = asked
        task = asyncio.ensure_future(self._run_early(call, before, asked))
        task.add_done_callback(_release(asked))
        self.early.append(_Early(call, task, self._attempt))

    async def _run_early(self, call: ToolCallPart, before: asyncio.Future[None] | None,
                         asked: asyncio.Future[None]) -> ToolResultPart:
        if before is not None:  # approvals are asked one at a time, in the order calls close
            await asyncio.shield(before)
        dispatcher, turn = self._dispatcher, self.turn
        admitted = await dispatcher.admit(call, self._deadline)
        if not asked.done():
            asked.set_result(None)

        def started(c: ToolCallPart) -> None:
            self.tool_started(turn, c, early=self.streaming)

        def finished(c: ToolCallPart, result: ToolResultPart, seconds: float) -> None:
            self.tool_finished(turn, c, result, seconds)

        return await dispatcher.start(call, admitted, on_start=started, on_end=finished,
                                      deadline=self._deadline)

    def claim(self, calls: Sequence[ToolCallPart]) -> dict[int, Awaitable[ToolResultPart]]:
        """For each call of the whole reply that an early call matches, that call's result
        (answering the reply's id); the reply's stream is over."""
        self.streaming = False
        found: dict[int, Awaitable[ToolResultPart]] = {}
        if not self.early:
            return found
        for same_id in (True, False):
            for i, call in enumerate(calls):
                if i in found:
                    continue
                for early in self.early:
                    if not early.claimed and _same(early.call, call) and (
                            not same_id or early.call.id == call.id):
                        early.claimed = True
                        found[i] = _answering(early.task, call)
                        break
        return found

    def abandon(self, why: str) -> None:
        """Report the early calls no reply claimed (cancelling those still running): their
        results go to no one. ``why`` says what became of their reply."""
        self.streaming = False
        for early in self.early:
            if early.claimed:
                continue
            early.claimed = True
            task = early.task
            finished = task.done() and not task.cancelled()
            result = task.result() if finished else None
            if not task.done():
                task.cancel()
                _leftover.add(task)
                task.add_done_callback(_leftover.discard)
            what = "had finished" if finished else "was cancelled while running"
            name = f"{early.call.name} (call {early.call.id})"
            self._notes.append(f"turn {self.turn}: {name} was started early and {what}: {why}; "
                               "any effects it had remain, and no result was sent for it")
            self._emit(ToolAbandoned(self.turn, early.call, finished, why, result))


def _same(a: ToolCallPart, b: ToolCallPart) -> bool:
    return a.name == b.name and a.arguments == b.arguments


async def _answering(task: asyncio.Task[ToolResultPart], call: ToolCallPart) -> ToolResultPart:
    result = await task
    return result if result.call_id == call.id else replace(result, call_id=call.id)


def _release(asking: asyncio.Future[None]) -> Callable[[object], None]:
    """When an early call ends before its approval was settled, let the next one ask."""

    def done(_: object) -> None:
        if not asking.done():
            asking.set_result(None)

    return done


__all__ = ["TurnWatch"]
