"""The Gemini Interactions wire (``gemini-interactions``): canonical values <-> REST JSON.

Owns: this wire's front, the surface `toolwire.codecs.base.WireModule` lists (``WIRE``,
``STOP_REASONS``, `encode`, `decode_request`, `check_body`, `decode_response`,
`encode_response`, `encode_stream`, `StreamDecoder`, `decode_error`, `encode_error`), all
defined in the modules beside it. Pure functions over snake_case JSON: must not import
transport, client or any vendor SDK.

How canonical values land on this wire (``POST /v1beta/interactions``, the model in the body):

- ``Request.system`` -> ``system_instruction``; messages -> ``input``, a list of typed steps:
  a user message is a ``user_input`` step; an assistant message is its steps in order
  (``thought``, ``model_output`` for text and media, ``function_call`` with its id, and the
  server's own tool steps, kept whole); a tool message is one ``function_result`` step per
  result (``result`` a string or content blocks, ``is_error`` when it failed).
- A ``thought`` step (its ``signature`` and ``summary``) is a `ReasoningPart` that keeps the
  whole step and is sent back unchanged; reasoning from another wire is left out, with a note.
- Tools are ``{"type": "function", "name", "description", "parameters"}`` with the JSON
  Schema unchanged; ``max_tokens``, ``temperature`` and the tool choice go in
  ``generation_config``.
- ``store`` is always sent: false unless ``provider_options["gemini-interactions"]["store"]``
  is true. With it on, the reply's message remembers its interaction id and the next request
  continues from it (``previous_interaction_id``) with only the newer messages as input; the
  setting ``"_continue": false`` sends the whole transcript instead.
- A reply is an ``Interaction``: its ``status`` is the stop reason (a reply holding calls asks
  for tools), its ``usage`` the counts (output includes thought tokens).

A server keeps a conversation; the emulator does too, through the record's ``memory`` (the
folder's `continued`: a request's body with the stored interaction it names put before its
input; `keep`: an interaction stored under its id unless ``store`` is false).

Every other key of ``provider_options["gemini-interactions"]`` (``response_format``,
``generation_config`` entries such as ``thinking_level``, built-in ``tools``...) is merged into
the body, and `decode_request` puts every part of a body it does not read there.
"""

from __future__ import annotations

from toolwire.codecs.gemini_interactions.inbound import check_body, decode_request
from toolwire.codecs.gemini_interactions.parts import WIRE
from toolwire.codecs.gemini_interactions.reply import (
    STOP_REASONS,
    decode_error,
    decode_response,
    encode_error,
    encode_response,
)
from toolwire.codecs.gemini_interactions.request import encode
from toolwire.codecs.gemini_interactions.stream import StreamDecoder, encode_stream

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
]
