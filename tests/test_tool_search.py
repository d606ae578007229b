"""Deferred tools and the harness's tool search: the search's quality over 300 tools, a run over
loopback HTTP in which the model finds a deferred tool and calls it, and the tool list growing
only at its end (by a search, by a tool source, and again on resume)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sdk_types import assert_anthropic_valid, assert_sdk_valid
from tool_catalog import REQUESTS, make_tools
from toolwire import Agent, Message, Reply, Request, RunStop, ToolCallPart, Usage
from toolwire.agent.toollist import SEARCH_TOOL, split_deferred
from toolwire.codecs import get_codec
from toolwire.emulator import Emulator
from toolwire.http.client import RetryPolicy
from toolwire.http.client import model as make_model
from toolwire.http.providers import provider_for
from toolwire.schema.search import ToolIndex, words
from toolwire.schema.tool import Tool
from toolwire.testing import ScriptedModel


def test_the_search_finds_the_tool_for_at_least_nine_requests_in_ten() -> None:
    index = ToolIndex(t.spec for t in make_tools())
    hits = [want in index.names(query, 5) for query, want in REQUESTS]
    assert len(REQUESTS) >= 30
    rate = sum(hits) / len(hits)
    print(f"top-5 hit rate over {len(hits)} requests: {rate:.0%}")
    assert rate >= 0.9


def test_words_split_names_and_cut_endings() -> None:
    assert words("listInvoices") == words("list invoice") == ["list", "invoic"]
    assert words("the sending of emails") == ["send", "email"]
    assert ToolIndex([]).search("anything") == []


def test_deferred_names_and_counts() -> None:
    tools = make_tools()[:20]
    loaded, later = split_deferred(tools, ["get_invoice"], defer_after=5)
    assert [t.name for t in loaded] == [t.name for t in tools[:6] if t.name != "get_invoice"]
    assert len(later) == 15 and "get_invoice" in {t.name for t in later}
    with pytest.raises(ValueError, match="no_such_tool"):
        split_deferred(tools, ["no_such_tool"])


def _names(body: Any) -> list[str]:
    """Every tool name in a request body, in order, whatever the wire's nesting."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if isinstance(value.get("name"), str):
                found.append(value["name"])
                return
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(body.get("tools", []))
    return found


def _script() -> list[Reply]:
    usage = Usage(input_tokens=10, output_tokens=5)
    return [
        Reply(message=Message(role="assistant", parts=(ToolCallPart(
            id="call_s1", name=SEARCH_TOOL, arguments={"query": "remove a discount coupon"}),)),
            stop="tool_calls", usage=usage),
        Reply(message=Message(role="assistant", parts=(ToolCallPart(
            id="call_d1", name="delete_coupon", arguments={"id": "SUMMER10"}),)),
            stop="tool_calls", usage=usage),
        Reply(message=Message.assistant("Coupon SUMMER10 is deleted."), usage=usage),
    ]


async def _run(wire: str, defer: bool) -> tuple[Any, list[Any], list[Any]]:
    calls: list[tuple[str, dict[str, Any]]] = []
    script = _script() if defer else _script()[1:]
    async with Emulator(script) as emu:
        model = make_model(f"{provider_for(wire)}:m@{emu.base_url}", env={},
                           retry=RetryPolicy(base=0.001, max_wait=0.01))
        agent = Agent(model=model, tools=make_tools(calls),
                      defer_after=10 if defer else None)
        result = await agent.arun("Delete coupon SUMMER10")
        await model.aclose()
        if result.stop is not RunStop.CONTEXT_FULL:
            emu.assert_done()
    return result, [r.body for r in emu.received], calls


@pytest.mark.parametrize("wire", ["openai-chat", "ollama-chat", "gemini-generate"])
async def test_a_deferred_tool_is_found_then_called_over_http(wire: str) -> None:
    result, bodies, calls = await _run(wire, defer=True)
    assert result.stop is RunStop.ANSWERED
    first, second, third = (_names(b) for b in bodies)
    assert len(first) == 11 and first[-1] == SEARCH_TOOL and "delete_coupon" not in first
    assert second[:11] == first and "delete_coupon" in second[11:]
    assert third == second
    assert calls == [("delete_coupon", {"id": "SUMMER10"})]
    assert any("search_tools('remove a discount coupon') found" in n and "delete_coupon" in n
               for n in result.notes)
    full, full_bodies, _ = await _run(wire, defer=False)
    # Ollama's default context (4096 tokens) cannot even hold the 300 tools
    assert full.stop is (RunStop.CONTEXT_FULL if wire == "ollama-chat" else RunStop.ANSWERED)
    assert len(_names(full_bodies[0])) == 300
    sizes = [len(json.dumps(b)) for b in bodies]
    whole = [len(json.dumps(b)) for b in full_bodies]
    print(f"{wire}: request bytes per turn, 290 of 300 deferred {sizes}; none deferred {whole}")
    assert sizes[0] * 10 < whole[0]


async def _run_native(provider: str, script: list[Reply]) -> tuple[Any, list[Any]]:
    """A run over 300 tools, 290 deferred, with a provider that searches itself; the run and
    the request bodies it sent. It must delete the coupon."""
    calls: list[tuple[str, dict[str, Any]]] = []
    async with Emulator(script) as emu:
        model = make_model(f"{provider}:m@{emu.base_url}", env={},
                           retry=RetryPolicy(base=0.001, max_wait=0.01))
        agent = Agent(model=model, tools=make_tools(calls), defer_after=10)
        result = await agent.arun("Delete coupon SUMMER10")
        await model.aclose()
        emu.assert_done()
    assert result.stop is RunStop.ANSWERED
    assert calls == [("delete_coupon", {"id": "SUMMER10"})]
    return result, [r.body for r in emu.received]


async def test_anthropic_sends_deferred_tools_with_defer_loading_and_its_search_tool() -> None:
    result, bodies = await _run_native("anthropic", _script()[1:])
    body = bodies[0]
    tools = body["tools"]
    last = {k: v for k, v in tools[-1].items() if k != "cache_control"}
    assert len(tools) == 301 and last == {"type": "tool_search_tool_bm25_20251119",
                                          "name": "tool_search_tool_bm25"}
    assert [t.get("defer_loading", False) for t in tools[:300]] == [False] * 10 + [True] * 290
    assert bodies[1]["tools"] == tools
    assert "search_tools" not in {t["name"] for t in tools}
    assert any("tool_search" in n for n in result.notes)
    assert_anthropic_valid(body)
    print(f"anthropic-messages: request bytes per turn, 290 of 300 deferred "
          f"{[len(json.dumps(b)) for b in bodies]}")


def test_anthropic_server_side_search_blocks_go_back_as_they_came() -> None:
    codec = get_codec("anthropic-messages")
    search = {"type": "server_tool_use", "id": "srvtoolu_01", "name": "tool_search_tool_bm25",
              "input": {"query": "remove a coupon"}}
    found = {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_01",
             "content": {"type": "tool_search_tool_search_result", "tool_references": [
                 {"type": "tool_reference", "tool_name": "delete_coupon"}]}}
    use = {"type": "tool_use", "id": "toolu_01", "name": "delete_coupon",
           "input": {"id": "SUMMER10"}}
    reply = codec.decode_response({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
        "content": [search, found, use], "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 5}})
    assert [c.name for c in reply.tool_calls] == ["delete_coupon"]
    request = Request(model="m", messages=(Message.user("go"), reply.message), max_tokens=100)
    sent = codec.encode(request).body["messages"][1]["content"]
    assert sent[:2] == [search, found] and sent[2]["name"] == "delete_coupon"


def test_a_tool_source_adds_tools_at_the_end_and_a_resume_keeps_what_search_found(
        tmp_path: Any) -> None:
    extra = Tool(name="late_tool", description="Added while the run goes.", fn=lambda: "late")
    offered: list[Tool] = []
    tools = make_tools()[:40]
    script = [
        Reply(message=Message(role="assistant", parts=(ToolCallPart(
            id="c1", name=SEARCH_TOOL, arguments={"query": "export contacts to a file"}),)),
            stop="tool_calls"),
        Reply(message=Message(role="assistant", parts=(ToolCallPart(
            id="c2", name="late_tool", arguments={}),)), stop="tool_calls"),
        Reply(message=Message.assistant("done")),
    ]
    model = ScriptedModel(script)
    agent = Agent(model=model, tools=tools, defer_after=3, tool_sources=[lambda: offered])
    log = tmp_path / "run.jsonl"
    run = agent.steps("go", log=log)

    async def drive() -> None:
        async for step in run:
            if step.turn == 1:
                offered.append(extra)

    import asyncio
    asyncio.run(drive())
    assert run.result is not None and run.result.stop is RunStop.ANSWERED
    seen = [[s.name for s in (*r.tools, *(t for m in r.messages for t in m.tools))]
            for r in model.requests]
    assert len(seen[0]) == 4
    assert seen[1][:4] == seen[0] and "export_contact" in seen[1] and seen[1][-1] == "late_tool"
    # the request's own tools stay; the tools added ride in system messages where they came
    assert all(r.tools == model.requests[0].tools for r in model.requests)
    added = [(n, [t.name for t in m.tools]) for n, m in enumerate(model.requests[1].messages)
             if m.tools]
    assert added[-1] == (len(model.requests[1].messages) - 1, ["late_tool"])
    assert [p.content for m in run.result.messages for p in m.parts
            if getattr(p, "call_id", None) == "c2"] == ["late"]
    again = Agent(model=ScriptedModel([]), tools=tools, defer_after=3)
    tool_list = again.run_tools()
    assert tool_list is not None
    tool_list.replay(model.requests[0].tools, run.result.messages)
    assert [s.name for s in tool_list.added] == seen[1][4:-1]


def _responses_search_reply() -> Reply:
    """A Responses reply in which the hosted tool search found the tool, then the call."""
    found = {"type": "function", "name": "delete_coupon", "description": "Delete a coupon.",
             "parameters": {"type": "object", "properties": {"id": {"type": "string"}}},
             "strict": False, "defer_loading": True}
    return get_codec("openai-responses").decode_response({
        "id": "resp_1", "object": "response", "created_at": 1, "model": "m",
        "status": "completed", "output": [
            {"type": "tool_search_call", "id": "tsc_1", "call_id": "call_ts1",
             "arguments": {"query": "remove a discount coupon"}, "execution": "server",
             "status": "completed"},
            {"type": "tool_search_output", "id": "tso_1", "call_id": "call_ts1",
             "execution": "server", "status": "completed", "tools": [found]},
            {"type": "function_call", "id": "fc_1", "call_id": "call_d1",
             "name": "delete_coupon", "arguments": '{"id":"SUMMER10"}',
             "status": "completed"}],
        "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}})


async def test_responses_sends_deferred_tools_with_defer_loading_and_its_tool_search() -> None:
    first = _responses_search_reply()
    result, (body, again) = await _run_native("openai-responses", [first, _script()[-1]])
    tools = body["tools"]
    assert len(tools) == 301 and tools[-1] == {"type": "tool_search"}
    assert [t.get("defer_loading", False) for t in tools[:300]] == [False] * 10 + [True] * 290
    assert again["tools"] == tools and SEARCH_TOOL not in {t.get("name") for t in tools}
    assert any("tool_search" in n for n in result.notes)
    # the search's items go back as they came, before the call and its output
    sent = [item for item in again["input"] if item.get("type") not in (None, "message")]
    assert [i["type"] for i in sent] == ["tool_search_call", "tool_search_output",
                                         "function_call", "function_call_output"]
    assert sent[:2] == [p.payload for p in first.message.parts[:2]]  # type: ignore[union-attr]
    assert_sdk_valid(body)
    assert_sdk_valid(again)
    # through Azure, the same wire without the hosted search: the harness's own search_tools
    azure = make_model("azure-responses:m@http://127.0.0.1:9", env={"AZURE_OPENAI_API_KEY": "k"})
    assert SEARCH_TOOL in {s.name for s in Agent(model=azure, tools=make_tools(),
                                                 defer_after=10).specs}
