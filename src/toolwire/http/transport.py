"""The one seam between toolwire and the network: ``send(WireRequest) -> WireResponse``.

Owns `WireRequest`, `WireResponse`, the `Transport` protocol, `HttpTransport` (httpx2: async,
connection reuse, timeouts, streamed bodies read incrementally; plain ``http://`` over the lean
HTTP/1.1 connections of `toolwire.http.plain`) and `MockTransport(handler)`.
Record and replay are transports too (see `toolwire.http.cassette`). Retries live one layer up, in
`toolwire.http.client`, because a stream that breaks mid-reply is only seen while decoding it.
Must not import codecs, the loop or anything vendor-specific. httpx2 is imported lazily, when
the first `HttpTransport` is made.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Mapping,
)
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from toolwire import _json
from toolwire.errors import StreamError
from toolwire.http.limits import (
    OWN_ENCODINGS,
    Limits,
    body_name,
    content_encoding,
    read_chunks,
)

if TYPE_CHECKING:
    import httpx2

    from toolwire.http.plain import Http1Transport


@dataclass(frozen=True, slots=True)
class WireRequest:
    """One HTTP request in a wire format: where it goes and the JSON body."""

    url: str
    body: Mapping[str, Any]
    headers: Mapping[str, str] = field(default_factory=dict)
    stream: bool = False
    method: str = "POST"
    content: bytes | None = None
    """The exact bytes to send, when they were fixed before sending (a signed request);
    otherwise ``body`` is written as JSON."""


class WireResponse:
    """A response: status, headers, and a body read whole (`read`) or in pieces (`aiter_bytes`)."""

    def __init__(
        self,
        status: int,
        headers: Mapping[str, str] | None = None,
        *,
        content: bytes | None = None,
        chunks: AsyncIterator[bytes] | Iterable[bytes] | None = None,
        close: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.status = status
        self.headers: dict[str, str] = {k.lower(): v for k, v in (headers or {}).items()}
        self._content = content
        self._chunks = chunks
        self._close = close

    @classmethod
    def from_json(cls, status: int, body: Any, headers: Mapping[str, str] | None = None
                  ) -> WireResponse:
        data = json.dumps(body).encode()
        return cls(status, {"content-type": "application/json", **(headers or {})}, content=data)

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        if self._content is not None:
            if self._content:
                yield self._content
            return
        chunks = self._chunks
        try:
            if chunks is None:
                return
            if hasattr(chunks, "__aiter__"):
                async for chunk in chunks:
                    yield chunk
            else:
                for chunk in chunks:
                    yield chunk
        finally:
            await self.aclose()

    async def read(self) -> bytes:
        if self._content is None:
            self._content = b"".join([c async for c in self.aiter_bytes()])
        return self._content

    async def json(self) -> Any:
        return json.loads(await self.read())

    async def aclose(self) -> None:
        if self._close is not None:
            close, self._close = self._close, None
            await close()


class Transport(Protocol):
    """Anything that can send a wire request and return its response."""

    async def send(self, request: WireRequest) -> WireResponse: ...

    async def aclose(self) -> None: ...


class HttpTransport:
    """Real HTTP with httpx2: one connection pool reused for every request.

    ``timeout`` is the connect/read/write timeout in seconds (a streamed read waits at most
    ``timeout`` between two pieces, not for the whole reply). At most ``max_connections`` are
    open at once; more requests wait for one to come free.

    ``lean_http`` (on by default) sends plain ``http://`` requests (local servers, the
    emulator) over `toolwire.http.plain.Http1Transport`, toolwire's own connections, which cost
    a fraction of httpx2's default transport per request: the request's head is written from
    the client's default headers and the request's own, with no `httpx2.Request` made, and a
    streamed answer is handed on with no `httpx2.Response` (`_send_plain`). ``https://``
    always goes through httpx2's stock transport, and so does everything when the environment
    sets an HTTP proxy.
    ``lean_http=False`` sends plain HTTP with httpx2's stock transport too.

    An idle connection is closed after ``keepalive_expiry`` seconds. `keep_warm` keeps the
    connection to a server open while the caller is busy elsewhere (a run's tools): shortly
    before it would expire, a ``HEAD /`` goes out on it, which renews it at both ends, so the
    next request does not pay for a new connection (a TLS handshake, for ``https://``).
    ``warm=False`` turns that off. A whole body (a reply, an error) is read within ``limits``
    (`toolwire.http.limits.Limits`: its size as sent and once decompressed).
    """

    def __init__(self, *, timeout: float = 120.0, max_connections: int = 100,
                 lean_http: bool = True, keepalive_expiry: float = 5.0,
                 warm: bool = True, limits: Limits | None = None) -> None:
        if not keepalive_expiry > 0:
            raise ValueError(f"keepalive_expiry must be positive, got {keepalive_expiry!r}")
        self.timeout = timeout
        self.max_connections = max_connections
        self.lean_http = lean_http
        self.keepalive_expiry = keepalive_expiry
        self.warm = warm
        self.limits = limits or Limits()
        self.refreshes = 0  # how many times keep_warm renewed a connection
        self._client: httpx2.AsyncClient | None = None
        self._http1: Http1Transport | None = None  # what plain http:// goes through, if lean
        self._urls: dict[str, httpx2.URL] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._defaults: list[tuple[bytes, bytes, bytes]] | None = None  # the client's headers
        self._heads: dict[tuple[object, ...], tuple[bytes, bool]] = {}
        """Plain HTTP request heads up to the body's length (`toolwire.http.plain.head_start`),
        by method, URL and the request's headers."""
        self._timeouts: dict[str, float | None] = {}

    def _get_client(self) -> httpx2.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            # A pool is tied to the event loop that opened its connections: a model used from
            # a new loop (one asyncio.run per call) gets a new pool; the old loop is gone.
            import httpx2

            self._loop = loop
            mounts: dict[str, httpx2.AsyncBaseTransport] | None = None
            self._http1 = None
            if self.lean_http and not _http_proxy():
                from toolwire.http.plain import Http1Transport

                self._http1 = Http1Transport(max_connections=self.max_connections,
                                             keepalive_expiry=self.keepalive_expiry)
                mounts = {"http://": self._http1}
            self._defaults = None
            self._client = httpx2.AsyncClient(
                timeout=self.timeout,
                limits=httpx2.Limits(max_connections=self.max_connections,
                                     max_keepalive_connections=self.max_connections,
                                     keepalive_expiry=self.keepalive_expiry),
                mounts=mounts,
                verify=_ssl_context(),
            )
        return self._client

    async def send(self, request: WireRequest) -> WireResponse:
        import httpx2

        client = self._get_client()
        content = request.content if request.content is not None else body_bytes(request.body)
        try:
            url = self._urls.get(request.url)
            if url is None:  # parsed once: a model sends to one or two URLs
                if len(self._urls) >= 64:
                    self._urls.clear()
                url = self._urls[request.url] = httpx2.URL(request.url)
            if self._http1 is not None and url.scheme == "http":
                return await self._send_plain(self._http1, request, url, content)
            req = client.build_request(request.method, url, content=content,
                                       headers=dict(request.headers))
            resp = await client.send(req, stream=True)
        except httpx2.TimeoutException as exc:
            raise _timeout(exc, f"{request.url} sent no reply", self.timeout) from exc
        except httpx2.TransportError as exc:
            raise StreamError(f"could not reach {request.url}: {type(exc).__name__}: {exc}",
                              error_type="connection_error", retryable=True) from exc
        if not request.stream or resp.status_code >= 400:
            return await self._whole(resp)
        return WireResponse(resp.status_code, resp.headers,
                            chunks=_iter_http(resp.aiter_raw(), self.timeout),
                            close=resp.aclose)

    async def _whole(self, resp: httpx2.Response) -> WireResponse:
        """``resp`` read whole (one in an encoding other than gzip or deflate through httpx2's
        decoder)."""
        chunks = resp.aiter_raw() if content_encoding(resp.headers) in OWN_ENCODINGS \
            else resp.aiter_bytes()
        return await self._read(chunks, resp.headers, resp.status_code, resp.aclose)

    async def _read(self, chunks: AsyncIterable[bytes], headers: Mapping[str, str], status: int,
                    close: Callable[[], Awaitable[None]]) -> WireResponse:
        """The response whose body ``chunks`` bring, read whole within the limits; closed
        after."""
        import httpx2

        try:
            body = await read_chunks(chunks, headers, status, self.limits, error=status >= 400)
        except httpx2.TimeoutException as exc:
            raise _timeout(exc, "the reply stopped coming", self.timeout) from exc
        except httpx2.TransportError as exc:
            raise StreamError(f"connection dropped while reading the reply: {exc}",
                              error_type="connection_error", retryable=True) from exc
        except httpx2.DecodingError as exc:  # an encoding httpx2's decoder read (`_whole`)
            raise StreamError(f"{body_name(status, status >= 400)} is not valid "
                              f"{content_encoding(headers)} data ({exc})",
                              error_type="decoding_error", retryable=True) from None
        finally:
            await close()
        return WireResponse(status, headers, content=body)

    async def _send_plain(self, http1: Http1Transport, request: WireRequest, url: httpx2.URL,
                          content: bytes) -> WireResponse:
        """``request`` over ``http1`` with no request or response object of httpx2's made
        for it: its head written from the client's default headers and the request's own; a
        stream answered with a status under 400 handed on as it comes; any other answer read
        whole, straight from the connection (through an `httpx2.Response` only in an encoding
        only httpx2 decodes: br, zstd). No cookie is kept from one request to the next."""
        import httpx2

        if self._defaults is None:
            assert self._client is not None
            self._defaults = [(k.lower(), k, v) for k, v in self._client.headers.raw]
            self._timeouts = dict.fromkeys(("connect", "read", "write", "pool"), self.timeout)
        head, close = self._head(request, url, content)
        version, status, reason, raw, stream = await http1.open(
            request.method, url, head, content, close, self._timeouts)
        headers = _header_dict(raw)
        if request.stream and status < 400:
            return WireResponse(status, headers, chunks=_iter_http(stream, self.timeout),
                                close=stream.aclose)
        if content_encoding(headers) in OWN_ENCODINGS:
            return await self._read(stream, headers, status, stream.aclose)
        return await self._whole(httpx2.Response(
            status, headers=raw, stream=stream,
            extensions={"http_version": version, "reason_phrase": reason}))

    def _head(self, request: WireRequest, url: httpx2.URL, content: bytes) -> tuple[bytes, bool]:
        """The head of ``request`` sent as plain HTTP (`toolwire.http.plain.head_bytes` of the
        client's default headers and the request's own) and whether it asks to close. Its
        lines before the body's length are made once per method, URL and headers: a model
        sends the same few heads, only the length new."""
        from toolwire.http.plain import head_end, head_start

        given = request.headers
        key = (request.method, request.url, *given.items())
        start = self._heads.get(key)
        if start is None:
            assert self._defaults is not None  # set before the first plain request
            names = {k.lower().encode("ascii") for k in given}
            headers = [(k, v) for lower, k, v in self._defaults if lower not in names]
            headers += [(k.encode("ascii"), v.encode("ascii")) for k, v in given.items()]
            if len(self._heads) >= 64:
                self._heads.clear()
            start = self._heads[key] = head_start(request.method, url, headers)
        return start[0] + head_end(request.method, content), start[1]

    def keep_warm(self, url: str) -> contextlib.AbstractAsyncContextManager[None]:
        """While the block runs, keep the connection to ``url``'s server from expiring: a
        ``HEAD /`` on it shortly before ``keepalive_expiry`` runs out, as often as needed.
        Nothing happens when no connection was opened yet, or with ``warm=False``."""
        return _Warm(self, url)

    def _renew_after(self) -> float:
        """Seconds after which an idle connection is renewed: shortly before it expires."""
        return self.keepalive_expiry - min(1.0, self.keepalive_expiry / 4)

    async def _refresh(self, url: str) -> None:
        """Renew the connection to ``url``'s server now and every `_renew_after` seconds."""
        import httpx2

        assert self._client is not None
        client = self._client
        origin = httpx2.URL(url).copy_with(raw_path=b"/")
        while True:
            try:
                resp = await client.send(client.build_request("HEAD", origin))
                await resp.aclose()
            except httpx2.HTTPError:
                return  # the next request opens a connection, as it would have
            self.refreshes += 1
            await asyncio.sleep(self._renew_after())

    async def aclose(self) -> None:
        if self._client is not None and self._loop is asyncio.get_running_loop():
            await self._client.aclose()
        self._client = None


class _Warm:
    """`HttpTransport.keep_warm`'s block. On entry (when there is a connection to keep) a timer
    is set for shortly before the connection would expire; most blocks end before it, and the
    exit only cancels it. When it fires, a refresher task renews the connection for as long as
    the block lasts; the exit cancels that task and waits for it, and a cancellation of the
    task that runs the block still comes through that wait."""

    __slots__ = ("_task", "_timer", "_transport", "_url")

    def __init__(self, transport: HttpTransport, url: str) -> None:
        self._transport, self._url = transport, url
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> None:
        t = self._transport
        if t.warm and t._client is not None:
            loop = asyncio.get_running_loop()
            if t._loop is loop:
                self._timer = loop.call_later(t._renew_after(), self._start, loop)

    def _start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        self._task = loop.create_task(self._transport._refresh(self._url))

    async def __aexit__(self, *exc: object) -> None:
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()
        running = asyncio.current_task()
        asked = running.cancelling() if running is not None else 0
        try:
            await task
        except asyncio.CancelledError:
            if running is not None and running.cancelling() > asked:  # this task's own
                raise
        except Exception:  # the refresher's own failure leaves the block as it was
            pass


def body_bytes(body: Mapping[str, Any]) -> bytes:
    """A request body as JSON bytes. Text that is not valid Unicode (a lone surrogate that came
    in a reply as ``"\\udcff"`` and goes back in the history) keeps its escaped form: the body
    is then written in ASCII with escapes, still valid JSON on the wire."""
    try:
        return _json.dumps(body)
    except UnicodeEncodeError:
        return json.dumps(body, ensure_ascii=True, default=str).encode()


_SSL: list[Any] = []
"""The process's TLS context, made on first use and shared by every pool."""


def _ssl_context() -> Any:
    """The TLS context every pool verifies with: httpx2's default (the same certificates and
    environment), loaded once per process: loading it takes about 0.2 s, which a new pool (one
    per event loop) would otherwise pay each time."""
    if not _SSL:
        import httpx2

        _SSL.append(httpx2.create_ssl_context())
    return _SSL[0]


def _http_proxy() -> bool:
    """Whether the environment sends plain HTTP through a proxy (httpx2 then handles it)."""
    from urllib.request import getproxies

    proxies = getproxies()
    if "*" in (host.strip() for host in proxies.get("no", "").split(",")):
        return False
    return bool(proxies.get("http") or proxies.get("all"))


def _timeout(exc: Exception, what: str, seconds: float) -> StreamError:
    return StreamError(f"{what} within the {seconds:g} s timeout ({type(exc).__name__})",
                       error_type="timeout", retryable=True)


def _header_dict(raw: list[tuple[bytes, bytes]]) -> dict[str, str]:
    """Raw response headers as `httpx2.Headers` reads them: names in lower case, the values
    of a repeated name joined with ``", "``, decoded as ASCII, else UTF-8, else Latin-1."""
    pairs: list[tuple[str, str]] = []
    for encoding in ("ascii", "utf-8", "latin-1"):
        try:
            pairs = [(k.decode(encoding).lower(), v.decode(encoding)) for k, v in raw]
            break
        except UnicodeDecodeError:
            continue
    out: dict[str, str] = {}
    for name, value in pairs:
        out[name] = f"{out[name]}, {value}" if name in out else value
    return out


async def _iter_http(chunks: AsyncIterable[bytes], timeout: float) -> AsyncIterator[bytes]:
    import httpx2

    try:
        async for chunk in chunks:
            yield chunk
    except httpx2.TimeoutException as exc:
        raise _timeout(exc, "the stream stopped mid-reply: nothing came", timeout) from exc
    except httpx2.TransportError as exc:
        raise StreamError(f"the stream broke mid-reply: {type(exc).__name__}: {exc}",
                          error_type="connection_error", retryable=True) from exc


Handler = Callable[[WireRequest], "WireResponse | Awaitable[WireResponse]"]


class MockTransport:
    """A transport that answers from a function, for unit tests of code above the seam.

    ``handler(request)`` returns a `WireResponse` (or an awaitable of one). Every request is
    kept in ``requests``.
    """

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[WireRequest] = []

    async def send(self, request: WireRequest) -> WireResponse:
        self.requests.append(request)
        result = self.handler(request)
        if inspect.isawaitable(result):
            result = await result
        assert isinstance(result, WireResponse)
        return result

    async def aclose(self) -> None:
        return None
