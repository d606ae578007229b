"""The provider emulator: a real HTTP server on 127.0.0.1 that speaks every wire.

Owns `Emulator`, `Fault` and the script format; `Pacing` (streams held the way a model writes)
is `toolwire.emulator.pacing`'s, re-exported here.
Each request is routed by its path to a wire, at the path the wire registry
(`toolwire.codecs.registry`) records for it (``/v1/messages``,
``/v1/chat/completions``, ``/v1/responses``, ``/api/chat``,
``/v1beta/models/{model}:generateContent`` and ``:streamGenerateContent``, and any wire
registered later), checked the way that provider checks it (see `toolwire.emulator.checks`),
and answered with the next scripted reply rendered into that wire, whole or streamed in the
wire's framing, with a scripted fault, or with scripted raw bytes (`Raw`: any status, any body,
any stream, an endless trickle, a connection dropped mid-body). The providers' batch APIs are
played by `toolwire.emulator.batches` (``batches``), each batched request answered as above.
A streamed reply of a wire whose server keeps conversations is served again from an event on
(``GET {path}/{id}?stream=true&last_event_id=...``: `toolwire.emulator.resumed`).
Must not import a wire's codec module directly (only through ``get_codec``) nor compare wire
names: what differs between wires is in the registry.

A script is a list of items, used in order: a `Reply`, a `Fault`, or their JSON forms (a reply
in toolwire's JSON form, or the shorthand ``{"text": ..., "tool_calls": [{"name": ...,
"arguments": {...}}]}``, a custom tool's call holding ``"input": "text"`` in place of its
arguments; a fault as ``{"fault": "rate_limit", "retry_after": 0.1}``). Instead of
a list, a function ``(Request, wire) -> Reply | Fault`` can answer every request. A `ByMedia`
item (``{"by_media": {"image": ..., "none": ...}}``) answers by the media the request's newest
turn holds. Media are checked as each provider checks them (types, sizes, image sides, counts,
where they may appear: the wire's ``check_body``), refused with the provider's 400.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolwire._json import dumps, loads
from toolwire.codecs.eventstream import encode_message
from toolwire.codecs.registry import (
    MEDIA_TYPES,
    Framing,
    Wire,
    count_at,
    explicit_cache_at,
    wire_at,
)
from toolwire.emulator._http import HttpRequest, HttpResponse, HttpServer, serve
from toolwire.emulator.batches import BatchJobs
from toolwire.emulator.billing import (
    Billing,
    ContextTooLong,
    Counted,
    TooManyBreakpoints,
    billed,
    count_reply,
    prompt_tokens,
)
from toolwire.emulator.cached import CachedStore, Refused
from toolwire.emulator.checks import error_body, first_refusal
from toolwire.emulator.cloud import AWS_PATHS, check_signature, exception_event, reframe
from toolwire.emulator.managed import manage
from toolwire.emulator.pacing import CHARS_PER_TOKEN as CHARS_PER_TOKEN  # re-exported
from toolwire.emulator.pacing import Pacing, carried
from toolwire.emulator.played import Played
from toolwire.emulator.resumed import Streams
from toolwire.emulator.script import (
    ByMedia,
    Fault,
    Raw,
    ScriptItem,
    ScriptReply,
    load_script,
    parse_item,
)
from toolwire.http.endpoints import wire_for_path
from toolwire.http.sigv4 import AwsCredentials
from toolwire.transcript import Message, Reply, Request

__all__ = ["ByMedia", "Emulator", "Fault", "Pacing", "Raw", "load_script", "parse_item",
           "wire_for_path"]

Responder = Callable[[Request, str], "Reply | Fault"]
Script = Sequence[ScriptItem | Reply | dict[str, Any]] | Responder | str | Path
"""Replies and faults in order, a function answering every request, or a script file."""


@dataclass(slots=True)
class Received:
    """One request the emulator received."""

    wire: str
    path: str
    body: Any
    headers: dict[str, str]
    raw: bytes = b""
    """The body's bytes as they came (what a signature covers)."""


class Emulator:
    """An HTTP server on 127.0.0.1 answering from a script, in every wire.

    Use it as a context manager (it runs in a thread of its own, so synchronous code and the
    official SDKs can call it) or, inside a running event loop, with ``async with``.
    ``chunk_delay`` holds every chunk of a streamed reply that many seconds; ``pacing`` (a
    `Pacing`) holds them the way a model writes instead: the time to its first token, then so
    many tokens a second. ``plays`` names a provider whose server it plays: it refuses what
    that server refuses of its wire, sends ids as it does and checks that every request is
    signed for its AWS service (`toolwire.emulator.played`); ``rules`` turns its quirks on or
    off, as a model's ``_rules`` setting does (`toolwire.http.quirks`). ``bill=True`` counts each
    prompt, models each provider's prompt cache and refuses a prompt longer than the model's
    window (`toolwire.emulator.billing`;
    ``windows`` adds model windows, ``clock`` times cache entries): a scripted reply that says
    nothing of its input tokens gets the counts, cache reads and writes included. Without it
    replies carry the usage their script gives. Explicit caches (Gemini's cached contents) are
    made and read in every case (`toolwire.emulator.cached`), and billed with ``bill=True``.
    """

    def __init__(
        self,
        script: Script | None = None,
        *,
        port: int = 0,
        check: bool = True,
        chunk_delay: float = 0.0,
        pacing: Pacing | None = None,
        aws_credentials: AwsCredentials | None = None,
        plays: str | None = None,
        rules: Mapping[str, bool] | None = None,
        bill: bool = False,
        windows: Mapping[str, int] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._responder: Responder | None = None
        self._script: list[ScriptItem] = []
        if callable(script):
            self._responder = script
        elif isinstance(script, str | Path):
            self._script = load_script(Path(script))
        elif script is not None:
            self._script = [parse_item(item) for item in script]
        self.port = port
        self.check = check
        self.chunk_delay = chunk_delay
        self.pacing = pacing
        self.aws_credentials = aws_credentials
        self.played = Played.of(plays, rules)
        """The provider it plays (`toolwire.emulator.played`): its refusals, ids and signing."""
        self.billing = Billing(windows, clock) if bill else None
        self.cached = CachedStore(clock)
        """The explicit caches made on this emulator (Gemini's cached contents)."""
        self.batches = BatchJobs(self._handle, clock)
        """The batch jobs sent to this emulator (`toolwire.emulator.batches`)."""
        self.received: list[Received] = []
        self.kept: dict[str, list[Any]] = {}
        """The conversations kept for wires whose server keeps them (the record's ``memory``)."""
        self.streams = Streams()
        """Their streamed replies, served again from an event on (`toolwire.emulator.resumed`)."""
        self._used = 0
        self._lock = threading.Lock()
        self._server: HttpServer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def connections(self) -> int:
        """How many TCP connections the server has accepted (a client that reuses its
        connections opens few)."""
        return self._server.connections if self._server is not None else 0

    async def astart(self) -> Emulator:
        self._server = await serve(self._handle, port=self.port)
        self.port = self._server.port
        return self

    async def astop(self) -> None:
        if self._server is not None:
            server, self._server = self._server, None
            await server.aclose()

    def start(self) -> Emulator:
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name="toolwire-emulator",
                                        daemon=True)
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.astart(), loop).result(timeout=10)
        return self

    def stop(self) -> None:
        loop, self._loop = self._loop, None
        if loop is None:
            return
        asyncio.run_coroutine_threadsafe(self.astop(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=10)
        loop.close()

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> Emulator:
        return await self.astart()

    async def __aexit__(self, *exc: object) -> None:
        await self.astop()

    # ------------------------------------------------------------------ script

    @property
    def unplayed(self) -> list[ScriptItem]:
        return self._script[self._used:]

    def assert_done(self) -> None:
        """Raise if scripted items were never asked for."""
        if self._responder is None and self.unplayed:
            raise AssertionError(
                f"the emulator's script has {len(self.unplayed)} unplayed item(s) of "
                f"{len(self._script)}; the run made fewer requests than scripted"
            )

    def _next(self, request: Request, wire: str) -> ScriptReply | Fault | Raw | None:
        if self._responder is not None:
            item = parse_item(self._responder(request, wire))
        else:
            with self._lock:
                if self._used >= len(self._script):
                    return None
                item = self._script[self._used]
                self._used += 1
        if isinstance(item, ByMedia):  # a reply chosen by the media the request carries
            chosen = item.choose(request)
            return chosen if isinstance(chosen, Fault) else ScriptReply(chosen)
        return item

    # ------------------------------------------------------------------ HTTP

    async def _handle(self, http: HttpRequest) -> HttpResponse:
        from toolwire.codecs import get_codec

        if http.method == "GET" and http.path in ("/health", "/"):
            return _json(200, {"status": "ok"})
        if http.method == "HEAD":  # a client keeping its connection warm
            return HttpResponse(200, {"content-type": "application/json"}, head_only=True)
        batched = await self.batches.route(http)
        if batched is not None:  # a provider's batch API
            return batched
        made_at = explicit_cache_at(http.path) if http.method == "POST" else None
        if made_at is not None:  # a request to create an explicit cache
            made_body = loads(http.body or b"{}")
            self.received.append(Received(made_at.name, http.path, made_body, http.headers,
                                          http.body or b""))
            try:
                return _json(200, self.cached.create(made_at, http.path, made_body))
            except Refused as exc:
                return _json(exc.status, error_body(made_at.name, exc.status, str(exc)))
        counting = count_at(http.path)
        if counting is not None:  # a token-counting endpoint
            counted_body = loads(http.body or b"{}")
            self.received.append(Received(counting.wire.name, http.path, counted_body,
                                          http.headers, http.body or b""))
            if self.aws_credentials is not None and http.path.startswith(AWS_PATHS):
                refused = check_signature(http, self.aws_credentials)
                if refused is not None:
                    return _json(403, error_body(counting.error_wire, 403, refused))
            return _json(200, count_reply(counting.wire, counted_body))
        resumed = self.streams.answer(http)
        if resumed is not None:  # a stream taken up again
            return resumed
        route = wire_at(http.path)
        if route is None:
            return _json(404, {"error": {"message": f"no wire is served at {http.path}",
                                         "type": "not_found_error"}})
        spec = route.wire
        wire, errors = spec.name, route.error_wire  # a cloud host may shape errors its own way
        try:
            body = loads(http.body or b"{}")
        except ValueError as exc:
            return _json(400, error_body(errors, 400, f"the body is not valid JSON: {exc}"))
        self.received.append(Received(wire, http.path, body, http.headers, http.body or b""))
        if not isinstance(body, dict):
            return _json(400, error_body(errors, 400, "the body must be a JSON object"))
        codec = get_codec(wire)
        held = 0  # tokens of an explicit cache the request names
        if spec.explicit_cache is not None and spec.explicit_cache.field in body:
            try:
                body, held = self.cached.expand(spec, body, route.model)
            except Refused as exc:
                return _json(exc.status, error_body(errors, exc.status, str(exc)))
        if self.aws_credentials is not None and (http.path.startswith(AWS_PATHS)
                                                 or self.played.aws_service):
            refused = check_signature(http, self.aws_credentials, self.played.aws_service)
            if refused is not None:
                return _json(403, error_body(errors, 403, refused))
        problem = self.played.refusal(body) if self.check else None  # the body as it came
        memory = spec.memory  # how the server keeps conversations, when it keeps any
        if memory is not None and problem is None:
            try:
                body = memory.continued(body, self.kept)
            except LookupError as exc:
                status = memory.missing_status
                answer = error_body(errors, status, str(exc))
                if isinstance(answer.get("error"), dict):
                    answer["error"].update(memory.missing_error)
                return _json(status, answer)
        if problem is None and self.check:
            problem = first_refusal(wire, body, headers=http.headers, **route.url_says())
        if problem is None:
            try:
                request = codec.decode_request(body, **route.url_says())
            except Exception as exc:  # a body our codec cannot read is the client's error
                problem = f"malformed request: {type(exc).__name__}: {exc}"
        if problem is not None:
            return _json(400, error_body(errors, 400, problem))
        stream = route.stream if route.in_url else spec.wants_stream(body)
        framing = route.stream_framing
        counted = None
        managed = manage(request, codec, lambda b: prompt_tokens(spec, b))
        if self.billing is not None:
            try:
                counted = self.billing.count(spec, managed.body or body, request.model)
                if held:  # the cache it names is read, whatever else was cached
                    counted = Counted(counted.tokens, cache_read=held)
            except (ContextTooLong, TooManyBreakpoints) as exc:  # refused before any reply
                return _json(400, error_body(errors, 400, str(exc)))
        item = self._next(request, wire)
        if item is None:
            return _json(500, error_body(
                errors, 500,
                f"the emulator's script has no reply left for request #{len(self.received)}",
            ))
        if isinstance(item, Fault):
            return await self._fault(item, spec, codec, request, stream, framing, errors)
        if isinstance(item, Raw):
            return _raw(item, spec)
        if item.delay:
            await asyncio.sleep(item.delay)
        reply = self.played.reply(managed.reply(billed(item.reply, counted)))
        if memory is not None:
            memory.keep(self.kept, body, codec.encode_response(reply, request=request))
        return self._reply(reply, spec, codec, request, stream, framing)

    def _reply(self, reply: Reply, wire: Wire, codec: Any, request: Request, stream: bool,
               framing: Framing, *, cut: bool = False, garbage: bool = False,
               then: bytes | None = None) -> HttpResponse:
        if not stream:
            return _json(200, codec.encode_response(reply, request=request))
        self.streams.keep(wire.name, reply, request)
        chunks: list[bytes] = list(codec.encode_stream(reply, request=request))
        if framing != wire.framing:  # a cloud host wraps the wire's events its own way
            chunks = reframe(chunks)
        if garbage:
            chunks.insert(max(1, len(chunks) // 2), _BROKEN_UNIT[framing])
        if cut or then is not None:
            chunks = chunks[: max(1, len(chunks) // 2)]
        if then is not None:  # a provider's error event, sent part of the way through
            chunks.append(then)
        paced_by = codec if framing == wire.framing else None  # reframed: not counted
        return HttpResponse(200, {"content-type": MEDIA_TYPES[framing]},
                            chunks=self._paced(chunks, paced_by, request), drop=cut)

    async def _paced(self, chunks: list[bytes], codec: Any, request: Request
                     ) -> AsyncIterator[bytes]:
        pacing = self.pacing
        feed = (codec.stream_decoder(request=request).feed
                if pacing is not None and codec is not None else None)
        clock = asyncio.get_running_loop().time
        due = clock()  # waits add up from the stream's start: a late wake-up is not carried on
        for index, chunk in enumerate(chunks):
            wait = self.chunk_delay
            if pacing is not None and feed is not None:
                wait += pacing.hold(index, carried(feed, chunk))
            if wait:
                due += wait
                await asyncio.sleep(max(0.0, due - clock()))
            yield chunk

    async def _fault(self, fault: Fault, wire: Wire, codec: Any, request: Request,
                     stream: bool, framing: Framing, errors: str) -> HttpResponse:
        if fault.delay:
            await asyncio.sleep(fault.delay)
        if fault.kind == "slow_first_byte":
            reply = fault.reply or Reply(message=Message.assistant("This came after a pause."))
            return self._reply(reply, wire, codec, request, stream, framing)
        if fault.kind == "error_mid_stream":
            if framing != "eventstream":
                return _json(500, error_body(errors, 500, (
                    "the error_mid_stream fault is served where replies stream as AWS event "
                    "streams (Converse, InvokeModel); use drop_mid_stream or malformed_chunk "
                    "for this wire")))
            reply = fault.reply or Reply(message=Message.assistant(
                "This reply is long enough to be cut off part of the way through."))
            return self._reply(reply, wire, codec, request, True, framing,
                               then=exception_event(fault.exception, fault.message))
        if fault.kind in ("drop_mid_stream", "malformed_chunk"):
            reply = fault.reply or Reply(message=Message.assistant(
                "This reply is long enough to be cut off part of the way through."))
            return self._reply(reply, wire, codec, request, True, framing,
                               cut=fault.kind == "drop_mid_stream",
                               garbage=fault.kind == "malformed_chunk")
        status = fault.status_for(errors)
        headers = {}
        if fault.retry_after is not None:
            headers["retry-after"] = f"{fault.retry_after:g}"
        message = fault.message or fault.default_message()
        resp = _json(status, error_body(errors, status, message))
        resp.headers.update(headers)
        return resp


_BROKEN_UNIT = {"ndjson": b'{"broken": \n', "sse": b'data: {"broken": \n\n',
                "eventstream": encode_message({":event-type": "contentBlockDelta",
                                               ":message-type": "event"}, b'{"broken": ')}
"""A unit that breaks off mid-JSON, in each framing (for the ``malformed_chunk`` fault)."""


def _raw(item: Raw, wire: Wire) -> HttpResponse:
    if item.chunks is None:
        kind = item.content_type or "application/json"
        return HttpResponse(item.status, {"content-type": kind}, body=item.body, drop=item.drop)
    kind = item.content_type or wire.media_type
    return HttpResponse(item.status, {"content-type": kind},
                        chunks=_trickle(item.chunks, item.interval), drop=item.drop)


async def _trickle(chunks: Iterable[bytes], interval: float) -> AsyncIterator[bytes]:
    for n, chunk in enumerate(chunks):
        if interval and n:
            await asyncio.sleep(interval)
        yield chunk


def _json(status: int, body: Any) -> HttpResponse:
    headers = {"content-type": "application/json"}
    if isinstance(body, dict) and isinstance(body.get("__type"), str):
        headers["x-amzn-errortype"] = body["__type"]  # AWS names its error types here too
    return HttpResponse(status, headers, body=dumps(body))
