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
    assert "turn 1 · running run_command · 0 tokens" in screen
    assert "turn 1 · waiting for the model · 1,234 tokens" in screen
    assert "\r\x1b[2K" in screen  # the line is redrawn in place, not appended
    assert "stopped: answered after 2 turn(s), 2,539 tokens" in screen
    assert "All done." in proc.stdout
