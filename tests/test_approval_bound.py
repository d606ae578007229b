"""Approval that shows the truth and binds to it: a prompt no control character can spoof (on a
real pseudo-terminal), a resumed decision that answers one exact call once, a reply whose calls
share an id refused before anything runs, and MCP tools under the same policy as built-in ones.
"""

from __future__ import annotations

import os
from pathlib import Path

from mcp_runs import WEATHER, run_with_features
from ptys import drive_on_pty
from toolwire.agent.dispatch import call_digest
from toolwire.agent.loop import Agent, RunStop
from toolwire.agent.runlog import read_log
from toolwire.emulator import Emulator
from toolwire.schema.tool import Tool
from toolwire.testing import ScriptedModel, call, reply
from toolwire.transcript import ToolCallPart

ENV = {k: v for k, v in os.environ.items()
       if not k.endswith("_API_KEY") and not k.startswith("TOOLWIRE_")}


def note_tool(written: list[str]) -> Tool:
    def write_note(name: str, text: str) -> str:
        """Write a note."""
        written.append(f"{name}={text}")
        return "written"

    return Tool.from_function(write_note)


def test_a_command_hiding_behind_a_carriage_return_is_shown_whole(tmp_path: Path) -> None:
    hidden = "touch PWNED; \r\x1b[2Kpytest -q"
    script = [{"tool_calls": [{"id": "c1", "name": "run_command",
                               "arguments": {"command": hidden}}]},
              {"text": "Fine."}]
    with Emulator(script) as emu:
        screen = drive_on_pty(
            ["run", "test it", "--model", f"anthropic:m@{emu.base_url}", "--workdir",
             str(tmp_path), "--sandbox", "off", "--approve", "ask", "--color", "always",
             "--no-stream"],
            [("allow run_command", "n")], ENV)
    assert not (tmp_path / "PWNED").exists()
    assert "allow run_command" in screen
    assert "\x1b[2Kpytest" not in screen  # the sequence never reaches the terminal raw
    assert "touch PWNED; \\r\\x1b[2Kpytest -q" in screen  # the command is on screen, all of it
    assert "\\r\\u001b[2Kpytest -q" in screen  # and in the prompt's own line


def test_a_resumed_decision_answers_one_exact_call_once(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    written: list[str] = []
    first = reply(call("write_note", {"name": "a", "text": "x"}, id="c1"))
    again = reply(call("write_note", {"name": "a", "text": "rm -rf"}, id="c1"))
    model = ScriptedModel([first, again, reply("never reached")])
    agent = Agent(model=model, tools=[note_tool(written)], approval={"write_note": "defer"})
    assert agent.run("write", log=log).stop is RunStop.AWAITING_APPROVAL
    resumed = agent.resume(log, decisions={"c1": True})
    assert written == ["a=x"]  # the call the decision was given for ran
    assert resumed.stop is RunStop.AWAITING_APPROVAL  # the later call reusing c1 waits
    assert read_log(log).awaiting == ["c1"]
    assert agent.dispatcher.decisions == {}


def test_the_digest_holds_the_tool_and_the_canonical_arguments() -> None:
    one = ToolCallPart(id="c1", name="t", arguments={"a": 1, "b": 2})
    same = ToolCallPart.from_raw(id="c1", name="t", raw_arguments='{"b": 2,  "a": 1}')
    assert call_digest(one) == call_digest(same)
    assert call_digest(one) != call_digest(ToolCallPart(id="c1", name="t", arguments={"a": 2}))
    assert call_digest(one) != call_digest(ToolCallPart(id="c1", name="u", arguments={"a": 1}))


def test_calls_sharing_an_id_are_refused_before_anything_runs() -> None:
    written: list[str] = []
    asked: list[str] = []

    def approve(req: object) -> bool:
        asked.append("asked")
        return True

    twins = reply(call("write_note", {"name": "a", "text": "x"}, id="c1"),
                  call("write_note", {"name": "b", "text": "y"}, id="c1"))
    agent = Agent(model=ScriptedModel([twins]), tools=[note_tool(written)],
                  approval={"write_note": "ask"}, approve=approve)
    result = agent.run("write")
    assert result.stop is RunStop.BAD_REPLY
    assert "more than one tool call the id 'c1'" in str(result.error)
    assert written == [] and asked == []


def test_an_mcp_tool_is_refused_under_approve_never(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    script = [{"tool_calls": [{"id": "c1", "name": "work", "arguments": {"steps": 2}}]},
              {"text": "Done."}]
    with Emulator(script) as emu:
        proc = run_with_features(emu, tmp_path, log, "never")
    assert proc.returncode == 0, proc.stderr
    result = read_log(log).results["c1"]
    assert result.is_error and "not allowed to run" in result.text


def test_one_decision_runs_no_call_of_an_old_log_whose_calls_share_its_id(
        tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    written: list[str] = []
    calls = reply(call("write_note", {"name": "a", "text": "x"}, id="c1"),
                  call("write_note", {"name": "b", "text": "y"}, id="c2"))
    agent = Agent(model=ScriptedModel([calls, reply("done")]), tools=[note_tool(written)],
                  approval={"write_note": "defer"})
    assert agent.run("write", log=log).stop is RunStop.AWAITING_APPROVAL
    log.write_text(log.read_text().replace('"c2"', '"c1"'))  # as an older toolwire kept it
    agent.resume(log, decisions={"c1": True})
    assert written == []
    results = read_log(log).messages[-2].tool_results
    assert [r.is_error for r in results] == [True, True]


def test_a_read_only_hint_counts_only_where_the_user_said_so(tmp_path: Path) -> None:
    script = [{"tool_calls": [{"id": "c1", "name": "weather", "arguments": {"city": "Oslo"}},
                              {"id": "c2", "name": "forecast",
                               "arguments": {"city": "Oslo", "days": 2}}]},
              {"text": "Done."}]
    found = {}
    for setting in ("ask", "allow"):
        log = tmp_path / f"{setting}.jsonl"
        with Emulator(script) as emu:
            proc = run_with_features(emu, tmp_path, log, "never", server=WEATHER,
                                     env={"TOOLWIRE_MCP_READ_ONLY": setting})
        assert proc.returncode == 0, proc.stderr
        results = read_log(log).results
        found[setting] = (results["c1"].is_error, results["c2"].is_error)
    assert found == {"ask": (True, True), "allow": (False, True)}
