"""How far the local token estimate is from a real server's prompt counts.

Builds one request from each recorded reply in ``tests/fixtures/corpus`` (the reply's text and
calls as the assistant's turn, after a system prompt and a user task, with the tools its calls
name and a result for every call; reasoning and provider blocks are left out, since the local
server's chat template drops them), sends each to the real local model (llama.cpp's server with
SmolLM2-135M-Instruct, ``local:smollm2``, asked for two tokens), and compares the prompt tokens
the server reports (``usage.prompt_tokens``, its prompt evaluation) with
`toolwire.context.estimate.estimate_tokens`. Each request is also sent with its conversation
replaced by a one-word task (its baseline: system prompt, tools and the chat template's own
text), so the error is given twice: for the whole prompt, and for the conversation alone (the
request's count less its baseline's, against the estimate's difference). Prints the median,
90th percentile and worst relative error of each, and with ``--write`` stores the requests
and their counts in ``tests/fixtures/prompt_counts.json`` (the test that checks the figures
reads it).

Needs ``toolwire[local]``. Run: ``python bench/prompt_counts.py [--write]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from toolwire.codecs import get_codec
from toolwire.context.estimate import estimate_tokens
from toolwire.events import StreamEnd
from toolwire.http.client import model as make_model
from toolwire.transcript import (
    Message,
    Reply,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    replace,
)
from toolwire.transcript_json import from_json, to_json

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "corpus"
OUT = ROOT / "tests" / "fixtures" / "prompt_counts.json"
WIRES = {"anthropic": "anthropic-messages", "openai_chat": "openai-chat",
         "openai_responses": "openai-responses", "gemini": "gemini-generate",
         "ollama": "ollama-chat"}
SYSTEMS = ("You are a helpful assistant.",
           "You are a careful engineer. Read before you change anything, and say what you did.",
           "Réponds en français, brièvement, et utilise les outils quand il le faut.")


def replies() -> list[tuple[str, Reply]]:
    out = []
    for path in sorted(CORPUS.glob("*.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        codec = get_codec(WIRES[case["fmt"].removesuffix("_stream")])
        body = case["body"]
        if case["streaming"]:
            text = body if isinstance(body, str) else "".join(body)
            reply = next(e.reply for e in codec.decode_stream([text.encode()])
                         if isinstance(e, StreamEnd))
        else:
            reply = codec.decode_response(body)
        out.append((path.stem, reply))
    return out


def request_for(n: int, reply: Reply) -> Request | None:
    """A request whose history holds ``reply``'s text and calls, or None when it has
    neither."""
    parts = tuple(p for p in reply.message.parts if isinstance(p, TextPart | ToolCallPart))
    if not parts:
        return None
    calls = [p for p in parts if isinstance(p, ToolCallPart)]
    tools: dict[str, ToolSpec] = {}
    for call in calls:
        args = call.arguments if isinstance(call.arguments, dict) else {}
        tools.setdefault(call.name, ToolSpec(
            name=call.name, description=f"Runs {call.name.replace('_', ' ')} for the user.",
            input_schema={"type": "object", "properties": {
                k: {"type": "string", "description": f"the {k}"} for k in args}}))
    messages = [Message.user("Please help with the task below, using the tools if needed."),
                Message(role="assistant", parts=parts)]
    if calls:
        messages.append(Message(role="tool", parts=tuple(ToolResultPart(
            call_id=c.id, name=c.name, content=f"{c.name} finished: {c.arguments_text[:200]}")
            for c in calls)))
    else:
        messages.append(Message.user("Thanks. Anything else?"))
    return Request(model="smollm2", system=SYSTEMS[n % len(SYSTEMS)], tools=tuple(tools.values()),
                   messages=tuple(messages), max_tokens=2)


def baseline(request: Request) -> Request:
    """The same request with the conversation left out: only what frames it (system prompt,
    tools, the template's own text) and a one-word task."""
    return replace(request, messages=(Message.user("Hi."),))


def _spread(errors: list[float]) -> dict[str, float]:
    ranked = sorted(abs(e) for e in errors)
    return {"median": round(statistics.median(ranked), 3),
            "p90": round(ranked[int(0.9 * (len(ranked) - 1))], 3), "worst": round(ranked[-1], 3),
            "median_signed": round(statistics.median(errors), 3)}


def figures(pairs: list[tuple[Request, int, int]]) -> dict[str, Any]:
    """Relative errors of the estimate against the server's count, for the whole prompt and
    for the conversation alone (both less their baselines)."""
    whole = [(estimate_tokens(r) - c) / c for r, c, _ in pairs]
    talk = []
    for r, c, b in pairs:
        counted = c - b
        if counted > 0:
            talk.append((estimate_tokens(r) - estimate_tokens(baseline(r)) - counted) / counted)
    return {"requests": len(pairs), "whole_prompt": _spread(whole),
            "conversation": _spread(talk)}


async def measure() -> list[tuple[str, Request, int, int]]:
    model = make_model("local:smollm2", max_tokens=2)
    out = []
    try:
        for n, (name, reply) in enumerate(replies()):
            request = request_for(n, reply)
            if request is None:
                continue
            counted = (await model.complete(request)).usage.input_tokens
            base = (await model.complete(baseline(request))).usage.input_tokens
            out.append((name, request, counted, base))
            print(f"{name[:60]:60} est {estimate_tokens(request):5} server {counted:5} "
                  f"(framing {base})", file=sys.stderr)
    finally:
        await model.aclose()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help=f"store the pairs in {OUT}")
    args = parser.parse_args()
    measured = asyncio.run(measure())
    found = figures([(r, c, b) for _, r, c, b in measured])
    print(json.dumps(found, indent=2))
    if args.write:
        data: dict[str, Any] = {
            "source": "requests built by bench/prompt_counts.py from the recorded replies in "
                      "tests/fixtures/corpus (their sources and licenses: corpus/SOURCES); "
                      "prompt_tokens counted by llama.cpp's server (xllamacpp "
                      "2026.10.11549) with SmolLM2-135M-Instruct (Apache-2.0) and toolwire's "
                      "local chat template",
            "figures": found,
            "pairs": [{"reply": name, "request": to_json(r), "prompt_tokens": c,
                       "baseline_tokens": b} for name, r, c, b in measured]}
        OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        assert all(isinstance(from_json(p["request"]), Request) for p in data["pairs"])


if __name__ == "__main__":
    main()
