"""Each model of a fallback chain with its own settings (max tokens, reasoning level, whether
it takes tools or media), checked in the bodies the emulator received; a chain shared by many
conversations keeps each one's own place."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sdk_types import assert_wire_valid
from test_fallback import TOOL, calls, http_model
from toolwire import (
    Agent,
    ChainLink,
    Image,
    Message,
    OpaquePart,
    Reply,
    RunStop,
    ServerError,
    TextPart,
    ToolCallPart,
    fallback,
)
from toolwire.emulator import Emulator, Fault
from toolwire.events import ModelChosen
from toolwire.testing import ScriptedModel

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


async def second_gets(link: dict[str, Any], task: Any, wire: str) -> tuple[Any, Any, list[Any]]:
    """Turn 1 on Anthropic (a call), turn 2 refused, answered by ``wire``'s model with
    ``link``'s settings; the body it got and the chain's events."""
    events: list[Any] = []
    script: list[Any] = [calls("anthropic-messages", "Paris", tag="a"), Fault("overloaded"),
                         Reply(message=Message.assistant("Done."))]
    async with Emulator(script) as emu:
        chain = fallback(http_model("anthropic-messages", emu, "first"),
                         ChainLink(http_model(wire, emu, "second"), **link))
        result = await Agent(model=chain, tools=[TOOL], on_event=events.append).arun(task)
        await chain.aclose()
        emu.assert_done()
    [body] = [r.body for r in emu.received if r.wire == wire]
    assert_wire_valid(wire, body, model="second")
    assert result.stop == RunStop.ANSWERED, result.error
    return result, body, [e for e in events if isinstance(e, ModelChosen)]


def test_a_model_gets_its_own_max_tokens_and_reasoning_level() -> None:
    _, body, _ = asyncio.run(second_gets({"max_tokens": 321, "reasoning": "low"}, "Paris?",
                                         "openai-responses"))
    assert body["max_output_tokens"] == 321
    assert body["reasoning"] == {"effort": "low"}


def test_a_model_that_takes_no_tools_gets_the_history_as_text() -> None:
    _, body, chosen = asyncio.run(second_gets({"tools": False}, "Paris?", "openai-chat"))
    assert "tools" not in body and "tool_choice" not in body
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    said = str(body["messages"])
    assert '[called tool get_weather with {"city":"Paris"}]' in said
    assert "[result of tool get_weather: 18°C in Paris]" in said
    assert any(loss.startswith("tools_dropped") for loss in chosen[-1].losses)


def test_a_model_that_takes_no_media_gets_a_line_in_place_of_each() -> None:
    task = ["What is in this picture?", Image.from_bytes(PNG, "image/png")]
    _, body, chosen = asyncio.run(second_gets({"media": False}, task, "openai-chat"))
    first = body["messages"][0]["content"]
    assert [c["type"] for c in first] == ["text", "text"]
    assert first[1]["text"] == "[image image/png left out: this model takes no media]"
    assert any(loss.startswith("media_dropped") for loss in chosen[-1].losses)


@pytest.mark.parametrize(("setting", "value"), [("reasoning", "max"), ("max_tokens", 0),
                                                ("max_tokens", 1.5)])
def test_a_setting_out_of_range_is_refused_naming_it(setting: str, value: Any) -> None:
    with pytest.raises(ValueError, match=setting):
        ChainLink(ScriptedModel([]), **{setting: value})


def test_a_chain_needs_a_model() -> None:
    with pytest.raises(ValueError, match="at least one model"):
        fallback()


def test_a_shared_sticky_chain_keeps_each_conversation_in_its_own_place() -> None:
    """Conversation one moved to the second model; conversation two, on the same chain, still
    starts at the first; conversation one keeps to the second."""
    first = ScriptedModel([ServerError("down", status=500), "First for two."], name="first")
    second = ScriptedModel(["Second for one.", "Second again for one."], name="second")
    chain = fallback(first, second, sticky=True)
    agent = Agent(model=chain)
    one = agent.run("one")
    two = agent.run("two")
    again = agent.run([*one.messages, Message.user("and again?")])
    assert (one.answer, two.answer, again.answer) == (
        "Second for one.", "First for two.", "Second again for one.")
    first.assert_done()
    second.assert_done()


def test_server_tool_blocks_are_reported_and_media_carried_to_another_wire() -> None:
    """Anthropic's web search blocks cannot go to Chat Completions: left out, each reported;
    the user's image goes on as Chat Completions takes images."""
    search = OpaquePart(wire="anthropic-messages", kind="server_tool_use", payload={
        "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
        "input": {"query": "weather Paris"}})
    found = OpaquePart(wire="anthropic-messages", kind="web_search_tool_result", payload={
        "type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []})
    searched = Reply(message=Message(role="assistant", parts=(
        search, found, TextPart(text="Searched; now the tool."),
        ToolCallPart(id="toolu_1", name="get_weather", arguments={"city": "Paris"}))),
        stop="tool_calls")

    async def go() -> tuple[Any, list[Any]]:
        events: list[Any] = []
        script = [searched, Fault("overloaded"), Reply(message=Message.assistant("Done."))]
        async with Emulator(script) as emu:
            chain = fallback(http_model("anthropic-messages", emu, "first"),
                             http_model("openai-chat", emu, "second"))
            task = ["Weather where this was taken?", Image.from_bytes(PNG, "image/png")]
            await Agent(model=chain, tools=[TOOL], on_event=events.append).arun(task)
            await chain.aclose()
            emu.assert_done()
        [body] = [r.body for r in emu.received if r.wire == "openai-chat"]
        assert_wire_valid("openai-chat", body, model="second")
        return body, [e for e in events if isinstance(e, ModelChosen)]

    body, chosen = asyncio.run(go())
    assert [c["type"] for c in body["messages"][0]["content"]] == ["text", "image_url"]
    lost = [loss for loss in chosen[-1].losses if loss.startswith("opaque_dropped")]
    assert len(lost) == 2 and "server_tool_use" in lost[0]
    assert "web_search_tool_result" in lost[1]
