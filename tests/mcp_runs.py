"""``toolwire run`` with the features MCP server (tests/fixtures), as a real subprocess against
an emulator: what the MCP tests of approval and progress share."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from toolwire.emulator import Emulator

FEATURES = f"{sys.executable} {Path(__file__).parent / 'fixtures' / 'mcp_server_features.py'}"
ENV = {k: v for k, v in os.environ.items()
       if not k.endswith("_API_KEY") and not k.startswith("TOOLWIRE_")}


def run_with_features(emu: Emulator, workdir: Path, log: Path,
                      approve: str) -> subprocess.CompletedProcess[str]:
    """One run of task "go" with no built-in tools, the features server and ``--approve``."""
    return subprocess.run(
        [sys.executable, "-m", "toolwire.cli", "run", "go", "--model",
         f"anthropic:m@{emu.base_url}", "--workdir", str(workdir), "--tools", "none",
         "--approve", approve, "--mcp", FEATURES, "--log", str(log)],
        env=ENV, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
