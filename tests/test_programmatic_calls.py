"""Calls made by code the provider runs (Anthropic's programmatic tool calling): a tool allows
them, the request carries that and the code execution tool, the calls arrive with their
``caller``, go through the same checks and approval as any call, are answered by tool results
alone in a request naming the container, and the run log and ``explain`` say code made them.
Over loopback HTTP against the emulator; the requests validate against the SDK's types."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sdk_types import assert_anthropic_valid
from toolwire import Agent, Message, Request, RunStop
from toolwire.agent.dispatch import ApprovalRequest
from toolwire.codecs import get_codec
from toolwire.emulator import Emulator
from toolwire.explain.build import explain_file, render_text
from toolwire.http.client import RetryPolicy
from toolwire.http.client import model as make_model
from toolwire.schema.tool import Tool
from toolwire.transcript import ToolCallPart, ToolResultPart, ToolSpec

CODE = "code_execution_20260120"
ANTHROPIC = get_codec("anthropic-messages")


def _code_reply(calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """A reply body in the shape the API sends when code in the container calls tools."""
    run = {"type": "server_tool_use", "id": "srvtoolu_01", "name": "code_execution",
           "input": {"code": "rows = [await query_db(sql=q) for q in queries]"}}
    uses = [{"type": "tool_use", "id": f"toolu_0{n}", "name": name, "input": args,
             "caller": {"type": CODE, "tool_id": "srvtoolu_01"}}
            for n, (name, args) in enumerate(calls, 1)]
    return {"id": "msg_01", "type": "message", "role": "assistant", "model": "m",
            "content": [run, *uses], "stop_reason": "tool_use", "stop_sequence": None,
            "container": {"id": "container_011", "expires_at": "2026-12-01T05:00:00Z"},
            "usage": {"input_tokens": 40, "output_tokens": 20}}


def _tools(seen: list[str]) -> list[Tool]:
    def query_db(sql: str) -> str:
        seen.append(sql)
        return f"3 rows for {sql}"

    return [Tool.from_function(query_db, allowed_callers=["direct", CODE])]


@pytest.mark.parametrize("stream", [False, True])
async def test_calls_made_by_code_are_checked_approved_run_and_answered(
        tmp_path: Path, stream: bool) -> None:
    first = ANTHROPIC.decode_response(_code_reply([
        ("query_db", {"sql": "select west"}), ("query_db", {"sql": 7})]))
    asked: list[tuple[str, str | None]] = []
    seen: list[str] = []

    def approve(asking: ApprovalRequest) -> bool:
        asked.append((asking.call.name, asking.call.caller))
        return True

    log = tmp_path / "run.jsonl"
    async with Emulator([first, _final()]) as emu:
        model = make_model(f"anthropic:m@{emu.base_url}", env={},
                           retry=RetryPolicy(base=0.001, max_wait=0.01))
        agent = Agent(model=model, tools=_tools(seen), approval="ask", approve=approve,
                      stream=stream)
        result = await agent.arun("Which region sold most?", log=log)
        await model.aclose()
        emu.assert_done()
    assert result.stop is RunStop.ANSWERED
    # checked like any call: the one with bad arguments was answered with the error, never
    # asked about nor run; the other was asked about as made by code, then ran
    assert asked == [("query_db", CODE)]
    assert seen == ["select west"]
    sent, answer = (r.body for r in emu.received)
    tools = sent["tools"]
    assert tools[0]["allowed_callers"] == ["direct", CODE]
    assert {"type": CODE, "name": "code_execution"} in [
        {k: v for k, v in t.items() if k != "cache_control"} for t in tools]
    assert any("code_execution_added" in n for n in result.notes)
    # the answer: tool results alone, naming the container; the code's blocks went back
    assert answer["container"] == "container_011"
    results = answer["messages"][-1]["content"]
    assert [b["type"] for b in results] == ["tool_result", "tool_result"]
    assert results[1].get("is_error") is True and "sql" in json.dumps(results[1]["content"])
    went_back = answer["messages"][1]["content"]
    assert [b["type"] for b in went_back] == ["server_tool_use", "tool_use", "tool_use"]
    assert went_back[1]["caller"] == {"type": CODE, "tool_id": "srvtoolu_01"}
    assert_anthropic_valid(sent)
    assert_anthropic_valid(answer)
    # the run log and explain say code made the calls
    starts = [json.loads(line) for line in log.read_text().splitlines()
              if '"call_start"' in line]
    assert [s.get("caller") for s in starts] == [CODE]
    text = render_text(explain_file(log))
    assert text.count(f"tool call query_db (made by code: {CODE})") == 2


def _final() -> Any:
    return ANTHROPIC.decode_response({
        "id": "msg_02", "type": "message", "role": "assistant", "model": "m",
        "content": [{"type": "text", "text": "West had the most."}],
        "stop_reason": "end_turn", "stop_sequence": None,
        "container": {"id": "container_011", "expires_at": "2026-12-01T05:00:00Z"},
        "usage": {"input_tokens": 60, "output_tokens": 8}})


def test_a_code_call_decodes_with_its_caller_and_goes_back_as_it_came() -> None:
    body = _code_reply([("query_db", {"sql": "select 1"})])
    reply = ANTHROPIC.decode_response(body)
    call = reply.tool_calls[0]
    assert call.caller == CODE and reply.message.provider_data == {
        "anthropic-messages": {"container": body["container"]}}
    assert ANTHROPIC.encode_response(reply)["container"] == body["container"]
    assert ANTHROPIC.encode_response(reply)["content"] == body["content"]
    # a call direct from the model has no caller
    direct = dict(body, content=[{"type": "tool_use", "id": "toolu_9", "name": "query_db",
                                  "input": {}, "caller": {"type": "direct"}}])
    assert ANTHROPIC.decode_response(direct).tool_calls[0].caller is None


def test_the_answer_to_code_calls_holds_results_alone_and_names_the_container() -> None:
    reply = ANTHROPIC.decode_response(_code_reply([("query_db", {"sql": "select 1"})]))
    request = Request(model="m", max_tokens=100, messages=(
        Message.user("go"), reply.message,
        Message(role="tool", parts=(ToolResultPart(call_id="toolu_01", content="1 row"),)),
        Message.user("and be quick")))
    encoded = ANTHROPIC.encode(request)
    body = encoded.body
    assert body["container"] == "container_011"
    assert [b["type"] for b in body["messages"][-1]["content"]] == ["tool_result"]
    assert any(n.kind == "part_dropped" and "tool_result blocks only" in n.detail
               for n in encoded.notes)
    assert ANTHROPIC.check_body(body) is None
    # what the provider refuses: no container, or more than results in the answer
    assert "container" in str(ANTHROPIC.check_body({k: v for k, v in body.items()
                                                    if k != "container"}))
    mixed = json.loads(json.dumps(body))
    mixed["messages"][-1]["content"].append({"type": "text", "text": "hi"})
    assert "only tool_result" in str(ANTHROPIC.check_body(mixed))


def test_a_call_scripted_as_made_by_code_is_sent_with_its_caller() -> None:
    from toolwire.emulator import parse_item

    item = parse_item({"tool_calls": [{"name": "query_db", "arguments": {"sql": "x"},
                                       "caller": CODE}]})
    reply = item.reply  # type: ignore[union-attr]
    block = ANTHROPIC.encode_response(reply)["content"][0]
    assert block["caller"]["type"] == CODE and block["caller"]["tool_id"].startswith("srvtoolu_")
    again = ANTHROPIC.decode_response(ANTHROPIC.encode_response(reply))
    assert again.tool_calls[0].caller == CODE
    with pytest.raises(Exception, match="caller"):
        parse_item({"tool_calls": [{"name": "q", "caller": 3}]})


def test_allowed_callers_are_a_tool_setting_kept_in_transcripts_and_left_out_elsewhere() -> None:
    from toolwire.transcript_json import from_json, to_json

    tool = Tool(name="q", input_schema={"type": "object", "properties": {}},
                allowed_callers=[CODE])
    assert tool.spec.allowed_callers == (CODE,)
    assert from_json(to_json(tool.spec)) == tool.spec
    call = ToolCallPart(id="c", name="q", arguments={}, caller=CODE)
    assert from_json(to_json(call)) == call
    request = Request(model="m", tools=(tool.spec,), messages=(Message.user("go"),))
    decoded = ANTHROPIC.decode_request(ANTHROPIC.encode(request).body)
    assert decoded.tools[0].allowed_callers == (CODE,)
    chat = get_codec("openai-chat").encode(request)
    assert "allowed_callers" not in json.dumps(chat.body)
    assert any(n.kind == "field_dropped" and n.subject == "q" for n in chat.notes)
    with pytest.raises(Exception, match="allowed_callers"):
        Tool(name="q", allowed_callers=[""])
    assert ToolSpec(name="q").allowed_callers == ()


def test_a_code_call_whole_inside_message_start_and_the_container_in_message_delta() -> None:
    body = _code_reply([("query_db", {"sql": "select 1"})])
    use = body["content"][1]
    start = {"type": "message_start", "message": {
        **{k: v for k, v in body.items() if k not in ("container", "stop_reason")},
        "content": [use], "stop_reason": None}}
    events = [start,
              {"type": "message_delta", "delta": {"stop_reason": "tool_use",
                                                  "container": body["container"]},
               "usage": {"output_tokens": 20}},
              {"type": "message_stop"}]
    raw = b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)
    streamed = list(ANTHROPIC.decode_stream([raw[:70], raw[70:]]))
    reply = streamed[-1].reply  # type: ignore[attr-defined]
    assert [c.caller for c in reply.tool_calls] == [CODE]
    assert reply.message.provider_data == {"anthropic-messages": {"container": body["container"]}}
    request = Request(model="m", max_tokens=10, messages=(
        Message.user("go"), reply.message,
        Message(role="tool", parts=(ToolResultPart(call_id="toolu_01", content="1"),))))
    assert ANTHROPIC.encode(request).body["container"] == "container_011"
