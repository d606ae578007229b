"""What a turn does with a reply it kept: its calls answered, and what comes next decided.

Owns `answer` (exactly one result per call, in call order, in one tool message, then a stop or
`Continue`: a reply cut off mid-call, calls waiting for decisions, structured output, a reply
stop that ends the run), `run_calls` (the calls handed to the dispatcher, the run told of each
one's start and end, the calls started early answered by their results) and `abandon`. What a
running tool emits (a `ToolNote`, its progress) reaches the run: the dispatcher runs the calls
while the run listens (`toolwire.events.hearing`). A run with no structured output runs a
reply's calls itself, as `answer_calls` would with no output tool. Must not import the loop,
codecs, the transport or the client.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from toolwire.agent.dispatch import Dispatcher, cut_off
from toolwire.agent.early import TurnWatch
from toolwire.agent.output import ANSWERED, answer_calls, nudge_for_output
from toolwire.agent.run import Continue, Next, RunState, RunStop
from toolwire.events import ApprovalAwaited, ToolFinished, ToolStarted, hearing, listen
from toolwire.transcript import Message, Reply, ToolCallPart, ToolResultPart

_REPLY_STOPS: dict[str, RunStop] = {
    "max_tokens": RunStop.CUT_OFF,
    "refusal": RunStop.REFUSED,
    "content_filter": RunStop.CONTENT_FILTER,
    "context_window_exceeded": RunStop.CONTEXT_FULL,
    "error": RunStop.MODEL_ERROR,
    "tool_call_failed": RunStop.MODEL_ERROR,
}
"""Reply stops that end a run without an answer; any other stop without calls is an answer."""


async def answer(
    s: RunState, reply: Reply, calls: tuple[ToolCallPart, ...], watch: TurnWatch | None,
    dispatcher: Dispatcher, retries: int,
) -> tuple[tuple[ToolResultPart, ...], Next]:
    """Answer the reply's ``calls`` (if any) with ``dispatcher`` and decide what comes next:
    a stop, or `Continue`. ``retries`` are the bad final answers a run takes."""
    if reply.truncated_call:
        s.notes.append(
            f"turn {s.turns}: the reply was cut off by the token limit in the middle of a "
            "tool call; its calls were not run"
        )
        abandon(watch, "the reply was cut off by the output token limit")
        results = tuple(cut_off(c) for c in calls)
        if results:
            s.add(Message(role="tool", parts=results))
        return results, RunStop.CUT_OFF
    if calls and dispatcher.defers and (waiting := dispatcher.awaiting(calls)):
        abandon(watch, "the run stopped to wait for decisions on its calls")
        s.emit(ApprovalAwaited(s.turns, tuple(waiting)))
        s.notes.append(f"turn {s.turns}: waiting for decisions on "
                       f"{', '.join(c.id for c in waiting)}; resume with them")
        return (), RunStop.AWAITING_APPROVAL
    if calls:
        if s.output is None:  # no call is a final answer: `answer_calls` would run them all
            results = tuple(await run_calls(dispatcher, s, calls, watch))
            after: Next = ANSWERED
        else:
            ran = functools.partial(run_calls, dispatcher, watch=watch)
            found, after = await answer_calls(s, calls, ran, retries)
            results = tuple(found)
        s.add(Message(role="tool", parts=results))
        return results, after
    if reply.stop == "pause_turn":
        return (), Continue("the provider paused the turn; the model goes on from it")
    stop = _REPLY_STOPS.get(reply.stop, RunStop.ANSWERED)
    if stop is RunStop.ANSWERED and s.output is not None:
        return (), nudge_for_output(s, retries)
    return (), stop


async def run_calls(dispatcher: Dispatcher, s: RunState, calls: Sequence[ToolCallPart],
                    watch: TurnWatch | None = None) -> list[ToolResultPart]:
    """Dispatch ``calls``, telling the run of each one's start and end; the calls ``watch``
    started early are answered by their results."""
    early = watch.claim(calls) if watch is not None and watch.early else None
    if not s.listeners:
        token = hearing.set(s.emit)  # what the tools say of how they ran (a ToolNote)
        try:
            return await dispatcher.run(calls, deadline=s.deadline, early=early)
        finally:
            hearing.reset(token)
    turn, emit = s.turns, s.emit

    def started(call: ToolCallPart) -> None:
        if watch is not None:
            watch.tool_started(turn, call)
        else:
            emit(ToolStarted(turn=turn, call=call))

    def finished(call: ToolCallPart, result: ToolResultPart, seconds: float) -> None:
        emit(ToolFinished(turn=turn, call=call, result=result, seconds=seconds))

    with listen(emit):  # what a running tool reports (its progress...) reaches the run
        return await dispatcher.run(calls, on_start=started, on_end=finished,
                                    deadline=s.deadline, early=early)


def abandon(watch: TurnWatch | None, why: str) -> None:
    """The turn's early calls reported as abandoned (`TurnWatch.abandon`); a turn with no
    watch started none."""
    if watch is not None:
        watch.abandon(why)


__all__ = ["abandon", "answer", "run_calls"]
