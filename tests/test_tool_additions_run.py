"""Tools revealed mid-run (a tool source, as an MCP server whose list changed) go where the
wire adds tools mid-conversation, over real HTTP to the emulator: Anthropic gets a
``tool_addition`` naming a deferred ``tools`` entry under its beta and the tool list before it
unchanged, the Responses API an ``additional_tools`` item, and the emulator's billing reads the
prefix from the cache where appending to ``tools`` wrote it again; Converse, without such a
block, offers them at the end of its tool list as before."""

from __future__ import annotations

from typing import Any

from toolwire import Agent, Message, Reply, Tool, ToolCallPart, Usage
from toolwire.emulator import Emulator
from toolwire.events import ReplyReceived
from toolwire.http.client import model as make_model

SYSTEM = "You look things up in the inventory, one table at a time. " * 60


def lookup(n: int) -> Tool:
    return Tool(fn=lambda key: f"record {n}: " + "value " * 30, name=f"lookup_{n}",
                description=f"Look a key up in table {n}.", input_schema={
                    "type": "object", "properties": {"key": {"type": "string"}}})


def answers(count: int) -> Any:
    turn = [0]

    def answer(request: Any, wire: str) -> Reply:
        k = turn[0]
        turn[0] += 1
        if k >= count:
            return Reply(message=Message.assistant("done"), usage=Usage(output_tokens=5))
        call = ToolCallPart(id=f"t{k}", name=f"lookup_{k}", arguments={"key": "a"})
        return Reply(message=Message(role="assistant", parts=(call,)), stop="tool_calls",
                     usage=Usage(output_tokens=5))

    return answer


async def run(provider: str, model: str, count: int = 3) -> tuple[list[Any], list[Usage]]:
    shown: list[Tool] = []

    def source() -> list[Tool]:
        if len(shown) < count:
            shown.append(lookup(len(shown)))
        return list(shown)

    usages: list[Usage] = []

    def on_event(event: object) -> None:
        if isinstance(event, ReplyReceived):
            usages.append(event.reply.usage)

    async with Emulator(answers(count), bill=True) as emu:
        http = make_model(f"{provider}:{model}@{emu.base_url}", env={})
        result = await Agent(model=http, tools=[lookup(100)], system=SYSTEM, cache=True,
                             tool_sources=[source], max_turns=count + 3,
                             on_event=on_event).arun("go")
        await http.aclose()
        assert str(result.stop) == "answered"
        return [r for r in emu.received], usages


async def test_anthropic_gets_tool_additions_and_keeps_its_tool_list_and_cache() -> None:
    received, usages = await run("anthropic", "claude-opus-4-8")
    bodies = [r.body for r in received]
    first = bodies[0]["tools"]
    for body, got in zip(bodies, received, strict=True):
        assert body["tools"][:len(first)] == first  # never changed before the additions
        assert all(t.get("defer_loading") for t in body["tools"][len(first):])
        if len(body["tools"]) > len(first):
            assert "mid-conversation-tool-changes-2026-07-01" in got.headers["anthropic-beta"]
    last = bodies[-1]["messages"]
    added = [b["tool"]["name"] for m in last if m["role"] == "system"
             for b in m["content"] if b.get("type") == "tool_addition"]
    assert added == ["lookup_0", "lookup_1", "lookup_2"]
    # once the prompt is long enough to cache, each request reads all the one before sent
    assert usages[1].cache_write_tokens == usages[1].input_tokens
    assert [u.cache_read_tokens for u in usages[2:]] == [u.input_tokens for u in usages[1:-1]]


async def test_responses_gets_additional_tools_items() -> None:
    received, _ = await run("openai-responses", "gpt-5.5")
    last = received[-1].body
    assert [t["name"] for t in last["tools"]] == ["lookup_100"]
    items = [[t["name"] for t in i["tools"]] for i in last["input"]
             if i.get("type") == "additional_tools"]
    assert items == [["lookup_0"], ["lookup_1"], ["lookup_2"]]


async def test_converse_offers_them_at_the_end_of_its_tool_list() -> None:
    received, _ = await run("bedrock", "anthropic.claude-opus-4-8")
    names = [t["toolSpec"]["name"] for t in received[-1].body["toolConfig"]["tools"]
             if "toolSpec" in t]
    assert names == ["lookup_100", "lookup_0", "lookup_1", "lookup_2"]
