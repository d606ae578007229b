"""Limits on a whole command: memory and processes in a cgroup of its own where one can be made,
else per process (and the sandbox line says so), in every mode this machine has.

The cgroup tests need a cgroup v2 that toolwire may make cgroups beneath (root on a host whose
cgroups are all v2, or a delegated cgroup); where there is none they are skipped with the reason
toolwire found, and the test of what the sandbox line says runs instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest
from tests.test_sandbox_escapes import MODES
from tests.users import DROP, as_ordinary_user, shared_folder

from toolwire.tools.cgroup import Groups
from toolwire.tools.process import Limits
from toolwire.tools.sandbox import Sandbox

GROUPS = Groups()
cgroup = pytest.mark.skipif(GROUPS.base is None, reason=f"no cgroup here: {GROUPS.why_not}")
ALL_MODES = [*MODES, pytest.param("off", id="off")]

HOLD = (f"{sys.executable} -c 'b = bytearray(200 << 20); b[::4096] = b\"x\" * len(b[::4096]); "
        "print(\"held\", flush=True); import time; time.sleep(3)'")


def run(ws: Path, command: str, mode: str, limits: Limits) -> str:
    return Sandbox(mode, limits=limits).run(ws, command, 60).output  # type: ignore[arg-type]


@cgroup
@pytest.mark.parametrize("mode", ALL_MODES)
def test_memory_is_limited_for_the_command_as_a_whole(tmp_path: Path, mode: str) -> None:
    # 300 MB of address space lets each process hold its 200 MB: only the whole can fail
    out = run(tmp_path, f"for i in 1 2 3 4; do {HOLD} & done; wait", mode,
              Limits(memory_bytes=300 << 20))
    assert out.count("held") < 4, out  # four processes of 200 MB do not fit in 300 MB


@cgroup
@pytest.mark.parametrize("mode", ALL_MODES)
def test_nothing_in_a_commands_cgroup_outlives_it(tmp_path: Path, mode: str) -> None:
    from tests.test_sandbox import alive_with

    marker = f"toolwire-left-{uuid.uuid4().hex[:10]}"
    out = run(tmp_path, f"setsid sh -c 'exec -a {marker} sleep 300' & echo started", mode,
              Limits())
    assert "started" in out
    assert alive_with(marker) == []


FORKS = "for i in $(seq 60); do sleep 2 & done 2>&1 | head -3; wait; echo ended"


@cgroup
@pytest.mark.parametrize("mode", ALL_MODES)
def test_processes_are_limited_for_the_command_as_a_whole(tmp_path: Path, mode: str) -> None:
    out = run(tmp_path, FORKS, mode, Limits(processes=20))
    assert "fork" in out.lower() or "resource temporarily unavailable" in out.lower(), out


RUN = DROP + textwrap.dedent("""
    import sys
    from pathlib import Path
    from toolwire.tools.process import Limits
    box = Sandbox(sys.argv[2], limits=Limits(processes=20))
    print(box.describe())
    print(box.run(Path(sys.argv[1]), sys.argv[3], 60).output)
""")


@pytest.mark.skipif(GROUPS.base is not None, reason="the user process limit is used only "
                    "without a cgroup")
@pytest.mark.parametrize("mode", ALL_MODES)
def test_without_a_cgroup_an_ordinary_users_process_limit_bounds_a_command(
        shared_folder: Path, mode: str) -> None:
    proc = subprocess.run(as_ordinary_user([sys.executable, "-c", RUN, str(shared_folder), mode,
                                            FORKS]), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    said, out = proc.stdout.split("\n", 1)
    assert "the number of processes is limited through your user's process limit" in said
    assert "fork" in out.lower() or "resource temporarily unavailable" in out.lower(), out
    assert out.rstrip().endswith("ended")


@pytest.mark.parametrize("mode", [*ALL_MODES, pytest.param("auto", id="auto")])
def test_the_sandbox_line_says_how_the_limits_hold(mode: str) -> None:
    said = Sandbox(mode).describe()  # type: ignore[arg-type]
    if GROUPS.base is None:
        assert "memory is limited per process, not for a command as a whole" in said
        assert f"(no cgroup: {GROUPS.why_not})" in said
        assert ("number of processes is not limited" in said) == (os.geteuid() == 0)
    else:
        assert "are limited for each command as a whole, in a cgroup of its own" in said


__all__ = ["shared_folder"]  # a fixture, used by name
