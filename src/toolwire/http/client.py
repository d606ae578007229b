"""Where a codec, an endpoint and a transport meet: a `Model` backed by a real server.

Owns `HttpModel` and `model(id)` (and gives out `RetryPolicy`, `Gate` and
`BAD_REPLY_RETRIES`, which `toolwire.http.retries` owns with the one retry loop).
``complete`` is encode -> send -> decode; ``stream`` is encode -> send -> feed the bytes to the
codec's stream decoder as they arrive. Retries (rate limits, overload, 5xx, dropped
connections, streams broken mid-reply) happen here, with exponential backoff and jitter,
honouring the provider's retry-after; a broken stream is retried as a whole request, so a half
reply never reaches a transcript, unless its wire can take it up where it broke
(`toolwire.http.resumes`). Each retry, and the notes of each request the codec encodes,
go to `toolwire.events.emit`: the run waiting on this request hears them, and only that run
(the events themselves live in `toolwire.events`). An `HttpModel` is one model: it sends every
request under its endpoint's model name, its `provider_model`, which is what a run puts in
`Request.model`. A shared `Gate` paces many callers (each send waits on it; a rate limit makes
all back off: `RateGate`).

A reply that arrives with a success status but cannot be used is a bad reply: a body that is not
JSON or not the wire's shape, a stream whose bytes or events cannot be read, an error body sent
with status 200, or a reply that holds nothing (`toolwire.protocol.holds_nothing`). Whatever
the decoder raised for it (a toolwire error, or any other exception, named in the message), the
request is sent once more (`BAD_REPLY_RETRIES`, as the official SDKs retry a broken reply) with
a `RetryEvent`, and a second bad reply raises `WireFormatError`: a run ends with ``bad_reply``.
An error body sent with an error status is the provider refusing (`ProviderError`), read as
totally: a body that cannot be read still gives a `ProviderError` naming the status. Those
errors are worded in `toolwire.http.answers`.

Every reply leaves with its cost in `Usage.cost` (`toolwire.context.prices`: the provider's
own figure when it sent one, else the price table's for this endpoint's provider and model).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from toolwire.codecs import Codec, get_codec
from toolwire.codecs.registry import get_wire
from toolwire.context.estimate import estimate_tokens
from toolwire.context.prices import with_cost
from toolwire.context.windows import context_window as window_of
from toolwire.context.windows import takes_breakpoints
from toolwire.errors import (
    ContextLengthError,
    ToolwireError,
    WireFormatError,
)
from toolwire.events import RetryEvent as RetryEvent
from toolwire.events import StreamEnd, StreamEvent, WireNotes, emit
from toolwire.http import quirks
from toolwire.http.answers import decoded, nothing, status_error, unreadable
from toolwire.http.cached_contents import explicit_caches
from toolwire.http.counting import count_request, read_count
from toolwire.http.endpoints import (
    Endpoint,
    parse_model_id,
    responses_if_allowed,
    without_credentials,
)
from toolwire.http.limits import Limits, LineWatch
from toolwire.http.providers import PROVIDERS
from toolwire.http.resumes import resuming
from toolwire.http.retries import BAD_REPLY_RETRIES as BAD_REPLY_RETRIES
from toolwire.http.retries import Gate as Gate
from toolwire.http.retries import RetryPolicy as RetryPolicy
from toolwire.http.retries import retried, retrying
from toolwire.http.shown import named
from toolwire.http.transport import HttpTransport, Transport, WireRequest, WireResponse, body_bytes
from toolwire.protocol import holds_nothing
from toolwire.transcript import Reply, Request, replace


def _event_end(chunk: bytes, at: int) -> int:
    """Where the server-sent event that begins at ``at`` in ``chunk`` ends (past its blank
    line); the chunk's end when no whole event ends in it. Until a stream has given its first
    event, its chunks are decoded one server-sent event at a time: a server that sends a short
    reply in one piece would otherwise have all of it decoded before the first event that
    says something (a Chat Completions stream's first event, the role, says nothing) is
    passed on."""
    cut = chunk.find(b"\n\n", at) if type(chunk) is bytes else -1
    return cut + 2 if cut >= 0 else len(chunk)


class HttpModel:
    """A model reached over HTTP in one wire format (see `toolwire.model`).

    ``gate``, when given, is awaited before every send and told of every retried rate limit or
    overload, so that many runs sharing it back off once, together. ``limits`` bounds what the
    server may send (`toolwire.http.limits.Limits`), in streams and whole bodies alike.
    """

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        transport: Transport | None = None,
        retry: RetryPolicy | None = None,
        max_tokens: int | None = None,
        options: Mapping[str, Any] | None = None,
        seed: int | None = None,
        gate: Gate | None = None,
        context_window: int | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.codec: Codec = get_codec(endpoint.wire)
        self._framing = get_wire(endpoint.wire).framing  # how its streams come
        self.limits = limits or getattr(transport, "limits", None) or Limits()
        self.transport: Transport = transport or HttpTransport(limits=self.limits)
        self.retry = retry or RetryPolicy()
        self.max_tokens = max_tokens
        self.options = dict(options or {})
        self._rng = random.Random(seed)
        self.gate = gate
        self._owned: Any = None  # a server started for this model (local:), stopped on aclose
        self._explicit = explicit_caches(endpoint.wire, endpoint.model)
        self.given_id: str | None = None  # the id `model` was given, base URL included
        self.context_window = context_window or window_of(endpoint.model)
        """The model's context window in tokens (the setting, else the known windows'
        table), None when unknown. Ollama is sent it as ``num_ctx`` (else it uses its
        own small default and cuts longer prompts silently)."""
        self._num_ctx: int | None = None
        provider = PROVIDERS.get(endpoint.provider)
        if provider is not None and provider.context_size:
            self._num_ctx = provider.context_of(self.options, self.context_window)
        self._quirks = quirks.active(provider.quirks if provider is not None else (),
                                     self.options)  # what the server refuses of its wire
        self._provider_marks = provider is not None and provider.cache_markers
        self._first_party = provider is not None and provider.first_party

    def __repr__(self) -> str:
        return f"HttpModel({self.endpoint.model_id!r}, wire={self.endpoint.wire!r})"

    @property
    def name(self) -> str:
        """The model id it was made from (``anthropic:claude-sonnet-4-5``), with its
        ``@base_url`` when one was given, so a run log's model rebuilds the same model."""
        return self.given_id or self.endpoint.model_id

    @property
    def provider_model(self) -> str:
        """What the provider calls the model (``claude-sonnet-4-5``): `Request.model`."""
        return self.endpoint.model

    @property
    def wire(self) -> str:
        return self.endpoint.wire

    @property
    def media_tokens(self) -> str | None:
        """How the local estimate counts media for this model (its codec's ``MEDIA_TOKENS``)."""
        return self.codec.MEDIA_TOKENS

    @property
    def native_features(self) -> frozenset[str]:
        """What this model's provider does on its side (`toolwire.protocol.native_search` and
        its siblings): what its wire's record says the wire can, at the provider's own API
        only (its ``first_party``); a cloud or a router speaking the wire may not."""
        return get_wire(self.wire).native if self._first_party else frozenset()

    @property
    def telemetry(self) -> dict[str, str | int]:
        """What OpenTelemetry spans say of this model (`toolwire.telemetry`): the provider's
        name in the GenAI conventions and the server's address and port."""
        provider = PROVIDERS.get(self.endpoint.provider)
        found: dict[str, str | int] = {
            "gen_ai.provider.name": (provider.otel_name or provider.name) if provider is not None
            else self.endpoint.provider}
        url = urlsplit(self.endpoint.base_url)
        if url.hostname:
            found["server.address"] = url.hostname
            found["server.port"] = url.port or (443 if url.scheme == "https" else 80)
        return found

    def _prepare(self, request: Request, *, stream: bool) -> tuple[Request, WireRequest]:
        changes: dict[str, Any] = {"stream": stream} if request.stream is not stream else {}
        if request.model != self.endpoint.model:
            changes["model"] = self.endpoint.model
        if request.max_tokens is None and self.max_tokens is not None:
            changes["max_tokens"] = self.max_tokens
        cache = request.cache
        if (cache is not None and not cache.markers and self._provider_marks
                and takes_breakpoints(self.endpoint.model)):
            changes["cache"] = replace(cache, markers=True)  # its upstream caches at markers
        asked = quirks.codec_settings(self._quirks)  # what the server's quirks ask the codec
        if self.options or asked:
            opts = dict(request.provider_options or {})
            wire_opts = {**self.options, **asked, **dict(opts.get(self.wire, {}))}
            opts[self.wire] = wire_opts
            changes["provider_options"] = opts
        if changes:  # else the request is sent as it is
            request = replace(request, **changes)
        try:
            encoded = self.codec.encode(request)
        except ToolwireError:
            raise
        except Exception as exc:  # the history holds what a reply brought that cannot go back
            raise WireFormatError(
                f"{self.wire}: the conversation cannot be written as a {self.wire} request: "
                f"{named(exc)}"
            ) from exc
        if encoded.notes:
            emit(WireNotes(wire=self.wire, notes=tuple(str(n) for n in encoded.notes)))
        body = quirks.fit(self.endpoint.prepare_body(encoded.body), self._quirks)
        wire_request = WireRequest(
            url=self.endpoint.url(stream=stream),
            body=body,
            headers={**self.endpoint.headers(), **(encoded.headers or {})},
            stream=stream,
            content=body_bytes(body) if self.endpoint.signer is not None else None,
        )
        return request, wire_request

    def _signed(self, wire_request: WireRequest) -> WireRequest:
        """The request with this attempt's signature (a fresh date, fresh credentials)."""
        signer = self.endpoint.signer
        if signer is None or wire_request.content is None:
            return wire_request
        added = signer(wire_request.method, wire_request.url, wire_request.headers,
                       wire_request.content)
        return dataclasses.replace(wire_request, headers={**wire_request.headers, **added})

    def _decode(self, raw: bytes, response: WireResponse, request: Request) -> Reply:
        """A whole reply from the body, priced; a bad reply raises `WireFormatError`."""
        return self._priced(decoded(self.codec, self.wire, raw, response, request), request)

    def _priced(self, reply: Reply, request: Request) -> Reply:
        """``reply`` with the money its usage cost: the provider's own figure when it sent one,
        else the price table's (`toolwire.context.prices`); unknown models keep None. A prompt
        that a truncating server cut (Ollama: the request is estimated over ``num_ctx`` and
        its ``prompt_eval_count`` is not) is a `ContextLengthError`, as other servers say."""
        if "reused_call_ids" in self._quirks:  # ids that repeat the conversation's renamed
            reply = quirks.unique_ids(reply, request)
        ctx = self._num_ctx
        if (ctx is not None and 0 < reply.usage.input_tokens <= ctx
                and (about := estimate_tokens(request, self.codec.MEDIA_TOKENS)) > ctx):
            raise ContextLengthError(
                f"the prompt is longer than the context of {ctx} tokens (the server read "
                f"{reply.usage.input_tokens} of about {about}), so it cut "
                "its start; compact the history or give the model a larger context_window",
                wire=self.wire, retryable=False)
        if reply.usage.cost is not None:
            return reply
        provider = PROVIDERS.get(self.endpoint.provider)
        usage = with_cost(reply.usage, self.endpoint.model,
                          provider.prices if provider is not None else None)
        return reply if usage is reply.usage else replace(reply, usage=usage)

    async def _send(self, wire_request: WireRequest) -> WireResponse:
        """One attempt: wait for the shared gate, send, and raise the provider's error if any."""
        if self.gate is not None:
            await self.gate.wait()
        response = await self.transport.send(self._signed(wire_request))
        if response.status >= 400:
            raise await status_error(self.codec, self.wire, response)
        return response

    async def _cached(self, request: Request, sent: WireRequest) -> WireRequest:
        """``sent`` naming an explicit cache of its prefix, when the request asks for one."""
        return sent if self._explicit is None else await self._explicit.use(
            sent, request.cache, self._send)

    async def count_tokens(self, request: Request) -> int:
        """The prompt tokens of ``request``: the provider's count from its counting endpoint
        when the wire has one (Anthropic, Responses, Gemini: a round trip, which never touches
        the cache), else a local estimate (`toolwire.context.estimate`)."""
        _, sent = self._prepare(request, stream=False)
        found = count_request(self.endpoint, sent)
        if found is None:
            return estimate_tokens(request, self.codec.MEDIA_TOKENS)
        response = await self._send(found[0])
        return read_count(await response.read(), found[1], self.wire)

    async def complete(self, request: Request) -> Reply:
        """Send ``request`` and return the whole reply, retrying what may succeed on retry."""
        request, wire_request = self._prepare(request, stream=False)
        wire_request = await self._cached(request, wire_request)

        async def whole(response: WireResponse) -> Reply:
            return self._decode(await response.read(), response, request)

        return await retried(lambda: self._send(wire_request), whole, policy=self.retry,
                             gate=self.gate, rng=self._rng)

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        """Send ``request`` streamed; yield events as they arrive, ending with `StreamEnd`.

        When the stream breaks and is retried, its `RetryEvent` is emitted (`toolwire.events`):
        deltas yielded so far belong to the failed attempt and the reply starts over. Bytes the
        stream decoder cannot read make a bad reply; an error event the provider sent in the
        stream is its `ProviderError`.
        """
        request, wire_request = self._prepare(request, stream=True)
        wire_request = await self._cached(request, wire_request)
        async with contextlib.aclosing(self._retrying(  # closed here if the caller stops
                wire_request, lambda response: self._streamed(response, request, wire_request),
        )) as events:
            async for event in events:
                yield event

    def _retrying(self, wire_request: WireRequest,
                  attempt_once: Callable[[WireResponse], AsyncIterator[StreamEvent]],
                  ) -> AsyncGenerator[StreamEvent, None]:
        """The retry loop of `stream` (`toolwire.http.retries.retrying`)."""
        return retrying(lambda: self._send(wire_request), attempt_once, policy=self.retry,
                        gate=self.gate, rng=self._rng)

    async def _streamed(self, response: WireResponse, request: Request,
                        sent: WireRequest) -> AsyncIterator[StreamEvent]:
        """One try's stream: its events as they arrive (the stream taken up again where it
        broke, when its wire can: `toolwire.http.resumes`), then `StreamEnd` with the reply."""
        decoder = self.codec.stream_decoder(request=request)
        feed = decoder.feed
        adapt = self.endpoint.stream_adapter
        adapter = adapt() if adapt is not None else None
        resumable = self.codec.resumable(decoder)  # else a break is raised as it came
        chunks = (resuming(response, resumable, sent, self._send) if resumable is not None
                  else response.aiter_bytes())
        framing = "eventstream" if adapter is not None else self._framing
        watch = LineWatch(self.limits, lines=framing != "eventstream", sse=framing == "sse")
        waiting = framing == "sse" and adapter is None  # for the first event (_event_end)
        try:  # closed however the stream ends (a deadline, the caller stopping)
            async for chunk in chunks:
                watch.chunk(chunk)
                at, end = 0, len(chunk)
                while True:
                    cut = _event_end(chunk, at) if waiting else end
                    part = chunk if at == 0 and cut == end else chunk[at:cut]
                    try:
                        events = feed(adapter.feed(part) if adapter is not None else part)
                    except Exception as exc:
                        raise unreadable(self.wire, exc) from exc
                    for event in events:
                        waiting = False
                        watch.event()
                        yield event
                    at = cut
                    if at >= end:
                        break
        finally:
            await chunks.aclose()  # type: ignore[attr-defined]
        try:
            if adapter is not None:
                for event in feed(adapter.close()):
                    yield event
            reply = decoder.finish()
        except Exception as exc:
            raise unreadable(self.wire, exc) from exc
        if holds_nothing(reply):
            raise nothing(self.codec, self.wire, reply, None, None)
        yield StreamEnd(reply=self._priced(reply, request))

    async def aclose(self) -> None:
        await self.transport.aclose()
        owned, self._owned = self._owned, None
        if owned is not None:
            owned.stop()

    async def release(self) -> None:
        """Close the connections opened in the running event loop (the next request opens
        new ones); a sync `Agent.run` calls it before the loop it made ends. A transport
        wrapped by another (a cassette recorder) is reached through its ``inner``; others are
        left alone, as closing them may mean more than letting connections go."""
        transport: Any = self.transport
        while not isinstance(transport, HttpTransport) and hasattr(transport, "inner"):
            transport = transport.inner
        if isinstance(transport, HttpTransport):
            await transport.aclose()

    def keep_warm(self) -> contextlib.AbstractAsyncContextManager[None]:
        """While the block runs (a run's tools), keep the connection to the server from
        expiring (`HttpTransport.keep_warm`), so the next request finds it open."""
        transport: Any = self.transport
        while not isinstance(transport, HttpTransport) and hasattr(transport, "inner"):
            transport = transport.inner
        if isinstance(transport, HttpTransport):
            return transport.keep_warm(self.endpoint.url(stream=False))
        return contextlib.nullcontext()

    def close(self) -> None:
        """`aclose` from code without an event loop (after ``Agent.run``, say)."""
        asyncio.run(self.aclose())

    def __enter__(self) -> HttpModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> HttpModel:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def model(
    model_id: str,
    *,
    transport: Transport | None = None,
    retry: RetryPolicy | None = None,
    env: Mapping[str, str] | None = None,
    **kwargs: Any,
) -> HttpModel:
    """A `Model` for a model id such as ``anthropic:claude-sonnet-4-5``.

    Model ids are described in `toolwire.http.endpoints`.

    A missing API key is a `ConfigError` naming its variable, raised here, before any request.
    """
    model_id = responses_if_allowed(model_id, kwargs.get("options"))
    endpoint = parse_model_id(model_id, env)
    server = None
    provider = PROVIDERS.get(endpoint.provider)
    if provider is not None and provider.local_server and not endpoint.base_url:
        from toolwire.http.local import LocalServer

        server = LocalServer(endpoint.model).start()
        endpoint = dataclasses.replace(endpoint, base_url=server.base_url)
        kwargs.setdefault("max_tokens", 1024)
    result = HttpModel(endpoint, transport=transport, retry=retry, **kwargs)
    result._owned = server
    if "@" in model_id:
        result.given_id = without_credentials(model_id)
    return result
