"""What the emulator refuses, the way each provider refuses it.

Owns `first_refusal` (the first rule a request breaks, as the provider would word it, or None)
and `error_body` (an error in the wire's own shape). The rules are `toolwire.rules.check_request`
(each wire's ``check_body`` of the raw body, then the transcript's pairing rules), the same
statement `toolwire check` reads; error bodies are each wire's own (``encode_error``). Must not
import a codec module directly (only through ``get_codec``) nor compare wire names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolwire.codecs import get_codec


def error_body(wire: str, status: int, message: str) -> dict[str, Any]:
    """An error body shaped as ``wire`` shapes its errors."""
    return get_codec(wire).encode_error(status, message)


def first_refusal(wire: str, body: dict[str, Any], *, model: str | None = None,
                  headers: Mapping[str, str] | None = None,
                  stream: bool | None = None) -> str | None:
    """The first rule a raw request body breaks, worded as the provider would, or None: the
    same rules `toolwire check` lists (`toolwire.rules.check_request`). ``model`` and
    ``stream`` are what a URL said; ``headers`` the request's own."""
    from toolwire.rules import check_request

    for problem in check_request(body, wire, model=model, headers=headers, stream=stream):
        if problem.severity == "error":
            if problem.rule in ("refused", "malformed"):
                return problem.message
            return f"messages.{problem.index}: {problem.message}"
    return None
