"""A whole request and reply over loopback: toolwire, bare httpx2, the official SDKs, LiteLLM.

The provider emulator runs in a process of its own (so its work never shares a CPU or the GIL
with the clients) and answers every request with the same reply: some text and two tool calls.
Every client sends the same conversation (6 messages, 2 tools) and reads the whole reply, one
request at a time, reusing its connection:

- toolwire: ``toolwire.http.client.model("anthropic:m@<emulator>").complete(request)`` (and the
  ``openai-compatible`` wire): encode, send, decode into a `Reply`;
- bare httpx2: one reused ``AsyncClient``, POST of the body toolwire encodes, ``resp.json()``;
  once with httpx2's stock transport and once with toolwire's plain-HTTP/1.1 transport mounted
  for ``http://`` (``toolwire.http.plain.Http1Transport``, what toolwire itself sends with here);
- the official ``anthropic`` and ``openai`` async clients pointed at the emulator;
- ``litellm.acompletion`` with ``api_base`` set to the emulator.

Each case runs a batch of requests per round; the cases take turns every round, and the median
over rounds of the time per request is reported: wall clock (latency, the emulator's time
included) and the client process's CPU time (the emulator's time excluded).

Run: ``python bench/transport.py`` (``--rounds N``, ``--requests N`` per batch, ``--profile`` for
toolwire's hot spots).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import os
import platform
import pstats
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

from _common import installed, table

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no price-list download
os.environ.setdefault("LITELLM_TELEMETRY", "False")

TARGET = 1.3

Send = Callable[[], Awaitable[object]]


class Speed(NamedTuple):
    wall_us: float
    cpu_us: float


# --------------------------------------------------------------------------- the server


def reply_value() -> Any:
    from toolwire.transcript import Message, Reply, TextPart, ToolCallPart, Usage

    return Reply(
        message=Message(role="assistant", parts=(
            TextPart(text="I will look up both cities."),
            ToolCallPart(id="call_zrh", name="get_weather", arguments={"city": "Zürich"}),
            ToolCallPart(id="call_rom", name="get_weather", arguments={"city": "Rome"}),
        )),
        stop="tool_calls", usage=Usage(input_tokens=320, output_tokens=48), model="m",
    )


def serve() -> None:
    """Run the emulator until killed; print its base URL first."""
    from toolwire.emulator import Emulator

    answer = reply_value()

    async def main() -> None:
        emu = Emulator(lambda request, wire: answer, check=False)
        await emu.astart()
        print(emu.base_url, flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


def start_server() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, __file__, "--serve"], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None
    base_url = proc.stdout.readline().strip()
    if not base_url.startswith("http://127.0.0.1:"):
        proc.kill()
        raise RuntimeError(f"the emulator did not start: {base_url!r}")
    return proc, base_url


# --------------------------------------------------------------------------- the clients


def conversation() -> Any:
    from toolwire.transcript import (
        Message,
        Request,
        TextPart,
        ToolCallPart,
        ToolResultPart,
        ToolSpec,
    )

    weather = ToolSpec(name="get_weather", description="Current weather for a city.",
                       input_schema={"type": "object",
                                     "properties": {"city": {"type": "string"}},
                                     "required": ["city"]})
    time_tool = ToolSpec(name="local_time", description="Local time in a city.",
                         input_schema={"type": "object",
                                       "properties": {"city": {"type": "string"}},
                                       "required": ["city"]})
    return Request(
        model="m", system="You are a helpful travel assistant.", tools=(weather, time_tool),
        max_tokens=512,
        messages=(
            Message.user("What time is it in Oslo?"),
            Message(role="assistant", parts=(
                TextPart(text="Let me check."),
                ToolCallPart(id="call_osl", name="local_time", arguments={"city": "Oslo"}),
            )),
            Message(role="tool", parts=(
                ToolResultPart(call_id="call_osl", content="14:05", name="local_time"),)),
            Message.assistant("It is 14:05 in Oslo."),
            Message.user("Thanks. And the weather in Zürich and Rome?"),
            Message.assistant("One moment."),
        ),
    )


async def make_cases(base_url: str) -> tuple[dict[str, Send], list[Callable[[], Awaitable[None]]],
                                             dict[str, str]]:
    """The clients to time, what closes them, and what is missing."""
    import httpx2

    from toolwire.codecs import get_codec
    from toolwire.http.client import model
    from toolwire.http.plain import Http1Transport

    request = conversation()
    cases: dict[str, Send] = {}
    closers: list[Callable[[], Awaitable[None]]] = []
    missing: dict[str, str] = {}
    bodies = {wire: get_codec(wire).encode_request(request)
              for wire in ("anthropic-messages", "openai-chat")}
    names = {"anthropic-messages": "claude-sonnet-4-5", "openai-chat": "gpt-4o-mini"}
    for wire, name in names.items():
        bodies[wire]["model"] = name
    urls = {"anthropic-messages": base_url + "/v1/messages",
            "openai-chat": base_url + "/v1/chat/completions"}
    headers = {"anthropic-messages": {"content-type": "application/json",
                                      "anthropic-version": "2023-06-01", "x-api-key": "k"},
               "openai-chat": {"content-type": "application/json",
                               "authorization": "Bearer k"}}

    for wire, provider in (("anthropic-messages", "anthropic"),
                           ("openai-chat", "openai-compatible")):
        tw = model(f"{provider}:{names[wire]}@{base_url}", env={})
        cases[f"toolwire {wire}"] = lambda tw=tw: tw.complete(request)
        closers.append(tw.aclose)

    client = httpx2.AsyncClient(timeout=60)
    lean = httpx2.AsyncClient(timeout=60, mounts={"http://": Http1Transport()})
    closers += [client.aclose, lean.aclose]
    for wire in ("anthropic-messages", "openai-chat"):
        for label, used in (("httpx2", client), ("httpx2 + toolwire http1", lean)):
            async def bare(wire: str = wire, used: httpx2.AsyncClient = used) -> object:
                content = json.dumps(bodies[wire]).encode()
                resp = await used.post(urls[wire], content=content, headers=headers[wire])
                return resp.json()

            cases[f"{label} {wire}"] = bare

    if installed("anthropic"):
        import anthropic

        warnings.filterwarnings("ignore", message="The model .* is deprecated")

        ac = anthropic.AsyncAnthropic(base_url=base_url, api_key="k", max_retries=0)
        body = bodies["anthropic-messages"]
        cases["anthropic SDK anthropic-messages"] = lambda: ac.messages.create(**body)
        closers.append(ac.close)
    else:
        missing["anthropic SDK anthropic-messages"] = "not installed"
    if installed("openai"):
        import openai

        oc = openai.AsyncOpenAI(base_url=base_url + "/v1", api_key="k", max_retries=0)
        obody = bodies["openai-chat"]
        cases["openai SDK openai-chat"] = lambda: oc.chat.completions.create(**obody)
        closers.append(oc.close)
    else:
        missing["openai SDK openai-chat"] = "not installed"
    if installed("litellm"):
        import litellm

        litellm.suppress_debug_info = True
        obody = bodies["openai-chat"]
        for wire, prefix, api_base in (("anthropic-messages", "anthropic", base_url),
                                       ("openai-chat", "openai", base_url + "/v1")):
            async def via_litellm(prefix: str = prefix, api_base: str = api_base,
                                  name: str = names[wire]) -> object:
                return await litellm.acompletion(
                    model=f"{prefix}/{name}", messages=obody["messages"], tools=obody["tools"],
                    max_tokens=512, api_base=api_base, api_key="k", num_retries=0)

            cases[f"litellm {wire}"] = via_litellm
    else:
        missing["litellm anthropic-messages"] = missing["litellm openai-chat"] = "not installed"
    return cases, closers, missing


async def check(cases: dict[str, Send]) -> None:
    """Every client reads the two calls: the comparison is of complete work."""
    for name, send in cases.items():
        result: Any = await send()
        text = json.dumps(result, default=lambda o: getattr(o, "model_dump", lambda: str(o))())
        if text.count("get_weather") < 2:
            raise RuntimeError(f"{name} did not read the two tool calls: {text[:300]}")


async def measure(cases: dict[str, Send], *, rounds: int, requests: int) -> dict[str, Speed]:
    for send in cases.values():  # warm up: connections, imports, caches
        for _ in range(5):
            await send()
    walls: dict[str, list[float]] = {name: [] for name in cases}
    cpus: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, send in cases.items():
            w0, c0 = time.perf_counter(), time.process_time()
            for _ in range(requests):
                await send()
            w1, c1 = time.perf_counter(), time.process_time()
            walls[name].append((w1 - w0) / requests * 1e6)
            cpus[name].append((c1 - c0) / requests * 1e6)
    return {name: Speed(statistics.median(walls[name]), statistics.median(cpus[name]))
            for name in cases}


async def profile(cases: dict[str, Send], requests: int) -> str:
    out = io.StringIO()
    for name in ("toolwire anthropic-messages", "httpx2 anthropic-messages"):
        send = cases[name]
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(requests):
            await send()
        prof.disable()
        stats = pstats.Stats(prof, stream=out)
        out.write(f"\n--- {name}: functions by own time\n")
        stats.sort_stats("tottime").print_stats(12)
        out.write(f"\n--- {name}: toolwire functions, cumulative\n")
        stats.sort_stats("cumulative").print_stats(r"src/toolwire", 12)
    return out.getvalue()


def fmt(value: float) -> str:
    return f"{value:.0f}"


async def run(base_url: str, rounds: int, requests: int, want_profile: bool) -> None:
    cases, closers, missing = await make_cases(base_url)
    await check(cases)
    speeds = await measure(cases, rounds=rounds, requests=requests)
    rows = []
    missed = False
    for wire in ("anthropic-messages", "openai-chat"):
        base = speeds[f"httpx2 {wire}"]
        for name in [n for n in [*cases, *missing] if n.endswith(wire)]:
            if name in missing:
                rows.append([name, missing[name], "-", "-", "-"])
                continue
            s = speeds[name]
            rows.append([name.removesuffix(" " + wire) + f" ({wire})", fmt(s.wall_us),
                         fmt(s.cpu_us), f"{s.wall_us / base.wall_us:.2f}x",
                         f"{s.cpu_us / base.cpu_us:.2f}x"])
            if name.startswith("toolwire"):
                missed |= s.wall_us / base.wall_us > TARGET
    print(table(["client", "µs/request", "client CPU µs", "vs httpx2", "CPU vs httpx2"], rows))
    print(f"\nTarget (toolwire within {TARGET}x of bare httpx2, wall clock): "
          f"{'missed' if missed else 'met'}")
    if want_profile or missed:
        print(await profile(cases, requests * 4))
    for close in closers:
        await close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--requests", type=int, default=60, help="requests per batch")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve()
        return
    started = time.perf_counter()
    import toolwire

    print(f"toolwire {toolwire.__version__}, Python {platform.python_version()}, "
          f"{platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    proc, base_url = start_server()
    try:
        asyncio.run(run(base_url, args.rounds, args.requests, args.profile))
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print(f"\n(bench took {time.perf_counter() - started:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
