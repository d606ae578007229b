"""The OpenAI Chat Completions wire (``POST /v1/chat/completions``) and the servers copying it.

One codec serves OpenAI, OpenRouter, vLLM, llama.cpp, LM Studio, Ollama's ``/v1``, DeepSeek,
Mistral, Groq and other compatible servers: it encodes strictly what the API documents and
decodes leniently what those servers really send. Rules worth knowing:

- The system prompt is the first ``system`` message; ``developer`` and other roles keep their
  name on the way back. Tool results go out as one ``tool`` message each, ``Error: `` in front
  of an error result and ``(no output)`` for an empty one. Arguments always go out as text.
- OpenRouter's ``reasoning_details`` (and the ``reasoning`` / ``reasoning_content`` strings
  other servers use) are kept exactly on a `ReasoningPart` and sent back only to this wire.
- Tool names the API refuses are mapped (the same way on every turn) and mapped back.
- Strict tools get the strict-mode schema rewrite, on a copy, with a note per change.
- Custom tools (``"type": "custom"``, free text or a grammar) and their calls are freeform
  tools and calls (`toolwire.codecs.openai_custom`), as on the Responses API.
- ``tool_choice`` and ``parallel_tool_calls`` are left out when there are no tools.
- The stop comes from the content: a reply with calls is a tool turn whatever its
  ``finish_reason`` says; broken arguments count as cut off only under a token-limit stop.
- A 200 body or a stream chunk holding only ``error`` raises that error, typed.

Owns nothing itself: it names the wire's surface, defined in ``request`` (`encode`,
`decode_request`, `check_body`), ``reply`` (`STOP_REASONS`, `decode_response`, `encode_response`,
`decode_error`; `encode_error` is OpenAI's, from `toolwire.codecs.openai_shared`) and ``stream``
(`StreamDecoder`, `encode_stream`). Pure; must not import transport or client code.
"""

from __future__ import annotations

import functools

from toolwire.codecs.openai_chat.inbound import check_body, decode_request
from toolwire.codecs.openai_chat.parts import WIRE
from toolwire.codecs.openai_chat.reply import (
    STOP_REASONS,
    decode_error,
    decode_response,
    encode_response,
)
from toolwire.codecs.openai_chat.request import encode
from toolwire.codecs.openai_chat.stream import StreamDecoder, encode_stream
from toolwire.codecs.openai_shared import encode_error
from toolwire.codecs.per_model import CHAT_FIXES, fitted

FIT = functools.partial(fitted, wire=WIRE, fixes=CHAT_FIXES)
"""The per-model rules applied after encoding (`toolwire.codecs.per_model`)."""

__all__ = [
    "FIT",
    "STOP_REASONS",
    "WIRE",
    "StreamDecoder",
    "check_body",
    "decode_error",
    "decode_request",
    "decode_response",
    "encode",
    "encode_error",
    "encode_response",
    "encode_stream",
]
