"""How a body or an exception is shown inside an error message: short, on one line.

Owns `named` (an exception as its type and message), `shown` (a decoded body, shortened) and
`snippet` (the start of a raw body). Imports only `toolwire.errors`.
"""

from __future__ import annotations

import json
from typing import Any

from toolwire.errors import ToolwireError


def named(exc: BaseException) -> str:
    """An exception as its type and message; a toolwire error's message says enough."""
    if isinstance(exc, ToolwireError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def shown(body: Any) -> str:
    """A decoded body, shortened, for an error message (its type when it cannot be written)."""
    try:
        return snippet(json.dumps(body, ensure_ascii=False))
    except Exception:
        return f"a JSON {type(body).__name__}"


def snippet(raw: bytes | str, limit: int = 200) -> str:
    """The start of a body, as shown in an error message."""
    text = raw if isinstance(raw, str) else raw[: limit * 4].decode("utf-8", "replace")
    return repr(text[:limit]) + ("…" if len(text) > limit else "")


__all__ = ["named", "shown", "snippet"]
