"""Freeform calls: the Responses API's custom tool calls (a grammar tool such as Codex's
``apply_patch``) read as canonical calls holding their text input, written back the same, and
sent to every other wire as a function call with the text in ``input`` and a loss named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openai.types.responses import ResponseStreamEvent
from pydantic import TypeAdapter

from sdk_types import assert_sdk_valid, assert_wire_valid
from toolwire.codecs import WIRES, get_codec
from toolwire.codecs.registry import get_wire
from toolwire.conversion import convert
from toolwire.events import StreamEnd, ToolCallDelta, ToolCallFinished, ToolCallStarted
from toolwire.transcript import Message, Reply, Request, ToolCallPart, ToolResultPart, Usage
from toolwire.transcript_json import from_json, to_json

R = "openai-responses"
STREAM_EVENT: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)
CODEX = Path(__file__).parent.parent / "fixtures" / "agents" / "codex-cli-0.171.0-two-tools.json"
PATCH = "*** Begin Patch\n*** Add File: a.txt\n+one\n*** End Patch"


def codex_body() -> dict:
    return json.loads(CODEX.read_text())["body"]


def test_codex_custom_tool_calls_read_as_freeform_calls_and_their_outputs_as_results() -> None:
    request = get_codec(R).decode_request(codex_body())
    calls = [p for m in request.messages for p in m.tool_calls]
    assert [(c.name, c.freeform) for c in calls] == [("exec", True), ("exec", True)]
    assert calls[0].raw_arguments == calls[0].arguments == (
        'text(await tools.exec_command({cmd: "echo one > /tmp/cap/work-codex/a.txt"}));')
    results = [p for m in request.messages if m.role == "tool" for p in m.tool_results]
    assert [r.call_id for r in results] == ["call_01", "call_02"]
    assert "Script completed" in results[0].text


def test_codex_custom_tool_calls_go_back_to_responses_as_they_came() -> None:
    body = codex_body()
    again = get_codec(R).encode_request(get_codec(R).decode_request(body))
    assert again["input"] == body["input"]


def test_a_freeform_call_made_here_is_a_custom_tool_call_and_its_result_its_output() -> None:
    request = Request(model="gpt-5.5", messages=(
        Message.user("patch it"),
        Message(role="assistant", parts=(ToolCallPart(
            id="call_1", name="apply_patch", arguments=PATCH, raw_arguments=PATCH,
            freeform=True),)),
        Message(role="tool", parts=(ToolResultPart(call_id="call_1", content="done"),)),
    ))
    body = get_codec(R).encode_request(request)
    assert body["input"][1:] == [
        {"type": "custom_tool_call", "call_id": "call_1", "name": "apply_patch", "input": PATCH},
        {"type": "custom_tool_call_output", "call_id": "call_1", "output": "done"}]
    assert_sdk_valid(body)
    assert get_codec(R).decode_request(body).messages[1].parts[0].freeform


def test_a_reply_with_a_custom_tool_call_is_a_request_for_a_freeform_call() -> None:
    reply = get_codec(R).decode_response({
        "id": "resp_1", "object": "response", "model": "gpt-5.5", "status": "completed",
        "output": [{"type": "custom_tool_call", "id": "ctc_9", "status": "completed",
                    "call_id": "call_9", "name": "apply_patch", "input": PATCH}]})
    (call,) = reply.message.tool_calls
    assert (call.freeform, call.raw_arguments, call.id) == (True, PATCH, "call_9")
    assert reply.stop == "tool_calls"


def test_the_saved_transcript_keeps_a_call_freeform() -> None:
    call = ToolCallPart(id="c", name="apply_patch", arguments=PATCH, raw_arguments=PATCH,
                        freeform=True)
    message = Message(role="assistant", parts=(call,))
    assert from_json(json.loads(json.dumps(to_json(message)))) == message


@pytest.mark.parametrize("target", [w for w in WIRES if not get_wire(w).freeform_calls])
def test_a_freeform_call_goes_to_another_wire_as_input_text_with_a_loss(target: str) -> None:
    done = convert(codex_body(), R, target, model="gpt-5.5")
    again = get_codec(target).decode_request(done.body, model="gpt-5.5")
    calls = [p for m in again.messages for p in m.tool_calls]
    assert calls and all(isinstance(c.arguments, dict) and c.arguments["input"].startswith(
        "text(await tools.exec_command") for c in calls)
    lost = [n for n in done.losses if n.kind == "custom_tool_call"]
    assert len(lost) == 2 and "input" in lost[0].detail
    assert_wire_valid(target, done.body, model="gpt-5.5")


@pytest.mark.parametrize("wire", [R, "openai-chat"])
def test_a_freeform_call_streams_and_is_read_back_whole(wire: str) -> None:
    codec = get_codec(wire)
    call = ToolCallPart(id="call_1", name="apply_patch", arguments=PATCH, raw_arguments=PATCH,
                        freeform=True)
    reply = Reply(message=Message(role="assistant", parts=(call,)), stop="tool_calls",
                  usage=Usage(input_tokens=1, output_tokens=1))
    assert "custom" in json.dumps(codec.encode_response(reply))
    chunks = list(codec.encode_stream(reply))
    if wire == R:  # every event one the SDK's types know
        for chunk in chunks:
            data = json.loads(chunk.decode().split("data: ", 1)[1])
            STREAM_EVENT.validate_python(data)
    events = list(codec.decode_stream(chunks))
    assert isinstance(events[-1], StreamEnd) and events[-1].reply.message.parts == (call,)
    calls = [type(e) for e in events if isinstance(e, ToolCallStarted | ToolCallFinished)]
    assert calls == [ToolCallStarted, ToolCallFinished]
    assert "".join(e.fragment for e in events if isinstance(e, ToolCallDelta)) == PATCH
