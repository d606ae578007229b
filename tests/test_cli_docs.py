"""docs/cli.md shows each command's real ``--help`` text."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
BLOCKS = dict(re.findall(r"<!-- help: (\S+) -->\n```text\n(.*?)```",
                         PAGE.read_text(encoding="utf-8"), flags=re.DOTALL))


def test_the_page_shows_the_help_of_the_commands_it_covers() -> None:
    assert {"chat", "replay"} <= set(BLOCKS)


@pytest.mark.parametrize("command", sorted(BLOCKS))
def test_help_text_on_the_page_is_real(command: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "toolwire.cli", command, "--help"],
                          capture_output=True, text=True, env={**os.environ, "COLUMNS": "80"})
    assert proc.returncode == 0
    assert proc.stdout == BLOCKS[command]
