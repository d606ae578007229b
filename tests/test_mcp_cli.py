"""``toolwire run`` with MCP servers as they are used now: progress in the status line, a
server's questions at the terminal (or declined when nobody is there), deferred servers,
resources and instructions. Real processes: the command, the SDK-built server it starts, and
the emulator over loopback."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from ptys import drive_on_pty, run_on_pty
from toolwire.agent.runlog import read_log
from toolwire.emulator import Emulator
from toolwire.mcp.elicit import NOT_INTERACTIVE

FEATURES = f"{sys.executable} {Path(__file__).parent / 'fixtures' / 'mcp_server_features.py'}"
ENV = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}


def run_args(emu: Emulator, workdir: Path, *more: str) -> list[str]:
    return ["run", "go", "--model", f"anthropic:m@{emu.base_url}", "--workdir", str(workdir),
            "--tools", "none", "--approve", "auto", *more]


def test_progress_shows_in_the_status_line(tmp_path: Path) -> None:
    script = [{"tool_calls": [{"name": "work", "arguments": {"steps": 4}}]}, {"text": "Done."}]
    with Emulator(script) as emu:
        proc, screen = run_on_pty([sys.executable, "-m", "toolwire.cli",
                                   *run_args(emu, tmp_path, "--mcp", FEATURES)],
                                  ENV, pipe_stdout=True)
    assert proc.returncode == 0, screen
    for step, share in ((1, "25%"), (2, "50%"), (4, "100%")):
        assert f"turn 1 · running work: {share} step {step} of 4 · " in screen


def test_a_servers_question_is_asked_at_the_terminal(tmp_path: Path) -> None:
    script = [{"tool_calls": [{"name": "book", "arguments": {"party": "ann"}}]},
              {"text": "Booked."}]
    log = tmp_path / "run.jsonl"
    with Emulator(script) as emu:
        screen = drive_on_pty(
            [*run_args(emu, tmp_path, "--mcp", FEATURES), "--log", str(log)],
            [("Guests: How many people", "two"), ("not a whole number", "2"),
             ("(yes / no)", "yes"), ("Note: Anything else", "by the window")], ENV)
    assert "Booked." in screen
    assert "The MCP server 'features' asks: Booking a table for ann" in screen
    [result] = read_log(log).messages[2].tool_results
    assert result.content == "booked for 2, vegan=True, note='by the window'"


def test_deferred_server_resources_and_instructions(tmp_path: Path) -> None:
    script = [{"tool_calls": [{"name": "book", "arguments": {"party": "ann"}},
                              {"name": "read_resource", "arguments": {"uri": "notes://today"}}]},
              {"text": "Nothing booked."}]
    with Emulator(script) as emu:
        proc, _ = run_on_pty([sys.executable, "-m", "toolwire.cli",
                              *run_args(emu, tmp_path, "--mcp-deferred", FEATURES,
                                        "--mcp-resources", "--mcp-instructions", "--json")],
                             ENV, pipe_stdout=True)
        body = emu.received[0].body
    assert proc.returncode == 0
    tools = {t["name"]: t for t in body["tools"]}
    assert tools["pet"]["defer_loading"] is True and tools["book"]["defer_loading"] is True
    assert "defer_loading" not in tools["read_resource"]
    system = json.dumps(body["system"])
    assert "Call grow before you need more tools." in system
    log = json.loads(proc.stdout)["log"]
    book, notes = read_log(log).messages[2].tool_results
    assert book.content == "not booked: decline" and notes.content == "buy milk"
    lines = [json.loads(line) for line in Path(log).read_text().splitlines()]
    [asked] = [line for line in lines if line["event"] == "asked"]
    assert (asked["action"], asked["reason"]) == ("decline", NOT_INTERACTIVE)
