"""Tools added mid-conversation: Anthropic's ``tool_addition`` blocks read as the canonical
tools-added message and written back the same; a tools-added message written as a reference
to a deferred ``tools`` entry (the tool list before it unchanged, so the cached prefix holds),
under the beta the SDK names; the Responses API's ``additional_tools`` item for it, and the
wires without a mid-conversation form offering the tools from the start, with a note."""

from __future__ import annotations

from typing import Any

from sdk_types import assert_anthropic_valid, assert_sdk_valid, assert_wire_valid
from toolwire.codecs import get_codec
from toolwire.conversion import convert
from toolwire.transcript import Message, Request, TextPart, ToolSpec

A, R, B = "anthropic-messages", "openai-responses", "bedrock-converse"
OBJ = {"type": "object", "properties": {}}
READ = ToolSpec(name="read", description="Read a file.", input_schema=OBJ)
LATE = ToolSpec(name="late", description="Found later.", input_schema=OBJ)


def referenced(model: str = "claude-opus-4-8") -> dict[str, Any]:
    return {"model": model, "max_tokens": 100,
            "tools": [{"name": "read", "input_schema": OBJ},
                      {"name": "late", "description": "Found later.", "input_schema": OBJ,
                       "defer_loading": True}],
            "messages": [{"role": "user", "content": "hi"},
                         {"role": "system", "content": [
                             {"type": "text", "text": "late is yours now"},
                             {"type": "tool_addition",
                              "tool": {"type": "tool_reference", "name": "late"}}]}]}


def test_a_tool_addition_reads_as_a_system_message_adding_the_tool() -> None:
    request = get_codec(A).decode_request(referenced())
    last = request.messages[-1]
    assert last.role == "system" and last.parts == (TextPart(text="late is yours now"),)
    assert [(t.name, t.deferred) for t in last.tools] == [("late", False)]
    assert [t.name for t in request.tools] == ["read"]  # offered where it is added


def test_a_tool_addition_goes_back_as_it_came_with_its_beta() -> None:
    codec = get_codec(A)
    encoded = codec.encode(codec.decode_request(referenced()))
    assert encoded.body == referenced()
    assert encoded.headers == {"anthropic-beta": "mid-conversation-tool-changes-2026-07-01"}
    assert encoded.notes == ()
    assert_anthropic_valid(encoded.body, beta=True)


def test_a_tool_defined_in_its_addition_is_read_and_goes_back_under_the_inline_beta() -> None:
    body = referenced()
    body["tools"] = body["tools"][:1]
    body["messages"][1]["content"][1]["tool"] = {
        "type": "tool_definition", "definition": {"name": "late", "input_schema": OBJ}}
    codec = get_codec(A)
    request = codec.decode_request(body)
    assert [t.name for t in request.messages[-1].tools] == ["late"]
    encoded = codec.encode(request)
    assert encoded.body == body
    assert encoded.headers == {"anthropic-beta": "inline-tools-2026-09-15"}
    assert_anthropic_valid(encoded.body, beta=True)


def run(*, added: bool) -> Request:
    messages = [Message.user("hi"), Message.assistant("looking")]
    if added:
        messages += [Message.user("go on"), Message(role="system", tools=(LATE,))]
    return Request(model="claude-opus-4-8", max_tokens=100, tools=(READ,),
                   messages=tuple(messages))


def test_a_tools_added_message_is_a_reference_to_a_deferred_tool_after_the_others() -> None:
    before = get_codec(A).encode(run(added=False)).body
    encoded = get_codec(A).encode(run(added=True))
    body = encoded.body
    assert body["tools"][:len(before["tools"])] == before["tools"]  # the cached prefix holds
    assert body["tools"][-1] == {"name": "late", "description": "Found later.",
                                 "input_schema": OBJ, "defer_loading": True}
    assert body["messages"][:2] == before["messages"]
    assert body["messages"][-1] == {"role": "system", "content": [
        {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "late"}}]}
    assert encoded.headers == {"anthropic-beta": "mid-conversation-tool-changes-2026-07-01"}
    assert not [n for n in encoded.notes if n.kind == "tools_moved"]
    assert_anthropic_valid(body, beta=True)
    again = get_codec(A).decode_request(body)
    assert again.messages[-1].tools == (LATE,) and again.tools == (READ,)


def test_a_model_without_system_messages_gets_the_addition_in_the_users_turn() -> None:
    request = Request(model="claude-sonnet-4-5", max_tokens=100, tools=(READ,),
                      messages=run(added=True).messages)
    body = get_codec(A).encode(request).body
    assert body["messages"][-1]["role"] == "user"
    assert body["messages"][-1]["content"][-1]["type"] == "tool_addition"
    assert_anthropic_valid(body, beta=True)
    again = get_codec(A).decode_request(body)
    assert again.messages[-1].role == "system" and again.messages[-1].tools == (LATE,)
    assert get_codec(A).encode(again).body == body  # back in the user's turn, as read


def test_tools_added_before_the_conversation_are_offered_from_the_start() -> None:
    request = Request(model="claude-opus-4-8", max_tokens=100, tools=(READ,), messages=(
        Message(role="system", tools=(LATE,)), Message.user("hi")))
    encoded = get_codec(A).encode(request)
    assert [t["name"] for t in encoded.body["tools"]] == ["read", "late"]
    assert all(m["role"] == "user" for m in encoded.body["messages"])
    assert [n.kind for n in encoded.notes] == ["tools_moved"]


def test_an_anthropic_addition_converts_to_an_additional_tools_item() -> None:
    done = convert(referenced(), A, R)
    item = done.body["input"][-1]
    assert item["type"] == "additional_tools" and [t["name"] for t in item["tools"]] == ["late"]
    assert [t["name"] for t in done.body["tools"]] == ["read"]
    assert done.losses == ()
    assert_sdk_valid(done.body)
    back = convert(done.body, R, A)
    assert back.body["messages"][-1]["content"][-1] == {
        "type": "tool_addition", "tool": {"type": "tool_reference", "name": "late"}}


def test_converse_has_no_addition_so_the_tool_is_offered_from_the_start() -> None:
    done = convert(referenced(), A, B)
    names = [t["toolSpec"]["name"] for t in done.body["toolConfig"]["tools"]]
    assert names == ["read", "late"]
    assert "tools_moved" in {n.kind for n in done.losses}
    assert_wire_valid(B, done.body, model="anthropic.claude-opus-4-8")
