"""Commands under Landlock, the sandbox for where bubblewrap cannot run: real processes that
restrict themselves with this kernel's Landlock, and the detection that says when there is none.

The confinement tests need a kernel with Landlock (Linux 5.13 or later, enabled); where it is
missing they are skipped with the reason the detection gave, and the detection tests, which
run everywhere, check that reason and what each sandbox mode then does.
"""

from __future__ import annotations

import errno
import os
import socket
import sys
import textwrap
from pathlib import Path

import pytest
from tests.test_sandbox import run as run_in
from tests.test_sandbox import tools as tools_in

from toolwire.schema.tool import Tool
from toolwire.tools import landlock
from toolwire.tools.coding import NEEDS_APPROVAL, needs_approval
from toolwire.tools.sandbox import Sandbox, SandboxError

ABI, WHY_NOT = landlock.abi()
has_landlock = pytest.mark.skipif(ABI is None, reason=f"no Landlock here: {WHY_NOT}")


def tools(ws: Path, **kw: object) -> dict[str, Tool]:
    return tools_in(ws, sandbox="landlock", **kw)


def run(ws: Path, command: str, **kw: object) -> str:
    return run_in(ws, command, sandbox="landlock", **kw)


@has_landlock
def test_a_command_writes_in_the_workspace_and_nowhere_else(tmp_path: Path,
                                                            outside: Path) -> None:
    out = run(tmp_path, f"echo inside > made.txt && cat made.txt; "
                        f"echo x > {outside}/planted; echo outside=$?; "
                        f"mkdir {outside}/dir; echo mkdir=$?; rm -f {outside}/../x; "
                        f"echo y > /tmp/toolwire-planted-$$; echo tmp=$?")
    assert out.startswith("exit code 0\ninside\n")
    assert "outside=2" in out and "mkdir=1" in out and "tmp=2" in out, out
    assert "Permission denied" in out
    assert (tmp_path / "made.txt").read_text() == "inside\n"
    assert list(outside.iterdir()) == []


@has_landlock
def test_a_command_has_its_own_temporary_folder_and_home_removed_after(tmp_path: Path) -> None:
    out = run(tmp_path, "f=$(mktemp) && echo kept > $f && cat $f && echo home=$HOME tmp=$TMPDIR"
                        " && touch $HOME/.rc && echo null > /dev/null && echo ok")
    assert "kept" in out and out.rstrip().endswith("ok"), out
    tmp = out.split("tmp=")[1].split()[0]
    assert "toolwire-cmd-" in tmp and f"home={tmp}/home" in out
    assert not Path(tmp).exists()


@has_landlock
def test_a_file_outside_cannot_be_changed_through_a_link_or_a_rename(tmp_path: Path,
                                                                     outside: Path) -> None:
    target = outside / "target.txt"
    target.write_text("original\n")
    (tmp_path / "link").symlink_to(target)
    out = run(tmp_path, f"echo changed > link; echo via_link=$?; "
                        f"mv {target} moved.txt; echo moved=$?; true > {target}; echo cut=$?")
    assert "via_link=2" in out and "moved=1" in out and "cut=2" in out, out
    assert target.read_text() == "original\n" and not (tmp_path / "moved.txt").exists()


@has_landlock
def test_run_tests_with_a_hostile_test_cannot_write_outside(tmp_path: Path,
                                                            outside: Path) -> None:
    (tmp_path / "test_evil.py").write_text(textwrap.dedent(f"""
        def test_escape():
            open({str(outside / "escaped")!r}, "w").write("out")
    """))
    t = tools(tmp_path, test_command=f"{sys.executable} -m pytest -q -p no:cacheprovider")
    out = str(t["run_tests"].call({}))
    assert "PermissionError" in out and "1 failed" in out, out
    assert not (outside / "escaped").exists()
    assert needs_approval(Sandbox("landlock")) == NEEDS_APPROVAL  # confined: run_tests runs


@pytest.mark.skipif(ABI is None or ABI < 4,
                    reason=f"Landlock without network rules here (ABI {ABI}): {WHY_NOT}")
def test_no_tcp_unless_allowed(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        probe = (f"{sys.executable} -c \"import socket; socket.create_connection(('127.0.0.1', "
                 f"{port}), timeout=5); print('connected')\"")
        denied = run(tmp_path, probe)
        allowed = run(tmp_path, probe, allow_network=True)
    assert "connected" not in denied and "PermissionError" in denied, denied
    assert "connected" in allowed, allowed


@has_landlock
def test_auto_takes_landlock_when_bwrap_cannot_run(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLWIRE_BWRAP", str(tmp_path / "no-bwrap"))
    box = Sandbox("auto")
    assert box.kind == "landlock" and box.confined and box.note() is None
    said = box.describe()
    assert said.startswith(f"commands run under Landlock (ABI {ABI})")
    assert "no-bwrap" in said and "nothing is hidden from reading" in said
    with pytest.raises(SandboxError, match="a sandbox was required"):
        Sandbox("required")  # required means bubblewrap


def test_without_landlock_auto_runs_unconfined_and_landlock_refuses(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLWIRE_BWRAP", str(tmp_path / "no-bwrap"))
    monkeypatch.setenv("TOOLWIRE_LANDLOCK", "off")
    assert landlock.abi() == (None, "Landlock was turned off (TOOLWIRE_LANDLOCK=off)")
    box = Sandbox("auto")
    assert box.kind is None and not box.confined
    assert "no-bwrap" in box.describe() and "TOOLWIRE_LANDLOCK=off" in box.describe()
    assert box.note() is not None and "unconfined" in box.note()  # type: ignore[operator]
    with pytest.raises(SandboxError, match="Landlock was required but Landlock was turned off"):
        Sandbox("landlock")


def test_why_landlock_is_missing_is_said_plainly() -> None:
    assert "has no Landlock" in landlock.why_not(errno.ENOSYS)
    assert "not enabled" in landlock.why_not(errno.EOPNOTSUPP)
    assert "seccomp" in landlock.why_not(errno.EPERM)
    if ABI is None:  # this machine's own answer is one of those, and landlock refuses with it
        assert WHY_NOT
        with pytest.raises(SandboxError, match="Landlock was required"):
            Sandbox("landlock")
    else:
        assert ABI >= 1 and WHY_NOT is None


@has_landlock
def test_the_command_line_runs_commands_under_landlock(tmp_path: Path, outside: Path) -> None:
    import json

    from tests.test_cli import toolwire

    from toolwire.emulator import Emulator

    script = [{"tool_calls": [{"id": "toolu_1", "name": "run_command", "arguments": {
        "command": f"touch inside.txt; touch {outside}/out.txt"}}]}, {"text": "Done."}]
    log, work = tmp_path / "run.jsonl", tmp_path / "work"  # the log outside the workspace
    work.mkdir()
    with Emulator(script) as emu:
        proc = toolwire("run", "x", "--model", f"anthropic:m@{emu.base_url}", "--workdir",
                        str(work), "--sandbox", "landlock", "--approve", "auto", "--log",
                        str(log), env={**os.environ})
    assert proc.returncode == 0, proc.stderr
    assert "sandbox: commands run under Landlock" in proc.stderr
    assert (work / "inside.txt").exists() and not (outside / "out.txt").exists()
    result = [json.loads(line) for line in log.read_text().splitlines()
              if '"call_end"' in line or '"tool_result"' in line]
    assert "Permission denied" in json.dumps(result)
