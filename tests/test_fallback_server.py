"""Anthropic's own fallbacks in a chain (``server_fallbacks=True``): the request names the
Anthropic models that follow with the beta header, the replies' ``fallback`` blocks stay in the
transcript where they came (between thinking blocks) and go back verbatim, every body valid for
the Anthropic SDK's beta types."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sdk_types import assert_wire_valid
from test_fallback import TOOL
from toolwire import (
    Agent,
    Message,
    OpaquePart,
    ReasoningPart,
    Reply,
    RunStop,
    ToolCallPart,
    check_transcript,
    fallback,
)
from toolwire.codecs.managed import SERVER_FALLBACK_BETA
from toolwire.emulator import Emulator
from toolwire.failover import ChainLink
from toolwire.http.client import RetryPolicy
from toolwire.http.client import model as make_model

WIRE = "anthropic-messages"
HOP = {"type": "fallback", "from": {"model": "claude-opus-4-1"},
       "to": {"model": "claude-sonnet-4-5"}, "trigger": {"type": "refusal", "category": "cyber"}}


def thinking(text: str, signature: str) -> ReasoningPart:
    return ReasoningPart(text=text, provider_data={WIRE: {"type": "thinking", "thinking": text,
                                                         "signature": signature}})


HANDED_OVER = Reply(message=Message(role="assistant", parts=(
    thinking("The first model declines.", "c2ln1"),
    OpaquePart(wire=WIRE, kind="fallback", payload=HOP),
    thinking("The second model looks it up.", "c2ln2"),
    ToolCallPart(id="toolu_1", name="get_weather", arguments={"city": "Paris"}),
)), stop="tool_calls")


async def run(chain_of: list[str], stream: bool, server: bool = True) -> tuple[Any, Emulator]:
    script: list[Any] = [HANDED_OVER, Reply(message=Message.assistant("18°C in Paris."))]
    async with Emulator(script) as emu:
        models = [make_model(f"{provider}:{name}@{emu.base_url}", env={},
                             retry=RetryPolicy(max_attempts=1))
                  for provider, name in (m.split(":") for m in chain_of)]
        chain = fallback(models[0], *[ChainLink(m, max_tokens=2048) for m in models[1:]],
                         server_fallbacks=server)
        result = await Agent(model=chain, tools=[TOOL], stream=stream).arun("Paris?")
        await chain.aclose()
        emu.assert_done()
    return result, emu


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_falls_back_itself_and_its_fallback_block_stays_in_place(
        stream: bool) -> None:
    result, emu = asyncio.run(run(["anthropic:claude-opus-4-1", "anthropic:claude-sonnet-4-5",
                                   "openai:gpt-5"], stream))
    assert result.stop == RunStop.ANSWERED, result.error
    first, second = (r for r in emu.received)
    # only the Anthropic models after the first are its own fallbacks, with their settings
    assert first.body["fallbacks"] == [{"model": "claude-sonnet-4-5", "max_tokens": 2048}]
    assert SERVER_FALLBACK_BETA in first.headers["anthropic-beta"].split(",")
    for received in (first, second):
        assert_wire_valid(WIRE, received.body)
    # the block went back verbatim, between the two thinking blocks it separates
    content = second.body["messages"][1]["content"]
    assert [block["type"] for block in content] == ["thinking", "fallback", "thinking",
                                                    "tool_use"]
    assert content[1] == HOP
    assert result.messages[1].parts[1] == OpaquePart(wire=WIRE, kind="fallback", payload=HOP)
    assert not [p for p in check_transcript(result.messages, WIRE) if p.severity == "error"]


@pytest.mark.parametrize(("chain_of", "server"), [
    (["anthropic:claude-opus-4-1", "anthropic:claude-sonnet-4-5"], False),
    (["anthropic:claude-opus-4-1", "openai:gpt-5"], True)])
def test_without_the_setting_or_another_anthropic_model_no_fallbacks_are_asked(
        chain_of: list[str], server: bool) -> None:
    _, emu = asyncio.run(run(chain_of, False, server))
    assert all("fallbacks" not in r.body for r in emu.received)
    assert all("anthropic-beta" not in r.headers for r in emu.received)


def test_at_most_three_models_are_named_for_the_provider_to_fall_back_to() -> None:
    names = ["claude-opus-4-1", "claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4",
             "claude-sonnet-4"]
    _, emu = asyncio.run(run([f"anthropic:{n}" for n in names], False))
    assert [e["model"] for e in emu.received[0].body["fallbacks"]] == names[1:4]
