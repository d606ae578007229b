"""Bodies and streams against the Open Responses specification's OpenAPI document (the dated
release 2026-04-24, in ``tests/fixtures/open_responses``; its source and license are in the
``SOURCE`` file there).

The request bodies toolwire sends to each server that speaks the Responses API validate against
its ``CreateResponseBody`` (with the quirk ``typed_items``: the specification wants every input
item to name its type, which OpenAI's own API does not); every stream event toolwire writes
validates against the specification's schema for its type, except that the response object the
lifecycle events carry leaves out the request settings the specification has it repeat; a
stream with those filled in validates whole and is read as before.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from test_responses_servers import AGAIN, ANSWER, CALL, ENV, SERVERS, TOOL, _request, _sent
from toolwire import Agent, Message, ReasoningPart
from toolwire.codecs import get_codec
from toolwire.emulator import Emulator
from toolwire.http.client import model as make_model
from toolwire.transcript import Reply, ToolChoice

FIXTURE = Path(__file__).parent / "fixtures" / "open_responses" / "openapi-2026-04-24.json"
SHA256 = "d598753c3a86fd8a2434828fe39dcc8786a7a694bbe46080a0d24c9fa40e72df"
ECHOED = {  # what the response object repeats of the request, and a value the schema takes
    "background": False, "completed_at": None, "frequency_penalty": 0.0,
    "max_output_tokens": None, "max_tool_calls": None, "metadata": {},
    "presence_penalty": 0.0, "previous_response_id": None, "prompt_cache_key": None,
    "reasoning": None, "safety_identifier": None, "service_tier": "default", "store": False,
    "temperature": 1.0, "text": {"format": {"type": "text"}}, "top_logprobs": 0, "top_p": 1.0,
    "truncation": "disabled"}


@cache
def _document() -> dict[str, Any]:
    found: dict[str, Any] = json.loads(FIXTURE.read_bytes())
    return found


@cache
def _validator(name: str) -> jsonschema.Draft202012Validator:
    doc = _document()
    return jsonschema.Draft202012Validator({"$ref": f"#/components/schemas/{name}",
                                            "components": doc["components"]})


def _problems(name: str, value: Any) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message[:160]}"
            for e in _validator(name).iter_errors(value)]


@cache
def _event_schemas() -> dict[str, str]:
    """Each stream event type the specification lists, and its schema's name."""
    doc = _document()
    union = doc["paths"]["/responses"]["post"]["responses"]["200"]["content"][
        "text/event-stream"]["schema"]["oneOf"]
    found = {}
    for ref in union:
        name = ref["$ref"].rsplit("/", 1)[1]
        kind = doc["components"]["schemas"][name]["properties"]["type"]
        found[(kind.get("enum") or [kind.get("const")])[0]] = name
    return found


def test_the_fixture_is_the_dated_release_it_says() -> None:
    assert hashlib.sha256(FIXTURE.read_bytes()).hexdigest() == SHA256
    assert _document()["info"] == {"title": "Open Responses", "version": "2026-04-24"}
    assert "CreateResponseBody" in _document()["components"]["schemas"]
    assert len(_event_schemas()) > 20


# --------------------------------------------------------------------------- requests


@pytest.mark.parametrize("server", SERVERS)
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_the_bodies_sent_to_each_server_follow_the_specification(server: str,
                                                                       stream: bool) -> None:
    async with Emulator([CALL, AGAIN, ANSWER], plays=server) as emu:
        model = make_model(f"{server}:qwen3@{emu.base_url}", env=ENV)
        result = await Agent(model=model, tools=[TOOL], stream=stream,
                             system="Be brief.").arun("Weather?")
        await model.aclose()
    assert result.answer == ANSWER.text
    for received in emu.received:
        assert _problems("CreateResponseBody", received.body) == []


@pytest.mark.parametrize("choice", [None, ToolChoice(mode="required"),
                                    ToolChoice(mode="tool", name="get_weather")])
async def test_tool_choices_follow_the_specification(choice: ToolChoice | None) -> None:
    sent = await _sent("lmstudio-responses:qwen3", _request(tool_choice=choice))
    assert _problems("CreateResponseBody", sent) == []


async def test_without_typed_items_a_message_item_breaks_the_specification() -> None:
    sent = await _sent("vllm-responses:qwen3", _request(),
                       options={"_rules": {"typed_items": False}})
    assert "type" not in sent["input"][0]
    assert any(p.startswith("['input']") for p in _problems("CreateResponseBody", sent))


# --------------------------------------------------------------------------- streams

THINKING = Reply(message=Message(role="assistant", parts=(
    ReasoningPart(text="Paris first."), *CALL.message.parts)), stop="tool_calls")


def _events(reply: Reply) -> list[dict[str, Any]]:
    text = b"".join(get_codec("openai-responses").encode_stream(reply)).decode()
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]


@pytest.mark.parametrize("reply", [ANSWER, CALL, THINKING], ids=["text", "call", "reasoning"])
def test_each_stream_event_follows_its_schema_but_for_the_repeated_settings(reply: Reply) -> None:
    schemas = _event_schemas()
    missing: set[str] = set()
    for event in _events(reply):
        assert event["type"] in schemas, event["type"]
        for error in _validator(schemas[event["type"]]).iter_errors(event):
            assert error.validator == "required" and list(error.absolute_path) == ["response"], (
                event["type"], error.message)
            missing.add(error.message.split("'")[1])
    assert missing == set(ECHOED)


@pytest.mark.parametrize("reply", [ANSWER, CALL, THINKING], ids=["text", "call", "reasoning"])
def test_a_stream_shaped_wholly_as_the_specification_says_is_read(reply: Reply) -> None:
    events = _events(reply)
    for event in events:
        if "response" in event:
            event["response"] = {**ECHOED, **event["response"]}
        assert _problems(_event_schemas()[event["type"]], event) == []
    sse = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    read = list(get_codec("openai-responses").decode_stream([sse.encode()]))[-1].reply  # type: ignore
    assert read.text == reply.text
    assert [(c.id, c.name, c.arguments) for c in read.tool_calls] == [
        (c.id, c.name, c.arguments) for c in reply.tool_calls]
