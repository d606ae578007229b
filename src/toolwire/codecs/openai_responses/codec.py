"""The OpenAI Responses API wire (``POST /v1/responses``). Rules worth knowing:

- The system prompt is ``instructions``; the conversation is a list of ``input`` items, and a
  plain string ``input`` reads as one user message.
- Tools are flat function tools with ``strict`` always sent; strict schemas get the strict-mode
  rewrite on a copy, with a note per change. ``tool_choice`` without tools is dropped, noted.
- The canonical call id is the item's ``call_id``; the item id (``fc_...``), ``status``,
  ``phase`` and reasoning items with ``encrypted_content`` ride in ``provider_data`` and go
  back unchanged, in their original order.
- Tool results are ``function_call_output`` items: ``Error: `` in front of an error result,
  ``(no output)`` for an empty one.
- The wire has no finish reason: the stop comes from ``status``, ``incomplete_details`` and
  the items present (a reply with calls is a tool turn).
- Options for other wires are not sent (a ``field_dropped`` note per key); values given in the
  request go into the body as they are, not copied. A body of the wrong shape raises
  `WireFormatError` naming the field.

Owns nothing itself: it names the wire's surface, defined in ``request`` (`encode`,
`decode_request`, `check_body`), ``reply`` (`STOP_REASONS`, `decode_response`, `encode_response`,
`decode_error`; `encode_error` is OpenAI's, from `toolwire.codecs.openai_shared`) and ``stream``
(`StreamDecoder`, `encode_stream`). Pure: must not import transport, client or any vendor SDK.
"""

from __future__ import annotations

import functools

from toolwire.codecs.openai_responses.inbound import check_body, decode_request
from toolwire.codecs.openai_responses.parts import WIRE, compaction_part
from toolwire.codecs.openai_responses.reply import (
    STOP_REASONS,
    decode_error,
    decode_response,
    encode_response,
)
from toolwire.codecs.openai_responses.request import encode
from toolwire.codecs.openai_responses.stream import StreamDecoder, encode_stream
from toolwire.codecs.openai_shared import encode_error
from toolwire.codecs.per_model import NO_FIXES, fitted

FIT = functools.partial(fitted, wire=WIRE, fixes=NO_FIXES)
"""The per-model rules' setting (``_rules``) taken out of the body (`toolwire.codecs.per_model`)."""

__all__ = [
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
]
