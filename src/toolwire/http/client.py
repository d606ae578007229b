"""Where a codec, an endpoint and a transport meet: a `Model` backed by a real server.

Owns `HttpModel`, `RetryPolicy`, `Gate` and `model(id)`. ``complete`` is encode -> send ->
decode; ``stream`` is encode -> send -> feed the bytes to the codec's stream decoder as they
arrive. Retries (rate limits, overload, 5xx, dropped connections, streams broken mid-reply)
happen here, with exponential backoff and jitter, honouring the provider's retry-after; a
broken stream is retried as a whole request, so a half reply never reaches a transcript. Each
retry, and the notes of each request the codec encodes, go to `toolwire.events.emit`: the run
waiting on this request hears them, and only that run (the events themselves live in
`toolwire.events`). An `HttpModel` is one model: it sends every request under its endpoint's
model name, its `provider_model`, which is what a run puts in `Request.model`.
An optional `Gate` shared by many callers paces them together: every send waits on it, and a
rate-limit or overload answer makes all of them back off (see `toolwire.batch.RateGate`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

from toolwire import _json
from toolwire.codecs import Codec, get_codec
from toolwire.errors import (
    OverloadedError,
    ProviderError,
    RateLimitError,
    StreamError,
    WireFormatError,
)
from toolwire.events import RetryEvent, StreamEnd, StreamEvent, WireNotes, emit
from toolwire.http.endpoints import Endpoint, parse_model_id
from toolwire.http.providers import PROVIDERS
from toolwire.http.transport import HttpTransport, Transport, WireRequest, WireResponse
from toolwire.transcript import Reply, Request, replace


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long to retry a failed request.

    The wait before attempt ``n`` (from 1) is a random value up to ``base * 2**(n-1)`` seconds,
    capped at ``max_wait``; a provider's retry-after is used instead when it is given and at most
    ``max_retry_after`` seconds.
    """

    max_attempts: int = 4
    base: float = 0.5
    max_wait: float = 30.0
    max_retry_after: float = 60.0

    def wait(self, attempt: int, error: ProviderError, rng: random.Random) -> float:
        if error.retry_after is not None and 0 <= error.retry_after <= self.max_retry_after:
            return error.retry_after
        return rng.uniform(0, min(self.max_wait, self.base * 2 ** (attempt - 1)))


class Gate(Protocol):
    """Pacing shared by the callers of one provider: ``wait`` before each send, ``backoff``
    when the provider said to slow down (a rate limit or overload that will be retried)."""

    async def wait(self) -> None: ...

    def backoff(self, seconds: float) -> None: ...


class HttpModel:
    """A model reached over HTTP in one wire format (see `toolwire.model`).

    ``gate``, when given, is awaited before every send and told of every retried rate limit or
    overload, so that many runs sharing it back off once, together.
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
    ) -> None:
        self.endpoint = endpoint
        self.codec: Codec = get_codec(endpoint.wire)
        self.transport: Transport = transport or HttpTransport()
        self.retry = retry or RetryPolicy()
        self.max_tokens = max_tokens
        self.options = dict(options or {})
        self._rng = random.Random(seed)
        self.gate = gate
        self._owned: Any = None  # a server started for this model (local:), stopped on aclose
        self.given_id: str | None = None  # the id `model` was given, base URL included

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
        changes: dict[str, Any] = {"stream": stream}
        if request.model != self.endpoint.model:
            changes["model"] = self.endpoint.model
        if request.max_tokens is None and self.max_tokens is not None:
            changes["max_tokens"] = self.max_tokens
        if self.options:
            opts = dict(request.provider_options or {})
            wire_opts = {**self.options, **dict(opts.get(self.wire, {}))}
            opts[self.wire] = wire_opts
            changes["provider_options"] = opts
        request = replace(request, **changes)
        encoded = self.codec.encode(request)
        if encoded.notes:
            emit(WireNotes(wire=self.wire, notes=tuple(str(n) for n in encoded.notes)))
        wire_request = WireRequest(
            url=self.endpoint.url(stream=stream),
            body=self.endpoint.prepare_body(encoded.body),
            headers=self.endpoint.headers(),
            stream=stream,
        )
        return request, wire_request

    async def _error(self, response: WireResponse) -> ProviderError:
        raw = await response.read()
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        error = self.codec.decode_error(response.status, body, response.headers)
        assert isinstance(error, ProviderError)
        return error

    def _retry_event(self, attempt: int, error: ProviderError) -> RetryEvent:
        """Raise ``error`` if it is final; else say (`emit`) when the next try will be."""
        if not error.retryable or attempt >= self.retry.max_attempts:
            raise error
        event = RetryEvent(attempt=attempt, wait=self.retry.wait(attempt, error, self._rng),
                           error=error)
        if self.gate is not None and (isinstance(error, RateLimitError | OverloadedError)
                                      or error.retry_after is not None):
            self.gate.backoff(event.wait)
        emit(event)
        return event

    async def _send(self, wire_request: WireRequest) -> WireResponse:
        """One attempt: wait for the shared gate, send, and raise the provider's error if any."""
        if self.gate is not None:
            await self.gate.wait()
        response = await self.transport.send(wire_request)
        if response.status >= 400:
            raise await self._error(response)
        return response

    async def complete(self, request: Request) -> Reply:
        """Send ``request`` and return the whole reply, retrying what may succeed on retry."""
        request, wire_request = self._prepare(request, stream=False)
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await self._send(wire_request)
                raw = await response.read()
                try:
                    body = _json.loads(raw)
                except ValueError as exc:
                    raise StreamError(
                        f"the server's reply is not JSON: {raw[:200]!r}",
                        status=response.status, retryable=True,
                    ) from exc
                try:
                    return self.codec.decode_response(body, request=request)
                except (KeyError, TypeError, ValueError) as exc:
                    raise WireFormatError(
                        f"the reply is not a {self.wire} reply ({type(exc).__name__}: {exc})"
                    ) from exc
            except ProviderError as error:
                await asyncio.sleep(self._retry_event(attempt, error).wait)

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        """Send ``request`` streamed; yield events as they arrive, ending with `StreamEnd`.

        When the stream breaks and is retried, its `RetryEvent` is emitted (`toolwire.events`):
        deltas yielded so far belong to the failed attempt and the reply starts over.
        """
        request, wire_request = self._prepare(request, stream=True)
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await self._send(wire_request)
                decoder = self.codec.stream_decoder(request=request)
                try:
                    async for chunk in response.aiter_bytes():
                        for event in decoder.feed(chunk):
                            yield event
                    reply = decoder.finish()
                except (KeyError, TypeError, ValueError) as exc:
                    raise StreamError(
                        f"the {self.wire} stream carried an event that cannot be read "
                        f"({type(exc).__name__}: {exc})", retryable=True, wire=self.wire,
                    ) from exc
                yield StreamEnd(reply=reply)
                return
            except ProviderError as error:
                await asyncio.sleep(self._retry_event(attempt, error).wait)

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
    endpoint = parse_model_id(model_id, env)
    server = None
    if endpoint.provider == "local" and not endpoint.base_url:
        from toolwire.http.local import LocalServer

        server = LocalServer(endpoint.model).start()
        endpoint = dataclasses.replace(endpoint, base_url=server.base_url)
        kwargs.setdefault("max_tokens", 1024)
    result = HttpModel(endpoint, transport=transport, retry=retry, **kwargs)
    result._owned = server
    if "@" in model_id:
        result.given_id = model_id
    return result
