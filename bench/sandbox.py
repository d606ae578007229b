"""What the command sandbox costs per command: ``true`` sandboxed against a plain subprocess.

Four ways to run ``/bin/sh -c true`` in a workspace, taking turns in each round: a plain
``subprocess.run`` (what the command tools did before the sandbox), toolwire's runner without
the sandbox (its own session, rlimits, bounded output), and toolwire's runner in the bubblewrap
sandbox and under Landlock. The first round is thrown away; the medians of ``--runs`` rounds are
reported, with the extra time per command over the plain subprocess. A sandbox that cannot run
here is reported as unavailable with the reason.

Run: ``python bench/sandbox.py`` (``--runs N``, default 50).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import table
from toolwire.tools.sandbox import Sandbox, SandboxError


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="toolwire-bench-"))
    boxed, plain_box = Sandbox("auto"), Sandbox("off")
    try:
        locked: Sandbox | None = Sandbox("landlock")
        no_landlock = ""
    except SandboxError as exc:
        locked, no_landlock = None, str(exc)
    cases: dict[str, Callable[[], object]] = {
        "plain subprocess.run": lambda: subprocess.run(
            ["/bin/sh", "-c", "true"], cwd=work, capture_output=True, check=True),
        "toolwire, sandbox off": lambda: plain_box.run(work, "true", 30),
    }
    if boxed.kind == "bubblewrap":
        cases["toolwire, bubblewrap sandbox"] = lambda: boxed.run(work, "true", 30)
    if locked is not None:
        cases["toolwire, Landlock"] = lambda: locked.run(work, "true", 30)
    times: dict[str, list[float]] = {name: [] for name in cases}
    for round_ in range(args.runs + 1):
        for name, fn in cases.items():
            start = time.perf_counter()
            fn()
            if round_:
                times[name].append(time.perf_counter() - start)
    base = statistics.median(times["plain subprocess.run"])
    rows = [[name, f"{statistics.median(t) * 1000:.2f}",
             f"{(statistics.median(t) - base) * 1000:+.2f}"] for name, t in times.items()]
    if boxed.kind != "bubblewrap":
        rows.append(["toolwire, bubblewrap sandbox", "unavailable", str(boxed.why_not)])
    if locked is None:
        rows.append(["toolwire, Landlock", "unavailable", no_landlock])
    print(f"`true` run {args.runs} times per case, Python {platform.python_version()} on "
          f"{platform.machine()}\n")
    print(table(["case", "median ms", "vs plain ms"], rows))


if __name__ == "__main__":
    main()
