"""The run log's request line, written while its request is on its way: in the event loop's
next step, or before any line that comes first, or at close; at once where no loop runs; and
a failure to write it is raised at the next line, never left to the event loop."""

from __future__ import annotations

import asyncio
import errno
import json
import os
from pathlib import Path
from typing import Any

import pytest

from toolwire import records, signing
from toolwire.agent.runlog import RunLog
from toolwire.events import MessageAdded, ReplyReceived, RequestSent
from toolwire.transcript import Message, Reply, Request

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


async def test_the_request_line_waits_for_the_loops_next_step(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    log = RunLog(path)
    log(MessageAdded(0, Message.user("hi")))
    log(RequestSent(1, REQUEST))
    assert kinds(path) == ["message"]  # the request is being sent now
    await asyncio.sleep(0)  # the run waits for the reply: the line goes out
    assert kinds(path) == ["message", "request"]
    assert lines(path)[1] | {"t": 0} == {"event": "request", "t": 0, "turn": 1, "messages": 1,
                                         "tool_choice": None}
    await asyncio.sleep(0)
    log.close()
    assert kinds(path) == ["message", "request"]  # written once
    assert signing.verify(path.read_bytes(), records.record_key()).own


async def test_a_line_that_comes_first_writes_the_request_line_before_it(
        tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    log = RunLog(path)
    log(RequestSent(1, REQUEST))
    log(ReplyReceived(1, 1, REPLY, 0.5))
    assert kinds(path) == ["request", "reply"]
    first, second = lines(path)
    assert first["t"] <= second["t"]
    await asyncio.sleep(0)  # the loop's step finds nothing left to write
    log.close()
    assert kinds(path) == ["request", "reply"]
    assert signing.verify(path.read_bytes(), records.record_key()).own


async def test_close_writes_a_held_request_line(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with RunLog(path) as log:
        log(RequestSent(3, REQUEST))
    assert kinds(path) == ["request"]
    assert lines(path)[0]["turn"] == 3
    await asyncio.sleep(0)  # the loop's step after close writes nothing, and fails at nothing
    assert kinds(path) == ["request"]


def test_without_an_event_loop_the_request_line_is_written_at_once(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with RunLog(path) as log:
        log(RequestSent(1, REQUEST))
        assert kinds(path) == ["request"]


async def test_a_failure_to_write_the_held_line_is_raised_at_the_next_line(
        tmp_path: Path) -> None:
    """Every write to the log fails (`fail_writes`): the loop's step that writes the request
    line has no one to tell, so the next line raises it, and the loop's exception handler
    hears nothing."""
    loop = asyncio.get_running_loop()
    heard: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: heard.append(context))
    path = tmp_path / "run.jsonl"
    log = RunLog(path)
    log(MessageAdded(0, Message.user("hi")))
    fail_writes(log)
    log(RequestSent(1, REQUEST))
    await asyncio.sleep(0)
    assert heard == []
    with pytest.raises(OSError) as failed:
        log(ReplyReceived(1, 1, REPLY, 0.5))
    assert failed.value.errno == errno.ENOSPC
    log.close()
    assert kinds(path) == ["message"]  # nothing after the line before the device failed


async def test_a_run_writes_each_request_line_before_its_reply(tmp_path: Path) -> None:
    """A whole run over HTTP: every request line stands between the messages it sent and the
    reply to it, and the log verifies."""
    from toolwire import Agent
    from toolwire.emulator import Emulator
    from toolwire.transcript import ToolCallPart

    def look(key: str) -> str:
        """Look a key up."""
        return key.upper()

    call = ToolCallPart(id="c1", name="look", arguments={"key": "a"})
    script = [Reply(message=Message(role="assistant", parts=(call,)), stop="tool_calls"),
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


async def test_close_raises_a_failure_to_write_the_held_line(tmp_path: Path) -> None:
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
    from toolwire.transcript import ToolCallPart

    monkeypatch.setenv("SERVICE_API_KEY", "call_start")
    path = tmp_path / "run.jsonl"
    with RunLog(path) as log:
        log.call_start(1, ToolCallPart(id="id-call_start", name="look", arguments={}))
    (line,) = lines(path)
    assert line["event"] == "call_start"
    assert isinstance(line["t"], float)
    assert line["call_id"] == "id-[redacted: SERVICE_API_KEY]"
