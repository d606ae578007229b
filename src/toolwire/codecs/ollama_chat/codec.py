"""The Ollama native chat wire (``POST /api/chat``): canonical values to and from its JSON.

Owns: encoding a `Request` as a chat body (tool names mapped, schemas cut down to the subset the
server keeps, every change reported as a `Note`), decoding replies, NDJSON streams and error
bodies, and rendering a `Reply` as a reply body or a stream (what the provider emulator
serves). Reading replies and streams lives in `_ollama_read`, reading request bodies back in
`_ollama_request`, the schema subset in `_ollama_schema`. Pure functions over JSON: must not
import transport, HTTP clients, vendor SDKs, or any toolwire layer above the transcript.

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

import itertools
import re
from collections.abc import Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Any

from toolwire.codecs.base import (
    Encoded,
    NameMap,
    Note,
    drive_stream,
    dumps,
    own_options,
    provider_error,
    retry_after_from,
)
from toolwire.codecs.ollama_chat.parts import (
    EMPTY_RESULT,
    ERROR_PREFIX,
    REPLY_KEYS,
    STOP_REASONS,
    WIRE,
    Seeder,
    build_reply,
    decode_assistant,
    mapping,
    message_and_type,
    name_map,
    unknown_keys,
)
from toolwire.codecs.ollama_chat.parts import (
    StreamDecoder as _LineDecoder,
)
from toolwire.codecs.ollama_chat.request import check_body, decode_request
from toolwire.codecs.ollama_chat.schema import rewrite_schema
from toolwire.errors import ProviderError, WireFormatError
from toolwire.events import StreamEvent
from toolwire.transcript import (
    JSON,
    Message,
    OpaquePart,
    Part,
    ReasoningPart,
    Reply,
    Request,
    TextPart,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
    ToolSpec,
)

__all__ = [
    "STOP_REASONS",
    "WIRE",
    "check_body",
    "decode_error",
    "decode_request",
    "decode_response",
    "decode_stream",
    "encode",
    "encode_error",
    "encode_request",
    "encode_response",
    "encode_stream",
    "stream_decoder",
]

_RAW_STOP: dict[str, str] = {"max_tokens": "length"}  # every other stop is sent as "stop"
_GENERATED_ID = re.compile(r"\Acall_[0-9a-f]{24}\Z")
_NOTHING: Mapping[str, Any] = MappingProxyType({})


def _names(request: Request | None) -> NameMap:
    return name_map(request.tools) if request is not None else NameMap()


def _own(data: Mapping[str, JSON] | None) -> Mapping[str, Any]:
    """This wire's entry of a provider_data mapping when it is an object (not copied)."""
    if not data:
        return _NOTHING
    value = data.get(WIRE)
    if isinstance(value, dict):
        return value
    return value if isinstance(value, Mapping) else _NOTHING


def _is_generated(call_id: str) -> bool:
    return len(call_id) == 29 and bool(_GENERATED_ID.match(call_id))


# --------------------------------------------------------------------------- encoding


def _encode_tool(tool: ToolSpec, names: NameMap, notes: list[Note]) -> dict[str, Any]:
    parameters, changes = rewrite_schema(tool.input_schema)
    if changes:
        notes.append(Note(kind="schema_rewritten", subject=tool.name,
                          detail="the server ignores other keywords: " + "; ".join(changes)))
    if tool.strict:
        notes.append(Note(kind="field_dropped", subject=tool.name,
                          detail="strict mode does not exist on this wire; calls are not forced "
                                 "to follow the schema"))
    return {"type": "function", "function": {
        "name": names.wire(tool.name), "description": tool.description, "parameters": parameters}}


def _choice_allows_tools(choice: ToolChoice, has_tools: bool, notes: list[Note]) -> bool:
    """Note what the wire cannot express; False when the tools must be left out."""
    if choice.parallel is False:
        notes.append(Note(kind="choice_changed", subject="tool_choice",
                          detail="parallel=False cannot be expressed; the model may make "
                                 "several calls"))
    if choice.mode == "none":
        if has_tools:
            notes.append(Note(kind="choice_changed", subject="tool_choice",
                              detail="'none' honoured by leaving the tools out of the request"))
        return False
    if choice.mode == "required":
        notes.append(Note(kind="choice_changed", subject="tool_choice",
                          detail="'required' cannot be expressed (no tool_choice on this wire); "
                                 "the model may answer without a call"))
    elif choice.mode == "tool":
        notes.append(Note(kind="choice_changed", subject="tool_choice",
                          detail=f"forcing tool {choice.name!r} cannot be expressed (no "
                                 "tool_choice on this wire); the model chooses freely"))
    return True


def _encode_call(call: ToolCallPart, index: int, names: NameMap, notes: list[Note] | None,
                 *, keep_generated_id: bool) -> dict[str, Any]:
    args: Any = call.arguments
    if call.parse_error is not None or not isinstance(args, dict):
        if call.parse_error is None and isinstance(args, Mapping):
            args = dict(args)
        else:
            if notes is not None and (call.parse_error is not None or args is not None):
                why = (f"did not parse as JSON ({call.parse_error})"
                       if call.parse_error is not None else "are not a JSON object")
                notes.append(Note(kind="arguments_replaced", subject=call.id,
                                  detail=f"arguments {why}; sent {{}} because this wire only "
                                         "carries argument objects"))
            args = {}
    function = {"index": index, "name": names.wire(call.name), "arguments": args}
    if keep_generated_id or not _is_generated(call.id):
        return {"id": call.id, "function": function}
    return {"function": function}


def _thinking_of(part: ReasoningPart) -> str | None:
    """The thinking text to send for a reasoning part, or None when it belongs to another wire."""
    data = part.provider_data
    if not data:
        return part.text
    if WIRE in data:
        own = data[WIRE]
        return own if isinstance(own, str) else part.text
    return None


def _where(m_index: int, p_index: int) -> str:
    return f"messages[{m_index}].parts[{p_index}]"


def _encode_assistant(msg: Message, m_index: int | None, names: NameMap,
                      notes: list[Note] | None, *, keep_generated_id: bool,
                      call_names: dict[str, str] | None = None) -> dict[str, Any]:
    """An assistant message; ``m_index`` None (with ``notes`` None) renders a reply."""
    texts: list[str] = []
    thinking: list[str] = []
    calls: list[dict[str, Any]] = []
    for p_index, part in enumerate(msg.parts):
        if isinstance(part, TextPart):
            texts.append(part.text)
        elif isinstance(part, ToolCallPart):
            if call_names is not None:
                call_names[part.id] = part.name
            calls.append(_encode_call(part, len(calls), names, notes,
                                      keep_generated_id=keep_generated_id))
        elif isinstance(part, ReasoningPart):
            text = _thinking_of(part)
            if text is not None:
                thinking.append(text)
            elif notes is not None and m_index is not None:
                _drop(part, _where(m_index, p_index), notes)
        elif notes is not None and m_index is not None:
            _drop(part, _where(m_index, p_index), notes)
    out: dict[str, Any] = {"role": "assistant", "content": "".join(texts)}
    if thinking:
        out["thinking"] = "".join(thinking)
    if calls:
        out["tool_calls"] = calls
    return _with_extras(out, _own(msg.provider_data))


def _drop(part: Part, subject: str, notes: list[Note]) -> None:
    if isinstance(part, OpaquePart):
        notes.append(Note(kind="opaque_dropped", subject=subject,
                          detail=f"{part.kind} block from {part.wire} has no form on this wire"))
    elif isinstance(part, ReasoningPart):
        wires = ", ".join(sorted(part.provider_data or {}))
        notes.append(Note(kind="reasoning_dropped", subject=subject,
                          detail=f"reasoning from {wires} cannot be sent to this wire" if wires
                          else "reasoning outside an assistant message cannot be sent"))
    else:
        notes.append(Note(kind="part_dropped", subject=subject,
                          detail=f"{type(part).__name__} cannot appear in this message here"))


def _with_extras(out: dict[str, Any], extras: Mapping[str, Any]) -> dict[str, Any]:
    if extras:
        for key, value in extras.items():
            out.setdefault(key, value)
    return out


def _result_text(part: ToolResultPart) -> str:
    content = part.content or EMPTY_RESULT
    if part.is_error and not content.startswith("Error:"):
        content = ERROR_PREFIX + content
    return content


def _encode_result(part: ToolResultPart, m_index: int, p_index: int, names: NameMap,
                   call_names: Mapping[str, str], notes: list[Note]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "tool"}
    name = part.name if part.name is not None else call_names.get(part.call_id)
    if name is not None:
        out["tool_name"] = names.wire(name)
    else:
        notes.append(Note(kind="field_dropped", subject=_where(m_index, p_index),
                          detail=f"result for call {part.call_id!r} has no tool name; the "
                                 "server matches it by position only"))
    if not _is_generated(part.call_id):
        out["tool_call_id"] = part.call_id
    out["content"] = _result_text(part)
    return _with_extras(out, _own(part.provider_data))


def _encode_message(msg: Message, m_index: int, names: NameMap, call_names: dict[str, str],
                    notes: list[Note]) -> list[dict[str, Any]]:
    if msg.role == "assistant":
        return [_encode_assistant(msg, m_index, names, notes, keep_generated_id=False,
                                  call_names=call_names)]
    out: list[dict[str, Any]] = []
    texts: list[str] = []
    for p_index, part in enumerate(msg.parts):
        if isinstance(part, ToolResultPart):
            out.append(_encode_result(part, m_index, p_index, names, call_names, notes))
        elif isinstance(part, TextPart) and msg.role != "tool":
            texts.append(part.text)
        elif isinstance(part, TextPart):
            notes.append(Note(kind="part_dropped", subject=_where(m_index, p_index),
                              detail="text outside a tool result cannot be sent in a tool message"))
        else:
            _drop(part, _where(m_index, p_index), notes)
    if msg.role != "tool" and (texts or not out):
        out.append(_with_extras({"role": msg.role, "content": "".join(texts)},
                                _own(msg.provider_data)))
    return out


def encode(request: Request) -> Encoded:
    """The ``/api/chat`` body for a request, with a note for every change made to fit the wire."""
    names = _names(request)
    notes: list[Note] = names.notes()
    messages: list[dict[str, Any]] = []
    if request.system is not None:
        messages.append({"role": "system", "content": request.system})
    call_names: dict[str, str] = {}
    for index, msg in enumerate(request.messages):
        messages.extend(_encode_message(msg, index, names, call_names, notes))
    send_tools = True
    if request.tool_choice is not None:
        send_tools = _choice_allows_tools(request.tool_choice, bool(request.tools), notes)
    body: dict[str, Any] = {"model": request.model, "messages": messages}
    if request.tools and send_tools:
        body["tools"] = [_encode_tool(t, names, notes) for t in request.tools]
    body["stream"] = request.stream
    own = own_options(request.provider_options, WIRE, notes)
    base = own.pop("options", None)
    options: dict[str, Any] = dict(base) if isinstance(base, Mapping) else {}
    if request.temperature is not None:
        options["temperature"] = request.temperature
    if request.max_tokens is not None:
        options["num_predict"] = request.max_tokens
    if options:
        body["options"] = options
    elif base is not None:
        body["options"] = base
    return Encoded(body=_with_extras(body, own), notes=tuple(notes))


def encode_request(request: Request) -> dict[str, Any]:
    return encode(request).body


# --------------------------------------------------------------------------- decoding


def decode_response(body: Mapping[str, Any], *, request: Request | None = None) -> Reply:
    """A whole (non-streamed) reply; with ``request``, tool names are mapped back to the user's."""
    body = mapping(body, "reply body")
    if "message" not in body:
        if "error" in body:
            raise decode_error(200, body)
        raise WireFormatError("an /api/chat reply has no 'message'")
    seeder = Seeder(body.get("model"), body.get("created_at"))
    message = decode_assistant(body["message"], seeder, _names(request))
    return build_reply(message, body, body.get("model"), unknown_keys(body, REPLY_KEYS))


# --------------------------------------------------------------------------- replies and streams


def encode_response(reply: Reply, *, request: Request | None = None) -> dict[str, Any]:
    """A reply as the server's non-streamed body."""
    extras = dict(_own(reply.provider_data))
    body: dict[str, Any] = {}
    if reply.model is not None:
        body["model"] = reply.model
    if "created_at" in extras:
        body["created_at"] = extras.pop("created_at")
    body["message"] = _encode_assistant(reply.message, None, _names(request), None,
                                        keep_generated_id=True)
    body.update(_final_fields(reply))
    return _with_extras(body, extras)


def _final_fields(reply: Reply) -> dict[str, Any]:
    out: dict[str, Any] = {"done": True,
                           "done_reason": reply.raw_stop or _RAW_STOP.get(reply.stop, "stop")}
    if reply.usage.input_tokens:
        out["prompt_eval_count"] = reply.usage.input_tokens
    if reply.usage.output_tokens:
        out["eval_count"] = reply.usage.output_tokens
    return out


def _pieces(text: str) -> list[str]:
    n = len(text)
    cuts = sorted({0, n // 3, (2 * n) // 3, n})
    return [text[a:b] for a, b in itertools.pairwise(cuts) if text[a:b]]


def encode_stream(reply: Reply, *, request: Request | None = None) -> list[bytes]:
    """A reply as the server's NDJSON stream: text in pieces, each call whole on its own line."""
    whole = encode_response(reply, request=request)
    message = whole.pop("message")
    head: dict[str, Any] = {k: whole.pop(k) for k in ("model", "created_at") if k in whole}
    lines: list[dict[str, Any]] = []

    def line(fields: dict[str, Any]) -> None:
        lines.append({**head, "message": {"role": "assistant", **fields}, "done": False})

    for piece in _pieces(message.pop("thinking", "")):
        line({"content": "", "thinking": piece})
    for piece in _pieces(message.pop("content", "")):
        line({"content": piece})
    for call in message.pop("tool_calls", ()):
        line({"content": "", "tool_calls": [call]})
    message.pop("role", None)
    final = {**head, "message": {"role": "assistant", "content": "", **message}, **whole}
    return [(dumps(obj) + "\n").encode() for obj in (*lines, final)]


class StreamDecoder(_LineDecoder):
    """The NDJSON stream decoder, with tool names mapped back for ``request``."""

    def __init__(self, *, request: Request | None = None) -> None:
        super().__init__(_names(request))


def stream_decoder(*, request: Request | None = None) -> StreamDecoder:
    return StreamDecoder(request=request)


def decode_stream(chunks: Iterable[bytes], *, request: Request | None = None
                  ) -> Iterator[StreamEvent]:
    """Events as the NDJSON stream arrives, ending with `StreamEnd`."""
    return drive_stream(stream_decoder(request=request), chunks)


# --------------------------------------------------------------------------- errors


def decode_error(status: int, body: Any, headers: Mapping[str, str] | None = None
                 ) -> ProviderError:
    """The typed error for an error reply (``{"error": "<message>"}``)."""
    message, kind, parsed = message_and_type(body, status)
    return provider_error(status, message, wire=WIRE, error_type=kind, body=parsed,
                          retry_after=retry_after_from(headers))


def encode_error(status: int, message: str) -> dict[str, Any]:
    """An error body as this wire's server sends it (the same shape for every status)."""
    return {"error": message}
