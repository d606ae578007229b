"""How a provider reads a prompt: its prompt cache, its token counting, its explicit caches.

Owns the parts of a wire's record (`toolwire.codecs.record.Wire`) that describe the prompt:
`CacheRules` (how the provider caches prompt prefixes), `Counting` (its token-counting
endpoint, and the prompt inside a counting request: a wire whose counting body holds it
elsewhere gives its own ``read``) and `ExplicitCache` (a cache made by a request of its own).
Records only: imports nothing of toolwire, so the registry stays cheap to import.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True, kw_only=True, slots=True)
class CacheRules:
    """How a wire's provider caches prompt prefixes (what the emulator models).

    ``kind``: ``"breakpoints"`` (only up to blocks marked ``cache_control``, at most
    ``max_breakpoints``, each looking back ``lookback`` blocks for an earlier entry; writes are
    billed), ``"prefix"`` (any repeated prefix, cached lengths rounded down to ``step`` tokens,
    routed by the body field ``key_field``; writes are free) or ``"none"``. ``sections`` are the
    body's fields in the order the provider reads the prompt (a list's items, and a message's
    content blocks, are its blocks). ``ttl`` is the default lifetime of an entry in seconds.
    """

    kind: Literal["breakpoints", "prefix", "none"] = "none"
    sections: tuple[str, ...] = ()
    max_breakpoints: int = 4
    lookback: int = 20
    step: int = 1
    key_field: str | None = None
    ttl: float = 300.0


@dataclass(frozen=True, kw_only=True, slots=True)
class Counting:
    """A provider's token-counting endpoint: ``path`` (``{model}`` filled in, relative to the
    server like the wire's path), the request body's ``keys`` it takes (wrapped in ``wrap``
    with ``"model": "models/<model>"`` when set), and the reply field holding the count."""

    path: str
    keys: frozenset[str]
    field: str = "input_tokens"
    wrap: str | None = None
    read: Callable[[Mapping[str, Any]], Any] | None = None
    """The prompt body inside a counting request, for an endpoint that nests it otherwise
    (Bedrock's ``{"input": {"converse": ...}}``); else it is under ``wrap`` or the body."""

    def prompt(self, body: Any) -> Mapping[str, Any]:
        """The prompt body a counting request ``body`` holds (empty when it holds none)."""
        if self.read is not None:
            inner = self.read(body) if isinstance(body, Mapping) else None
        elif self.wrap and isinstance(body, Mapping) and self.wrap in body:
            inner = body[self.wrap]
        else:  # Vertex AI's countTokens takes the fields unwrapped
            inner = body
        return inner if isinstance(inner, Mapping) else {}

    def body(self, body: Mapping[str, Any], model: str) -> dict[str, Any]:
        """The counting request for a request ``body``."""
        kept = {k: v for k, v in body.items() if k in self.keys}
        return {self.wrap: {"model": f"models/{model}", **kept}} if self.wrap else kept


@dataclass(frozen=True, kw_only=True, slots=True)
class ExplicitCache:
    """A provider's explicit prompt cache, made by a request of its own (Gemini's cached
    contents): ``collection`` is the resource a POST creates one in (next to the models, as
    ``/v1beta/cachedContents``), ``field`` the request body field naming one, ``fixed`` the body
    fields that then live only in the cache (a request naming a cache may not repeat them), and
    ``items`` the list field whose first items a cache may hold."""

    collection: str
    field: str
    fixed: tuple[str, ...]
    items: str


__all__ = ["CacheRules", "Counting", "ExplicitCache"]
