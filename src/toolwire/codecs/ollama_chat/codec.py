"""The Ollama native chat wire (``ollama-chat``, ``POST /api/chat``): the codec's front.

Owns this wire's front: the names `toolwire.codecs.base.WireModule` lists, re-exported from the
modules that do the work: ``request`` (request bodies both ways, what the server refuses),
``reply`` (whole replies, stop reasons, usage, error bodies), ``stream`` (the NDJSON stream both
ways), ``parts`` (messages <-> parts, tool names and ids, shape checks) and ``schema`` (tool
definitions and the schema subset the server keeps). `toolwire.codecs.base.Codec` derives the
rest. Pure functions over JSON: must not import transport, HTTP clients, vendor SDKs, or any
toolwire layer above the transcript.

How the wire's habits are handled:

- ``stream`` defaults to true on the server, so every body states it.
- Arguments are JSON objects in both directions. A call whose arguments are not an object (text
  that did not parse, or a list) is sent with ``{}`` and a note, since the server refuses text.
- Call ids may be missing (older servers). Missing ids are made with `call_id_for` from the
  model, the reply's ``created_at`` and the calls so far, so a reply and its stream get the same
  ids. Ids in that generated form are never sent in a request (neither on the call nor as
  ``tool_call_id``): the server never saw them, and results are matched by ``tool_name`` and order.
- ``done_reason`` says ``"stop"`` even when the model called tools; tool turns are recognised by
  ``message.tool_calls``.
- ``thinking`` becomes a `ReasoningPart` whose ``provider_data[WIRE]`` is the string as sent, and
  goes back as ``thinking`` on the assistant message.
- There is no tool choice. ``"none"`` is honoured by leaving the tools out of the body (the model
  cannot call what it is not shown); ``"required"``, a named tool and ``parallel=False`` cannot be
  expressed and are dropped with a note.
- The server silently discards most JSON Schema keywords. Schemas are rewritten on a copy to the
  kept subset (top level: ``type, $defs, items, required, properties``; each property: ``anyOf,
  type, items, description, enum, properties, required``), with one note per tool naming every
  removed keyword. Local ``$ref``s are inlined first, ``oneOf`` becomes ``anyOf`` and ``const`` a
  one-value ``enum``, so their meaning survives. ``items`` and ``$defs`` are kept as written.
- Settings for other wires in ``provider_options`` are not sent; each key gets a note.
- Values given in the request (schemas that need no change, arguments, options) go into the
  body as they are, not copied: bodies are serialised, never changed.
- Tool results have no error flag: an error is sent as text starting with ``"Error: "``, an empty
  result as ``"(no output)"``; decoding reverses both.
"""

from __future__ import annotations

from toolwire.codecs.ollama_chat.inbound import check_body, decode_request
from toolwire.codecs.ollama_chat.parts import WIRE
from toolwire.codecs.ollama_chat.reply import (
    STOP_REASONS,
    decode_error,
    decode_response,
    encode_error,
    encode_response,
)
from toolwire.codecs.ollama_chat.request import encode, encode_usual
from toolwire.codecs.ollama_chat.stream import StreamDecoder, encode_stream

__all__ = [
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
    "encode_usual",
]
