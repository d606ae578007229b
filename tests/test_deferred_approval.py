"""Approval that can wait: a run stops at calls needing a decision, another process resumes it.

The command-line test runs two real processes against the emulator on loopback: ``toolwire run
--approve defer`` stops with the calls waiting; ``toolwire resume LOG --allow ID --deny ID
--reason TEXT``, started elsewhere, finds the folder, tools and policy in the log and goes on.
"""

from __future__ import annotations

import getpass
import json
import os
import subprocess
import sys
from pathlib import Path

from toolwire.agent.dispatch import Approval
from toolwire.agent.loop import Agent, RunStop
from toolwire.agent.runlog import LOG_FORMAT, read_log
from toolwire.emulator import Emulator
from toolwire.rules import check_transcript
from toolwire.schema.tool import Tool
from toolwire.testing import ScriptedModel, call, reply

ENV = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}


def toolwire(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolwire.cli", *args], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def notes_tools(written: list[str]) -> list[Tool]:
    def read_note(name: str) -> str:
        """Read a note."""
        return f"{name}: buy milk"

    def write_note(name: str, text: str) -> str:
        """Write a note."""
        written.append(f"{name}={text}")
        return "written"

    return [Tool.from_function(read_note), Tool.from_function(write_note)]


def test_a_deferred_run_stops_and_resumes_with_decisions(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    written: list[str] = []
    calls = reply(call("read_note", {"name": "a"}, id="c1"),
                  call("write_note", {"name": "a", "text": "x"}, id="c2"),
                  call("write_note", {"name": "b", "text": "y"}, id="c3"))
    first = Agent(model=ScriptedModel([calls]), tools=notes_tools(written),
                  approval={"write_note": "defer"}, context={"workdir": "/somewhere"})
    stopped = first.run("tidy the notes", log=log)
    assert stopped.stop is RunStop.AWAITING_APPROVAL and not stopped.ok
    assert written == []  # nothing of the reply ran, not even the call that needed no decision
    logged = read_log(log)
    assert logged.awaiting == ["c2", "c3"] and logged.stop == "awaiting_approval"
    assert logged.header["format"] == LOG_FORMAT == 10
    assert logged.header["context"] == {"workdir": "/somewhere"}
    second = Agent(model=ScriptedModel([reply("Done.")]), tools=notes_tools(written),
                   approval={"write_note": "defer"})
    done = second.resume(log, decisions={"c2": True,
                                         "c3": Approval.deny("b is shared", by="ann")})
    assert done.stop is RunStop.ANSWERED and written == ["a=x"]
    results = {r.call_id: r for r in done.messages[2].tool_results}
    assert results["c1"].content == "a: buy milk"
    assert results["c3"].is_error and results["c3"].content == (
        "This call to 'write_note' was denied by ann. Their reason: b is shared")
    check_transcript(done.messages)
    assert read_log(log).awaiting == []


def test_a_call_resumed_without_a_decision_is_not_run(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    written: list[str] = []
    Agent(model=ScriptedModel([reply(call("write_note", {"name": "a", "text": "x"}, id="c1"))]),
          tools=notes_tools(written), approval="defer").run("go", log=log)
    done = Agent(model=ScriptedModel([reply("ok")]), tools=notes_tools(written),
                 approval="defer").resume(log)
    [result] = done.messages[2].tool_results
    assert result.is_error and "resumed without one" in result.content and written == []


SCRIPT = [
    {"tool_calls": [
        {"id": "toolu_w1", "name": "write_file", "arguments": {"path": "a.txt", "content": "A"}},
        {"id": "toolu_w2", "name": "write_file", "arguments": {"path": "b.txt", "content": "B"}}]},
]
LIST = {"tool_calls": [{"id": "toolu_r1", "name": "list_files", "arguments": {}}]}
"""In a turn of its own: calls of one reply run side by side, and the listing must see a.txt."""


def test_the_command_line_defers_and_another_process_resumes(tmp_path: Path) -> None:
    work, elsewhere = tmp_path / "w", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    log = tmp_path / "run.jsonl"
    with Emulator(SCRIPT) as emu:
        proc = toolwire("run", "write the files", "--model", f"anthropic:m@{emu.base_url}",
                        "--workdir", str(work), "--log", str(log), "--approve", "defer",
                        "--json", cwd=tmp_path)
        model_id = f"anthropic:m@{emu.base_url}"
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["stop"] == "awaiting_approval"
    assert not (work / "a.txt").exists()
    logged = read_log(log)
    assert logged.awaiting == ["toolu_w1", "toolu_w2"]
    context = logged.header["context"]
    assert context["workdir"] == str(work) and context["approve"] == "defer"
    assert context["tools"] == "coding" and context["sandbox"] == "auto"
    assert context["model"] == model_id and context["base_url"] == model_id.split("@")[1]
    with Emulator([LIST, {"text": "Wrote a.txt; b.txt was refused."}]) as emu2:
        proc = toolwire("resume", str(log), "--model", f"anthropic:m@{emu2.base_url}",
                        "--allow", "toolu_w1", "--deny", "toolu_w2", "--reason",
                        "b.txt belongs to someone else", "--json", cwd=elsewhere)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["stop"] == "answered"
    assert (work / "a.txt").read_text() == "A" and not (work / "b.txt").exists()
    assert not (elsewhere / "a.txt").exists()
    run = read_log(log)
    check_transcript(run.messages)
    results = {r.call_id: r for m in run.messages for r in m.tool_results}
    assert not results["toolu_w1"].is_error and "a.txt" in results["toolu_r1"].content
    assert results["toolu_w2"].is_error and results["toolu_w2"].content == (
        f"This call to 'write_file' was denied by {getpass.getuser()} (toolwire resume). "
        "Their reason: b.txt belongs to someone else")
