"""The plain-HTTP/1.1 transport (`toolwire.http.plain`) against real servers on 127.0.0.1.

Each test runs a small asyncio server that reads requests and writes exact bytes: bodies by
length, by chunks (split at awkward places, with extensions and trailers) or until the close,
interim responses, bodies that must not be read, malformed answers, stalls and closes. The
client side is an `httpx2.AsyncClient` with the transport mounted for ``http://``, as
`toolwire.http.transport.HttpTransport` mounts it. Every test runs on asyncio's own event loop
and again on uvloop's, whose transports are not asyncio's classes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx2
import pytest
import uvloop

from toolwire.errors import StreamError
from toolwire.http.connection import parse_head
from toolwire.http.plain import Http1Transport, request_head
from toolwire.http.transport import HttpTransport, WireRequest

Reader = asyncio.StreamReader
Writer = asyncio.StreamWriter


pytestmark = pytest.mark.filterwarnings(
    "ignore:Overriding the \"event_loop_policy\" fixture:DeprecationWarning")


@pytest.fixture(params=["asyncio", "uvloop"])
def event_loop_policy(request: pytest.FixtureRequest) -> asyncio.AbstractEventLoopPolicy:
    """The event loops the transport must work on: asyncio's and uvloop's."""
    if request.param == "uvloop":
        return uvloop.EventLoopPolicy()
    return asyncio.DefaultEventLoopPolicy()


async def test_each_test_runs_on_the_loop_its_parameter_names(
        event_loop_policy: asyncio.AbstractEventLoopPolicy) -> None:
    on_uvloop = isinstance(asyncio.get_running_loop(), uvloop.Loop)
    assert on_uvloop == isinstance(event_loop_policy, uvloop.EventLoopPolicy)


class Raw:
    """A TCP server on 127.0.0.1 whose ``handle(server, reader, writer)`` answers each
    connection with exact bytes; it counts connections and keeps every request it read."""

    def __init__(self, handle: Callable[[Raw, Reader, Writer], Awaitable[None]]) -> None:
        self.handle = handle
        self.connections = 0
        self.requests: list[bytes] = []
        self.open = 0
        self.most_open = 0
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def request(self, reader: Reader) -> bytes | None:
        """One request (head and ``Content-Length`` body), or None when the client closed."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            return None
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        data = head + await reader.readexactly(length)
        self.requests.append(data)
        return data

    async def _on_connect(self, reader: Reader, writer: Writer) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)  # type: ignore[arg-type]
        self.connections += 1
        self.open += 1
        self.most_open = max(self.most_open, self.open)
        try:
            await self.handle(self, reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self.open -= 1
            self._tasks.discard(task)  # type: ignore[arg-type]
            writer.close()

    async def __aenter__(self) -> Raw:
        self._server = await asyncio.start_server(self._on_connect, "127.0.0.1", 0)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def answering(*answers: bytes) -> Callable[[Raw, Reader, Writer], Awaitable[None]]:
    """Answer every request on a connection with the next of ``answers`` (shared by all
    connections), keeping the connection open until the client closes it."""
    queue = list(answers)

    async def handle(server: Raw, reader: Reader, writer: Writer) -> None:
        while queue and await server.request(reader) is not None:
            writer.write(queue.pop(0))
            await writer.drain()
        await reader.read()

    return handle


def ok(body: bytes = b"hello", extra: bytes = b"") -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n%s" % (len(body), extra, body)


@contextlib.asynccontextmanager
async def client(**kwargs: object) -> AsyncIterator[httpx2.AsyncClient]:
    transport = Http1Transport(**kwargs)  # type: ignore[arg-type]
    async with httpx2.AsyncClient(mounts={"http://": transport}, timeout=5) as c:
        yield c


async def trickle(writer: Writer, data: bytes, cuts: list[int]) -> None:
    """Write ``data`` in pieces cut at ``cuts``, each piece on its own after a pause."""
    start = 0
    for cut in [*cuts, len(data)]:
        writer.write(data[start:cut])
        await writer.drain()
        await asyncio.sleep(0.005)
        start = cut


# --------------------------------------------------------------------------- requests


async def test_the_request_line_headers_and_body_arrive_as_sent() -> None:
    async with Raw(answering(ok(), ok())) as server, client() as c:
        resp = await c.post(server.url + "/v1/chat?a=1&b=%20x", content=b'{"q": "\xc3\xbc"}',
                            headers={"X-Key": "k1", "Content-Type": "application/json"})
        assert resp.status_code == 200 and resp.content == b"hello"
        got = await c.get(server.url + "/health")
        assert got.text == "hello"
    head, _, body = server.requests[0].partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"POST /v1/chat?a=1&b=%20x HTTP/1.1"
    assert f"Host: 127.0.0.1:{server.port}".encode() in lines
    assert b"X-Key: k1" in lines and b"Content-Type: application/json" in lines
    assert body == b'{"q": "\xc3\xbc"}' and b"Content-Length: 11" in lines
    get_lines = server.requests[1].split(b"\r\n")
    assert get_lines[0] == b"GET /health HTTP/1.1"
    assert not any(line.lower().startswith(b"content-length") for line in get_lines)
    assert server.connections == 1


def test_the_request_head_adds_host_and_length_where_missing() -> None:
    request = httpx2.Request("POST", "http://example.com/p?x=1", content=b"abc")
    del request.headers["host"]
    request.headers["Transfer-Encoding"] = "chunked"
    head, close = request_head(request, b"abc")
    lines = head.split(b"\r\n")
    assert lines[0] == b"POST /p?x=1 HTTP/1.1" and lines[1] == b"Host: example.com"
    assert b"Content-Length: 3" in lines and not close
    assert not any(line.lower().startswith(b"transfer-encoding") for line in lines)
    other = httpx2.Request("PUT", "http://[::1]:8080/", headers={"Connection": "close"})
    del other.headers["host"]
    head, close = request_head(other, b"")
    assert b"Host: [::1]:8080\r\n" in head and b"Content-Length: 0\r\n" in head and close


async def test_a_streamed_request_body_is_sent_with_its_length() -> None:
    async def parts() -> AsyncIterator[bytes]:
        yield b"one,"
        yield b"two"

    async with Raw(answering(ok())) as server, client() as c:
        resp = await c.post(server.url + "/up", content=parts())
        assert resp.status_code == 200
    head, _, body = server.requests[0].partition(b"\r\n\r\n")
    assert body == b"one,two" and b"Content-Length: 7" in head.split(b"\r\n")
    assert b"transfer-encoding" not in head.lower()


@pytest.mark.parametrize("sep", [b"\r\n", b"\n"], ids=["crlf", "bare-lf"])
def test_a_head_arriving_byte_by_byte_is_searched_from_where_the_last_search_stopped(
        sep: bytes) -> None:
    raw = sep.join([b"HTTP/1.1 200 OK", b"Content-Length: 2", b"X-Pad: " + b"p" * 300, b"",
                    b"ok"])
    whole = parse_head(bytearray(raw), "GET")
    assert whole is not None and raw[whole[0]:] == b"ok"
    buf, since = bytearray(), 0
    for at in range(len(raw)):
        buf += raw[at:at + 1]
        found = parse_head(buf, "GET", since)
        if found is not None:
            break
        since = max(0, len(buf) - 2)  # as the connection does
    assert found == whole and len(buf) == whole[0]  # found as the byte ending it arrived


# --------------------------------------------------------------------------- bodies


CHUNKED_BODY = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n"
                b"5;name=value\r\nhello\r\n"
                b"1\r\n \r\n"
                b"A; quoted=\"a;b\"\r\nworld, and\r\n"
                b"0\r\nX-Trailer: one\r\nX-Other: two\r\n\r\n")


@pytest.mark.parametrize("cuts", [
    [],
    list(range(1, len(CHUNKED_BODY))),  # one byte at a time
    [CHUNKED_BODY.index(b"5;") + 1, CHUNKED_BODY.index(b"hello") + 2,
     CHUNKED_BODY.index(b"hello") + 5, CHUNKED_BODY.index(b"hello") + 6,
     CHUNKED_BODY.index(b"0\r\n") + 1, CHUNKED_BODY.index(b"X-Other") + 3,
     len(CHUNKED_BODY) - 1],  # inside sizes, data, CRLFs and trailers
], ids=["whole", "bytewise", "awkward"])
async def test_chunked_bodies_split_anywhere_with_extensions_and_trailers(cuts: list[int]
                                                                          ) -> None:
    async def handle(server: Raw, reader: Reader, writer: Writer) -> None:
        await server.request(reader)
        await trickle(writer, CHUNKED_BODY, cuts)
        await server.request(reader)  # the connection is reused: the trailers were read
        writer.write(ok(b"again"))
        await writer.drain()
        await reader.read()

    async with Raw(handle) as server, client() as c:
        first = await c.get(server.url + "/")
        second = await c.get(server.url + "/")
    assert first.content == b"hello world, and"
    assert first.headers["content-type"] == "text/plain"
    assert "x-trailer" not in first.headers
    assert second.content == b"again" and server.connections == 1


async def test_a_body_is_passed_on_as_it_arrives() -> None:
    seen_first = asyncio.Event()

    async def handle(server: Raw, reader: Reader, writer: Writer) -> None:
        await server.request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                     b"d\r\ndata: first\n\n\r\n")
        await writer.drain()
        await seen_first.wait()  # the rest only once the client has the first event
        writer.write(b"e\r\ndata: second\n\n\r\n0\r\n\r\n")
        await writer.drain()
        await reader.read()

    async with Raw(handle) as server, client() as c:
        pieces = []
        async with c.stream("GET", server.url + "/events") as resp:
            async for piece in resp.aiter_raw():
                pieces.append(piece)
                seen_first.set()
    assert pieces == [b"data: first\n\n", b"data: second\n\n"]


async def test_a_content_length_body_in_pieces_is_passed_on_piece_by_piece() -> None:
    body = b"x" * 3000
    released = asyncio.Event()

    async def handle(server: Raw, reader: Reader, writer: Writer) -> None:
        await server.request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 3000\r\n\r\n" + body[:1000])
        await writer.drain()
        await released.wait()
        writer.write(body[1000:])
        await writer.drain()
        await reader.read()

    async with Raw(handle) as server, client() as c:
        got = b""
        async with c.stream("GET", server.url + "/") as resp:
            async for piece in resp.aiter_raw():
                got += piece
                released.set()
    assert got == body


async def test_http10_bodies_until_close_and_keep_alive() -> None:
    async def handle(server: Raw, reader: Reader, writer: Writer) -> None:
        request = await server.request(reader)
        assert request is not None
        if b"/close" in request:
            writer.write(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the close")
            return  # the server closes: that ends the body
        writer.write(b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 4\r\n\r\n"
                     b"kept")
        await writer.drain()
        await server.request(reader)
        writer.write(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok")
        await writer.drain()
        await reader.read()

    async with Raw(handle) as server, client() as c:
        first = await c.get(server.url + "/close")
        assert first.content == b"until the close" and first.http_version == "HTTP/1.0"
        assert (await c.get(server.url + "/kept")).content == b"kept"
        assert (await c.get(server.url + "/kept")).content == b"ok"
        assert server.connections == 2  # the close-delimited one could not be reused
        assert (await c.get(server.url + "/close")).content == b"until the close"
    assert server.connections == 3  # HTTP/1.0 without keep-alive is not reused either


async def test_connection_close_is_honoured() -> None:
    async with Raw(answering(ok(b"a", b"Connection: close\r\n"), ok(b"b"))) as server, \
            client() as c:
        assert (await c.get(server.url + "/")).content == b"a"
        assert (await c.get(server.url + "/")).content == b"b"
    assert server.connections == 2


async def test_interim_responses_are_skipped() -> None:
    interim = (b"HTTP/1.1 100 Continue\r\n\r\n"
               b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n")
    async with Raw(answering(interim + ok(b"final"))) as server, client() as c:
        resp = await c.post(server.url + "/", content=b"x")
    assert resp.status_code == 200 and resp.content == b"final"
    assert "link" not in resp.headers


@pytest.mark.parametrize(("method", "status"), [("HEAD", 200), ("GET", 204), ("GET", 304)])
async def test_responses_without_a_body_read_none(method: str, status: int) -> None:
    no_body = b"HTTP/1.1 %d Whatever\r\nContent-Length: 10\r\n\r\n" % status
    async with Raw(answering(no_body, ok(b"next"))) as server, client() as c:
        resp = await c.request(method, server.url + "/")
        assert resp.status_code == status and resp.content == b""
        assert resp.headers["content-length"] == "10"
        assert (await c.get(server.url + "/")).content == b"next"  # same connection, in step
    assert server.connections == 1


async def test_repeated_headers_are_kept_in_order_and_names_match_any_case() -> None:
    extra = (b"Set-Cookie: a=1\r\nX-Mixed-Case: yes\r\nset-cookie: b=2\r\n"
             b"X-Folded: one\r\n  two\r\n")
    async with Raw(answering(ok(b"", extra))) as server, client() as c:
        resp = await c.get(server.url + "/")
    assert resp.headers.get_list("set-cookie") == ["a=1", "b=2"]
    assert resp.headers["x-mixed-case"] == "yes" and resp.headers["X-MIXED-CASE"] == "yes"
    assert resp.headers["x-folded"] == "one two"
    assert [k for k, _ in resp.headers.raw][1:3] == [b"Set-Cookie", b"X-Mixed-Case"]


async def test_bare_line_feeds_in_the_head_are_read() -> None:
    async with Raw(answering(b"HTTP/1.1 201 Created\nContent-Length: 3\nX-A: b\n\nabc")) \
            as server, client() as c:
        resp = await c.get(server.url + "/")
    assert resp.status_code == 201 and resp.content == b"abc" and resp.headers["x-a"] == "b"
    assert resp.reason_phrase == "Created"


async def test_a_body_closed_before_its_end_closes_the_connection() -> None:
    async def handle(server: Raw, reader: Reader, writer: Writer) -> None:
        while await server.request(reader) is not None:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b"y" * 5000)
            await writer.drain()

    async with Raw(handle) as server, client() as c:
        async with c.stream("GET", server.url + "/") as resp:
            async for _ in resp.aiter_raw():
                break  # most of the body is never read
        async with c.stream("GET", server.url + "/") as resp:
            assert resp.status_code == 200
    assert server.connections == 2


# --------------------------------------------------------------------------- connections


async def test_an_idle_connection_the_server_closed_is_not_reused() -> None:
    async def handle(server: Raw, reader: Reader, writer: Writer) -> None:
        await server.request(reader)
        writer.write(ok(b"once"))
        await writer.drain()  # then closes: an idle timeout on the server's side

    async with Raw(handle) as server, client() as c:
        assert (await c.get(server.url + "/")).content == b"once"
        for _ in range(50):  # until the close has reached the client
            if server.open == 0:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        assert (await c.get(server.url + "/")).content == b"once"
    assert server.connections == 2 and len(server.requests) == 2


async def test_an_idle_connection_older_than_the_keepalive_expiry_is_not_reused() -> None:
    async with Raw(answering(ok(), ok(), ok())) as server, client(keepalive_expiry=0.05) as c:
        await c.get(server.url + "/")
        await c.get(server.url + "/")
        assert server.connections == 1
        await asyncio.sleep(0.1)
        await c.get(server.url + "/")
    assert server.connections == 2


async def test_a_reused_connection_closed_before_any_answer_is_retried_once() -> None:
    async def handle(server: Raw, reader: Reader, writer: Writer) -> None:
        await server.request(reader)
        writer.write(ok(b"first"))
        await writer.drain()
        if server.connections == 1:
            await server.request(reader)  # read, then closed with no answer: the race
            return
        await reader.read()

    async with Raw(handle) as server, client() as c:
        assert (await c.get(server.url + "/")).content == b"first"
        assert (await c.post(server.url + "/", content=b"again")).content == b"first"
    assert server.connections == 2
    assert [r.endswith(b"again") for r in server.requests] == [False, True, True]


async def test_a_new_connection_closed_before_any_answer_is_an_error() -> None:
    async def handle(server: Raw, reader: Reader, writer: Writer) -> None:
        await server.request(reader)

    async with Raw(handle) as server, client() as c:
        with pytest.raises(httpx2.RemoteProtocolError, match="closed the connection without"):
            await c.get(server.url + "/")
    assert server.connections == 1


async def test_at_most_max_connections_are_open_and_the_rest_wait() -> None:
    gate = asyncio.Event()

    async def handle(server: Raw, reader: Reader, writer: Writer) -> None:
        while await server.request(reader) is not None:
            await gate.wait()
            writer.write(ok(b"done"))
            await writer.drain()

    async with Raw(handle) as server, client(max_connections=2) as c:
        calls = [asyncio.create_task(c.get(server.url + "/")) for _ in range(6)]
        while len(server.requests) < 2:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        assert len(server.requests) == 2  # four wait for a connection
        gate.set()
        replies = await asyncio.gather(*calls)
    assert [r.content for r in replies] == [b"done"] * 6
    assert server.connections == 2 and server.most_open == 2


async def test_a_request_to_another_host_takes_the_slot_of_an_idle_connection() -> None:
    async with Raw(answering(ok(b"a"), ok(b"a"))) as one, Raw(answering(ok(b"b"))) as two, \
            client(max_connections=1) as c:
        assert (await c.get(one.url + "/")).content == b"a"
        assert (await c.get(two.url + "/")).content == b"b"
        assert (await c.get(one.url + "/")).content == b"a"
    assert one.connections == 2 and two.connections == 1


async def test_a_request_cancelled_while_waiting_gives_its_connection_back() -> None:
    async def handle(server: Raw, reader: Reader, writer: Writer) -> None:
        request = await server.request(reader)
        if request is not None and b"/stall" in request:
            await asyncio.sleep(60)
        writer.write(ok(b"fine"))
        await writer.drain()
        await reader.read()

    async with Raw(handle) as server, client(max_connections=1) as c:
        stalled = asyncio.create_task(c.get(server.url + "/stall"))
        while not server.requests:
            await asyncio.sleep(0.01)
        stalled.cancel()
        with pytest.raises(asyncio.CancelledError):
            await stalled
        assert (await c.get(server.url + "/")).content == b"fine"
    assert server.connections == 2  # the stalled connection was closed, not reused


async def test_aclose_closes_pooled_connections() -> None:
    transport = Http1Transport()
    async with Raw(answering(ok(), ok())) as server:
        async with httpx2.AsyncClient(mounts={"http://": transport}) as c:
            await c.get(server.url + "/")
            await c.get(server.url + "/")
            assert transport.connections == 1
            assert server.open == 1
        for _ in range(100):  # the server reads the end of the connection
            if not server.open:
                break
            await asyncio.sleep(0.01)
        assert server.open == 0 and transport.connections == 0


async def test_aclose_fails_a_response_in_flight_and_frees_its_slot() -> None:
    async def handle(server: Raw, reader: Reader, writer: Writer) -> None:
        await server.request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
        await writer.drain()
        await reader.read()

    transport = Http1Transport()
    async with Raw(handle) as server, httpx2.AsyncClient(mounts={"http://": transport}) as c:
        resp = await c.send(c.build_request("GET", server.url + "/"), stream=True)
        await transport.aclose()
        with pytest.raises(httpx2.ReadError, match="closed on this side"):
            await resp.aread()
        assert transport.connections == 0


# --------------------------------------------------------------------------- timeouts


async def test_a_server_that_never_answers_is_a_read_timeout() -> None:
    async def handle(server: Raw, reader: Reader, writer: Writer) -> None:
        await server.request(reader)
        await reader.read()

    async with Raw(handle) as server, client() as c:
        with pytest.raises(httpx2.ReadTimeout, match=r"0\.1 s"):
            await c.get(server.url + "/", timeout=httpx2.Timeout(5, read=0.1))


async def test_a_body_that_stalls_is_a_read_timeout() -> None:
    async def handle(server: Raw, reader: Reader, writer: Writer) -> None:
        await server.request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
        await writer.drain()
        await reader.read()

    async with Raw(handle) as server, client() as c:
        async with c.stream("GET", server.url + "/",
                            timeout=httpx2.Timeout(5, read=0.1)) as resp:
            with pytest.raises(httpx2.ReadTimeout):
                await resp.aread()
        assert resp.status_code == 200


async def test_read_timeouts_on_one_connection_each_come_at_their_own_deadline() -> None:
    """A connection has one read timer, not one per wait: after requests answered within a
    long read timeout, a shorter one on the same connection still ends its stalled wait (the
    timer is set again, earlier), with the timeout it was given; the guard only keeps a
    broken timer from hanging the test."""
    async def handle(server: Raw, reader: Reader, writer: Writer) -> None:
        while await server.request(reader) is not None:
            if len(server.requests) > 6:
                await reader.read()  # the seventh request is never answered
                return
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            await writer.drain()

    async with Raw(handle) as server, client() as c:
        for n in range(6):
            got = await c.get(server.url + "/", timeout=httpx2.Timeout(5, read=30 + n))
            assert got.text == "ok"
        async with asyncio.timeout(20):
            with pytest.raises(httpx2.ReadTimeout, match=r"0\.2 s \(the read timeout\)"):
                await c.get(server.url + "/", timeout=httpx2.Timeout(5, read=0.2))
    assert server.connections == 1


async def test_a_connection_closed_leaves_no_read_timer_behind() -> None:
    from toolwire.http.connection import Connection

    async def handle(server: Raw, reader: Reader, writer: Writer) -> None:
        while await server.request(reader) is not None:
            writer.write(b"HTTP/1.1 204 No Content\r\n\r\n")
            await writer.drain()

    loop = asyncio.get_running_loop()
    async with Raw(handle) as server:
        _, conn = await loop.create_connection(
            lambda: Connection(("127.0.0.1", server.port), loop), "127.0.0.1", server.port)
        head = await conn.exchange(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"", "GET",
                                   {"read": 60})
        assert head[1] == 204
        assert conn._timer is not None  # set for the wait, left for the next one
        conn.close()
        assert conn._timer is None


async def test_waiting_too_long_for_a_connection_is_a_pool_timeout() -> None:
    async def handle(server: Raw, reader: Reader, writer: Writer) -> None:
        await server.request(reader)
        await reader.read()

    async with Raw(handle) as server, client(max_connections=1) as c:
        busy = asyncio.create_task(c.get(server.url + "/"))
        while not server.requests:
            await asyncio.sleep(0.01)
        with pytest.raises(httpx2.PoolTimeout, match="all 1 were busy"):
            await c.get(server.url + "/", timeout=httpx2.Timeout(5, pool=0.1))
        busy.cancel()
        await asyncio.gather(busy, return_exceptions=True)


async def test_a_server_that_does_not_read_is_a_write_timeout() -> None:
    async def handle(server: Raw, reader: Reader, writer: Writer) -> None:
        await asyncio.sleep(60)  # never reads: the socket buffers fill up

    async with Raw(handle) as server, client() as c:
        with pytest.raises(httpx2.WriteTimeout, match="write timeout"):
            await c.post(server.url + "/", content=b"z" * (64 << 20),
                         timeout=httpx2.Timeout(5, write=0.2))


async def test_no_server_on_the_port_is_a_connect_error() -> None:
    probe = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = probe.sockets[0].getsockname()[1]
    probe.close()
    await probe.wait_closed()
    async with client() as c:
        with pytest.raises(httpx2.ConnectError, match=f"127.0.0.1:{port}"):
            await c.get(f"http://127.0.0.1:{port}/")


async def test_an_answer_that_comes_before_the_whole_body_is_sent_is_read() -> None:
    async def handle(server: Raw, reader: Reader, writer: Writer) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 413 Payload Too Large\r\nContent-Length: 8\r\n\r\ntoo big!")
        await writer.drain()
        await asyncio.sleep(60)  # the body is never read, the connection stays open

    async with Raw(handle) as server, client() as c:
        resp = await c.post(server.url + "/", content=b"z" * (32 << 20),
                            timeout=httpx2.Timeout(5, write=1))
    assert resp.status_code == 413 and resp.content == b"too big!"


# --------------------------------------------------------------------------- malformed


@pytest.mark.parametrize(("answer", "match"), [
    (b"HTTP/2 200\r\n\r\n", "not answer with an HTTP/1.x status line"),
    (b"ICY 200 OK\r\n\r\n", "not answer with an HTTP/1.x status line"),
    (b"HTTP/1.1 20 OK\r\n\r\n", "not answer with an HTTP/1.x status line"),
    (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "malformed header line"),
    (b"HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", "malformed header line"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n", "invalid Content-Length"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
     "invalid Content-Length"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "not hexadecimal"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n",
     "longer than its size"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", "after 3 of the 10 body bytes"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
     "in the middle of a chunked body"),
    (b"HTTP/1.1 200 OK\r\nContent-Le", "in the middle of a response head"),
])
async def test_malformed_or_cut_answers_are_protocol_errors(answer: bytes, match: str) -> None:
    async def handle(server: Raw, reader: Reader, writer: Writer) -> None:
        await server.request(reader)
        writer.write(answer)
        await writer.drain()  # and close

    async with Raw(handle) as server, client() as c:
        with pytest.raises(httpx2.RemoteProtocolError, match=match):
            await c.get(server.url + "/")


# --------------------------------------------------------------------------- HttpTransport


async def test_http_transport_sends_plain_http_over_the_lean_connections() -> None:
    async with Raw(answering(ok(b'{"a": 1}'), ok(b'{"a": 2}'))) as server:
        transport = HttpTransport(timeout=5)
        first = await transport.send(WireRequest(url=server.url + "/v1/x", body={"q": "ü"}))
        second = await transport.send(WireRequest(url=server.url + "/v1/x", body={"q": 1.5}))
        lean = transport._http1
        assert isinstance(lean, Http1Transport) and lean.connections == 1
        await transport.aclose()
    assert await first.json() == {"a": 1} and await second.json() == {"a": 2}
    assert server.requests[0].endswith('{"q":"ü"}'.encode())
    assert server.requests[1].endswith(b'{"q":1.5}')


async def test_lean_http_off_uses_httpx2s_own_transport() -> None:
    async with Raw(answering(ok(b'{"a": 1}'))) as server:
        transport = HttpTransport(timeout=5, lean_http=False)
        reply = await transport.send(WireRequest(url=server.url + "/v1/x", body={}))
        assert transport._http1 is None
        await transport.aclose()
    assert await reply.json() == {"a": 1}


async def test_an_http_proxy_in_the_environment_is_used_instead(
        monkeypatch: pytest.MonkeyPatch) -> None:
    async with Raw(answering(ok(b'{"via": "proxy"}'))) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        transport = HttpTransport(timeout=5)
        reply = await transport.send(WireRequest(url="http://127.0.0.1:9/v1/x", body={}))
        assert transport._http1 is None
        await transport.aclose()
    assert await reply.json() == {"via": "proxy"}
    assert proxy.requests[0].startswith(b"POST http://127.0.0.1:9/v1/x HTTP/1.1")


async def test_transport_failures_reach_the_client_as_retryable_stream_errors() -> None:
    async def handle(server: Raw, reader: Reader, writer: Writer) -> None:
        await server.request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\ndata\r\n")
        await writer.drain()  # then closes mid-body

    async with Raw(handle) as server:
        transport = HttpTransport(timeout=5)
        resp = await transport.send(WireRequest(url=server.url + "/", body={}, stream=True))
        with pytest.raises(StreamError) as caught:
            async for _ in resp.aiter_bytes():
                pass
        await transport.aclose()
    assert caught.value.retryable and caught.value.error_type == "connection_error"
    assert "chunked body" in str(caught.value)


def _head_lines(request: bytes) -> tuple[bytes, set[bytes]]:
    """A request's line, and its header lines with each name in lower case."""
    lines = request.partition(b"\r\n\r\n")[0].split(b"\r\n")
    return lines[0], {b"%s:%s" % (n.lower(), v) for n, _, v in (x.partition(b":")
                                                                  for x in lines[1:])}


@pytest.mark.parametrize(("stream", "status"), [(True, 200), (True, 429), (False, 200)])
async def test_plain_http_is_sent_and_read_as_through_httpx2s_own_transport(
        stream: bool, status: int) -> None:
    """`HttpTransport` writes plain HTTP itself, with no request or response object of
    httpx2's: the server gets the same head as httpx2's own transport sends, and the caller
    the same status, headers (a repeated one joined, a UTF-8 value read) and body."""
    body = b"data: one\n\n"
    answer = (b"HTTP/1.1 %d X\r\nContent-Type: text/event-stream\r\nX-Many: a\r\n"
              b"x-many: b\r\nX-Place: Z\xc3\xbcrich\r\nTransfer-Encoding: chunked\r\n\r\n"
              b"%x\r\n%s\r\n0\r\n\r\n" % (status, len(body), body))
    request = WireRequest(url="/v1/chat/completions?x=1", body={"q": "ü"}, stream=stream,
                          headers={"Authorization": "Bearer k", "user-agent": "mine",
                                   "content-type": "application/json"})
    seen = []
    for lean in (True, False):
        async with Raw(answering(answer)) as server:
            transport = HttpTransport(timeout=5, lean_http=lean)
            sent = WireRequest(url=server.url + request.url, body=request.body,
                               stream=stream, headers=request.headers)
            reply = await transport.send(sent)
            got = (reply.status, reply.headers, await reply.read())
            await transport.aclose()
            line, headers = _head_lines(server.requests[0])
            port = b"%d" % server.port
        seen.append((got, line, {h.replace(port, b"PORT") for h in headers},
                     server.requests[0].partition(b"\r\n\r\n")[2]))
    assert seen[0] == seen[1]
    (status_got, headers_got, content), line, headers, sent_body = seen[0]
    assert status_got == status and content == body and sent_body == b'{"q":"\xc3\xbc"}'
    assert headers_got["x-many"] == "a, b" and headers_got["x-place"] == "Zürich"
    assert line == b"POST /v1/chat/completions?x=1 HTTP/1.1"
    assert b"user-agent: mine" in headers and b"authorization: Bearer k" in headers
