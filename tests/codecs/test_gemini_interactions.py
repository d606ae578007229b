"""The gemini-interactions codec: bodies checked against google-genai's Interactions types,
conversions to and from every other wire checked against both SDKs' types, full agent runs
against the emulator (parallel calls and thoughts, whole and streamed), the conversation the
server keeps (``store``, ``previous_interaction_id``), resumable streams and errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sdk_types import assert_interactions_model, assert_interactions_valid, assert_wire_valid
from toolwire import Agent, Image, RunStop, check_transcript
from toolwire.codecs import WIRES, get_codec
from toolwire.codecs.gemini_interactions.stream import StreamDecoder
from toolwire.codecs.registry import get_wire
from toolwire.conversion import convert
from toolwire.emulator import Emulator
from toolwire.errors import RateLimitError, StreamError
from toolwire.events import ReasoningDelta, StreamEnd, TextDelta, ToolCallFinished
from toolwire.http.client import RetryPolicy
from toolwire.http.client import model as make_model
from toolwire.schema.tool import Tool
from toolwire.transcript import (
    Message,
    ReasoningPart,
    Reply,
    Request,
    TextPart,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
    ToolSpec,
    Usage,
)

WIRE = "gemini-interactions"
CODEC = get_codec(WIRE)
PNG = (b"\x89PNG\r\n\x1a\n" + (13).to_bytes(4, "big") + b"IHDR" + (2).to_bytes(4, "big")
       + (2).to_bytes(4, "big") + b"\x08\x02\x00\x00\x00")
THOUGHT = {"type": "thought", "signature": "Q2lRQjBlMktiU2lnbmF0dXJl",
           "summary": [{"type": "text", "text": "Both cities at once."}]}
WEATHER = ToolSpec(name="get_weather", description="Current weather for a city.",
                   input_schema={"type": "object", "properties": {"city": {"type": "string"}},
                                 "required": ["city"]})


def as_json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def thinking_calls(*cities: str, tag: str = "c") -> Reply:
    """A reply with a thought (its signature) and one call per city, made in parallel."""
    return Reply(message=Message(role="assistant", parts=(
        ReasoningPart(text="Both cities at once.", provider_data={WIRE: THOUGHT}),
        *(ToolCallPart(id=f"{tag}{n}", name="get_weather", arguments={"city": c})
          for n, c in enumerate(cities)))),
        stop="tool_calls", usage=Usage(input_tokens=40, output_tokens=30, reasoning_tokens=12))


def history(*, media: bool = True) -> Request:
    """A task with an image, a thought and two calls, their results (one failed, one with an
    image), the user's next words."""
    image = (Image.from_bytes(PNG),) if media else ()
    return Request(
        model="gemini-3-flash", system="Be brief.", tools=(WEATHER,), max_tokens=300,
        temperature=0.5, tool_choice=ToolChoice(mode="required"),
        messages=(
            Message(role="user", parts=(TextPart(text="Paris and Rome?"), *image)),
            thinking_calls("Paris", "Rome").message,
            Message(role="tool", parts=(
                ToolResultPart(call_id="c0", name="get_weather", content=(
                    TextPart(text="18°C, the map:"), *image)),
                ToolResultPart(call_id="c1", name="get_weather", content="timeout",
                               is_error=True))),
            Message.user("And tomorrow?"),
        ))


# --------------------------------------------------------------------------- the SDK's types


@pytest.mark.parametrize("stream", [False, True])
def test_a_request_is_what_the_sdks_interactions_types_take(stream: bool) -> None:
    request = history()
    body = as_json(CODEC.encode_request(Request(**{**_fields(request), "stream": stream})))
    assert_interactions_valid(body)
    assert body["store"] is False  # always sent; false unless asked
    kinds = [s["type"] for s in body["input"]]
    assert kinds == ["user_input", "thought", "function_call", "function_call",
                     "function_result", "function_result", "user_input"]
    assert body["input"][1] == THOUGHT  # the signature goes back unchanged
    assert body["generation_config"] == {"max_output_tokens": 300, "temperature": 0.5,
                                         "tool_choice": "any"}
    assert CODEC.decode_request(body) == Request(**{**_fields(request), "stream": stream})


def _fields(request: Request) -> dict[str, Any]:
    return {f: getattr(request, f) for f in request.__struct_fields__}


def test_a_wrong_field_is_caught_by_the_sdk_check() -> None:
    body = as_json(CODEC.encode_request(history()))
    body["input"][2]["argument"] = {}
    with pytest.raises(AssertionError):
        assert_interactions_valid(body)
    body = as_json(CODEC.encode_request(history()))
    body["input"][2]["type"] = "function_cal"
    with pytest.raises(AssertionError):
        assert_interactions_valid(body)


def test_a_reply_and_each_stream_event_are_what_the_sdk_reads() -> None:
    reply = thinking_calls("Paris", "Rome")
    whole = as_json(CODEC.encode_response(reply, request=history()))
    assert_interactions_model("Interaction", whole)
    assert whole["status"] == "requires_action"
    assert whole["usage"]["total_thought_tokens"] == 12
    events = b"".join(CODEC.encode_stream(reply, request=history())).decode().split("\n\n")
    datas = [json.loads(e.split("data: ", 1)[1]) for e in events if "data: " in e]
    for data in datas:
        assert_interactions_model("InteractionSSEEvent", data)
    assert len({d["event_id"] for d in datas}) == len(datas)


OTHERS = [w for w in WIRES if w != WIRE]


def _read(wire: str, body: dict[str, Any]) -> Request:
    url = {"model": "m", "stream": False} if get_wire(wire).model_in_path else {}
    return get_codec(wire).decode_request(as_json(body), **url)


@pytest.mark.parametrize("other", OTHERS)
def test_conversion_from_every_wire_gives_a_body_the_sdk_takes(other: str) -> None:
    source = as_json(get_codec(other).encode_request(history()))
    conv = convert(source, other, WIRE)
    assert_interactions_valid(conv.body)
    assert [n.kind for n in conv.losses].count("reasoning_dropped") == 0  # none was there
    back = _read(WIRE, conv.body)
    assert [(c.id, c.arguments) for c in back.messages[1].tool_calls] == [
        (c.id, c.arguments) for c in _read(other, source).messages[1].tool_calls]


@pytest.mark.parametrize("other", OTHERS)
def test_conversion_to_every_wire_gives_a_body_its_sdk_takes_and_names_the_losses(
        other: str) -> None:
    # ollama's own types take an image as its Image object, not the base64 text it sends
    body = as_json(CODEC.encode_request(history(media=other != "ollama-chat")))
    conv = convert(body, WIRE, other)
    assert_wire_valid(other, conv.body, model="gemini-3-flash")
    assert "reasoning_dropped" in [n.kind for n in conv.losses]  # the thought stays here
    back = _read(other, conv.body)
    assert not [p for p in back.messages[1].parts if isinstance(p, ReasoningPart)]
    assert [r.call_id for r in back.messages[2].tool_results] == [
        c.id for c in back.messages[1].tool_calls]


def test_a_response_format_is_kept_here_and_named_as_lost_elsewhere() -> None:
    fmt = {"type": "text", "mime_type": "application/json", "schema": {"type": "object"}}
    body = {"model": "m", "input": "hi", "store": False, "response_format": fmt}
    assert convert(body, WIRE, WIRE).body["response_format"] == fmt
    conv = convert(body, WIRE, "gemini-generate")
    assert [(n.kind, n.subject) for n in conv.losses] == [("field_dropped", "response_format")]


# --------------------------------------------------------------------------- agent runs


def weather(city: str) -> str:
    if city == "Rome":
        raise RuntimeError("weather service timeout")
    return f"18°C in {city}"


TOOL = Tool(name="get_weather", description="Current weather for a city.",
            input_schema=dict(WEATHER.input_schema), fn=weather)
ANSWER = Reply(message=Message.assistant("Paris 18°C; Rome did not answer."),
               usage=Usage(input_tokens=90, output_tokens=10))


async def _run(script: list[Any], *, stream: bool, log: Path | None = None,
               options: dict[str, Any] | None = None) -> tuple[Any, Emulator]:
    async with Emulator(script) as emu:
        model = make_model(f"{WIRE}:gemini-3-flash@{emu.base_url}", env={},
                           retry=RetryPolicy(base=0.001))
        agent = Agent(model=model, tools=[TOOL], stream=stream,
                      provider_options={WIRE: options} if options else None)
        result = await agent.arun("Weather in Paris and Rome?", log=log)
        await model.aclose()
        emu.assert_done()
    return result, emu


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_full_run_with_parallel_calls_and_thoughts(stream: bool) -> None:
    result, emu = await _run([thinking_calls("Paris", "Rome"), ANSWER], stream=stream)
    assert result.stop is RunStop.ANSWERED and result.turns == 2
    assert result.answer == "Paris 18°C; Rome did not answer."
    assert check_transcript(result.messages, WIRE) == []
    thought = result.messages[1].parts[0]
    assert isinstance(thought, ReasoningPart) and thought.provider_data == {WIRE: THOUGHT}
    results = result.messages[2].tool_results
    assert [(r.call_id, r.is_error) for r in results] == [("c0", False), ("c1", True)]
    second = emu.received[1].body
    assert_interactions_valid(second)
    assert second["input"][1] == THOUGHT
    steps = [(s["type"], s.get("id") or s.get("call_id")) for s in second["input"][1:]]
    assert steps == [("thought", None), ("function_call", "c0"), ("function_call", "c1"),
                     ("function_result", "c0"), ("function_result", "c1")]
    assert result.usage.reasoning_tokens == 12


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_stored_conversation_continues_from_its_interaction(
        stream: bool, tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    result, emu = await _run([thinking_calls("Paris", "Rome"), ANSWER], stream=stream,
                             log=log, options={"store": True})
    assert result.stop is RunStop.ANSWERED
    first, second = (r.body for r in emu.received)
    assert first["store"] is True and "previous_interaction_id" not in first
    stored_id = second["previous_interaction_id"]
    assert stored_id in emu.kept and stored_id.startswith("v1_")
    # only what came after the stored interaction is sent: the two results
    assert [s["type"] for s in second["input"]] == ["function_result", "function_result"]
    assert_interactions_valid(second)
    # toolwire still holds the whole transcript, and the run log names the interaction
    assert [m.role for m in result.messages] == ["user", "assistant", "tool", "assistant"]
    replies = [json.loads(line) for line in log.read_text().splitlines()
               if json.loads(line)["event"] == "reply"]
    assert replies[0]["reply"]["id"] == stored_id
    assert stored_id in json.dumps(replies[0]["reply"]["message"])


async def test_without_store_the_whole_transcript_goes_every_time() -> None:
    _, emu = await _run([thinking_calls("Paris", "Rome"), ANSWER], stream=False)
    first, second = (r.body for r in emu.received)
    assert first["store"] is False and second["store"] is False
    assert "previous_interaction_id" not in second and len(second["input"]) == 6
    assert emu.kept == {}


async def test_store_with_continue_off_sends_the_whole_transcript() -> None:
    _, emu = await _run([thinking_calls("Paris", "Rome"), ANSWER], stream=False,
                        options={"store": True, "_continue": False})
    second = emu.received[1].body
    assert "previous_interaction_id" not in second and len(second["input"]) == 6
    assert "_continue" not in json.dumps(second)


def test_an_unknown_stored_interaction_is_refused_by_the_emulator() -> None:
    import httpx2

    body = {"model": "m", "input": "hi", "store": False, "previous_interaction_id": "v1_gone"}
    with Emulator([ANSWER]) as emu:
        resp = httpx2.post(emu.base_url + "/v1beta/interactions", json=body)
    assert resp.status_code == 404 and "v1_gone" in resp.json()["error"]["message"]


# --------------------------------------------------------------------------- streams


def _events(reply: Reply) -> list[bytes]:
    return CODEC.encode_stream(reply, request=history())


def test_a_stream_taken_up_again_repeats_nothing_and_says_where_it_broke() -> None:
    chunks = _events(thinking_calls("Paris", "Rome"))
    decoder = StreamDecoder(request=history())
    head = [e for c in chunks[:6] for e in decoder.feed(c)]
    assert decoder.resume_point is not None
    iid, last = decoder.resume_point
    assert last == "evt_6" and iid.startswith("v1_")
    # the server sends the stream again from its start; what was seen is not repeated
    tail = [e for c in chunks for e in decoder.feed(c)]
    reply = decoder.finish()
    deltas = [e for e in head + tail if isinstance(e, ReasoningDelta)]
    assert "".join(d.text for d in deltas) == "Both cities at once."
    assert len([e for e in head + tail if isinstance(e, ToolCallFinished)]) == 2
    assert reply.message.parts[0] == ReasoningPart(text="Both cities at once.",
                                                   provider_data={WIRE: THOUGHT})


def test_a_stream_without_its_completion_is_a_stream_error() -> None:
    chunks = CODEC.encode_stream(Reply(message=Message.assistant("cut short")))
    decoder = CODEC.stream_decoder()
    events = [e for c in chunks[:-1] for e in decoder.feed(c)]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "cut short"
    with pytest.raises(StreamError, match="before the interaction was complete"):
        list(CODEC.decode_stream(chunks[:-1]))


def test_an_error_event_is_its_typed_error() -> None:
    event = {"event_type": "error", "event_id": "evt_1",
             "error": {"code": "resource_exhausted", "message": "rate limit: slow down"}}
    with pytest.raises(RateLimitError, match="slow down"):
        list(CODEC.decode_stream([f"data: {json.dumps(event)}\n\n".encode()]))


def test_a_server_tool_step_rides_along_whole_and_streamed() -> None:
    search = {"type": "google_search_call", "id": "gs_1",
              "arguments": {"queries": ["weather Paris"]}}
    body = {"id": "v1_x", "status": "completed", "steps": [
        search, {"type": "model_output", "content": [{"type": "text", "text": "Sunny."}]}]}
    reply = CODEC.decode_response(body)
    assert reply.text == "Sunny." and reply.message.parts[0].payload == search  # type: ignore[union-attr]
    again = as_json(CODEC.encode_response(reply))
    assert again["steps"][0] == search
    assert_interactions_model("Interaction", again)
    end = list(CODEC.decode_stream(CODEC.encode_stream(reply)))[-1]
    assert isinstance(end, StreamEnd) and end.reply.message == reply.message


def test_a_reply_with_the_turns_input_in_its_steps_reads_only_the_output() -> None:
    body = {"id": "v1_y", "status": "completed", "steps": [
        {"type": "user_input", "content": [{"type": "text", "text": "hi"}]},
        {"type": "model_output", "content": [{"type": "text", "text": "Hello."}]}]}
    assert CODEC.decode_response(body).message == Message.assistant("Hello.")


def test_the_status_decides_the_stop_unless_calls_ask_for_tools() -> None:
    def stop(status: str, steps: list[Any]) -> str:
        return CODEC.decode_response({"id": "v", "status": status, "steps": steps}).stop

    text = [{"type": "model_output", "content": [{"type": "text", "text": "x"}]}]
    call = [{"type": "function_call", "id": "c", "name": "f", "arguments": {}}]
    assert stop("completed", text) == "end_turn"
    assert stop("incomplete", text) == "max_tokens"
    assert stop("failed", []) == "error"
    assert stop("completed", call) == "tool_calls"
    assert stop("requires_action", text) == "end_turn"  # no call: nothing to run


@pytest.mark.parametrize("level", ["low", "medium", "high", "off"])
def test_the_reasoning_setting_is_a_thinking_level(level: str) -> None:
    request = Request(model="m", messages=(Message.user("think"),), reasoning=level,
                      temperature=0.3)
    encoded = CODEC.encode(request)
    assert_interactions_valid(encoded.body)
    config = encoded.body["generation_config"]
    assert config["thinking_level"] == ("minimal" if level == "off" else level)
    assert ("temperature" in config) == (level == "off")  # reasoning models refuse one
    kinds = [n.kind for n in encoded.notes]
    assert ("reasoning_as_minimal" in kinds) == (level == "off")


def test_a_file_only_another_provider_holds_is_left_out_with_a_note() -> None:
    elsewhere = Image.from_file_id("openai-responses", "file-abc", "image/png")
    request = Request(model="m", messages=(Message(role="user", parts=(
        TextPart(text="look"), elsewhere)),))
    encoded = CODEC.encode(request)
    assert encoded.body["input"][0]["content"] == [{"type": "text", "text": "look"}]
    assert [(n.kind, n.subject) for n in encoded.notes] == [
        ("media_dropped", "messages[0].parts[1]")]
