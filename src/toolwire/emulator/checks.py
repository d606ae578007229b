"""What the emulator refuses, the way each provider refuses it.

Owns `check_body` and `check_pairing` (the first rule a request breaks, as the provider would
word it, or None) and `error_body` (an error in the wire's own shape). Raw-body checks are each
wire's own (``check_body`` of its codec: roles, a tool without a schema, Gemini's response
counts), and so are error bodies (``encode_error``); the pairing rules come from
`toolwire.rules.check_transcript` on the decoded request. Must not import a codec module
directly (only through ``get_codec``) nor compare wire names.
"""

from __future__ import annotations

from typing import Any

from toolwire.codecs import get_codec
from toolwire.transcript import Request


def error_body(wire: str, status: int, message: str) -> dict[str, Any]:
    """An error body shaped as ``wire`` shapes its errors."""
    return get_codec(wire).encode_error(status, message)


def check_body(wire: str, body: dict[str, Any], model: str | None = None) -> str | None:
    """The first rule the raw ``body`` breaks for ``wire``, worded as the provider would.
    ``model`` is the one a URL named, given to the check as the body's ``model`` (what a
    model may take, such as media inside Gemini's function responses, depends on it)."""
    if model and "model" not in body:
        body = {**body, "model": model}
    return get_codec(wire).check_body(body)


def check_pairing(wire: str, request: Request) -> str | None:
    """The first pairing or ordering rule the decoded request breaks, or None."""
    from toolwire.rules import check_transcript

    for problem in check_transcript(request.messages, wire):
        if problem.severity == "error":
            return f"messages.{problem.index}: {problem.message}"
    return None
