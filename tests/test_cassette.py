"""Record and replay over real loopback HTTP: cassettes written from the emulator, played back.

`RecordTransport` wraps a real `HttpTransport` talking to the provider emulator; the cassette it
writes is then replayed by `ReplayTransport` with no server at all. Whole agent runs are recorded
and replayed too: the model's side comes from the cassette, the tools run for real.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from toolwire.agent.loop import Agent
from toolwire.codecs import get_codec
from toolwire.codecs.registry import get_wire, wire_at
from toolwire.emulator import Emulator, Fault
from toolwire.errors import RateLimitError
from toolwire.events import StreamEnd, listen
from toolwire.http.cassette import (
    CassetteError,
    CassetteMismatch,
    RecordTransport,
    ReplayTransport,
    load_cassette,
)
from toolwire.http.client import HttpModel, RetryPolicy
from toolwire.http.endpoints import parse_model_id
from toolwire.http.providers import provider_for
from toolwire.http.transport import HttpTransport, Transport, WireRequest
from toolwire.schema.tool import tool
from toolwire.transcript import Message, Reply, Request, TextPart, ToolCallPart, Usage
from wire_data import looped

PROVIDER = {wire: provider_for(wire) for wire in looped()}
SECRET = "sk-ant-secret-123"

CALLS = Reply(
    message=Message(role="assistant", parts=(
        TextPart(text="Checking both — Zürich first."),
        ToolCallPart(id="call_z1", name="get_weather", arguments={"city": "Zürich"}),
        ToolCallPart(id="call_r2", name="get_weather", arguments={"city": "Rome"}),
    )),
    stop="tool_calls",
    usage=Usage(input_tokens=30, output_tokens=12),
)
ANSWER = Reply(message=Message.assistant("Zürich 18°C, Rome 24°C."), stop="end_turn",
               usage=Usage(input_tokens=60, output_tokens=8))


def make_model(wire: str, base_url: str, transport: Transport) -> HttpModel:
    endpoint = parse_model_id(f"{PROVIDER[wire]}:test-model@{base_url}", env={})
    return HttpModel(endpoint, transport=transport, retry=RetryPolicy(base=0.001, max_wait=0.01),
                     seed=1)


def ask(text: str = "Weather in Zürich and Rome?") -> Request:
    return Request(model="x", messages=(Message.user(text),), max_tokens=128)


def shape(reply: Reply) -> tuple[Any, ...]:
    return (reply.text, [(c.id, c.name, c.arguments) for c in reply.tool_calls], reply.stop,
            reply.usage)


async def record_two(wire: str, path: Path, *, stream: bool) -> list[Reply]:
    """Two requests through a recording transport: replies as the client decoded them."""
    replies = []
    async with Emulator([CALLS, ANSWER]) as emu:
        m = make_model(wire, emu.base_url, RecordTransport(path, HttpTransport()))
        for text in ("first question", "second question"):
            if stream:
                events = [e async for e in m.stream(ask(text))]
                end = events[-1]
                assert isinstance(end, StreamEnd)
                replies.append(end.reply)
            else:
                replies.append(await m.complete(ask(text)))
        await m.aclose()
        emu.assert_done()
    return replies


async def replay_two(wire: str, path: Path, *, stream: bool) -> list[Reply]:
    replies = []
    m = make_model(wire, "http://127.0.0.1:9", ReplayTransport(path))
    for text in ("first question", "second question"):
        if stream:
            events = [e async for e in m.stream(ask(text))]
            end = events[-1]
            assert isinstance(end, StreamEnd)
            replies.append(end.reply)
        else:
            replies.append(await m.complete(ask(text)))
    await m.aclose()
    return replies


@pytest.mark.parametrize("wire", looped())
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_recorded_cassette_replays_the_same_replies(
    wire: str, stream: bool, tmp_path: Path
) -> None:
    path = tmp_path / "run.json"
    recorded = await record_two(wire, path, stream=stream)
    assert [r.text for r in recorded] == [CALLS.text, ANSWER.text]
    assert [[(c.name, c.arguments) for c in r.tool_calls] for r in recorded] == [
        [("get_weather", {"city": "Zürich"}), ("get_weather", {"city": "Rome"})], []]

    replayed = await replay_two(wire, path, stream=stream)
    assert [shape(r) for r in replayed] == [shape(r) for r in recorded]


@pytest.mark.parametrize("wire", looped())
async def test_the_cassette_holds_parsed_bodies_and_raw_stream_events(
    wire: str, tmp_path: Path
) -> None:
    whole, streamed = tmp_path / "whole.json", tmp_path / "streamed.json"
    await record_two(wire, whole, stream=False)
    await record_two(wire, streamed, stream=True)

    data = json.loads(whole.read_text(encoding="utf-8"))
    assert data["toolwire_cassette"] == 2
    first = data["interactions"][0]
    assert first["request"]["method"] == "POST"
    served = wire_at(first["request"]["path"])  # the path the wire's API serves
    assert served is not None and served.wire.name == wire
    assert isinstance(first["request"]["body"], dict)  # parsed, not a string
    assert first["response"]["status"] == 200
    assert isinstance(first["response"]["body"], dict)
    assert "Zürich" in json.dumps(first["response"]["body"], ensure_ascii=False)

    events = load_cassette(streamed)[0]["response"]["stream"]
    assert isinstance(events, list) and len(events) > 3
    framing = get_wire(wire).framing
    if framing == "ndjson":  # one JSON object per line
        assert all(json.loads(e) for e in events)
    elif framing == "eventstream":  # an AWS event stream: each message, its payload parsed
        assert all(e["headers"][":message-type"] == "event" and "json" in e for e in events)
    else:  # SSE: each entry one whole event, ending with its blank line
        assert all(e.endswith(("\n\n", "\r\n\r\n")) and "data:" in e for e in events)
    codec = get_codec(wire)
    replayed = await ReplayTransport(streamed).send(WireRequest(
        url="http://x" + load_cassette(streamed)[0]["request"]["path"],
        body=load_cassette(streamed)[0]["request"]["body"], stream=True))
    rebuilt = list(codec.decode_stream([await replayed.read()]))[-1]
    assert isinstance(rebuilt, StreamEnd)
    assert rebuilt.reply.text == CALLS.text
    assert [c.arguments for c in rebuilt.reply.tool_calls] == [{"city": "Zürich"},
                                                               {"city": "Rome"}]


async def test_a_changed_request_fails_with_a_diff_naming_the_change(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    await record_two("openai-chat", path, stream=False)
    m = make_model("openai-chat", "http://127.0.0.1:9", ReplayTransport(path))
    await m.complete(ask("first question"))
    with pytest.raises(CassetteMismatch) as caught:
        await m.complete(ask("a different second question"))
    text = str(caught.value)
    assert "request #2" in text and str(path) in text
    assert re.search(r'^-\s+"content": "second question",?$', text, re.M)
    assert re.search(r'^\+\s+"content": "a different second question",?$', text, re.M)
    assert "recorded request #2" in text and "this run" in text


async def test_a_changed_setting_is_named_in_the_diff(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    await record_two("anthropic-messages", path, stream=False)
    m = make_model("anthropic-messages", "http://127.0.0.1:9", ReplayTransport(path))
    with pytest.raises(CassetteMismatch) as caught:
        await m.complete(Request(model="x", messages=(Message.user("first question"),),
                                 max_tokens=5))
    assert re.search(r'^-\s+"max_tokens": 128,?$', str(caught.value), re.M)
    assert re.search(r'^\+\s+"max_tokens": 5,?$', str(caught.value), re.M)


async def test_unplayed_interactions_are_an_error_at_aclose(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    await record_two("ollama-chat", path, stream=True)
    replay = ReplayTransport(path)
    m = make_model("ollama-chat", "http://127.0.0.1:9", replay)
    events = [e async for e in m.stream(ask("first question"))]
    assert isinstance(events[-1], StreamEnd)
    assert replay.unplayed == 1
    with pytest.raises(CassetteError, match="1 unplayed interaction"):
        await m.aclose()
    lenient = ReplayTransport(path, strict=False)
    await lenient.aclose()  # not strict: leaving some unplayed is allowed


async def test_a_request_past_the_end_of_the_cassette_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    await record_two("openai-responses", path, stream=False)
    m = make_model("openai-responses", "http://127.0.0.1:9", ReplayTransport(path))
    await m.complete(ask("first question"))
    await m.complete(ask("second question"))
    with pytest.raises(CassetteMismatch, match=r"request #3 .* never recorded"):
        await m.complete(ask("third question"))


def test_a_missing_or_foreign_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="does not exist"):
        ReplayTransport(tmp_path / "nope.json")
    other = tmp_path / "other.json"
    other.write_text('{"interactions": []}', encoding="utf-8")
    with pytest.raises(CassetteError, match="not a toolwire cassette"):
        ReplayTransport(other)
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    with pytest.raises(CassetteError, match="not valid JSON"):
        ReplayTransport(broken)


async def test_errors_are_recorded_and_replayed_with_their_retry(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    async with Emulator([Fault(kind="rate_limit", retry_after=0.01), ANSWER]) as emu:
        m = make_model("anthropic-messages", emu.base_url, RecordTransport(path))
        recorded = await m.complete(ask())
        await m.aclose()
    first = load_cassette(path)[0]["response"]
    assert first["status"] == 429 and first["headers"]["retry-after"] == "0.01"
    retried: list[Any] = []
    m = make_model("anthropic-messages", "http://127.0.0.1:9", ReplayTransport(path))
    with listen(retried.append):
        replayed = await m.complete(ask())
    await m.aclose()
    assert shape(replayed) == shape(recorded)
    assert [type(e.error) for e in retried] == [RateLimitError]


# --------------------------------------------------------------------------- secrets


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_an_api_key_never_reaches_the_cassette(
    stream: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    path = tmp_path / "run.json"
    async with Emulator([ANSWER]) as emu:
        endpoint = parse_model_id("anthropic:m@" + emu.base_url,
                                  env={"ANTHROPIC_API_KEY": SECRET})
        assert endpoint.key == SECRET  # a base URL does not drop the key
        m = HttpModel(endpoint, transport=RecordTransport(path, HttpTransport()))
        if stream:
            _ = [e async for e in m.stream(ask())]
        else:
            await m.complete(ask())
        await m.aclose()
    assert emu.received[0].headers["x-api-key"] == SECRET  # it was sent...
    raw = path.read_bytes()
    assert SECRET.encode() not in raw  # ...and never written
    headers = load_cassette(path)[0]["request"]["headers"]
    assert "x-api-key" not in headers and "authorization" not in headers
    assert headers["anthropic-version"] == "2023-06-01"


async def test_a_key_found_in_a_body_is_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-another-secret")
    path = tmp_path / "run.json"
    async with Emulator([ANSWER]) as emu:
        m = make_model("openai-chat", emu.base_url,
                       RecordTransport(path, secrets=["extra-secret-value"]))
        await m.complete(ask("my keys are sk-proj-another-secret and extra-secret-value"))
        await m.aclose()
    text = path.read_text(encoding="utf-8")
    assert "sk-proj-another-secret" not in text and "extra-secret-value" not in text
    assert "my keys are [redacted: OPENAI_API_KEY] and [redacted: secret]" in text
    # The same run replays: its request is redacted the same way before the comparison.
    replay = ReplayTransport(path, secrets=["extra-secret-value"])
    m = make_model("openai-chat", "http://127.0.0.1:9", replay)
    reply = await m.complete(ask("my keys are sk-proj-another-secret and extra-secret-value"))
    await m.aclose()
    assert reply.text == ANSWER.text


# --------------------------------------------------------------------------- agent runs


def weather_tool(calls: list[str]) -> Any:
    @tool
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        calls.append(city)
        return {"Zürich": "18°C", "Rome": "24°C"}[city]

    return get_weather


async def run_agent(model: HttpModel, calls: list[str], *, stream: bool) -> tuple[Message, ...]:
    agent = Agent(model=model, tools=[weather_tool(calls)], system="Be brief.",
                  max_tokens=256, stream=stream)
    result = await agent.arun("Weather in Zürich and Rome?")
    await model.aclose()
    assert result.ok, result
    return result.messages


@pytest.mark.parametrize("wire", looped())
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_an_agent_run_replays_to_the_same_transcript(
    wire: str, stream: bool, tmp_path: Path
) -> None:
    path = tmp_path / "agent.json"
    recorded_calls: list[str] = []
    async with Emulator([CALLS, ANSWER]) as emu:
        recorded = await run_agent(make_model(wire, emu.base_url, RecordTransport(path)),
                                   recorded_calls, stream=stream)
        emu.assert_done()
    assert len(load_cassette(path)) == 2

    replayed_calls: list[str] = []
    replayed = await run_agent(make_model(wire, "http://127.0.0.1:9", ReplayTransport(path)),
                               replayed_calls, stream=stream)
    assert replayed == recorded
    assert recorded_calls == replayed_calls == ["Zürich", "Rome"]  # the tools ran both times
    assert replayed[-1].text == ANSWER.text


async def test_a_tool_that_now_answers_differently_breaks_the_replay(tmp_path: Path) -> None:
    path = tmp_path / "agent.json"
    async with Emulator([CALLS, ANSWER]) as emu:
        await run_agent(make_model("openai-chat", emu.base_url, RecordTransport(path)), [],
                        stream=False)

    @tool
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return "snow"

    agent = Agent(model=make_model("openai-chat", "http://127.0.0.1:9", ReplayTransport(path)),
                  tools=[get_weather], system="Be brief.", max_tokens=256)
    with pytest.raises(CassetteMismatch) as caught:
        await agent.arun("Weather in Zürich and Rome?")
    diff = str(caught.value)
    assert re.search(r'^-\s+"content": "18°C",?$', diff, re.M)
    assert re.search(r'^\+\s+"content": "snow",?$', diff, re.M)
