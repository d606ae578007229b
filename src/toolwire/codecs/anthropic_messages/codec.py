"""The ``anthropic-messages`` codec: canonical values <-> Anthropic's ``POST /v1/messages``.

Owns this wire's front: the names `toolwire.codecs.base.WireModule` lists (and two constants
of this wire), re-exported from the modules that do the work: ``request`` (request bodies both
ways, what the API refuses), ``reply`` (whole replies, stop reasons, usage, error bodies),
``stream`` (the SSE stream both ways), ``parts`` (content blocks <-> parts, ids and tool names)
and ``schema`` (tool definitions and their schemas). `toolwire.codecs.base.Codec` derives the
rest. Pure functions over JSON: must not import HTTP, transports, clients or any vendor SDK.

Wire rules worth knowing:

- ``max_tokens`` is required: `DEFAULT_MAX_TOKENS` is sent when the request has none, with a note.
- Tool arguments travel as objects; arguments that are not an object are sent as ``{}``.
- Thinking and redacted-thinking blocks are kept whole in
  ``ReasoningPart.provider_data["anthropic-messages"]`` and sent back verbatim and in order;
  reasoning without this wire's signature is dropped with a note.
- Server-tool blocks and unknown blocks become `OpaquePart` and go back verbatim.
- Tool results go first in the next user message, with ``is_error``.
- Calls made by the code execution tool's code (``caller``) are answered by a user message of
  tool results alone, and the next request names the reply's ``container``.
- Tool names must match ``^[a-zA-Z0-9_-]{1,128}$`` and ids ``^[a-zA-Z0-9_-]+$``; others are
  mapped (the same way everywhere in a request), with a note.
- A stream's error event and an error body both carry an ``error.type``; `ERROR_STATUS` is the
  HTTP status each type comes with.
"""

from __future__ import annotations

import functools
from typing import Any

from toolwire.codecs.anthropic_messages.inbound import check_body as wire_check_body
from toolwire.codecs.anthropic_messages.inbound import decode_request
from toolwire.codecs.anthropic_messages.parts import WIRE, compaction_part
from toolwire.codecs.anthropic_messages.reply import (
    ERROR_STATUS,
    STOP_REASONS,
    decode_error,
    decode_response,
    encode_error,
    encode_response,
)
from toolwire.codecs.anthropic_messages.request import DEFAULT_MAX_TOKENS, encode, encode_usual
from toolwire.codecs.anthropic_messages.stream import StreamDecoder, encode_stream
from toolwire.codecs.model_checks import anthropic_model_problem
from toolwire.codecs.per_model import ANTHROPIC_FIXES, fitted


def check_body(body: dict[str, Any]) -> str | None:
    """The first rule the raw ``body`` breaks (the wire's, then its model's), or None."""
    return wire_check_body(body) or anthropic_model_problem(body)


FIT = functools.partial(fitted, wire=WIRE, fixes=ANTHROPIC_FIXES)
"""The per-model rules applied after encoding (`toolwire.codecs.per_model`)."""

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "ERROR_STATUS",
    "FIT",
    "STOP_REASONS",
    "WIRE",
    "StreamDecoder",
    "check_body",
    "compaction_part",
    "decode_error",
    "decode_request",
    "decode_response",
    "encode",
    "encode_error",
    "encode_response",
    "encode_stream",
    "encode_usual",
]
