"""The Gemini ``generateContent`` wire (``gemini-generate``): canonical values <-> REST JSON.

Owns: this wire's front, the surface `toolwire.codecs.base.WireModule` lists (``WIRE``,
``STOP_REASONS``, `encode`, `decode_request`, `check_body`, `decode_response`,
`encode_response`, `encode_stream`, `StreamDecoder`, `decode_error`, `encode_error`) and the
wire's public ``FINISH_REASONS`` and ``BLOCK_REASONS``, all defined in the modules beside it.
Pure functions over camelCase JSON: must not import transport, client or any vendor SDK.

How canonical values land on this wire:

- ``Request.system`` -> ``systemInstruction``; messages -> ``contents`` with roles ``user`` and
  ``model``. A mid-conversation system message is sent as a user turn (with a note).
- A tool message -> ONE user content holding one ``functionResponse`` per result, in order,
  ``response: {"output": ...}`` or ``{"error": ...}``; a user message right after it joins that
  same content (`decode_request` splits them again). ``role: "function"`` is read as user.
- Calls carry ``args`` as an object. Gemini often sends no call id: `call_id_for` makes one
  up, and ``provider_data`` remembers it (``"_generated_id": true``) so it is never sent back.
  A call that came with an id (Gemini 3 always gives one) is sent with it, and so is every
  response to it, even one read without an id (Gemini 3 refuses a response whose id is not
  its call's: the per-model rules, `toolwire.codecs.model_rules`).
- ``thoughtSignature`` stays on the exact part it came on and is echoed verbatim; none is
  ever invented (but see ``_fill_signature``). ``thought: true`` parts are `ReasoningPart`.
- Model id and streaming live in the URL (``models/{model}:generateContent`` or
  ``:streamGenerateContent?alt=sse``), not in the body: `decode_request` takes them as keywords
  (the URL's model wins over a ``model`` key some clients put in the body).
- A stream has no terminator: one that ends with no ``finishReason`` ended early.

Codec settings ride in ``Request.provider_options["gemini-generate"]`` under keys that start
with ``_``. The encoder reads them and never puts them in the body:

- ``"_schema_field"``: ``"parametersJsonSchema"`` (default) sends each tool's JSON Schema
  unchanged; ``"parameters"`` sends Gemini's OpenAPI subset instead, rewritten on a copy
  (upper-case types, type lists -> ``nullable`` / ``anyOf``, ``const`` -> ``enum``, string enum
  values, inclusive bounds, unsupported keywords such as ``$schema`` and
  ``additionalProperties`` dropped, local ``$ref`` inlined), one ``schema_rewritten`` note per
  tool listing each change.
- ``"_fill_signature"``: a value (``"skip_thought_signature_validator"`` is the one Gemini
  documents) put on the first call of any model turn whose calls carry no signature, for
  history Gemini did not produce (calls from another provider or made up by hand).
- ``"_declarations"``: ``{wire tool name: {extra FunctionDeclaration fields}}`` (``behavior``,
  ``response``, ...), filled by `decode_request` so that nothing is lost.
- ``"_result_parts"``: true sends a tool result's media inside ``functionResponse.parts``,
  false after the function responses with a text naming the call; unset, the model decides
  (``toolwire.codecs.gemini_generate.RESULT_PARTS_MODELS``: the Gemini 3 families take them,
  older ones answer 400). `decode_request` sets it only when a body did otherwise than the
  default of the model its URL named.

Every other key is merged into the body: objects key by key (``generationConfig``,
``toolConfig``), ``tools`` entries appended (``googleSearch``, ``codeExecution``, ...), anything
else set as given (values are shared, not copied: bodies are serialised, never changed).
`decode_request` puts every part of a body it does not read there. Options for other wires
are not sent; each of their keys gets a ``field_dropped`` note. A body of the wrong shape
raises `WireFormatError` naming the field.
"""

from __future__ import annotations

from toolwire.codecs.gemini_generate.inbound import check_body, decode_request
from toolwire.codecs.gemini_generate.parts import WIRE
from toolwire.codecs.gemini_generate.reply import (
    BLOCK_REASONS,
    FINISH_REASONS,
    STOP_REASONS,
    decode_error,
    decode_response,
    encode_error,
    encode_response,
)
from toolwire.codecs.gemini_generate.request import encode, encode_usual
from toolwire.codecs.gemini_generate.stream import StreamDecoder, encode_stream

__all__ = [
    "BLOCK_REASONS",
    "FINISH_REASONS",
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
