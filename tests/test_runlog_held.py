"""The run log's held lines (``message``, ``request``, ``reply``, ``first_tool``), written a
moment after their event: in the event loop's next step, or with the next line written at once
(in the same write), or at close; at once where no loop runs; and a failure to write them is
raised at the next line, never left to the event loop."""

from __future__ import annotations

import asyncio
import errno
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from typing_extensions import Buffer

from toolwire import records, signing
from toolwire.agent.runlog import RunLog
from toolwire.events import (
    FirstToolStart,
    MessageAdded,
    ReplyReceived,
    RequestSent,
    ToolFinished,
    ToolStarted,
)
from toolwire.transcript import Message, Reply, Request, ToolCallPart, ToolResultPart

REQUEST = Request(model="m", messages=(Message.user("hi"),))
REPLY = Reply(message=Message.assistant("hello"))


def kinds(path: Path) -> list[str]:
    return [json.loads(signing.unsigned(x)[0])["event"] for x in path.read_bytes().splitlines()]


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(signing.unsigned(x)[0]) for x in path.read_bytes().splitlines()]


def fail_writes(log: RunLog) -> None:
    """Make the log's descriptor /dev/full's: every write to it fails with ENOSPC."""
    assert log._file is not None
    full = os.open("/dev/full", os.O_WRONLY)
    try:
        os.dup2(full, log._file.fileno())
    finally:
        os.close(full)


class CountedWrites(io.FileIO):
    """The log's file, counting its writes (each is one system call: the file is unbuffered)."""

    writes = 0

    def write(self, data: Buffer, /) -> int:
        self.writes += 1
        return super().write(data)


def count_writes(log: RunLog) -> CountedWrites:
    assert log._file is not None
    counted = CountedWrites(os.dup(log._file.fileno()), "ab")
    log._file.close()
    log._file = counted
    return counted


CALL = ToolCallPart(id="c1", name="look", arguments={"key": "a"})
RESULT = ToolResultPart(call_id="c1", content="A")


async def test_held_lines_wait_for_the_loops_next_step(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    log = RunLog(path)
    log.header(model="m", system=None, tools=[])  # written at once
    written = count_writes(log)
    log(MessageAdded(0, Message.user("hi")))
    log(RequestSent(1, REQUEST))
    assert kinds(path) == ["header"]  # the request is being sent now
    await asyncio.sleep(0)  # the run waits for the reply: the lines go out, in one write
    assert kinds(path) == ["header", "message", "request"]
    assert written.writes == 1
    assert lines(path)[2] | {"t": 0} == {"event": "request", "t": 0, "turn": 1, "messages": 1,
                                         "tool_choice": None}
    await asyncio.sleep(0)
    log.close()
    assert kinds(path) == ["header", "message", "request"]  # written once
    assert signing.verify(path.read_bytes(), records.record_key()).own


async def test_a_line_written_at_once_takes_the_held_lines_before_it(tmp_path: Path) -> None:
    """A call's start is written before its tool runs, and the held lines with it, in one
    write; a call's end is written as soon as it comes."""
    path = tmp_path / "run.jsonl"
    log = RunLog(path)
    written = count_writes(log)
    log(RequestSent(1, REQUEST))
    log(ReplyReceived(1, 1, Reply(message=Message(role="assistant", parts=(CALL,))), 0.5))
    log(FirstToolStart(1, 0.6, False))
    assert kinds(path) == []
    log(ToolStarted(1, CALL))
    assert kinds(path) == ["request", "reply", "first_tool", "call_start"]
    assert written.writes == 1
    log(ToolFinished(1, CALL, RESULT, 0.01))
    assert kinds(path)[-1] == "call_end"
    assert written.writes == 2
    times = [x["t"] for x in lines(path)]
    assert times == sorted(times)
    await asyncio.sleep(0)  # the loop's step finds nothing left to write
    log.close()
    assert kinds(path) == ["request", "reply", "first_tool", "call_start", "call_end"]
    assert written.writes == 2
    assert signing.verify(path.read_bytes(), records.record_key()).own


async def test_close_writes_the_held_lines(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with RunLog(path) as log:
        log(RequestSent(3, REQUEST))
        log(ReplyReceived(3, 4, REPLY, 0.5))
    assert kinds(path) == ["request", "reply"]
    assert lines(path)[0]["turn"] == 3
    await asyncio.sleep(0)  # the loop's step after close writes nothing, and fails at nothing
    assert kinds(path) == ["request", "reply"]


def test_without_an_event_loop_every_line_is_written_at_once(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with RunLog(path) as log:
        log(MessageAdded(0, Message.user("hi")))
        log(RequestSent(1, REQUEST))
        assert kinds(path) == ["message", "request"]
        log(ReplyReceived(1, 1, REPLY, 0.5))
        assert kinds(path) == ["message", "request", "reply"]


async def test_a_held_line_nested_past_the_recursion_limit_is_written(tmp_path: Path) -> None:
    """A value nested deeper than the recursion limit allows to write (yet within the room
    the log makes for such a value) goes out at the loop's step all the same."""
    deep: dict[str, Any] = {}
    for _ in range(sys.getrecursionlimit() + 500):
        deep = {"a": deep}
    call = ToolCallPart(id="c1", name="look", arguments=deep)
    path = tmp_path / "run.jsonl"
    log = RunLog(path)
    log(ReplyReceived(1, 1, Reply(message=Message(role="assistant", parts=(call,))), 0.5))
    limit = sys.getrecursionlimit()
    await asyncio.sleep(0)
    assert sys.getrecursionlimit() == limit  # the room is given back
    log.close()
    (line,) = path.read_bytes().splitlines()
    assert line.startswith(b'{"event":"reply","t":') and line.count(b'{"a":') > limit
    assert signing.verify(path.read_bytes(), records.record_key()).own


async def test_a_failure_to_write_held_lines_is_raised_at_the_next_line(
        tmp_path: Path) -> None:
    """Every write to the log fails (`fail_writes`): the loop's step that writes the held
    lines has no one to tell, so the next line raises it, and the loop's exception handler
    hears nothing."""
    loop = asyncio.get_running_loop()
    heard: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: heard.append(context))
    path = tmp_path / "run.jsonl"
    log = RunLog(path)
    log(MessageAdded(0, Message.user("hi")))
    await asyncio.sleep(0)
    fail_writes(log)
    log(RequestSent(1, REQUEST))
    await asyncio.sleep(0)
    assert heard == []
    with pytest.raises(OSError) as failed:
        log(ToolStarted(1, CALL))
    assert failed.value.errno == errno.ENOSPC
    log.close()
    assert kinds(path) == ["message"]  # nothing after the line before the device failed


async def test_a_run_writes_each_request_line_before_its_reply(tmp_path: Path) -> None:
    """A whole run over HTTP: every request line stands between the messages it sent and the
    reply to it, and the log verifies."""
    from toolwire import Agent
    from toolwire.emulator import Emulator

    def look(key: str) -> str:
        """Look a key up."""
        return key.upper()

    script = [Reply(message=Message(role="assistant", parts=(CALL,)), stop="tool_calls"),
              REPLY]
    path = tmp_path / "run.jsonl"
    async with Emulator(script) as emu:
        agent = Agent(f"openai-compatible:m@{emu.base_url}", tools=[look], approval="allow")
        result = await agent.arun("go", log=path)
    assert result.answer == "hello"
    assert kinds(path) == ["header", "message", "request", "reply", "first_tool", "call_start",
                           "call_end", "message", "request", "reply", "stop"]
    requests = [x for x in lines(path) if x["event"] == "request"]
    assert [x["messages"] for x in requests] == [1, 3]
    assert signing.verify(path.read_bytes(), records.record_key()).own


async def test_close_raises_a_failure_to_write_the_held_lines(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    log = RunLog(path)
    fail_writes(log)
    log(RequestSent(1, REQUEST))
    with pytest.raises(OSError) as failed:
        log.close()
    assert failed.value.errno == errno.ENOSPC
    assert log._file is None  # closed all the same
    log.close()  # and again: nothing left to raise


def test_a_line_with_a_secret_keeps_its_event_name_and_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A line a secret is taken out of is written again from its redacted values; its event
    name and time are never among them, even when a secret's value is the event's name."""
    monkeypatch.setenv("SERVICE_API_KEY", "call_start")
    path = tmp_path / "run.jsonl"
    with RunLog(path) as log:
        log.call_start(1, ToolCallPart(id="id-call_start", name="look", arguments={}))
    (line,) = lines(path)
    assert line["event"] == "call_start"
    assert isinstance(line["t"], float)
    assert line["call_id"] == "id-[redacted: SERVICE_API_KEY]"
