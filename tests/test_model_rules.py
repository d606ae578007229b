"""The per-model rules (`toolwire.codecs.model_rules`), each against the emulator over loopback
HTTP: the emulator refuses a body breaking the rule with the provider's own 400 text, and what
toolwire sends instead is accepted, whole and streamed, and fits the official SDK's types."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from sdk_types import (
    assert_anthropic_valid,
    assert_chat_valid,
    assert_chat_valid_but,
    assert_gemini_valid,
)
from toolwire import ConfigError, Message, Reply, Request, ToolCallPart, ToolResultPart, ToolSpec
from toolwire.codecs import get_codec
from toolwire.codecs.model_rules import RULES, table_markdown
from toolwire.emulator import Emulator
from toolwire.events import StreamEnd
from toolwire.http.client import model as make_model
from toolwire.schema.tool import Tool
from toolwire.transcript import ReasoningPart, TextPart

TOOL = ToolSpec(name="lookup", description="Look a word up.", input_schema={
    "type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]})
DONE = Reply(message=Message.assistant("Done."))
ENV = {"OPENAI_API_KEY": "k", "GEMINI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
STREAMS = pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])


def post(emu: Emulator, path: str, body: dict[str, Any]) -> tuple[int, str]:
    """Send a raw body; the status and the error message the emulator answers with."""
    request = urllib.request.Request(emu.base_url + path, data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, ""
    except urllib.error.HTTPError as error:
        answer = json.loads(error.read())
        return error.code, answer["error"]["message"]


async def answer(model: Any, request: Request, stream: bool) -> Reply:
    """``model``'s reply to ``request``, asked for whole or streamed."""
    if not stream:
        return await model.complete(request)  # type: ignore[no-any-return]
    reply = None
    async for event in model.stream(request):
        if isinstance(event, StreamEnd):
            reply = event.reply
    assert reply is not None
    return reply


async def send(model_id: str, request: Request, stream: bool) -> tuple[Reply, dict[str, Any]]:
    """``request`` sent by toolwire to the emulator: the reply, and the body it received."""
    async with Emulator([DONE]) as emu:
        model = make_model(f"{model_id}@{emu.base_url}", env=ENV)
        try:
            reply = await answer(model, request, stream)
        finally:
            await model.aclose()
        emu.assert_done()
        return reply, emu.received[-1].body


def tool_round(model: str, **kw: Any) -> Request:
    """A conversation with one tool round, the call's reasoning from another wire."""
    thinking = ReasoningPart(text="Look it up first.", provider_data={
        "anthropic-messages": {"type": "thinking", "thinking": "Look it up first.",
                               "signature": "Eq"}})
    return Request(model=model, tools=(TOOL,), messages=(
        Message.user("What does 'wire' mean?"),
        Message(role="assistant", parts=(thinking, ToolCallPart(
            id="call_1", name="lookup", arguments={"word": "wire"}))),
        Message(role="tool", parts=(ToolResultPart(call_id="call_1", content="a metal thread"),)),
    ), **kw)


# --------------------------------------------------------------------------- GPT-5 effort


@STREAMS
async def test_gpt_5_6_refuses_tools_without_an_effort_and_gets_none(stream: bool) -> None:
    with Emulator([]) as emu:
        body = get_codec("openai-chat").encode_request(
            Request(model="gpt-5.6-terra", tools=(TOOL,), stream=stream,
                    messages=(Message.user("hi"),)))
        del body["reasoning_effort"]  # what a client unaware of the rule sends
        assert post(emu, "/v1/chat/completions", body) == (400, (
            "Function tools with reasoning_effort are not supported for gpt-5.6-terra in "
            "/v1/chat/completions. To use function tools, use /v1/responses or set "
            "reasoning_effort to 'none'."))
    reply, sent = await send("openai:gpt-5.6-terra", Request(
        model="gpt-5.6-terra", tools=(TOOL,), messages=(Message.user("hi"),)), stream)
    assert reply.text == "Done."
    assert sent["reasoning_effort"] == "none"
    assert_chat_valid(sent)


def test_the_note_says_none_was_sent_and_the_setting_turns_the_rule_off() -> None:
    codec = get_codec("openai-chat")
    request = Request(model="gpt-5.6-luna", tools=(TOOL,), messages=(Message.user("hi"),))
    encoded = codec.encode(request)
    assert [n.kind for n in encoded.notes] == ["reasoning_effort_set"]
    assert "sent reasoning_effort 'none'" in str(encoded.notes[0])
    off = codec.encode(Request(model="gpt-5.6-luna", tools=(TOOL,), messages=request.messages,
                               provider_options={"openai-chat": {"_rules": {
                                   "effort_with_tools_by_default": False}}}))
    assert "reasoning_effort" not in off.body and "_rules" not in off.body
    assert off.notes == ()


@STREAMS
async def test_gpt_5_4_refuses_an_effort_with_tools_and_toolwire_stops_first(
        stream: bool) -> None:
    with Emulator([DONE]) as emu:
        body = get_codec("openai-chat").encode_request(
            Request(model="gpt-5.4", tools=(TOOL,), stream=stream,
                    messages=(Message.user("hi"),)))
        assert post(emu, "/v1/chat/completions", {**body, "reasoning_effort": "high"}) == (
            400, "Function tools with reasoning_effort are not supported for gpt-5.4 in "
                 "/v1/chat/completions. Please use /v1/responses instead.")
        model = make_model(f"openai:gpt-5.4@{emu.base_url}", env=ENV)
        request = Request(model="gpt-5.4", tools=(TOOL,), reasoning="high",
                          messages=(Message.user("hi"),))
        with pytest.raises(ConfigError, match=r"'openai-responses:gpt-5\.4'"):
            await answer(model, request, stream)
        await model.aclose()
        assert len(emu.received) == 1  # only the raw body: nothing else was sent
    # no effort asked: nothing sent, which these models accept
    reply, sent = await send("openai:gpt-5.4", Request(
        model="gpt-5.4", tools=(TOOL,), messages=(Message.user("hi"),)), stream)
    assert reply.text == "Done." and "reasoning_effort" not in sent
    assert_chat_valid(sent)
    # reasoning off is effort none: accepted
    reply, sent = await send("openai:gpt-5.4", Request(
        model="gpt-5.4", tools=(TOOL,), reasoning="off", messages=(Message.user("hi"),)), stream)
    assert sent["reasoning_effort"] == "none" and reply.text == "Done."


def test_without_tools_an_effort_goes_as_asked() -> None:
    body = get_codec("openai-chat").encode_request(
        Request(model="gpt-5.4", reasoning="high", messages=(Message.user("hi"),)))
    assert body["reasoning_effort"] == "high"
    assert get_codec("openai-chat").check_body(body) is None


# --------------------------------------------------------------------------- DeepSeek


@pytest.mark.parametrize(("model", "words"), [
    ("deepseek-v4-flash", "The `reasoning_content` in the thinking mode must be passed back "
                          "to the API."),
    ("deepseek-reasoner", "Missing `reasoning_content` field in the assistant message at "
                          "message index 1. For more information, please refer to "
                          "https://api-docs.deepseek.com/guides/thinking_mode#tool-calls"),
])
@STREAMS
async def test_deepseek_thinking_gets_its_reasoning_back_on_tool_turns(
        model: str, words: str, stream: bool) -> None:
    body = get_codec("openai-chat").encode_request(tool_round(model, stream=stream))
    with Emulator([]) as emu:
        refused = {**body, "messages": [{k: v for k, v in m.items() if k != "reasoning_content"}
                                        for m in body["messages"]]}
        assert post(emu, "/v1/chat/completions", refused) == (400, words)
        thinking_off = {**refused, "thinking": {"type": "disabled"}}
        assert get_codec("openai-chat").check_body(thinking_off) is None
    reply, sent = await send(f"openai-compatible:{model}", tool_round(model), stream)
    assert reply.text == "Done."
    assert sent["messages"][1]["reasoning_content"] == "Look it up first."
    assert_chat_valid_but(sent, "reasoning_content")


def test_deepseek_without_reasoning_sends_an_empty_one_and_notes_it() -> None:
    request = tool_round("deepseek-v4-pro")
    bare = Request(model=request.model, tools=request.tools, messages=(
        request.messages[0], Message(role="assistant", parts=request.messages[1].parts[1:]),
        request.messages[2], Message.assistant("It is a metal thread.")))
    encoded = get_codec("openai-chat").encode(bare)
    assert [m.get("reasoning_content") for m in encoded.body["messages"]] == [
        None, "", None, ""]
    assert [n.kind for n in encoded.notes].count("reasoning_passed_back") == 2
    assert get_codec("openai-chat").check_body(encoded.body) is None


@STREAMS
async def test_the_r1_reasoner_refuses_reasoning_and_gets_none(stream: bool) -> None:
    request = tool_round("deepseek-r1")
    chat = get_codec("openai-chat")
    with Emulator([]) as emu:
        body = chat.encode_request(tool_round("deepseek-v4-flash", stream=stream))
        assert post(emu, "/v1/chat/completions", {**body, "model": "deepseek-r1"}) == (400, (
            "The reasoning_content is an intermediate result for display purposes only and "
            "will not be included in the context for inference. Please remove the "
            "reasoning_content from your message to reduce network traffic."))
    from_chat = Request(model="deepseek-r1", tools=(TOOL,), messages=(
        request.messages[0],
        chat.decode_request(body).messages[1], request.messages[2]))
    encoded = chat.encode(from_chat)
    assert "reasoning_dropped" in [n.kind for n in encoded.notes]
    reply, sent = await send("openai-compatible:deepseek-r1", from_chat, stream)
    assert reply.text == "Done."
    assert all("reasoning_content" not in m for m in sent["messages"])
    assert_chat_valid(sent)


# --------------------------------------------------------------------------- Gemini 3 ids

GEMINI_BODY: dict[str, Any] = {"contents": [
    {"role": "user", "parts": [{"text": "What does 'wire' mean?"}]},
    {"role": "model", "parts": [{"functionCall": {"id": "fc_7", "name": "lookup",
                                                  "args": {"word": "wire"}},
                                 "thoughtSignature": "c2ln"}]},
    {"role": "user", "parts": [{"functionResponse": {"name": "lookup",
                                                     "response": {"output": "a thread"}}}]},
], "tools": [{"functionDeclarations": [{"name": "lookup", "description": "Look a word up.",
                                         "parametersJsonSchema": TOOL.input_schema}]}]}


@STREAMS
async def test_gemini_3_responses_carry_the_id_their_call_came_with(stream: bool) -> None:
    path = "/v1beta/models/gemini-3-pro-preview:" + (
        "streamGenerateContent?alt=sse" if stream else "generateContent")
    with Emulator([]) as emu:
        assert post(emu, path, GEMINI_BODY) == (
            400, "functionResponse.id does not match functionCall.id")
    gemini = get_codec("gemini-generate")
    request = gemini.decode_request(GEMINI_BODY, model="gemini-3-pro-preview")
    reply, sent = await send("gemini:gemini-3-pro-preview", request, stream)
    assert reply.text == "Done."
    response = sent["contents"][2]["parts"][0]["functionResponse"]
    assert response["id"] == "fc_7" == sent["contents"][1]["parts"][0]["functionCall"]["id"]
    assert_gemini_valid(sent)


def test_older_gemini_models_are_not_held_to_the_id_rule() -> None:
    assert get_codec("gemini-generate").check_body(
        {**GEMINI_BODY, "model": "gemini-2.5-flash"}) is None


# --------------------------------------------------------------------------- Anthropic

FIVE = [{"type": "text", "text": f"rule {n}", "cache_control": {"type": "ephemeral"}}
        for n in range(5)]


@STREAMS
async def test_anthropic_never_gets_more_than_four_breakpoints(stream: bool) -> None:
    request = Request(model="claude-sonnet-4-5", max_tokens=256, tools=(TOOL,),
                      provider_options={"anthropic-messages": {"system": FIVE}},
                      messages=(Message.user("hi"),))
    with Emulator([]) as emu:
        body = get_codec("anthropic-messages").encode_request(request)
        raw = {**body, "system": FIVE, "stream": stream}
        assert post(emu, "/v1/messages", raw) == (
            400, "A maximum of 4 blocks with cache_control may be provided. Found 5.")
    encoded = get_codec("anthropic-messages").encode(request)
    dropped = [n for n in encoded.notes if n.kind == "cache_breakpoint_dropped"]
    assert [n.subject for n in dropped] == ["system[0]"]  # the earliest goes
    reply, sent = await send("anthropic:claude-sonnet-4-5", request, stream)
    assert reply.text == "Done."
    assert ["cache_control" in block for block in sent["system"]] == [
        False, True, True, True, True]
    assert_anthropic_valid(sent)


def test_automatic_caching_keeps_the_latest_prefix_over_the_callers_earliest() -> None:
    from toolwire import Cache

    request = Request(model="claude-sonnet-4-5", max_tokens=256, cache=Cache(),
                      provider_options={"anthropic-messages": {"system": FIVE[:4]}},
                      messages=(Message.user("one"), Message.assistant("two"),
                                Message(role="user", parts=(TextPart(text="three"),))))
    encoded = get_codec("anthropic-messages").encode(request)
    body = encoded.body
    marks = [p for p in json.dumps(body).split('"cache_control"')][1:]
    assert len(marks) == 4
    assert "cache_control" in body["messages"][-1]["content"][-1]
    assert "cache_control" in body["messages"][0]["content"][-1]
    assert ["cache_control" in b for b in body["system"]] == [False, False, True, True]
    assert get_codec("anthropic-messages").check_body(body) is None


# --------------------------------------------------------------------------- the table


def test_the_docs_show_the_table_with_a_source_for_every_row() -> None:
    docs = (Path(__file__).parent.parent / "docs" / "wires.md").read_text()
    assert table_markdown() in docs
    for row in RULES:
        assert row.source.split(":", 1)[0] in ("docs", "SDK", "reported"), row.code
        assert row.source.split(":", 1)[1].strip(), row.code


# --------------------------------------------------------------------------- OpenAI explicit

CHAT_PATH, RESPONSES_PATH = "/v1/chat/completions", "/v1/responses"


@pytest.mark.parametrize(("provider", "path"), [("openai", CHAT_PATH),
                                                ("openai-responses", RESPONSES_PATH)])
@STREAMS
async def test_explicit_breakpoints_go_to_the_models_that_have_them(
        provider: str, path: str, stream: bool) -> None:
    from sdk_types import assert_sdk_valid
    from toolwire import Cache

    wire = "openai-chat" if path == CHAT_PATH else "openai-responses"
    request = tool_round("gpt-5.6-sol", cache=Cache(key="app", retention="24h"))
    request = Request(model=request.model, system="Be brief.", tools=request.tools,
                      cache=request.cache, messages=request.messages)
    with Emulator([]) as emu:
        older = get_codec(wire).encode_request(tool_round("gpt-4.1", cache=Cache(key="app")))
        marked = get_codec(wire).encode_request(request)
        assert post(emu, path, {**marked, "model": "gpt-4.1", "stream": stream}) == (400, (
            "Unsupported parameter: 'prompt_cache_breakpoint' is not supported with this "
            "model."))
        assert "prompt_cache_breakpoint" not in json.dumps(older)
    reply, sent = await send(f"{provider}:gpt-5.6-sol", request, stream)
    assert reply.text == "Done."
    assert "prompt_cache_retention" not in sent and sent["prompt_cache_key"] == "app"
    text = json.dumps(sent)
    assert 2 <= text.count('"prompt_cache_breakpoint"') <= 4
    assert text.count('{"mode": "explicit", "ttl": "12h"}') == text.count(
        '"prompt_cache_breakpoint"')
    if wire == "openai-chat":
        assert_chat_valid(sent)
    else:
        assert_sdk_valid(sent)


def test_older_models_keep_their_retention_and_no_breakpoints() -> None:
    from toolwire import Cache

    for wire in ("openai-chat", "openai-responses"):
        body = get_codec(wire).encode_request(tool_round("gpt-5.4", cache=Cache(retention="24h")))
        assert body["prompt_cache_retention"] == "24h"
        assert "prompt_cache_breakpoint" not in json.dumps(body)


@STREAMS
async def test_the_setting_moves_a_gpt_5_run_to_responses_where_it_reasons_with_tools(
        stream: bool) -> None:
    from sdk_types import assert_sdk_valid
    from toolwire import Agent

    echo = Tool(name="lookup", description="Look a word up.", input_schema=TOOL.input_schema,
                fn=lambda word: f"{word}: a metal thread")
    replies = [Reply(message=Message(role="assistant", parts=(
        ToolCallPart(id="call_1", name="lookup", arguments={"word": "wire"}),)),
        stop="tool_calls"), DONE]
    allow = {"_rules": {"responses_for_reasoning": True}}
    async with Emulator(replies) as emu:
        model = make_model(f"openai:gpt-5.4@{emu.base_url}", env=ENV, options=allow)
        result = await Agent(model=model, tools=[echo], reasoning="high",
                             stream=stream).arun("What does 'wire' mean?")
        await model.aclose()
        other = make_model(f"openai:gpt-4.1@{emu.base_url}", env=ENV, options=allow)
        await other.aclose()
    assert result.ok and result.answer == "Done."
    assert model.wire == "openai-responses" and model.name.startswith("openai-responses:")
    assert other.wire == "openai-chat"
    assert [r.path for r in emu.received] == ["/v1/responses"] * 2
    for received in emu.received:
        assert received.body["reasoning"] == {"effort": "high"} and "_rules" not in received.body
        assert_sdk_valid(received.body)


def test_breakpoints_a_conversion_carried_over_count_too() -> None:
    marked = {"type": "ephemeral"}
    body = {"model": "claude-sonnet-4-5", "max_tokens": 256, "messages": [
        {"role": "user", "content": [{"type": "text", "text": f"part {n}", "cache_control": marked}
                                     for n in range(3)]},
        {"role": "assistant", "content": [{"type": "text", "text": "ok", "cache_control": marked}]},
        {"role": "user", "content": [{"type": "text", "text": "go on", "cache_control": marked}]},
    ]}
    anthropic = get_codec("anthropic-messages")
    assert anthropic.check_body(body) == (
        "A maximum of 4 blocks with cache_control may be provided. Found 5.")
    encoded = anthropic.encode(anthropic.decode_request(body))
    assert [n.subject for n in encoded.notes if n.kind == "cache_breakpoint_dropped"] == [
        "messages[0].content[0]"]
    assert json.dumps(encoded.body).count('"cache_control"') == 4
    assert anthropic.check_body(encoded.body) is None
    assert_anthropic_valid(encoded.body)
