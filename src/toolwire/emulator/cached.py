"""Explicit prompt caches in the emulator: Gemini's cached contents, made and named.

Owns `CachedStore`: ``create`` answers a POST to a wire's cache collection (the wire registry's
`toolwire.codecs.registry.ExplicitCache`: ``/v1beta/cachedContents`` for Gemini) the way the
provider does (a name, the model, the expiry, the tokens held; a cache shorter than the
model's caching minimum is refused), and ``expand`` turns a request naming a cache back into
the whole request it stands for (the cached fields, then the cached items before the request's
own), refusing what the provider refuses: a cache that does not exist or has expired, one made
for another model, and a request that repeats a field the cache holds. A cache holds its
tokens counted as the billing counts a prompt; the request's reply bills them as cache reads.
Must not import a codec module nor compare wire names.
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from toolwire.codecs.registry import Wire
from toolwire.context.windows import cache_minimum
from toolwire.emulator.billing import count_blocks

DEFAULT_TTL = 3600.0
"""Seconds a cache lives when its request sets no ``ttl`` (Gemini's default: one hour)."""


class Refused(Exception):
    """The provider refuses: ``status`` and the message it words."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class _Entry:
    model: str
    fixed: dict[str, Any]
    items: list[Any]
    tokens: int
    until: float


def _ttl(raw: Any) -> float:
    if raw is None:
        return DEFAULT_TTL
    found = re.fullmatch(r"(\d+(?:\.\d+)?)s", raw) if isinstance(raw, str) else None
    if found is None:
        raise Refused(400, f"Invalid value at 'cached_content.ttl' ({raw!r}): a duration in "
                           "seconds such as \"300s\" is expected")
    return float(found.group(1))


class CachedStore:
    """The caches an emulator made, by name; ``clock`` gives seconds, for their lifetimes."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.Lock()

    def create(self, wire: Wire, path: str, body: Any) -> dict[str, Any]:
        """The created cache as the provider describes it; `Refused` when it would refuse."""
        spec = wire.explicit_cache
        assert spec is not None
        if not isinstance(body, Mapping) or not isinstance(body.get("model"), str):
            raise Refused(400, "cached_content.model: a model name such as "
                               "models/gemini-2.5-flash is required")
        model = body["model"]
        items = body.get(spec.items) or []
        if not isinstance(items, list):
            raise Refused(400, f"cached_content.{spec.items}: expected a list")
        fixed = {k: body[k] for k in spec.fixed if k in body}
        tokens = sum(b.tokens for b in count_blocks({**fixed, spec.items: items}, wire.cache))
        minimum = cache_minimum(model.rsplit("/", 1)[-1])
        if tokens < minimum:
            raise Refused(400, f"Cached content is too small. total_token_count={tokens}, "
                               f"min_total_token_count={minimum}")
        ttl = _ttl(body.get("ttl"))
        parent = path.split("?", 1)[0].strip("/").split("/")[1:]  # without the version
        name = "/".join([*parent, secrets.token_hex(8)])
        with self._lock:
            self._entries[name] = _Entry(model, fixed, items, tokens, self.clock() + ttl)
        now = dt.datetime.now(dt.UTC)
        stamp = now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return {"name": name, "model": model, "createTime": stamp, "updateTime": stamp,
                "expireTime": (now + dt.timedelta(seconds=ttl)).strftime(
                    "%Y-%m-%dT%H:%M:%S.%fZ"),
                "usageMetadata": {"totalTokenCount": tokens}}

    def expand(self, wire: Wire, body: Mapping[str, Any], model: str | None
               ) -> tuple[dict[str, Any], int]:
        """The whole request ``body`` stands for, and the tokens its cache holds."""
        spec = wire.explicit_cache
        assert spec is not None
        repeated = [k for k in spec.fixed if k in body]
        if repeated:
            raise Refused(400, "CachedContent can not be used with GenerateContent request "
                               "setting system_instruction, tools or tool_config. Proposed "
                               "fix: move those values to CachedContent from GenerateContent "
                               "request.")
        name = body.get(spec.field)
        with self._lock:
            entry = self._entries.get(name) if isinstance(name, str) else None
            if entry is not None and entry.until < self.clock():
                del self._entries[str(name)]
                entry = None
        if entry is None:
            raise Refused(403, f"CachedContent not found (or permission denied): {name!r}")
        if model is not None and entry.model.rsplit("/", 1)[-1] != model:
            raise Refused(400, f"Model used by GenerateContent request (models/{model}) and "
                               f"CachedContent ({entry.model}) has to be the same.")
        own = body.get(spec.items) or []
        whole = {k: v for k, v in body.items() if k != spec.field}
        whole.update(entry.fixed)
        whole[spec.items] = [*entry.items, *(own if isinstance(own, list) else [own])]
        return whole, entry.tokens

    def __len__(self) -> int:
        return len(self._entries)


__all__ = ["DEFAULT_TTL", "CachedStore", "Refused"]
