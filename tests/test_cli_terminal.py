"""The command line on a terminal and in pipes: output piped into a reader that leaves early
ends quietly, Ctrl-C at a run's prompt stops it at once with the log and the resume line, and
chat's prompt takes Ctrl-C as a shell does. Real subprocesses; prompts on pseudo-terminals."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ptys import drive_on_pty_status, spawn_on_pty, until_shown
from toolwire.emulator import Emulator

ENV = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
RUNLOGS = Path(__file__).parent / "fixtures" / "runlogs"
WRITE = {"text": "I will write the notes file.", "tool_calls": [
    {"id": "call_w1", "name": "write_file", "arguments": {"path": "notes.txt", "content": "hi"}}]}


def closed_pipe_run(argv: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``toolwire ARGV`` with its output a pipe whose reader is already gone."""
    temp = tmp_path / "tmp"
    temp.mkdir(exist_ok=True)
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([sys.executable, "-m", "toolwire.cli", *argv], stdout=write,
                              stderr=subprocess.PIPE, text=True, input="", timeout=120,
                              env={**ENV, "TMPDIR": str(temp)}, cwd=tmp_path)
    finally:
        os.close(write)


def commands(tmp_path: Path, url: str) -> dict[str, list[str]]:
    log = str(RUNLOGS / "format2_streamed.jsonl")
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"id": 1, "prompt": "hi"}\n')
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    model = f"anthropic:m@{url}"
    return {"explain": ["explain", log], "check": ["check", log],
            "convert": ["convert", log, "--to", "openai-chat"],
            "config": ["config", "show"], "help": ["--help"],
            "run": ["run", "hi", "--model", model, "--workdir", str(work)],
            "demo": ["demo"],
            "batch": ["batch", str(tasks), "--model", model, "--out",
                      str(tmp_path / "out.jsonl")]}


@pytest.mark.parametrize("name", ["explain", "check", "convert", "config", "help", "run",
                                  "demo", "batch"])
def test_output_into_a_reader_that_left_ends_quietly(tmp_path: Path, name: str) -> None:
    with Emulator([{"text": "Hello " * 2000}] * 3) as emu:
        proc = closed_pipe_run(commands(tmp_path, emu.base_url)[name], tmp_path)
    assert proc.returncode == (141 if name not in ("help", "batch") else proc.returncode)
    assert proc.returncode in (0, 141), proc.stderr  # batch and help write nothing to stdout
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    assert "BrokenPipe" not in proc.stderr
    assert list((tmp_path / "tmp").glob("toolwire-crash-*")) == []


# ---------------------------------------------------------------- Ctrl-C


def test_ctrl_c_at_the_approval_prompt_stops_the_run_at_once(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    with Emulator([WRITE, {"text": "Written."}]) as emu:
        screen, status = drive_on_pty_status(
            ["run", "write notes", "--model", f"anthropic:m@{emu.base_url}", "--workdir",
             str(tmp_path), "--log", str(log)], [("allow write_file", "\x03")], ENV)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 130, screen
    tail = screen[screen.index("allow write_file"):]
    assert "stopped" in tail and str(log) in tail
    assert f"toolwire resume {log}" in tail.replace("\r\n", " ").replace("\n", " ")
    assert not (tmp_path / "notes.txt").exists()


def test_ctrl_c_in_chat_clears_the_line_and_twice_leaves(tmp_path: Path) -> None:
    with Emulator([{"text": "Hi there."}]) as emu:
        screen, status = drive_on_pty_status(
            ["chat", "--model", f"anthropic:m@{emu.base_url}", "--workdir", str(tmp_path)],
            [("you> ", "half a line\x03"), ("you> ", "\x03")], ENV)
        assert emu.received == []  # the half line was never sent
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, screen
    assert "Ctrl-C again" in screen


def test_ctrl_c_on_chats_empty_line_leaves(tmp_path: Path) -> None:
    with Emulator([{"text": "Hi there."}]) as emu:
        screen, status = drive_on_pty_status(
            ["chat", "--model", f"anthropic:m@{emu.base_url}", "--workdir", str(tmp_path)],
            [("you> ", "hello"), ("you> ", "\x03")], ENV)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, screen
    assert "Hi there." in screen and "Ctrl-C again" not in screen


def test_a_deferred_stop_names_what_waits_and_how_to_answer(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    with Emulator([WRITE]) as emu:
        args = ["run", "write notes", "--model", f"anthropic:m@{emu.base_url}", "--workdir",
                str(tmp_path), "--approve", "defer"]
        text = subprocess.run([sys.executable, "-m", "toolwire.cli", *args, "--log", str(log)],
                              capture_output=True, text=True, env=ENV, timeout=120, input="")
    assert "call_w1" in text.stderr and "write_file" in text.stderr
    assert '"path": "notes.txt"' in text.stderr or '"path":"notes.txt"' in text.stderr
    assert f"toolwire resume {log} --allow call_w1" in text.stderr
    with Emulator([WRITE]) as emu:
        args[3] = f"anthropic:m@{emu.base_url}"
        data = subprocess.run([sys.executable, "-m", "toolwire.cli", *args, "--json", "--log",
                               str(tmp_path / "run2.jsonl")], capture_output=True, text=True,
                              env=ENV, timeout=120, input="")
    result = json.loads(data.stdout)
    assert result["waiting"] == [{"id": "call_w1", "tool": "write_file",
                                  "arguments": {"path": "notes.txt", "content": "hi"}}]
    assert "answer" not in result or result["answer"] is None


def test_the_running_command_shows_while_it_runs(tmp_path: Path) -> None:
    flag = tmp_path / "go"
    (tmp_path / "wait.py").write_text("import os, time\nwhile not os.path.exists('go'):\n"
                                      "    time.sleep(0.05)\nprint('out-' + str(6 * 7))\n")
    command = f"{sys.executable} wait.py"
    call = {"text": "", "tool_calls": [{"id": "call_r1", "name": "run_command",
                                        "arguments": {"command": command}}]}
    with Emulator([call, {"text": "Done."}]) as emu:
        pid, fd = spawn_on_pty(["run", "go", "--model", f"anthropic:m@{emu.base_url}",
                                "--workdir", str(tmp_path), "--approve", "auto", "--sandbox",
                                "off", "--no-stream"], ENV)
        shown = until_shown(fd, "→ run_command")
        assert "→ run_command" in shown and "out-42" not in shown  # still running
        flag.touch()
        with_end = shown + until_shown(fd, None)
        os.waitpid(pid, 0)
        os.close(fd)
    assert "out-42" in with_end and with_end.count("→ run_command") == 1, with_end
