"""Streaming on a terminal by default, and a resume that takes its run's settings from the log.

Real subprocesses against the emulator on loopback; the terminal is a real pseudo-terminal.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ptys import run_on_pty
from toolwire.agent.runlog import read_log
from toolwire.emulator import Emulator

ENV = {k: v for k, v in os.environ.items()
       if not k.endswith("_API_KEY") and not k.startswith("TOOLWIRE_")}
WORDS = "one two three four five six seven eight nine ten"


def toolwire(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolwire.cli", *args], capture_output=True,
                          text=True, env=ENV, timeout=120, input="")


@pytest.mark.parametrize(("flags", "streamed"), [((), True), (("--no-stream",), False)])
def test_a_terminal_sees_the_text_as_it_arrives_unless_told_not_to(
        tmp_path: Path, flags: tuple[str, ...], streamed: bool) -> None:
    with Emulator([{"text": WORDS}], chunk_delay=0.01) as emu:
        proc, screen = run_on_pty(
            [sys.executable, "-m", "toolwire.cli", "run", "count", "--model",
             f"anthropic:m@{emu.base_url}", "--workdir", str(tmp_path), "--color", "never",
             *flags], ENV)
        asked = [r.body.get("stream", False) for r in emu.received]
    assert proc.returncode == 0, screen
    assert asked == [streamed]
    assert screen.count(WORDS) == 1  # shown once, streamed or not


def test_output_that_is_not_a_terminal_is_not_streamed(tmp_path: Path) -> None:
    with Emulator([{"text": WORDS}]) as emu:
        proc = toolwire("run", "count", "--model", f"anthropic:m@{emu.base_url}", "--workdir",
                        str(tmp_path))
        asked = [r.body.get("stream", False) for r in emu.received]
    assert proc.returncode == 0, proc.stderr
    assert asked == [False]
    assert proc.stdout.strip() == WORDS


WRITE = {"tool_calls": [{"id": "call_w1", "name": "write_file",
                         "arguments": {"path": "notes.txt", "content": "hi"}}]}


def test_resume_takes_the_folder_tools_and_policy_from_the_log(tmp_path: Path) -> None:
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    log = tmp_path / "run.jsonl"
    with Emulator([WRITE, {"text": "Written."}]) as emu:
        first = toolwire("run", "write", "--model", f"anthropic:m@{emu.base_url}", "--workdir",
                         str(work), "--approve", "defer", "--log", str(log), "--sandbox", "off")
        assert first.returncode == 1 and read_log(log).awaiting == ["call_w1"], first.stderr
        context = read_log(log).header["context"]
        assert (context["tools"], context["approve"]) == ("coding", "defer")
        # from another folder, without --workdir, --tools or --approve: the log's own
        proc = subprocess.run(
            [sys.executable, "-m", "toolwire.cli", "resume", str(log), "--allow", "call_w1",
             "--json"], capture_output=True, text=True, env=ENV, timeout=120, cwd=elsewhere)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["answer"] == "Written."
    assert (work / "notes.txt").read_text() == "hi"
    assert not (elsewhere / "notes.txt").exists()


def test_flags_given_to_resume_win_over_the_log(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    with Emulator([WRITE, {"text": "Refused, then."}]) as emu:
        first = toolwire("run", "write", "--model", f"anthropic:m@{emu.base_url}", "--workdir",
                         str(tmp_path), "--approve", "auto", "--log", str(log),
                         "--max-turns", "1")
        assert first.returncode == 1, first.stderr
        (tmp_path / "notes.txt").unlink()
        # the log says write_file was allowed; --tools none now has no write_file at all
        proc = toolwire("resume", str(log), "--tools", "none", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["answer"] == "Refused, then."
    header_tools = [t["name"] for t in read_log(log).header["tools"]]
    assert "write_file" in header_tools
    assert any("it goes on with []" in n for n in json.loads(proc.stdout)["notes"])
