"""An async approver once the run's time limit has passed: it is still called on the loop, hears
the call, and hears the cancellation when it waits."""

from __future__ import annotations

import asyncio
import time

from toolwire.agent.dispatch import ApprovalRequest, Dispatcher
from toolwire.schema.tool import Tool
from toolwire.transcript import ToolCallPart


async def add(a: int, b: int) -> int:
    return a + b


def call(a: int) -> ToolCallPart:
    return ToolCallPart(id=f"c{a}", name="add", arguments={"a": a, "b": 1})


async def test_an_async_approver_that_answers_at_once_is_heard_after_the_time_limit() -> None:
    heard: list[str] = []

    async def approve(request: ApprovalRequest) -> bool:
        heard.append(request.call.id)  # no await: the answer comes before the loop turns
        return True

    dispatcher = Dispatcher([Tool.from_function(add)], policy="ask", approve=approve)
    results = await dispatcher.run([call(1)], deadline=time.monotonic() - 1.0)
    assert heard == ["c1"]
    # neither the answer nor the async tool had to wait, so nothing met the limit
    assert results[0].content == "2"


async def test_an_async_approver_that_waits_hears_the_call_and_its_cancellation() -> None:
    heard: list[str] = []

    async def approve(request: ApprovalRequest) -> bool:
        heard.append(f"asked {request.call.id}")
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            heard.append("cancelled")
            raise
        return True

    dispatcher = Dispatcher([Tool.from_function(add)], policy="ask", approve=approve)
    results = await dispatcher.run([call(2)], deadline=time.monotonic() - 1.0)
    assert heard == ["asked c2", "cancelled"]
    assert results[0].is_error
    assert results[0].content == (
        "The call to 'add' was not run: the run's time limit ran out while waiting for the "
        "user's approval."
    )
