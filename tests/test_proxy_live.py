"""Streams across wires are written as the upstream's events arrive: the client reads the
first words while the upstream is still holding back the rest."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import httpx2
import pytest

from proxy_harness import running_proxy
from toolwire.codecs import get_codec
from toolwire.emulator import Emulator, Raw
from toolwire.transcript import Message, ReasoningPart, Reply, Request, ToolCallPart

pytest.importorskip("uvicorn")

REPLY = Reply(message=Message(role="assistant", parts=(
    Message.assistant("Checking the weather in both cities now.").parts[0],
    ToolCallPart(id="call_rome1", name="get_weather", arguments={"city": "Rome"}),
    ToolCallPart(id="call_oslo2", name="get_weather", arguments={"city": "Oslo"}))),
    stop="tool_calls")

CLIENTS = {
    "anthropic-messages": ("/v1/messages", {"model": "m", "max_tokens": 50, "stream": True,
                                            "messages": [{"role": "user", "content": "hi"}]},
                           b'"text_delta"'),
    "openai-chat": ("/v1/chat/completions", {"model": "m", "stream": True, "messages": [
        {"role": "user", "content": "hi"}]}, b'"content":"Check'),
    "openai-responses": ("/v1/responses", {"model": "m", "stream": True, "input": "hi"},
                         b"response.output_text.delta"),
    "ollama-chat": ("/api/chat", {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
                    b'"content":"Check'),
    "gemini-generate": ("/v1beta/models/m:streamGenerateContent?alt=sse", {"contents": [
        {"role": "user", "parts": [{"text": "hi"}]}]}, b'"text":"Check'),
    "bedrock-converse": ("/model/m/converse-stream", {"messages": [
        {"role": "user", "content": [{"text": "hi"}]}]}, b'{"text":"Check'),
    "gemini-interactions": ("/v1beta/interactions", {"model": "m", "stream": True,
                                                     "input": "hi"}, b'"text":"Check'),
}


UPSTREAMS = {"anthropic-messages": "openai", "openai-chat": "anthropic",
             "openai-responses": "openai", "ollama-chat": "openai", "gemini-generate": "openai",
             "bedrock-converse": "openai", "gemini-interactions": "anthropic"}
"""The upstream (a provider of another wire) each client's stream comes from."""


def held_stream(wire: str, released: threading.Event, late: list[bool], reply: Reply = REPLY,
                marker: bytes = b"Check") -> Iterator[bytes]:
    """The upstream's stream in two halves, the first ending with the chunk that holds
    ``marker``: the second only once the test says the client has seen the first words (or
    after 20 s, noted in ``late``)."""
    chunks = get_codec(wire).encode_stream(reply, request=Request(model="m"))
    first = next(i for i, c in enumerate(chunks) if marker in c)
    yield from chunks[:first + 1]
    late.append(not released.wait(20))
    yield from chunks[first + 1:]


@pytest.mark.parametrize("client", list(CLIENTS))
def test_the_first_words_reach_the_client_before_the_upstream_has_finished(
        client: str) -> None:
    path, body, first_words = CLIENTS[client]
    released, late = threading.Event(), []
    provider = UPSTREAMS[client]
    upstream = "openai-chat" if provider == "openai" else "anthropic-messages"
    with Emulator([Raw(chunks=held_stream(upstream, released, late))]) as emu, \
            running_proxy(f"{provider}:m@{emu.base_url}") as url, \
            httpx2.stream("POST", url + path, json=body, timeout=60) as reply:
        seen = b""
        for piece in reply.iter_bytes():
            seen += piece
            if first_words in seen:
                released.set()
        assert reply.status_code == 200
    assert late == [False], "the client saw nothing until the upstream had finished"
    codec = get_codec(client)
    whole = list(codec.decode_stream([seen], request=Request(model="m")))[-1].reply
    assert [c.arguments for c in whole.tool_calls] == [{"city": "Rome"}, {"city": "Oslo"}]
    assert whole.text == "Checking the weather in both cities now."


@pytest.mark.parametrize(("client", "first_words", "end"), [
    ("anthropic-messages", b'"text_delta"', b"message_stop"),
    ("gemini-interactions", b'"type":"text"', b"interaction.completed"),
])
def test_an_upstream_that_breaks_mid_stream_ends_the_client_stream_with_its_error_event(
        client: str, first_words: bytes, end: bytes) -> None:
    from toolwire.emulator import Fault

    path, body, _ = CLIENTS[client]
    long_text = Reply(message=Message.assistant("A reply long enough to be cut off. " * 20))
    with Emulator([Fault("drop_mid_stream", reply=long_text)]) as emu, \
            running_proxy(f"openai:m@{emu.base_url}") as url:
        reply = httpx2.post(url + path, json=body, timeout=60)
    assert reply.status_code == 200  # the stream had begun
    assert first_words in reply.content  # the first words came through
    last = reply.content.strip().split(b"\n\n")[-1]
    assert last.startswith(b"event: error\ndata: ")
    assert end not in reply.content


THINKING = Reply(message=Message(role="assistant", parts=(
    ReasoningPart(text="Rome first, then Oslo.", provider_data={"anthropic-messages": {
        "type": "thinking", "thinking": "Rome first, then Oslo.", "signature": "sig-Zz9"}}),
    *REPLY.message.parts)), stop="tool_calls")


def thinking_through_proxy(path: str, body: dict[str, object], first_words: bytes) -> bytes:
    """What a client reads through the proxy from an Anthropic upstream streaming `THINKING`,
    the upstream holding back all after its first reasoning until the client has seen
    ``first_words``."""
    released, late = threading.Event(), []
    held = held_stream("anthropic-messages", released, late, THINKING, b"thinking_delta")
    with Emulator([Raw(chunks=held)]) as emu, \
            running_proxy(f"anthropic:m@{emu.base_url}") as url, \
            httpx2.stream("POST", url + path, json=body, timeout=60) as reply:
        seen = b""
        for piece in reply.iter_bytes():
            seen += piece
            if first_words in seen:
                released.set()
        assert reply.status_code == 200
    assert late == [False], "the client saw no reasoning until the upstream had finished"
    return seen


@pytest.mark.parametrize(("client", "path", "body", "first_words"), [
    ("openai-chat", *CLIENTS["openai-chat"][:2], b'"reasoning_content":"Rome'),
    ("openai-responses", *CLIENTS["openai-responses"][:2],
     b"response.reasoning_summary_text.delta"),
])
def test_reasoning_streams_as_it_comes_and_its_seal_follows_at_the_end(
        client: str, path: str, body: dict[str, object], first_words: bytes) -> None:
    seen = thinking_through_proxy(path, body, first_words)
    whole = list(get_codec(client).decode_stream([seen], request=Request(model="m")))[-1].reply
    assert [c.arguments for c in whole.tool_calls] == [{"city": "Rome"}, {"city": "Oslo"}]
    if client == "openai-responses":  # the seal, at the end, brings the signature back
        from toolwire.proxy.carry import open_seal

        sealed = [p.provider_data[client]["encrypted_content"]
                  for p in whole.message.parts if isinstance(p, ReasoningPart)
                  and p.provider_data and "encrypted_content" in p.provider_data[client]]
        assert [open_seal(s) for s in sealed] == [
            ("anthropic-messages", THINKING.message.parts[0].provider_data[  # type: ignore[index]
                "anthropic-messages"])]


def test_an_interactions_client_gets_the_events_its_sdk_reads_each_with_an_id_of_its_own() -> None:
    """Reasoning, text and two calls, from an Anthropic upstream, as Interactions events: each
    one the google-genai SDK's ``InteractionSSEEvent``, their ids in order and none twice, the
    calls' steps each whole (``step.start`` to ``step.stop``) before the next, and at the end a
    thought step whose signature brings Anthropic's signed thinking back."""
    pytest.importorskip("google.genai")
    import json

    from sdk_types import assert_interactions_model

    path, body, _ = CLIENTS["gemini-interactions"]
    seen = thinking_through_proxy(path, body, b'"thought_summary"')
    events = [json.loads(block.split(b"data: ", 1)[1]) for block in seen.split(b"\n\n")
              if block.strip()]
    for event in events:
        assert_interactions_model("InteractionSSEEvent", event)
    assert [e["event_id"] for e in events] == [f"evt_{n}" for n in range(1, len(events) + 1)]
    kinds = [e["event_type"] for e in events]
    assert kinds[0] == "interaction.created" and kinds[-1] == "interaction.completed"
    assert events[0]["interaction"]["id"] == events[-1]["interaction"]["id"]
    assert events[-1]["interaction"]["status"] == "requires_action"
    starts = [e["step"]["type"] for e in events if e["event_type"] == "step.start"]
    assert starts == ["thought", "model_output", "function_call", "function_call", "thought"]
    assert kinds.count("step.stop") == len(starts)
    whole = list(get_codec("gemini-interactions").decode_stream(
        [seen], request=Request(model="m")))[-1].reply
    assert whole.text == "Checking the weather in both cities now."
    assert [c.arguments for c in whole.tool_calls] == [{"city": "Rome"}, {"city": "Oslo"}]
    reasoning = [p for p in whole.message.parts if isinstance(p, ReasoningPart)]
    assert [p.text for p in reasoning] == ["Rome first, then Oslo.", ""]  # shown once only
    from toolwire.codecs.reasoning import from_bytes_field
    from toolwire.proxy.carry import open_seal

    signature = reasoning[-1].provider_data["gemini-interactions"]["signature"]  # type: ignore[index]
    assert open_seal(from_bytes_field(signature) or "") == (
        "anthropic-messages", THINKING.message.parts[0].provider_data["anthropic-messages"])  # type: ignore[index]
