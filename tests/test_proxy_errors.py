"""Upstream failures and token counts across wires, told to the client in its own wire."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest

from proxy_harness import running_proxy
from toolwire.emulator import Emulator, Fault
from toolwire.proxy.forward import COUNT_HEADER

pytest.importorskip("uvicorn")
anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")

ASK = {"model": "m", "max_tokens": 20, "messages": [{"role": "user", "content": "hi"}]}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_rate_limit_reaches_an_anthropic_client_as_its_429_with_retry_after(
        stream: bool) -> None:
    with Emulator([Fault("rate_limit", retry_after=3)]) as emu, \
            running_proxy(f"openai-responses:m@{emu.base_url}") as url:
        reply = httpx2.post(url + "/v1/messages", json={**ASK, "stream": stream})
    assert reply.status_code == 429
    assert reply.headers["retry-after"] == "3"
    error = reply.json()
    assert error["type"] == "error" and error["error"]["type"] == "rate_limit_error"


def test_an_overloaded_upstream_is_the_client_wires_overloaded_status() -> None:
    with Emulator([Fault("overloaded")]) as emu, \
            running_proxy(f"openai:m@{emu.base_url}") as url:
        reply = httpx2.post(url + "/v1/messages", json=ASK)
    assert reply.status_code == 529  # Anthropic's, where the upstream said 503
    assert reply.json()["error"]["type"] == "overloaded_error"


def test_an_unreachable_upstream_is_a_502_in_the_client_wire_that_the_sdk_reads() -> None:
    with running_proxy("anthropic:m@http://127.0.0.1:9") as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
        with pytest.raises(openai.APIStatusError) as caught:
            client.chat.completions.create(model="m", messages=[{"role": "user",
                                                                 "content": "hi"}])
    assert caught.value.status_code == 502
    assert "could not reach" in caught.value.message


@pytest.mark.parametrize(("upstream", "said"), [
    ("openai-responses", "provider"), ("openai", "estimate")])
def test_count_tokens_says_whose_count_it_is(upstream: str, said: str) -> None:
    with Emulator([]) as emu, running_proxy(f"{upstream}:m@{emu.base_url}") as url:
        client = anthropic.Anthropic(base_url=url, api_key="unused", max_retries=0)
        raw = client.messages.with_raw_response.count_tokens(
            model="m", messages=[{"role": "user", "content": "How many tokens is this?"}])
        counted = raw.parse()
        received = [r.path for r in emu.received]
    assert raw.headers[COUNT_HEADER] == said
    assert counted.input_tokens > 0
    if said == "provider":
        assert received == ["/v1/responses/input_tokens"]
    else:
        assert received == []


@pytest.mark.parametrize(("upstream", "client", "path", "body", "words"), [
    ("openai", "anthropic-messages", "/v1/messages", ASK, "prompt is too long: "),
    ("anthropic", "openai-chat", "/v1/chat/completions",
     {"model": "m", "messages": ASK["messages"]}, "This model's maximum context length is "),
])
def test_a_prompt_too_long_is_worded_as_the_client_wire_words_it(
        upstream: str, client: str, path: str, body: dict[str, object], words: str) -> None:
    """Agents look for their provider's words to know they must shorten the history."""
    with Emulator([{"text": "never"}], bill=True, windows={"m": 3}) as emu, \
            running_proxy(f"{upstream}:m@{emu.base_url}") as url:
        reply = httpx2.post(url + path, json=body)
    assert reply.status_code == 400
    message = reply.json()["error"]["message"]
    assert message.startswith(words), message
    import re

    numbers = [int(n) for n in re.findall(r"\d+", message.split("(upstream")[0])]
    assert 3 in numbers and max(numbers) > 3  # the window, and the prompt's tokens


def test_the_proxy_places_cache_breakpoints_for_a_client_wire_without_them() -> None:
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}}}]
    with Emulator([{"text": "ok"}], bill=True) as emu, \
            running_proxy(f"anthropic:m@{emu.base_url}") as url:
        reply = httpx2.post(url + "/v1/chat/completions", json={
            "model": "m", "tools": tools, "messages": [
                {"role": "system", "content": "You are terse. " * 400},
                {"role": "user", "content": "Weather in Rome?"}]})
        sent = emu.received[-1].body
    assert reply.status_code == 200, reply.text
    marks = json.dumps(sent).count('"cache_control"')
    assert 1 <= marks <= 4  # Anthropic's bound on breakpoints


@pytest.mark.parametrize("upstream", ["openai", "gemini", "openai-responses"])
def test_an_image_from_an_anthropic_client_reaches_another_wire(upstream: str) -> None:
    import base64

    from media_files import png
    from toolwire.codecs import get_codec
    from toolwire.transcript import MediaPart

    image = png(8, 8, seed=3)
    message = {"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": base64.b64encode(image).decode()}},
        {"type": "text", "text": "What is this?"}]}
    with Emulator([{"text": "a square"}]) as emu, \
            running_proxy(f"{upstream}:m@{emu.base_url}") as url:
        reply = httpx2.post(url + "/v1/messages", json={**ASK, "messages": [message]})
        received = emu.received[-1]
    assert reply.status_code == 200, reply.text
    wire = received.wire
    kw = {"model": "m", "stream": False} if wire == "gemini-generate" else {}
    sent = get_codec(wire).decode_request(received.body, **kw)
    media = [p for m in sent.messages for p in m.parts if isinstance(p, MediaPart)]
    assert [(m.media_type, m.data) for m in media] == [("image/png", image)]


def test_usage_reaches_the_client_in_its_wire_with_the_cache_counts() -> None:
    """The second of two requests with the same long prefix is read from the upstream's
    cache; a Chat Completions client sees it as cached prompt tokens."""
    long_system = "You answer questions about the weather, briefly. " * 200
    with Emulator([{"text": "ok"}, {"text": "ok"}], bill=True) as emu, \
            running_proxy(f"anthropic:claude-sonnet-4-5@{emu.base_url}") as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
        replies = [client.chat.completions.create(model="claude-sonnet-4-5", messages=[
            {"role": "system", "content": long_system},
            {"role": "user", "content": "Rome?"}]) for _ in range(2)]
    first, second = (r.usage for r in replies)
    assert first is not None and second is not None
    assert first.prompt_tokens > 1000 and second.prompt_tokens == first.prompt_tokens
    assert first.prompt_tokens_details is None or not first.prompt_tokens_details.cached_tokens
    assert second.prompt_tokens_details is not None
    assert second.prompt_tokens_details.cached_tokens > 1000


def test_a_server_tool_block_the_client_wire_cannot_hold_is_named_in_the_losses() -> None:
    from toolwire.proxy.forward import LOSSES_HEADER
    from toolwire.transcript import Message, OpaquePart, Reply, TextPart

    searched = Reply(message=Message(role="assistant", parts=(
        OpaquePart(wire="anthropic-messages", kind="server_tool_use", payload={
            "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
            "input": {"query": "weather Rome"}}),
        TextPart(text="Sunny in Rome."))))
    with Emulator([searched]) as emu, running_proxy(f"anthropic:m@{emu.base_url}") as url:
        reply = httpx2.post(url + "/v1/chat/completions", json={
            "model": "m", "messages": [{"role": "user", "content": "Weather in Rome?"}]})
    assert reply.status_code == 200
    assert reply.json()["choices"][0]["message"]["content"] == "Sunny in Rome."
    assert "server_tool_use block of anthropic-messages" in reply.headers[LOSSES_HEADER]


def test_losses_found_only_when_a_live_stream_ends_are_in_its_log_line(tmp_path: Path) -> None:
    """A streamed reply's headers go before the upstream's reply is whole: what the client's
    wire could not hold of it is written to the record's log line once the stream ends."""
    from toolwire.proxy.record import LOG_NAME
    from toolwire.transcript import Message, OpaquePart, Reply, TextPart

    searched = Reply(message=Message(role="assistant", parts=(
        TextPart(text="Looking it up. "),
        OpaquePart(wire="anthropic-messages", kind="server_tool_use", payload={
            "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
            "input": {"query": "weather Rome"}}),
        TextPart(text="Sunny in Rome."))))
    with Emulator([searched]) as emu, \
            running_proxy(f"anthropic:m@{emu.base_url}", record=str(tmp_path)) as url:
        reply = httpx2.post(url + "/v1/chat/completions", json={
            "model": "m", "stream": True,
            "messages": [{"role": "user", "content": "Weather in Rome?"}]})
    assert reply.status_code == 200
    assert "Sunny in Rome." in streamed_text(reply.text)
    logged = json.loads((tmp_path / LOG_NAME).read_text().splitlines()[-1])
    assert logged["stream"] is True and "broke" not in logged
    assert "server_tool_use block of anthropic-messages" in logged["losses"]


def test_a_live_stream_that_broke_says_so_in_its_log_line(tmp_path: Path) -> None:
    from toolwire.proxy.record import LOG_NAME
    from toolwire.transcript import Message, Reply, TextPart

    broken = Fault("drop_mid_stream", reply=Reply(message=Message(
        role="assistant", parts=[TextPart(text="a long answer " * 40)])))
    with Emulator([broken]) as emu, \
            running_proxy(f"anthropic:m@{emu.base_url}", record=str(tmp_path)) as url:
        reply = httpx2.post(url + "/v1/chat/completions", json={
            "model": "m", "stream": True,
            "messages": [{"role": "user", "content": "Tell me a lot"}]})
    assert "a long answer" in streamed_text(reply.text)
    logged = json.loads((tmp_path / LOG_NAME).read_text().splitlines()[-1])
    assert "StreamError" in logged["broke"]


def streamed_text(events: str) -> str:
    """The text of a Chat Completions stream, its deltas put together."""
    said = []
    for line in events.splitlines():
        if line.startswith("data: {"):
            for choice in json.loads(line[6:]).get("choices", ()):
                said.append(choice.get("delta", {}).get("content") or "")
    return "".join(said)
