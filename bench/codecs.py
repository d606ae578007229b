"""Codec speed: encoding a tool transcript and decoding a reply, per wire and next to LiteLLM.

Two measurements, in one process, with the cases taking turns in every round:

1. Per wire: ``encode_request`` of a 20-message tool transcript (4 tools, 9 rounds of an
   assistant message with two calls and the tool message answering them), and decoding a reply
   with two tool calls from its bytes (``decode_response`` of the bytes, as the HTTP client
   does); beside it, what the checks cost: the same bytes through msgspec's parser and the
   wire's own decoder without the guard around it (the JSON policy, the kept values' depth).
2. Against LiteLLM, on LiteLLM's own job: a 10-message OpenAI-format request with 4 tools made
   into an Anthropic Messages body (toolwire: ``convert(body, "openai-chat",
   "anthropic-messages")``; LiteLLM: what ``litellm.completion`` runs to build that body,
   ``get_optional_params`` for the OpenAI parameters, then ``AnthropicConfig.transform_request``;
   also shown, LiteLLM's provider step alone, ``AnthropicConfig.map_openai_params`` then
   ``transform_request``), and an Anthropic reply with two tool calls made into a reply object
   (toolwire: ``decode_response`` of the bytes, as the client uses it; LiteLLM:
   ``transform_response`` of an ``httpx.Response``, which parses the same bytes). LiteLLM's
   logging object is a stub whose ``post_call`` does nothing, so only its conversion is timed.

3. Media, per wire: ``encode_request`` of the same transcript with 1 to 10 of its tool results
   each also holding a 1 MB image (a screenshot tool), to show the cost grows linearly with
   the number of images (the time per image is printed next to each count).

Run: ``python bench/codecs.py`` (``--rounds N``, ``--profile`` to print toolwire's hot spots,
``--no-media`` to leave out the media measurement).
Times are the median over rounds of the time per operation, in microseconds, wall clock and CPU.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import platform
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from _common import installed, table

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no price-list download
os.environ.setdefault("LITELLM_TELEMETRY", "False")

from toolwire._json import parse
from toolwire.codecs import WIRES, get_codec
from toolwire.conversion import convert
from toolwire.media import Image
from toolwire.transcript import (
    Message,
    Reply,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    Usage,
)

TARGET = 20.0
TEXT_WIRES = ("openai-chat", "openai-responses")


class Speed(NamedTuple):
    wall_us: float
    cpu_us: float
    cpu_rounds: tuple[float, ...] = ()


Case = Callable[[], object]


def measure(cases: dict[str, Case], *, rounds: int, batch_s: float = 0.04) -> dict[str, Speed]:
    """Median time per call of every case; the cases take turns in each round."""
    sizes: dict[str, int] = {}
    for name, fn in cases.items():  # warm up, then size a batch to about batch_s
        fn()
        n, spent = 1, 0.0
        while spent < batch_s / 4:
            n *= 2
            start = time.perf_counter()
            for _ in range(n):
                fn()
            spent = time.perf_counter() - start
        sizes[name] = max(1, int(n * batch_s / spent))
    walls: dict[str, list[float]] = {name: [] for name in cases}
    cpus: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, fn in cases.items():
            n = sizes[name]
            gc.collect()
            w0, c0 = time.perf_counter(), time.process_time()
            for _ in range(n):
                fn()
            w1, c1 = time.perf_counter(), time.process_time()
            walls[name].append((w1 - w0) / n * 1e6)
            cpus[name].append((c1 - c0) / n * 1e6)
    return {name: Speed(statistics.median(walls[name]), statistics.median(cpus[name]),
                        tuple(cpus[name])) for name in cases}


def added(slower: Speed, faster: Speed) -> float:
    """How much more ``slower`` costs than ``faster``: the median of the rounds' ratios (the two
    ran one after the other in every round, so a busy moment weighs on both)."""
    return statistics.median(s / f for s, f in zip(slower.cpu_rounds, faster.cpu_rounds,
                                                    strict=True)) - 1


# --------------------------------------------------------------------------- workloads

TOOLS = tuple(
    ToolSpec(name=f"tool_{i}", description=f"Tool number {i}: looks something up.",
             input_schema={"type": "object",
                           "properties": {"query": {"type": "string"},
                                          "limit": {"type": "integer"}},
                           "required": ["query"]})
    for i in range(4)
)


def _call(wire: str, call_id: str, name: str, args: dict[str, Any]) -> ToolCallPart:
    if wire in TEXT_WIRES:
        return ToolCallPart.from_raw(id=call_id, name=name,
                                     raw_arguments=json.dumps(args, separators=(",", ":")))
    return ToolCallPart(id=call_id, name=name, arguments=args)


def transcript(wire: str) -> Request:
    """20 messages: a task, 9 rounds of two calls and their results, a last user turn."""
    messages = [Message.user("Look these up and summarise what you find.")]
    for r in range(9):
        a, b = f"call_{r}a", f"call_{r}b"
        messages.append(Message(role="assistant", parts=(
            TextPart(text=f"Round {r}: two lookups."),
            _call(wire, a, f"tool_{r % 4}", {"query": f"topic {r}", "limit": 3}),
            _call(wire, b, f"tool_{(r + 1) % 4}", {"query": f"other {r}"}),
        )))
        messages.append(Message(role="tool", parts=(
            ToolResultPart(call_id=a, content=f"three results for topic {r}",
                           name=f"tool_{r % 4}"),
            ToolResultPart(call_id=b, content="nothing found", is_error=r % 3 == 0,
                           name=f"tool_{(r + 1) % 4}"),
        )))
    messages.append(Message.user("Now write the summary."))
    return Request(model="bench-model", system="You are a careful researcher.", tools=TOOLS,
                   messages=tuple(messages), max_tokens=1024)


IMAGE_MB = (b"\x89PNG\r\n\x1a\n" + (13).to_bytes(4, "big") + b"IHDR"
            + (1000).to_bytes(4, "big") * 2 + b"\x08\x02\x00\x00\x00")
IMAGE_MB += bytes(range(256)) * ((1024 * 1024 - len(IMAGE_MB)) // 256)
"""About 1 MB of PNG (a 1000 x 1000 header, then bytes) for a screenshot tool result."""


def with_images(request: Request, count: int) -> Request:
    """``request`` with its first ``count`` tool results also holding a 1 MB image each (the
    bytes differ per image, as screenshots do)."""
    messages = list(request.messages)
    done = 0
    for i, message in enumerate(messages):
        if message.role != "tool":
            continue
        parts = []
        for result in message.tool_results:
            if done < count:
                image = Image.from_bytes(IMAGE_MB[:-4] + done.to_bytes(4, "big"))
                result = ToolResultPart(call_id=result.call_id, name=result.name,
                                        is_error=result.is_error,
                                        content=(TextPart(text=result.text), image))
                done += 1
            parts.append(result)
        messages[i] = Message(role="tool", parts=tuple(parts))
    assert done == count
    return Request(model=request.model, system=request.system, tools=request.tools,
                   messages=tuple(messages), max_tokens=request.max_tokens)


def two_calls(wire: str) -> Reply:
    return Reply(
        message=Message(role="assistant", parts=(
            TextPart(text="Two more lookups."),
            _call(wire, "call_x1", "tool_0", {"query": "weather in Zürich"}),
            _call(wire, "call_x2", "tool_1", {"query": "weather in Rome", "limit": 2}),
        )),
        stop="tool_calls", usage=Usage(input_tokens=1200, output_tokens=40), id="reply_1",
        model="bench-model",
    )


def openai_request() -> dict[str, Any]:
    """10 OpenAI-format messages (system, task, two rounds of two calls, an answer, a question)
    and 4 tools."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a careful researcher."},
        {"role": "user", "content": "Look these up."},
    ]
    for r in range(2):
        calls = [{"id": f"call_{r}{j}", "type": "function",
                  "function": {"name": f"tool_{j}",
                               "arguments": json.dumps({"query": f"topic {r}{j}", "limit": 3})}}
                 for j in range(2)]
        messages.append({"role": "assistant", "content": "Looking.", "tool_calls": calls})
        messages += [{"role": "tool", "tool_call_id": c["id"], "content": f"result of {c['id']}"}
                     for c in calls]
    messages.append({"role": "assistant", "content": "Here is what I found."})
    messages.append({"role": "user", "content": "Go one level deeper."})
    tools = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                               "parameters": dict(t.input_schema)}}
             for t in TOOLS]
    return {"model": "claude-sonnet-4-5", "messages": messages, "tools": tools,
            "max_completion_tokens": 1024}


ANTHROPIC_REPLY = {
    "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
    "content": [
        {"type": "text", "text": "Two more lookups."},
        {"type": "tool_use", "id": "toolu_01", "name": "tool_0",
         "input": {"query": "weather in Zürich"}},
        {"type": "tool_use", "id": "toolu_02", "name": "tool_1",
         "input": {"query": "weather in Rome", "limit": 2}},
    ],
    "stop_reason": "tool_use", "stop_sequence": None,
    "usage": {"input_tokens": 1200, "output_tokens": 40},
}


# --------------------------------------------------------------------------- cases


def wire_cases() -> dict[str, Case]:
    cases: dict[str, Case] = {}
    for wire in WIRES:
        codec = get_codec(wire)
        request = transcript(wire)
        raw = json.dumps(codec.encode_response(two_calls(wire), request=request)).encode()
        assert len(codec.decode_response(raw, request=request).tool_calls) == 2

        def encode(codec: Any = codec, request: Request = request) -> object:
            return codec.encode_request(request)

        def decode(codec: Any = codec, raw: bytes = raw, request: Request = request) -> object:
            return codec.decode_response(raw, request=request)  # as the HTTP client does

        def unchecked(decode: Any = codec.module.decode_response, raw: bytes = raw,
                      request: Request = request) -> object:
            return decode(parse(raw), request=request)

        cases[f"{wire} encode"] = encode
        cases[f"{wire} decode"] = decode
        cases[f"{wire} unchecked"] = unchecked
    return cases


MEDIA_COUNTS = tuple(range(1, 11))


def media_cases() -> dict[str, Case]:
    cases: dict[str, Case] = {}
    for wire in WIRES:
        codec = get_codec(wire)
        for count in MEDIA_COUNTS:
            request = with_images(transcript(wire), count)
            body = json.dumps(codec.encode_request(request))
            assert body.count("AAECAwQFBgcICQoLDA0ODxAREhMU") >= count  # every image went

            def encode(codec: Any = codec, request: Request = request) -> object:
                return codec.encode_request(request)

            cases[f"{wire} {count}"] = encode
    return cases


def toolwire_vs_cases() -> dict[str, Case]:
    body = openai_request()
    raw = json.dumps(ANTHROPIC_REPLY).encode()
    request = get_codec("openai-chat").decode_request(body)
    anthropic = get_codec("anthropic-messages")
    out = convert(body, "openai-chat", "anthropic-messages").body
    assert len(out["messages"]) == 7 and len(out["tools"]) == 4 and "system" in out
    assert out["max_tokens"] == 1024
    return {
        "toolwire request": lambda: convert(body, "openai-chat", "anthropic-messages"),
        "toolwire reply": lambda: anthropic.decode_response(raw, request=request),
        "toolwire encode": lambda: anthropic.encode(request),
    }


class _QuietLog:
    """Stands in for LiteLLM's logging object: its post_call records nothing."""

    def post_call(self, *args: object, **kwargs: object) -> None:
        return None


def litellm_cases() -> dict[str, Case]:
    import httpx
    from litellm.llms.anthropic.chat.transformation import AnthropicConfig
    from litellm.types.utils import ModelResponse
    from litellm.utils import get_optional_params

    body = openai_request()
    messages, tools, model = body["messages"], body["tools"], body["model"]
    config = AnthropicConfig()
    settings = {"tools": tools, "max_completion_tokens": 1024}

    def request() -> object:  # as litellm.completion builds the body
        params = get_optional_params(model=model, custom_llm_provider="anthropic",
                                     messages=messages, **settings)  # type: ignore[arg-type]
        return config.transform_request(model, messages, params, {}, {})

    def provider_step() -> object:  # the Anthropic-specific part of the same work alone
        params = config.map_openai_params(dict(settings), {}, model, False)
        return config.transform_request(model, messages, params, {}, {})

    for make in (request, provider_step):
        out: Any = make()
        assert len(out["messages"]) == 7 and len(out["tools"]) == 4 and "system" in out
        assert out["max_tokens"] == 1024
    params = config.map_openai_params(dict(settings), {}, model, False)
    raw = httpx.Response(200, content=json.dumps(ANTHROPIC_REPLY).encode(),
                         headers={"content-type": "application/json"},
                         request=httpx.Request("POST", "http://127.0.0.1/v1/messages"))
    log = _QuietLog()

    def reply() -> object:
        return config.transform_response(model, raw, ModelResponse(), log,  # type: ignore[arg-type]
                                         out, messages, dict(params), {}, None)

    result: Any = reply()
    assert len(result.choices[0].message.tool_calls) == 2
    return {"litellm request": request, "litellm provider step": provider_step,
            "litellm reply": reply}


# --------------------------------------------------------------------------- report


def fmt(value: float) -> str:
    return f"{value:.1f}" if value < 100 else f"{value:.0f}"


def profile(cases: dict[str, Case], seconds: float = 1.0) -> str:
    """cProfile of each case for about ``seconds``: the functions with most own time."""
    out = io.StringIO()
    for name, fn in cases.items():
        prof = cProfile.Profile()
        end = time.perf_counter() + seconds
        prof.enable()
        while time.perf_counter() < end:
            fn()
        prof.disable()
        stats = pstats.Stats(prof, stream=out)
        out.write(f"\n--- {name}: toolwire functions by time spent inside them (cumulative)\n")
        stats.sort_stats("cumulative").print_stats(r"toolwire/(codecs|convert)", 14)
        out.write(f"\n--- {name}: functions by own time\n")
        stats.sort_stats("tottime").print_stats(10)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--profile", action="store_true", help="print toolwire's hot spots")
    parser.add_argument("--no-media", action="store_true", help="leave out the media cases")
    args = parser.parse_args()

    started = time.perf_counter()
    import toolwire

    print(f"toolwire {toolwire.__version__}, Python {platform.python_version()}, "
          f"{platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")

    per_wire = measure(wire_cases(), rounds=args.rounds)
    rows = [[wire, fmt(per_wire[f"{wire} encode"].wall_us),
             fmt(per_wire[f"{wire} encode"].cpu_us), fmt(per_wire[f"{wire} decode"].wall_us),
             fmt(per_wire[f"{wire} decode"].cpu_us),
             f"{added(per_wire[f'{wire} decode'], per_wire[f'{wire} unchecked']):+.0%}"]
            for wire in WIRES]
    print("\nPer wire: encode a 20-message tool transcript; decode a two-call reply from bytes "
          "(checks: what the decoder's guard and the JSON policy add to the wire's decoder on "
          "msgspec's parse)")
    print(table(["wire", "encode µs", "(CPU)", "decode µs", "(CPU)", "checks"], rows))

    if not args.no_media:
        media = measure(media_cases(), rounds=args.rounds, batch_s=0.02)
        print("\nPer wire: encode the same transcript with 1 to 10 tool results holding a 1 MB "
              "image; CPU ms in all, and CPU ms per image after the text-only cost")
        rows = []
        for wire in WIRES:
            text_only = per_wire[f"{wire} encode"].cpu_us
            times = [media[f"{wire} {n}"].cpu_us for n in MEDIA_COUNTS]
            per_image = [(t - text_only) / n / 1000 for t, n in zip(times, MEDIA_COUNTS,
                                                                    strict=True)]
            rows.append([wire, *(f"{t / 1000:.1f}" for t in times),
                         f"{min(per_image):.2f}-{max(per_image):.2f}",
                         f"{times[-1] / times[0]:.1f}x"])
        print(table(["wire", *(str(n) for n in MEDIA_COUNTS), "ms/image", "10 vs 1"], rows))

    mine = toolwire_vs_cases()
    have_litellm = installed("litellm")
    theirs = litellm_cases() if have_litellm else {}
    speeds = measure({**mine, **theirs}, rounds=args.rounds)
    print("\nOpenAI-format request (10 messages, 4 tools) -> Anthropic body, and an Anthropic "
          "reply with two calls -> reply object")
    rows = []
    missed = False
    for task in ("request", "reply"):
        tw = speeds[f"toolwire {task}"]
        ll = speeds.get(f"litellm {task}")
        if ll is None:
            rows.append([task, fmt(tw.wall_us), fmt(tw.cpu_us), "not installed", "-", "-", "-"])
            continue
        wall_ratio, cpu_ratio = ll.wall_us / tw.wall_us, ll.cpu_us / tw.cpu_us
        missed |= min(wall_ratio, cpu_ratio) < TARGET
        rows.append([task, fmt(tw.wall_us), fmt(tw.cpu_us), fmt(ll.wall_us), fmt(ll.cpu_us),
                     f"{wall_ratio:.1f}x", f"{cpu_ratio:.1f}x"])
    if have_litellm:  # for reference: LiteLLM's provider step alone; toolwire's encode alone
        for label, mine_case, theirs_case in (
                ("(request, LiteLLM provider step)", "toolwire request", "litellm provider step"),
                ("(request, encode only)", "toolwire encode", "litellm request")):
            tw, ll = speeds[mine_case], speeds[theirs_case]
            rows.append([label, fmt(tw.wall_us), fmt(tw.cpu_us), fmt(ll.wall_us),
                         fmt(ll.cpu_us), f"{ll.wall_us / tw.wall_us:.1f}x",
                         f"{ll.cpu_us / tw.cpu_us:.1f}x"])
    print(table(["conversion", "toolwire µs", "(CPU)", "litellm µs", "(CPU)",
                 "litellm/toolwire", "(CPU)"], rows))
    if have_litellm:
        verdict = "missed" if missed else "met"
        print(f"\nTarget (toolwire at least {TARGET:.0f}x faster on both): {verdict}")
    if args.profile or missed:
        print(profile(mine))
    print(f"\n(bench took {time.perf_counter() - started:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
