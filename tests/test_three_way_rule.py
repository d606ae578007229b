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
BASES = {"anthropic-messages": ANTHROPIC, "openai-responses": RESPONSES, "openai-chat": CHAT}


def places(body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every object of a body a client may add a field to: the body, a message or item, a
    content block, a tool."""
    found: list[tuple[str, dict[str, Any]]] = [("body", body)]
    for key in ("messages", "input", "tools"):
        for n, item in enumerate(body.get(key) or ()):
            found.append((f"{key}[{n}]", item))
            content = item.get("content")
            for m, block in enumerate(content if isinstance(content, list) else ()):
                found.append((f"{key}[{n}].content[{m}]", block))
    return found


def contains(whole: Any, name: str, value: Any) -> bool:
    return f"{json.dumps(name)}: {json.dumps(value)}" in json.dumps(whole, sort_keys=True)


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
    same = convert(body, wire, wire)
    assert contains(same.body, name, value) or any(name in str(n) for n in same.losses), (
        f"{label}.{name} was neither sent back to {wire} nor named")
    for target in WIRES:
        if target == wire:
            continue
        other = convert(body, wire, target)
        assert any(name in f"{n.subject} {n.detail}" for n in other.losses), (
            f"{label}.{name} went to {target} unnamed")
