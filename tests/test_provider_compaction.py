"""The provider's own context management as a compaction strategy: Anthropic's compaction and
context editing, and the Responses API's compaction, asked for on every request, modelled by
the emulator (it compacts once the prompt reaches the trigger, reads nothing before the latest
summary, clears old tool results), their summaries going back as they came; where the wire has
none the harness clears instead and says so. Over loopback HTTP; requests validate against the
SDKs' types."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sdk_types import assert_anthropic_valid, assert_sdk_valid
from toolwire import Agent, ContextManagement, Message, Request, RunStop, Tool
from toolwire.codecs import get_codec
from toolwire.emulator import Emulator
from toolwire.http.client import RetryPolicy
from toolwire.http.client import model as make_model
from toolwire.testing import ScriptedModel, call, reply
from toolwire.transcript import OpaquePart, ToolResultPart
from toolwire.transcript_json import from_json, to_json

WINDOW = 6_000
TURNS = 14


def _tools() -> list[Tool]:
    def read_file(path: str) -> str:
        """Read a file."""
        return "".join(f"line {n} of {path}: some text to read\n" for n in range(50))

    return [Tool.from_function(read_file)]


def _script() -> list[Any]:
    return [*(reply(call("read_file", {"path": f"f{k}.py"}, id=f"call_{k}"))
              for k in range(TURNS)), reply("All read.")]


async def _run(provider: str, compaction: Any) -> tuple[Any, list[Any]]:
    async with Emulator(_script(), bill=True, windows={"m": WINDOW}) as emu:
        model = make_model(f"{provider}:m@{emu.base_url}", env={},
                           retry=RetryPolicy(base=0.001, max_wait=0.01))
        agent = Agent(model=model, tools=_tools(), compaction=compaction,
                      context_window=WINDOW)
        result = await agent.arun("Read the files f0.py to f13.py.")
        await model.aclose()
    return result, list(emu.received)


def _compactions(message: Any) -> list[OpaquePart]:
    return [p for p in message.parts if isinstance(p, OpaquePart) and p.kind == "compaction"]


@pytest.mark.parametrize("provider", ["anthropic", "openai-responses"])
async def test_the_provider_compacts_and_the_run_finishes_inside_the_window(
        provider: str) -> None:
    result, received = await _run(provider, "provider")
    assert result.stop is RunStop.ANSWERED, result.error
    bodies = [r.body for r in received]
    trigger = int(0.8 * WINDOW)
    if provider == "anthropic":
        assert bodies[0]["context_management"] == {"edits": [
            {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": trigger}}]}
        assert received[0].headers.get("anthropic-beta") == "compact-2026-01-12"
        for body in bodies:
            assert_anthropic_valid(body, beta=True)
    else:
        assert bodies[0]["context_management"] == [
            {"type": "compaction", "compact_threshold": trigger}]
        for body in bodies:
            assert_sdk_valid(body)
    # the provider compacted at least once; each time the run dropped what came before
    compacted = [n for n in result.notes if "compacted (provider)" in n]
    assert compacted, result.notes
    summaries = [p for m in result.messages for p in _compactions(m)]
    assert summaries and len(result.messages) < 2 * TURNS
    # the summary went back exactly as it came, and nothing before it but the task
    after = bodies[-1]
    sent = json.dumps(after)
    assert json.dumps(summaries[-1].payload)[1:-1] in sent
    assert sent.count("Read the files f0.py") == 1
    assert len(received) == TURNS + 1


async def test_without_any_compaction_the_same_run_overflows_the_window() -> None:
    result, _ = await _run("anthropic", None)
    assert result.stop is RunStop.CONTEXT_FULL


async def test_context_editing_clears_old_tool_results_on_the_provider_side() -> None:
    codec = get_codec("anthropic-messages")
    setting = ContextManagement(compact=False, clear_tool_results=True, clear_thinking=True,
                                trigger=300, keep=1, keep_thinking=2)
    messages: list[Message] = [Message.user("read them")]
    for k in range(4):
        messages.append(reply(call("read_file", {"path": f"f{k}"}, id=f"c{k}")).message)
        messages.append(Message(role="tool", parts=(
            ToolResultPart(call_id=f"c{k}", content="x" * 900, name="read_file"),)))
    request = Request(model="m", max_tokens=100, messages=tuple(messages),
                      context_management=setting)
    encoded = codec.encode(request)
    assert encoded.body["context_management"] == {"edits": [
        {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 2}},
        {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 300},
         "keep": {"type": "tool_uses", "value": 1}}]}
    assert encoded.headers == {"anthropic-beta": "context-management-2025-06-27"}
    assert_anthropic_valid(encoded.body, beta=True)
    assert codec.decode_request(encoded.body).context_management == setting
    assert from_json(to_json(request)) == request
    # the emulator's provider reads the old results cleared: far fewer tokens billed
    async with Emulator([reply("ok"), reply("ok")], bill=True) as emu:
        model = make_model(f"anthropic:m@{emu.base_url}", env={})
        edited = await model.complete(request)
        whole = await model.complete(Request(model="m", max_tokens=100,
                                             messages=tuple(messages)))
        await model.aclose()
    assert edited.usage.input_tokens * 2 < whole.usage.input_tokens


def test_a_compaction_block_streams_and_goes_back_as_it_came() -> None:
    codec = get_codec("anthropic-messages")
    body = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
            "content": [{"type": "compaction", "content": "Summary: read f0 to f5."},
                        {"type": "text", "text": "Going on."}],
            "stop_reason": "compaction", "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5}}
    whole = codec.decode_response(body)
    assert whole.stop == "pause_turn" and _compactions(whole.message)
    streamed = list(codec.decode_stream(codec.encode_stream(whole)))[-1].reply
    assert streamed.message == whole.message
    events = b"".join(codec.encode_stream(whole)).decode()
    assert '"compaction_delta"' in events
    sent = codec.encode(Request(model="m", max_tokens=9, messages=(
        Message.user("go"), whole.message, Message.user("more")))).body
    assert sent["messages"][1]["content"][0] == body["content"][0]  # type: ignore[index]


def test_where_the_wire_has_none_the_harness_clears_and_says_so() -> None:
    model = ScriptedModel(_script()[-2:])
    agent = Agent(model=model, tools=_tools(), compaction="provider", context_window=WINDOW)
    result = agent.run("go")
    assert result.stop is RunStop.ANSWERED
    assert [r.context_management for r in model.requests] == [None, None]
    assert any("does not manage the context itself" in n for n in result.notes)
    chat = get_codec("openai-chat").encode(Request(
        model="m", messages=(Message.user("go"),), context_management=ContextManagement()))
    assert "context_management" not in chat.body
    assert any(n.kind == "field_dropped" and n.subject == "context_management"
               for n in chat.notes)
    responses = get_codec("openai-responses").encode(Request(
        model="m", messages=(Message.user("go"),),
        context_management=ContextManagement(clear_tool_results=True)))
    assert responses.body["context_management"] == [{"type": "compaction"}]
    assert any(n.subject == "context_management" for n in responses.notes)
    with pytest.raises(ValueError, match="provider"):
        Agent(model=model, compaction="proivder")
