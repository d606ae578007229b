"""Escape sequences a model writes never reach the terminal raw (OSC 52 clipboard, OSC 0
window title, OSC 8 hyperlink, CSI), streamed or whole, with colour or without, in ``run`` on a
pseudo-terminal and in ``explain``; and odd model ids in ``TOOLWIRE_MODEL`` are exit 2 naming
the variable."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptys import run_on_pty
from toolwire.emulator import Emulator
from toolwire.escapes import json_safe, neutral, visible

ENV = {k: v for k, v in os.environ.items()
       if not k.endswith("_API_KEY") and not k.startswith("TOOLWIRE_")}
HOSTILE = ("Done. \x1b]52;c;cm0gLXJmIH4=\x07 \x1b]0;owned\x07 "
           "\x1b]8;;http://127.0.0.1:9/x\x07click\x1b]8;;\x07 \x1b[2J\x9b31m \u202egnp.exe")
RAW = ("\x1b]", "\x1b[2J", "\x9b", "\u202e")


@pytest.mark.parametrize("color", ["always", "never"])
@pytest.mark.parametrize("stream", ["--stream", "--no-stream"])
def test_escape_sequences_in_the_models_text_are_shown_not_obeyed(
        color: str, stream: str, tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    with Emulator([{"text": HOSTILE}]) as emu:
        proc, screen = run_on_pty(
            [sys.executable, "-m", "toolwire.cli", "run", "hi", "--model",
             f"anthropic:m@{emu.base_url}", "--workdir", str(tmp_path), "--tools", "none",
             "--color", color, stream, "--log", str(log)], ENV)
    assert proc.returncode == 0, screen
    for raw in RAW:
        assert raw not in screen
    assert "\\x1b]52;c;cm0gLXJmIH4=\\x07" in screen and "\\u202egnp.exe" in screen
    explained = subprocess.run([sys.executable, "-m", "toolwire.cli", "explain", str(log)],
                               capture_output=True, text=True, env=ENV, timeout=60)
    for raw in RAW:
        assert raw not in explained.stdout
    as_json = subprocess.run([sys.executable, "-m", "toolwire.cli", "explain", str(log),
                              "--json"], capture_output=True, text=True, env=ENV, timeout=60)
    for raw in RAW:
        assert raw not in as_json.stdout
    json.loads(as_json.stdout)


@given(st.text())
def test_what_is_shown_holds_no_control_character_and_json_stays_the_same(text: str) -> None:
    for shown in (visible(text), neutral(text)):
        assert not any(c in shown for c in "\x1b\r\x07\x9b\u202e\u2028")
    assert "\n" not in visible(text)
    assert neutral(text).count("\n") == text.count("\n")
    dumped = json.dumps({"t": text}, ensure_ascii=False)
    assert json.loads(json_safe(dumped)) == {"t": text}


@pytest.mark.parametrize("model_id", [
    "anthropic:m@http://127.0.0.1:9\r/x",
    "anthropic:m@http://\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54:9",
    "anthropic:m\x1b[2J",
])
def test_an_odd_model_id_in_the_environment_is_exit_2_naming_it(
        model_id: str, tmp_path: Path) -> None:
    env = {**ENV, "TOOLWIRE_MODEL": model_id, "TOOLWIRE_CONFIG": str(tmp_path / "none.toml")}
    proc = subprocess.run([sys.executable, "-m", "toolwire.cli", "run", "hi", "--workdir",
                           str(tmp_path), "--tools", "none"], capture_output=True, text=True,
                          env=env, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2, proc.stderr
    assert "TOOLWIRE_MODEL" in proc.stderr and "Traceback" not in proc.stderr
    flag = subprocess.run([sys.executable, "-m", "toolwire.cli", "run", "hi", "--model",
                           model_id, "--workdir", str(tmp_path)], capture_output=True,
                          text=True, env=ENV, timeout=60, stdin=subprocess.DEVNULL)
    assert flag.returncode == 2 and "--model" in flag.stderr
    assert "\x1b" not in proc.stderr + flag.stderr and "\r" not in proc.stderr + flag.stderr
