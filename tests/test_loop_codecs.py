"""The same scripted run through every codec gives the same canonical transcript.

Each request the loop builds is encoded to the wire, decoded back, and given to the scripted
model; each scripted reply is encoded as the wire's response body and decoded back before the loop
sees it. Wires that carry arguments as text keep that text in ``raw_arguments``; the canonical
comparison checks that text parses to the same arguments and otherwise ignores it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from toolwire.agent.loop import Agent, RunResult, RunStop
from toolwire.codecs import WIRES, get_codec
from toolwire.errors import ToolError
from toolwire.rules import check_transcript
from toolwire.schema.tool import tool
from toolwire.testing import ScriptedModel, ScriptEntry, call, reply
from toolwire.transcript import Message, Reply, Request, ToolCallPart, Usage, replace


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def lookup(key: str) -> dict[str, Any]:
    """Look a key up."""
    if key == "missing":
        raise ToolError(f"No entry for {key!r}.")
    return {"key": key, "value": [1, "ü", None]}


class Answer(BaseModel):
    total: int
    note: str


def script() -> list[ScriptEntry]:
    return [
        reply("Let me work.", call("add", {"a": 1, "b": 2}), call("lookup", {"key": "k"}),
              usage=Usage(input_tokens=10, output_tokens=4)),
        reply(call("add", {"a": 1, "b": "two"}), call("lookup", {"key": "missing"}),
              call("adder", {"a": 1})),
        reply("The sum is 3.", usage=Usage(input_tokens=30, output_tokens=5)),
    ]


def output_script() -> list[ScriptEntry]:
    return [
        reply(call("add", {"a": 2, "b": 2})),
        reply(call("final_answer", {"total": "four"})),
        reply(call("final_answer", {"total": 4, "note": "done"})),
    ]


class WireModel:
    """Puts every request and reply through one wire's JSON, both ways."""

    def __init__(self, wire: str, inner: ScriptedModel) -> None:
        self.codec = get_codec(wire)
        self.inner = inner
        self.name = "scripted"
        self.sent: list[Request] = []

    async def complete(self, request: Request) -> Reply:
        self.sent.append(request)
        body = json.loads(json.dumps(self.codec.encode_request(request)))
        seen = self.codec.decode_request(body)
        answer = await self.inner.complete(seen)
        wire_reply = json.loads(json.dumps(self.codec.encode_response(answer, request=seen)))
        return self.codec.decode_response(wire_reply, request=request)


def canonical(messages: tuple[Message, ...] | list[Message]) -> list[Message]:
    """Messages with argument text dropped once it is known to parse to the arguments."""
    out = []
    for message in messages:
        parts = []
        for part in message.parts:
            if isinstance(part, ToolCallPart) and part.raw_arguments is not None:
                assert json.loads(part.raw_arguments) == part.arguments
                part = replace(part, raw_arguments=None)
            parts.append(part)
        out.append(replace(message, parts=tuple(parts)))
    return out


async def run_through(wire: str | None, entries: list[ScriptEntry], **kwargs: Any) -> tuple[
    RunResult[Any], ScriptedModel, WireModel | None
]:
    inner = ScriptedModel(entries)
    model: Any = inner if wire is None else WireModel(wire, inner)
    # no cache breakpoints: a decoded body keeps them in its parts, which would differ here
    agent = Agent(model=model, tools=[add, lookup], system="Be exact.", cache=False)
    run = agent.steps("What is 1 + 2?", **kwargs)
    async for _ in run:
        assert check_transcript(run.messages, wire=wire) == []
    inner.assert_done()
    return run.result, inner, model if wire is not None else None


@pytest.mark.parametrize("wire", WIRES)
async def test_same_transcript_through_every_codec(wire: str) -> None:
    expected, direct, _ = await run_through(None, script())
    got, inner, wired = await run_through(wire, script())
    assert expected.stop is RunStop.ANSWERED and got.stop is RunStop.ANSWERED
    assert canonical(got.messages) == canonical(expected.messages)
    assert got.answer == "The sum is 3." and got.usage == expected.usage
    # what the model received after the round trip is what the loop sent
    assert wired is not None
    for sent, seen, plain in zip(wired.sent, inner.requests, direct.requests, strict=True):
        assert canonical(seen.messages) == canonical(sent.messages) == canonical(plain.messages)
        assert seen.system == sent.system == "Be exact."
        assert [t.name for t in seen.tools] == ["add", "lookup"]
    # the bad calls' exact error texts crossed the wire
    errors = [r for r in inner.requests[2].messages[-1].tool_results if r.is_error]
    assert [e.content for e in errors][1] == "No entry for 'missing'."
    assert len(errors) == 3


@pytest.mark.parametrize("wire", WIRES)
async def test_structured_output_through_every_codec(wire: str) -> None:
    expected, _, _ = await run_through(None, output_script(), output=Answer)
    got, inner, _ = await run_through(wire, output_script(), output=Answer)
    assert got.output == expected.output == Answer(total=4, note="done")
    assert canonical(got.messages) == canonical(expected.messages)
    assert [t.name for t in inner.requests[0].tools] == ["add", "lookup", "final_answer"]
