"""``toolwire run`` with the features MCP server (tests/fixtures), as a real subprocess against
an emulator: what the MCP tests of approval and progress share."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from toolwire.emulator import Emulator

FIXTURES = Path(__file__).parent / "fixtures"
FEATURES = f"{sys.executable} {FIXTURES / 'mcp_server_features.py'}"
WEATHER = f"{sys.executable} {FIXTURES / 'mcp_server_weather.py'}"
ENV = {k: v for k, v in os.environ.items()
       if not k.endswith("_API_KEY") and not k.startswith("TOOLWIRE_")}


def run_with_features(emu: Emulator, workdir: Path, log: Path, approve: str, *,
                      server: str = FEATURES, env: dict[str, str] | None = None
                      ) -> subprocess.CompletedProcess[str]:
    """One run of task "go" with no built-in tools, an MCP server (the features one unless
    ``server`` names another) and ``--approve``."""
    return subprocess.run(
        [sys.executable, "-m", "toolwire.cli", "run", "go", "--model",
         f"anthropic:m@{emu.base_url}", "--workdir", str(workdir), "--tools", "none",
         "--approve", approve, "--mcp", server, "--log", str(log)],
        env={**ENV, **(env or {})}, capture_output=True, text=True, timeout=300,
        stdin=subprocess.DEVNULL)
