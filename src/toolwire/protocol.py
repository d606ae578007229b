"""The `Model` protocol: the one thing the agent loop needs from a model.

Owns `Model` and the abilities a model may add to it (`StreamingModel`, `CountingModel`,
`WarmModel`, `ReleasingModel`, `ClosingModel`: each a protocol, checked with ``isinstance``),
`model_name`, `provider_model`, what a model's provider does
itself (`native_search`, `native_compaction`, `native_fallbacks`), `holds_nothing` (what a
model must not give back as a reply) and `as_model` (a model, or a model id read by the reader
the package root gives `read_model_ids`, so that the loop never imports the HTTP client). A
model takes a canonical `Request` and gives back a canonical `Reply`; whether it speaks HTTP
(`toolwire.http.client.HttpModel`), replays a script (`toolwire.testing.ScriptedModel`) or runs in
process is its own business. Retries of failed requests belong to the model, not to the loop: the
loop sees a `ProviderError` only once the model has given up, and hears of each retry through
`toolwire.events.emit`.

Two names, each with one meaning: `model_name` is what the caller calls the model (a model id
such as ``anthropic:claude-sonnet-4-5``; run logs keep it so a run can be resumed), and
`provider_model` is what the provider calls it (``claude-sonnet-4-5``), which is what
`Request.model` holds everywhere, above the client as on the wire.

Must not import the loop, dispatch, transport or any codec module; it only names values from
`toolwire.transcript`, `toolwire.events` and `toolwire.errors`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol, runtime_checkable

from toolwire.errors import ConfigError
from toolwire.events import StreamEvent
from toolwire.transcript import ReasoningPart, Reply, Request, TextPart


@runtime_checkable
class Model(Protocol):
    """Anything that answers a `Request` with a `Reply`.

    ``complete`` raises a `toolwire.errors.ProviderError` when the provider fails for good.
    A model may also have a ``name`` (a string: what the caller calls the model, kept in run
    logs; without one, ``str(model)``), a ``provider_model`` (a string: what the provider
    calls it, put in `Request.model`; without one, the ``name``) and a ``telemetry`` mapping
    (what its OpenTelemetry spans say of it: ``gen_ai.provider.name``, ``server.address``,
    ``server.port``; see `toolwire.telemetry`) and ``native_features`` (a frozenset of what
    its provider does on its side: ``tool_search``, ``compaction``, ``fallbacks``).
    """

    async def complete(self, request: Request) -> Reply: ...


@runtime_checkable
class StreamingModel(Model, Protocol):
    """A model that can also stream its reply.

    ``stream`` yields `toolwire.events` stream events as they arrive and ends with a
    ``StreamEnd`` holding the whole reply. A stream retried after it broke says so with a
    `toolwire.events.RetryEvent` given to `toolwire.events.emit`, not in the stream; the loop
    passes every stream event to the run's listeners.
    """

    def stream(self, request: Request) -> AsyncIterator[StreamEvent]: ...


@runtime_checkable
class CountingModel(Model, Protocol):
    """A model that counts a request's prompt tokens as its provider does (an HTTP model at a
    provider with a counting endpoint); the loop asks it when an estimate nears a limit."""

    async def count_tokens(self, request: Request) -> int: ...


@runtime_checkable
class WarmModel(Model, Protocol):
    """A model that can keep what it holds from going cold while a reply's tools run (an HTTP
    model keeps its connection open, so the next turn does not open a new one)."""

    def keep_warm(self) -> AbstractAsyncContextManager[Any]: ...


@runtime_checkable
class ReleasingModel(Model, Protocol):
    """A model that holds something for a run (a local server it started) and lets it go when
    the run ends."""

    async def release(self) -> None: ...


@runtime_checkable
class ClosingModel(Model, Protocol):
    """A model that holds connections until it is closed."""

    async def aclose(self) -> None: ...


_MODEL_IDS: list[Callable[[str], Model]] = []


def read_model_ids(read: Callable[[str], Model]) -> None:
    """Say how a model id (``"anthropic:claude-sonnet-4-5"``) becomes a `Model`; the package
    root gives toolwire's HTTP client here, so that an agent takes an id as it is."""
    _MODEL_IDS[:] = [read]


def as_model(value: object, where: str = "Agent(model=...)") -> Model:
    """``value`` as a `Model`: one as it is, a model id read by what `read_model_ids` gave;
    anything else (None, a number) is a `ConfigError` saying what to give."""
    if isinstance(value, str) and _MODEL_IDS:
        return _MODEL_IDS[0](value)
    if isinstance(value, str):
        raise ConfigError(f"{where}: the model id {value!r} is read by toolwire's HTTP client: "
                          "use toolwire.Agent, or give toolwire.model(...)")
    if getattr(value, "complete", None) is None and not isinstance(value, Model):
        raise ConfigError(f"{where}: got {value!r}, which is not a model; give a model id such "
                          "as 'anthropic:claude-sonnet-4-5', or a Model such as "
                          "toolwire.model(...) or toolwire.testing.ScriptedModel")
    return value  # type: ignore[return-value]


def model_name(model: object) -> str:
    """The name a model goes by: its ``name`` attribute when that is a string, else ``str()``."""
    name = getattr(model, "name", None)
    return name if isinstance(name, str) else str(model)


def _native(model: object, attribute: str, feature: str) -> bool:
    """``model``'s own ``attribute`` when it is a bool, else whether ``feature`` is among its
    ``native_features`` (a frozenset: what its provider does on its side; an HTTP model says
    so for its wire at the provider's own API)."""
    flag = getattr(model, attribute, None)
    if isinstance(flag, bool):
        return flag
    features = getattr(model, "native_features", None)
    return isinstance(features, frozenset) and feature in features


def native_search(model: object) -> bool:
    """Whether ``model``'s provider searches deferred tools itself (``native_tool_search``;
    by default its ``native_features`` hold ``tool_search``: see `_native`)."""
    return _native(model, "native_tool_search", "tool_search")


def native_compaction(model: object) -> bool:
    """Whether ``model``'s provider manages a long context itself (``native_compaction``; by
    default its ``native_features`` hold ``compaction``: see `_native`)."""
    return _native(model, "native_compaction", "compaction")


def native_fallbacks(model: object) -> bool:
    """Whether ``model``'s provider falls back to other models of its own itself when asked
    (``server_fallbacks``; by default its ``native_features`` hold ``fallbacks``: see
    `_native`)."""
    return _native(model, "server_fallbacks", "fallbacks")


def provider_model(model: object) -> str:
    """What the provider calls a model, for `Request.model`: its ``provider_model`` attribute
    when that is a string, else `model_name`."""
    name = getattr(model, "provider_model", None)
    return name if isinstance(name, str) else model_name(model)


_EXPLAINS_EMPTY = frozenset({
    "max_tokens", "stop_sequence", "pause_turn", "refusal", "content_filter",
    "context_window_exceeded", "tool_call_failed", "error",
})
"""Stops that explain an empty reply by themselves (the token limit, a stop sequence, a pause, a
refusal, a filter, an error); ``end_turn``, ``tool_calls`` and ``other`` do not."""


def holds_nothing(reply: Reply) -> bool:
    """Whether ``reply`` is no reply at all: no tool call and no content (text that is only
    whitespace, or reasoning alone), while its stop claims it ended normally.

    Such a reply (a ``{}`` body, an error body sent with status 200) is not an answer: a model
    treats it as a reply it could not use (`toolwire.http.client.HttpModel` sends the request
    once more, then raises `WireFormatError`) and a run that still gets one ends with stop
    ``bad_reply``.
    """
    if reply.stop in _EXPLAINS_EMPTY:
        return False
    for part in reply.message.parts:
        if type(part) is TextPart:
            if part.text.strip():
                return False
        elif type(part) is not ReasoningPart:
            return False
    return True


__all__ = ["Model", "StreamingModel", "holds_nothing", "model_name",
           "native_compaction", "native_fallbacks", "native_search", "provider_model"]
