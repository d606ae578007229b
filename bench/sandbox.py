"""What the command sandbox costs per command, and what its hardening and limits add to that.

``/bin/sh -c true`` run in a workspace, the cases taking turns in each round: a plain
``subprocess.run`` (what the command tools did before the sandbox); toolwire's runner without
the sandbox; and, for each sandbox this machine has (bubblewrap, Landlock), the sandbox with its
hardening left out and with it, where hardening is what holds the command in beyond the mode's
first layer: under Landlock the dropped capabilities and the seccomp filter, in bubblewrap the
filter and the UNIX sockets hidden. Apart from the runs, it times what the limits add to every
command before it starts (`toolwire.tools.strategy.Bounds.command`: the hard limits in force
read, the process count of an ordinary user, the command's cgroup made and removed where there
is one). The first round is thrown away; medians of ``--runs`` rounds are reported, with each
case against the plain subprocess and each sandbox with its hardening against without it. A
sandbox that cannot run here is reported as unavailable with the reason.

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
from toolwire.tools.bwrap import Bubblewrap
from toolwire.tools.sandbox import Sandbox, SandboxError
from toolwire.tools.strategy import Landlocked


def _boxes() -> tuple[dict[str, Sandbox], list[list[str]]]:
    """The sandboxes to time, named, each without and with its hardening; and why others
    are missing."""
    found: dict[str, Sandbox] = {"toolwire, sandbox off": Sandbox("off")}
    missing: list[list[str]] = []
    for mode, name in (("required", "bubblewrap"), ("landlock", "Landlock")):
        try:
            hardened, bare = Sandbox(mode), Sandbox(mode)  # type: ignore[arg-type]
        except SandboxError as exc:
            missing.append([f"toolwire, {name}", "unavailable", "", "", str(exc)])
            continue
        strategy = hardened.strategy
        if isinstance(strategy, Bubblewrap):
            bare.strategy = Bubblewrap(strategy.bwrap, strategy.passed, hardened=False)
        elif isinstance(strategy, Landlocked):
            bare.strategy = Landlocked(strategy.abi, strategy.passed, strategy.why_not_bwrap,
                                       hardened=False)
        found[f"toolwire, {name}, not hardened"] = bare
        found[f"toolwire, {name}"] = hardened
    return found, missing


def _bounds_cost(box: Sandbox, runs: int) -> float:
    """Median seconds that preparing one command's limits takes (parent side)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        with box.bounds.command():
            pass
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="toolwire-bench-"))
    boxes, missing = _boxes()
    cases: dict[str, Callable[[], object]] = {"plain subprocess.run": lambda: subprocess.run(
        ["/bin/sh", "-c", "true"], cwd=work, capture_output=True, check=True)}
    for name, box in boxes.items():
        cases[name] = lambda box=box: box.run(work, "true", 30)  # type: ignore[misc]
    times: dict[str, list[float]] = {name: [] for name in cases}
    for round_ in range(args.runs + 1):
        for name, fn in cases.items():
            start = time.perf_counter()
            fn()
            if round_:
                times[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(t) for name, t in times.items()}
    base = medians["plain subprocess.run"]
    rows = []
    for name, median in medians.items():
        bare = medians.get(f"{name}, not hardened")
        rows.append([name, f"{median * 1000:.2f}", f"{(median - base) * 1000:+.2f}",
                     f"{median / base:.2f}x",
                     "" if bare is None else f"{median / bare:.2f}x "
                                             f"({(median - bare) * 1000:+.2f} ms)"])
    rows += missing
    off = boxes["toolwire, sandbox off"]
    print(f"`true` run {args.runs} times per case, Python {platform.python_version()} on "
          f"{platform.machine()}\n")
    print(table(["case", "median ms", "vs plain ms", "vs plain", "hardened vs not"], rows))
    cost = _bounds_cost(off, args.runs)
    print(f"\nlimits, before each command: {cost * 1e6:.0f} µs "
          f"({off.bounds.describe()})")


if __name__ == "__main__":
    main()
