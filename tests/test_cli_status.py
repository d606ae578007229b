"""The live status line, seen the way a person sees it: the command's stderr is a real terminal."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from toolwire.emulator import Emulator


def test_status_line_shows_turn_tool_and_tokens(tmp_path: Path) -> None:
    script = [
        {"text": "Listing.", "tool_calls": [{"id": "call_s1", "name": "run_command",
                                             "arguments": {"command": "sleep 0.2; echo done"}}],
         "usage": {"input_tokens": 1200, "output_tokens": 34}},
        {"text": "All done.", "usage": {"input_tokens": 1300, "output_tokens": 5}},
    ]
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    with Emulator(script) as emu:
        proc = subprocess.run(
            [sys.executable, "-m", "toolwire.cli", "run", "go", "--model",
             f"anthropic:m@{emu.base_url}", "--workdir", str(tmp_path), "--approve", "auto"],
            stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL, env=env,
            text=True, timeout=60)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    screen = b"".join(chunks).decode("utf-8", "replace")
    assert proc.returncode == 0
    assert "turn 1 · running run_command · 1,234 tokens" in screen
    assert "turn 1 · waiting for the model · 1,234 tokens" in screen
    assert "\r\x1b[2K" in screen  # the line is redrawn in place, not appended
    assert "stopped: answered after 2 turn(s), 2,539 tokens" in screen
    assert "All done." in proc.stdout


def _drive(argv: list[str], answers: list[tuple[str, str]], env: dict[str, str]) -> str:
    """Run a command on a pseudo-terminal, typing each answer once its prompt appears."""
    import select

    pid, fd = pty.fork()
    if pid == 0:  # the child: the command, with the terminal as stdin, stdout and stderr
        os.execvpe(sys.executable, [sys.executable, "-m", "toolwire.cli", *argv], env)
    seen, unread, pending = "", "", list(answers)
    while True:
        ready, _, _ = select.select([fd], [], [], 30)
        if not ready:
            break
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        text = data.decode("utf-8", "replace")
        seen, unread = seen + text, unread + text
        if pending and pending[0][0] in unread:  # answer each prompt once, when it shows
            prompt, answer = pending.pop(0)
            unread = unread[unread.index(prompt) + len(prompt):]
            os.write(fd, (answer + "\n").encode())
    os.waitpid(pid, 0)
    os.close(fd)
    return seen


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
        screen = _drive(
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
