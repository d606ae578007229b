"""The provider emulator over real loopback HTTP: every wire, whole and streamed, faults, checks."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import pytest

import toolwire
from toolwire import InvalidRequestError, Message, RateLimitError, Request, ToolSpec
from toolwire.codecs.registry import get_wire
from toolwire.emulator import Emulator, Fault
from toolwire.events import StreamEnd, listen
from toolwire.http.client import HttpModel, RetryEvent, RetryPolicy
from toolwire.http.providers import provider_for
from toolwire.transcript import Reply, TextPart, ToolCallPart, Usage
from wire_data import data, looped

PROVIDER = {wire: provider_for(wire) for wire in looped()}

WEATHER = ToolSpec(
    name="get_weather",
    description="Current weather for a city.",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}},
                  "required": ["city"], "additionalProperties": False},
)

TWO_CALLS = Reply(
    message=Message(role="assistant", parts=(
        TextPart(text="I'll check both cities — Zürich first."),
        ToolCallPart(id="call_a1", name="get_weather", arguments={"city": "Zürich"}),
        ToolCallPart(id="call_b2", name="get_weather", arguments={"city": "Rome"}),
    )),
    stop="tool_calls",
    usage=Usage(input_tokens=40, output_tokens=12),
)
ANSWER = Reply(message=Message.assistant("Zürich is 18°C; Rome is 24°C."), stop="end_turn",
               usage=Usage(input_tokens=90, output_tokens=9))


def fast_model(wire: str, emu: Emulator, **kw: Any) -> HttpModel:
    return toolwire.model(f"{PROVIDER[wire]}:test-model@{emu.base_url}", env={},
                          retry=RetryPolicy(base=0.001, max_wait=0.01), seed=1, **kw)


def shape(reply: Reply) -> tuple[Any, ...]:
    calls = tuple((c.name, c.arguments) for c in reply.tool_calls)
    return reply.text, calls, reply.stop, reply.usage.input_tokens, reply.usage.output_tokens


def ask(*, stream: bool = False) -> Request:
    return Request(model="x", messages=(Message.user("Weather in Zürich and Rome?"),),
                   tools=(WEATHER,), max_tokens=256, stream=stream)


@pytest.mark.parametrize("wire", looped())
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_every_wire_whole_and_streamed(wire: str, stream: bool) -> None:
    async with Emulator([TWO_CALLS]) as emu:
        m = fast_model(wire, emu)
        if stream:
            events = [e async for e in m.stream(ask(stream=True))]
            assert isinstance(events[-1], StreamEnd)
            reply = events[-1].reply
            kinds = {type(e).__name__ for e in events}
            assert {"TextDelta", "ToolCallStarted", "ToolCallFinished"} <= kinds
        else:
            reply = await m.complete(ask())
        await m.aclose()
        emu.assert_done()
    assert shape(reply) == shape(TWO_CALLS)
    assert emu.received[0].wire == wire
    if data(wire).REPLY_CALL_IDS:  # Gemini's replies may carry no call ids at all
        assert [c.id for c in reply.tool_calls] == ["call_a1", "call_b2"]


async def test_rate_limit_is_retried_after_the_servers_pause() -> None:
    seen: list[RetryEvent] = []
    async with Emulator([Fault(kind="rate_limit", retry_after=0.01), ANSWER]) as emu:
        m = fast_model("anthropic-messages", emu)
        with listen(seen.append):
            reply = await m.complete(ask())
        await m.aclose()
    assert reply.text == ANSWER.text
    assert len(seen) == 1 and isinstance(seen[0].error, RateLimitError)
    assert seen[0].wait == pytest.approx(0.01)
    assert len(emu.received) == 2


@pytest.mark.parametrize("kind", ["overloaded", "server_error"])
@pytest.mark.parametrize("wire", looped())
async def test_overload_and_server_errors_are_retried(wire: str, kind: str) -> None:
    async with Emulator([Fault(kind=kind), ANSWER]) as emu:
        m = fast_model(wire, emu)
        reply = await m.complete(ask())
        await m.aclose()
    assert reply.text == ANSWER.text and len(emu.received) == 2


@pytest.mark.parametrize("wire", looped())
async def test_a_stream_dropped_mid_reply_is_retried_whole(wire: str) -> None:
    """Retried whole, or, where the wire's server serves a stream again from an event (its
    record says ``resumable``), taken up where it broke with no retry."""
    from toolwire.codecs.registry import get_wire

    resumes = get_wire(wire).resumable
    async with Emulator([Fault(kind="drop_mid_stream", reply=TWO_CALLS), TWO_CALLS]) as emu:
        m = fast_model(wire, emu)
        heard: list[object] = []
        with listen(heard.append):
            events = [e async for e in m.stream(ask(stream=True))]
        await m.aclose()
        assert len(emu.received) == (1 if resumes else 2)
    retries = [e for e in heard if isinstance(e, RetryEvent)]
    assert len(retries) == (0 if resumes else 1)
    assert not any(isinstance(e, RetryEvent) for e in events)
    final = events[-1]
    assert isinstance(final, StreamEnd) and shape(final.reply) == shape(TWO_CALLS)


@pytest.mark.parametrize("wire", looped())
async def test_a_malformed_chunk_is_an_error_then_retried(wire: str) -> None:
    async with Emulator([Fault(kind="malformed_chunk", reply=ANSWER), ANSWER]) as emu:
        m = fast_model(wire, emu)
        heard: list[object] = []
        with listen(heard.append):
            events = [e async for e in m.stream(ask(stream=True))]
        await m.aclose()
    assert any(isinstance(e, RetryEvent) for e in heard)
    final = events[-1]
    assert isinstance(final, StreamEnd) and final.reply.text == ANSWER.text


async def test_bad_request_is_not_retried() -> None:
    async with Emulator([Fault(kind="bad_request", message="nope"), ANSWER]) as emu:
        m = fast_model("openai-chat", emu)
        with pytest.raises(InvalidRequestError, match="nope"):
            await m.complete(ask())
        await m.aclose()
    assert len(emu.received) == 1


async def test_retries_give_up_after_the_last_attempt() -> None:
    async with Emulator([Fault(kind="server_error")] * 3) as emu:
        m = fast_model("anthropic-messages", emu, )
        m.retry = RetryPolicy(max_attempts=3, base=0.001)
        with pytest.raises(toolwire.ServerError):
            await m.complete(ask())
        await m.aclose()
    assert len(emu.received) == 3


async def test_slow_first_byte_still_answers() -> None:
    async with Emulator([Fault(kind="slow_first_byte", delay=0.05, reply=ANSWER)]) as emu:
        m = fast_model("openai-chat", emu)
        reply = await m.complete(ask())
        await m.aclose()
    assert reply.text == ANSWER.text


MISSING_RESULT = {
    "anthropic-messages": {
        "model": "m", "max_tokens": 10,
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]},
            {"role": "user", "content": "next"},
        ],
    },
    "openai-chat": {
        "model": "m",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "user", "content": "next"},
        ],
    },
}


@pytest.mark.parametrize("wire", sorted(MISSING_RESULT))
def test_a_call_without_its_result_is_refused_like_the_provider(wire: str) -> None:
    path = get_wire(wire).path
    with Emulator([ANSWER]) as emu:
        resp = httpx2.post(emu.base_url + path, json=MISSING_RESULT[wire])
    assert resp.status_code == 400
    body = resp.json()
    text = json.dumps(body)
    assert "toolu_1" in text or "call_1" in text
    if wire == "anthropic-messages":
        assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    else:
        assert body["error"]["type"] == "invalid_request_error"


def test_ids_outside_anthropics_character_set_are_refused() -> None:
    body = {
        "model": "m", "max_tokens": 10,
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "functions.f:0", "name": "f", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "functions.f:0", "content": "ok"}]},
        ],
    }
    with Emulator([ANSWER]) as emu:
        resp = httpx2.post(emu.base_url + "/v1/messages", json=body)
    assert resp.status_code == 400
    assert "String should match pattern" in resp.json()["error"]["message"]


def test_gemini_response_count_mismatch_is_refused() -> None:
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}},
                                        {"functionCall": {"name": "f", "args": {"a": 1}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]},
        ],
    }
    with Emulator([ANSWER]) as emu:
        resp = httpx2.post(emu.base_url + "/v1beta/models/m:generateContent", json=body)
    assert resp.status_code == 400
    err = resp.json()["error"]
    assert err["status"] == "INVALID_ARGUMENT"
    assert "number of function response parts is equal" in err["message"]


def test_official_anthropic_sdk_parses_every_reply() -> None:
    anthropic = pytest.importorskip("anthropic")
    with Emulator([TWO_CALLS, TWO_CALLS]) as emu:
        client = anthropic.Anthropic(base_url=emu.base_url, api_key="test-key", max_retries=0)
        msg = client.messages.create(
            model="m", max_tokens=100, messages=[{"role": "user", "content": "weather?"}],
            tools=[{"name": "get_weather", "input_schema": dict(WEATHER.input_schema)}],
        )
        assert msg.stop_reason == "tool_use"
        assert [b.input for b in msg.content if b.type == "tool_use"] == [
            {"city": "Zürich"}, {"city": "Rome"}]
        with client.messages.stream(
            model="m", max_tokens=100, messages=[{"role": "user", "content": "weather?"}],
            tools=[{"name": "get_weather", "input_schema": dict(WEATHER.input_schema)}],
        ) as stream:
            final = stream.get_final_message()
        assert [b.input for b in final.content if b.type == "tool_use"] == [
            {"city": "Zürich"}, {"city": "Rome"}]


def test_official_openai_sdk_parses_every_reply() -> None:
    openai = pytest.importorskip("openai")
    tools = [{"type": "function", "function": {"name": "get_weather",
                                               "parameters": dict(WEATHER.input_schema)}}]
    with Emulator([TWO_CALLS, TWO_CALLS, TWO_CALLS, TWO_CALLS]) as emu:
        client = openai.OpenAI(base_url=emu.base_url + "/v1", api_key="test-key", max_retries=0)
        done = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "weather?"}], tools=tools)
        calls = done.choices[0].message.tool_calls
        assert [json.loads(c.function.arguments) for c in calls] == [
            {"city": "Zürich"}, {"city": "Rome"}]
        chunks = list(client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "weather?"}], tools=tools,
            stream=True))
        names = [tc.function.name for ch in chunks for c in ch.choices
                 for tc in (c.delta.tool_calls or []) if tc.function and tc.function.name]
        assert names == ["get_weather", "get_weather"]
        resp = client.responses.create(
            model="m", input="weather?",
            tools=[{"type": "function", "name": "get_weather", "strict": True,
                    "parameters": dict(WEATHER.input_schema)}])
        assert [o.call_id for o in resp.output if o.type == "function_call"] == [
            "call_a1", "call_b2"]
        events = list(client.responses.create(
            model="m", input="weather?", stream=True,
            tools=[{"type": "function", "name": "get_weather", "strict": True,
                    "parameters": dict(WEATHER.input_schema)}]))
        assert events[-1].type == "response.completed"


def test_emulator_runs_in_its_own_thread_for_sync_code() -> None:
    with Emulator([ANSWER]) as emu:
        m = fast_model("anthropic-messages", emu)
        reply = asyncio.run(m.complete(ask()))
    assert reply.text == ANSWER.text
