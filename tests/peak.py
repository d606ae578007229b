"""The peak memory of a command line run in a subprocess, as the process itself saw it.

``ru_maxrss`` from ``wait4`` counts the pages a child shares with its parent when it is forked,
so a child of a large test process reports the parent's size. `run_measured` has the child
write its own ``VmHWM`` (``/proc/self/status``: the high-water mark of the program it runs,
since its ``exec``) when it exits.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

_WRAP = """
import atexit, runpy, sys
out = sys.argv.pop(1)

def _peak():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                with open(out, "w") as f:
                    f.write(line.split()[1])

atexit.register(_peak)
sys.argv = ["toolwire", *sys.argv[1:]]
runpy.run_module("toolwire.cli", run_name="__main__", alter_sys=True)
"""


def run_measured(args: list[str], **popen: Any) -> tuple[int, int]:
    """``toolwire ARGS`` in a subprocess (``popen`` as for `subprocess.Popen`): its exit code
    and its peak resident memory in bytes."""
    with tempfile.TemporaryDirectory(prefix="toolwire-peak-") as folder:
        out = Path(folder) / "peak"
        proc = subprocess.Popen([sys.executable, "-c", _WRAP, str(out), *args], **popen)
        code = proc.wait()
        assert out.exists(), "the command ended without saying its peak memory"
        return code, int(out.read_text()) * 1024
