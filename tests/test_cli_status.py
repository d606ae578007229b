"""The live status line, seen the way a person sees it: the command's stderr is a real terminal."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ptys import drive_on_pty, run_on_pty
from toolwire.emulator import Emulator


def test_status_line_shows_turn_tool_and_tokens(tmp_path: Path) -> None:
    script = [
        {"text": "Listing.", "tool_calls": [{"id": "call_s1", "name": "run_command",
                                             "arguments": {"command": "sleep 0.2; echo done"}}],
         "usage": {"input_tokens": 1200, "output_tokens": 34}},
        {"text": "All done.", "usage": {"input_tokens": 1300, "output_tokens": 5}},
    ]
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    with Emulator(script) as emu:
        proc, screen = run_on_pty(
            [sys.executable, "-m", "toolwire.cli", "run", "go", "--model",
             f"anthropic:m@{emu.base_url}", "--workdir", str(tmp_path), "--approve", "auto"],
            env, pipe_stdout=True)
    assert proc.returncode == 0
    assert "turn 1 · running run_command · 1,234 tokens" in screen
    assert "turn 1 · waiting for the model · 1,234 tokens" in screen
    assert "\r\x1b[2K" in screen  # the line is redrawn in place, not appended
    assert "stopped: answered after 2 turn(s), 2,539 tokens" in screen
    assert "All done." in proc.stdout


def test_approval_and_ask_user_prompt_in_the_terminal(tmp_path: Path) -> None:
    from toolwire.agent.runlog import read_log

    script = [
        {"tool_calls": [
            {"id": "call_a1", "name": "write_file", "arguments": {"path": "a.txt", "content": "A"}},
            {"id": "call_a2", "name": "write_file", "arguments": {"path": "b.txt", "content": "B"}},
            {"id": "call_a3", "name": "ask_user", "arguments": {"question": "Which colour?",
                                                                "choices": ["red", "blue"]}}]},
        {"text": "Done."},
    ]
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    log = tmp_path / "run.jsonl"
    with Emulator(script) as emu:
        screen = drive_on_pty(
            ["run", "go", "--model", f"anthropic:m@{emu.base_url}", "--workdir", str(tmp_path),
             "--log", str(log)],
            [("allow write_file", "y"), ("allow write_file", "not b, please"),
             ("the model asks: Which colour? (red / blue)", "blue")], env)
    assert "Done." in screen
    assert (tmp_path / "a.txt").read_text() == "A" and not (tmp_path / "b.txt").exists()
    results = read_log(log).messages[2].tool_results
    assert not results[0].is_error
    assert results[1].is_error and results[1].content == (
        "The user declined this call to 'write_file'. Their reason: not b, please")
    assert results[2].content == "blue" and not results[2].is_error
