"""A run's ``time_limit`` holds while something is in progress, not only between turns.

A real loopback server that trickles one byte a second forever (in a stream and in a whole
body), a retry told to wait longer than the run may last, and tools that never return (async,
and plain functions in their worker thread): each run ends with stop ``time_limit``, every call
keeps its one result, and the log reads back. Assertions are on the stop and the log, never on
the clock.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from pathlib import Path
from typing import Any

import pytest

from bad_server import assert_ends_well, run_against
from toolwire import Agent, RunStop, check_transcript
from toolwire.codecs import WIRES
from toolwire.emulator import Fault, Raw
from toolwire.schema.tool import Tool
from toolwire.testing import ScriptedModel, call, reply

LIMIT = 1.0


def trickle() -> Raw:
    """One byte a second, forever."""
    return Raw(chunks=itertools.repeat(b" "), interval=1.0)


@pytest.mark.parametrize("streamed", [True, False], ids=["stream", "whole body"])
async def test_a_server_that_trickles_forever_ends_at_the_time_limit(
        streamed: bool, tmp_path: Path) -> None:
    async def one(wire: str) -> tuple[str, Any, Path]:
        log = tmp_path / f"{wire}.jsonl"
        result = await run_against(wire, [trickle()], log, stream=streamed, time_limit=LIMIT)
        return wire, result, log

    for wire, result, log in await asyncio.gather(*(one(w) for w in WIRES)):
        assert result.stop is RunStop.TIME_LIMIT, (wire, result.error)
        assert result.turns == 0 and [m.role for m in result.messages] == ["user"]
        assert any("waiting for the model's reply" in n for n in result.notes)
        assert_ends_well(result, log)


async def test_a_retry_told_to_wait_past_the_deadline_ends_at_the_time_limit(
        tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    wait = Fault(kind="rate_limit", retry_after=50)
    result = await run_against("openai-chat", [wait, wait], log, time_limit=LIMIT)
    assert result.stop is RunStop.TIME_LIMIT
    assert_ends_well(result, log)
    assert '"event":"retry"' in log.read_text()


def _tools(release: threading.Event) -> list[Tool]:
    async def hang_async() -> str:
        await asyncio.Event().wait()  # nothing ever sets it
        return "never"

    def hang_sync() -> str:
        release.wait()  # blocks its worker thread until the test ends
        return "released"

    def quick() -> str:
        return "quick result"

    empty = {"type": "object", "properties": {}}
    return [Tool(name="hang_async", input_schema=empty, fn=hang_async),
            Tool(name="hang_sync", input_schema=empty, fn=hang_sync),
            Tool(name="quick", input_schema=empty, fn=quick)]


@pytest.mark.parametrize("names", [["hang_async"], ["hang_sync"],
                                   ["quick", "hang_async", "hang_sync"]],
                         ids=["async tool", "sync tool", "three at once"])
async def test_a_tool_that_never_returns_ends_at_the_time_limit(names: list[str],
                                                                tmp_path: Path) -> None:
    release = threading.Event()
    log = tmp_path / "run.jsonl"
    calls = [call(name, {}, id=f"c{n}") for n, name in enumerate(names)]
    try:
        with ScriptedModel([reply(*calls)]) as model:
            agent = Agent(model=model, tools=_tools(release), time_limit=LIMIT,
                          tool_timeout=None)
            result = await agent.arun("go", log=log)
    finally:
        release.set()
    assert result.stop is RunStop.TIME_LIMIT and result.turns == 1
    results = result.messages[2].tool_results
    assert [r.call_id for r in results] == [c.id for c in calls]  # one result per call
    for r, name in zip(results, names, strict=True):
        if name == "quick":
            assert not r.is_error and r.content == "quick result"
        else:
            assert r.is_error and "time limit ran out" in r.content
    assert check_transcript(result.messages) == []
    assert_ends_well(result, log)


async def test_a_tool_limit_shorter_than_the_run_keeps_its_own_message() -> None:
    release = threading.Event()
    try:
        with ScriptedModel([reply(call("hang_async", {}, id="c1")), reply("gave up")]) as model:
            agent = Agent(model=model, tools=_tools(release), time_limit=60, tool_timeout=0.05)
            result = await agent.arun("go")
    finally:
        release.set()
    assert result.stop is RunStop.ANSWERED
    assert "did not finish within 0.05 seconds" in result.messages[2].tool_results[0].content


@pytest.mark.parametrize("kind", ["async", "sync"])
async def test_an_approver_that_never_answers_ends_at_the_time_limit(kind: str,
                                                                    tmp_path: Path) -> None:
    release = threading.Event()

    async def never_async(request: Any) -> bool:
        await asyncio.Event().wait()
        return True

    def never_sync(request: Any) -> bool:
        release.wait()
        return True

    log = tmp_path / "run.jsonl"
    try:
        with ScriptedModel([reply(call("quick", {}, id="c1"))]) as model:
            agent = Agent(model=model, tools=_tools(release), time_limit=LIMIT, approval="ask",
                          approve=never_async if kind == "async" else never_sync)
            result = await agent.arun("go", log=log)
    finally:
        release.set()
    assert result.stop is RunStop.TIME_LIMIT
    [res] = result.messages[2].tool_results
    assert res.is_error and "time limit ran out while waiting for the user's approval" in \
        res.content
    assert_ends_well(result, log)
