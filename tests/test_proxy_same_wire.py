"""Same wire, same bytes: a request whose wire is the upstream's goes through the proxy byte
for byte, and the upstream's reply (whole, streamed, or an error) comes back byte for byte."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx2
import pytest

from proxy_harness import running_proxy
from toolwire.emulator import Emulator, Fault
from toolwire.transcript import Message, Reply, ToolCallPart

pytest.importorskip("uvicorn")

CALLS = Reply(message=Message(role="assistant", parts=(
    ToolCallPart(id="call_a1", name="get_weather", arguments={"city": "Zürich"}),
    ToolCallPart(id="call_b2", name="get_weather", arguments={"city": "Rome"}))),
    stop="tool_calls")
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}

# Each wire: its model id prefix, its path (whole, streamed) and a body in it, written with
# spacing and key order no encoder of toolwire's would choose, so that a body written anew
# could not pass for the client's.
WIRES = {
    "anthropic-messages": ("anthropic", "/v1/messages", "/v1/messages", {
        "max_tokens": 50, "model": "m", "messages": [{"content": "hi", "role": "user"}],
        "tools": [{"input_schema": SCHEMA, "name": "get_weather"}]}),
    "openai-chat": ("openai", "/v1/chat/completions", "/v1/chat/completions", {
        "messages": [{"content": "hi", "role": "user"}], "model": "m",
        "tools": [{"function": {"parameters": SCHEMA, "name": "get_weather"},
                   "type": "function"}]}),
    "openai-responses": ("openai-responses", "/v1/responses", "/v1/responses", {
        "input": "hi", "model": "m",
        "tools": [{"parameters": SCHEMA, "name": "get_weather", "type": "function"}]}),
    "ollama-chat": ("ollama", "/api/chat", "/api/chat", {
        "stream": False, "messages": [{"content": "hi", "role": "user"}], "model": "m",
        "tools": [{"function": {"parameters": SCHEMA, "name": "get_weather"},
                   "type": "function"}]}),
    "gemini-generate": ("gemini", "/v1beta/models/m:generateContent",
                        "/v1beta/models/m:streamGenerateContent?alt=sse", {
                            "contents": [{"parts": [{"text": "hi"}], "role": "user"}],
                            "tools": [{"functionDeclarations": [
                                {"parameters": SCHEMA, "name": "get_weather"}]}]}),
}


def body_bytes(body: dict[str, object], stream: bool, wire: str) -> bytes:
    if stream and wire != "gemini-generate":
        body = {**body, "stream": True}
    return json.dumps(body, indent=1).encode()


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    with Emulator(lambda request, wire: CALLS) as emu:
        yield emu


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("wire", list(WIRES))
def test_the_bytes_pass_unchanged_both_ways(wire: str, stream: bool,
                                            emulator: Emulator) -> None:
    provider, path, stream_path, body = WIRES[wire]
    where = stream_path if stream else path
    data = body_bytes(body, stream, wire)
    direct = httpx2.post(emulator.base_url + where, content=data,
                         headers={"content-type": "application/json"})
    with running_proxy(f"{provider}:m@{emulator.base_url}") as url:
        through = httpx2.post(url + where, content=data,
                              headers={"content-type": "application/json",
                                       "x-api-key": "the client's", "authorization": "Bearer b"})
    assert direct.status_code == through.status_code == 200
    assert emulator.received[-1].raw == data  # the request, byte for byte
    assert through.content == direct.content  # the reply, byte for byte
    assert "the client's" not in json.dumps(emulator.received[-1].headers)  # keys stay here
    assert emulator.received[-1].headers.get("authorization") != "Bearer b"


def test_an_upstream_error_passes_unchanged_with_its_status_and_retry_after() -> None:
    fault = Fault("rate_limit", retry_after=7)
    provider, path, _, body = WIRES["anthropic-messages"]
    data = body_bytes(body, False, "anthropic-messages")
    with Emulator([fault, fault]) as emu:
        direct = httpx2.post(emu.base_url + path, content=data)
        with running_proxy(f"{provider}:m@{emu.base_url}") as url:
            through = httpx2.post(url + path, content=data)
    assert through.status_code == direct.status_code == 429
    assert through.content == direct.content
    assert through.headers["retry-after"] == "7"


def test_a_body_naming_another_model_goes_on_with_the_upstream_model() -> None:
    provider, path, _, body = WIRES["openai-chat"]
    with Emulator([CALLS]) as emu, running_proxy(f"{provider}:m@{emu.base_url}") as url:
        reply = httpx2.post(url + path, json={**body, "model": "gpt-9"})
        assert reply.status_code == 200
        assert emu.received[-1].body == {**body, "model": "m"}
