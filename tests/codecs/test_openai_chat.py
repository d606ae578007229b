"""The OpenAI Chat Completions codec, in sections named after the wire's modules: golden
bodies, recorded replies and streams, quirks, errors and round trips."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pydantic_core
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.chat.completion_create_params import (
    CompletionCreateParamsNonStreaming,
    CompletionCreateParamsStreaming,
)
from pydantic import TypeAdapter

from strategies import texts
from toolwire.codecs import get_codec
from toolwire.codecs.base import call_id_for
from toolwire.codecs.openai_chat import codec as wire_module
from toolwire.conversion import convert
from toolwire.errors import (
    AuthenticationError,
    ContextLengthError,
    InvalidRequestError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    ProviderError,
    RateLimitError,
    ServerError,
    StreamError,
    WireFormatError,
)
from toolwire.events import (
    ReasoningDelta,
    StreamEnd,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from toolwire.transcript import (
    Message,
    OpaquePart,
    Part,
    ReasoningPart,
    Reply,
    Request,
    StopReason,
    TextPart,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
    ToolSpec,
    Usage,
    replace,
)

codec = get_codec("openai-chat")
W = codec.WIRE
CORPUS = Path(__file__).parents[1] / "fixtures" / "corpus"
SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large]
WEATHER = {"type": "object", "properties": {"city": {"type": "string"}},
           "required": ["city"], "additionalProperties": False}


def corpus(name: str) -> Any:
    return json.loads((CORPUS / name).read_text())["body"]


def sse(*chunks: Any, done: bool = True) -> bytes:
    """A Chat Completions stream made of the given chunk objects (or raw lines)."""
    lines = [c if isinstance(c, str) else f"data: {json.dumps(c)}\n\n" for c in chunks]
    if done:
        lines.append("data: [DONE]\n\n")
    return "".join(lines).encode()


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None,
          **top: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"id": "chatcmpl-s1", "object": "chat.completion.chunk",
                            "created": 1, "model": "m"}
    body.update(top)
    if "choices" not in top:
        body["choices"] = [{"index": 0, "delta": delta or {}, "finish_reason": finish}]
    return body


def run(data: bytes, request: Request | None = None) -> tuple[list[StreamEvent], Reply]:
    events = list(codec.decode_stream([data], request=request))
    end = events[-1]
    assert isinstance(end, StreamEnd)
    return events[:-1], end.reply


def _list_not_generator(node: Any) -> Any:
    """A copy of a pydantic core schema where lazily checked iterables become lists."""
    if isinstance(node, list):
        return [_list_not_generator(v) for v in node]
    if not isinstance(node, dict):
        return node
    if node.get("type") == "generator":
        out = {"type": "list", "items_schema": _list_not_generator(node.get("items_schema"))}
        return {k: v for k, v in out.items() if v is not None}
    return {k: _list_not_generator(v) for k, v in node.items()}


def _validator(kind: Any) -> pydantic_core.SchemaValidator:
    schema = _list_not_generator(TypeAdapter(kind).core_schema)
    text = json.dumps(schema, default=str)
    assert '"generator"' not in text and '"list"' in text
    return pydantic_core.SchemaValidator(schema)


PARAMS = _validator(CompletionCreateParamsNonStreaming)
STREAM_PARAMS = _validator(CompletionCreateParamsStreaming)
COMPLETION = TypeAdapter(ChatCompletion)
CHUNK = TypeAdapter(ChatCompletionChunk)


def sdk_valid(body: dict[str, Any]) -> None:
    """The body fits the openai SDK's request type exactly: no unknown key, nothing coerced."""
    validator = STREAM_PARAMS if body.get("stream") else PARAMS
    validated = validator.validate_python(json.loads(json.dumps(body)), extra="forbid")
    assert json.loads(json.dumps(validated)) == json.loads(json.dumps(body))


GOLDEN_REPLY: dict[str, Any] = {
    "id": "chatcmpl-C1a2b3", "object": "chat.completion", "created": 1755800000,
    "model": "gpt-4.1-2025-04-14", "system_fingerprint": "fp_x",
    "choices": [{
        "index": 0, "logprobs": None, "finish_reason": "tool_calls",
        "message": {
            "role": "assistant", "content": "Checking both.", "refusal": None, "annotations": [],
            "tool_calls": [
                {"id": "call_A", "type": "function",
                 "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
                {"id": "call_B", "type": "function",
                 "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\"}"}},
            ]}}],
    "usage": {"prompt_tokens": 80, "completion_tokens": 44, "total_tokens": 124,
              "prompt_tokens_details": {"cached_tokens": 16, "audio_tokens": 0},
              "completion_tokens_details": {"reasoning_tokens": 5, "audio_tokens": 0}},
}

OPENROUTER_REPLY: dict[str, Any] = {
    "id": "gen-1755800000-abc", "provider": "Anthropic", "model": "anthropic/claude-sonnet-4.5",
    "object": "chat.completion", "created": 1755800000,
    "choices": [{"index": 0, "finish_reason": "tool_calls", "native_finish_reason": "tool_use",
                 "message": {
                     "role": "assistant", "content": "On it.", "refusal": None,
                     "reasoning": "Two cities.",
                     "reasoning_details": [{"type": "reasoning.text", "text": "Two cities.",
                                            "signature": "EqQBsig", "id": None,
                                            "format": "anthropic-claude-v1", "index": 0}],
                     "tool_calls": [{"id": "toolu_01", "type": "function", "index": 0,
                                     "function": {"name": "get_weather",
                                                  "arguments": "{\"city\":\"Paris\"}"}}]}}],
    "usage": {"prompt_tokens": 420, "completion_tokens": 110, "total_tokens": 530,
              "prompt_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 12},
              "completion_tokens_details": {"reasoning_tokens": 20}, "cost": 0.00291},
}

# file -> (tool (name, id, arguments) in order, text, reasoning text start, usage checks)
REPLIES: dict[str, tuple[list[tuple[str, str, Any]], str, str | None, dict[str, Any]]] = {
    "openai_chat__langchaingo__testexecutorwithopenaifunctionagent.json": (
        [("GoogleSearch", "call_xBZmyTROTl3UDnkHo7ViHPJ6",
          {"__arg1": "Go programming language version 1.0 release date"})],
        "", None, {"input_tokens": 167, "output_tokens": 25}),
    "openai_chat__langchaingo__testfunctioncall.json": (
        [("getCurrentWeather", "call_olc8qHf1RDItRqwuEBNjsu3B", {"location": "Boston"})],
        "", None, {"input_tokens": 81}),
    "openai_chat__prism__deepseek-generate-text-with-multiple-tools-1.json": (
        [("search", "call_0_bd7f072c-b559-40ac-8605-b85186543ff1",
          {"query": "Detroit Tigers game time today"}),
         ("weather", "call_1_b7890944-9632-458e-93c1-89ae71996523", {"city": "Detroit"})],
        "", None, {"input_tokens": 220, "cache_read_tokens": 192}),
    "openai_chat__prism__mistral-generate-text-with-multiple-tools-1.json": (
        [("search", "hd1jUE8h9", {"query": "Detroit Tigers game time today"}),
         ("weather", "3GLgh8afr", {"city": "Detroit"})],
        "", None, {"output_tokens": 43}),
    "openai_chat__pydantic-ai__test-dbos-agent-with-hitl-tool.json": (
        [("delete_file", "call_jYdIdRZHxZTn5bWCq5jlMrJi", {"path": ".env"}),
         ("create_file", "call_TmlTVWQbzrXCZ4jNsCVNbNqu", {"path": "test.txt"})],
        "", None, {"input_tokens": 71}),
    "openai_chat__pydantic-ai__test-deepseek-deferred-capability-with-thinking__1.json": (
        [("get_player_name", "call_00_6edlnw3Z1MgeMfey687g8451", {}),
         ("roll_dice", "call_01_km02sac7sHxNDPATKLZy7705", {})],
        "Let me get your name and roll the die!", "Great, now I have access",
        {"reasoning_tokens": 26}),
    "openai_chat__pydantic-ai__test-ollama-cloud-tool-output__1.json": (
        [("final_result", "call_o2vnpxrw", {"city": "Paris", "country": "France"})],
        "", "The conversation: user asked", {"output_tokens": 194}),
    "openai_chat__pydantic-ai__test-openai-instructions-with-tool-calls-keep-instructions.json": (
        [("get_temperature", "call_bhZkmIKKItNGJ41whHUHB7p9", {"city": "Tokyo"})],
        "", None, {"input_tokens": 50}),
    "openai_chat__pydantic-ai__test-openrouter-cache-all-settings-real-api.json": (
        [("calculator", "toolu_01QXVkPZYABFNhTASu9uBdEM", {"expression": "123 * 456"})],
        "Let me calculate that for you!", None,
        {"cache_write_tokens": 2569, "cost": 0.01058775}),
    "openai_chat__pydantic-ai__test-openrouter-tool-calling.json": (
        [("divide", "3sniiMddS", {"numerator": 123, "denominator": 456, "on_inf": "infinity"})],
        "", None, {"input_tokens": 134}),
    "openai_chat__pydantic-ai__test-snowflake-thinking.json": (
        [("get_weather", "toolu_bdrk_01VmA9jmWpws4HgPqjhtGo6i", {"city": "Mexico City"})],
        "Sure! Let me check that for you!", "Let me get the weather for Mexico City.",
        {"input_tokens": 597}),
    "openai_chat__pydantic-ai__test-tool-choice-matrix-auto-mistral.json": (
        [("get_weather", "KikbB849t", {"city": "Paris"})], "", None, {"cache_read_tokens": 76}),
    "openai_chat__pydantic-ai__test-tool-choice-matrix-tools-plus-output-groq.json": (
        [("get_weather", "rew01jq49", {"city": "Paris"}),
         ("final_result", "gbpypqxpx", {"city": "Paris", "summary": "Current weather in Paris"})],
        "", None, {"input_tokens": 779}),
    "openai_chat__pydantic-ai__test-tool-choice-matrix-tools-plus-output-huggingface.json": (
        [("get_weather", "call_c67bb6b901354ca19bd1b70d", {"city": "Paris"}),
         ("final_result", "call_1113747bb7de47ce8bffe3e9",
          {"city": "Paris", "summary": "Weather in Paris"})],
        "", None, {"input_tokens": 720}),
    "openai_chat__pydantic-ai__test-tool-choice-matrix-tools-plus-output-openai.json": (
        [("get_weather", "call_LCWM0K5IkLjASFTllZhX5HM3", {"city": "Paris"})],
        "", None, {"reasoning_tokens": 192}),
    "openai_chat__pydantic-ai__test-tool-search-eval-openai-chat.json": (
        [("search_tools", "call_HXEEsG0rVIvymWmAHG4fgIwp",
          {"queries": ["exchange rate currency USD EUR current"]})],
        "", None, {"input_tokens": 265}),
}

# streamed corpus: file -> (calls, text, has reasoning, usage checks)
STREAMS: dict[str, tuple[list[tuple[str, str, Any]], bool, dict[str, Any]]] = {
    "openai_chat_stream__prism__deepseek-stream-with-tools-1.json": (
        [("search", "call_0_7d6a342f-6da3-400c-a4f9-d80055fd7c74",
          {"query": "Detroit Tigers game time today"}),
         ("get_weather", "call_1_b0aff31e-ccb8-4418-a5fa-2d16caaf7945", {"city": "Detroit"})],
        False, {"input_tokens": 223, "cache_read_tokens": 192, "output_tokens": 43}),
    "openai_chat_stream__prism__openrouter-stream-text-with-empty-parameters-tools-when-using-gpt-5-1.json": (  # noqa: E501
        [("time", "call_KDpVIRBU5EIprhJ4cpxDEfPr", {})],
        True, {"reasoning_tokens": 128, "cost": 0.0014925, "input_tokens": 50}),
    "openai_chat_stream__pydantic-ai__test-complex-agent-run-in-workflow.json": (
        [("get_country", "call_3rqTYrA6H21AYUaRGP4F66oq", {}),
         ("get_product_name", "call_Xw9XMKBJU48kAAd78WgIswDx", {})],
        False, {"input_tokens": 364, "output_tokens": 40}),
    "openai_chat_stream__pydantic-ai__test-run-stream-sync-streams-real-model.json": (
        [("get_capital", "call_ZR5UUuTt3pf61kjwAJIYdVMj", {"country": "UK"})],
        False, {"input_tokens": 53}),
}


def _reply(message: dict[str, Any], finish: str | None = "tool_calls",
           rid: str = "chatcmpl-q") -> dict[str, Any]:
    return {"id": rid, "object": "chat.completion", "created": 5, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", **message},
                         "finish_reason": finish}]}


# Argument text of every kind, valid or not: the parsed value or the parse error must be exactly
# what the standard json module gives, whichever parser read it.
_JSONISH = st.sampled_from(list('{}[]:," \t\n0123456789-+.eEtrufalsnNIify\\/u"aé\x00\ud800😀'))
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8)


def _expected(text: str) -> tuple[Any, str | None]:
    """The standard parser's reading, under toolwire's JSON policy: NaN and infinities refused,
    lone surrogates read as U+FFFD."""
    if not text.strip():
        return {}, None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"{exc.msg} at line {exc.lineno} column {exc.colno} (char {exc.pos})"
    try:
        json.dumps(value, allow_nan=False)
    except ValueError:
        return None, "not finite"
    raw = json.dumps(value, ensure_ascii=False)  # lone surrogates as characters
    return json.loads(raw.encode("utf-16", "surrogatepass").decode("utf-16", "replace")), None


# Light strategies (generation dominates these tests' time): short ids, small argument objects.
_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_ids = st.text(alphabet=_ALNUM, min_size=6, max_size=12).map(lambda s: "call_" + s)
_names = st.sampled_from(["get_weather", "search", "f", "read_file", "run-tests"])
_nice_texts = texts.filter(lambda s: not s.startswith("Error:") and s != "(no output)")
_args = st.dictionaries(
    st.sampled_from(["a", "city", "n", "ö"]),
    st.one_of(st.integers(), texts, st.booleans(), st.none(), st.lists(st.integers(), max_size=2)),
    max_size=3,
)


def _call(draw: st.DrawFn, call_id: str) -> ToolCallPart:
    """A call as this wire decodes it: the model's own argument text kept."""
    raw = json.dumps(draw(_args), ensure_ascii=draw(st.booleans()),
                     indent=draw(st.sampled_from([None, 1])))
    return ToolCallPart.from_raw(id=call_id, name=draw(_names), raw_arguments=raw)


@st.composite
def _tools(draw: st.DrawFn) -> list[ToolSpec]:
    names = draw(st.lists(_names, max_size=3, unique=True))
    return [ToolSpec(name=n, description=draw(texts), input_schema={
        "type": "object", "properties": {"a": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["a"]}) for n in names]


@st.composite
def _round(draw: st.DrawFn) -> tuple[Message, Message]:
    """An assistant message with 1-3 calls and the tool message answering each of them."""
    count = draw(st.integers(min_value=1, max_value=3))
    ids = draw(st.lists(_ids, min_size=count, max_size=count, unique=True))
    calls = [_call(draw, i) for i in ids]
    parts: list[Part] = [TextPart(text=draw(texts))] if draw(st.booleans()) else []
    results = tuple(ToolResultPart(call_id=c.id, content=draw(_nice_texts),
                                   is_error=draw(st.booleans()), name=c.name) for c in calls)
    return (Message(role="assistant", parts=(*parts, *calls)),
            Message(role="tool", parts=results))


@st.composite
def reasoning_parts(draw: st.DrawFn) -> ReasoningPart:
    kind = draw(st.sampled_from(["reasoning", "reasoning_content", "details", "both"]))
    payload: dict[str, Any] = {}
    if kind in ("reasoning", "reasoning_content", "both"):
        payload["reasoning" if kind == "both" else kind] = draw(texts)
    if kind in ("details", "both"):
        count = draw(st.integers(min_value=1, max_value=2))
        payload["reasoning_details"] = [
            {"type": "reasoning.text", "text": draw(texts),
             "signature": draw(st.none() | st.text(alphabet=_ALNUM + "+/", min_size=4)),
             "format": "anthropic-claude-v1", "index": i} if draw(st.booleans()) else
            {"type": "reasoning.encrypted", "data": draw(st.text(alphabet=_ALNUM, min_size=2)),
             "id": draw(st.none() | st.just("rs_1")), "format": "openai-responses-v1", "index": i}
            for i in range(count)
        ]
    if isinstance(payload.get("reasoning"), str):
        text = payload["reasoning"]
    elif isinstance(payload.get("reasoning_content"), str):
        text = payload["reasoning_content"]
    else:
        text = "".join(d.get("text", "") for d in payload["reasoning_details"])
    return ReasoningPart(text=text, provider_data={W: payload})


@st.composite
def replies(draw: st.DrawFn) -> Reply:
    parts: list[Part] = []
    if draw(st.booleans()):
        parts.append(draw(reasoning_parts()))
    if draw(st.booleans()):
        parts.append(TextPart(text=draw(texts)))
    refused = draw(st.integers(min_value=0, max_value=5)) == 0
    if refused:
        parts.append(TextPart(text=draw(texts), provider_data={W: {"type": "refusal"}}))
    count = draw(st.integers(min_value=0, max_value=3))
    ids = draw(st.lists(_ids, min_size=count, max_size=count, unique=True))
    parts.extend(_call(draw, i) for i in ids)
    stop: StopReason
    if count:
        raw_stop = draw(st.sampled_from(["tool_calls", "stop"]))
        stop = "tool_calls"
    else:
        raw_stop = draw(st.sampled_from(["stop", "length", "content_filter"]))
        stop = codec.STOP_REASONS[raw_stop]
        if stop == "end_turn" and refused:
            stop = "refusal"
    usage = Usage(
        input_tokens=draw(st.integers(min_value=0, max_value=10**6)),
        output_tokens=draw(st.integers(min_value=0, max_value=10**5)),
        cache_read_tokens=draw(st.integers(min_value=0, max_value=1000)),
        cache_write_tokens=draw(st.integers(min_value=0, max_value=1000)),
        reasoning_tokens=draw(st.integers(min_value=0, max_value=1000)),
        cost=draw(st.none() | st.floats(min_value=0, max_value=10, allow_nan=False)),
    )
    extras = draw(st.none() | st.fixed_dictionaries(
        {"provider": st.sampled_from(["OpenAI", "Anthropic"])},
        optional={"native_finish_reason": st.sampled_from(["end_turn", "STOP"]),
                  "system_fingerprint": st.just("fp_1")}))
    return Reply(
        message=Message(role="assistant", parts=tuple(parts)),
        stop=stop, raw_stop=raw_stop, usage=usage,
        model=draw(st.text(alphabet="abc0123./-", min_size=1, max_size=20)),
        id="chatcmpl-" + draw(st.text(alphabet=_ALNUM, min_size=4, max_size=12)),
        provider_data={W: extras} if extras else None,
    )


@st.composite
def requests(draw: st.DrawFn, *, with_reasoning: bool) -> Request:
    tools = draw(_tools())
    if draw(st.booleans()):
        tools.append(ToolSpec(name="strict_tool", description="s", input_schema=WEATHER,
                              strict=True))
    messages: list[Message] = [Message(role="user", parts=tuple(
        TextPart(text=t) for t in draw(st.lists(texts, min_size=1, max_size=2))))]
    for _ in range(draw(st.integers(min_value=0, max_value=2))):
        assistant, results = draw(_round())
        if with_reasoning and draw(st.booleans()):
            assistant = Message(role="assistant",
                                parts=(draw(reasoning_parts()), *assistant.parts))
        messages += [assistant, results]
        if draw(st.booleans()):
            messages.append(Message(role="system", parts=(TextPart(text=draw(texts)),)))
        messages.append(Message.user(draw(_nice_texts)))
    choice = None
    wants_choice = draw(st.booleans())
    if tools and wants_choice:
        mode: Any = draw(st.sampled_from(["auto", "required", "none", "tool"]))
        choice = ToolChoice(mode=mode, name=tools[0].name if mode == "tool" else None,
                            parallel=draw(st.none() | st.booleans()))
    options = draw(st.none() | st.fixed_dictionaries(
        {}, optional={"seed": st.integers(min_value=0, max_value=99),
                      "user": st.text(alphabet="abcxyz", min_size=1, max_size=8),
                      "top_p": st.sampled_from([0.5, 1.0])}))
    return Request(
        model=draw(st.text(alphabet="abc0123.-", min_size=1, max_size=20)),
        system=draw(st.none() | texts),
        messages=tuple(messages),
        tools=tuple(tools),
        tool_choice=choice,
        max_tokens=draw(st.none() | st.integers(min_value=1, max_value=10**6)),
        temperature=draw(st.none() | st.floats(min_value=0, max_value=2, allow_nan=False)),
        stream=draw(st.booleans()),
        provider_options={W: options} if options else None,
    )


# --- codec


def test_module_has_the_codec_surface() -> None:
    assert codec.module is wire_module
    for name in ("encode", "encode_request", "decode_request", "decode_response",
                 "encode_response", "encode_stream", "stream_decoder", "decode_stream",
                 "decode_error"):
        assert callable(getattr(codec, name))
    for name in ("encode_request", "stream_decoder", "decode_stream", "ChatStreamDecoder"):
        assert not hasattr(wire_module, name), f"{name} is derived once for every wire"
    assert codec.StreamDecoder is wire_module.StreamDecoder
    assert set(codec.STOP_REASONS) >= {"stop", "length", "tool_calls", "content_filter",
                                       "function_call", "error"}


# --- request


def test_sdk_check_would_catch_a_misspelled_or_coerced_key() -> None:
    body = codec.encode_request(Request(model="m", tools=(ToolSpec(name="f"),),
                                        messages=(Message.user("hi"),)))
    sdk_valid(body)
    body["tools"][0]["function"]["parameter"] = body["tools"][0]["function"].pop("parameters")
    with pytest.raises(pydantic_core.ValidationError):
        sdk_valid(body)
    bad = codec.encode_request(Request(model="m", messages=(Message.user("hi"),)))
    bad["messages"][0]["contnet"] = "x"  # inside a list: only caught because lists are checked
    with pytest.raises(pydantic_core.ValidationError):
        sdk_valid(bad)
    coerced = codec.encode_request(Request(model="m", messages=(Message.user("hi"),)))
    coerced["max_completion_tokens"] = "12"
    with pytest.raises((pydantic_core.ValidationError, AssertionError)):
        sdk_valid(coerced)

def test_golden_request_with_strict_tool() -> None:
    request = Request(
        model="gpt-4.1",
        system="You are a weather bot.",
        messages=(Message.user("Weather in Paris and Rome?"),),
        tools=(ToolSpec(name="get_weather", description="Current weather for a city.",
                        input_schema=WEATHER, strict=True),),
        tool_choice=ToolChoice(mode="auto"),
    )
    encoded = codec.encode(request)
    assert encoded.body == {
        "model": "gpt-4.1",
        "messages": [
            {"role": "system", "content": "You are a weather bot."},
            {"role": "user", "content": "Weather in Paris and Rome?"},
        ],
        "tools": [{"type": "function", "function": {
            "name": "get_weather", "description": "Current weather for a city.",
            "strict": True, "parameters": WEATHER}}],
        "tool_choice": "auto",
    }
    assert encoded.notes == ()  # already strict-ready: nothing rewritten
    sdk_valid(encoded.body)
    assert codec.decode_request(encoded.body) == request

def test_tool_choice_and_parallel_are_stripped_without_tools() -> None:
    encoded = codec.encode(Request(model="m", messages=(Message.user("hi"),),
                                   tool_choice=ToolChoice(mode="required", parallel=False)))
    assert "tool_choice" not in encoded.body and "parallel_tool_calls" not in encoded.body
    assert sorted(n.subject for n in encoded.notes if n.kind == "field_dropped") == [
        "parallel_tool_calls", "tool_choice"]
    sdk_valid(encoded.body)

def test_system_prompt_first_and_system_messages_in_place() -> None:
    request = Request(model="m", system="Be brief.", messages=(
        Message.user("a"), Message(role="system", parts=(TextPart(text="Now in French."),)),
        Message.user("b"),
    ))
    body = codec.encode_request(request)
    assert [m["role"] for m in body["messages"]] == ["system", "user", "system", "user"]
    assert body["messages"][0]["content"] == "Be brief."
    assert body["messages"][2]["content"] == "Now in French."
    assert codec.decode_request(body) == request

def test_empty_ids_are_replaced_for_calls_and_their_results() -> None:
    request = Request(model="m", messages=(
        Message.user("x"),
        Message(role="assistant", parts=(ToolCallPart(id="", name="f", arguments={}),
                                         ToolCallPart(id="", name="g", arguments={}))),
        Message(role="tool", parts=(ToolResultPart(call_id="", content="1"),
                                    ToolResultPart(call_id="", content="2"))),
    ))
    encoded = codec.encode(request)
    calls = encoded.body["messages"][1]["tool_calls"]
    results = encoded.body["messages"][2:]
    ids = [c["id"] for c in calls]
    assert all(ids) and len(set(ids)) == 2
    assert [r["tool_call_id"] for r in results] == ids
    assert [n.kind for n in encoded.notes] == ["id_rewritten", "id_rewritten"]
    assert codec.encode(request).body == encoded.body  # deterministic
    assert all(isinstance(r["tool_call_id"], str) for r in results)

def test_options_for_other_wires_are_noted_once_per_wire() -> None:
    request = Request(model="m", messages=(Message.user("q"),), provider_options={
        W: {"seed": 1}, "anthropic-messages": {"top_k": 5}, "gemini-generate": {"x": 1}})
    encoded = codec.encode(request)
    assert encoded.body["seed"] == 1 and "top_k" not in encoded.body
    assert [(n.kind, n.subject) for n in encoded.notes] == [
        ("field_dropped", "provider_options['anthropic-messages']"),
        ("field_dropped", "provider_options['gemini-generate']"),
    ]
    assert not codec.encode(Request(model="m", provider_options={W: {"seed": 1}})).notes

def test_request_options_unknown_keys_and_max_tokens_field() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}],
            "max_tokens": 99, "seed": 7, "reasoning_effort": "low", "temperature": 0.5,
            "stream": True, "stream_options": {"include_usage": True},
            "tools": [{"type": "custom", "custom": {"name": "grammar"}},
                      {"type": "function", "function": {"name": "f"}}],
            "tool_choice": {"type": "allowed_tools",
                            "allowed_tools": {"mode": "auto", "tools": []}}}
    request = codec.decode_request(body)
    assert request.max_tokens == 99 and request.temperature == 0.5 and request.stream
    assert request.tools == (ToolSpec(name="grammar", freeform=True), ToolSpec(name="f"))
    assert request.tool_choice is None
    assert request.provider_options == {W: {
        "max_tokens_field": "max_tokens", "seed": 7, "reasoning_effort": "low",
        "tool_choice": body["tool_choice"]}}
    again = codec.encode_request(request)
    assert again["max_tokens"] == 99 and "max_completion_tokens" not in again
    assert "max_tokens_field" not in again
    assert again["tools"][0] == {"type": "custom", "custom": {"name": "grammar"}}  # in place
    assert again["tool_choice"] == body["tool_choice"]
    assert codec.decode_request(again) == request
    plain = codec.encode_request(Request(model="m", max_tokens=5))
    assert plain["max_completion_tokens"] == 5 and "max_tokens" not in plain

@pytest.mark.parametrize("body", [
    {"model": "m", "messages": [], "max_tokens": 1024},
    {"model": "m", "messages": [], "max_completion_tokens": 1024},
    {"model": "m", "messages": [], "max_completion_tokens": 1024, "max_tokens": 50},
    {"model": "m", "messages": [], "max_completion_tokens": None, "max_tokens": 1024},
])
def test_either_token_limit_field_decodes_into_max_tokens_and_goes_back_as_it_came(
    body: dict[str, Any],
) -> None:
    request = codec.decode_request(body)
    assert request.max_tokens == 1024
    options = (request.provider_options or {}).get(W, {})
    assert 1024 not in options.values()  # the limit is carried once, in Request.max_tokens
    assert codec.encode_request(request) == body
    changed = codec.encode_request(replace(request, max_tokens=7))
    field = "max_completion_tokens" if isinstance(body.get("max_completion_tokens"), int) \
        else "max_tokens"
    assert changed[field] == 7

def test_the_legacy_token_field_carries_its_limit_into_another_wire() -> None:
    conv = convert({"model": "m", "messages": [{"role": "user", "content": "hi"}],
                    "max_tokens": 1024}, W, "anthropic-messages")
    assert conv.body["max_tokens"] == 1024
    assert "max_tokens_defaulted" not in {n.kind for n in conv.losses}

def test_decode_request_keeps_roles_and_message_extras() -> None:
    body = {"model": "m", "messages": [
        {"role": "developer", "content": "rules"},
        {"role": "user", "content": [{"type": "text", "text": "a",
                                      "cache_control": {"type": "ephemeral"}}], "name": "bob"},
        {"role": "assistant", "content": "x", "name": "bot"},
    ]}
    request = codec.decode_request(body)
    assert request.system is None and request.messages[0].role == "system"
    assert codec.encode_request(request) == body

def test_decoded_values_are_frozen_with_their_declared_fields() -> None:
    request = codec.decode_request({
        "model": "m", "tools": [{"type": "function", "function": {"name": "f"}}],
        "messages": [{"role": "user", "content": "hi"}]})
    message, spec = request.messages[0], request.tools[0]
    with pytest.raises(AttributeError):
        message.role = "assistant"  # type: ignore[misc]
    assert replace(message, parts=[TextPart(text="x")]).parts == (TextPart(text="x"),)
    assert ToolSpec(name="f").input_schema is not ToolSpec(name="f").input_schema
    assert spec == ToolSpec(name="f") and hash(message) == hash(Message.user("hi"))
    assert Reply(message=message).usage == Usage()
    with pytest.raises(TypeError):
        Message("user")  # type: ignore[misc]  # keyword-only, as declared

@settings(max_examples=150, deadline=None, suppress_health_check=SLOW_OK)
@given(requests(with_reasoning=True))
def test_request_round_trip(request: Request) -> None:
    encoded = codec.encode(request)
    assert codec.decode_request(json.loads(json.dumps(encoded.body))) == request
    assert not [n for n in encoded.notes if n.kind != "schema_rewritten"]

@settings(max_examples=100, deadline=None, suppress_health_check=SLOW_OK)
@given(requests(with_reasoning=False))
def test_generated_requests_fit_the_sdk_type(request: Request) -> None:
    sdk_valid(codec.encode_request(request))


def test_decode_request_takes_model_and_stream_from_the_url_only_when_the_body_lacks_them(
) -> None:
    usage = {"include_usage": True}
    bare = {"messages": [{"role": "user", "content": "hi"}], "stream_options": usage}
    request = codec.decode_request(bare, model="gpt-x", stream=True)
    assert (request.model, request.stream, request.provider_options) == ("gpt-x", True, None)
    assert codec.encode_request(request) == {**bare, "model": "gpt-x", "stream": True}
    assert codec.decode_request(bare).provider_options == {W: {"stream_options": usage}}
    full = {**bare, "model": "m", "stream": False}
    assert codec.decode_request(full, model="gpt-x", stream=True) == codec.decode_request(full)


# --- reply


def test_golden_reply_and_the_next_request() -> None:
    reply = codec.decode_response(GOLDEN_REPLY)
    assert reply.id == "chatcmpl-C1a2b3" and reply.model == "gpt-4.1-2025-04-14"
    assert reply.stop == "tool_calls" and reply.raw_stop == "tool_calls"
    assert reply.text == "Checking both."
    assert reply.tool_calls == (
        ToolCallPart(id="call_A", name="get_weather", arguments={"city": "Paris"},
                     raw_arguments="{\"city\":\"Paris\"}"),
        ToolCallPart(id="call_B", name="get_weather", arguments={"city": "Rome"},
                     raw_arguments="{\"city\": \"Rome\"}"),
    )
    assert reply.usage == Usage(input_tokens=80, output_tokens=44, cache_read_tokens=16,
                                reasoning_tokens=5)
    request = Request(model="gpt-4.1", messages=(
        Message.user("Weather in Paris and Rome?"),
        reply.message,
        Message(role="tool", parts=(
            ToolResultPart(call_id="call_A", content="18°C, cloudy", name="get_weather"),
            ToolResultPart(call_id="call_B", content="timeout after 10s", is_error=True,
                           name="get_weather"),
        )),
    ), tools=(ToolSpec(name="get_weather", input_schema=WEATHER),))
    body = codec.encode_request(request)
    assert body["messages"][1:] == [
        {"role": "assistant", "content": "Checking both.", "tool_calls": [
            {"id": "call_A", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
            {"id": "call_B", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\"}"}}]},
        {"role": "tool", "tool_call_id": "call_A", "content": "18°C, cloudy"},
        {"role": "tool", "tool_call_id": "call_B", "content": "Error: timeout after 10s"},
    ]
    sdk_valid(body)
    assert codec.decode_request(body).messages == request.messages

def test_every_recorded_reply_is_listed() -> None:
    assert sorted(p.name for p in CORPUS.glob("openai_chat__*.json")) == sorted(REPLIES)

@pytest.mark.parametrize("name", sorted(REPLIES))
def test_recorded_reply_decodes(name: str) -> None:
    body = corpus(name)
    calls, text, reasoning, usage = REPLIES[name]
    reply = codec.decode_response(body)
    assert [(c.name, c.id, c.arguments) for c in reply.tool_calls] == calls
    assert all(c.raw_arguments is not None and c.parse_error is None for c in reply.tool_calls)
    assert reply.stop == "tool_calls" and not reply.truncated_call
    assert reply.text == text
    found = [p for p in reply.message.parts if isinstance(p, ReasoningPart)]
    if reasoning is None:
        assert found == []
    else:
        assert len(found) == 1 and found[0].text.startswith(reasoning)
        kept = found[0].provider_data[W]  # type: ignore[index]
        message = body["choices"][0]["message"]
        assert kept == {k: message[k] for k in ("reasoning", "reasoning_content",
                                                "reasoning_details") if message.get(k)}
        assert reasoning not in "".join(str(c.arguments) for c in reply.tool_calls)
    for key, value in usage.items():
        assert getattr(reply.usage, key) == pytest.approx(value)
    # the same reply served back by the emulator decodes to the same reply (an id is made up
    # when the provider sent none)
    served = codec.decode_response(codec.encode_response(reply))
    assert served == replace(reply, id=served.id)
    assert reply.id is None or served.id == reply.id

def test_snowflake_quirks_empty_finish_reason_and_empty_id() -> None:
    reply = codec.decode_response(corpus("openai_chat__pydantic-ai__test-snowflake-thinking.json"))
    assert reply.raw_stop == "" and reply.stop == "tool_calls" and reply.id is None
    # the empty "custom" shell next to "function" is not taken for a custom tool call
    assert [type(p).__name__ for p in reply.message.parts] == [
        "ReasoningPart", "TextPart", "ToolCallPart"]
    assert reply.tool_calls[0].provider_data is None

def test_stop_with_tool_calls_is_a_tool_turn() -> None:
    reply = codec.decode_response(_reply({"content": "", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        finish="stop"))
    assert reply.stop == "tool_calls" and reply.raw_stop == "stop"

def test_cut_off_arguments_mean_max_tokens() -> None:
    reply = codec.decode_response(_reply({"tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"a": "b'}}]},
        finish="length"))
    assert reply.stop == "max_tokens" and reply.truncated_call
    assert reply.tool_calls[0].raw_arguments == '{"a": "b' and reply.tool_calls[0].parse_error

@pytest.mark.parametrize("finish", ["tool_calls", "stop"])
def test_broken_arguments_without_a_limit_are_a_call_to_answer(finish: str) -> None:
    """Not cut off: the loop sends the parse error back so the model can fix its call."""
    reply = codec.decode_response(_reply({"tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"a": "b'}}]},
        finish=finish))
    assert reply.stop == "tool_calls" and not reply.truncated_call
    assert reply.tool_calls[0].parse_error

@pytest.mark.parametrize(("finish", "stop"), [
    ("stop", "end_turn"), ("length", "max_tokens"), ("content_filter", "content_filter"),
    ("error", "error"), ("something_new", "other"), (None, "end_turn"),
])
def test_text_stop_reasons(finish: str | None, stop: str) -> None:
    reply = codec.decode_response(_reply({"content": "hi"}, finish=finish))
    assert reply.stop == stop and reply.raw_stop == finish and reply.text == "hi"

def test_non_streamed_choice_error_is_kept() -> None:
    body = _reply({"content": ""}, finish="error")
    body["choices"][0]["error"] = {"code": 502, "message": "upstream died"}
    reply = codec.decode_response(body)
    assert reply.stop == "error"
    assert reply.provider_data == {W: {"error": {"code": 502, "message": "upstream died"}}}

@pytest.mark.parametrize(("status", "body", "kind", "error_type"), [
    (400, {"error": {"message": "bad", "type": "invalid_request_error", "param": "x",
                     "code": None}}, InvalidRequestError, "invalid_request_error"),
    (400, {"error": {"message": "This model's maximum context length is 128000 tokens.",
                     "type": "invalid_request_error", "param": "messages",
                     "code": "context_length_exceeded"}}, ContextLengthError,
     "invalid_request_error"),
    (400, {"error": {"message": "too big", "type": "invalid_request_error",
                     "code": "context_length_exceeded"}}, ContextLengthError,
     "invalid_request_error"),
    (401, {"error": {"message": "Incorrect API key", "type": "invalid_request_error",
                     "code": "invalid_api_key"}}, AuthenticationError, "invalid_request_error"),
    (403, {"error": {"message": "no", "type": "permission_error"}}, PermissionDeniedError,
     "permission_error"),
    (404, {"error": {"message": "The model does not exist", "type": "invalid_request_error",
                     "code": "model_not_found"}}, NotFoundError, "invalid_request_error"),
    (429, {"error": {"message": "Rate limit reached", "type": "requests",
                     "code": "rate_limit_exceeded"}}, RateLimitError, "requests"),
    (500, {"error": {"message": "oops", "type": "server_error"}}, ServerError, "server_error"),
    (503, "Service Unavailable", OverloadedError, None),
    (402, {"error": {"code": 402, "message": "Insufficient credits",
                     "metadata": {"error_type": "payment_required"}}}, InvalidRequestError,
     "payment_required"),
    (422, {"detail": [{"loc": ["body", "messages"], "msg": "field required"}]},
     InvalidRequestError, None),
])
def test_decode_error(status: int, body: Any, kind: type[ProviderError],
                      error_type: str | None) -> None:
    error = codec.decode_error(status, body)
    assert type(error) is kind
    assert error.status == status and error.wire == W and error.error_type == error_type
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        assert error.message.startswith(body["error"]["message"])
    elif isinstance(body, str):
        assert error.message == body
    else:
        assert "field required" in error.message

def test_decode_error_from_bytes_headers_and_openrouter_raw() -> None:
    body = json.dumps({"error": {"code": 429, "message": "Provider returned error",
                                 "metadata": {"raw": "upstream rate limited",
                                              "provider_name": "X"}}}).encode()
    error = codec.decode_error(429, body, {"Retry-After-Ms": "1500"})
    assert isinstance(error, RateLimitError) and error.retryable
    assert error.retry_after == pytest.approx(1.5)
    assert "upstream rate limited" in error.message
    quota = codec.decode_error(429, {"error": {"message": "You exceeded your current quota",
                                               "type": "insufficient_quota",
                                               "code": "insufficient_quota"}})
    assert isinstance(quota, RateLimitError) and not quota.retryable
    empty = codec.decode_error(502, b"")
    assert isinstance(empty, ServerError) and "502" in empty.message

@settings(max_examples=150, deadline=None, suppress_health_check=SLOW_OK)
@given(replies())
def test_reply_round_trip(reply: Reply) -> None:
    body = codec.encode_response(reply)
    assert codec.decode_response(json.loads(json.dumps(body))) == reply
    if reply.provider_data is None and reply.usage.cost is None and not any(
            isinstance(p, ReasoningPart) for p in reply.message.parts):
        COMPLETION.validate_python(body, extra="forbid")

def test_a_reply_body_that_is_only_an_error_raises_it() -> None:
    with pytest.raises(ServerError) as info:
        codec.decode_response({"error": {"code": 502, "message": "upstream gone"}})
    assert info.value.message == "upstream gone"


# --- stream


def test_every_recorded_stream_is_listed() -> None:
    assert sorted(p.name for p in CORPUS.glob("openai_chat_stream__*.json")) == sorted(STREAMS)

@pytest.mark.parametrize("name", sorted(STREAMS))
def test_recorded_stream_assembles(name: str) -> None:
    calls, has_reasoning, usage = STREAMS[name]
    raw: bytes = corpus(name).encode()
    events, reply = run(raw)
    assert [(c.name, c.id, c.arguments) for c in reply.tool_calls] == calls
    assert reply.stop == "tool_calls" and reply.raw_stop == "tool_calls"
    for key, value in usage.items():
        assert getattr(reply.usage, key) == pytest.approx(value)
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [(e.name, e.id) for e in started] == [(n, i) for n, i, _ in calls]
    assert tuple(e.call for e in finished) == reply.tool_calls
    for number, call in enumerate(reply.tool_calls):
        pieces = [e.fragment for e in events if isinstance(e, ToolCallDelta) and e.index == number]
        assert "".join(pieces) == call.raw_arguments
    reasoning = [p for p in reply.message.parts if isinstance(p, ReasoningPart)]
    assert bool(reasoning) == has_reasoning
    # split into small pieces it assembles the same way
    small = [raw[i:i + 7] for i in range(0, len(raw), 7)]
    assert list(codec.decode_stream(small))[-1] == StreamEnd(reply=reply)

def test_openrouter_stream_keeps_encrypted_reasoning_and_usage_after_finish() -> None:
    name = "openai_chat_stream__prism__openrouter-stream-text-with-empty-parameters-tools-when-using-gpt-5-1.json"  # noqa: E501
    _, reply = run(corpus(name).encode())
    part = reply.message.parts[0]
    assert isinstance(part, ReasoningPart) and part.text == ""
    details = part.provider_data[W]["reasoning_details"]  # type: ignore[index]
    assert len(details) == 1 and details[0]["type"] == "reasoning.encrypted"
    assert details[0]["id"].startswith("rs_045e88") and details[0]["data"].startswith("gAAAAABo")
    assert reply.provider_data == {W: {"provider": "OpenAI", "native_finish_reason": "completed"}}

def test_whole_calls_with_repeated_index_open_new_slots() -> None:
    data = sse(
        chunk({"role": "assistant", "content": ""}),
        chunk({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                               "function": {"name": "f", "arguments": '{"x":1}'}}]}),
        chunk({"tool_calls": [{"index": 0, "id": "call_b", "type": "function",
                               "function": {"name": "g", "arguments": '{"y":2}'}}]}),
        chunk({}, finish="tool_calls"),
    )
    events, reply = run(data)
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("call_a", "f", {"x": 1}), ("call_b", "g", {"y": 2})]
    assert [(e.index, e.id) for e in events if isinstance(e, ToolCallStarted)] == [
        (0, "call_a"), (1, "call_b")]

def test_missing_index_uses_position_and_placeholder_fragments_continue() -> None:
    data = sse(
        chunk({"tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "f", "arguments": ""}},
            {"id": "call_b", "type": "function", "function": {"name": "g", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 0, "id": "null", "function": {"name": "",
                                                                     "arguments": '{"a":'}}]}),
        chunk({"tool_calls": [{"index": 0, "id": "call_a", "function": {"arguments": "1}"}}]}),
        chunk({"tool_calls": [{"index": 1, "id": "", "function": {"arguments": "{}"}}]}),
        chunk({}, finish="tool_calls"),
    )
    events, reply = run(data)
    assert [(c.id, c.name, c.raw_arguments) for c in reply.tool_calls] == [
        ("call_a", "f", '{"a":1}'), ("call_b", "g", "{}")]
    assert [e.fragment for e in events if isinstance(e, ToolCallDelta)] == ['{"a":', "1}", "{}"]

def test_stream_without_ids_gets_the_ids_the_whole_body_would() -> None:
    data = sse(
        chunk({"tool_calls": [{"index": 0, "type": "function",
                               "function": {"name": "f", "arguments": "{}"}}]}),
        chunk({}, finish="stop"),
    )
    events, reply = run(data)
    expected = call_id_for("chatcmpl-s1", 0)
    assert reply.tool_calls[0].id == expected and reply.stop == "tool_calls"
    assert [e.id for e in events if isinstance(e, ToolCallStarted)] == [expected]

def test_stream_arguments_as_object() -> None:
    data = sse(chunk({"tool_calls": [{"index": 0, "id": "c", "type": "function",
                                      "function": {"name": "f", "arguments": {"k": "v"}}}]}),
               chunk({}, finish="tool_calls"))
    events, reply = run(data)
    assert reply.tool_calls[0].arguments == {"k": "v"}
    assert reply.tool_calls[0].raw_arguments is None
    assert [e.fragment for e in events if isinstance(e, ToolCallDelta)] == ['{"k":"v"}']

def test_streamed_reasoning_details_merge_by_index() -> None:
    data = sse(
        ": OPENROUTER PROCESSING\n\n",
        chunk({"role": "assistant", "content": "", "reasoning": "Two",
               "reasoning_details": [{"type": "reasoning.text", "text": "Two",
                                      "format": "anthropic-claude-v1", "index": 0}]}),
        ": OPENROUTER PROCESSING\n\n",
        chunk({"reasoning": " cities", "reasoning_details": [
            {"type": "reasoning.text", "text": " cities", "signature": "SIG", "index": 0}]}),
        chunk({"reasoning_details": [{"type": "reasoning.encrypted", "data": "AAA", "index": 1,
                                      "format": "anthropic-claude-v1"}]}),
        chunk({"content": "Done."}),
        chunk({"content": ""}, finish="stop", native_finish_reason="end_turn"),
        chunk(choices=[], usage={"prompt_tokens": 3, "completion_tokens": 4, "cost": 0.5}),
    )
    events, reply = run(data)
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["Two", " cities"]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Done."]
    part = reply.message.parts[0]
    assert isinstance(part, ReasoningPart) and part.text == "Two cities"
    assert part.provider_data == {W: {"reasoning": "Two cities", "reasoning_details": [
        {"type": "reasoning.text", "text": "Two cities", "signature": "SIG",
         "format": "anthropic-claude-v1", "index": 0},
        {"type": "reasoning.encrypted", "data": "AAA", "index": 1,
         "format": "anthropic-claude-v1"}]}}
    assert reply.usage == Usage(input_tokens=3, output_tokens=4, cost=0.5)
    assert reply.text == "Done." and reply.stop == "end_turn"

def test_streamed_reasoning_content_gives_reasoning_deltas() -> None:
    data = sse(chunk({"role": "assistant", "reasoning_content": "hm"}),
               chunk({"reasoning_content": "m"}), chunk({"content": "ok"}),
               chunk({}, finish="stop"))
    events, reply = run(data)
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["hm", "m"]
    assert reply.message.parts[0] == ReasoningPart(text="hmm",
                                                   provider_data={W: {"reasoning_content": "hmm"}})

@pytest.mark.parametrize(("error", "kind"), [
    ({"code": 502, "message": "Provider disconnected",
      "metadata": {"error_type": "provider_unavailable"}}, ServerError),
    ({"code": "x", "message": "slow down", "metadata": {"error_type": "rate_limit_exceeded"}},
     RateLimitError),
    ({"message": "Overloaded", "type": "overloaded_error"}, OverloadedError),
    ({"message": "something broke", "type": "server_error"}, StreamError),
])
def test_mid_stream_error_chunk_raises_a_typed_error(error: dict[str, Any],
                                                     kind: type[ProviderError]) -> None:
    data = sse(
        chunk({"role": "assistant", "content": "Hel"}),
        {**chunk({"content": ""}, finish="error"), "error": error},
        done=False,
    )
    decoder = codec.stream_decoder()
    events = decoder.feed(data)
    assert events == [TextDelta(text="Hel")]
    with pytest.raises(kind) as info:
        decoder.finish()
    assert info.value.message == error["message"] and info.value.wire == W

def test_streams_that_end_early_raise_stream_error() -> None:
    with pytest.raises(StreamError):
        run(sse(chunk({"content": "Hel"}), done=False))
    with pytest.raises(StreamError):
        run(b"")
    with pytest.raises(StreamError):
        run(b"data: {not json\n\n")
    # a finish_reason without [DONE], or [DONE] without a finish_reason, is complete enough
    assert run(sse(chunk({"content": "a"}, finish="stop"), done=False))[1].text == "a"
    assert run(sse(chunk({"content": "a"})))[1].text == "a"

def test_crlf_lines_and_a_last_event_without_blank_line() -> None:
    raw = (f"data: {json.dumps(chunk({'content': 'é'}))}\r\n\r\n"
           f"data: {json.dumps(chunk({}, finish='stop'))}\r\n\r\ndata: [DONE]").encode()
    assert run(raw)[1].text == "é"

@settings(max_examples=150, deadline=None, suppress_health_check=SLOW_OK)
@given(replies(), st.data())
def test_stream_round_trip_split_anywhere(reply: Reply, data: st.DataObject) -> None:
    raw = b"".join(codec.encode_stream(reply))
    cuts = sorted(data.draw(st.lists(st.integers(min_value=0, max_value=len(raw)), max_size=12)))
    pieces = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    events = list(codec.decode_stream(pieces))
    assert events[-1] == StreamEnd(reply=reply)
    # every kind of text the reply holds streams as text, a refusal's too
    all_text = "".join(p.text for p in reply.message.parts if isinstance(p, TextPart))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == all_text
    assert tuple(e.call for e in events if isinstance(e, ToolCallFinished)) == reply.tool_calls
    reasoning = [p for p in reply.message.parts if isinstance(p, ReasoningPart)]
    if reasoning:
        assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == reasoning[0].text

def test_encoded_stream_chunks_fit_the_sdk_chunk_type() -> None:
    reply = Reply(message=Message(role="assistant", parts=(
        TextPart(text="Looking ✓"),
        ToolCallPart.from_raw(id="call_1", name="f", raw_arguments='{"city": "Zürich"}'),
    )), stop="tool_calls", raw_stop="tool_calls", model="gpt-x", id="chatcmpl-1",
        usage=Usage(input_tokens=3, output_tokens=2))
    frames = codec.encode_stream(reply)
    assert frames[-1] == b"data: [DONE]\n\n" and len(frames) > 6
    for frame in frames[:-1]:
        assert frame.startswith(b"data: ") and frame.endswith(b"\n\n")
        CHUNK.validate_python(json.loads(frame[6:]), extra="forbid")
    assert json.loads(frames[-2][6:])["choices"] == []  # the usage chunk

def test_whole_calls_without_ids_on_a_reused_index_are_told_apart() -> None:
    data = sse(
        chunk({"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": '{"x":1}'}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": '{"x":2}'}}]}),
        chunk({}, finish="tool_calls"),
    )
    _, reply = run(data)
    assert [c.arguments for c in reply.tool_calls] == [{"x": 1}, {"x": 2}]
    assert len({c.id for c in reply.tool_calls}) == 2
    # a server repeating the name on every fragment of one call is not split
    repeated = sse(
        chunk({"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": '{"x"'}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": ":1}"}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": ""}}]}),
        chunk({}, finish="tool_calls"),
    )
    assert [c.arguments for c in run(repeated)[1].tool_calls] == [{"x": 1}]


# --- parts


def test_openrouter_reasoning_details_kept_exactly_and_sent_back_only_here() -> None:
    reply = codec.decode_response(OPENROUTER_REPLY)
    reasoning = reply.message.parts[0]
    assert isinstance(reasoning, ReasoningPart) and reasoning.text == "Two cities."
    assert reasoning.provider_data == {W: {
        "reasoning": "Two cities.",
        "reasoning_details": OPENROUTER_REPLY["choices"][0]["message"]["reasoning_details"],
    }}
    assert reply.usage.cost == pytest.approx(0.00291) and reply.usage.cache_write_tokens == 12
    assert reply.provider_data == {W: {"provider": "Anthropic", "native_finish_reason": "tool_use"}}
    follow_up = Request(model="x", messages=(
        Message.user("Weather?"), reply.message,
        Message(role="tool", parts=(ToolResultPart(call_id="toolu_01", content="18°C"),)),
    ), tools=(ToolSpec(name="get_weather", input_schema=WEATHER),))
    sent = codec.encode_request(follow_up)["messages"][1]
    wire_message = OPENROUTER_REPLY["choices"][0]["message"]
    assert sent["reasoning_details"] == wire_message["reasoning_details"]
    assert sent["reasoning"] == "Two cities."
    assert sent["tool_calls"][0]["id"] == "toolu_01"
    # to another wire's codec these are foreign; here, reasoning from another wire is dropped
    foreign = Message(role="assistant", parts=(
        ReasoningPart(text="thought", provider_data={"anthropic-messages": {"signature": "s"}}),
        TextPart(text="ok"),
    ))
    encoded = codec.encode(Request(model="x", messages=(Message.user("q"), foreign)))
    assert encoded.body["messages"][1] == {"role": "assistant", "content": "ok"}
    assert [n.kind for n in encoded.notes] == ["reasoning_dropped"]

def test_names_map_back_with_the_request() -> None:
    request = Request(model="m", tools=(ToolSpec(name="GoogleSearch"),))
    body = corpus("openai_chat__langchaingo__testexecutorwithopenaifunctionagent.json")
    assert codec.decode_response(body, request=request).tool_calls[0].name == "GoogleSearch"

def test_names_are_mapped_in_tools_choice_and_history_and_back() -> None:
    tools = (ToolSpec(name="math.sum"), ToolSpec(name="ok_name"), ToolSpec(name="x" * 70))
    history = Message(role="assistant", parts=(
        ToolCallPart(id="c1", name="math.sum", arguments={"a": 1}),
        ToolCallPart(id="c2", name="old tool", arguments={}),
    ))
    request = Request(model="m", tools=tools, messages=(
        Message.user("add"), history,
        Message(role="tool", parts=(ToolResultPart(call_id="c1", content="2"),
                                    ToolResultPart(call_id="c2", content="ok"))),
    ), tool_choice=ToolChoice(mode="tool", name="math.sum"))
    encoded = codec.encode(request)
    names = [t["function"]["name"] for t in encoded.body["tools"]]
    assert names[0] == "math_sum" and names[1] == "ok_name"
    assert len(names[2]) <= 64 and names[2].startswith("xxx")
    sent_calls = encoded.body["messages"][1]["tool_calls"]
    assert [c["function"]["name"] for c in sent_calls] == ["math_sum", "old_tool"]
    assert encoded.body["tool_choice"]["function"]["name"] == "math_sum"
    mapped = {n.subject for n in encoded.notes if n.kind == "tool_name_mapped"}
    assert mapped == {"math.sum", "x" * 70, "old tool"}
    sdk_valid(encoded.body)
    reply = codec.decode_response({"id": "r", "choices": [{
        "index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "tool_calls": [
            {"id": "c9", "type": "function",
             "function": {"name": names[2], "arguments": "{}"}},
            {"id": "c8", "type": "function",
             "function": {"name": "math_sum", "arguments": "{}"}}]}}]}, request=request)
    assert [c.name for c in reply.tool_calls] == ["x" * 70, "math.sum"]
    # and the emulator side maps user names to wire names
    served = codec.encode_response(reply, request=request)
    assert [c["function"]["name"] for c in served["choices"][0]["message"]["tool_calls"]] == [
        names[2], "math_sum"]

def test_results_error_prefix_empty_result_and_decoding_back() -> None:
    request = Request(model="m", messages=(
        Message.user("go"),
        Message(role="assistant", parts=(
            ToolCallPart(id="a", name="f", arguments={}),
            ToolCallPart(id="b", name="f", arguments={}),
            ToolCallPart(id="c", name="f", arguments={}),
        )),
        Message(role="tool", parts=(
            ToolResultPart(call_id="a", content="boom", is_error=True, name="f"),
            ToolResultPart(call_id="b", content="Error: already said", is_error=True, name="f"),
            ToolResultPart(call_id="c", content="", name="f"),
        )),
    ))
    body = codec.encode_request(request)
    assert [m["content"] for m in body["messages"][2:]] == [
        "Error: boom", "Error: already said", "(no output)"]
    back = codec.decode_request(body).messages[2].parts
    assert back[0] == ToolResultPart(call_id="a", content="boom", is_error=True, name="f")
    assert back[2] == ToolResultPart(call_id="c", content="", name="f")
    # the assistant calls had no text: content is null, arguments are strings
    assistant = body["messages"][1]
    assert assistant["content"] is None
    assert all(isinstance(c["function"]["arguments"], str) for c in assistant["tool_calls"])
    sdk_valid(body)

def test_object_arguments_are_sent_as_a_string() -> None:
    call = ToolCallPart(id="k1", name="f", arguments={"city": "Zürich"})
    body = codec.encode_request(Request(model="m", messages=(
        Message.user("x"), Message(role="assistant", parts=(call,)),
        Message(role="tool", parts=(ToolResultPart(call_id="k1", content="ok"),)))))
    assert body["messages"][1]["tool_calls"][0]["function"]["arguments"] == '{"city":"Zürich"}'

def test_parts_another_wire_owns_are_dropped_with_notes() -> None:
    request = Request(model="m", messages=(
        Message(role="user", parts=(
            TextPart(text="look"),
            OpaquePart(wire=W, kind="image_url",
                       payload={"type": "image_url", "image_url": {"url": "https://x/y.png"}}),
            OpaquePart(wire="anthropic-messages", kind="server_tool_use", payload={"x": 1}),
        )),
    ))
    encoded = codec.encode(request)
    assert encoded.body["messages"][0]["content"] == [
        {"type": "text", "text": "look"},
        {"type": "image_url", "image_url": {"url": "https://x/y.png"}}]
    assert [(n.kind, n.subject) for n in encoded.notes] == [
        ("opaque_dropped", "messages[0].parts[2]")]
    sdk_valid(encoded.body)

def test_dropped_parts_are_named_by_message_and_part() -> None:
    request = Request(model="m", messages=(
        Message.user("q"),
        Message(role="assistant", parts=(
            TextPart(text="a"),
            ReasoningPart(text="r", provider_data={"gemini-generate": {"thought": True}}),
            OpaquePart(wire="openai-responses", kind="web_search_call", payload={"id": "ws"}),
        )),
        Message(role="tool", parts=(ReasoningPart(text="stray"),)),
    ))
    notes = codec.encode(request).notes
    assert [(n.kind, n.subject) for n in notes] == [
        ("reasoning_dropped", "messages[1].parts[1]"),
        ("opaque_dropped", "messages[1].parts[2]"),
        ("reasoning_dropped", "messages[2].parts[0]"),
    ]

@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(_JSONISH, max_size=24),
                 st.builds(json.dumps, _VALUES, ensure_ascii=st.booleans())))
def test_argument_text_parses_exactly_as_json_module_does(text: str) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": text}}
    part = codec.decode_response(_reply({"content": None, "tool_calls": [call]})).tool_calls[0]
    arguments, error = _expected(text)
    if error == "not finite":
        assert part.arguments is None and part.parse_error is not None
        assert "not a JSON number" in part.parse_error or "out of range" in part.parse_error
        return
    assert part.raw_arguments == text and part.parse_error == error
    assert json.dumps(part.arguments) == json.dumps(arguments)  # same values, same key order

def test_arguments_as_object_are_accepted() -> None:
    reply = codec.decode_response(_reply({"tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": {"a": [1]}}}]}))
    call = reply.tool_calls[0]
    assert call.arguments == {"a": [1]} and call.raw_arguments is None
    served = codec.encode_response(reply)
    assert served["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == '{"a":[1]}'

@pytest.mark.parametrize("bad_id", [None, "", "null", "missing"])
def test_missing_empty_or_placeholder_ids_get_stable_synthetic_ids(bad_id: Any) -> None:
    call: dict[str, Any] = {"type": "function", "function": {"name": "f", "arguments": "{}"}}
    if bad_id != "missing":
        call["id"] = bad_id
    body = _reply({"tool_calls": [dict(call), dict(call)]})
    first = codec.decode_response(body)
    ids = [c.id for c in first.tool_calls]
    assert ids == [call_id_for("chatcmpl-q", 0), call_id_for("chatcmpl-q", 1)]
    assert [c.id for c in codec.decode_response(body).tool_calls] == ids
    other = codec.decode_response({**body, "id": "chatcmpl-other"})
    assert set(ids).isdisjoint(c.id for c in other.tool_calls)
    assert codec.encode_response(first)["choices"][0]["message"]["tool_calls"][0]["id"] == ids[0]

def test_refusal_is_text_marked_as_refusal() -> None:
    reply = codec.decode_response(_reply({"content": None, "refusal": "I can't."}, finish="stop"))
    assert reply.stop == "refusal" and reply.text == "I can't."
    assert reply.message.parts[0].provider_data == {W: {"type": "refusal"}}  # type: ignore[union-attr]
    assert codec.encode_response(reply)["choices"][0]["message"]["refusal"] == "I can't."
    assert codec.decode_response(codec.encode_response(reply)) == reply

def test_custom_tool_calls_read_as_freeform_calls() -> None:
    custom = {"id": "c", "type": "custom", "custom": {"name": "sql", "input": "SELECT 1"}}
    reply = codec.decode_response(_reply({"tool_calls": [custom]}))
    assert reply.message.parts == (ToolCallPart(id="c", name="sql", arguments="SELECT 1",
                                                raw_arguments="SELECT 1", freeform=True),)
    assert codec.encode_response(reply)["choices"][0]["message"]["tool_calls"] == [custom]
    assert codec.decode_response(codec.encode_response(reply)) == reply

def test_reasoning_content_and_reasoning_fields() -> None:
    deepseek = codec.decode_response(_reply({"content": "x", "reasoning_content": "think"},
                                            finish="stop"))
    vllm = codec.decode_response(_reply({"content": "x", "reasoning": "think"}, finish="stop"))
    for reply, key in ((deepseek, "reasoning_content"), (vllm, "reasoning")):
        part = reply.message.parts[0]
        assert part == ReasoningPart(text="think", provider_data={W: {key: "think"}})
        assert reply.text == "x"
        sent = codec.encode_request(Request(model="m", messages=(Message.user("q"),
                                                                 reply.message)))
        assert sent["messages"][1] == {"role": "assistant", "content": "x", key: "think"}

def test_legacy_function_call_is_read_as_a_tool_call() -> None:
    reply = codec.decode_response(_reply({"content": None, "function_call": {
        "name": "f", "arguments": '{"a":1}'}}, finish="function_call"))
    assert reply.stop == "tool_calls"
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        (call_id_for("chatcmpl-q", 0), "f", {"a": 1})]
    assert codec.decode_response(codec.encode_response(reply)) == reply


# --- schema


@pytest.mark.parametrize(("choice", "wire"), [
    (ToolChoice(mode="auto"), "auto"),
    (ToolChoice(mode="none"), "none"),
    (ToolChoice(mode="required"), "required"),
    (ToolChoice(mode="tool", name="math.sum"),
     {"type": "function", "function": {"name": "math_sum"}}),
])
def test_tool_choice_mapping(choice: ToolChoice, wire: Any) -> None:
    request = Request(model="m", messages=(Message.user("hi"),),
                      tools=(ToolSpec(name="math.sum"),), tool_choice=choice)
    body = codec.encode_request(request)
    assert body["tool_choice"] == wire
    sdk_valid(body)
    parallel = codec.encode_request(Request(model="m", tools=(ToolSpec(name="f"),),
                                            tool_choice=ToolChoice(parallel=False)))
    assert parallel["parallel_tool_calls"] is False

def test_strict_tools_are_rewritten_and_reported() -> None:
    loose = {"type": "object", "properties": {"q": {"type": "string", "minLength": 1},
                                              "n": {"type": "integer"}}, "required": ["q"]}
    encoded = codec.encode(Request(model="m", tools=(
        ToolSpec(name="find", input_schema=loose, strict=True),
        ToolSpec(name="plain", input_schema=loose),
        ToolSpec(name="odd", input_schema={"anyOf": [{"type": "object"}]}, strict=True),
    )))
    strict_fn, plain_fn, odd_fn = (t["function"] for t in encoded.body["tools"])
    assert strict_fn["strict"] is True
    assert strict_fn["parameters"] == {
        "type": "object",
        "properties": {"q": {"type": "string"}, "n": {"type": ["integer", "null"]}},
        "required": ["q", "n"], "additionalProperties": False}
    assert "strict" not in plain_fn and plain_fn["parameters"] == loose
    assert "strict" not in odd_fn
    notes = {n.subject: n.detail for n in encoded.notes if n.kind == "schema_rewritten"}
    assert set(notes) == {"find", "odd"}
    assert "minLength" in notes["find"] and "'n'" not in notes["find"]
    assert "#/properties/n: optional property made required and nullable" in notes["find"]
    assert "without strict mode" in notes["odd"]
    assert loose["required"] == ["q"]  # the user's schema is untouched
    sdk_valid(encoded.body)


# --------------------------------------------------------------------------- media

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))
PDF = b"%PDF-1.7\n" + b"x" * 64


def _media_request(*, result_text: str = "the screen:") -> Request:
    from toolwire import Document, Image

    content = ((TextPart(text=result_text),) if result_text else ()) + (Image.from_bytes(PNG),)
    return Request(model="gpt-x", tools=(ToolSpec(name="shot"),), messages=(
        Message(role="user", parts=(TextPart(text="compare these"), Image.from_bytes(PNG),
                                    Document.from_bytes(PDF, name="report.pdf"))),
        Message(role="assistant", parts=(ToolCallPart.from_raw(id="call_1", name="shot",
                                                               raw_arguments="{}"),)),
        Message(role="tool", parts=(
            ToolResultPart(call_id="call_1", name="shot", content=content),
            ToolResultPart(call_id="call_2", content="plain"))),
        Message(role="user", parts=(TextPart(text="and now?"),)),
    ))


@pytest.mark.parametrize("result_text", ["the screen:", ""])
def test_media_fit_the_sdk_types_and_tool_result_media_move_to_a_user_message(
        result_text: str) -> None:
    req = _media_request(result_text=result_text)
    enc = codec.encode(req)
    body = enc.body
    sdk_valid(body)
    user = body["messages"][0]["content"]
    assert [i["type"] for i in user] == ["text", "image_url", "file"]
    assert user[1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert user[2]["file"]["filename"] == "report.pdf"
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "tool", "tool", "user", "user"]
    assert body["messages"][2]["content"]  # never empty: it says where the media went
    moved = body["messages"][4]["content"]
    assert moved[0] == {"type": "text", "text": "[media returned by tool call call_1]"}
    assert moved[1]["type"] == "image_url"
    assert [n.kind for n in enc.notes] == ["media_moved"]
    assert codec.decode_request(body) == replace(req, stream=False)


def test_media_chat_completions_refuses_are_stopped_before_sending() -> None:
    from toolwire import ConfigError, Document, Image

    big = Image.from_bytes(b"\x89PNG\r\n\x1a\n" + bytes(20 * 1024 * 1024))
    with pytest.raises(ConfigError, match="20 MB"):
        codec.encode(Request(model="m", messages=(Message(role="user", parts=(big,)),)))
    linked = Document.from_url("https://example.com/a.pdf")
    with pytest.raises(ConfigError, match="not a URL"):
        codec.encode(Request(model="m", messages=(Message(role="user", parts=(linked,)),)))


def test_broken_data_urls_are_named() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,@@@"}}]}]}
    with pytest.raises(WireFormatError, match="base64"):
        codec.decode_request(body)


@pytest.mark.parametrize("streamed", [False, True])
def test_a_media_history_fits_the_sdk_types(streamed: bool) -> None:
    """An image and a PDF from the user, an image from a tool, replies whole or streamed."""
    from strategies import media_history

    body = codec.encode_request(media_history("openai-chat", "m", streamed=streamed))
    sdk_valid(body)
    assert body["messages"][3]["content"][1]["type"] == "image_url"


@pytest.mark.parametrize(("message", "field"), [
    ({"role": "user", "content": ["hi"]}, "messages[0].content[0]"),
    ({"role": "user", "content": [{"type": "text", "text": "a"}, 5]}, "messages[0].content[1]"),
    ({"role": "assistant", "content": [None]}, "messages[0].content[0]"),
    ({"role": "tool", "tool_call_id": "c1", "content": [["x"]]}, "messages[0].content[0]"),
    ({"role": "system", "content": 5}, "messages[0].content"),
    ({"role": "user", "content": {"type": "text", "text": "a"}}, "messages[0].content"),
])
def test_content_the_api_refuses_is_refused_not_dropped(message: dict[str, Any],
                                                        field: str) -> None:
    """A message content that is not text, null or a list of part objects: the API (and its
    SDK's types) refuse the body, so reading it names the field and the emulator's check
    refuses it too; nothing of it is dropped without a word."""
    body = {"model": "m", "messages": [message]}
    with pytest.raises(pydantic_core.ValidationError):
        sdk_valid(body)
    with pytest.raises(WireFormatError, match=f"{re.escape(field)}: expected"):
        codec.decode_request(body)
    problem = codec.check_body(body)
    assert problem is not None and problem.startswith(f"Invalid type for '{field}'")
    with pytest.raises(WireFormatError, match=re.escape(field)):
        convert(body, "openai-chat", "anthropic-messages")
