"""Every field a client sends is carried into the canonical transcript, kept for the same
wire's re-encode, or named in the loss report: checked over bodies built from the SDKs'
request types with fields of their own added anywhere a client may put one."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolwire.codecs import WIRES
from toolwire.conversion import convert

ANTHROPIC = {
    "model": "claude-sonnet-4-5", "max_tokens": 256, "system": "Be brief.",
    "tools": [{"name": "get_weather", "description": "Weather for a city.",
               "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}],
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather",
             "input": {"city": "Paris"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"}]}],
}
RESPONSES = {
    "model": "gpt-5.5", "instructions": "Be brief.",
    "tools": [{"type": "function", "name": "get_weather", "description": "Weather.",
               "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}],
    "input": [
        {"type": "message", "role": "user",
         "content": [{"type": "input_text", "text": "Weather in Paris?"}]},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather",
         "arguments": "{\"city\":\"Paris\"}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}],
}
CHAT = {
    "model": "gpt-4.1",
    "tools": [{"type": "function", "function": {
        "name": "get_weather", "description": "Weather.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}],
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}],
}
GEMINI = {
    "model": "gemini-2.5-flash", "systemInstruction": {"parts": [{"text": "Be brief."}]},
    "tools": [{"functionDeclarations": [{
        "name": "get_weather", "description": "Weather.",
        "parametersJsonSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}]}],
    "contents": [
        {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "get_weather",
                                                      "args": {"city": "Paris"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "get_weather",
                                                         "response": {"output": "sunny"}}}]}],
}
OLLAMA = {
    "model": "llama3.2", "stream": False,
    "tools": CHAT["tools"],
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
        {"role": "tool", "tool_name": "get_weather", "content": "sunny"}],
}
CONVERSE = {
    "modelId": "m", "system": [{"text": "Be brief."}],
    "toolConfig": {"tools": [{"toolSpec": {
        "name": "get_weather", "description": "Weather.",
        "inputSchema": {"json": {"type": "object",
                                 "properties": {"city": {"type": "string"}}}}}}]},
    "messages": [
        {"role": "user", "content": [{"text": "Weather in Paris?"}]},
        {"role": "assistant", "content": [{"toolUse": {
            "toolUseId": "tooluse_1", "name": "get_weather", "input": {"city": "Paris"}}}]},
        {"role": "user", "content": [{"toolResult": {
            "toolUseId": "tooluse_1", "content": [{"text": "sunny"}], "status": "success"}}]}],
}
INTERACTIONS = {
    "model": "gemini-3-flash", "system_instruction": "Be brief.",
    "tools": [{"type": "function", "name": "get_weather", "description": "Weather.",
               "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}],
    "input": [
        {"type": "user_input", "content": [{"type": "text", "text": "Weather in Paris?"}]},
        {"type": "function_call", "id": "call_1", "name": "get_weather",
         "arguments": {"city": "Paris"}},
        {"type": "function_result", "call_id": "call_1", "name": "get_weather",
         "result": "sunny"}],
}
BASES = {"anthropic-messages": ANTHROPIC, "openai-responses": RESPONSES, "openai-chat": CHAT,
         "gemini-generate": GEMINI, "ollama-chat": OLLAMA, "bedrock-converse": CONVERSE,
         "gemini-interactions": INTERACTIONS}
OPEN = ("anthropic-messages", "openai-chat", "openai-responses")
"""The wires whose SDKs send fields of the caller's own anywhere (``extra_body`` and open
dicts). botocore, google-genai and ollama's client refuse an unknown field before sending, but
a body reaches toolwire from other clients too (the proxy, ``toolwire convert``), so the same
rule is drawn for every wire."""


def test_every_wire_has_a_base_body() -> None:
    assert set(BASES) == set(WIRES)


def test_each_wires_sdk_shaped_body_goes_back_to_it_whole() -> None:
    for wire, body in BASES.items():
        same = convert(body, wire, wire, model="m")
        again = convert(same.body, wire, wire, model="m")
        assert same.losses == () and again.request == same.request, wire
        for target in WIRES:  # every other wire takes what it gets, and nothing goes unsaid
            other = convert(body, wire, target, model="m")
            assert "get_weather" in json.dumps(other.body), (wire, target)


def places(body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every object of a body a client may add a field to: the body, a message or item, a
    content block, a tool."""
    found: list[tuple[str, dict[str, Any]]] = [("body", body)]
    for key in ("messages", "input", "tools", "contents", "system"):
        for n, item in enumerate(body.get(key) if isinstance(body.get(key), list) else ()):
            found.append((f"{key}[{n}]", item))
            content = item.get("content", item.get("parts"))
            for m, block in enumerate(content if isinstance(content, list) else ()):
                found.append((f"{key}[{n}].content[{m}]", block))
    return found


def camel(name: str) -> str:
    """``name`` in lowerCamelCase: the same field to Google's JSON, which Gemini's codec
    writes."""
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def contains(whole: Any, name: str, value: Any) -> bool:
    text = json.dumps(whole, sort_keys=True)
    return any(f"{json.dumps(n)}: {json.dumps(value)}" in text for n in (name, camel(name)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wire=st.sampled_from(sorted(BASES)), where=st.integers(0, 50),
       name=st.from_regex(r"x_[a-z]{3,8}", fullmatch=True),
       value=st.one_of(st.booleans(), st.integers(-5, 5), st.text("abc", max_size=4)))
def test_every_field_is_carried_kept_or_named(wire: str, where: int, name: str,
                                              value: Any) -> None:
    body = copy.deepcopy(BASES[wire])
    spots = places(body)
    label, spot = spots[where % len(spots)]
    spot[name] = value
    same = convert(body, wire, wire, model="m")
    assert contains(same.body, name, value) or any(
        n in str(note) for note in same.losses for n in (name, camel(name))), (
        f"{label}.{name} was neither sent back to {wire} nor named")
    for target in WIRES:
        if target == wire:
            continue
        other = convert(body, wire, target, model="m")
        assert any(n in f"{note.subject} {note.detail}" for note in other.losses
                   for n in (name, camel(name))), (
            f"{label}.{name} went to {target} unnamed")
