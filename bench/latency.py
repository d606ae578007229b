"""What a user waits for: a run's wall time against a paced model, with and without eager tools.

Run: ``python bench/latency.py [--turns 20] [--seed 7] [--scale 1.0] [--only NAMES]``.
Peers: ``pip install pydantic-ai-slim[openai] openai-agents``.

One scripted run of ``--turns`` model calls (fixed seed): every reply but the last writes
some text and then 1-3 calls, 100-300 tokens in all; the last reply answers in text. The
emulator (`toolwire.emulator.Emulator`, in a process of its own) streams every reply in the
OpenAI Responses wire, paced like a model: the first token after 500 ms, then 50 tokens a second
(``--scale`` multiplies every time, to try the benchmark quickly). Each call's tool sleeps
the 0.2-2 s its arguments say. The same script runs, over the same emulator, through:

- toolwire streaming with eager execution (``Agent(stream=True, eager_tools=True)``, the tool
  marked ``read_only``) and without it;
- pydantic-ai (``Agent.run`` with an ``event_stream_handler``: every model request streamed);
- openai-agents (``Runner.run_streamed``, tracing off).

Every framework runs the calls of one reply side by side. Reported: each run's wall time, the
CPU time its process spent (toolwire's harness overhead is at most that: the emulator and its
pacing run in the other process), and what the script's pacing alone predicts: the time with
every tool after its reply (``serial``) and with each tool starting the moment its call closes
in the stream (``eager bound``).
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
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import installed, table

TTFT = 0.5
TOKENS_PER_SECOND = 50.0
CHARS_PER_TOKEN = 4  # as the emulator's pacing counts them
PROMPT = "Work through the checklist, looking each item up with the lookup tool."
INSTRUCTIONS = "Use the lookup tool as asked."


# --------------------------------------------------------------------------- the script


def make_script(turns: int, seed: int, scale: float) -> list[dict[str, Any]]:
    """Each turn's reply: ``text``, and ``calls`` as (key, seconds, note) with the note padding
    the call to its share of the reply's tokens."""
    rng = random.Random(seed)
    script: list[dict[str, Any]] = []
    for turn in range(1, turns + 1):
        tokens = rng.randint(100, 300)
        last = turn == turns
        n_calls = 0 if last else rng.randint(1, 3)
        text_tokens = tokens if last else round(tokens * rng.uniform(0.2, 0.4))
        calls = []
        for i in range(n_calls):
            share = (tokens - text_tokens) // n_calls
            seconds = round(rng.uniform(0.2, 2.0) * scale, 3)
            key = f"t{turn}c{i + 1}"
            bare = len(json.dumps({"key": key, "seconds": seconds, "note": ""},
                                  separators=(",", ":")))
            calls.append({"key": key, "seconds": seconds,
                          "note": "n" * max(0, share * CHARS_PER_TOKEN - bare)})
        words = "The next item on the checklist needs a lookup before going on. "
        text = (words * (text_tokens * CHARS_PER_TOKEN // len(words) + 1))[
            : text_tokens * CHARS_PER_TOKEN]
        script.append({"text": text, "calls": calls})
    return script


def predicted(script: list[dict[str, Any]], scale: float) -> tuple[float, float]:
    """Wall time the pacing alone gives: tools after each reply, and tools from each call's
    close (the best eager execution can do)."""
    serial = bound = 0.0
    for reply in script:
        at = TTFT * scale + len(reply["text"]) / CHARS_PER_TOKEN / TOKENS_PER_SECOND * scale
        ends: list[float] = []
        for call in reply["calls"]:
            size = len(json.dumps(call, separators=(",", ":")))
            at += size / CHARS_PER_TOKEN / TOKENS_PER_SECOND * scale
            ends.append(at + call["seconds"])
        longest = max((c["seconds"] for c in reply["calls"]), default=0.0)
        serial += at + longest
        bound += max([at, *ends])
    return serial, bound


# --------------------------------------------------------------------------- the emulator


def serve(turns: int, seed: int, scale: float) -> None:
    """Run the paced emulator in this process until stdin closes; print its port first."""
    from toolwire.emulator import Emulator, Pacing
    from toolwire.transcript import Message, Reply, TextPart, ToolCallPart

    script = make_script(turns, seed, scale)

    def answer(request: Any, wire: str) -> Reply:
        done = 0  # the turn is one past the latest turn whose calls the history holds
        for message in request.messages:
            for call in message.tool_calls:
                key = call.arguments.get("key", "") if isinstance(call.arguments, dict) else ""
                if key.startswith("t") and "c" in key:
                    done = max(done, int(key[1:key.index("c")]))
        reply = script[min(done, len(script) - 1)]
        parts: list[Any] = [TextPart(text=reply["text"])]
        parts += [ToolCallPart(id=f"call_{c['key']}", name="lookup", arguments=c)
                  for c in reply["calls"]]
        return Reply(message=Message(role="assistant", parts=tuple(parts)),
                     stop="tool_calls" if reply["calls"] else "end_turn")

    pacing = Pacing(first_token=TTFT * scale, tokens_per_second=TOKENS_PER_SECOND / scale)
    with Emulator(answer, pacing=pacing, check=False) as emu:
        print(emu.port, flush=True)
        sys.stdin.read()


# --------------------------------------------------------------------------- the runs


async def lookup_tool(key: str, seconds: float, note: str) -> str:
    await asyncio.sleep(seconds)
    return f"{key}: found"


async def run_toolwire(base: str, eager: bool) -> int:
    import toolwire

    tool = toolwire.tool(read_only=True, name="lookup",
                         description="Look a checklist item up.")(lookup_tool)
    model = toolwire.model(f"openai-responses:m@{base}/v1", env={"OPENAI_API_KEY": "x"})
    agent = toolwire.Agent(model=model, tools=[tool], system=INSTRUCTIONS, stream=True,
                           eager_tools=eager, max_turns=100)
    try:
        result = await agent.arun(PROMPT)
    finally:
        await model.aclose()
    assert result.ok, result.stop
    return result.turns


async def run_pydantic_ai(base: str) -> int:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(base_url=f"{base}/v1", api_key="x")
    model = OpenAIResponsesModel("m", provider=provider)
    agent = Agent(model, instructions=INSTRUCTIONS)
    agent.tool_plain(name="lookup")(lookup_tool)

    async def drain(ctx: Any, events: Any) -> None:
        async for _ in events:
            pass

    try:
        result = await agent.run(PROMPT, event_stream_handler=drain)
    finally:
        await provider.client.close()
    return sum(1 for m in result.all_messages() if type(m).__name__ == "ModelResponse")


async def run_openai_agents(base: str) -> int:
    from agents import Agent, OpenAIResponsesModel, Runner, function_tool, set_tracing_disabled
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=f"{base}/v1", api_key="x")
    agent = Agent(name="bench", instructions=INSTRUCTIONS,
                  model=OpenAIResponsesModel(model="m", openai_client=client),
                  tools=[function_tool(lookup_tool, name_override="lookup")])
    try:
        result = Runner.run_streamed(agent, PROMPT, max_turns=100)
        async for _ in result.stream_events():
            pass
    finally:
        await client.close()
    return sum(1 for r in result.raw_responses)


CASES: dict[str, tuple[str | None, Any]] = {
    "toolwire-eager": (None, lambda base: run_toolwire(base, True)),
    "toolwire": (None, lambda base: run_toolwire(base, False)),
    "pydantic-ai": ("pydantic_ai", run_pydantic_ai),
    "openai-agents": ("agents", run_openai_agents),
}


def measure(name: str, base: str) -> tuple[float, float, int]:
    """One run: wall seconds, CPU seconds of this process, model calls made."""
    runner = CASES[name][1]
    cpu0, wall0 = time.process_time(), time.perf_counter()
    turns = asyncio.run(runner(base))
    return time.perf_counter() - wall0, time.process_time() - cpu0, turns


def start_server(turns: int, seed: int, scale: float) -> tuple[subprocess.Popen[str], str]:
    """The paced emulator in a process of its own, and its base URL."""
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--turns", str(turns), "--seed", str(seed),
         "--scale", str(scale)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    assert server.stdout is not None
    return server, f"http://127.0.0.1:{int(server.stdout.readline())}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiply every time of the script (default 1)")
    parser.add_argument("--only", default=",".join(CASES),
                        help="cases to run, comma-separated (default: all)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.turns, args.seed, args.scale)
        return 0
    script = make_script(args.turns, args.seed, args.scale)
    serial, bound = predicted(script, args.scale)
    calls = sum(len(r["calls"]) for r in script)
    print(f"{args.turns} turns, {calls} calls, seed {args.seed}, scale {args.scale:g}: the "
          f"pacing predicts {serial:.2f} s with tools after each reply, {bound:.2f} s with "
          "each tool from its call's close")
    server, base = start_server(args.turns, args.seed, args.scale)
    warm, warm_base = start_server(2, args.seed, 0.02)  # one short run per case first
    try:
        rows, walls = [], {}
        for name in args.only.split(","):
            module = CASES[name][0]
            if module is not None and not installed(module):
                rows.append([name, "not installed", "", "", ""])
                continue
            measure(name, warm_base)
            wall, cpu, turns = measure(name, base)
            walls[name] = wall
            rows.append([name, f"{wall:.2f}", f"{cpu * 1000:.0f}", f"{100 * cpu / wall:.3f}%",
                         str(turns)])
    finally:
        for process in (server, warm):
            assert process.stdin is not None
            process.stdin.close()
            process.wait(timeout=30)
    print(table(["case", "wall s", "CPU ms", "CPU / wall", "model calls"], rows))
    peers = [walls[p] for p in ("pydantic-ai", "openai-agents") if p in walls]
    if "toolwire-eager" in walls and peers:
        best = min(peers)
        print(f"toolwire eager vs the best peer: {100 * (1 - walls['toolwire-eager'] / best):.1f}% "
              "less wall time")
    if "toolwire-eager" in walls and "toolwire" in walls:
        saved = 100 * (1 - walls["toolwire-eager"] / walls["toolwire"])
        print(f"eager vs not: {saved:.1f}% less wall time")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
