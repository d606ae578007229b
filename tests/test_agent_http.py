"""Full agent runs over loopback HTTP against the emulator, in every wire, whole and streamed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolwire import (
    Agent,
    Message,
    RateLimitError,
    Reply,
    RunStop,
    TextPart,
    ToolCallPart,
    Usage,
    check_transcript,
)
from toolwire.codecs import get_codec
from toolwire.codecs.registry import get_wire
from toolwire.emulator import Emulator, Fault
from toolwire.events import RetryEvent, ToolFinished, ToolStarted, WireNotes
from toolwire.http.client import HttpModel, RetryPolicy
from toolwire.http.client import model as make_model
from toolwire.http.providers import provider_for
from toolwire.schema.tool import Tool
from wire_data import looped

PROVIDER = {wire: provider_for(wire) for wire in looped()}

CALLS = Reply(
    message=Message(role="assistant", parts=(
        TextPart(text="Checking both cities."),
        ToolCallPart(id="call_p1", name="get_weather", arguments={"city": "Paris"}),
        ToolCallPart(id="call_r2", name="get_weather", arguments={"city": "Rome"}),
    )),
    stop="tool_calls", usage=Usage(input_tokens=50, output_tokens=20),
)
ANSWER = Reply(message=Message.assistant("Paris 18°C, Rome: the service failed."),
               usage=Usage(input_tokens=120, output_tokens=12))


def weather(city: str) -> str:
    if city == "Rome":
        raise RuntimeError("weather service timeout")
    return f"18°C in {city}"


TOOL = Tool(name="get_weather", description="Current weather for a city.",
            input_schema={"type": "object", "properties": {"city": {"type": "string"}},
                          "required": ["city"]}, fn=weather)


def http_model(wire: str, emu: Emulator) -> HttpModel:
    return make_model(f"{PROVIDER[wire]}:m@{emu.base_url}", env={},
                      retry=RetryPolicy(base=0.001, max_wait=0.01), seed=7)


async def run(wire: str, script: list[Any], *, stream: bool,
              log: Any = None) -> tuple[Any, Emulator, list[Any]]:
    events: list[Any] = []
    async with Emulator(script) as emu:
        model = http_model(wire, emu)
        agent = Agent(model=model, tools=[TOOL], stream=stream, on_event=events.append)
        result = await agent.arun("Weather in Paris and Rome?", log=log)
        await model.aclose()
        emu.assert_done()
    return result, emu, events


def shape(messages: Any) -> list[Any]:
    out = []
    for m in messages:
        parts = []
        for p in m.parts:
            if isinstance(p, ToolCallPart):
                parts.append(("call", p.name, p.arguments))
            elif hasattr(p, "call_id"):
                parts.append(("result", p.content, p.is_error))
            else:
                parts.append((type(p).__name__, getattr(p, "text", None)))
        out.append((m.role, parts))
    return out


EXPECTED = [
    ("user", [("TextPart", "Weather in Paris and Rome?")]),
    ("assistant", [("TextPart", "Checking both cities."),
                   ("call", "get_weather", {"city": "Paris"}),
                   ("call", "get_weather", {"city": "Rome"})]),
    ("tool", [("result", "18°C in Paris", False),
              ("result", "Tool 'get_weather' failed: RuntimeError: weather service timeout",
               True)]),
    ("assistant", [("TextPart", "Paris 18°C, Rome: the service failed.")]),
]


@pytest.mark.parametrize("wire", looped())
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_full_run_in_every_wire(wire: str, stream: bool) -> None:
    result, emu, _ = await run(wire, [CALLS, ANSWER], stream=stream)
    assert result.stop is RunStop.ANSWERED and result.turns == 2
    assert shape(result.messages) == EXPECTED
    assert check_transcript(result.messages, wire) == []
    assert result.usage.input_tokens == 170 and result.usage.output_tokens == 32
    # the second request carried the whole history in the wire's own shape, and the emulator
    # (which checks pairing the way the provider does) accepted it
    second = emu.received[1]
    codec = get_codec(wire)
    if get_wire(wire).model_in_path:  # the model was in the URL
        sent = codec.decode_request(second.body, model="m")  # type: ignore[call-arg]
    else:
        sent = codec.decode_request(second.body)
    assert shape(sent.messages) == EXPECTED[:3]
    assert [r.call_id for r in sent.messages[2].tool_results] == [
        c.id for c in sent.messages[1].tool_calls]


@pytest.mark.parametrize("wire", looped())
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_faults_are_recovered_with_the_transcript_intact(wire: str, stream: bool,
                                                              tmp_path: Path) -> None:
    broken = Fault(kind="drop_mid_stream", reply=ANSWER) if stream else Fault(kind="overloaded")
    # a stream its wire takes up where it broke (`toolwire.http.resumes`) is not sent again
    resumed = stream and get_wire(wire).resumable
    script = [Fault(kind="rate_limit", retry_after=0.01), CALLS, Fault(kind="server_error"),
              broken, *([] if resumed else [ANSWER])]
    log = tmp_path / "run.jsonl"
    result, emu, events = await run(wire, script, stream=stream, log=log)
    assert result.stop is RunStop.ANSWERED
    assert shape(result.messages) == EXPECTED
    assert check_transcript(result.messages, wire) == []
    retries = [e for e in events if isinstance(e, RetryEvent)]
    # each fault seen once, as an event
    assert [e.attempt for e in retries] == [1, 1, 2][:2 if resumed else 3]
    assert isinstance(retries[0].error, RateLimitError)
    assert len(emu.received) == len(script)
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(e["turn"], e["error_type"]) for e in logged if e["event"] == "retry"] == [
        (1, "RateLimitError"), (2, "ServerError"),
        (2, "StreamError" if stream else "OverloadedError")][:2 if resumed else 3]
    started = [e.call.arguments["city"] for e in events if isinstance(e, ToolStarted)]
    finished = {e.call.id: e.result.is_error for e in events if isinstance(e, ToolFinished)}
    assert sorted(started) == ["Paris", "Rome"]
    assert finished == {"call_p1": False, "call_r2": True}


async def test_a_request_the_provider_refuses_ends_the_run_with_its_error() -> None:
    script = [Fault(kind="bad_request", message="tools.0: Field required")]
    result, _, _ = await run("anthropic-messages", script, stream=False)
    assert result.stop is RunStop.PROVIDER_ERROR
    assert "tools.0: Field required" in str(result.error)
    assert [m.role for m in result.messages] == ["user"]


async def test_what_a_codec_changed_is_in_the_runs_notes_once() -> None:
    dotted = Tool(name="math.sum", description="Add numbers.",
                  input_schema={"type": "object", "properties": {"a": {"type": "integer"}},
                                "required": ["a"]}, fn=lambda a: str(a))
    script = [
        Reply(message=Message(role="assistant", parts=(
            ToolCallPart(id="call_s1", name="math.sum", arguments={"a": 1}),)),
            stop="tool_calls"),
        ANSWER,
    ]
    events: list[Any] = []
    async with Emulator(script) as emu:
        model = http_model("openai-chat", emu)
        agent = Agent(model=model, tools=[dotted], on_event=events.append)
        result = await agent.arun("Add.")
        await model.aclose()
        sent = [[t["function"]["name"] for t in r.body["tools"]] for r in emu.received]
    assert sent == [["math_sum"], ["math_sum"]]
    assert result.ok and result.messages[1].tool_calls[0].name == "math.sum"
    mapped = [n for n in result.notes if "tool_name_mapped" in n]
    assert mapped == ["openai-chat: tool_name_mapped: math.sum: sent as 'math_sum': the wire "
                      "does not accept this name"]
    assert sum(isinstance(e, WireNotes) for e in events) == 2  # one per request
