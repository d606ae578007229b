"""Chat Completions custom tools (freeform tools, a text format or a Lark or regex grammar) and
their calls, read as the canonical freeform tools and calls the Responses codec reads, written
back as they came, and carried between the two OpenAI wires with nothing lost."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from openai.types.chat import ChatCompletion
from pydantic import TypeAdapter

from sdk_types import assert_chat_valid, assert_sdk_valid, assert_wire_valid
from toolwire.codecs import WIRES, get_codec
from toolwire.codecs.registry import get_wire
from toolwire.conversion import convert
from toolwire.events import StreamEnd, ToolCallDelta
from toolwire.transcript import (
    Grammar,
    Message,
    Request,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
    ToolSpec,
)
from toolwire.transcript_json import from_json, to_json

C, R = "openai-chat", "openai-responses"
PATCH = "*** Begin Patch\n*** Add File: a.txt\n+one\n*** End Patch"
LARK = 'start: "*** Begin Patch" /(.|\\n)*/ "*** End Patch"'
COMPLETION = TypeAdapter(ChatCompletion)


def chat_body(**more: Any) -> dict[str, Any]:
    return {"model": "gpt-5.5", "messages": [
        {"role": "user", "content": "patch it"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "custom", "custom": {"name": "apply_patch",
                                                         "input": PATCH}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "done"},
        {"role": "user", "content": "and count the files"}],
        "tools": [
            {"type": "function", "function": {"name": "ls", "parameters": {
                "type": "object", "properties": {}}}},
            {"type": "custom", "custom": {"name": "apply_patch", "description": "Edit files.",
                                          "format": {"type": "grammar", "grammar": {
                                              "definition": LARK, "syntax": "lark"}}}},
            {"type": "custom", "custom": {"name": "count", "format": {
                "type": "grammar", "grammar": {"definition": "\\d+", "syntax": "regex"}}}},
            {"type": "custom", "custom": {"name": "note", "format": {"type": "text"}}},
            {"type": "custom", "custom": {"name": "sql"}}],
        **more}


def responses_body() -> dict[str, Any]:
    return {"model": "gpt-5.5", "input": [
        {"role": "user", "content": "patch it"},
        {"type": "custom_tool_call", "call_id": "call_1", "name": "apply_patch", "input": PATCH},
        {"type": "custom_tool_call_output", "call_id": "call_1", "output": "done"},
        {"role": "user", "content": "and count the files"}],
        "tools": [{"type": "custom", "name": "apply_patch", "description": "Edit files.",
                   "format": {"type": "grammar", "syntax": "lark", "definition": LARK}},
                  {"type": "custom", "name": "count",
                   "format": {"type": "grammar", "syntax": "regex", "definition": "\\d+"}},
                  {"type": "custom", "name": "sql"}],
        "tool_choice": {"type": "custom", "name": "apply_patch"}}


def test_chat_custom_tools_and_calls_read_as_freeform_tools_and_calls() -> None:
    request = get_codec(C).decode_request(chat_body(
        tool_choice={"type": "custom", "custom": {"name": "apply_patch"}}))
    assert request.tools[1:] == (
        ToolSpec(name="apply_patch", description="Edit files.", freeform=True,
                 grammar=Grammar(syntax="lark", definition=LARK)),
        ToolSpec(name="count", freeform=True, grammar=Grammar(syntax="regex", definition="\\d+")),
        ToolSpec(name="note", freeform=True), ToolSpec(name="sql", freeform=True))
    assert request.tool_choice == ToolChoice(mode="tool", name="apply_patch")
    (call,) = request.messages[1].tool_calls
    assert call == ToolCallPart(id="call_1", name="apply_patch", arguments=PATCH,
                                raw_arguments=PATCH, freeform=True)
    assert request.messages[2].parts == (ToolResultPart(call_id="call_1", content="done",
                                                        name="apply_patch"),)


@pytest.mark.parametrize("choice", [None, {"type": "custom", "custom": {"name": "sql"}},
                                    {"type": "allowed_tools", "allowed_tools": {
                                        "mode": "required", "tools": [
                                            {"type": "custom", "custom": {"name": "sql"}}]}}])
@pytest.mark.parametrize("stream", [False, True])
def test_a_chat_body_with_custom_tools_goes_back_to_chat_as_it_came(
        choice: Any, stream: bool) -> None:
    body = chat_body(**({"tool_choice": choice} if choice else {}),
                     **({"stream": True, "stream_options": {"include_usage": True}}
                        if stream else {}))
    assert_chat_valid(body)
    again = get_codec(C).encode(get_codec(C).decode_request(body))
    assert again.body == body and not again.notes
    in_its_order = {key: again.body[key] for key in body}  # the top level in the body's order
    assert json.dumps(in_its_order) == json.dumps(body)  # every inner object's keys in order


def test_a_custom_call_with_fields_of_its_own_keeps_them() -> None:
    body = chat_body()
    body["messages"][1]["tool_calls"][0]["custom"]["extra"] = 1
    body["messages"][1]["tool_calls"][0]["extra"] = {"a": 2}
    body["tools"][4]["custom"]["extra"] = "x"
    body["tools"][4]["extra"] = True
    request = get_codec(C).decode_request(body)
    assert request.messages[1].tool_calls[0].freeform
    assert get_codec(C).encode_request(request) == body


def test_responses_custom_tools_and_calls_go_to_chat_with_nothing_lost() -> None:
    done = convert(responses_body(), R, C)
    assert done.losses == ()
    assert done.body["tools"] == [
        {"type": "custom", "custom": {"name": "apply_patch", "description": "Edit files.",
                                      "format": {"type": "grammar", "grammar": {
                                          "definition": LARK, "syntax": "lark"}}}},
        {"type": "custom", "custom": {"name": "count", "format": {"type": "grammar", "grammar": {
            "definition": "\\d+", "syntax": "regex"}}}},
        {"type": "custom", "custom": {"name": "sql"}}]
    assert done.body["tool_choice"] == {"type": "custom", "custom": {"name": "apply_patch"}}
    assert done.body["messages"][1]["tool_calls"] == [{"id": "call_1", "type": "custom", "custom": {
        "name": "apply_patch", "input": PATCH}}]
    assert done.body["messages"][2] == {"role": "tool", "tool_call_id": "call_1",
                                        "content": "done"}
    assert_chat_valid(done.body)


def test_chat_custom_tools_and_calls_go_to_responses_with_nothing_lost() -> None:
    body = chat_body(tool_choice={"type": "custom", "custom": {"name": "apply_patch"}})
    done = convert(body, C, R)
    assert done.losses == ()
    assert done.body["tools"][1] == responses_body()["tools"][0]
    assert done.body["tools"][3] == {"type": "custom", "name": "note"}  # text: the default
    assert done.body["tool_choice"] == {"type": "custom", "name": "apply_patch"}
    assert done.body["input"][1:3] == responses_body()["input"][1:3]
    assert_sdk_valid(done.body)
    back = convert(done.body, R, C)
    del body["tools"][3]["custom"]["format"]
    assert back.losses == () and back.body == body


@pytest.mark.parametrize("target", [w for w in WIRES if not get_wire(w).freeform_calls])
def test_chat_custom_goes_to_another_wire_as_responses_custom_does(target: str) -> None:
    from_chat = convert(chat_body(), C, target, model="gpt-5.5")
    from_responses = convert(responses_body() | {"tools": [
        {"type": "function", "name": "ls", "parameters": {"type": "object", "properties": {}},
         "strict": False}, *responses_body()["tools"][:2],
        {"type": "custom", "name": "note", "format": {"type": "text"}},
        responses_body()["tools"][2]]}, R, target, model="gpt-5.5")
    kinds = sorted(n.kind for n in from_chat.losses)
    assert kinds == sorted(n.kind for n in from_responses.losses if n.kind != "choice_changed")
    assert {"custom_tool", "custom_tool_call"} <= set(kinds)
    again = get_codec(target).decode_request(from_chat.body, model="gpt-5.5")
    (call,) = [p for m in again.messages for p in m.tool_calls]
    assert call.arguments == {"input": PATCH} and not call.freeform
    patch = next(t for t in again.tools if t.name == "apply_patch")
    assert not patch.freeform and patch.input_schema["required"] == ["input"]
    assert_wire_valid(target, from_chat.body, model="gpt-5.5")


def test_a_reply_with_a_custom_call_is_a_freeform_call_both_ways() -> None:
    raw = {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-5.5",
           "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
               "role": "assistant", "content": None, "tool_calls": [
                   {"id": "call_9", "type": "custom", "custom": {"name": "apply_patch",
                                                                "input": PATCH}}]}}]}
    COMPLETION.validate_python(raw)
    reply = get_codec(C).decode_response(raw)
    (call,) = reply.message.tool_calls
    assert (call.freeform, call.raw_arguments, call.id, reply.stop) == (
        True, PATCH, "call_9", "tool_calls")
    body = get_codec(C).encode_response(reply)
    COMPLETION.validate_python(body)
    assert body["choices"][0]["message"]["tool_calls"] == raw["choices"][0]["message"][
        "tool_calls"]


def test_a_custom_call_sent_in_pieces_is_joined() -> None:
    head = {"id": "chatcmpl-2", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    pieces = [{"index": 0, "id": "call_3", "type": "custom",
               "custom": {"name": "apply_patch", "input": PATCH[:10]}},
              {"index": 0, "custom": {"input": PATCH[10:]}}]
    chunks = [{**head, "choices": [{"index": 0, "delta": {"tool_calls": [p]},
                                    "finish_reason": None}]} for p in pieces]
    chunks.append({**head, "choices": [{"index": 0, "delta": {},
                                        "finish_reason": "tool_calls"}]})
    data = [f"data: {json.dumps(c)}\n\n".encode() for c in chunks] + [b"data: [DONE]\n\n"]
    events = list(get_codec(C).decode_stream(data))
    assert "".join(e.fragment for e in events if isinstance(e, ToolCallDelta)) == PATCH
    end = events[-1]
    assert isinstance(end, StreamEnd)
    (call,) = end.reply.message.tool_calls
    assert (call.id, call.name, call.raw_arguments, call.freeform) == (
        "call_3", "apply_patch", PATCH, True)


def test_a_freeform_tool_made_here_is_a_custom_tool_on_both_openai_wires() -> None:
    tool = ToolSpec(name="apply_patch", description="Edit files.", freeform=True,
                    grammar=Grammar(syntax="lark", definition=LARK))
    request = Request(model="gpt-5.5", messages=(Message.user("patch it"),), tools=(tool,),
                      tool_choice=ToolChoice(mode="tool", name="apply_patch"))
    chat = get_codec(C).encode_request(request)
    assert chat["tools"] == chat_body()["tools"][1:2]
    assert chat["tool_choice"] == {"type": "custom", "custom": {"name": "apply_patch"}}
    assert_chat_valid(chat)
    responses = get_codec(R).encode_request(request)
    assert responses["tools"] == responses_body()["tools"][:1]
    assert_sdk_valid(responses)
    for wire, body in ((C, chat), (R, responses)):
        assert get_codec(wire).decode_request(body).tools == (tool,)


def test_the_saved_transcript_keeps_a_freeform_tool_and_its_grammar() -> None:
    tool = ToolSpec(name="apply_patch", freeform=True,
                    grammar=Grammar(syntax="lark", definition=LARK))
    assert from_json(json.loads(json.dumps(to_json(tool)))) == tool


NAMES = st.from_regex(r"[a-zA-Z0-9_-]{1,20}", fullmatch=True)
FORMATS = st.one_of(st.none(), st.builds(lambda d, s: {"type": "grammar", "grammar": {
    "definition": d, "syntax": s}}, st.text(min_size=1), st.sampled_from(["lark", "regex"])))


@given(name=NAMES, description=st.text(), fmt=FORMATS, text=st.text(), call_id=NAMES)
def test_any_custom_tool_and_call_go_chat_to_responses_and_back_unchanged(
        name: str, description: str, fmt: Any, text: str, call_id: str) -> None:
    custom: dict[str, Any] = {"name": name}
    if description:
        custom["description"] = description
    if fmt is not None:
        custom["format"] = fmt
    body = {"model": "m", "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "custom", "custom": {"name": name, "input": text}}]},
        {"role": "tool", "tool_call_id": call_id, "content": "ok"}],
        "tools": [{"type": "custom", "custom": custom}]}
    assert get_codec(C).encode_request(get_codec(C).decode_request(body)) == body
    there = convert(body, C, R)
    back = convert(there.body, R, C)
    assert there.losses == back.losses == () and back.body == body
