"""Explicit prompt caches made by the client: Gemini's cached contents, as an option.

Owns `ExplicitCaches` (one model's caches: when to make one, and a request rewritten to use it;
`explicit_caches` makes it for a wire that has them), `collection_of` (where a model URL's
caches are created, and the model's resource name) and `ttl_seconds`. With
``Cache(explicit=True)`` a request to a wire with an explicit cache
(`toolwire.codecs.registry.ExplicitCache`) goes like this:

- the cache holds the request's fixed fields (system instruction, tools, tool config) and its
  items (contents) up to, not including, the latest one; it is made (a POST to the collection,
  with ``ttl``) when that prefix reaches the model's caching minimum;
- a request whose fixed fields and first items are the cache's is sent naming it
  (``cachedContent``) with only the items after them;
- a new cache is made when the items sent after the cache outgrow it (and the minimum), so a
  long run makes few caches, each about twice the last; one that has expired, or will within a
  minute, is made anew; the old ones lapse at their TTL;
- a cache that cannot be made (too small for the server, refused) leaves the request whole,
  with a note, and no cache is tried again for that model.

Tokens are estimated as the emulator and `toolwire.context.estimate` count text: four
characters of compact JSON each. Must not import the client or a codec module.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from toolwire import _json
from toolwire.codecs.registry import ExplicitCache, get_wire
from toolwire.context.windows import cache_minimum
from toolwire.errors import ProviderError
from toolwire.events import WireNotes, emit
from toolwire.http.transport import WireRequest, WireResponse, body_bytes
from toolwire.transcript import Cache

MARGIN = 60.0
"""Seconds before its expiry that a cache is no longer used (a request in flight must not
outlive it)."""

Send = Callable[[WireRequest], Awaitable[WireResponse]]


def ttl_seconds(ttl: str | None) -> float | None:
    """``"90s"``, ``"5m"`` or ``"1h"`` in seconds; None for the provider's default (and for
    anything else)."""
    found = re.fullmatch(r"(\d+(?:\.\d+)?)([smh])", ttl) if ttl is not None else None
    if found is None:
        return None
    return float(found.group(1)) * {"s": 1, "m": 60, "h": 3600}[found.group(2)]


def collection_of(url: str, collection: str) -> tuple[str, str]:
    """Where the caches of the model at ``url`` are created, and that model's resource name:
    ``.../v1beta/models/m:generateContent`` gives ``.../v1beta/cachedContents`` and
    ``models/m``; on Vertex AI, ``.../v1/projects/p/locations/l/publishers/google/models/m``
    gives ``.../v1/projects/p/locations/l/cachedContents`` and the model's full path."""
    parts = urlsplit(url)
    head, _, tail = parts.path.rpartition("/models/")
    segments = [s for s in head.split("/") if s]
    version, rest = segments[:1], segments[1:]
    parent = rest[: rest.index("publishers")] if "publishers" in rest else rest
    resource = "/".join([*rest, "models", tail.split(":", 1)[0]])
    path = "/" + "/".join([*version, *parent, collection])
    return urlunsplit((parts.scheme, parts.netloc, path, "", "")), resource


def _tokens(value: Any) -> int:
    return -(-len(json.dumps(value, ensure_ascii=False, separators=(",", ":"))) // 4)


def _digest(fixed: Mapping[str, Any], items: list[Any]) -> bytes:
    return hashlib.sha256(json.dumps([fixed, items], sort_keys=True).encode()).digest()


@dataclass(frozen=True, slots=True)
class _Made:
    name: str
    count: int  # how many items it holds
    tokens: int
    digest: bytes
    until: float


class ExplicitCaches:
    """The explicit caches of one model: made when worth it, named by the requests they fit."""

    def __init__(self, spec: ExplicitCache, model: str, wire: str,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.spec = spec
        self.minimum = cache_minimum(model)
        self.wire = wire
        self.clock = clock
        self.made: list[str] = []
        """The names of the caches made, in order."""
        self._current: _Made | None = None
        self._refused = False

    def _fits(self, fixed: dict[str, Any], items: list[Any]) -> bool:
        made = self._current
        return (made is not None and made.until - MARGIN > self.clock()
                and len(items) > made.count
                and _digest(fixed, items[: made.count]) == made.digest)

    async def use(self, sent: WireRequest, cache: Cache | None, send: Send) -> WireRequest:
        """``sent`` naming a cache that holds its prefix (made first when worth it), or
        ``sent`` as it was (``cache`` does not ask for one, or none fits). A signed request
        (its bytes fixed, ``content``) is rewritten with its new bytes."""
        spec, body = self.spec, dict(sent.body)
        items = body.get(spec.items)
        if (cache is None or not cache.explicit or self._refused or not isinstance(items, list)
                or not items or spec.field in body):
            return sent
        signed = sent.content is not None
        fixed = {k: body[k] for k in spec.fixed if k in body}
        made = self._current if self._fits(fixed, items) else None
        held = made.count if made is not None else 0
        grown = _tokens(items[held:-1])
        if made is None or grown >= max(self.minimum, made.tokens):
            prefix = _tokens(fixed) + _tokens(items[:-1])
            if prefix >= self.minimum:
                made = await self._make(sent, fixed, items[:-1], cache, send, signed) or made
        if made is None:
            return sent
        out = {k: v for k, v in body.items() if k not in spec.fixed}
        out[spec.items] = items[made.count:]
        out[spec.field] = made.name
        return WireRequest(url=sent.url, body=out, headers=sent.headers, stream=sent.stream,
                           content=body_bytes(out) if signed else None)

    async def _make(self, sent: WireRequest, fixed: dict[str, Any], items: list[Any],
                    cache: Cache, send: Send, signed: bool) -> _Made | None:
        url, resource = collection_of(sent.url, self.spec.collection)
        ttl = ttl_seconds(cache.ttl)
        body: dict[str, Any] = {"model": resource, **fixed, self.spec.items: items}
        if ttl is not None:
            body["ttl"] = f"{ttl:g}s"
        request = WireRequest(url=url, body=body, headers=sent.headers,
                              content=body_bytes(body) if signed else None)
        try:
            response = await send(request)
            found = _json.loads(await response.read())
        except (ProviderError, ValueError) as exc:
            self._refused = True
            emit(WireNotes(wire=self.wire, notes=(
                f"explicit_cache: no cache was made ({exc}); requests go whole",)))
            return None
        name = found.get("name") if isinstance(found, dict) else None
        if not isinstance(name, str):
            self._refused = True
            return None
        usage = found.get("usageMetadata")
        tokens = usage.get("totalTokenCount") if isinstance(usage, dict) else None
        self._current = _Made(name, len(items), tokens if isinstance(tokens, int) else
                              _tokens(fixed) + _tokens(items), _digest(fixed, items),
                              self.clock() + (ttl or 3600.0))
        self.made.append(name)
        emit(WireNotes(wire=self.wire, notes=(
            f"explicit_cache: made {name}, holding {len(items)} of the contents",)))
        return self._current


def explicit_caches(wire: str, model: str) -> ExplicitCaches | None:
    """The explicit caches of ``model`` on ``wire``, or None for a wire without them."""
    spec = get_wire(wire).explicit_cache
    return ExplicitCaches(spec, model, wire) if spec is not None else None


__all__ = ["MARGIN", "ExplicitCaches", "collection_of", "explicit_caches", "ttl_seconds"]
