"""Running commands in the workspace: ``run_command`` and ``run_tests``.

Owns `run_command` (a shell command with a timeout, its exit code and bounded output in the
result) and `run_tests` (the project's test command). Both run through a
`toolwire.tools.sandbox.Sandbox`, which decides what a command may touch; the approval policy
decides whether it runs at all. A command run without a sandbox says so in the run's notes
(a `toolwire.events.ToolNote`, kept once per run).
"""

from __future__ import annotations

import shlex
import subprocess
import sys

from toolwire.errors import ToolError
from toolwire.events import ToolNote, emit
from toolwire.tools.files import Workspace
from toolwire.tools.sandbox import Sandbox

DEFAULT_TEST_COMMAND = f"{shlex.quote(sys.executable)} -m pytest -q"


def run_command(ws: Workspace, sandbox: Sandbox, command: str, timeout: float = 60.0, *,
                network: bool = False) -> str:
    if not command.strip():
        raise ToolError("command is empty: give a shell command, like 'ls -la'")
    if "\0" in command:
        raise ToolError("command holds a NUL character, which no shell command can")
    if timeout <= 0 or timeout > 600:
        raise ToolError(f"timeout must be between 0 and 600 seconds, got {timeout:g}")
    unconfined = sandbox.note()
    if unconfined is not None:  # kept once per run, in its notes and its log
        emit(ToolNote("sandbox", unconfined))
    try:
        done = sandbox.run(ws.root, command, timeout, network=network)
    except (OSError, subprocess.SubprocessError) as exc:  # the latter: confining it failed
        raise ToolError(f"the command could not be started: {exc}") from None
    if done.timed_out:
        raise ToolError(f"command timed out after {timeout:g} s and was stopped, with every "
                        f"process it started\n{done.output}".rstrip())
    return f"exit code {done.returncode}\n{done.output}".rstrip()


def run_tests(ws: Workspace, sandbox: Sandbox, test_command: str | None = None,
              timeout: float = 300.0, *, network: bool = False) -> str:
    return run_command(ws, sandbox, test_command or DEFAULT_TEST_COMMAND, timeout=timeout,
                       network=network)
