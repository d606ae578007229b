"""What a user waits for: a run's wall time against a paced model, with and without eager tools.

Run: ``python bench/latency.py [--workload checklist|coding] [--turns N] [--seed 7]
[--scale 1.0] [--only NAMES]``. Peers: ``pip install pydantic-ai-slim[openai] openai-agents``.

One scripted run of ``--turns`` model calls (fixed seed), in one of two workloads:

- ``checklist`` (20 turns by default): every reply but the last writes some text and then 1-3
  ``lookup`` calls, 100-300 tokens in all, each sleeping the 0.2-2 s its arguments say;
- ``coding`` (12 turns by default), a coding agent: every reply but the last writes a line of
  text, starts read-only work (1-3 calls, each a ``read_file`` of 0.3-1 s or a ``search`` of
  1-3 s, and in every third reply a ``run_tests`` of 8-25 s) and then writes a file of
  300-1,200 tokens with ``write_file``, the one tool that is not read-only.

The last reply answers in text. The emulator (`toolwire.emulator.Emulator`, in a process of
its own) streams every reply in the OpenAI Responses wire, paced like a model: the first token
after 500 ms, then 50 tokens a second (``--scale`` multiplies every time, to try the
benchmark quickly). Each tool sleeps the time its call's arguments say. The same script runs,
over the same emulator, through:

- toolwire streaming with eager execution (``Agent(stream=True, eager_tools=True)``, the
  read-only tools marked ``read_only``) and without it;
- pydantic-ai (``Agent.run`` with an ``event_stream_handler``: every model request streamed);
- openai-agents (``Runner.run_streamed``, tracing off).

Every framework runs the calls of one reply side by side. Reported: each run's wall time, the
CPU time its process spent (toolwire's harness overhead is at most that: the emulator and its
pacing run in the other process), and what the script's pacing alone predicts: the time with
every tool after its reply (``serial``) and with each read-only tool starting the moment its
call closes in the stream, the others when the reply ends (``eager bound``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import installed, table

TTFT = 0.5
TOKENS_PER_SECOND = 50.0
CHARS_PER_TOKEN = 4  # as the emulator's pacing counts them


class Workload(NamedTuple):
    """A kind of run: its task, its system prompt, its default number of turns, how its
    script is made, and which of its tools are read-only."""

    prompt: str
    instructions: str
    turns: int
    make: Callable[[int, random.Random, float], list[dict[str, Any]]]
    read_only: frozenset[str]


def _words(sentence: str, tokens: int) -> str:
    """``sentence`` repeated to ``tokens`` tokens as the pacing counts them."""
    return (sentence * (tokens * CHARS_PER_TOKEN // len(sentence) + 1))[
        : tokens * CHARS_PER_TOKEN]


def _call(name: str, key: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "args": {"key": key, **args}}


def _size(call: dict[str, Any]) -> int:
    """A call's characters as the stream carries them: its arguments' JSON."""
    return len(json.dumps(call["args"], separators=(",", ":")))


def checklist(turns: int, rng: random.Random, scale: float) -> list[dict[str, Any]]:
    """Each reply: some text, then 1-3 lookups (0.2-2 s each), 100-300 tokens in all; the
    last reply answers in text."""
    script: list[dict[str, Any]] = []
    for turn in range(1, turns + 1):
        tokens = rng.randint(100, 300)
        last = turn == turns
        n_calls = 0 if last else rng.randint(1, 3)
        text_tokens = tokens if last else round(tokens * rng.uniform(0.2, 0.4))
        calls = []
        for i in range(n_calls):
            share = (tokens - text_tokens) // n_calls
            call = _call("lookup", f"t{turn}c{i + 1}",
                         {"seconds": round(rng.uniform(0.2, 2.0) * scale, 3), "note": ""})
            call["args"]["note"] = "n" * max(0, share * CHARS_PER_TOKEN - _size(call))
            calls.append(call)
        text = _words("The next item on the checklist needs a lookup before going on. ",
                      text_tokens)
        script.append({"text": text, "calls": calls})
    return script


def coding(turns: int, rng: random.Random, scale: float) -> list[dict[str, Any]]:
    """Each reply: a line of text, 1-3 reads (0.3-1 s) or searches (1-3 s), a test run
    (8-25 s) in every third reply, then a file of 300-1,200 tokens written; the last reply
    answers in text."""
    script: list[dict[str, Any]] = []
    for turn in range(1, turns + 1):
        if turn == turns:
            script.append({"text": _words("The change is made and the tests pass. ",
                                          rng.randint(60, 120)), "calls": []})
            continue
        calls = []
        for _ in range(rng.randint(1, 3)):
            key = f"t{turn}c{len(calls) + 1}"
            if rng.random() < 0.5:
                calls.append(_call("read_file", key, {
                    "path": f"src/app/part{rng.randint(1, 40)}.py",
                    "seconds": round(rng.uniform(0.3, 1.0) * scale, 3)}))
            else:
                calls.append(_call("search", key, {
                    "pattern": f"def handler_{rng.randint(1, 99)}",
                    "seconds": round(rng.uniform(1.0, 3.0) * scale, 3)}))
        if turn % 3 == 0:
            calls.append(_call("run_tests", f"t{turn}c{len(calls) + 1}", {
                "target": "tests/", "seconds": round(rng.uniform(8.0, 25.0) * scale, 3)}))
        write = _call("write_file", f"t{turn}c{len(calls) + 1}", {
            "path": f"src/app/new{turn}.py", "seconds": round(0.05 * scale, 3), "content": ""})
        body = _words("def step(state): return state + 1; ", rng.randint(300, 1200))
        write["args"]["content"] = body[: max(0, len(body) - _size(write))]
        calls.append(write)
        text = _words("Reading what the change touches, then writing it. ",
                      rng.randint(15, 40))
        script.append({"text": text, "calls": calls})
    return script


WORKLOADS = {
    "checklist": Workload(
        "Work through the checklist, looking each item up with the lookup tool.",
        "Use the lookup tool as asked.", 20, checklist, frozenset({"lookup"})),
    "coding": Workload(
        "Make the change the issue asks for, reading and testing as you go.",
        "Use the tools as asked.", 12, coding,
        frozenset({"read_file", "search", "run_tests"})),
}


def make_script(workload: Workload, turns: int, seed: int, scale: float
                ) -> list[dict[str, Any]]:
    """Each turn's reply: ``text``, and ``calls``, each a tool's ``name`` and ``args``
    (``key`` naming the turn and the call, ``seconds`` the tool sleeps, what pads it)."""
    return workload.make(turns, random.Random(seed), scale)


def predicted(script: list[dict[str, Any]], scale: float,
              read_only: frozenset[str]) -> tuple[float, float]:
    """Wall time the pacing alone gives: tools after each reply, and read-only tools from
    each call's close, the others from the reply's end (the best eager execution can do)."""
    serial = bound = 0.0
    for reply in script:
        at = TTFT * scale + len(reply["text"]) / CHARS_PER_TOKEN / TOKENS_PER_SECOND * scale
        early: list[float] = []
        for call in reply["calls"]:
            at += _size(call) / CHARS_PER_TOKEN / TOKENS_PER_SECOND * scale
            if call["name"] in read_only:
                early.append(at + call["args"]["seconds"])
        longest = max((c["args"]["seconds"] for c in reply["calls"]), default=0.0)
        after = max((c["args"]["seconds"] for c in reply["calls"]
                     if c["name"] not in read_only), default=0.0)
        serial += at + longest
        bound += max([at + after, *early])
    return serial, bound


# --------------------------------------------------------------------------- the emulator


def serve(workload: str, turns: int, seed: int, scale: float) -> None:
    """Run the paced emulator in this process until stdin closes; print its port first."""
    from toolwire.emulator import Emulator, Pacing
    from toolwire.transcript import Message, Reply, TextPart, ToolCallPart

    script = make_script(WORKLOADS[workload], turns, seed, scale)

    def answer(request: Any, wire: str) -> Reply:
        done = 0  # the turn is one past the latest turn whose calls the history holds
        for message in request.messages:
            for call in message.tool_calls:
                key = call.arguments.get("key", "") if isinstance(call.arguments, dict) else ""
                if key.startswith("t") and "c" in key:
                    done = max(done, int(key[1:key.index("c")]))
        reply = script[min(done, len(script) - 1)]
        parts: list[Any] = [TextPart(text=reply["text"])]
        parts += [ToolCallPart(id=f"call_{c['args']['key']}", name=c["name"],
                               arguments=c["args"]) for c in reply["calls"]]
        return Reply(message=Message(role="assistant", parts=tuple(parts)),
                     stop="tool_calls" if reply["calls"] else "end_turn")

    pacing = Pacing(first_token=TTFT * scale, tokens_per_second=TOKENS_PER_SECOND / scale)
    with Emulator(answer, pacing=pacing, check=False) as emu:
        print(emu.port, flush=True)
        sys.stdin.read()


# --------------------------------------------------------------------------- the tools


async def lookup(key: str, seconds: float, note: str) -> str:
    """Look a checklist item up."""
    await asyncio.sleep(seconds)
    return f"{key}: found"


async def read_file(key: str, path: str, seconds: float) -> str:
    """Read a file of the project."""
    await asyncio.sleep(seconds)
    return f"{key}: {path}: 120 lines"


async def search(key: str, pattern: str, seconds: float) -> str:
    """Search the project's files for a pattern."""
    await asyncio.sleep(seconds)
    return f"{key}: 3 matches of {pattern}"


async def run_tests(key: str, target: str, seconds: float) -> str:
    """Run the project's tests."""
    await asyncio.sleep(seconds)
    return f"{key}: {target}: 212 passed"


async def write_file(key: str, path: str, content: str, seconds: float) -> str:
    """Write a file of the project."""
    await asyncio.sleep(seconds)
    return f"{key}: wrote {len(content)} characters to {path}"


TOOLS: dict[str, list[Callable[..., Any]]] = {
    "checklist": [lookup], "coding": [read_file, search, run_tests, write_file]}


# --------------------------------------------------------------------------- the runs


async def run_toolwire(base: str, workload: str, eager: bool) -> int:
    import toolwire

    marked = WORKLOADS[workload].read_only
    tools = [toolwire.tool(read_only=fn.__name__ in marked)(fn) for fn in TOOLS[workload]]
    model = toolwire.model(f"openai-responses:m@{base}/v1", env={"OPENAI_API_KEY": "x"})
    agent = toolwire.Agent(model=model, tools=tools, system=WORKLOADS[workload].instructions,
                           stream=True, eager_tools=eager, max_turns=100)
    try:
        result = await agent.arun(WORKLOADS[workload].prompt)
    finally:
        await model.aclose()
    assert result.ok, result.stop
    return result.turns


async def run_pydantic_ai(base: str, workload: str) -> int:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(base_url=f"{base}/v1", api_key="x")
    model = OpenAIResponsesModel("m", provider=provider)
    agent = Agent(model, instructions=WORKLOADS[workload].instructions)
    for fn in TOOLS[workload]:
        agent.tool_plain(fn)

    async def drain(ctx: Any, events: Any) -> None:
        async for _ in events:
            pass

    try:
        result = await agent.run(WORKLOADS[workload].prompt, event_stream_handler=drain)
    finally:
        await provider.client.close()
    return sum(1 for m in result.all_messages() if type(m).__name__ == "ModelResponse")


async def run_openai_agents(base: str, workload: str) -> int:
    from agents import Agent, OpenAIResponsesModel, Runner, function_tool, set_tracing_disabled
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=f"{base}/v1", api_key="x")
    agent = Agent(name="bench", instructions=WORKLOADS[workload].instructions,
                  model=OpenAIResponsesModel(model="m", openai_client=client),
                  tools=[function_tool(fn) for fn in TOOLS[workload]])
    try:
        result = Runner.run_streamed(agent, WORKLOADS[workload].prompt, max_turns=100)
        async for _ in result.stream_events():
            pass
    finally:
        await client.close()
    return sum(1 for r in result.raw_responses)


CASES: dict[str, tuple[str | None, Any]] = {
    "toolwire-eager": (None, lambda base, workload: run_toolwire(base, workload, True)),
    "toolwire": (None, lambda base, workload: run_toolwire(base, workload, False)),
    "pydantic-ai": ("pydantic_ai", run_pydantic_ai),
    "openai-agents": ("agents", run_openai_agents),
}


def measure(name: str, base: str, workload: str) -> tuple[float, float, int]:
    """One run: wall seconds, CPU seconds of this process, model calls made."""
    runner = CASES[name][1]
    cpu0, wall0 = time.process_time(), time.perf_counter()
    turns = asyncio.run(runner(base, workload))
    return time.perf_counter() - wall0, time.process_time() - cpu0, turns


def start_server(workload: str, turns: int, seed: int, scale: float
                 ) -> tuple[subprocess.Popen[str], str]:
    """The paced emulator in a process of its own, and its base URL."""
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--workload", workload, "--turns", str(turns),
         "--seed", str(seed), "--scale", str(scale)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    assert server.stdout is not None
    return server, f"http://127.0.0.1:{int(server.stdout.readline())}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="checklist",
                        help="the kind of run (default checklist)")
    parser.add_argument("--turns", type=int,
                        help="model calls in the run (default 20 for checklist, 12 for coding)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiply every time of the script (default 1)")
    parser.add_argument("--only", default=",".join(CASES),
                        help="cases to run, comma-separated (default: all)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    workload = WORKLOADS[args.workload]
    turns = workload.turns if args.turns is None else args.turns
    if args.serve:
        serve(args.workload, turns, args.seed, args.scale)
        return 0
    script = make_script(workload, turns, args.seed, args.scale)
    serial, bound = predicted(script, args.scale, workload.read_only)
    calls = sum(len(r["calls"]) for r in script)
    print(f"{args.workload}: {turns} turns, {calls} calls, seed {args.seed}, scale "
          f"{args.scale:g}: the pacing predicts {serial:.2f} s with tools after each reply, "
          f"{bound:.2f} s with each read-only tool from its call's close (the eager bound)")
    server, base = start_server(args.workload, turns, args.seed, args.scale)
    # one short run per case first
    warm, warm_base = start_server(args.workload, 2, args.seed, 0.02)
    try:
        rows, walls = [], {}
        for name in args.only.split(","):
            module = CASES[name][0]
            if module is not None and not installed(module):
                rows.append([name, "not installed", "", "", "", ""])
                continue
            measure(name, warm_base, args.workload)
            wall, cpu, made = measure(name, base, args.workload)
            walls[name] = wall
            above = wall - (bound if name == "toolwire-eager" else serial)
            rows.append([name, f"{wall:.2f}", f"{above:+.2f}", f"{cpu * 1000:.0f}",
                         f"{100 * cpu / wall:.3f}%", str(made)])
    finally:
        for process in (server, warm):
            assert process.stdin is not None
            process.stdin.close()
            process.wait(timeout=30)
    print(table(["case", "wall s", "s above its bound", "CPU ms", "CPU / wall", "model calls"],
                rows))
    print("(the bound: the eager bound for toolwire-eager, the serial time for the others)")
    peers = [walls[p] for p in ("pydantic-ai", "openai-agents") if p in walls]
    if "toolwire-eager" in walls and peers:
        best = min(peers)
        print(f"toolwire eager vs the best peer: {100 * (1 - walls['toolwire-eager'] / best):.1f}% "
              f"less wall time; {100 * (walls['toolwire-eager'] / bound - 1):.2f}% above the "
              "eager bound")
    if "toolwire-eager" in walls and "toolwire" in walls:
        saved = 100 * (1 - walls["toolwire-eager"] / walls["toolwire"])
        print(f"eager vs not: {saved:.1f}% less wall time")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
