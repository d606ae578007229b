"""A reply read whole by `HttpTransport.send`, over a raw TCP server on 127.0.0.1: toolwire's
own plain-HTTP path (``lean_http=True``, which reads the body with no `httpx2.Response`) and
httpx2's stock transport (``lean_http=False``) give the same status, headers and bytes, and
the same named errors, for every case here: gzip and deflate bodies, an encoding neither
decodes, repeated headers, an error body, a body cut off and a body that stops coming, and
the size bounds."""

from __future__ import annotations

import asyncio
import gzip
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest

from toolwire.errors import ResponseTooLarge, StreamError
from toolwire.http.limits import Limits
from toolwire.http.transport import HttpTransport, WireRequest, WireResponse

BODY = ('{"answer": "' + "grüezi " * 400 + '"}').encode()
LEAN = pytest.mark.parametrize("lean", [True, False], ids=["plain", "httpx2"])

Reply = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@asynccontextmanager
async def raw_server(reply: Reply) -> AsyncIterator[str]:
    """A server that reads one request (head and body), then answers with ``reply``."""
    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            await reader.readexactly(length)
            await reply(reader, writer)
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, TimeoutError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    finally:
        server.close()
        await server.wait_closed()


def answer(body: bytes, *headers: str, status: str = "200 OK") -> Reply:
    async def reply(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        lines = [f"HTTP/1.1 {status}", "content-type: application/json",
                 f"content-length: {len(body)}", *headers]
        writer.write("\r\n".join(lines).encode("latin-1") + b"\r\n\r\n" + body)

    return reply


async def send(url: str, lean: bool, *, timeout: float = 10.0,
               limits: Limits | None = None) -> WireResponse:
    transport = HttpTransport(timeout=timeout, lean_http=lean, limits=limits)
    try:
        return await transport.send(WireRequest(url=url + "/v1/chat", body={"q": 1}))
    finally:
        await transport.aclose()


@LEAN
@pytest.mark.parametrize("encoding", ["gzip", "x-gzip", "deflate"])
async def test_a_compressed_body_is_inflated(lean: bool, encoding: str) -> None:
    packed = gzip.compress(BODY) if "gzip" in encoding else zlib.compress(BODY)
    async with raw_server(answer(packed, f"content-encoding: {encoding}")) as url:
        resp = await send(url, lean)
    assert resp.status == 200
    assert await resp.read() == BODY
    assert resp.headers["content-encoding"] == encoding


@LEAN
async def test_a_body_in_an_encoding_neither_decodes_comes_as_it_was_sent(lean: bool) -> None:
    async with raw_server(answer(BODY, "Content-Encoding: x-private")) as url:
        resp = await send(url, lean)
    assert await resp.read() == BODY
    assert resp.headers["content-encoding"] == "x-private"


@LEAN
@pytest.mark.parametrize("encoding", ["gzip", "deflate", "gzip, br"])
async def test_a_body_that_is_not_its_encoding_is_a_retryable_decoding_error(
        lean: bool, encoding: str) -> None:
    """Whoever inflates it (toolwire, or httpx2's decoder for a list of encodings), a body
    that is not what its encoding says is a named error, never httpx2's own."""
    async with raw_server(answer(b"\x78\x9c not compressed", f"content-encoding: {encoding}")
                          ) as url:
        with pytest.raises(StreamError) as caught:
            await send(url, lean)
    assert caught.value.error_type == "decoding_error" and caught.value.retryable
    assert f"not valid {encoding} data" in str(caught.value)


@LEAN
async def test_repeated_headers_are_joined_and_names_are_lower_case(lean: bool) -> None:
    async with raw_server(answer(BODY, "X-Trace: one", "x-trace: two", "X-Id: 7")) as url:
        resp = await send(url, lean)
    assert resp.headers["x-trace"] == "one, two"
    assert resp.headers["x-id"] == "7"
    assert all(name == name.lower() for name in resp.headers)


@LEAN
async def test_an_error_body_is_read_whole_with_its_status(lean: bool) -> None:
    async with raw_server(answer(b'{"error": "busy"}', status="503 Service Unavailable")) as url:
        resp = await send(url, lean)
    assert resp.status == 503
    assert await resp.read() == b'{"error": "busy"}'


@LEAN
async def test_a_body_cut_off_is_a_retryable_connection_error(lean: bool) -> None:
    async def reply(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 5000\r\n\r\n" + BODY[:100])

    async with raw_server(reply) as url:
        with pytest.raises(StreamError) as caught:
            await send(url, lean)
    assert caught.value.error_type == "connection_error" and caught.value.retryable
    assert "connection dropped while reading the reply" in str(caught.value)


@LEAN
async def test_a_body_that_stops_coming_is_a_retryable_timeout(lean: bool) -> None:
    async def reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 5000\r\n\r\n" + BODY[:100])
        await writer.drain()
        await asyncio.wait_for(reader.read(), 5)  # the rest never comes: till the client goes

    async with raw_server(reply) as url:
        with pytest.raises(StreamError) as caught:
            await send(url, lean, timeout=0.3)
    assert caught.value.error_type == "timeout" and caught.value.retryable
    assert "the reply stopped coming within the 0.3 s timeout" in str(caught.value)


@LEAN
async def test_a_body_over_its_bound_names_the_bound(lean: bool) -> None:
    limits = Limits(max_body=1000, max_error_body=100)
    async with raw_server(answer(BODY)) as url:
        with pytest.raises(ResponseTooLarge) as caught:
            await send(url, lean, limits=limits)
    assert "max_body" in str(caught.value)
    async with raw_server(answer(BODY, status="500 Internal Server Error")) as url:
        with pytest.raises(ResponseTooLarge) as caught:
            await send(url, lean, limits=limits)
    assert "max_error_body" in str(caught.value) and "status 500" in str(caught.value)


@LEAN
async def test_an_inflated_body_over_its_bound_names_the_bound(lean: bool) -> None:
    limits = Limits(max_decoded=len(BODY) - 1)
    async with raw_server(answer(gzip.compress(BODY), "content-encoding: gzip")) as url:
        with pytest.raises(ResponseTooLarge) as caught:
            await send(url, lean, limits=limits)
    assert "max_decoded" in str(caught.value)
