"""Media over loopback HTTP: a tool returning an image runs through the loop on every wire, and
the emulator checks media the way each provider does and scripts replies that react to them."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from hypothesis import given, settings

from strategies import json_values
from toolwire import Agent, Image, Message, Reply, ToolCallPart
from toolwire.codecs import get_codec
from toolwire.codecs.registry import get_wire
from toolwire.emulator import Emulator
from toolwire.events import WireNotes
from toolwire.http.client import RetryPolicy
from toolwire.http.client import model as make_model
from toolwire.http.providers import provider_for
from toolwire.schema.tool import Tool
from wire_data import data, looped

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(48))
B64 = base64.b64encode(PNG).decode()


def screenshot() -> Any:
    """Take a screenshot of the screen."""
    return ["the screen:", Image.from_bytes(PNG)]


SHOT = Tool.from_function(screenshot)


def http_model(wire: str, model: str, emu: Emulator) -> Any:
    return make_model(f"{provider_for(wire)}:{model}@{emu.base_url}", env={},
                      retry=RetryPolicy(base=0.001, max_wait=0.01), seed=7)


def where_the_image_went(wire: str, body: dict[str, Any]) -> Any:
    """The place in the second request's body where each wire carries the tool's image."""
    return data(wire).result_image(body)


MOVED = {f"{w}/{data(w).MEDIA_MODEL}" for w in looped() if data(w).MEDIA_MOVED}
"""Where the image leaves its result, with a media_moved note."""

CASES = [(w, data(w).MEDIA_MODEL) for w in looped()]
CASES.append(("gemini-generate", "gemini-3-pro-preview"))


@pytest.mark.parametrize(("wire", "model"), CASES, ids=[f"{w}/{m}" for w, m in CASES])
async def test_a_tool_returning_an_image_reaches_the_next_request_on_every_wire(
        wire: str, model: str) -> None:
    script = [Reply(message=Message(role="assistant", parts=(
                  ToolCallPart(id="call_s1", name="screenshot", arguments={}),)),
                  stop="tool_calls"),
              Reply(message=Message.assistant("A blank screen."))]
    events: list[Any] = []
    async with Emulator(script) as emu:
        http = http_model(wire, model, emu)
        agent = Agent(model=http, tools=[SHOT], on_event=events.append)
        result = await agent.arun("What is on the screen?")
        await http.aclose()
        emu.assert_done()
    assert result.ok and result.answer == "A blank screen."
    assert [m.data for m in result.messages[2].tool_results[0].media] == [PNG]
    second = emu.received[1].body
    assert where_the_image_went(wire, second) == B64
    moved = [n for e in events if isinstance(e, WireNotes) for n in e.notes
             if "media_moved" in n]
    assert bool(moved) == (wire in MOVED or f"{wire}/{model}" in MOVED)
    # The emulator read the body as the provider would: the image is back in its result.
    codec = get_codec(wire)
    url = {"model": model, "stream": False} if get_wire(wire).model_in_path else {}
    seen = codec.decode_request(second, **url)
    assert [m.data for m in seen.messages[2].tool_results[0].media] == [PNG]


# --------------------------------------------------------------------------- the emulator's checks


def png_b64(side: int) -> str:
    """A PNG header saying ``side`` x ``side`` pixels, as base64."""
    head = (b"\x89PNG\r\n\x1a\n" + (13).to_bytes(4, "big") + b"IHDR" + side.to_bytes(4, "big")
            + side.to_bytes(4, "big") + b"\x08\x02\x00\x00\x00")
    return base64.b64encode(head).decode()


def anthropic_images(n: int, side: int, media_type: str = "image/png") -> dict[str, Any]:
    image = {"type": "image", "source": {"type": "base64", "media_type": media_type,
                                         "data": png_b64(side)}}
    return {"model": "m", "max_tokens": 16, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "look"}] + [image] * n}]}


def chat_tool_image() -> dict[str, Any]:
    return {"model": "m", "messages": [
        {"role": "user", "content": "shoot"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "shot",
                                                              "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": [
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{B64}"}}]}]}


def gemini_result_parts() -> dict[str, Any]:
    return {"contents": [
        {"role": "user", "parts": [{"text": "shoot"}]},
        {"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "shot", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {
            "id": "c1", "name": "shot", "response": {"output": ""},
            "parts": [{"inlineData": {"mimeType": "image/png", "data": B64}}]}}]}]}


def converse(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": list(blocks)}]}


DOC = {"document": {"format": "pdf", "name": "report",
                    "source": {"bytes": base64.b64encode(b"%PDF-1.7").decode()}}}
CONVERSE_IMAGE = {"image": {"format": "png", "source": {"bytes": B64}}}

REFUSED = [  # (wire, model in the URL, body, what the provider says)
    ("anthropic-messages", "m", anthropic_images(1, 9000),
     "messages.0.content.1.image.source.base64.data: At least one of the image dimensions "
     "exceed max allowed size: 8000 pixels"),
    ("anthropic-messages", "m", anthropic_images(21, 2500),
     "exceed max allowed size for many-image requests: 2000 pixels"),
    ("anthropic-messages", "m", anthropic_images(1, 64, "image/tiff"),
     "messages.0.content.1.image.source.base64.media_type: Input should be 'image/jpeg'"),
    ("openai-chat", "m", chat_tool_image(),
     "Invalid 'messages[2]'. Image URLs are only allowed for messages with role 'user', but "
     "this message with role 'tool' contains an image URL."),
    ("openai-responses", "m", {"model": "m", "input": [{"role": "user", "content": [
        {"type": "input_image", "detail": "auto", "image_url": "data:image/tiff;base64,AAAA"}]}]},
     "only image/png, image/jpeg, image/webp and image/gif are supported"),
    ("gemini-generate", "gemini-2.5-flash", gemini_result_parts(),
     "Unable to submit request because `function_response.parts` is not supported for this "
     "model."),
    ("bedrock-converse", "m", converse(DOC),
     "a message with a document must also contain a text block"),
    ("bedrock-converse", "m", converse({"text": "look"}, *[CONVERSE_IMAGE] * 21),
     "Member must contain at most 20 image blocks"),
]


@pytest.mark.parametrize(("wire", "model", "body", "said"), REFUSED,
                         ids=[f"{c[0]}-{n}" for n, c in enumerate(REFUSED)])
def test_the_emulator_refuses_media_as_the_provider_does(
        wire: str, model: str, body: dict[str, Any], said: str) -> None:
    import httpx2

    from toolwire.errors import InvalidRequestError

    path = get_wire(wire).path.replace("{model}", model)
    with Emulator([Reply(message=Message.assistant("unused"))]) as emu:
        resp = httpx2.post(emu.base_url + path, json=body)
        assert emu.unplayed  # refused before any reply was used
    assert resp.status_code == 400
    error = get_codec(wire).decode_error(400, resp.json(), dict(resp.headers))
    assert isinstance(error, InvalidRequestError)
    assert said in str(error)


def test_media_where_a_provider_takes_them_pass_the_emulator() -> None:
    """The same bodies, fixed the way each provider wants, are answered."""
    import httpx2

    fine = [("/v1/messages", anthropic_images(20, 2000)),
            ("/v1beta/models/gemini-3-pro-preview:generateContent", gemini_result_parts()),
            ("/model/m/converse", converse({"text": "look"}, DOC, *[CONVERSE_IMAGE] * 20)),
            ("/api/chat", {"model": "m", "stream": False, "messages": [
                {"role": "user", "content": "shoot"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"function": {"name": "shot", "arguments": {}}}]},
                {"role": "tool", "tool_name": "shot", "content": "the screen",
                 "images": [B64]}]})]
    with Emulator([Reply(message=Message.assistant("ok"))] * len(fine)) as emu:
        statuses = [httpx2.post(emu.base_url + path, json=body).status_code
                    for path, body in fine]
        emu.assert_done()
    assert statuses == [200] * len(fine)


# --------------------------------------------------------------------------- replies by media


@pytest.mark.parametrize("wire", looped())
async def test_a_scripted_reply_keyed_on_the_media_a_request_carries(wire: str) -> None:
    from toolwire.emulator import ByMedia, parse_item

    by_media = parse_item({"by_media": {
        "document": {"text": "a document"},
        "image": {"text": "I was sent {media}."},
        "none": {"text": "I see no media."}}})
    assert isinstance(by_media, ByMedia)
    script = [Reply(message=Message(role="assistant", parts=(
                  ToolCallPart(id="call_s1", name="screenshot", arguments={}),)),
                  stop="tool_calls"),
              by_media, by_media]
    model = "gemini-3-pro-preview" if wire == "gemini-generate" else "m"
    async with Emulator(script) as emu:
        http = http_model(wire, model, emu)
        agent = Agent(model=http, tools=[SHOT])
        shot = await agent.arun("What is on the screen?")
        plain = await agent.arun("Hello.")
        await http.aclose()
        emu.assert_done()
    assert shot.answer == f"I was sent image image/png ({len(PNG)} bytes)."
    assert plain.answer == "I see no media."


def test_a_by_media_item_without_a_fitting_key_answers_a_server_error() -> None:
    import httpx2

    from toolwire.emulator import ByMedia
    from toolwire.errors import TranscriptError

    with pytest.raises(TranscriptError, match="by_media keys must be among"):
        ByMedia({"video": Reply(message=Message.assistant("x"))})
    only_images = ByMedia({"image": Reply(message=Message.assistant("x"))})
    with Emulator([only_images]) as emu:
        resp = httpx2.post(emu.base_url + "/v1/messages", json=anthropic_images(0, 64))
    assert resp.status_code == 500
    assert "has no reply for a turn holding no media; add a key for it" in resp.text


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_the_media_rules_answer_any_json_with_a_problem_or_none(value: Any) -> None:
    """Bodies come from outside: each wire's media rules read any JSON without failing."""
    from toolwire.codecs import media_rules

    for body in (value, {"messages": value, "input": value, "contents": value},
                 {"messages": [{"role": value, "content": [value]}],
                  "input": [{"content": [value], "output": [value]}],
                  "contents": [{"parts": [value, {"functionResponse": {"parts": value}}]}],
                  "model": "gemini-2.5-flash"}):
        if not isinstance(body, dict):
            continue
        for check in (media_rules.anthropic_problem, media_rules.chat_problem,
                      media_rules.responses_problem, media_rules.gemini_problem,
                      media_rules.converse_problem):
            assert check(body) is None or isinstance(check(body), str)
