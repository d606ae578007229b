"""What telling wires' bodies and stream text apart shares: the recognisers' result and
their helpers.

Owns `Kind` (what a recogniser says of a JSON object: ``"request"`` or ``"response"``),
`squeezed` and `block_types`. Each wire's recognisers live in its folder's ``__init__`` and
are held by its registry record (``detect``: ``body -> Kind | None``; ``detect_stream``:
``(head, text) -> bool``, ``head`` being the first few thousand characters, spaces kept, and
``text`` the whole); the registry tries them in its own order (`toolwire.codecs.record.Wire`'s
``detect_rank``), so each recogniser only looks for its wire's marks.

Must not import: the registry, any codec module, anything that does I/O. Pure functions over
JSON values and text.
"""

from __future__ import annotations

from typing import Any, Literal

Kind = Literal["request", "response"]


def block_types(messages: Any) -> set[str]:
    """The ``type`` of every content block in a body's ``messages``."""
    kinds: set[str] = set()
    for m in messages if isinstance(messages, list) else ():
        content = m.get("content") if isinstance(m, dict) else None
        if isinstance(content, list):
            kinds.update(b["type"] for b in content
                         if isinstance(b, dict) and isinstance(b.get("type"), str))
    return kinds


def squeezed(head: str) -> str:
    """Stream text without its spaces (so ``"type": "x"`` reads as ``"type":"x"``)."""
    return head.replace(" ", "")


__all__ = ["Kind", "block_types", "squeezed"]
