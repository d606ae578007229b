"""What the run-level tests of hostile replies share: bad bodies and streams in every wire, a run
against them over loopback HTTP, and the checks every such run must pass.

A case is a list of emulator script items (`toolwire.emulator.Raw` bytes or replies) played to
one `Agent.run`; `run_against` returns its result and its log, and `assert_ends_well` checks
what must hold whatever came: a named stop, a log whose every line parses and that holds every
message of the result, and `toolwire explain` (text and HTML) reading that log.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from toolwire import Agent, Message, Reply, RunStop, TextPart, ToolCallPart, Usage
from toolwire._json import dumps
from toolwire.agent.runlog import read_log
from toolwire.cli.app import main
from toolwire.cli.common import for_people
from toolwire.codecs import WIRES, get_codec
from toolwire.codecs.registry import get_wire
from toolwire.emulator import Emulator, Raw
from toolwire.http.client import RetryPolicy
from toolwire.http.client import model as make_model
from toolwire.http.providers import provider_for
from toolwire.schema.tool import Tool
from toolwire.transcript import Request
from toolwire.transcript_json import to_json

PROVIDER = {wire: provider_for(wire) for wire in WIRES}
MARK = "~"
"""Text put in a reply where a test later swaps in bytes no encoder writes: one character, so a
stream that sends text in pieces never splits it, and one no encoder writes otherwise."""
BIG = 987654321
"""A usage count a test later swaps for a number that does not fit."""

ANSWER = Reply(message=Message.assistant("Done: 18°C in Paris."),
               usage=Usage(input_tokens=BIG, output_tokens=7))
CALL = Reply(
    message=Message(role="assistant", parts=(
        TextPart(text="Looking it up."),
        ToolCallPart(id="call_1", name="get_weather", arguments={"city": MARK}),
    )),
    stop="tool_calls", usage=Usage(input_tokens=10, output_tokens=5),
)
REQUEST = Request(model="m", messages=(Message.user("Weather in Paris?"),))


def weather(city: str) -> str:
    return f"18°C in {city}"


TOOL = Tool(name="get_weather", description="Current weather for a city.",
            input_schema={"type": "object", "properties": {"city": {"type": "string"}},
                          "required": ["city"]}, fn=weather)


def whole(wire: str, reply: Reply) -> bytes:
    """``reply`` as the wire's whole body, as the emulator would send it."""
    return dumps(get_codec(wire).encode_response(reply, request=REQUEST))


def chunks(wire: str, reply: Reply) -> list[bytes]:
    """``reply`` as the wire's stream, one chunk per event."""
    return list(get_codec(wire).encode_stream(reply, request=REQUEST))


def swap(data: bytes, old: str | bytes, new: bytes) -> bytes:
    old = old.encode() if isinstance(old, str) else old
    assert old in data, f"{old!r} is not in the encoded body"
    return data.replace(old, new)


def swap_in_stream(parts: list[bytes], old: str, new: bytes) -> list[bytes]:
    """``parts`` with ``old`` replaced by ``new`` wherever it is (at least once)."""
    assert any(old.encode() in c for c in parts), f"{old!r} is not in the stream"
    return [c.replace(old.encode(), new) for c in parts]


def surrogate_escape(data: bytes) -> bytes:
    """The JSON escape of a lone surrogate as it must stand where `MARK` is in ``data``: twice
    escaped where the arguments travel as JSON text inside a JSON string."""
    return b"\\\\udcff" if b'\\"' + MARK.encode() in data else b"\\udcff"


def body(data: bytes, status: int = 200) -> Raw:
    return Raw(body=data, status=status)


def stream(parts: list[bytes], *, drop: bool = False) -> Raw:
    return Raw(chunks=parts, drop=drop)


async def run_against(wire: str, script: list[Any], log: Path, *, stream: bool = False,
                      time_limit: float | None = None, tools: Any = (TOOL,)) -> Any:
    """One `Agent.arun` on ``wire`` against ``script`` over loopback HTTP, logged to ``log``."""
    async with Emulator(script) as emu:
        model = make_model(f"{PROVIDER[wire]}:m@{emu.base_url}", env={}, seed=3,
                           retry=RetryPolicy(max_attempts=2, base=0.001, max_wait=0.01))
        agent = Agent(model=model, tools=list(tools), stream=stream, time_limit=time_limit)
        try:
            return await agent.arun("Weather in Paris?", log=log)
        finally:
            await model.aclose()


def _text(messages: Any) -> str:
    """Messages as JSON text shown to people (a lone surrogate, which the log reads back as
    U+FFFD, shown as U+FFFD on both sides)."""
    return for_people(json.dumps([to_json(m) for m in messages], ensure_ascii=False))


def binary_framing(wire: str) -> bool:
    """Whether ``wire`` streams in a framing that checks its bytes (a changed byte breaks the
    frame, whatever it was meant to carry)."""
    return get_wire(wire).framing not in ("sse", "ndjson")


def assert_ends_well(result: Any, log: Path) -> None:
    """A named stop; a log whose lines all parse, holding every message; explain reads it."""
    assert isinstance(result.stop, RunStop)
    lines = log.read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines]  # every line parses on its own
    assert events[0]["event"] == "header" and events[-1]["event"] == "stop"
    assert events[-1]["stop"] == str(result.stop)
    logged = read_log(log)
    assert _text(logged.messages) == _text(result.messages)  # every message, as people see it
    assert logged.stop == str(result.stop)
    if result.error is not None:
        assert events[-1]["error_type"] == type(result.error).__name__
    html = log.with_suffix(".html")
    html.unlink(missing_ok=True)  # explain --html writes only a new file
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["explain", str(log)]) == 0
        assert main(["explain", str(log), "--html", str(html)]) == 0
    assert str(result.stop).replace("_", " ") in out.getvalue() or str(result.stop) in \
        out.getvalue()
    assert html.read_text(encoding="utf-8").startswith("<!")
