"""The reasoning setting (`Request.reasoning`: ``low``, ``medium``, ``high`` or ``off``), put
into a request body its wire's codec encoded: what every wire's way of asking shares.

Owns `REASONING_LEVELS`, `BUDGETS`, `PutReasoning` (how one wire asks: a function its folder
defines and its registry record holds, `toolwire.codecs.record.Wire.reasoning`), `put_reasoning`
(which `toolwire.codecs.base.Codec` calls after every wire's ``encode``) and the two ways wires
share: `thinking` (Anthropic's ``thinking`` with a token budget, ``max_tokens`` raised above
the budget when it is not, or ``thinking`` disabled; Claude on Bedrock Converse takes it too)
and `effort` (the OpenAI wires' effort, ``off`` being ``none``). Also `Carrier`: where a wire's
clients keep a provider's opaque reasoning (a signature, encrypted content) and send it back
untouched, which the proxy carries another wire's reasoning in (`toolwire.proxy.carry`), with
`as_bytes_field` and `from_bytes_field` for a field that holds bytes in base64. Reasoning
models refuse a sampling temperature, so while reasoning is on a temperature is left out, with
a ``field_dropped`` note (`toolwire.codecs.base`); ``off`` keeps it. A wire without a reasoning
setting leaves it out, with a note. Pure functions over JSON; imports nothing of the codecs.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Triple = tuple[str, str, str]
"""A note as (kind, subject, detail), made a `toolwire.codecs.base.Note` by the codec."""

PutReasoning = Callable[[dict[str, Any], str, list[Triple]], None]
"""How one wire asks for reasoning: writes level into the body, adds its notes."""

REASONING_LEVELS = ("low", "medium", "high", "off")
BUDGETS = {"low": 1024, "medium": 8192, "high": 24576}
"""Thinking tokens per level where a wire takes a budget (Anthropic's least is 1,024)."""
ANSWER_ROOM = 4096
"""Tokens left for the answer above a thinking budget when ``max_tokens`` is raised."""


def thinking(body: dict[str, Any], level: str, notes: list[Triple], *, wire: str,
             holder: dict[str, Any], tokens: Callable[[], int | None],
             set_tokens: Callable[[int], None]) -> None:
    """Anthropic's ``thinking`` in ``holder``, with room for the answer above the budget."""
    if level == "off":
        holder["thinking"] = {"type": "disabled"}
        return
    budget = BUDGETS[level]
    holder["thinking"] = {"type": "enabled", "budget_tokens": budget}
    have = tokens()
    if have is None or have <= budget:
        set_tokens(budget + ANSWER_ROOM)
        notes.append(("max_tokens_raised", "max_tokens", (
            f"{wire}: thinking with a budget of {budget} tokens needs max_tokens above it; "
            f"{have if have is not None else 'none'} became {budget + ANSWER_ROOM}")))


def effort(level: str) -> str:
    """The OpenAI wires' reasoning effort for ``level``."""
    return "none" if level == "off" else level


def put_reasoning(body: dict[str, Any], put: PutReasoning, level: str) -> list[Triple]:
    """Ask for reasoning ``level`` in ``body`` the way ``put`` (the wire's) does; the notes
    to give, as (kind, subject, detail)."""
    notes: list[Triple] = []
    put(body, level, notes)
    return notes


@dataclass(frozen=True, slots=True)
class Carrier:
    """Where a wire's clients keep a provider's opaque reasoning and send it back untouched.

    ``wrap(text, sealed)`` is the wire's own reasoning block (as its codec keeps it in a
    part's ``provider_data``) holding ``text`` readable and the opaque string ``sealed`` in
    its signature field; ``unwrap(block)`` is the opaque string such a block holds, None when
    it holds none."""

    wrap: Callable[[str, str], dict[str, Any]]
    unwrap: Callable[[Any], str | None]


def as_bytes_field(text: str) -> str:
    """``text`` in a field the API declares as bytes: standard base64 of its UTF-8."""
    return base64.b64encode(text.encode()).decode()


def from_bytes_field(value: Any) -> str | None:
    """The text `as_bytes_field` wrote, read back from base64 in either alphabet, padded or
    not (SDKs re-encode bytes fields as they like); None for anything else."""
    if not isinstance(value, str):
        return None
    urlsafe = "-" in value or "_" in value
    try:
        return base64.b64decode(value + "=" * (-len(value) % 4),
                                altchars=b"-_" if urlsafe else None).decode()
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None


__all__ = ["BUDGETS", "REASONING_LEVELS", "Carrier", "PutReasoning", "Triple", "as_bytes_field",
           "effort", "from_bytes_field", "put_reasoning", "thinking"]
