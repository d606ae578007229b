"""What a long run's context costs, with prompt caching on and off, and whether compaction
keeps a very long run inside a small window.

Part 1: a coding run of ``--turns`` turns (default 50) against the emulator speaking Anthropic
Messages for Claude Sonnet 4.5, with the emulator's billing on (its prompt cache follows
Anthropic's rules). The replies are scripted; the tools are toolwire's own file tools on a
scratch folder: each turn writes a module one section longer than the last, or reads one back,
so the tool outputs grow. The billed input is counted in token-equivalents at Anthropic's
rates (an uncached input token 1, a 5-minute cache write 1.25, a cache read 0.1), with caching
on (the default) and off, and the money from the price table. Target: at least 5x less billed
input with caching on.

Part 2: a run of ``--long-turns`` turns (default 500) with a 32,000-token window: the agent
compacts as it goes; the largest prompt any request held, the number of compactions and how
the run ended are reported. Target: it ends answered and no prompt exceeds the window.

Part 3: a run that reveals ten tools one at a time (a tool source giving one more tool before
each model call, as an MCP server whose list changed), against the emulator speaking Anthropic
Messages with caching on: the tokens read from the cache and written to it, before (each tool
appended to ``tools``, which changes the prompt from the tools on) and after (each tool added
where it came, a ``tool_addition`` naming a deferred ``tools`` entry, which leaves the prefix
as it was).

Run: ``python bench/context.py [--turns 50] [--long-turns 500] [--window 32000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from typing import Any

from toolwire import Agent, Message, Reply, Request, Tool, ToolCallPart, Usage
from toolwire.emulator import Emulator
from toolwire.events import Compacted, ReplyReceived
from toolwire.http.client import model as make_model
from toolwire.tools.coding import coding_tools

MODEL = "claude-sonnet-4-5"
SYSTEM = ("You are a careful coding assistant working in a small Python project. Read a file "
          "before changing it, keep each change small, and say what you changed.")
WRITE, READ, CACHE_READ = 1.25, 1.0, 0.1


def section(n: int) -> str:
    return (f"\n\ndef step_{n}(values: list[int]) -> int:\n"
            f'    """Step {n}: add up the values, then weigh them by {n}."""\n'
            f"    total = sum(values)\n    return total * {n} + len(values)\n")


def scripted(turns: int) -> Any:
    """The model's side: write a module one section longer each even turn, read the module
    just written each odd turn, then answer."""
    count = [0]

    def answer(request: Any, wire: str) -> Reply:
        k = count[0]
        count[0] += 1
        if k >= turns:
            return Reply(message=Message.assistant("All modules are written and read back."))
        name = f"pkg/mod{k // 2}.py"
        if k % 2 == 0:
            text = "".join(section(n) for n in range(k // 2 + 1))
            call = ToolCallPart(id=f"w{k}", name="write_file",
                                arguments={"path": name, "content": text})
        else:
            call = ToolCallPart(id=f"r{k}", name="read_file", arguments={"path": name})
        return Reply(message=Message(role="assistant", parts=(call,)), stop="tool_calls",
                     usage=Usage(output_tokens=60))

    return answer


async def one_run(turns: int, *, cache: bool, window: int | None = None) -> dict[str, Any]:
    usages: list[Usage] = []
    compactions: list[Compacted] = []

    def on_event(event: object) -> None:
        if isinstance(event, ReplyReceived):
            usages.append(event.reply.usage)
        elif isinstance(event, Compacted):
            compactions.append(event)

    windows = {MODEL: window} if window else None
    with tempfile.TemporaryDirectory() as folder:
        tools = [t for t in coding_tools(folder, include_ask_user=False)
                 if t.name in ("read_file", "write_file")]
        async with Emulator(scripted(turns), bill=True, windows=windows) as emu:
            model = make_model(f"anthropic:{MODEL}@{emu.base_url}", env={},
                               context_window=window)
            started = time.perf_counter()
            result = await Agent(model=model, tools=tools, system=SYSTEM, cache=cache,
                                 max_turns=turns + 5, context_window=window,
                                 on_event=on_event).arun("Write the package, module by module.")
            seconds = time.perf_counter() - started
            await model.aclose()
    billed = sum((u.input_tokens - u.cache_read_tokens - u.cache_write_tokens) * READ
                 + u.cache_write_tokens * WRITE + u.cache_read_tokens * CACHE_READ
                 for u in usages)
    return {"stop": str(result.stop), "turns": result.turns, "billed": billed,
            "input": sum(u.input_tokens for u in usages),
            "read": sum(u.cache_read_tokens for u in usages),
            "cost": sum(u.cost or 0.0 for u in usages), "peak": max(u.input_tokens for u in usages),
            "compactions": len(compactions), "seconds": seconds}


class Appending:
    """The way tools were added before: a model that offers a request's added tools at the end
    of its tool list (the system messages adding them left out)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def complete(self, request: Request) -> Reply:
        added = [t for m in request.messages for t in m.tools]
        messages = tuple(m for m in request.messages if not (m.tools and not m.parts))
        return await self.inner.complete(Request(**{
            **{f: getattr(request, f) for f in request.__struct_fields__},
            "tools": (*request.tools, *added), "messages": messages}))


def revealing(count: int) -> Any:
    """The model's side: each turn calls the tool revealed last, then answers."""
    turn = [0]

    def answer(request: Any, wire: str) -> Reply:
        k = turn[0]
        turn[0] += 1
        if k >= count:
            return Reply(message=Message.assistant("Every tool was tried."),
                         usage=Usage(output_tokens=20))
        call = ToolCallPart(id=f"t{k}", name=f"lookup_{k}", arguments={"key": "a"})
        return Reply(message=Message(role="assistant", parts=(call,)), stop="tool_calls",
                     usage=Usage(output_tokens=30))

    return answer


def lookup(n: int) -> Tool:
    def run(key: str) -> str:
        return f"record {n} for {key}: " + "values " * 40

    return Tool(fn=run, name=f"lookup_{n}", input_schema={
        "type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]},
        description=(f"Look a key up in table {n} of the inventory and give back its record, "
                     "with every column the table keeps for it."))


async def reveal_run(count: int, *, appending: bool) -> dict[str, int]:
    usages: list[Usage] = []
    base = [lookup(100 + n) for n in range(8)]  # tools offered from the start
    shown: list[Tool] = []

    def source() -> list[Tool]:
        if len(shown) < count:
            shown.append(lookup(len(shown)))
        return list(shown)

    def on_event(event: object) -> None:
        if isinstance(event, ReplyReceived):
            usages.append(event.reply.usage)

    async with Emulator(revealing(count), bill=True) as emu:
        model = make_model(f"anthropic:{MODEL}@{emu.base_url}", env={})
        used = Appending(model) if appending else model
        await Agent(model=used, tools=base, system=SYSTEM * 20, cache=True,
                    tool_sources=[source], max_turns=count + 3,
                    on_event=on_event).arun("Try each tool as it comes.")
        await model.aclose()
    return {"read": sum(u.cache_read_tokens for u in usages),
            "written": sum(u.cache_write_tokens for u in usages),
            "input": sum(u.input_tokens for u in usages), "turns": len(usages)}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--long-turns", type=int, default=500)
    parser.add_argument("--window", type=int, default=32_000)
    args = parser.parse_args()

    on = await one_run(args.turns, cache=True)
    off = await one_run(args.turns, cache=False)
    ratio = off["billed"] / on["billed"]
    print(f"{args.turns}-turn coding run, Claude Sonnet 4.5 rules, billed input in "
          "token-equivalents (uncached 1, cache write 1.25, cache read 0.1):")
    for name, r in (("caching on ", on), ("caching off", off)):
        print(f"  {name}: {r['billed']:>10,.0f} billed of {r['input']:>10,} sent "
              f"({r['read']:,} read from the cache), ${r['cost']:.4f}, {r['turns']} turns, "
              f"{r['stop']}")
    print(f"  caching on bills {ratio:.1f}x less input (target: at least 5x): "
          f"{'met' if ratio >= 5 else 'NOT met'}")

    long = await one_run(args.long_turns, cache=True, window=args.window)
    fits = long["peak"] <= args.window and long["stop"] == "answered"
    print(f"{args.long_turns}-turn run in a {args.window:,}-token window: {long['stop']} after "
          f"{long['turns']} turns, {long['compactions']} compactions, peak context "
          f"{long['peak']:,} tokens ({long['peak'] / args.window:.0%} of the window), "
          f"{long['seconds']:.1f} s: {'never over the window' if fits else 'NOT within it'}")

    before = await reveal_run(10, appending=True)
    after = await reveal_run(10, appending=False)
    print("a run revealing ten tools one at a time, Claude Sonnet 4.5 rules, caching on:")
    for name, r in (("appended to tools (before)", before), ("added in place (after)   ", after)):
        print(f"  {name}: {r['read']:>7,} read from the cache, {r['written']:>7,} written, "
              f"{r['input']:>7,} sent in {r['turns']} requests")


if __name__ == "__main__":
    asyncio.run(main())
