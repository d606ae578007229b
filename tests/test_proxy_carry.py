"""Signed reasoning reaches an Interactions client and comes back to the upstream.

The client speaks the Gemini Interactions wire in its raw JSON (as its REST examples do): the
first reply's ``thought`` step holds the upstream's own reasoning block sealed in its
``signature``; the client sends its steps back in the next turn's ``input``, and the upstream
gets its block back as it sent it.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from proxy_harness import running_proxy
from toolwire.codecs import get_codec
from toolwire.codecs.reasoning import from_bytes_field
from toolwire.codecs.registry import get_wire
from toolwire.emulator import Emulator
from toolwire.proxy.carry import open_seal
from toolwire.transcript import (
    Message,
    ReasoningPart,
    Reply,
    Request,
    ToolCallPart,
    ToolResultPart,
)

pytest.importorskip("uvicorn")

CLIENT = "gemini-interactions"
THOUGHT = "Rome first."
SIGNED: dict[str, Any] = {
    "anthropic-messages": {"type": "thinking", "thinking": THOUGHT, "signature": "sig-A1b2"},
    "openai-responses": {"type": "reasoning", "id": "rs_0a1b2c", "summary": [
        {"type": "summary_text", "text": THOUGHT}], "encrypted_content": "gAAAAenc0a1b2c"},
    "bedrock-converse": {"reasoningText": {"text": THOUGHT, "signature": "sig-B3c4"}},
}
"""Each upstream's own signed or encrypted reasoning block."""
MODELS = {"anthropic-messages": "anthropic:m@{url}",
          "openai-responses": "openai-responses:m@{url}", "bedrock-converse": "bedrock:m@{url}"}
TOOLS = [{"type": "function", "name": "get_weather", "description": "The weather in a city",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]


def answer(request: Request, wire: str) -> Reply:
    """Signed reasoning and a call to a fresh question; a text once the result is in."""
    if any(isinstance(p, ToolResultPart) for p in request.messages[-1].parts):
        return Reply(message=Message.assistant("Sunny."))
    return Reply(message=Message(role="assistant", parts=(
        ReasoningPart(text=THOUGHT, provider_data={wire: SIGNED[wire]}),
        ToolCallPart(id="call_rome1", name="get_weather", arguments={"city": "Rome"}))),
        stop="tool_calls")


def first_steps(url: str, stream: bool) -> list[dict[str, Any]]:
    """The model's steps of the first reply, as the client reads them."""
    body = {"model": "m", "input": "Weather in Rome?", "tools": TOOLS, "store": False,
            "stream": stream}
    reply = httpx2.post(url + "/v1beta/interactions", json=body, timeout=60)
    assert reply.status_code == 200, reply.text
    if not stream:
        steps: list[dict[str, Any]] = reply.json()["steps"]
        return steps
    whole = list(get_codec(CLIENT).decode_stream([reply.content], request=Request(model="m")))
    encoded = get_codec(CLIENT).encode_response(whole[-1].reply)
    return [s for s in encoded["steps"] if isinstance(s, dict)]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("upstream", list(SIGNED))
def test_an_interactions_client_carries_the_upstream_s_signed_reasoning_back(
        upstream: str, stream: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "upstream-token")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    with Emulator(answer) as emu, \
            running_proxy(MODELS[upstream].format(url=emu.base_url)) as url:
        steps = first_steps(url, stream)
        thoughts = [s for s in steps if s["type"] == "thought" and s.get("signature")]
        assert len(thoughts) == 1
        assert open_seal(from_bytes_field(thoughts[0]["signature"]) or "") == (
            upstream, SIGNED[upstream])
        (call,) = [s for s in steps if s["type"] == "function_call"]
        again = {"model": "m", "tools": TOOLS, "store": False, "input": [
            {"type": "user_input", "content": [{"type": "text", "text": "Weather in Rome?"}]},
            *steps,
            {"type": "function_result", "call_id": call["id"], "name": "get_weather",
             "result": "sunny"}]}
        last = httpx2.post(url + "/v1beta/interactions", json=json.loads(json.dumps(again)),
                           timeout=60)
        assert last.status_code == 200, last.text
        received = emu.received[-1]
    sent = get_codec(upstream).decode_request(
        received.body, **({"model": "m", "stream": False} if get_wire(upstream).model_in_path
                          else {}))
    reasoning = [p.provider_data for m in sent.messages for p in m.parts
                 if isinstance(p, ReasoningPart)]
    assert reasoning == [{upstream: SIGNED[upstream]}]  # its own block, as it sent it
    assert [p.id for m in sent.messages for p in m.parts if isinstance(p, ToolCallPart)] == [
        "call_rome1"]


def test_a_thought_step_the_client_changed_goes_upstream_as_no_seal() -> None:
    """A signature that is not a seal (the client's own, or one it changed) is no block of the
    upstream's: it goes nowhere rather than to the wrong provider."""
    with Emulator(answer) as emu, running_proxy(f"anthropic:m@{emu.base_url}") as url:
        steps = first_steps(url, False)
        for step in steps:
            if step["type"] == "thought":
                step["signature"] = step["signature"][:-8] + "AAAAAAA="
        (call,) = [s for s in steps if s["type"] == "function_call"]
        again = {"model": "m", "tools": TOOLS, "store": False, "input": [
            {"type": "user_input", "content": [{"type": "text", "text": "Weather in Rome?"}]},
            *steps, {"type": "function_result", "call_id": call["id"], "name": "get_weather",
                     "result": "sunny"}]}
        assert httpx2.post(url + "/v1beta/interactions", json=again, timeout=60).status_code == 200
        received = emu.received[-1].body
    assert "sig-A1b2" not in json.dumps(received)
