"""A fallback chain: several models that answer as one, each taking over when the one before
it fails in a way that another model may not.

Owns `FallbackChain` and `fallback`. A chain is a `toolwire.protocol.Model` like any other
(`Agent`, `toolwire.batch`, anything that takes a model takes it). Each request is given to
its models in order; a model that fails with an error that moves the chain on (a row of
`toolwire.failover.table.FAILURES`: overload, 5xx, a rate limit still refused after the model's
own retries, a broken stream, a prompt too long for it) hands the same request to the next,
fitted to it (`toolwire.failover.shaping`); an error that ends the run (a bad request, a bad
key) is raised at once, naming the model. Every answered call emits a
`toolwire.events.ModelChosen`: which model answered, why each one before it was passed over,
and what the conversation lost on the way to its wire.

``sticky=False`` (the default) starts every request at the top of the chain, so the first
model is back as soon as it answers again; ``sticky=True`` starts at the model that wrote the
conversation's last reply. A chain may be shared by many runs at once (`toolwire.batch`): what
it knows of a conversation it reads from the request's history.

``server_fallbacks=True`` also lets Anthropic's own API fall back, for policy refusals, to the
Anthropic models that follow in the chain (the ``fallbacks`` request parameter); the
``fallback`` blocks of its replies stay in the transcript where they came, and go back to it
verbatim.

Imports the protocol, the events, the errors and the codecs (through ``get_codec``); never the
loop, the client or the transport.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from typing import Any

from toolwire.context.estimate import estimate_tokens
from toolwire.errors import ProviderError, WireFormatError
from toolwire.events import ModelChosen, RetryEvent, StreamEnd, StreamEvent, emit
from toolwire.failover.shaping import ChainLink, losses, shaped, wire_of
from toolwire.failover.table import failure, named
from toolwire.protocol import (
    ClosingModel,
    CountingModel,
    Model,
    ReleasingModel,
    StreamingModel,
    WarmModel,
    model_name,
    native_fallbacks,
    native_search,
)
from toolwire.protocol import provider_model as provider_model_of
from toolwire.transcript import Message, Reply, Request, replace

SERVER_FALLBACKS_MAX = 3
"""How many models a request may name for its provider to fall back to (Anthropic takes up to
three)."""
REMEMBERED = 1024
"""How many recent replies a chain remembers the writer of (for the runs sharing it)."""


def _provider(model: object) -> object:
    return getattr(getattr(model, "endpoint", None), "provider", None)


class FallbackChain:
    """Models tried in order for each request (see the module docstring and `fallback`)."""

    def __init__(self, links: Sequence[ChainLink], *, sticky: bool = False,
                 server_fallbacks: bool = False) -> None:
        if not links:
            raise ValueError("a fallback chain needs at least one model")
        self.links = tuple(links)
        self.sticky = sticky
        self.server_fallbacks = server_fallbacks
        self._answers: OrderedDict[int, tuple[Message, int]] = OrderedDict()
        """The link that wrote each recent reply, by the reply's message (kept, so its id is
        not reused): what a conversation's history says of who answered it last, for each of
        the many runs that may share the chain."""
        self._last = 0  # the link that answered last, in any run

    def __repr__(self) -> str:
        names = ", ".join(repr(model_name(link.model)) for link in self.links)
        return f"FallbackChain({names}, sticky={self.sticky})"

    # ------------------------------------------------------------------ what a model says

    @property
    def models(self) -> tuple[Model, ...]:
        return tuple(link.model for link in self.links)

    @property
    def name(self) -> str:
        """The first model's name: what a run log keeps to rebuild the run's model."""
        return model_name(self.links[0].model)

    @property
    def provider_model(self) -> str:
        return provider_model_of(self.links[0].model)

    @property
    def current(self) -> Model:
        """The model that answered last (before any answer: the first)."""
        return self.links[self._last].model

    @property
    def endpoint(self) -> object:
        """The first model's endpoint, when it has one (what a run log's context names)."""
        return getattr(self.links[0].model, "endpoint", None)

    @property
    def telemetry(self) -> dict[str, Any]:
        found = getattr(self.current, "telemetry", None)
        return dict(found) if isinstance(found, dict) else {}

    @property
    def context_window(self) -> int | None:
        window = getattr(self.links[0].model, "context_window", None)
        return window if isinstance(window, int) else None

    @property
    def media_tokens(self) -> str | None:
        rule = getattr(self.links[0].model, "media_tokens", None)
        return rule if isinstance(rule, str) else None

    @property
    def native_tool_search(self) -> bool:
        """Whether every model of the chain searches deferred tools itself."""
        return all(native_search(link.model) for link in self.links)

    native_compaction = False
    """A chain compacts its history itself: a summary kept by one provider means nothing to
    the next."""

    # ------------------------------------------------------------------ one request

    def _previous(self, request: Request) -> int | None:
        """The link whose reply is the last assistant message of ``request`` (None: none of
        this chain's, or no reply yet)."""
        for message in reversed(request.messages):
            if message.role == "assistant":
                found = self._answers.get(id(message))
                return found[1] if found is not None and found[0] is message else None
        return None

    def _order(self, before: int | None) -> list[int]:
        """The links to try, in order: from the top, or (sticky) from the one that answered
        last, then the rest of the chain and round to the top."""
        start = before if self.sticky and before is not None else 0
        return [*range(start, len(self.links)), *range(start)]

    def _request(self, request: Request, index: int) -> tuple[Request, tuple[str, ...]]:
        link = self.links[index]
        fitted, notes = shaped(request, link)
        if self.server_fallbacks and native_fallbacks(link.model):
            fitted = self._with_server_fallbacks(fitted, index)
        return fitted, notes

    def _with_server_fallbacks(self, request: Request, index: int) -> Request:
        """``request`` asking the provider of link ``index`` to fall back by itself to the
        models after it that it serves too (same provider, same wire)."""
        model = self.links[index].model
        wire = wire_of(model)
        entries: list[dict[str, Any]] = []
        for link in self.links[index + 1:index + 1 + SERVER_FALLBACKS_MAX]:
            if (not native_fallbacks(link.model) or wire_of(link.model) != wire
                    or _provider(link.model) != _provider(model)):
                break
            entry: dict[str, Any] = {"model": provider_model_of(link.model)}
            if link.max_tokens is not None:
                entry["max_tokens"] = link.max_tokens
            entries.append(entry)
        if not entries or wire is None:
            return request
        options = dict(request.provider_options or {})
        options[wire] = {**dict(options.get(wire) or {}), "fallbacks": entries}
        return replace(request, provider_options=options)

    def _chosen(self, request: Request, reply: Reply, index: int, before: int | None,
                failed: list[tuple[str, str, str]], notes: tuple[str, ...]) -> None:
        """Note that link ``index`` wrote ``reply``; say so (`ModelChosen`) with what the
        history lost on its way from the wire that answered before (or that failed first)."""
        source = before if before is not None else (self._order(before)[0] if failed else None)
        lost = notes
        if source is not None and source != index:
            lost = losses(request, wire_of(self.links[source].model),
                          wire_of(self.links[index].model)) + notes
        self._answers[id(reply.message)] = (reply.message, index)
        if len(self._answers) > REMEMBERED:
            self._answers.popitem(last=False)
        self._last = index
        emit(ModelChosen(model=model_name(self.links[index].model), failed=tuple(failed),
                         losses=lost))

    def _failed(self, exc: ProviderError | WireFormatError, index: int,
                failed: list[tuple[str, str, str]], last: bool) -> ProviderError | WireFormatError:
        """Note ``exc`` from link ``index`` in ``failed``; return ``exc`` itself when the next
        model takes the request, else an error naming the model (the run ends with it)."""
        row = failure(exc)
        assert row is not None  # every provider error and bad reply has its row
        name = model_name(self.links[index].model)
        tried = "; ".join(f"{n}: {why}" for n, why, _ in failed)
        failed.append((name, row.why, str(exc)))
        if not row.moves_on or last:
            emit(ModelChosen(model=None, failed=tuple(failed)))
            return named(exc, name, tried)
        return exc  # the next model takes the request

    async def complete(self, request: Request) -> Reply:
        failed: list[tuple[str, str, str]] = []
        before = self._previous(request)
        order = self._order(before)
        for index in order:
            fitted, notes = self._request(request, index)
            try:
                reply = await self.links[index].model.complete(fitted)
            except (ProviderError, WireFormatError) as exc:
                ended = self._failed(exc, index, failed, index == order[-1])
                if ended is not exc:
                    raise ended from exc
                continue
            self._chosen(fitted, reply, index, before, failed, notes)
            return reply
        raise AssertionError("unreachable: the last model's failure ends the chain")

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        """Stream from the first model that answers. Events a model gave before its stream
        broke belong to an attempt that failed: a `RetryEvent` says the reply starts over,
        as it does when a model retries a broken stream itself."""
        failed: list[tuple[str, str, str]] = []
        before = self._previous(request)
        order = self._order(before)
        attempt = 0
        for index in order:
            fitted, notes = self._request(request, index)
            model: Any = self.links[index].model
            given = False
            try:
                if isinstance(model, StreamingModel):
                    stream: Any = model.stream(fitted)  # its events are closed with ``aclose``
                    async with contextlib.aclosing(stream) as events:
                        async for event in events:
                            if type(event) is StreamEnd:
                                self._chosen(fitted, event.reply, index, before, failed, notes)
                            given = True
                            yield event
                else:
                    reply = await model.complete(fitted)
                    self._chosen(fitted, reply, index, before, failed, notes)
                    yield StreamEnd(reply=reply)
                return
            except (ProviderError, WireFormatError) as exc:
                ended = self._failed(exc, index, failed, index == order[-1])
                if ended is not exc:
                    raise ended from exc
                if given:
                    attempt += 1
                    emit(RetryEvent(attempt=attempt, wait=0.0, error=exc))
        raise AssertionError("unreachable: the last model's failure ends the chain")

    # ------------------------------------------------------------------ what models hold

    async def count_tokens(self, request: Request) -> int:
        """The prompt tokens of ``request`` as the model that answered last counts them (a
        local estimate when it cannot)."""
        current = self.current
        if isinstance(current, CountingModel):
            return await current.count_tokens(request)
        return estimate_tokens(request, self.media_tokens)

    def keep_warm(self) -> contextlib.AbstractAsyncContextManager[Any]:
        current = self.current
        return current.keep_warm() if isinstance(current, WarmModel) else contextlib.nullcontext()

    async def release(self) -> None:
        for link in self.links:
            if isinstance(link.model, ReleasingModel):
                await link.model.release()

    async def aclose(self) -> None:
        for link in self.links:
            if isinstance(link.model, ClosingModel):
                await link.model.aclose()

    def close(self) -> None:
        import asyncio

        asyncio.run(self.aclose())

    async def __aenter__(self) -> FallbackChain:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def fallback(*models: Model | ChainLink, sticky: bool = False,
             server_fallbacks: bool = False) -> FallbackChain:
    """A model that gives each request to ``models`` in order until one answers.

    Each of ``models`` is a model, or a `ChainLink` naming a model with its own settings (max
    tokens, reasoning level, whether it takes tools or media). Which failures move on to the
    next model and which end the run is `toolwire.failover.table.FAILURES` (see
    docs/agent.md). ``sticky`` keeps to the model that answered last; ``server_fallbacks``
    also asks Anthropic's API to fall back to the Anthropic models that follow (for refusals).
    """
    links = [m if isinstance(m, ChainLink) else ChainLink(m) for m in models]
    return FallbackChain(links, sticky=sticky, server_fallbacks=server_fallbacks)


__all__ = ["FallbackChain", "fallback"]
