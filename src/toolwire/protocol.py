"""The `Model` protocol: the one thing the agent loop needs from a model.

Owns `Model`, `StreamingModel` and `model_name`. A model takes a canonical `Request` and gives
back a canonical `Reply`; whether it speaks HTTP (`toolwire.http.client.HttpModel`), replays a
script (`toolwire.testing.ScriptedModel`) or runs in process is its own business. Retries of failed
requests belong to the model, not to the loop: the loop sees a `ProviderError` only once the
model has given up.

Must not import the loop, dispatch, transport or any codec module; it only names values from
`toolwire.transcript`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from toolwire.transcript import Reply, Request


@runtime_checkable
class Model(Protocol):
    """Anything that answers a `Request` with a `Reply`.

    ``complete`` raises a `toolwire.errors.ProviderError` when the provider fails for good.
    A model may also have a ``name`` (a string naming the model, used as `Request.model` and in
    run logs); without one, ``str(model)`` is used.
    """

    async def complete(self, request: Request) -> Reply: ...


@runtime_checkable
class StreamingModel(Model, Protocol):
    """A model that can also stream its reply.

    ``stream`` yields `toolwire.codecs.base` stream events as they arrive and ends with a
    ``StreamEnd`` holding the whole reply. Other items (for example a client's retry notices)
    may appear in between; the loop passes them to its ``on_event`` callback and otherwise
    ignores them.
    """

    def stream(self, request: Request) -> AsyncIterator[object]: ...


def model_name(model: object) -> str:
    """The name a model goes by: its ``name`` attribute when that is a string, else ``str()``."""
    name = getattr(model, "name", None)
    return name if isinstance(name, str) else str(model)


__all__ = ["Model", "StreamingModel", "model_name"]
