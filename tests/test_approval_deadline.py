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
            await asyncio.sleep(0)  # the first time it lets the loop turn, the limit has come
        except asyncio.CancelledError:
            heard.append("cancelled")
            raise
        heard.append("answered")
        return True

    dispatcher = Dispatcher([Tool.from_function(add)], policy="ask", approve=approve)
    results = await dispatcher.run([call(2)], deadline=time.monotonic() - 1.0)
    assert heard == ["asked c2", "cancelled"]
    assert results[0].is_error
    assert results[0].content == (
        "The call to 'add' was not run: the run's time limit ran out while waiting for the "
        "user's approval."
    )


async def test_an_approver_s_own_timeout_and_odd_answers_are_told_apart() -> None:
    async def gives_up(request: ApprovalRequest) -> bool:
        raise TimeoutError("no one answered")

    async def says_yes(request: ApprovalRequest) -> str:
        return "yes"

    results = await Dispatcher([Tool.from_function(add)], policy="ask", approve=gives_up).run(
        [call(3)], deadline=time.monotonic() + 60)
    assert results[0].content == (
        "The call to 'add' was not run: asking the user for approval failed (TimeoutError: "
        "no one answered).")
    results = await Dispatcher([Tool.from_function(add)], policy="ask",
                               approve=says_yes).run([call(4)])  # type: ignore[arg-type]
    assert results[0].content == (
        "The call to 'add' was not run: the approver answered str, not True, False or an "
        "Approval.")


async def test_a_deferred_call_without_a_decision_is_not_run() -> None:
    results = await Dispatcher([Tool.from_function(add)], policy="defer").run([call(5)])
    assert (results[0].content, results[0].is_error) == (
        "The call to 'add' waited for a decision, but the run was resumed without one for "
        "it, so it was not run.", True)
