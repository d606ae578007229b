"""Running commands in the workspace: ``run_command`` and ``run_tests``.

Owns `run_command` (a shell command with a timeout and an output cap, its exit code in the
result) and `run_tests` (the project's test command). The command runs with the workspace as
its working directory; what it may touch beyond that is what the approval policy is for.
"""

from __future__ import annotations

import os
import subprocess
import sys

from toolwire.agent.dispatch import cap_text
from toolwire.errors import ToolError
from toolwire.tools.files import Workspace

MAX_OUTPUT = 20_000


def run_command(ws: Workspace, command: str, timeout: float = 60.0) -> str:
    if not command.strip():
        raise ToolError("command is empty: give a shell command, like 'ls -la'")
    if timeout <= 0 or timeout > 600:
        raise ToolError(f"timeout must be between 0 and 600 seconds, got {timeout:g}")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        proc = subprocess.run(
            command, shell=True, cwd=ws.root, capture_output=True, text=True,
            timeout=timeout, env=env, stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or "") if isinstance(exc.stdout, str) else ""
        raise ToolError(
            f"command timed out after {timeout:g} s and was stopped\n{cap_text(out, MAX_OUTPUT)}"
        ) from None
    output = "\n".join(s.rstrip("\n") for s in (proc.stdout, proc.stderr) if s)
    return f"exit code {proc.returncode}\n{cap_text(output, MAX_OUTPUT)}".rstrip()


DEFAULT_TEST_COMMAND = f"{sys.executable} -m pytest -q"


def run_tests(ws: Workspace, test_command: str | None = None, timeout: float = 300.0) -> str:
    return run_command(ws, test_command or DEFAULT_TEST_COMMAND, timeout=timeout)
