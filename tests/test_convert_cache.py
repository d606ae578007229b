"""Cache breakpoints across the two wires that mark blocks: Anthropic's ``cache_control`` and
Bedrock Converse's ``cachePoint`` stay in the same places when a body goes from one to the
other, and the Converse body is one botocore's own validator takes."""

from __future__ import annotations

from typing import Any

from sdk_types import assert_wire_valid
from toolwire.conversion import convert

A, B = "anthropic-messages", "bedrock-converse"
EPH = {"type": "ephemeral"}


def anthropic_body() -> dict[str, Any]:
    return {
        "model": "claude-x", "max_tokens": 100,
        "system": [{"type": "text", "text": "Be brief.",
                    "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
        "tools": [{"name": "a", "input_schema": {"type": "object"}},
                  {"name": "b", "input_schema": {"type": "object"}, "cache_control": EPH}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": EPH}]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "a", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok",
                 "cache_control": EPH}]}]}


def test_anthropic_breakpoints_become_converse_cache_points_in_the_same_places() -> None:
    done = convert(anthropic_body(), A, B)
    body = done.body
    assert body["system"] == [{"text": "Be brief."},
                              {"cachePoint": {"type": "default", "ttl": "1h"}}]
    assert body["toolConfig"]["tools"][1:] == [
        {"toolSpec": {"name": "b", "inputSchema": {"json": {"type": "object"}}}},
        {"cachePoint": {"type": "default"}}]
    assert body["messages"][0]["content"] == [{"text": "hi"}, {"cachePoint": {"type": "default"}}]
    assert body["messages"][2]["content"][1] == {"cachePoint": {"type": "default"}}
    assert "toolResult" in body["messages"][2]["content"][0]
    assert not [n for n in done.losses if "cache" in n.detail], done.losses
    assert_wire_valid(B, body, model="anthropic.claude-x")


def test_converse_cache_points_become_anthropic_breakpoints_and_come_back_the_same() -> None:
    there = convert(anthropic_body(), A, B).body
    back = convert(there, B, A, model="claude-x")
    assert back.body == anthropic_body()
    assert back.losses == ()


def test_a_marked_system_block_beside_another_field_keeps_the_field_named_as_lost() -> None:
    body = anthropic_body()
    body["system"][0]["citations"] = {"enabled": True}
    done = convert(body, A, B)
    assert done.body["system"][-1] == {"cachePoint": {"type": "default", "ttl": "1h"}}
    assert any("system" in n.subject for n in done.losses)
