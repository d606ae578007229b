"""Sending one client request on to the upstream model, and its reply back.

Owns `Upstream` (a model requests go to: its endpoint and the connection pool it sends
through), `Heard` (what its model says while it works) and `Streamed`. Two ways through:

- **Same wire** (`Upstream.same_wire`): the client speaks the upstream's wire. The body's bytes
  go on unchanged (only the ``model`` field is set to the upstream's when the client named
  another, which writes the body anew) with the upstream's own authentication, and the reply's
  bytes come back unchanged, whole or streamed piece by piece as they arrive, error replies
  included.
- **Across wires** (`Upstream.converted`): the client's body, decoded by its wire's codec, is
  sent through `toolwire.http.client.HttpModel` in the upstream's wire (call ids the proxy
  gave the client turned back into the upstream's own, `toolwire.proxy.ids`), and the reply is
  written in the client's wire, its call ids made valid there and the upstream's reasoning
  sealed into it (`toolwire.proxy.carry`). What the upstream's wire could not carry is listed
  in the ``x-toolwire-losses`` header. A streamed reply is written as the upstream's events
  arrive (`toolwire.proxy.writers`).

Must not import: the server (uvicorn, `toolwire.proxy.asgi`).
"""

from __future__ import annotations

import copy
import dataclasses
import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

from toolwire import _json
from toolwire.codecs import get_codec
from toolwire.codecs.registry import MEDIA_TYPES, Route, get_wire
from toolwire.conversion import without_unlost_settings
from toolwire.errors import ConfigError, ToolwireError
from toolwire.events import (
    Event,
    RetryEvent,
    StreamEnd,
    StreamEvent,
    WireNotes,
    listen,
)
from toolwire.http.client import HttpModel, RetryPolicy
from toolwire.http.counting import count_request
from toolwire.http.endpoints import Endpoint, parse_model_id
from toolwire.http.providers import PROVIDERS
from toolwire.http.transport import HttpTransport, Transport, WireRequest, body_bytes
from toolwire.proxy import carry, live
from toolwire.proxy.answers import JSON_TYPE, Answer, provider_error_response
from toolwire.proxy.ids import holds, reply_for_client, request_for_upstream
from toolwire.proxy.settings import ProxySettings
from toolwire.transcript import (
    Cache,
    OpaquePart,
    ReasoningPart,
    Reply,
    Request,
    ToolCallPart,
    ToolResultPart,
    replace,
)

PASSED_HEADERS = ("anthropic-version", "anthropic-beta", "openai-beta")
"""Client headers that say which version or beta of the API a body is written for; they go
on to an upstream of the same wire. No other client header does (a client's key never)."""

LOSSES_HEADER = "x-toolwire-losses"
FALLBACK_HEADER = "x-toolwire-fallback"
COUNT_HEADER = "x-toolwire-count"


_GIVEN_BACK = (ToolCallPart, ToolResultPart, ReasoningPart)
"""The parts of a client's request that may hold what the proxy gave it in place of the
upstream's own (call ids, sealed reasoning): a request with none goes on as it came."""

PLACED = ("cache_breakpoints:",)
"""Notes that say where the upstream's codec put something of its own (the cache breakpoints
the proxy asks for when the client's wire has none): nothing of the conversation is lost."""


class Heard:
    """What the upstream's model says while it works (`toolwire.events`): the notes of what
    its wire could not carry (not those of `PLACED`), and the retries it made."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.retries: list[ToolwireError] = []

    def __call__(self, event: Event) -> None:
        if isinstance(event, WireNotes):
            self.notes.extend(n for n in event.notes if not n.startswith(PLACED))
        elif isinstance(event, RetryEvent):
            self.retries.append(event.error)

    def headers(self) -> dict[str, str]:
        return {LOSSES_HEADER: header_text("; ".join(self.notes))} if self.notes else {}


class Failed(Exception):
    """An upstream's failure, raised instead of answered when another model may still take
    the request over (``fallible`` in `Upstream.same_wire` and `Upstream.converted`): the
    typed ``error`` (for `toolwire.failover.table.failure`) and the ``answer`` the client gets
    when none does."""

    def __init__(self, error: ToolwireError, answer: Answer) -> None:
        super().__init__(str(error))
        self.error = error
        self.answer = answer


@dataclass(slots=True)
class Streamed:
    """A streamed answer: status, headers, and the bytes as they come. ``notes`` grows while
    the stream is written (what the client's wire could not carry, known only once the
    upstream's reply is whole, after the headers have gone); ``broke`` is set when the
    stream ended on a failure."""

    status: int
    headers: dict[str, str]
    chunks: AsyncIterator[bytes]
    notes: list[str] = dataclasses.field(default_factory=list)
    broke: list[str] = dataclasses.field(default_factory=list)


class Upstream:
    """A model requests go on to (`ProxySettings.model`, or a route's)."""

    def __init__(self, settings: ProxySettings, model: str | None = None,
                 transport: HttpTransport | None = None) -> None:
        self.settings = settings
        self.model_id = model or settings.model
        self.endpoint: Endpoint = _endpoint(self.model_id, settings.pass_client_keys)
        self.record = get_wire(self.endpoint.wire)
        """The upstream wire's record (`toolwire.codecs.record.Wire`)."""
        self.transport = transport or HttpTransport(timeout=settings.timeout)
        self._model: HttpModel | None = None

    @property
    def wire(self) -> str:
        return self.endpoint.wire

    def passes_through(self, route: Route) -> bool:
        """Whether a request at ``route`` goes on byte for byte: the same wire, framed and
        refused the same way, at an upstream that does not rewrap its streams."""
        return (route.wire.name == self.endpoint.wire and route.framing is None
                and route.error_wire == route.wire.name and self.endpoint.stream_adapter is None)

    def with_key(self, key: str | None) -> Upstream:
        """This upstream sent the client's own ``key`` instead of the proxy's (the proxy's
        when the client gave none, and for a cloud host, which signs or uses its own)."""
        if not key or self.endpoint.signer is not None or self.endpoint.key_var is None:
            return self
        other = copy.copy(self)
        other.endpoint = dataclasses.replace(self.endpoint, key=key)
        other._model = None
        return other

    def model(self, transport: Transport) -> HttpModel:
        """The upstream as a model sending through ``transport``, with no retries of its own
        (each client retries as its SDK does); made once for the upstream's own pool, unless
        its wire has explicit caches (a model keeps those it made, so each request gets a
        model of its own)."""
        if transport is not self.transport or self.record.explicit_cache:
            return HttpModel(self.endpoint, transport=transport,
                             retry=RetryPolicy(max_attempts=1))
        if self._model is None:
            self._model = HttpModel(self.endpoint, transport=transport,
                                    retry=RetryPolicy(max_attempts=1))
        return self._model

    # ------------------------------------------------------------------ same wire

    async def same_wire(self, route: Route, raw: bytes, body: dict[str, Any], stream: bool,
                        headers: Mapping[str, str], transport: Transport,
                        fallible: bool = False) -> Answer | Streamed:
        """The request's bytes sent on and the reply's bytes back; with ``fallible``, an
        error is raised as `Failed` (its bytes kept as the answer) instead of answered."""
        endpoint = self.endpoint
        sent: dict[str, Any] = body
        content: bytes | None = raw
        if not route.in_url and body.get("model") != endpoint.model:
            sent, content = {**body, "model": endpoint.model}, None
        prepared = endpoint.prepare_body(sent)
        if prepared is not sent or content is None:
            content = body_bytes(prepared)
        passed = {k: v for k, v in headers.items() if k in PASSED_HEADERS}
        request = WireRequest(url=endpoint.url(stream=stream), body=prepared,
                              headers={**endpoint.headers(), **passed}, stream=stream,
                              content=content)
        if endpoint.signer is not None:
            added = endpoint.signer(request.method, request.url, request.headers, content)
            request = dataclasses.replace(request, headers={**request.headers, **added})
        try:
            response = await transport.send(request)
        except ToolwireError as exc:
            return _failed(exc, provider_error_response(route.error_wire, exc), fallible)
        kept = {k: v for k, v in response.headers.items()
                if k in ("content-type", "retry-after", "x-amzn-errortype")
                or k.startswith(("anthropic-", "x-ratelimit", "openai-"))}
        if response.status >= 400:
            answer = response.status, kept, await response.read()
            if not fallible:
                return answer
            raise Failed(self._error(answer, response.headers), answer)
        if not stream:
            return response.status, kept, await response.read()
        if "content-encoding" in response.headers:  # a stream comes as the server sent it
            kept["content-encoding"] = response.headers["content-encoding"]
        return Streamed(response.status, kept, response.aiter_bytes())

    # ------------------------------------------------------------------ across wires

    def _error(self, answer: Answer, headers: Mapping[str, str]) -> ToolwireError:
        """The upstream's error ``answer`` read as its wire's codec reads one."""
        status, _, raw = answer
        try:
            said: Any = _json.loads(raw)
        except ToolwireError:
            said = raw.decode("utf-8", "replace")
        return get_codec(self.endpoint.wire).decode_error(status, said, headers)

    async def converted(self, route: Route, request: Request, stream: bool,
                        transport: Transport, fallible: bool = False) -> Answer | Streamed:
        """The request in the upstream's wire and the reply in the client's; with
        ``fallible``, a failure before the first byte of the reply is raised as `Failed`."""
        client, wire = route.wire.name, self.endpoint.wire
        heard = Heard()
        model = self.model(transport)
        upstream_request = request
        if holds(request, _GIVEN_BACK):  # call ids and sealed reasoning, as the upstream gave
            upstream_request = carry.request_for_upstream(request_for_upstream(request), client)
        upstream_request = without_unlost_settings(upstream_request, client, wire)
        if client != wire:
            upstream_request = carry.with_placeholders(upstream_request, self.record)
        if (upstream_request.cache is None and client != wire
                and self.record.cache.kind == "breakpoints"):
            # The client's wire has no breakpoints to keep: the proxy places the upstream's
            # own, as many as it allows (its codec's rule).
            upstream_request = replace(upstream_request, cache=Cache())
        reply: Reply | None = None
        try:
            with listen(heard):
                if not stream:
                    reply = await model.complete(upstream_request)
                else:
                    events = aiter(model.stream(upstream_request))
                    first = await anext(events)
                    writer = live.writer_for(client, request)
                    if writer is not None and not isinstance(first, StreamEnd):
                        return self._live(route, request, events, first, writer, heard)
                    while not isinstance(first, StreamEnd):
                        first = await anext(events)
                    reply = first.reply
        except ToolwireError as exc:
            return _failed(exc, provider_error_response(route.error_wire, exc), fallible)
        assert reply is not None  # a stream ends with StreamEnd or raises
        reply = self._for_client(reply, client, heard)
        codec = get_codec(client)
        headers = heard.headers()
        if not stream:
            encoded = codec.encode_response(reply, request=request)
            return 200, {"content-type": JSON_TYPE, **headers}, _json.dumps(encoded)
        headers["content-type"] = MEDIA_TYPES[route.stream_framing]
        return Streamed(200, headers, _framed(route, _each(codec.encode_stream(
            reply, request=request))))

    def _for_client(self, reply: Reply, client: str, heard: Heard) -> Reply:
        """The upstream's reply as the client's wire is to get it: call ids valid there,
        reasoning sealed into it, and no stop value of the upstream's own (each wire's
        encoder writes its own from the normalised stop); a block of the upstream's own that
        the client's wire has no place for (a server tool's) is named in the losses."""
        reply = replace(reply_for_client(reply, client), raw_stop=None)
        reply, dropped = carry.reply_for_client(reply, client, self.endpoint.wire)
        heard.notes += dropped
        heard.notes += [f"opaque_dropped: a {p.kind} block of {p.wire} has no place in "
                        f"{client}; the client does not get it" for p in reply.message.parts
                        if isinstance(p, OpaquePart) and p.wire != client]
        return reply

    def _live(self, route: Route, request: Request, events: AsyncIterator[StreamEvent],
              first: StreamEvent, writer: live.Writer, heard: Heard) -> Streamed:
        """The reply streamed in the client's wire as the upstream's events arrive. A failure
        once the stream has begun ends it (with the client wire's error event where it has
        one); so does a retry of the upstream's, whose events would start over."""
        client = route.wire.name

        async def chunks() -> AsyncIterator[bytes]:
            # what the client's wire writes for one upstream event goes out as one chunk
            said = len(heard.retries)
            written = b"".join((*writer.head(), *writer.feed(first)))
            if written:
                yield written
            try:
                with listen(heard):
                    async for event in events:
                        if len(heard.retries) > said:
                            raise heard.retries[-1]
                        if isinstance(event, StreamEnd):
                            reply = self._for_client(event.reply, client, heard)
                            written = b"".join(writer.finish(replace(reply,
                                                                     id=writer.reply_id)))
                            if written:
                                yield written
                            return
                        written = b"".join(writer.feed(event))
                        if written:
                            yield written
            except ToolwireError as exc:
                streamed.broke.append(f"{type(exc).__name__}: {exc}")
                yield b"".join(writer.failed(provider_error_response(route.error_wire, exc)))
            finally:  # a client that goes away mid-stream closes the upstream's stream too
                close = getattr(events, "aclose", None)
                if close is not None:
                    await close()

        headers = {**heard.headers(), "content-type": MEDIA_TYPES[route.stream_framing]}
        streamed = Streamed(200, headers, _framed(route, chunks()), notes=heard.notes)
        return streamed

    # ------------------------------------------------------------------ token counts

    async def count(self, route: Route, body: dict[str, Any], transport: Transport) -> Answer:
        """A token count asked in the client's wire (``route``), from the upstream's counting
        endpoint when it has one, else the local estimate; ``x-toolwire-count`` says which."""
        wire = get_wire(route.wire.name)
        assert wire.count is not None  # a counting route is one of a wire with an endpoint
        prompt = dict(wire.count.prompt(body))
        prompt.setdefault("model", route.model or self.endpoint.model)
        try:
            request = get_codec(wire.name).decode_request(prompt, **route.url_says())
            model = self.model(transport)
            tokens = await model.count_tokens(request_for_upstream(request))
        except ToolwireError as exc:
            return provider_error_response(route.error_wire, exc)
        answer: dict[str, Any] = {wire.count.field: tokens}
        if wire.count.path.endswith("/input_tokens"):
            answer["object"] = "response.input_tokens"
        said = "provider" if self._counted_upstream() else "estimate"
        return 200, {"content-type": JSON_TYPE, COUNT_HEADER: said}, _json.dumps(answer)

    def _counted_upstream(self) -> bool:
        """Whether the upstream counts tokens itself (else the count is the estimate)."""
        try:
            return count_request(self.endpoint, WireRequest(url="", body={})) is not None
        except Exception:  # a host's counting body needs a real request: it has an endpoint
            return True

def _failed(error: ToolwireError, answer: Answer, fallible: bool) -> Answer:
    """``answer``, or with ``fallible`` the failure raised for the next model (`Failed`)."""
    if fallible:
        raise Failed(error, answer)
    return answer


def _endpoint(model: str, client_keys: bool) -> Endpoint:
    """Where ``model`` is served; with ``client_keys`` a missing key is no error (each
    client brings its own)."""
    try:
        return parse_model_id(model)
    except ConfigError:
        provider = PROVIDERS.get(model.partition(":")[0])
        if not client_keys or provider is None or not provider.key_vars:
            raise
    found = parse_model_id(model, env={**os.environ, provider.key_vars[0]: "-"})
    return dataclasses.replace(found, key=None)


def _framed(route: Route, chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """``chunks`` (the wire's own stream) framed as ``route`` serves them: wrapped in an AWS
    event stream at Bedrock's InvokeModel, as they are everywhere else."""
    if route.framing in (None, route.wire.framing):
        return chunks

    async def wrapped() -> AsyncIterator[bytes]:
        from toolwire.emulator.cloud import reframe

        async for chunk in chunks:
            for unit in reframe([chunk]):
                yield unit

    return wrapped()


async def _each(chunks: list[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


def header_text(text: str, limit: int = 4000) -> str:
    """``text`` as an HTTP header value: ASCII, one line, at most ``limit`` characters."""
    flat = " ".join(text.split())
    return flat.encode("ascii", "backslashreplace").decode()[:limit]


__all__ = ["COUNT_HEADER", "FALLBACK_HEADER", "LOSSES_HEADER", "PASSED_HEADERS", "Failed",
           "Streamed", "Upstream", "header_text"]
