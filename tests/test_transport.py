"""The transport seam: `MockTransport`, and `HttpTransport` over real loopback HTTP.

Real HTTP runs against the provider emulator, or against a bare server from the emulator's HTTP
layer when a test needs an answer the emulator does not script (403, 404, ``retry-after-ms``, a
connection closed before any reply). Retries are the client's job; these tests check which
failures the transport reports as retryable and that the client acts on it.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from toolwire.codecs import WIRES, get_codec
from toolwire.codecs.registry import get_wire
from toolwire.emulator import Emulator, Fault
from toolwire.emulator._http import HttpRequest, HttpResponse, HttpServer, serve
from toolwire.emulator.checks import error_body
from toolwire.errors import (
    AuthenticationError,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    ProviderError,
    RateLimitError,
    StreamError,
)
from toolwire.events import StreamEnd, TextDelta, listen
from toolwire.http.client import HttpModel, RetryEvent, RetryPolicy, model
from toolwire.http.providers import provider_for
from toolwire.http.transport import HttpTransport, MockTransport, WireRequest, WireResponse
from toolwire.transcript import Message, Reply, Request, TextPart, ToolCallPart, Usage

PROVIDER = {wire: provider_for(wire) for wire in WIRES}
PATHS = {wire: get_wire(wire).path.replace("{model}", "m") for wire in WIRES}
ANSWER = Reply(message=Message.assistant("Zürich is 18°C."), stop="end_turn",
               usage=Usage(input_tokens=12, output_tokens=5))
CALLS = Reply(
    message=Message(role="assistant", parts=(
        TextPart(text="Checking."),
        ToolCallPart(id="call_1", name="get_weather", arguments={"city": "Zürich"}),
    )),
    stop="tool_calls",
)
FAST = RetryPolicy(base=0.001, max_wait=0.005)


def ask(text: str = "Weather in Zürich?") -> Request:
    return Request(model="m", messages=(Message.user(text),), max_tokens=64)


def model_for(wire: str, base_url: str, *, timeout: float = 10.0,
              retry: RetryPolicy = FAST, key: str | None = None) -> HttpModel:
    env = {"ANTHROPIC_API_KEY": key} if key else {}
    return model(f"{PROVIDER[wire]}:m@{base_url}", env=env, retry=retry,
                          transport=HttpTransport(timeout=timeout), seed=1)


def connections(emu: Emulator) -> int:
    return emu.connections


Answer = Callable[[HttpRequest], Awaitable[HttpResponse]]


class Bare:
    """A bare HTTP server on 127.0.0.1 that answers with a function and counts requests."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.requests: list[HttpRequest] = []
        self.server: HttpServer | None = None

    @property
    def base_url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.port}"

    async def _handle(self, request: HttpRequest) -> HttpResponse:
        self.requests.append(request)
        return await self.answer(request)

    async def __aenter__(self) -> Bare:
        self.server = await serve(self._handle)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        await self.server.aclose()


def json_response(status: int, body: Any, headers: dict[str, str] | None = None
                  ) -> HttpResponse:
    return HttpResponse(status, {"content-type": "application/json", **(headers or {})},
                        body=json.dumps(body).encode())


# --------------------------------------------------------------------------- MockTransport


async def test_mock_transport_answers_from_a_sync_or_async_handler() -> None:
    codec = get_codec("openai-chat")

    def sync_handler(request: WireRequest) -> WireResponse:
        return WireResponse.from_json(200, codec.encode_response(ANSWER))

    async def async_handler(request: WireRequest) -> WireResponse:
        await asyncio.sleep(0)
        return WireResponse.from_json(200, codec.encode_response(CALLS))

    for handler, expected in ((sync_handler, ANSWER), (async_handler, CALLS)):
        transport = MockTransport(handler)
        m = model_for("openai-chat", "http://127.0.0.1:9")
        m.transport = transport
        reply = await m.complete(ask())
        assert reply.text == expected.text
        assert [(c.name, c.arguments) for c in reply.tool_calls] == [
            (c.name, c.arguments) for c in expected.tool_calls]
        (sent,) = transport.requests
        assert sent.url == "http://127.0.0.1:9/v1/chat/completions"
        assert sent.body["messages"] == [{"role": "user", "content": "Weather in Zürich?"}]
        assert sent.stream is False
        await m.aclose()


async def test_mock_transport_streams_chunks_and_closes_once() -> None:
    codec = get_codec("anthropic-messages")
    chunks = codec.encode_stream(CALLS)
    closed: list[bool] = []

    async def close() -> None:
        closed.append(True)

    async def produce() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    def handler(request: WireRequest) -> WireResponse:
        assert request.stream
        return WireResponse(200, {"Content-Type": "text/event-stream"}, chunks=produce(),
                            close=close)

    m = model_for("anthropic-messages", "http://127.0.0.1:9")
    m.transport = MockTransport(handler)
    events = [e async for e in m.stream(ask())]
    end = events[-1]
    assert isinstance(end, StreamEnd)
    assert end.reply.tool_calls[0].arguments == {"city": "Zürich"}
    assert closed == [True]


async def test_wire_response_reads_whole_bodies_and_pieces() -> None:
    whole = WireResponse.from_json(201, {"a": "ü"}, {"X-Thing": "1"})
    assert whole.headers == {"content-type": "application/json", "x-thing": "1"}
    assert await whole.json() == {"a": "ü"}
    pieces = WireResponse(200, chunks=[b'{"a"', b": 1}"])
    assert await pieces.read() == b'{"a": 1}'
    assert await pieces.read() == b'{"a": 1}'  # kept after the first read
    assert [c async for c in WireResponse(204, content=b"").aiter_bytes()] == []


# --------------------------------------------------------------------------- connections


@pytest.mark.parametrize("wire", WIRES)
async def test_requests_reuse_one_connection(wire: str) -> None:
    async with Emulator([ANSWER, CALLS, ANSWER, CALLS, ANSWER]) as emu:
        m = model_for(wire, emu.base_url)
        for _ in range(3):
            await m.complete(ask())
        for _ in range(2):  # streamed replies read to the end give the connection back
            events = [e async for e in m.stream(ask())]
            assert isinstance(events[-1], StreamEnd)
        assert connections(emu) == 1
        await m.aclose()
        emu.assert_done()
    assert len(emu.received) == 5


async def test_concurrent_requests_open_connections_that_are_then_reused() -> None:
    async with Emulator([ANSWER] * 8) as emu:
        m = model_for("openai-chat", emu.base_url)
        replies = await asyncio.gather(*(m.complete(ask()) for _ in range(4)))
        opened = connections(emu)
        assert 1 <= opened <= 4
        for _ in range(4):
            await m.complete(ask())
        assert connections(emu) == opened
        await m.aclose()
    assert [r.text for r in replies] == [ANSWER.text] * 4


async def test_the_body_and_headers_arrive_as_sent() -> None:
    async with Emulator([ANSWER]) as emu:
        m = model_for("anthropic-messages", emu.base_url, key="sk-ant-test-key")
        await m.complete(ask("Grüße aus Köln 🌧"))
        await m.aclose()
    (got,) = emu.received
    assert got.body["messages"] == [{"role": "user", "content": "Grüße aus Köln 🌧"}]
    assert got.headers["x-api-key"] == "sk-ant-test-key"
    assert got.headers["anthropic-version"] == "2023-06-01"
    assert got.headers["content-type"] == "application/json"


async def test_a_stream_is_read_as_it_arrives() -> None:
    chunks = get_codec("openai-chat").encode_stream(ANSWER)
    go = asyncio.Event()

    async def produce() -> AsyncIterator[bytes]:
        yield b"".join(chunks[:2])  # enough for the first text delta
        await go.wait()  # the rest only once the client has seen that delta
        for chunk in chunks[2:]:
            yield chunk

    async def answer(request: HttpRequest) -> HttpResponse:
        return HttpResponse(200, {"content-type": "text/event-stream"}, chunks=produce())

    async with Bare(answer) as server:
        m = model_for("openai-chat", server.base_url)
        events = []
        async with asyncio.timeout(5):
            async for event in m.stream(ask()):
                events.append(event)
                if isinstance(event, TextDelta):
                    go.set()
        await m.aclose()
    end = events[-1]
    assert isinstance(end, StreamEnd) and end.reply.text == ANSWER.text


# --------------------------------------------------------------------------- timeouts


async def test_a_reply_slower_than_the_timeout_is_a_retryable_timeout() -> None:
    async with Emulator([Fault(kind="slow_first_byte", delay=2.0)]) as emu:
        m = model_for("openai-chat", emu.base_url, timeout=0.2,
                      retry=RetryPolicy(max_attempts=1))
        with pytest.raises(StreamError) as caught:
            await m.complete(ask())
        await m.aclose()
    assert caught.value.retryable
    assert caught.value.error_type == "timeout"
    assert "0.2 s timeout" in str(caught.value)


async def test_a_stream_that_stalls_is_a_retryable_timeout() -> None:
    async with Emulator([ANSWER], chunk_delay=1.0) as emu:
        m = model_for("anthropic-messages", emu.base_url, timeout=0.2,
                      retry=RetryPolicy(max_attempts=1))
        with pytest.raises(StreamError) as caught:
            async for _ in m.stream(ask()):
                pass
        await m.aclose()
    assert caught.value.retryable and caught.value.error_type == "timeout"


async def test_a_timed_out_request_is_retried_and_then_answered() -> None:
    async with Emulator([Fault(kind="slow_first_byte", delay=2.0), ANSWER]) as emu:
        m = model_for("ollama-chat", emu.base_url, timeout=0.3)
        seen: list[RetryEvent] = []
        with listen(seen.append):
            reply = await m.complete(ask())
        await m.aclose()
        assert connections(emu) == 2  # the timed-out connection is not reused
    assert reply.text == ANSWER.text
    assert [type(e.error) for e in seen] == [StreamError]


# --------------------------------------------------------------------------- retries


async def test_retry_after_is_honoured() -> None:
    async with Emulator([Fault(kind="rate_limit", retry_after=0.3), ANSWER]) as emu:
        m = model_for("anthropic-messages", emu.base_url)
        seen: list[RetryEvent] = []
        started = time.monotonic()
        with listen(seen.append):
            reply = await m.complete(ask())
        waited = time.monotonic() - started
        await m.aclose()
    assert reply.text == ANSWER.text
    assert [(type(e.error), e.wait) for e in seen] == [(RateLimitError, 0.3)]
    assert waited >= 0.3  # the backoff alone would have waited at most 5 ms


async def test_retry_after_ms_is_honoured() -> None:
    codec = get_codec("openai-chat")
    answers = [json_response(429, error_body("openai-chat", 429, "slow down"),
                             {"retry-after-ms": "250"}),
               json_response(200, codec.encode_response(ANSWER))]

    async def answer(request: HttpRequest) -> HttpResponse:
        return answers.pop(0)

    async with Bare(answer) as server:
        m = model_for("openai-chat", server.base_url)
        seen: list[RetryEvent] = []
        with listen(seen.append):
            reply = await m.complete(ask())
        await m.aclose()
    assert reply.text == ANSWER.text
    assert [e.wait for e in seen] == [0.25]
    assert len(server.requests) == 2


FINAL = {400: InvalidRequestError, 401: AuthenticationError, 403: PermissionDeniedError,
         404: NotFoundError}


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("status", sorted(FINAL))
async def test_client_errors_are_never_retried(wire: str, status: int) -> None:
    message = f"scripted {status} for this test"

    async def answer(request: HttpRequest) -> HttpResponse:
        return json_response(status, error_body(wire, status, message))

    async with Bare(answer) as server:
        m = model_for(wire, server.base_url, retry=RetryPolicy(max_attempts=5, base=0.001))
        with pytest.raises(ProviderError) as caught:
            await m.complete(ask())
        with pytest.raises(ProviderError):
            async for _ in m.stream(ask()):
                pass
        await m.aclose()
    assert type(caught.value) is FINAL[status]
    assert not caught.value.retryable
    assert caught.value.status == status and message in str(caught.value)
    assert len(server.requests) == 2  # one for complete, one for stream: no retries


@pytest.mark.parametrize("status", [429, 500, 503])
async def test_server_side_failures_are_retried(status: int) -> None:
    codec = get_codec("openai-responses")
    answers = [json_response(status, error_body("openai-responses", status, "try again")),
               json_response(200, codec.encode_response(ANSWER))]

    async def answer(request: HttpRequest) -> HttpResponse:
        return answers.pop(0)

    async with Bare(answer) as server:
        m = model_for("openai-responses", server.base_url)
        reply = await m.complete(ask())
        await m.aclose()
    assert reply.text == ANSWER.text and len(server.requests) == 2


async def test_a_connection_closed_before_any_reply_is_retried() -> None:
    body = json.dumps(get_codec("openai-chat").encode_response(ANSWER)).encode()
    accepted: list[int] = []

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(1)
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))
        await reader.readexactly(length)
        if len(accepted) > 1:
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                         + f"content-length: {len(body)}\r\n\r\n".encode() + body)
            await writer.drain()
        writer.close()  # the first connection closes with no reply at all
        await writer.wait_closed()

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        m = model_for("openai-chat", f"http://127.0.0.1:{port}")
        seen: list[RetryEvent] = []
        with listen(seen.append):
            reply = await m.complete(ask())
        await m.aclose()
    finally:
        server.close()
        await server.wait_closed()
    assert reply.text == ANSWER.text
    assert len(seen) == 1 and isinstance(seen[0].error, StreamError)
    assert seen[0].error.error_type == "connection_error" and seen[0].error.retryable


async def test_a_reply_cut_off_mid_body_is_retried() -> None:
    codec = get_codec("gemini-generate")
    whole = json.dumps(codec.encode_response(ANSWER)).encode()

    async def half() -> AsyncIterator[bytes]:
        yield whole[: len(whole) // 2]

    answers = [HttpResponse(200, {"content-type": "application/json"}, chunks=half(),
                            drop=True),
               json_response(200, codec.encode_response(ANSWER))]

    async def answer(request: HttpRequest) -> HttpResponse:
        return answers.pop(0)

    async with Bare(answer) as server:
        m = model_for("gemini-generate", server.base_url)
        seen: list[RetryEvent] = []
        with listen(seen.append):
            reply = await m.complete(ask())
        await m.aclose()
    assert reply.text == ANSWER.text
    assert len(seen) == 1 and isinstance(seen[0].error, StreamError)
    assert len(server.requests) == 2


async def test_a_server_that_is_not_there_is_a_retryable_connection_error() -> None:
    probe = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = probe.sockets[0].getsockname()[1]
    probe.close()
    await probe.wait_closed()
    m = model_for("openai-chat", f"http://127.0.0.1:{port}", retry=RetryPolicy(max_attempts=2,
                                                                               base=0.001))
    seen: list[RetryEvent] = []
    with pytest.raises(StreamError) as caught, listen(seen.append):
        await m.complete(ask())
    await m.aclose()
    assert caught.value.retryable and caught.value.error_type == "connection_error"
    assert f"127.0.0.1:{port}" in str(caught.value)
    assert len(seen) == 1
