"""The dispatcher's smaller parts on their own: the call digest, refused replies, calls cut off,
rendering values, tools added later, calls started early, and the thread pool after close."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import hashlib
import math
import time
from typing import Any

import pytest

from toolwire.agent.dispatch import (
    Approval,
    Dispatcher,
    call_digest,
    cut_off,
    render_result,
    unusable,
)
from toolwire.events import ToolNote, emit, listen
from toolwire.schema.tool import Tool
from toolwire.transcript import Message, Reply, TextPart, ToolCallPart, ToolResultPart


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_the_digest_is_of_canonical_json_of_id_tool_and_arguments() -> None:
    call = ToolCallPart(id="c1", name="add", arguments={"b": 2, "a": 1})
    assert call_digest(call) == sha('["c1","add",{"a":1,"b":2}]')
    same = ToolCallPart(id="c1", name="add", arguments={"a": 1, "b": 2})
    assert call_digest(same) == call_digest(call)
    accented = ToolCallPart(id="c1", name="say", arguments={"s": "é"})
    assert call_digest(accented) == sha('["c1","say",{"s":"é"}]')
    odd = ToolCallPart(id="c1", name="say", arguments={"s": "\ud800"})  # a lone surrogate
    assert call_digest(odd) == hashlib.sha256(
        '["c1","say",{"s":"\ud800"}]'.encode("utf-8", "surrogatepass")).hexdigest()


def test_the_digest_takes_arguments_json_cannot_hold_as_their_text() -> None:
    given = ToolCallPart(id="c1", name="plan", arguments={"on": datetime.date(2024, 1, 2)})
    assert call_digest(given) == sha('["c1","plan",{"on":"2024-01-02"}]')


def test_the_digest_of_a_call_whose_arguments_did_not_parse_is_of_their_text() -> None:
    broken = ToolCallPart(id="c1", name="add", arguments={}, raw_arguments='{"a": 1',
                          parse_error="the text stops early")
    assert call_digest(broken) == sha('["c1","add","{\\"a\\": 1"]')
    other = ToolCallPart(id="c1", name="add", arguments={}, raw_arguments='{"a": 2',
                         parse_error="the text stops early")
    assert call_digest(other) != call_digest(broken)


def reply(*parts: Any, stop: Any = "end_turn") -> Reply:
    return Reply(message=Message(role="assistant", parts=tuple(parts)), stop=stop)


def test_replies_holding_nothing_or_sharing_call_ids_are_refused_with_the_reason() -> None:
    assert unusable(reply(TextPart(text="  "))) == (
        "the model's reply holds no text and no tool call (stop 'end_turn'); it is not an "
        "answer and was not added")
    a, b = (ToolCallPart(id=i, name="t", arguments={}) for i in ("x", "y"))
    assert unusable(reply(a, a, b, b, a, stop="tool_use")) == (
        "the model's reply gives more than one tool call the id 'x', 'y'; none of its calls "
        "was run and it was not added")
    assert unusable(reply(a, b, stop="tool_use")) is None
    assert unusable(reply(TextPart(text="hi"))) is None


def test_a_call_cut_off_gets_an_error_result_saying_so() -> None:
    call = ToolCallPart(id="c9", name="write_file", arguments={})
    assert cut_off(call) == ToolResultPart(
        call_id="c9", name="write_file", is_error=True,
        content="Not run: the reply was cut off by the output token limit while this call "
                "was being written, so its arguments may be incomplete.")


def test_approval_allow_names_who_decided() -> None:
    assert Approval.allow() == Approval(True, None, None)
    assert Approval.allow("ops") == Approval(True, None, "ops")
    assert Approval.deny("no", "ops") == Approval(False, "no", "ops")


@dataclasses.dataclass
class Point:
    x: float
    when: datetime.date


def test_values_are_rendered_as_json_text() -> None:
    assert render_result("as it is") == "as it is"
    assert render_result({"s": "é", "n": [1, 2.5]}) == '{"s": "é", "n": [1, 2.5]}'
    assert render_result([math.nan, math.inf]) == "[null,null]"
    assert render_result(Point(1.0, datetime.date(2024, 5, 6))) == (
        '{"x":1.0,"when":"2024-05-06"}')
    with pytest.raises(TypeError):
        render_result(object())


async def test_tools_added_later_answer_calls_and_replace_those_of_their_name() -> None:
    def one() -> str:
        return "one"

    dispatcher = Dispatcher([Tool.from_function(one)])
    dispatcher.add([Tool.from_function(lambda: "two", name="two"),
                    Tool.from_function(lambda: "new one", name="one")])
    results = await dispatcher.run([ToolCallPart(id="a", name="one", arguments={}),
                                    ToolCallPart(id="b", name="two", arguments={})])
    dispatcher.close()
    assert [r.content for r in results] == ["new one", "two"]
    assert sorted(dispatcher.tools) == ["one", "two"]


async def test_read_only_tools_that_may_run_start_early_and_tell_the_hooks() -> None:
    def look() -> str:
        return "seen"

    def touch() -> str:
        return "changed"

    tools = [Tool.from_function(look, read_only=True), Tool.from_function(touch),
             Tool.from_function(look, name="hidden", read_only=True),
             Tool.from_function(look, name="asked", read_only=True)]
    dispatcher = Dispatcher(tools, policy={"hidden": "deny", "asked": "ask"})
    early = [dispatcher.may_start_early(ToolCallPart(id="c", name=n, arguments={}))
             for n in ("look", "touch", "hidden", "asked", "unknown")]
    assert early == [True, False, False, True, False]
    heard: list[tuple[str, str, bool]] = []
    call = ToolCallPart(id="c1", name="look", arguments={})
    admitted = await dispatcher.admit(call)
    result = await dispatcher.start(
        call, admitted, on_start=lambda c: heard.append(("start", c.id, True)),
        on_end=lambda c, r, s: heard.append(("end", str(r.content), s >= 0)))
    assert result.content == "seen"
    refused = ToolResultPart(call_id="c2", name="look", content="no", is_error=True)
    assert await dispatcher.start(
        call, refused, on_end=lambda c, r, s: heard.append((c.id, str(r.content),
                                                            s == 0.0))) is refused
    assert heard == [("start", "c1", True), ("end", "seen", True), ("c1", "no", True)]
    dispatcher.close()


async def test_a_call_started_early_keeps_to_the_run_s_time_limit() -> None:
    async def wait() -> str:
        await asyncio.sleep(0)  # the first time it lets the loop turn, the limit has come
        return "finished"

    dispatcher = Dispatcher([Tool.from_function(wait, read_only=True)])
    call = ToolCallPart(id="c", name="wait", arguments={})
    result = await dispatcher.start(call, await dispatcher.admit(call),
                                    deadline=time.monotonic() - 1.0)
    assert (result.is_error, "time limit ran out" in str(result.content)) == (True, True)


async def test_a_closed_dispatcher_runs_sync_tools_again_in_a_new_pool() -> None:
    def hello() -> str:
        return "hello"

    dispatcher = Dispatcher([Tool.from_function(hello)])
    for _ in range(2):
        [result] = await dispatcher.run([ToolCallPart(id="c", name="hello", arguments={})])
        assert (result.content, result.is_error) == ("hello", False)
        dispatcher.close()
    dispatcher.close()  # closing twice is fine


def test_a_dispatcher_used_on_two_loops_runs_on_each() -> None:
    async def slow(n: int) -> int:
        await asyncio.sleep(0)
        return n

    dispatcher = Dispatcher([Tool.from_function(slow)], max_concurrency=1)
    for n in (1, 2):
        results = asyncio.run(dispatcher.run(
            [ToolCallPart(id=f"c{i}", name="slow", arguments={"n": n}) for i in range(2)]))
        assert [r.content for r in results] == [str(n), str(n)]


# -- the run's time limit while tools run -----------------------------------------------------

STILL_RUNNING = ("Tool 'wait' was still running when the run's time limit ran out; it was "
                 "abandoned and gave no result.")


def waiting_tool(released: asyncio.Event) -> Tool:
    async def wait(n: int) -> str:
        try:  # bounded, so that a run that ignored its time limit still ends (and fails)
            await asyncio.wait_for(released.wait(), 5)
        except TimeoutError:
            return "ran to the end"
        return "released"

    return Tool.from_function(wait)


@pytest.mark.parametrize("calls", [1, 2], ids=["one call", "calls side by side"])
async def test_tools_still_running_at_the_run_s_time_limit_are_abandoned(calls: int) -> None:
    released = asyncio.Event()
    for timeout in (None, 60.0):  # no timeout of its own, or one longer than the time left
        dispatcher = Dispatcher([waiting_tool(released)], timeout=timeout)
        results = await dispatcher.run(
            [ToolCallPart(id=f"c{i}", name="wait", arguments={"n": i}) for i in range(calls)],
            deadline=time.monotonic() + 0.2)
        assert [(r.content, r.is_error, r.name) for r in results] == [
            (STILL_RUNNING, True, "wait")] * calls


async def test_a_tool_timeout_shorter_than_the_time_left_is_the_tool_s_own() -> None:
    released = asyncio.Event()
    dispatcher = Dispatcher([waiting_tool(released)], timeout=0.1)
    [result] = await dispatcher.run([ToolCallPart(id="c", name="wait", arguments={"n": 1})],
                                    deadline=time.monotonic() + 60)
    assert (result.content, result.is_error) == (
        "Tool 'wait' did not finish within 0.1 seconds; it was abandoned and gave no result.",
        True)


async def test_a_sync_tool_s_events_reach_the_run_s_listener() -> None:
    def noisy() -> str:
        emit(ToolNote(source="noisy", note="ran without a sandbox"))
        return "done"

    heard: list[object] = []
    dispatcher = Dispatcher([Tool.from_function(noisy)])
    with listen(heard.append):
        [result] = await dispatcher.run([ToolCallPart(id="c", name="noisy", arguments={})])
    dispatcher.close()
    assert (result.content, result.is_error) == ("done", False)
    assert ToolNote(source="noisy", note="ran without a sandbox") in heard


async def test_a_tool_that_waits_at_all_after_the_time_limit_is_abandoned() -> None:
    async def wait(n: int) -> str:
        await asyncio.sleep(0)  # the first time it lets the loop turn, the limit has come
        return "finished"

    dispatcher = Dispatcher([Tool.from_function(wait)])
    [result] = await dispatcher.run([ToolCallPart(id="c", name="wait", arguments={"n": 1})],
                                    deadline=time.monotonic() - 1.0)
    assert (result.content, result.is_error) == (STILL_RUNNING, True)


async def test_calls_after_one_started_early_are_still_run() -> None:
    def add(a: int, b: int) -> int:
        return a + b

    dispatcher = Dispatcher([Tool.from_function(add)])
    first, second, third = (ToolCallPart(id=f"c{i}", name="add", arguments={"a": i, "b": 1})
                            for i in range(3))
    early = dispatcher.start(first, await dispatcher.admit(first))
    results = await dispatcher.run([first, second, third], early={0: early})
    dispatcher.close()
    assert [(r.call_id, r.content) for r in results] == [("c0", "1"), ("c1", "2"), ("c2", "3")]
