"""One model call of a turn: the request sent, the reply awaited, what the model reports on
the way heard by the run.

Owns `ask` (the call, within the run's deadline when it has one; `call_model` without one)
and `warm` (the model's
``keep_warm`` while a reply's tools run). While the model works, whatever it emits
(`toolwire.events.emit`: its retries, its wire notes) goes to the turn's ``emit``, and to no
other run sharing the model. A model with a ``stream`` method is streamed when the run asks
for streaming: each event goes to ``emit`` as it comes, and the reply is the one its
`StreamEnd` carries.

The loop gives a turn's ``emit`` through a `toolwire.agent.early.TurnWatch` only when
something reads what the watch keeps: calls started early (``eager`` streaming) or listeners
of the run (its `FirstToken` and `FirstToolStart` events); without either, the turn's events
go straight to the run's own ``emit``, which gives the run the same notes. Must not import
the loop, codecs, the transport or the client.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from toolwire.errors import WireFormatError
from toolwire.events import Event, StreamEnd, hearing
from toolwire.protocol import Model
from toolwire.transcript import Reply, Request, ToolCallPart


def ask(model: Model, request: Request, emit: Callable[[Event], None], *, stream: bool,
        deadline: float | None) -> Awaitable[Reply | None]:
    """The model's reply to ``request``, what the model emits meanwhile given to ``emit``;
    None when the run's ``deadline`` (`time.monotonic`) came first."""
    call = call_model(model, request, emit, stream)
    return call if deadline is None else _within(call, deadline)


async def _within(call: Awaitable[Reply], deadline: float) -> Reply | None:
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout_at(loop.time() + deadline - time.monotonic()) as cm:
            return await call
    except TimeoutError:
        if cm.expired():
            return None
        raise


async def call_model(model: Model, request: Request, emit: Callable[[Event], None],
                     stream: bool) -> Reply:
    """`ask` with no deadline: the loop awaits this itself when its run has none."""
    token = hearing.set(emit)  # as ``with listen(emit):``, with no object made each turn
    try:
        # a model's own method, not a protocol's isinstance each turn
        streamer: Any = getattr(model, "stream", None) if stream else None
        if streamer is None:  # a StreamingModel's, whose events are closed with ``aclose``
            return await model.complete(request)
        reply: Reply | None = None
        async with contextlib.aclosing(streamer(request)) as events:
            async for event in events:
                emit(event)
                if type(event) is StreamEnd:
                    reply = event.reply
    finally:
        hearing.reset(token)
    if reply is None:
        raise WireFormatError("the model's stream ended without a whole reply")
    return reply


def warm(model: Model, calls: Sequence[ToolCallPart]
         ) -> contextlib.AbstractAsyncContextManager[Any] | None:
    """While a reply's ``calls`` run, the model's ``keep_warm`` (when it has one: an HTTP model
    keeps its connection from expiring, so the next turn does not open a new one); None when
    there is no call or no such method."""
    keep_warm = getattr(model, "keep_warm", None)  # WarmModel's, asked before the calls
    return None if keep_warm is None or not calls else keep_warm()


__all__ = ["ask", "call_model", "warm"]
