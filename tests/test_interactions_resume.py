"""A streamed Interactions reply whose connection breaks part of the way through is taken up
where it broke (``GET /v1beta/interactions/{id}?stream=true&last_event_id=...``), not sent
again: the run gets the whole reply once, with nothing repeated."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from toolwire import Agent, RunStop
from toolwire.codecs import get_codec
from toolwire.codecs.gemini_interactions import NAME as WIRE
from toolwire.emulator import Emulator, Fault, Raw
from toolwire.events import Event, RetryEvent, StreamEnd, TextDelta, listen
from toolwire.http.client import RetryPolicy
from toolwire.http.client import model as make_model
from toolwire.http.resumes import resume_request
from toolwire.http.transport import WireRequest
from toolwire.schema.tool import Tool
from toolwire.transcript import Message, Reply, Request, ToolCallPart

LONG = Reply(message=Message.assistant(" ".join(f"word{n}" for n in range(400))))
CALLS = Reply(message=Message(role="assistant", parts=(
    Message.assistant("Looking both cities up. " * 30).parts[0],
    ToolCallPart(id="c0", name="weather", arguments={"city": "Paris"}),
    ToolCallPart(id="c1", name="weather", arguments={"city": "Rome"}))), stop="tool_calls")
ANSWER = Reply(message=Message.assistant("Paris 18°C, Rome 24°C."))


def _model(emu: Emulator) -> Any:
    return make_model(f"{WIRE}:gemini-3-flash@{emu.base_url}", env={},
                      retry=RetryPolicy(base=0.001))


async def _streamed(emu: Emulator) -> tuple[list[Event], list[Event]]:
    """The events of one streamed request, and what was emitted meanwhile."""
    heard: list[Event] = []
    model = _model(emu)
    with listen(heard.append):
        events = [e async for e in model.stream(Request(model="m", messages=(
            Message.user("Count."),)))]
    await model.aclose()
    return events, heard


async def test_a_broken_stream_is_taken_up_where_it_broke_and_nothing_repeats() -> None:
    async with Emulator([Fault("drop_mid_stream", reply=LONG)]) as emu:
        events, heard = await _streamed(emu)
        assert len(emu.received) == 1  # the request was not sent again
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == LONG.text
    end = events[-1]
    assert isinstance(end, StreamEnd) and end.reply.text == LONG.text
    assert [e for e in heard if isinstance(e, RetryEvent)] == []


async def test_a_run_whose_streams_break_gets_its_parallel_calls_and_answer() -> None:
    tool = Tool(name="weather", description="The weather in a city.",
                input_schema={"type": "object", "properties": {"city": {"type": "string"}},
                              "required": ["city"]}, fn=lambda city: f"{city}: sunny")
    script = [Fault("drop_mid_stream", reply=CALLS), Fault("drop_mid_stream", reply=ANSWER)]
    async with Emulator(script) as emu:
        model = _model(emu)
        seen: list[Event] = []
        with listen(seen.append):
            result = await Agent(model=model, tools=[tool], stream=True).arun(
                "Weather in Paris and Rome?")
        await model.aclose()
        emu.assert_done()
        assert len(emu.received) == 2
    assert result.stop is RunStop.ANSWERED and result.answer == ANSWER.text
    calls = result.messages[1].tool_calls
    assert [c.arguments for c in calls] == [{"city": "Paris"}, {"city": "Rome"}]
    assert result.messages[1].text == CALLS.text
    assert [e for e in seen if isinstance(e, RetryEvent)] == []


async def test_a_stream_that_cannot_be_taken_up_is_sent_again_whole() -> None:
    """A stream the server does not keep (raw bytes, cut off) gets a 404 when asked for
    again; the break then stands and the whole request is retried."""
    chunks = get_codec(WIRE).encode_stream(LONG, request=Request(model="m"))
    script = [Raw(chunks=chunks[:len(chunks) // 2], drop=True), LONG]
    async with Emulator(script) as emu:
        events, heard = await _streamed(emu)
        assert len(emu.received) == 2
    assert [type(e.error).__name__ for e in heard if isinstance(e, RetryEvent)] == [
        "StreamError"]
    end = events[-1]
    assert isinstance(end, StreamEnd) and end.reply.text == LONG.text


def _events(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(block.split(b"data: ", 1)[1]) for block in body.split(b"\n\n")
            if block.strip()]


def _ids(body: bytes) -> list[str]:
    return [event["event_id"] for event in _events(body)]


def test_the_emulator_serves_a_kept_stream_again_after_an_event() -> None:
    body = {"model": "m", "input": "hi", "store": False, "stream": True}
    with Emulator([LONG]) as emu:
        first = httpx2.post(emu.base_url + "/v1beta/interactions", json=body)
        ids = _ids(first.content)
        iid = _events(first.content)[0]["interaction"]["id"]
        url = f"{emu.base_url}/v1beta/interactions/{iid}"
        again = httpx2.get(url, params={"stream": "true", "last_event_id": ids[4]})
        whole = httpx2.get(url)
        unknown = httpx2.get(url + "x", params={"stream": "true"})
        wrong = httpx2.get(url, params={"stream": "true", "last_event_id": "evt_none"})
    assert again.status_code == 200 and _ids(again.content) == ids[5:]
    assert whole.json()["id"] == iid and whole.json()["status"] == "completed"
    assert unknown.status_code == 404 and iid + "x" in unknown.json()["error"]["message"]
    assert wrong.status_code == 400 and "evt_none" in wrong.json()["error"]["message"]


def test_the_request_that_takes_a_stream_up_again_names_the_interaction_and_event() -> None:
    sent = WireRequest(url="https://h.example/v1beta/interactions?alt=sse", body={"a": 1},
                       headers={"x-goog-api-key": "k", "content-type": "application/json"},
                       stream=True)
    again = resume_request(sent, "v1_a/b", "evt_7")
    assert again.method == "GET" and again.content == b"" and again.stream
    assert again.url == ("https://h.example/v1beta/interactions/v1_a%2Fb"
                         "?alt=sse&stream=true&last_event_id=evt_7")
    assert again.headers == {"x-goog-api-key": "k"}


@pytest.mark.parametrize("cut", [1, 2, 3])
async def test_a_break_inside_an_event_is_taken_up_without_its_half(cut: int) -> None:
    """The connection breaks part of the way through an event: the decoder forgets its half
    and the stream taken up again sends it whole."""
    chunks = get_codec(WIRE).encode_stream(LONG, request=Request(model="m"))
    data = b"".join(chunks[:6])
    half = data + chunks[6][:len(chunks[6]) * cut // 4]
    async with Emulator([Raw(chunks=[half], drop=True)]) as emu:
        model = _model(emu)
        emu.streams.keep(WIRE, LONG, Request(model="m"))  # the server finished the reply
        events = [e async for e in model.stream(Request(model="m", messages=(
            Message.user("Count."),)))]
        await model.aclose()
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == LONG.text


def test_through_the_proxy_a_broken_interactions_upstream_goes_on_without_a_gap() -> None:
    """A Chat Completions client of the proxy, an Interactions upstream whose stream breaks:
    the client's stream is the whole reply, once, and ends as it should."""
    pytest.importorskip("uvicorn")
    from proxy_harness import running_proxy

    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "Count."}]}
    with Emulator([Fault("drop_mid_stream", reply=LONG)]) as emu, \
            running_proxy(f"{WIRE}:gemini-3-flash@{emu.base_url}") as url:
        reply = httpx2.post(url + "/v1/chat/completions", json=body, timeout=60)
        assert len(emu.received) == 1
    assert reply.status_code == 200
    whole = list(get_codec("openai-chat").decode_stream(
        [reply.content], request=Request(model="m")))[-1]
    assert isinstance(whole, StreamEnd) and whole.reply.text == LONG.text
    assert reply.content.rstrip().endswith(b"data: [DONE]")


def test_resuming_is_an_ability_a_record_declares() -> None:
    """The records say which wires' streams are taken up again, and the codec hands out a
    decoder that says where only for those; every other wire's decoder is given none."""
    from toolwire.codecs import WIRES
    from toolwire.codecs.registry import get_wire

    declared = {wire for wire in WIRES if get_wire(wire).resumable}
    assert declared == {WIRE}
    for wire in WIRES:
        codec = get_codec(wire)
        decoder = codec.stream_decoder()
        resumable = codec.resumable(decoder)
        assert (resumable is not None) == (wire in declared)
        if resumable is not None:
            assert resumable.resume_point is None  # nothing read yet
            resumable.drop_partial()


def test_per_model_fixes_are_declared_by_the_record() -> None:
    """A codec module's per-model fixes (``FIT``) are applied when its record says so, and
    every record that says so names a module that has them."""
    import importlib

    from toolwire.codecs import WIRES
    from toolwire.codecs.registry import get_wire

    for wire in WIRES:
        record = get_wire(wire)
        assert hasattr(importlib.import_module(record.module), "FIT") == record.per_model, wire
