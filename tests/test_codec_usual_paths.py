"""The usual-shape paths of the codecs agree with the general path.

Reading and writing the usual messages (plain text, calls, results, function tools) takes a
shorter path than the general one in the OpenAI chat and Anthropic codecs; the encode test runs
over every wire, so any codec that gains such a path is covered. These tests run the same
conversation through both and require the same result: on encode, every part and message is
given an empty ``provider_data`` (which carries nothing, but sends each of them down the
general path); on decode, every object of the body is wrapped in a read-only mapping that is
not a ``dict`` (which the usual paths do not take).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from strategies import call_ids, texts, tool_names, tool_rounds, tool_specs
from toolwire.codecs import get_codec
from toolwire.conversion import convert
from toolwire.transcript import Message, Request, TextPart, ToolCallPart, ToolResultPart, replace

SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large]
WIRES = ("openai-chat", "anthropic-messages", "openai-responses", "ollama-chat",
         "gemini-generate", "gemini-interactions")


@st.composite
def odd_rounds(draw: st.DrawFn) -> list[Message]:
    """A round whose ids and names need rewriting and whose results are empty or errors."""
    call_id = draw(call_ids) + draw(st.sampled_from(["", " x", ".1", "/é"]))
    name = draw(tool_names) + draw(st.sampled_from(["", ".get", " tool"]))
    call = ToolCallPart(id=call_id, name=name, arguments={"q": draw(texts)})
    result = ToolResultPart(call_id=call_id, name=name, is_error=draw(st.booleans()),
                            content=draw(st.sampled_from(["", "Error: already", "fine"])))
    return [Message(role="assistant", parts=(call,)), Message(role="tool", parts=(result,))]


@st.composite
def conversations(draw: st.DrawFn, *, text_args: bool) -> Request:
    messages = [Message.user(draw(texts))]
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["round", "odd", "user", "system", "answer", "empty"]))
        if kind == "round":
            messages += draw(tool_rounds(text_args=text_args))
        elif kind == "odd":
            messages += draw(odd_rounds())
        elif kind == "user":
            messages.append(Message(role="user", parts=tuple(
                TextPart(text=t) for t in draw(st.lists(texts, min_size=1, max_size=2)))))
        elif kind == "system":
            messages.append(Message(role="system", parts=(TextPart(text=draw(texts)),)))
        elif kind == "answer":
            messages.append(Message.assistant(draw(texts)))
        else:
            messages.append(Message(role="assistant", parts=(TextPart(text=""),)))
    return Request(model="m", system=draw(st.none() | texts), messages=tuple(messages),
                   tools=tuple(draw(st.lists(tool_specs(), max_size=3))), max_tokens=256)


def general(request: Request) -> Request:
    """The same request, with every message and part sent down the general path."""
    return replace(request, messages=tuple(
        replace(m, provider_data={}, parts=tuple(replace(p, provider_data={}) for p in m.parts))
        for m in request.messages))


def frozen(value: Any) -> Any:
    """``value`` with every object a read-only mapping that is not a dict."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return [frozen(v) for v in value]
    return value


@settings(max_examples=150, deadline=None, suppress_health_check=SLOW_OK)
@given(st.sampled_from(WIRES), st.booleans(), st.data())
def test_encode_takes_the_general_path_to_the_same_body(wire: str, text_args: bool,
                                                         data: st.DataObject) -> None:
    request = data.draw(conversations(text_args=text_args))
    codec = get_codec(wire)
    usual, slow = codec.encode(request), codec.encode(general(request))
    assert usual.body == slow.body
    assert usual.notes == slow.notes


@settings(max_examples=150, deadline=None, suppress_health_check=SLOW_OK)
@given(st.booleans(), st.data())
def test_openai_chat_decode_takes_the_general_path_to_the_same_request(
        text_args: bool, data: st.DataObject) -> None:
    codec = get_codec("openai-chat")
    body = json.loads(json.dumps(codec.encode_request(data.draw(conversations(
        text_args=text_args)))))
    assert codec.decode_request(body) == codec.decode_request(frozen(body))


@settings(max_examples=100, deadline=None, suppress_health_check=SLOW_OK)
@given(st.data())
def test_conversion_to_anthropic_matches_the_general_path(data: st.DataObject) -> None:
    body = json.loads(json.dumps(get_codec("openai-chat").encode_request(
        data.draw(conversations(text_args=True)))))
    usual = convert(body, "openai-chat", "anthropic-messages")
    slow = convert(frozen(body), "openai-chat", "anthropic-messages")
    assert usual.body == slow.body and usual.losses == slow.losses
    assert usual.request == slow.request


def test_a_reply_with_plain_calls_reads_the_same_either_way() -> None:
    codec = get_codec("openai-chat")
    body = {"id": "r1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": "Two.", "tool_calls": [
                    {"id": "c1", "type": "function",
                     "function": {"name": "f", "arguments": '{"a": [1, 2.5, "é"]}'}},
                    {"id": "c2", "type": "function", "function": {"name": "g", "arguments": ""}},
                    {"id": "c3", "type": "function",
                     "function": {"name": "f", "arguments": '{"a": '}},
                ]}}]}
    reply = codec.decode_response(body)
    assert reply == codec.decode_response(frozen(body))
    first, empty, broken = reply.tool_calls
    assert first.arguments == {"a": [1, 2.5, "é"]} and first.parse_error is None
    assert empty.arguments == {} and empty.raw_arguments == ""
    assert broken.arguments is None and broken.parse_error is not None
