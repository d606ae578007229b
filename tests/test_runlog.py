"""The run log: what is written and when, reading it back, and resuming a crashed run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from toolwire.agent.loop import Agent, RunStop
from toolwire.agent.runlog import LOG_FORMAT, RunLog, read_log
from toolwire.errors import TranscriptError
from toolwire.rules import check_transcript
from toolwire.schema.tool import Tool
from toolwire.testing import ScriptedModel, call, reply
from toolwire.transcript import Message, ToolResultPart, Usage
from toolwire.transcript_json import from_json


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


class Counter:
    """Tools that count how often they ran."""

    def __init__(self) -> None:
        self.runs: dict[str, int] = {}

    def tools(self) -> list[Tool]:
        def make(name: str, idempotent: bool) -> Tool:
            def fn(x: str) -> str:
                self.runs[name] = self.runs.get(name, 0) + 1
                return f"{name}({x})"

            return Tool.from_function(fn, name=name, idempotent=idempotent)

        return [make("fetch", True), make("send", False), make("other", False)]


async def test_log_lines_and_prefix_not_repeated(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    seen_while_running: list[str] = []

    def peek(x: str) -> str:
        seen_while_running.append(log.read_text().splitlines()[-1])
        return x.upper()

    script = [reply(call("peek", {"x": "a"}), usage=Usage(input_tokens=3)),
              reply(call("peek", {"x": "b"})), "done"]
    with ScriptedModel(script) as model:
        agent = Agent(model=model, tools=[Tool.from_function(peek)], system="sys", log=log)
        result = await agent.arun("task")
    events = lines(log)
    kinds = [e["event"] for e in events]
    assert kinds == ["header", "message", "request", "reply", "first_tool", "call_start",
                     "call_end", "message", "request", "reply", "first_tool", "call_start",
                     "call_end", "message", "request", "reply", "stop"]
    header = events[0]
    assert header["format"] == LOG_FORMAT and header["model"] == "scripted"
    assert header["system"] == "sys" and [t["name"] for t in header["tools"]] == ["peek"]
    # each line was on disk before the next thing happened (flushed as it is written)
    assert [json.loads(s)["event"] for s in seen_while_running] == ["call_start", "call_start"]
    # requests point at the history instead of repeating it
    requests = [e for e in events if e["event"] == "request"]
    assert [r["messages"] for r in requests] == [1, 3, 5]
    assert all("message" not in r for r in requests)
    # every history message is written exactly once, in order
    rebuilt: list[Any] = []
    for e in events:
        if e["event"] == "message":
            assert e["index"] == len(rebuilt)
            rebuilt.append(from_json(e["message"]))
        elif e["event"] == "reply":
            assert e["index"] == len(rebuilt)
            rebuilt.append(from_json(e["reply"]).message)  # type: ignore[union-attr]
    assert tuple(rebuilt) == result.messages
    ends = [e for e in events if e["event"] == "call_end"]
    assert from_json(ends[0]["result"]) == ToolResultPart(call_id="call_1_0", content="A",
                                                          name="peek")
    assert ends[0]["seconds"] >= 0 and events[-1]["stop"] == "answered"
    assert events[-1]["turns"] == 3 and events[-1]["usage"]["input_tokens"] == 3
    logged = read_log(log)
    assert logged.messages == list(result.messages) and logged.turns == 3
    assert logged.usage == Usage(input_tokens=3) and logged.stop == "answered"


async def test_existing_log_is_not_overwritten(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    with ScriptedModel(["one"]) as model:
        await Agent(model=model).arun("go", log=log)
    with pytest.raises(FileExistsError, match="resume"):
        Agent(model=ScriptedModel([])).steps("again", log=log)


async def crashed_log(tmp_path: Path, keep: Any) -> tuple[Path, Counter]:
    """A log of a run with three calls, cut as if the process died; ``keep`` filters lines."""
    counter = Counter()
    full = tmp_path / "full.jsonl"
    calls = [call(n, {"x": n[0]}) for n in ("fetch", "send", "other")]
    with ScriptedModel([reply(calls[0], calls[1], calls[2]), "done"]) as model:
        await Agent(model=model, tools=counter.tools(), log=full).arun("go")
    kept = [line for line in full.read_text().splitlines() if keep(json.loads(line))]
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(kept) + '\n{"event": "call_end", "turn": 1, "call_')  # torn write
    counter.runs.clear()
    return cut, counter


async def test_resume_after_crash_between_call_and_result(tmp_path: Path) -> None:
    def keep(e: dict[str, Any]) -> bool:  # every call started; only "other" finished
        if e["event"] in ("header", "message", "request", "call_start"):
            return e["event"] != "message" or e["index"] == 0
        if e["event"] == "reply":
            return e["turn"] == 1
        return e["event"] == "call_end" and e["call_id"] == "call_1_2"

    log, counter = await crashed_log(tmp_path, keep)
    logged = read_log(log)
    assert logged.torn and [c.name for c in logged.pending] == ["fetch", "send", "other"]
    with ScriptedModel(["all done"]) as model:
        result = await Agent(model=model, tools=counter.tools()).aresume(log)
    assert counter.runs == {"fetch": 1}  # idempotent: run again; send: not; other: from the log
    fetch, send, other = model.requests[0].messages[-1].tool_results
    assert fetch == ToolResultPart(call_id="call_1_0", content="fetch(f)", name="fetch")
    assert send.is_error and "interrupted while this call was running" in send.content
    assert other == ToolResultPart(call_id="call_1_2", content="other(o)", name="other")
    assert result.stop is RunStop.ANSWERED and result.answer == "all done" and result.turns == 2
    assert check_transcript(result.messages) == []
    assert any("resumed from" in n for n in result.notes)
    assert any("last line was cut off" in n for n in result.notes)
    again = read_log(log)  # the torn line was dropped and the log goes on cleanly
    assert not again.torn and again.stop == "answered" and again.messages == list(result.messages)


async def test_resume_runs_calls_that_never_started(tmp_path: Path) -> None:
    def keep(e: dict[str, Any]) -> bool:  # died right after the reply was logged
        return e["event"] in ("header", "request") or (e["event"] == "message" and
                                                       e["index"] == 0) or (
            e["event"] == "reply" and e["turn"] == 1)

    log, counter = await crashed_log(tmp_path, keep)
    with ScriptedModel(["done"]) as model:
        result = await Agent(model=model, tools=counter.tools()).aresume(log)
    assert counter.runs == {"fetch": 1, "send": 1, "other": 1}
    assert not any(r.is_error for r in model.requests[0].messages[-1].tool_results)
    assert result.stop is RunStop.ANSWERED


async def test_resume_a_finished_run_asks_nothing(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    with ScriptedModel(["the answer"]) as model:
        await Agent(model=model).arun("go", log=log)
    with ScriptedModel([]) as model:
        result = await Agent(model=model).aresume(log)
    assert result.stop is RunStop.ANSWERED and result.answer == "the answer"


async def test_resume_keeps_structured_output_schema(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    with ScriptedModel([reply(call("final_answer", {"n": "x"}))]) as model:
        first = await Agent(model=model, max_turns=1).arun("go", output=schema, log=log)
    assert first.stop is RunStop.TURN_LIMIT
    with ScriptedModel([reply(call("final_answer", {"n": 2}))]) as model:
        result = await Agent(model=model, max_turns=2).aresume(log)
    assert result.output == {"n": 2} and result.turns == 2
    assert model.requests[0].tools[0].name == "final_answer"


CHILD = textwrap.dedent(
    """
    import sys, time
    from toolwire.agent.loop import Agent
    from toolwire.schema.tool import Tool
    from toolwire.testing import ScriptedModel, call, reply

    def quick(x: str) -> str:
        return "quick " + x

    def slow(x: str) -> str:
        time.sleep(60)
        return "never"

    model = ScriptedModel([reply(call("quick", {"x": "a"}), call("slow", {"x": "b"})), "unused"])
    tools = [Tool.from_function(quick), Tool.from_function(slow)]
    Agent(model=model, tools=tools).run("work", log=sys.argv[1])
    """
)


def test_resume_after_the_process_is_killed_mid_call(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(log)])
    try:
        deadline = time.monotonic() + 30
        while True:  # wait until the log shows the slow call running
            text = log.read_text() if log.exists() else ""
            if '"call_start"' in text and '"slow"' in text and '"call_end"' in text:
                break
            assert child.poll() is None, "the child exited early"
            assert time.monotonic() < deadline, "the child never reached the slow call"
            time.sleep(0.02)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait()
    logged = read_log(log)
    assert logged.stop is None and [c.name for c in logged.pending] == ["quick", "slow"]
    assert "call_1_1" in logged.started and "call_1_1" not in logged.results

    def quick(x: str) -> str:
        raise AssertionError("quick finished before the crash; it must not run again")

    def slow(x: str) -> str:
        raise AssertionError("slow is not idempotent; it must not run again")

    tools = [Tool.from_function(quick), Tool.from_function(slow)]
    with ScriptedModel(["recovered"]) as model:
        result = Agent(model=model, tools=tools).resume(log)
    quick_result, slow_result = model.requests[0].messages[-1].tool_results
    assert quick_result.content == "quick a" and not quick_result.is_error
    assert slow_result.is_error and "interrupted" in slow_result.content
    assert result.answer == "recovered" and check_transcript(result.messages) == []


def test_read_log_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"event": "header", "format": 1}\nnot json\n{"event": "stop"}\n')
    with pytest.raises(TranscriptError, match=r"bad.jsonl:2: not a JSON line"):
        read_log(bad)
    bad.write_text('{"event": "header", "format": 99}\n')
    with pytest.raises(TranscriptError, match="format 99 is not supported"):
        read_log(bad)
    bad.write_text('{"event": "message", "index": 0}\n')
    with pytest.raises(TranscriptError, match="starts with a header"):
        read_log(bad)
    bad.write_text("")
    with pytest.raises(TranscriptError, match="empty run log"):
        read_log(bad)
    with RunLog(bad) as writer:
        writer.header(model="m", system=None, tools=[])
        writer.message(1, Message.user("skipped index 0"))
    with pytest.raises(TranscriptError, match="index 1 does not follow"):
        read_log(bad)
    with pytest.raises(ValueError, match="closed"):
        writer.write("late")


def test_a_log_is_told_from_other_json_by_its_first_line(tmp_path: Path) -> None:
    from toolwire.agent.runlog import is_log_text

    path = tmp_path / "run.jsonl"
    with RunLog(path) as writer:
        writer.header(model="m", system=None, tools=[])
        writer.message(0, Message.user("hi"))
    assert is_log_text(path.read_text()) and is_log_text("\n\n" + path.read_text())
    assert not is_log_text('{\n  "event": "header"\n}')  # a pretty-printed body, not a log
    assert not is_log_text('{"event": "turn"}\n')
    assert not is_log_text("not json at all")
    assert not is_log_text("")


async def test_line_separators_a_model_writes_leave_every_log_line_one_line(
        tmp_path: Path) -> None:
    text = "one\u2028two\u2029three\x85four"
    log = tmp_path / "run.jsonl"
    with ScriptedModel([text]) as model:
        result = await Agent(model=model, log=log).arun("task")
    raw = log.read_text(encoding="utf-8")
    assert raw.splitlines() == raw.split("\n")[:-1]  # no line is cut in two by splitlines
    assert result.answer == text and read_log(log).messages[-1].text == text
