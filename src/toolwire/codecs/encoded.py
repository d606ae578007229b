"""What an encoder gives: `Encoded` (a request body in one wire, the notes on what was changed
to fit it, the headers it needs) and `Note` (one such change, or something that could not be
carried over). Re-exported by `toolwire.codecs.base`, the path the wires import them from.
Imports nothing else of toolwire.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, kw_only=True, slots=True)
class Note:
    """Something a codec or a conversion changed or could not carry over.

    ``kind``: ``tool_name_mapped``, ``schema_rewritten``, ``reasoning_dropped``, ``id_rewritten``,
    ``opaque_dropped``, ``field_dropped``, ``choice_changed``, ... ``subject`` names what it is
    about (a tool, a call id, a message index); ``detail`` says what was done.
    """

    kind: str
    subject: str
    detail: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.subject}: {self.detail}"


@dataclass(frozen=True, kw_only=True, slots=True)
class Encoded:
    """A request body in one wire, with every change made to fit it, and the headers the body
    needs sent with it (an ``anthropic-beta`` for a beta field)."""

    body: dict[str, Any]
    notes: tuple[Note, ...] = ()
    headers: Mapping[str, str] | None = None
