"""What a run does about the cost and the size of its context: caching and compaction.

Owns `cache_setting` (the `Cache` an agent's requests carry). Must not import the loop,
resume, codecs, the transport or the client.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from toolwire.transcript import Cache, ToolSpec, replace


def cache_setting(
    cache: bool | Cache, model: str, system: str | None, tools: Sequence[ToolSpec]
) -> Cache | None:
    """The `Cache` for an agent's requests: None when caching is off; else ``cache`` with a key
    made from what stays the same across the agent's runs (model, system prompt, tool names)
    when it has none, so that its runs share one cache (the OpenAI wires route by the key)."""
    if cache is False:
        return None
    found = Cache() if cache is True else cache
    if found.key is not None:
        return found
    seed = "\n".join([model, system or "", *(t.name for t in tools)])
    return replace(found, key="toolwire-" + hashlib.sha256(seed.encode()).hexdigest()[:16])


__all__ = ["cache_setting"]
