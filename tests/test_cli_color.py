"""Colour: on a terminal by default, never when the output is not one, and off with NO_COLOR,
--no-color, TOOLWIRE_COLOR=never or the config file; --color always forces it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ptys import run_on_pty
from toolwire.emulator import Emulator

CLEAN = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")
         and k not in ("NO_COLOR", "TOOLWIRE_COLOR", "TOOLWIRE_CONFIG", "XDG_CONFIG_HOME")}
SGR = re.compile(r"\x1b\[[0-9;]*m")  # a colour or style code (the status line uses others)
SCRIPT = [{"text": "Let me look.", "tool_calls": [{"id": "c1", "name": "list_files",
                                                   "arguments": {}}]},
          {"text": "Done."}]


def run(tmp_path: Path, *flags: str, tty: bool, env: dict[str, str] | None = None) -> str:
    """A run against the emulator; what it wrote, its stdout and stderr together."""
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), **CLEAN, **(env or {})}
    with Emulator(SCRIPT) as emu:
        argv = [sys.executable, "-m", "toolwire", "run", "x", "--model",
                f"anthropic:m@{emu.base_url}", "--workdir", str(tmp_path), *flags]
        if not tty:
            proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60,
                                  stdin=subprocess.DEVNULL)
            assert proc.returncode == 0, proc.stderr
            return proc.stdout + proc.stderr
        proc, screen = run_on_pty(argv, env)
        assert proc.returncode == 0
        return screen


def test_a_terminal_gets_colour(tmp_path: Path) -> None:
    screen = run(tmp_path, "--no-stream", tty=True)
    assert "\x1b[36mmodel: Let me look.\x1b[0m" in screen
    assert "\x1b[33m  → list_files {}\x1b[0m" in screen
    assert "\x1b[32m  ← ok (10 chars)\x1b[0m" in screen


def test_streamed_text_is_coloured_as_it_arrives(tmp_path: Path) -> None:
    screen = run(tmp_path, tty=True)
    assert "\x1b[36mLet" in screen
    assert "Let me look.\r\n" in SGR.sub("", screen)  # one line: no status line cut in


@pytest.mark.parametrize(("flags", "env"), [
    ((), {"NO_COLOR": "1"}), (("--no-color",), {}), (("--color", "never"), {}),
    ((), {"TOOLWIRE_COLOR": "never"})])
def test_colour_can_be_turned_off_on_a_terminal(tmp_path: Path, flags: tuple[str, ...],
                                                env: dict[str, str]) -> None:
    screen = run(tmp_path, *flags, tty=True, env=env)
    assert "Let me look." in screen and not SGR.search(screen)


def test_the_config_file_turns_colour_off(tmp_path: Path) -> None:
    config = tmp_path / "config" / "toolwire" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('color = "never"\n')
    screen = run(tmp_path, tty=True)
    assert "Let me look." in screen and not SGR.search(screen)


def test_output_that_is_not_a_terminal_stays_plain_unless_forced(tmp_path: Path) -> None:
    plain = run(tmp_path, tty=False)
    assert "model: Let me look." in plain and "\x1b" not in plain
    forced = run(tmp_path, "--color", "always", tty=False)
    assert "\x1b[36mmodel: Let me look.\x1b[0m" in forced
    assert "\x1b[1m\nstopped: answered" in forced or "\x1b[1mstopped: answered" in forced
