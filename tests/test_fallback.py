"""Fallback chains over loopback HTTP: a run started on one wire, failed over at turn 3 with
tool calls and reasoning in its history, and finished on another, for every ordered pair of
wires; every request the second model got valid for its provider's SDK types, the transcript
rules holding, the losses reported."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sdk_types import assert_wire_valid
from toolwire import (
    Agent,
    Message,
    ReasoningPart,
    Reply,
    RunStop,
    TextPart,
    ToolCallPart,
    check_transcript,
    fallback,
)
from toolwire.codecs import get_codec
from toolwire.emulator import Emulator, Fault
from toolwire.events import ModelChosen, RetryEvent
from toolwire.http.client import HttpModel, RetryPolicy
from toolwire.http.client import model as make_model
from toolwire.http.providers import provider_for
from toolwire.schema.tool import Tool
from wire_data import THOUGHT, looped, table

PROVIDER = {wire: provider_for(wire) for wire in looped()}

NATIVE_REASONING: dict[str, Any] = table("REASONING")


def weather(city: str) -> str:
    return f"18°C in {city}"


TOOL = Tool(name="get_weather", description="Current weather for a city.",
            input_schema={"type": "object", "properties": {"city": {"type": "string"}},
                          "required": ["city"]}, fn=weather)


def calls(wire: str, *cities: str, tag: str) -> Reply:
    """A reply in ``wire``: its reasoning, a line of text and one call per city."""
    parts: list[Any] = [ReasoningPart(text=THOUGHT, provider_data={wire: NATIVE_REASONING[wire]}),
                        TextPart(text="Checking.")]
    parts += [ToolCallPart(id=f"functions.get_weather:{tag}{n}", name="get_weather",
                           arguments={"city": c}) for n, c in enumerate(cities)]
    return Reply(message=Message(role="assistant", parts=tuple(parts)), stop="tool_calls")


def http_model(wire: str, emu: Emulator, name: str) -> HttpModel:
    return make_model(f"{PROVIDER[wire]}:{name}@{emu.base_url}", env={},
                      retry=RetryPolicy(max_attempts=1), seed=7)


async def failed_over(first: str, second: str, *, stream: bool) -> tuple[Any, Emulator,
                                                                         list[Any]]:
    """Turns 1 and 2 on ``first`` (parallel calls, then one), turn 3 refused as overloaded
    and answered by ``second`` (a call), turn 4 on ``second`` (the answer)."""
    script: list[Any] = [
        calls(first, "Paris", "Rome", tag="a"),
        calls(first, "Oslo", tag="b"),
        Fault("overloaded"),
        Reply(message=Message(role="assistant", parts=(
            TextPart(text="One more."),
            ToolCallPart(id="call_c0", name="get_weather", arguments={"city": "Lima"}))),
            stop="tool_calls"),
        Reply(message=Message.assistant("Paris, Rome, Oslo and Lima: 18°C.")),
    ]
    events: list[Any] = []
    async with Emulator(script) as emu:
        chain = fallback(http_model(first, emu, "first-model"),
                         http_model(second, emu, "second-model"), sticky=True)
        agent = Agent(model=chain, tools=[TOOL], stream=stream, on_event=events.append)
        result = await agent.arun("Weather in Paris, Rome, Oslo and Lima?")
        await chain.aclose()
        emu.assert_done()
    return result, emu, events


PAIRS = [(a, b) for a in looped() for b in looped()]


@pytest.mark.parametrize(("first", "second"), PAIRS)
def test_a_run_fails_over_at_turn_three_and_finishes_on_the_other_wire(
        first: str, second: str) -> None:
    stream = (looped().index(first) + looped().index(second)) % 2 == 1
    result, emu, events = asyncio.run(failed_over(first, second, stream=stream))
    assert result.stop == RunStop.ANSWERED, result.error
    assert result.answer == "Paris, Rome, Oslo and Lima: 18°C."
    # the history: reasoning and parallel calls of the first wire, kept as they came
    firsts = [m for m in result.messages if m.role == "assistant"][:2]
    assert [len(m.tool_calls) for m in firsts] == [2, 1]
    assert all(any(isinstance(p, ReasoningPart) and p.text == THOUGHT for p in m.parts)
               for m in firsts)
    # who answered each turn, and why the chain moved
    chosen = [e for e in events if isinstance(e, ModelChosen)]
    names = [c.model.split(":")[1].split("@")[0] for c in chosen if c.model]
    assert names == ["first-model", "first-model", "second-model", "second-model"]
    moved = chosen[2]
    assert [(f[0].split(":")[1].split("@")[0], f[1]) for f in moved.failed] == [
        ("first-model", "overloaded")]
    if first != second:  # the first wire's reasoning cannot cross: reported, not silent
        assert any(loss.startswith("reasoning_dropped") for loss in moved.losses), moved.losses
    assert not chosen[3].losses and not chosen[3].failed
    # every request the second model got fits its provider's SDK types and its rules
    sent = [r for r in emu.received if r.wire == second][-2:] if first == second else \
        [r for r in emu.received if r.wire == second]
    assert len(sent) == 2
    for received in sent:
        assert_wire_valid(second, received.body, model="second-model")
    # the transcript as kept holds the first wire's rules; each request as the second wire got
    # it holds the second's: ids rewritten where its rules want it, every call paired
    assert not [p for p in check_transcript(result.messages, first) if p.severity == "error"]
    for received in sent:
        decoded = get_codec(second).decode_request(received.body, model="second-model")
        assert not [p for p in check_transcript(decoded.messages, second)
                    if p.severity == "error"]
    decoded = get_codec(second).decode_request(sent[0].body, model="second-model")
    sent_ids = [p.id for m in decoded.messages for p in m.tool_calls]
    kept_ids = [p.id for m in result.messages[:5] for p in m.tool_calls]
    assert len(sent_ids) == len(kept_ids) == 3
    assert sent_ids == [p.call_id for m in decoded.messages for p in m.tool_results]
    if sent_ids != kept_ids and first != second:
        assert any(loss.startswith("id_rewritten") for loss in moved.losses), moved.losses
    assert not [e for e in events if isinstance(e, RetryEvent)]  # one request per model
