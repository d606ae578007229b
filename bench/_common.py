"""Small helpers the benchmarks share: timing code in fresh interpreters and printing tables.

Nothing here imports toolwire or any peer library at import time; each measured snippet runs
in its own ``python -I`` subprocess, so one library's imports never warm another's.
`serve_emulator` (toolwire's emulator in a process of its own) imports it when called.
"""

from __future__ import annotations

import importlib.util
import json
import os
import statistics
import subprocess
import sys
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

_TIMER = textwrap.dedent(
    """
    import json, sys, time
    {setup}
    _w0, _c0 = time.perf_counter(), time.process_time()
    {stmt}
    _w1, _c1 = time.perf_counter(), time.process_time()
    sys.stdout.flush()
    sys.stderr.write("\\n@@timing@@" + json.dumps([_w1 - _w0, _c1 - _c0]) + "\\n")
    """
)


class Timing(NamedTuple):
    """One measurement in seconds: elapsed (wall clock) and CPU time of the measuring process.

    On a busy machine the wall time includes waiting for a CPU; the CPU time does not.
    """

    wall: float
    cpu: float


class SnippetFailed(RuntimeError):
    """A timed snippet exited with an error; the message carries the end of its stderr."""


def installed(module: str) -> bool:
    """Whether ``module`` can be imported by this interpreter (checked without importing it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def time_once(
    stmt: str,
    *,
    setup: str = "",
    env: Mapping[str, str] | None = None,
    timeout: float = 300.0,
) -> Timing:
    """How long ``stmt`` takes in a fresh ``python -I`` process, after ``setup`` ran untimed."""
    code = _TIMER.format(setup=setup, stmt=stmt)
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-I", "-c", code],
        capture_output=True, text=True, timeout=timeout, env=full_env, check=False,
    )
    marker = proc.stderr.rpartition("@@timing@@")[2].strip()
    if proc.returncode != 0 or not marker:
        raise SnippetFailed(f"{stmt!r} failed: {proc.stderr.strip()[-600:]}")
    wall, cpu = json.loads(marker)
    return Timing(float(wall), float(cpu))


def interleaved(
    cases: Mapping[str, str],
    *,
    runs: int,
    warmup: int = 1,
    env: Mapping[str, str] | None = None,
) -> dict[str, list[Timing]]:
    """Time every case ``runs`` times in fresh processes, taking the cases in turn each round.

    Going round-robin spreads slow moments of the machine over all cases alike. The first
    ``warmup`` rounds (file cache, bytecode compilation) are run and thrown away.
    """
    times: dict[str, list[Timing]] = {name: [] for name in cases}
    for round_no in range(warmup + runs):
        for name, stmt in cases.items():
            timing = time_once(stmt, env=env)
            if round_no >= warmup:
                times[name].append(timing)
    return times


def median(values: Iterable[float]) -> float:
    return statistics.median(list(values))


def ratio(value: float | None, base: float | None) -> str:
    """``value / base`` as ``"3.2x"``, or ``"-"`` when either is missing."""
    if value is None or base is None or base == 0:
        return "-"
    return f"{value / base:.1f}x"


def table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A plain-text table: first column left-aligned, the others right-aligned."""
    body = [list(headers), *[list(r) for r in rows]]
    widths = [max(len(r[i]) for r in body) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = [c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]
        return "  ".join([first, *rest]).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(body[0]), rule, *(line(r) for r in body[1:])])


def serve_emulator(respond: object) -> None:
    """Serve toolwire's emulator answering with ``respond`` (its checks off) in this process:
    prints its port, then serves until standard input closes."""
    import asyncio
    import collections

    from toolwire.emulator import Emulator

    async def main() -> None:
        emu = await Emulator(respond, check=False).astart()  # type: ignore[arg-type]
        # it keeps every request for a test to look at; a benchmark sends hundreds of thousands,
        # and a history that grows would make each later batch's requests cost it more
        emu.received = collections.deque(maxlen=16)  # type: ignore[assignment]
        print(emu.port, flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        await emu.astop()

    asyncio.run(main())
