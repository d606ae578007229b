"""Eager execution: read-only calls start while their reply still streams, and every call still
gets one result, in call order, after the reply.

The model here is a stream written out step by step: after a call's block closes it waits for
what the test says must happen before the reply goes on (a tool starting, a tool finishing), so
the order of events is what is asserted, never a clock. Over HTTP, with the emulator pacing
its chunks, the same is checked in ``tests/test_latency.py``.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from toolwire.agent.loop import Agent, RunStop
from toolwire.agent.runlog import LOG_FORMAT, read_log
from toolwire.errors import StreamError, WireFormatError
from toolwire.events import (
    Event,
    FirstToken,
    FirstToolStart,
    RetryEvent,
    StreamEnd,
    StreamEvent,
    TextDelta,
    ToolAbandoned,
    ToolCallFinished,
    ToolCallStarted,
    ToolFinished,
    ToolStarted,
    emit,
)
from toolwire.explain.build import explain_file, render_text
from toolwire.explain.html import render_html
from toolwire.rules import check_transcript
from toolwire.schema.tool import Tool
from toolwire.testing import call, reply
from toolwire.transcript import Reply, Request, ToolCallPart

Step = ToolCallPart | str | Callable[[], Any]
"""A call whose block closes, a piece of text, or something to await (or do) before going on."""


class SteppedModel:
    """A streaming model that plays, per request, a list of attempts, each a list of steps;
    every attempt but the last breaks off (a retry, as `HttpModel` reports one), or raises
    what the attempt ends with."""

    name = "stepped"

    def __init__(self, *turns: list[list[Step | BaseException]]) -> None:
        self.turns = list(turns)
        self.requests: list[Request] = []

    async def complete(self, request: Request) -> Reply:
        raise AssertionError("this model only streams")

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        attempts = self.turns.pop(0)
        for number, steps in enumerate(attempts, start=1):
            parts: list[Any] = []
            for step in steps:
                if isinstance(step, BaseException):
                    raise step
                if isinstance(step, ToolCallPart):
                    index = len([p for p in parts if isinstance(p, ToolCallPart)])
                    yield ToolCallStarted(index=index, id=step.id, name=step.name)
                    yield ToolCallFinished(index=index, call=step)
                    parts.append(step)
                elif isinstance(step, str):
                    yield TextDelta(text=step)
                    parts.append(step)
                else:
                    done = step()
                    if asyncio.iscoroutine(done):
                        await asyncio.wait_for(done, 10)
            if number < len(attempts):
                emit(RetryEvent(attempt=number, wait=0.0,
                                error=StreamError("the stream broke mid-reply",
                                                  error_type="connection_error", retryable=True)))
                continue
            texts = "".join(p for p in parts if isinstance(p, str))
            calls = [p for p in parts if isinstance(p, ToolCallPart)]
            yield StreamEnd(reply=reply(texts, *calls) if texts else reply(*calls))


class Lookups:
    """A read-only tool ``look`` and a tool with effects ``save``, recording what they do."""

    def __init__(self) -> None:
        self.started: dict[str, asyncio.Event] = {}
        self.release = asyncio.Event()
        self.ran: list[str] = []

    def began(self, key: str) -> asyncio.Event:
        return self.started.setdefault(key, asyncio.Event())

    def tools(self, *, hold: bool = False) -> list[Tool]:
        async def look(key: str) -> str:
            """Look a key up."""
            self.ran.append(key)
            self.began(key).set()
            if hold:
                await self.release.wait()
            return key.upper()

        async def save(key: str) -> str:
            """Save a key."""
            self.ran.append(f"save {key}")
            return "saved"

        return [Tool.from_function(look, read_only=True), Tool.from_function(save)]


def kinds(events: list[Event], *wanted: type[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, wanted)]


def position(events: list[Event], pred: Callable[[Any], bool]) -> int:
    return next(i for i, e in enumerate(events) if pred(e))


async def test_a_read_only_call_starts_before_the_reply_ends(tmp_path: Path) -> None:
    tools = Lookups()
    model = SteppedModel(
        [["Looking.", call("look", {"key": "a"}, id="c1"), tools.began("a").wait,
          call("save", {"key": "b"}, id="c2"), call("look", {"key": "c"}, id="c3")]],
        [["Done."]],
    )
    events: list[Event] = []
    agent = Agent(model=model, tools=tools.tools(), stream=True, eager_tools=True,
                  on_event=events.append)
    result = await agent.arun("Look a, save b, look c.", log=tmp_path / "run.jsonl")
    assert result.stop is RunStop.ANSWERED
    answers = result.messages[2].tool_results
    assert [(r.call_id, r.content) for r in answers] == [("c1", "A"), ("c2", "saved"),
                                                         ("c3", "C")]
    end = position(events, lambda e: isinstance(e, StreamEnd))
    first = position(events, lambda e: isinstance(e, ToolStarted) and e.call.id == "c1")
    save = position(events, lambda e: isinstance(e, ToolStarted) and e.call.id == "c2")
    assert first < end < save  # the read-only call ran during the stream, the other after it
    assert kinds(events, ToolStarted)[0].early and not events[save].early  # type: ignore[union-attr]
    timing = kinds(events, FirstToolStart)
    assert [(t.turn, t.early) for t in timing] == [(1, True)]
    assert [t.turn for t in kinds(events, FirstToken)] == [1, 2]
    assert sorted(tools.ran) == ["a", "c", "save b"]  # each call once
    assert check_transcript(result.messages) == []


async def test_without_eager_execution_tools_wait_for_the_reply() -> None:
    tools = Lookups()
    model = SteppedModel([["x", call("look", {"key": "a"}, id="c1"), lambda: asyncio.sleep(0)]],
                         [["Done."]])
    events: list[Event] = []
    agent = Agent(model=model, tools=tools.tools(), stream=True, on_event=events.append)
    result = await agent.arun("Look a.")
    assert result.stop is RunStop.ANSWERED
    end = position(events, lambda e: isinstance(e, StreamEnd))
    assert position(events, lambda e: isinstance(e, ToolStarted)) > end
    assert [t.early for t in kinds(events, FirstToolStart)] == [False]


async def test_an_ask_tool_is_asked_during_the_stream_and_runs_once_approved() -> None:
    tools = Lookups()
    asked: list[str] = []

    async def approve(request: Any) -> bool:
        asked.append(request.call.id)
        return request.arguments["key"] != "no"

    model = SteppedModel(
        [[call("look", {"key": "a"}, id="c1"), call("look", {"key": "no"}, id="c2"),
          tools.began("a").wait]],
        [["Done."]],
    )
    agent = Agent(model=model, tools=tools.tools(), stream=True, eager_tools=True,
                  approval={"look": "ask"}, approve=approve)
    result = await agent.arun("Look.")
    answers = result.messages[2].tool_results
    assert asked == ["c1", "c2"]
    assert [(r.call_id, r.is_error) for r in answers] == [("c1", False), ("c2", True)]
    assert tools.ran == ["a"]


async def test_a_retried_stream_keeps_a_started_call_it_carries_again(tmp_path: Path) -> None:
    tools = Lookups()

    async def finished() -> None:
        await tools.began("a").wait()
        await asyncio.sleep(0)

    model = SteppedModel(
        [[call("look", {"key": "a"}, id="first_1"), finished],
         [call("look", {"key": "a"}, id="second_1"), call("look", {"key": "b"}, id="second_2")]],
        [["Done."]],
    )
    events: list[Event] = []
    agent = Agent(model=model, tools=tools.tools(), stream=True, eager_tools=True,
                  on_event=events.append)
    result = await agent.arun("Look a and b.", log=tmp_path / "run.jsonl")
    answers = result.messages[2].tool_results
    assert [(r.call_id, r.content) for r in answers] == [("second_1", "A"), ("second_2", "B")]
    assert tools.ran.count("a") == 1  # not run twice
    assert not kinds(events, ToolAbandoned)
    assert check_transcript(result.messages) == []


async def test_a_retried_stream_with_other_calls_reports_the_abandoned_one(
        tmp_path: Path) -> None:
    tools = Lookups()
    model = SteppedModel(
        [[call("look", {"key": "a"}, id="first_1"), tools.began("a").wait],
         [call("look", {"key": "b"}, id="second_1")]],
        [["Done."]],
    )
    events: list[Event] = []
    log = tmp_path / "run.jsonl"
    agent = Agent(model=model, tools=tools.tools(), stream=True, eager_tools=True,
                  on_event=events.append)
    result = await agent.arun("Look.", log=log)
    assert [r.call_id for r in result.messages[2].tool_results] == ["second_1"]
    gone = kinds(events, ToolAbandoned)
    assert [(g.call.id, g.finished) for g in gone] == [("first_1", True)]
    assert gone[0].result is not None and gone[0].result.content == "A"
    assert any("first_1" in n and "had finished" in n for n in result.notes)
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    abandoned = [x for x in lines if x["event"] == "call_abandoned"]
    assert [(a["call_id"], a["finished"], a["arguments"]) for a in abandoned] == [
        ("first_1", True, {"key": "a"})]
    assert read_log(log).time.abandoned[0]["call_id"] == "first_1"


async def test_a_reply_that_breaks_cancels_the_early_call_and_sends_no_result(
        tmp_path: Path) -> None:
    tools = Lookups()
    model = SteppedModel(
        [[call("look", {"key": "a"}, id="c1"), tools.began("a").wait,
          WireFormatError("the stream ended before the reply was whole")]],
    )
    log = tmp_path / "run.jsonl"
    events: list[Event] = []
    agent = Agent(model=model, tools=tools.tools(hold=True), stream=True, eager_tools=True,
                  on_event=events.append)
    result = await agent.arun("Look a.", log=log)
    assert result.stop is RunStop.BAD_REPLY
    assert [m.role for m in result.messages] == ["user"]  # no reply, no result
    assert not kinds(events, ToolFinished)
    gone = kinds(events, ToolAbandoned)
    assert [(g.call.id, g.finished, g.result) for g in gone] == [("c1", False, None)]
    assert any("was cancelled while running" in n for n in result.notes)
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert lines[0]["format"] == LOG_FORMAT == 10
    assert [x["finished"] for x in lines if x["event"] == "call_abandoned"] == [False]
    assert "call_end" not in [x["event"] for x in lines]


async def test_a_reply_cut_off_mid_call_abandons_its_early_calls() -> None:
    tools = Lookups()
    cut = reply(call("look", {"key": "a"}, id="c1"), call("look", raw='{"ke', id="c2"))
    cut = Reply(message=cut.message, stop="max_tokens", truncated_call=True)

    class CutModel(SteppedModel):
        async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
            yield ToolCallFinished(index=0, call=cut.tool_calls[0])
            await asyncio.wait_for(tools.began("a").wait(), 10)
            yield StreamEnd(reply=cut)

    events: list[Event] = []
    agent = Agent(model=CutModel(), tools=tools.tools(hold=True), stream=True,
                  eager_tools=True, on_event=events.append)
    result = await agent.arun("Look.")
    assert result.stop is RunStop.CUT_OFF
    assert all(r.is_error for r in result.messages[2].tool_results)
    assert [(g.call.id, g.finished) for g in kinds(events, ToolAbandoned)] == [("c1", False)]


async def test_explain_shows_each_turns_timings(tmp_path: Path) -> None:
    tools = Lookups()
    model = SteppedModel([[call("look", {"key": "a"}, id="c1"), tools.began("a").wait,
                           lambda: asyncio.sleep(0.01)]], [["Done."]])
    log = tmp_path / "run.jsonl"
    await Agent(model=model, tools=tools.tools(), stream=True, eager_tools=True).arun(
        "Look.", log=log)
    timings = read_log(log).time.turns
    assert set(timings) == {1, 2} and timings[1]["early"] is True
    assert timings[1]["first_token"] <= timings[1]["first_tool"] <= timings[1]["reply"]
    text = render_text(explain_file(log))
    assert "turn 1: first token" in text and "first tool" in text
    assert "(early: the reply was still streaming)" in text
    page = render_html(explain_file(log))
    spans = re.findall(r'class="span (\w+)"[^>]*data-start="([\d.]+)" data-end="([\d.]+)"', page)
    model_calls = [(float(a), float(b)) for lane, a, b in spans if lane == "model"]
    tool_calls = [(float(a), float(b)) for lane, a, b in spans if lane == "tools"]
    assert len(model_calls) == 2 and len(tool_calls) == 1
    assert tool_calls[0][0] < model_calls[0][1]  # drawn starting inside its model call
    assert "started early" in page


@pytest.mark.parametrize("flag", [True, False])
def test_tools_say_whether_they_may_start_early(flag: bool) -> None:
    def f(x: int) -> int:
        """F."""
        return x

    assert Tool.from_function(f, read_only=flag).read_only is flag
    assert Tool(name="t", read_only=flag).read_only is flag
