"""Many runs at once: a batch of agent runs against the emulator on loopback, toolwire next to
pydantic-ai and openai-agents, at several concurrency levels.

Every framework runs the same batch: ``RUNS`` runs of ``TURNS`` model calls each (a tool call
per turn, then an answer naming the task), through the same emulator speaking the OpenAI chat
wire at 127.0.0.1. toolwire runs it with `toolwire.batch.run_batch` (run logs and results file
written, as the ``toolwire batch`` command does); the peers run their own agents with their
OpenAI-compatible chat model classes, at most N at once. All three send with httpx2 and get one
connection pool sized to the concurrency.

The emulator runs in a process of its own and each (framework, concurrency) batch in a fresh
worker process, so CPU time and memory are attributable: the worker's CPU time next to the
emulator's gives the harness's share; peak RSS above the worker's resting RSS (after imports
and a warm-up batch), divided by the runs in flight, gives memory per run in flight.

Run: ``python bench/scale.py`` (``--quick`` for 200 runs and levels 1, 10, 100;
``--runs``, ``--levels``, ``--frameworks`` to choose). Peers that are not installed are
reported as such.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import installed, serve_emulator, table

TURNS = 5
FRAMEWORKS = {"toolwire": "toolwire", "pydantic-ai": "pydantic_ai", "openai-agents": "agents"}


# ------------------------------------------------------------------ the emulator process


def serve(turns: int) -> None:
    """Answer every request: a ``lookup`` call until ``turns - 1`` results came back, then an
    answer echoing the task. Prints the port, then serves until stdin closes."""
    from toolwire.transcript import Message, Reply, Request, ToolCallPart, Usage

    usage = Usage(input_tokens=20, output_tokens=8)

    def respond(request: Request, wire: str) -> Reply:
        done = sum(1 for m in request.messages if m.role == "tool")
        if done < turns - 1:
            call = ToolCallPart(id=f"call_{done}", name="lookup", arguments={"key": str(done)})
            return Reply(message=Message(role="assistant", parts=(call,)), stop="tool_calls",
                         usage=usage)
        task = next(m.text for m in request.messages if m.role == "user")
        return Reply(message=Message.assistant(f"done: {task}"), usage=usage)

    serve_emulator(respond)


def cpu_of(pid: int) -> float:
    """CPU seconds (user + system) used so far by process ``pid``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_now() -> int:
    """Resident memory of this process now, in bytes."""
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# ------------------------------------------------------------------ one batch per framework


async def lookup(key: str) -> str:
    """Look a key up."""
    return f"value-{key}"


async def toolwire_runs(url: str, runs: int, n: int, start: int,
                        folder: Path) -> list[dict[str, Any]]:
    """toolwire's batch: ``run_batch`` of ``runs`` tasks, ``n`` at once, its run logs and
    results file in ``folder``; the results file's lines."""
    from toolwire.batch import run_batch

    try:
        from toolwire.schema.tool import Tool
    except ImportError:  # an older checkout (--baseline): one schema module
        from toolwire.schema import Tool  # type: ignore[no-redef]

    tool = Tool.from_function(lookup)
    tasks = [{"id": f"r{start + i}", "prompt": f"task {start + i}"} for i in range(runs)]
    out = folder / "results.jsonl"
    await run_batch(tasks, f"openai-compatible:m@{url}", out, concurrency=n, env={},
                    tools=lambda task, workdir: [tool], options={"max_turns": TURNS + 1})
    return [json.loads(x) for x in out.read_text().splitlines()]


def answered(lines: list[dict[str, Any]]) -> int:
    """How many of the results file's lines are runs that ended with the expected answer."""
    return sum(1 for x in lines if x["ok"] and x["answer"] == f"done: task {x['id'][1:]}")


async def batch_toolwire(url: str, runs: int, n: int, start: int) -> tuple[int, int]:
    with tempfile.TemporaryDirectory() as tmp:
        lines = await toolwire_runs(url, runs, n, start, Path(tmp))
        transcript = sum(len(json.dumps(_transcript(x["log"]))) for x in lines[:20]) // 20
    return answered(lines), transcript


def _transcript(log: str) -> list[Any]:
    try:
        from toolwire.agent.runlog import read_log
    except ImportError:  # an older checkout (--baseline)
        from toolwire.runlog import read_log  # type: ignore[no-redef,import-not-found]
    from toolwire.transcript_json import to_json

    return [to_json(m) for m in read_log(log).messages]


async def pool(runs: int, n: int, start: int, one: Callable[[int], Awaitable[bool]]) -> int:
    """Run ``one(i)`` for every i, at most ``n`` at once; how many returned True."""
    queue = iter(range(start, start + runs))
    ok = 0

    async def worker() -> None:
        nonlocal ok
        for i in queue:
            good = await one(i)  # awaited first: `ok += await ...` would read ok too early
            ok += good

    await asyncio.gather(*(worker() for _ in range(min(n, runs))))
    return ok


def _http(n: int) -> Any:
    import httpx2

    return httpx2.AsyncClient(limits=httpx2.Limits(max_connections=n,
                                                   max_keepalive_connections=n),
                              timeout=600)


async def batch_pydantic_ai(url: str, runs: int, n: int, start: int) -> tuple[int, int]:
    from openai import AsyncOpenAI
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    client = AsyncOpenAI(base_url=f"{url}/v1", api_key="none", http_client=_http(n))
    agent = Agent(OpenAIChatModel("m", provider=OpenAIProvider(openai_client=client)),
                  tools=[lookup])

    async def one(i: int) -> bool:
        result = await agent.run(f"task {i}")
        return bool(result.output == f"done: task {i}")

    ok = await pool(runs, n, start, one)
    await client.close()
    return ok, 0


async def batch_openai_agents(url: str, runs: int, n: int, start: int) -> tuple[int, int]:
    from agents import (
        Agent,
        OpenAIChatCompletionsModel,
        Runner,
        function_tool,
        set_tracing_disabled,
    )
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=f"{url}/v1", api_key="none", http_client=_http(n))
    agent = Agent(name="bench", model=OpenAIChatCompletionsModel("m", openai_client=client),
                  tools=[function_tool(lookup)])

    async def one(i: int) -> bool:
        result = await Runner.run(agent, f"task {i}", max_turns=TURNS + 1)
        return bool(result.final_output == f"done: task {i}")

    ok = await pool(runs, n, start, one)
    await client.close()
    return ok, 0


BATCHES = {"toolwire": batch_toolwire, "pydantic-ai": batch_pydantic_ai,
           "openai-agents": batch_openai_agents}
BASELINE = "toolwire baseline"
"""The framework name of toolwire run from another checkout's ``src`` (``--baseline``)."""


def worker(framework: str, url: str, runs: int, n: int, emulator_pid: int) -> None:
    """One batch in this fresh process; prints its measurements as JSON."""
    batch = BATCHES["toolwire" if framework == BASELINE else framework]
    asyncio.run(batch(url, min(n, 20), min(n, 20), 10**6))  # imports, pools, lazy paths
    resting = rss_now()
    emu0, cpu0, wall0 = cpu_of(emulator_pid), time.process_time(), time.perf_counter()
    ok, transcript = asyncio.run(batch(url, runs, n, 0))
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    emu = cpu_of(emulator_pid) - emu0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"ok": ok, "wall": wall, "cpu": cpu, "emulator_cpu": emu,
                      "resting": resting, "peak": peak, "transcript": transcript}))


# ------------------------------------------------------------------ driver


def run_one(framework: str, url: str, runs: int, n: int, pid: int,
            baseline: str | None = None) -> dict[str, Any]:
    env = None
    if framework == BASELINE and baseline is not None:  # that checkout's toolwire first
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [baseline, *filter(None, [os.environ.get("PYTHONPATH")])])}
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", framework, "--url", url, "--runs", str(runs),
         "--concurrency", str(n), "--emulator-pid", str(pid)],
        capture_output=True, text=True, timeout=1800, check=False, env=env,
    )
    if proc.returncode != 0:
        return {"failed": proc.stderr.strip()[-800:]}
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--levels", default="1,10,100,1000")
    parser.add_argument("--frameworks", default=",".join(FRAMEWORKS))
    parser.add_argument("--quick", action="store_true", help="200 runs at 1, 10 and 100")
    parser.add_argument("--baseline", metavar="SRC",
                        help="also run toolwire from another checkout's src folder, taking "
                             "turns with this one at each level")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--concurrency", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--emulator-pid", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve(TURNS)
    if args.worker:
        return worker(args.worker, args.url, args.runs, args.concurrency, args.emulator_pid)
    runs, levels = args.runs, [int(x) for x in args.levels.split(",")]
    if args.quick:
        runs, levels = 200, [x for x in levels if x <= 100]
    names = [f for f in args.frameworks.split(",") if f in FRAMEWORKS]
    for name in names:
        if not installed(FRAMEWORKS[name]):
            print(f"{name}: not installed")
    names = [f for f in names if installed(FRAMEWORKS[f])]
    if args.baseline:
        names.insert(names.index("toolwire") + 1 if "toolwire" in names else 0, BASELINE)
    emulator = subprocess.Popen([sys.executable, __file__, "--serve"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
    assert emulator.stdout is not None and emulator.stdin is not None
    url = f"http://127.0.0.1:{emulator.stdout.readline().strip()}"
    print(f"{runs} runs of {TURNS} turns each (4 tool calls, then an answer), emulator at "
          f"{url} in its own process; {os.cpu_count()} CPUs")
    found: dict[tuple[str, int], dict[str, Any]] = {}
    try:
        for n in levels:
            for name in names:
                found[name, n] = got = run_one(name, url, runs, n, emulator.pid,
                                               args.baseline)
                print(f"  {name} at {n}: {_brief(got, runs)}", flush=True)
    finally:
        emulator.stdin.close()
        emulator.wait(timeout=30)
    report(found, names, levels, runs)


def _brief(got: dict[str, Any], runs: int) -> str:
    if "failed" in got:
        return "FAILED " + got["failed"].splitlines()[-1]
    return f"{got['ok']}/{runs} ok, {runs / got['wall']:.1f} runs/s"


def report(found: dict[tuple[str, int], dict[str, Any]], names: list[str], levels: list[int],
           runs: int) -> None:
    rows = []
    for n in levels:
        ours = found.get(("toolwire", n), {})
        for name in names:
            got = found[name, n]
            if "failed" in got:
                rows.append([name, str(n), "failed", "", "", "", "", "", "", ""])
                continue
            rate, cpu = runs / got["wall"], got["cpu"] / runs * 1000
            mine = name in ("toolwire", BASELINE) or "wall" not in ours
            faster = "-" if mine else f"{(runs / ours['wall']) / rate:.1f}x"
            leaner = "-" if mine else f"{cpu / (ours['cpu'] / runs * 1000):.1f}x"
            per_run = (got["peak"] - got["resting"]) / n / 1024
            share = got["cpu"] / (got["cpu"] + got["emulator_cpu"])
            rows.append([name, str(n), f"{got['ok']}/{runs}", f"{rate:.1f}", faster,
                         f"{cpu:.1f}", leaner, f"{share:.0%}", f"{got['peak'] / 2**20:.0f}",
                         f"{per_run:.0f}" if n >= 100 else "-"])
    print()
    print(table(["framework", "in flight", "ok", "runs/s", "toolwire x faster", "CPU ms/run",
                 "toolwire x less CPU", "harness CPU share", "peak RSS MiB",
                 "KiB per run in flight"], rows))
    top = max(levels)
    ours = found.get(("toolwire", top), {})
    if "wall" not in ours:
        return
    transcript = ours["transcript"] / 1024
    per_run = (ours["peak"] - ours["resting"]) / top / 1024
    print(f"\ntoolwire at {top} in flight: {per_run:.0f} KiB per run in flight, of which the "
          f"transcript is about {transcript:.1f} KiB as JSON")
    checks = {"no errors at the top level": ours["ok"] == runs,
              "< 200 KiB per run in flight plus its transcript": per_run - transcript < 200}
    if BASELINE in names:
        checks["at least the runs/s of the baseline at every level"] = all(
            found["toolwire", n]["wall"] <= found[BASELINE, n]["wall"]
            for n in levels if "wall" in found[BASELINE, n] and "wall" in found["toolwire", n])
    for name in names:
        if name not in ("toolwire", BASELINE):
            checks[f">= 5x the runs/s of {name} at every level"] = all(
                runs / found["toolwire", n]["wall"] >= 5 * runs / found[name, n]["wall"]
                for n in levels if "wall" in found[name, n] and "wall" in found["toolwire", n])
    for what, ok in checks.items():
        print(f"target {what}: {'met' if ok else 'NOT met'}")


if __name__ == "__main__":
    main()
