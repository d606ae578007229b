"""What the dispatcher admits, one call at a time (`Dispatcher.admit`, used for calls that start
before their reply is whole) and in a turn of several calls: refusals without asking, the
approver asked only when the policy says so, and the run's time limit kept while asking and
while running."""

from __future__ import annotations

import asyncio
import time

from toolwire.agent.dispatch import ApprovalRequest, Dispatcher
from toolwire.schema.tool import Tool
from toolwire.transcript import ToolCallPart, ToolResultPart

TIME_LIMIT = ("The call to 'add' was not run: the run's time limit ran out while waiting for "
              "the user's approval.")


async def add(a: int, b: int) -> int:
    return a + b


def call(a: int, name: str = "add") -> ToolCallPart:
    return ToolCallPart(id=f"c{a}", name=name, arguments={"a": a, "b": 1})


async def waits_for_ever(request: ApprovalRequest) -> bool:
    await asyncio.sleep(5)  # far past the limits below: a wait that ignored them fails
    return True


def never_asked(request: ApprovalRequest) -> bool:
    raise AssertionError(f"{request.call.id} should not have been asked about")


async def test_admit_refuses_a_call_that_does_not_check_without_asking() -> None:
    dispatcher = Dispatcher([Tool.from_function(add)], policy="ask", approve=never_asked)
    admitted = await dispatcher.admit(call(1, name="sub"))
    assert isinstance(admitted, ToolResultPart)
    assert admitted.is_error and admitted.call_id == "c1"
    assert "sub" in str(admitted.content)


async def test_admit_gives_an_allowed_call_s_tool_and_arguments_without_asking() -> None:
    dispatcher = Dispatcher([Tool.from_function(add)], policy={"add": "allow", "*": "ask"},
                            approve=never_asked)
    admitted = await dispatcher.admit(call(2))
    assert isinstance(admitted, tuple)
    tool, args = admitted
    assert (tool.name, args) == ("add", {"a": 2, "b": 1})


async def test_admit_asks_when_the_policy_says_ask_and_keeps_to_the_time_limit() -> None:
    heard: list[str] = []

    async def yes(request: ApprovalRequest) -> bool:
        heard.append(request.call.id)
        return True

    admitted = await Dispatcher([Tool.from_function(add)], policy="ask", approve=yes).admit(
        call(3))
    assert heard == ["c3"] and isinstance(admitted, tuple)
    refused = await Dispatcher([Tool.from_function(add)], policy="ask",
                               approve=waits_for_ever).admit(call(4), time.monotonic() + 0.05)
    assert isinstance(refused, ToolResultPart)
    assert (refused.content, refused.is_error) == (TIME_LIMIT, True)


async def test_approvals_in_a_turn_of_several_calls_keep_to_the_time_limit() -> None:
    dispatcher = Dispatcher([Tool.from_function(add)], policy="ask", approve=waits_for_ever)
    results = await dispatcher.run([call(5), call(6)], deadline=time.monotonic() + 0.05)
    assert [(r.call_id, r.content, r.is_error) for r in results] == [
        ("c5", TIME_LIMIT, True), ("c6", TIME_LIMIT, True)]


async def test_the_one_call_left_of_several_keeps_to_the_time_limit() -> None:
    release = asyncio.Event()

    async def wait(n: int) -> str:
        await asyncio.wait_for(release.wait(), 5)  # bounded: a run past its limit still ends
        return "ran to the end"

    dispatcher = Dispatcher([Tool.from_function(wait)])
    refused, waited = await dispatcher.run(
        [ToolCallPart(id="c7", name="nothing", arguments={}),
         ToolCallPart(id="c8", name="wait", arguments={"n": 1})],
        deadline=time.monotonic() + 0.1)
    assert refused.is_error and refused.call_id == "c7"
    assert waited.is_error and waited.call_id == "c8"
    assert "still running when the run's time limit ran out" in str(waited.content)


async def test_a_refused_call_is_reported_as_taking_no_time() -> None:
    ended: list[tuple[str, bool, float]] = []
    for calls in ([call(9, name="sub")], [call(10, name="sub"), call(11, name="sub")]):
        await Dispatcher([Tool.from_function(add)]).run(
            calls, on_end=lambda c, r, took: ended.append((c.id, r.is_error, took)))
    assert ended == [("c9", True, 0.0), ("c10", True, 0.0), ("c11", True, 0.0)]
