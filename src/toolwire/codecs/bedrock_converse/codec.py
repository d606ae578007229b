"""The ``bedrock-converse`` codec: canonical values <-> Amazon Bedrock's Converse API.

Owns this wire's front: the names `toolwire.codecs.base.WireModule` lists, re-exported from the
modules that do the work: ``request`` (request bodies both ways, what the API refuses),
``reply`` (whole replies, stop reasons, usage, error bodies), ``stream`` (ConverseStream's
event-stream both ways), ``parts`` (content blocks <-> parts, ids and tool names) and
``schema`` (tool definitions). `toolwire.codecs.base.Codec` derives the rest. Pure functions
over JSON and bytes: must not import HTTP, transports, clients or any vendor SDK.

Wire rules worth knowing:

- The model and streaming are in the URL: ``/model/{modelId}/converse`` or
  ``/converse-stream``; the body carries neither.
- Content blocks are unions with exactly one key (``text``, ``toolUse``, ``toolResult``,
  ``reasoningContent``, ``cachePoint``...); tool arguments travel as objects.
- Tool results go in the next user message with ``status`` ``success`` or ``error``.
- ``reasoningContent`` (readable text with its signature, or redacted bytes) is kept whole in
  ``ReasoningPart.provider_data["bedrock-converse"]`` and sent back exactly as it came.
- Tool names must match ``^[a-zA-Z0-9_-]{1,64}$`` and ids ``^[a-zA-Z0-9_.:-]{1,64}$``; others are
  mapped, with a note. There is no ``none`` tool choice and no parallel setting (noted).
- Streams are AWS event-stream messages; errors carry their type in ``x-amzn-ErrorType`` (or
  ``__type``), and inside a stream in ``:exception-type``.
"""

from __future__ import annotations

from toolwire.codecs.bedrock_converse.inbound import check_body, decode_request
from toolwire.codecs.bedrock_converse.parts import WIRE
from toolwire.codecs.bedrock_converse.reply import (
    ERROR_STATUS,
    STOP_REASONS,
    decode_error,
    decode_response,
    encode_error,
    encode_response,
)
from toolwire.codecs.bedrock_converse.request import encode
from toolwire.codecs.bedrock_converse.stream import StreamDecoder, encode_stream

__all__ = [
    "ERROR_STATUS",
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
