"""``toolwire runs``: the runs a folder keeps, newest first, each with how it ended, its model
and task, and the command that goes on with it. Real subprocesses against the emulator."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from toolwire.emulator import Emulator
from toolwire.records import runs_folder

ENV = {k: v for k, v in os.environ.items()
       if not k.endswith("_API_KEY") and not k.startswith("TOOLWIRE_")}
WRITE = {"tool_calls": [{"id": "call_w1", "name": "write_file",
                         "arguments": {"path": "a.txt", "content": "x"}}]}


def toolwire(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolwire.cli", *args], capture_output=True,
                          text=True, env=ENV, timeout=120, cwd=cwd, input="")


def test_runs_lists_each_run_with_how_to_go_on(tmp_path: Path) -> None:
    empty = toolwire("runs", cwd=tmp_path)
    assert empty.returncode == 0 and "no runs in" in empty.stdout
    with Emulator([{"text": "Hello."}, WRITE]) as emu:
        model = f"anthropic:m@{emu.base_url}"
        first = toolwire("run", "say hello", "--model", model, cwd=tmp_path)
        second = toolwire("run", "write a file", "--model", model, "--approve", "defer",
                          cwd=tmp_path)
    assert first.returncode == 0 and second.returncode == 1, first.stderr + second.stderr
    (runs_folder(tmp_path) / "broken.jsonl").write_text("not a log\n")
    listed = toolwire("runs", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    text = listed.stdout
    assert "answered" in text and "'say hello'" in text and "toolwire chat --resume" in text
    assert "awaiting_approval" in text and "--allow call_w1" in text
    assert "unreadable" in text
    rows = json.loads(toolwire("runs", "--json", cwd=tmp_path).stdout)
    readable = [r for r in rows if r["status"] != "unreadable"]
    assert [r["task"] for r in readable] == ["write a file", "say hello"]  # newest first
    assert all(r["model"] == model for r in readable)
