"""The Ollama native chat wire (``POST /api/chat``): canonical values to and from its JSON.

Owns: encoding a `Request` as a chat body (tool names mapped, schemas cut down to the subset the
server keeps, every change reported as a `Note`), reading such a body back, decoding replies,
NDJSON streams and error bodies, and rendering a `Reply` as a reply body or a stream (what the
provider emulator serves). Reading replies and streams lives in `_ollama_read`, the schema
subset in `_ollama_schema`. Pure functions over JSON: must not import transport, HTTP clients,
vendor SDKs, or any toolwire layer above the transcript.

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
- Tool results have no error flag: an error is sent as text starting with ``"Error: "``, an empty
  result as ``"(no output)"``; decoding reverses both.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, assert_never

from ..errors import ProviderError, WireFormatError
from ..transcript import (
    JSON,
    Message,
    OpaquePart,
    ReasoningPart,
    Reply,
    Request,
    TextPart,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
    ToolSpec,
)
from ._base import (
    Encoded,
    NameMap,
    Note,
    StreamEvent,
    call_id_for,
    drive_stream,
    dumps,
    provider_error,
    retry_after_from,
)
from ._ollama_read import (
    MESSAGE_KEYS,
    REPLY_KEYS,
    STOP_REASONS,
    WIRE,
    Seeder,
    StreamDecoder,
    build_reply,
    decode_assistant,
    mapping,
    message_and_type,
    text_of,
    unknown_keys,
    wrap_own,
)
from ._ollama_schema import rewrite_schema

__all__ = [
    "STOP_REASONS",
    "WIRE",
    "decode_error",
    "decode_request",
    "decode_response",
    "decode_stream",
    "encode",
    "encode_request",
    "encode_response",
    "encode_stream",
    "stream_decoder",
]

_RAW_STOP: dict[str, str] = {"max_tokens": "length"}  # every other stop is sent as "stop"
_GENERATED_ID = re.compile(r"\Acall_[0-9a-f]{24}\Z")
_BODY_KEYS = frozenset({"model", "messages", "tools", "stream", "options"})
_ERROR_PREFIX = "Error: "
_EMPTY_RESULT = "(no output)"


def _names(request: Request | None) -> NameMap:
    return NameMap.build([t.name for t in request.tools]) if request is not None else NameMap()


def _own(data: Mapping[str, JSON] | None) -> dict[str, Any]:
    """This wire's entry of a provider_data mapping, when it is an object."""
    value = (data or {}).get(WIRE)
    return dict(value) if isinstance(value, Mapping) else {}


def _is_generated(call_id: str) -> bool:
    return bool(_GENERATED_ID.match(call_id))


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
    if call.parse_error is not None or not isinstance(args, Mapping):
        if call.parse_error is not None or args is not None:
            why = (f"did not parse as JSON ({call.parse_error})" if call.parse_error is not None
                   else "are not a JSON object")
            if notes is not None:
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
    data = part.provider_data or {}
    if WIRE in data:
        own = data[WIRE]
        return own if isinstance(own, str) else part.text
    return part.text if not data else None


def _encode_assistant(msg: Message, subject: str, names: NameMap, notes: list[Note] | None,
                      *, keep_generated_id: bool) -> dict[str, Any]:
    texts: list[str] = []
    thinking: list[str] = []
    calls: list[dict[str, Any]] = []
    for part in msg.parts:
        if isinstance(part, TextPart):
            texts.append(part.text)
        elif isinstance(part, ReasoningPart):
            text = _thinking_of(part)
            if text is not None:
                thinking.append(text)
            elif notes is not None:
                notes.append(Note(kind="reasoning_dropped", subject=subject,
                                  detail="reasoning from " + ", ".join(sorted(part.provider_data
                                                                              or {}))
                                         + " cannot be sent to this wire"))
        elif isinstance(part, ToolCallPart):
            calls.append(_encode_call(part, len(calls), names, notes,
                                      keep_generated_id=keep_generated_id))
        elif isinstance(part, ToolResultPart | OpaquePart):
            _drop(part, subject, notes)
        else:
            assert_never(part)
    out: dict[str, Any] = {"role": "assistant", "content": "".join(texts)}
    if thinking:
        out["thinking"] = "".join(thinking)
    if calls:
        out["tool_calls"] = calls
    return _with_extras(out, _own(msg.provider_data))


def _drop(part: ToolCallPart | ToolResultPart | ReasoningPart | OpaquePart, subject: str,
          notes: list[Note] | None) -> None:
    if notes is None:
        return
    if isinstance(part, OpaquePart):
        notes.append(Note(kind="opaque_dropped", subject=subject,
                          detail=f"{part.kind} block from {part.wire} has no form on this wire"))
    else:
        notes.append(Note(kind="part_dropped", subject=subject,
                          detail=f"{type(part).__name__} cannot appear in this message here"))


def _with_extras(out: dict[str, Any], extras: Mapping[str, Any]) -> dict[str, Any]:
    for key, value in extras.items():
        out.setdefault(key, value)
    return out


def _result_text(part: ToolResultPart) -> str:
    content = part.content or _EMPTY_RESULT
    if part.is_error and not content.startswith("Error:"):
        content = _ERROR_PREFIX + content
    return content


def _encode_result(part: ToolResultPart, subject: str, names: NameMap,
                   call_names: Mapping[str, str], notes: list[Note]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "tool"}
    name = part.name if part.name is not None else call_names.get(part.call_id)
    if name is not None:
        out["tool_name"] = names.wire(name)
    else:
        notes.append(Note(kind="field_dropped", subject=subject,
                          detail=f"result for call {part.call_id!r} has no tool name; the "
                                 "server matches it by position only"))
    if not _is_generated(part.call_id):
        out["tool_call_id"] = part.call_id
    out["content"] = _result_text(part)
    return _with_extras(out, _own(part.provider_data))


def _encode_message(msg: Message, index: int, names: NameMap, call_names: dict[str, str],
                    notes: list[Note]) -> list[dict[str, Any]]:
    subject = f"message {index}"
    if msg.role == "assistant":
        for call in msg.tool_calls:
            call_names[call.id] = call.name
        return [_encode_assistant(msg, subject, names, notes, keep_generated_id=False)]
    out = [_encode_result(p, subject, names, call_names, notes) for p in msg.tool_results]
    texts: list[str] = []
    for part in msg.parts:
        if isinstance(part, TextPart):
            texts.append(part.text)
        elif isinstance(part, ReasoningPart):
            notes.append(Note(kind="reasoning_dropped", subject=subject,
                              detail=f"reasoning in a {msg.role} message cannot be sent"))
        elif isinstance(part, ToolCallPart | OpaquePart):
            _drop(part, subject, notes)
        elif isinstance(part, ToolResultPart):
            pass
        else:
            assert_never(part)
    if msg.role == "tool":
        if texts:
            notes.append(Note(kind="part_dropped", subject=subject,
                              detail="text outside a tool result cannot be sent in a tool message"))
        return out
    if texts or not out:
        out.append(_with_extras({"role": msg.role, "content": "".join(texts)},
                                _own(msg.provider_data)))
    return out


def encode(request: Request) -> Encoded:
    """The ``/api/chat`` body for a request, with a note for every change made to fit the wire."""
    names = _names(request)
    notes: list[Note] = list(names.notes())
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
    own = _own(request.provider_options)
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


def _result_of(text: str) -> tuple[str, bool]:
    is_error = text.startswith(_ERROR_PREFIX)
    if is_error:
        text = text[len(_ERROR_PREFIX):]
    return ("" if text == _EMPTY_RESULT else text), is_error


def _decode_result(msg: Mapping[str, Any], calls: list[ToolCallPart], used: set[str],
                   position: int) -> ToolResultPart:
    given = msg.get("tool_call_id")
    tool_name = msg.get("tool_name") if isinstance(msg.get("tool_name"), str) else None
    match: ToolCallPart | None = None
    if isinstance(given, str) and given:
        match = next((c for c in calls if c.id == given), None)
    else:
        free = [c for c in calls if c.id not in used]
        match = next((c for c in free if tool_name is None or c.name == tool_name),
                     free[0] if free else None)
    content, is_error = _result_of(text_of(msg.get("content"), "tool message content"))
    if isinstance(given, str) and given:
        call_id = given
    elif match is not None:
        call_id = match.id
    else:
        call_id = call_id_for(f"result\x00{tool_name}\x00{content}", position)
    used.add(call_id)
    extras = unknown_keys(msg, MESSAGE_KEYS)
    return ToolResultPart(call_id=call_id, content=content, is_error=is_error,
                          name=tool_name if tool_name is not None else
                          (match.name if match is not None else None),
                          provider_data=wrap_own(extras))


def _decode_messages(raw: Iterable[Any], model: Any) -> list[Message]:
    out: list[Message] = []
    calls: list[ToolCallPart] = []
    used: set[str] = set()
    results: list[ToolResultPart] = []
    names = NameMap()
    for index, item in enumerate(raw):
        msg = mapping(item, f"messages[{index}]")
        role = text_of(msg.get("role"), f"messages[{index}].role").lower()
        if role == "tool":
            results.append(_decode_result(msg, calls, used, index))
            continue
        if results:
            out.append(Message(role="tool", parts=tuple(results)))
            results = []
        if role == "assistant":
            decoded = decode_assistant(msg, Seeder(model, index), names)
            calls, used = list(decoded.tool_calls), set()
            out.append(decoded)
        elif role in ("user", "system"):
            content = text_of(msg.get("content"), f"messages[{index}].content")
            parts = (TextPart(text=content),) if content else ()
            out.append(Message(role="user" if role == "user" else "system", parts=parts,
                               provider_data=wrap_own(unknown_keys(msg, MESSAGE_KEYS))))
        else:
            raise WireFormatError(f"messages[{index}] has an unknown role {role!r}")
    if results:
        out.append(Message(role="tool", parts=tuple(results)))
    return out


def _decode_tool(raw: Any) -> ToolSpec:
    tool = mapping(raw, "tool")
    function = mapping(tool.get("function", tool), "tool function")
    name = text_of(function.get("name"), "tool name")
    if not name:
        raise WireFormatError("a tool has no name")
    parameters = function.get("parameters")
    spec = ToolSpec(name=name, description=text_of(function.get("description"), "description"))
    if isinstance(parameters, Mapping):
        spec = ToolSpec(name=name, description=spec.description, input_schema=dict(parameters))
    return spec


def decode_request(body: Mapping[str, Any]) -> Request:
    """Read an ``/api/chat`` body back; keys this codec does not model go to provider_options."""
    body = mapping(body, "request body")
    model = text_of(body.get("model"), "model")
    raw_messages = list(body.get("messages") or ())
    system: str | None = None
    first = raw_messages[0] if raw_messages else None
    if isinstance(first, Mapping) and str(first.get("role", "")).lower() == "system" \
            and not unknown_keys(first, MESSAGE_KEYS):
        system = text_of(first.get("content"), "system content")
        raw_messages = raw_messages[1:]
    extra = unknown_keys(body, _BODY_KEYS)
    temperature: float | None = None
    max_tokens: int | None = None
    options = body.get("options")
    if isinstance(options, Mapping):
        rest = dict(options)
        if isinstance(rest.get("temperature"), int | float) \
                and not isinstance(rest["temperature"], bool):
            temperature = rest.pop("temperature")
        num_predict = rest.get("num_predict")
        if isinstance(num_predict, int) and not isinstance(num_predict, bool) and num_predict > 0:
            max_tokens = rest.pop("num_predict")
        if rest or (temperature is None and max_tokens is None):
            extra["options"] = rest
    elif options is not None:
        extra["options"] = options
    return Request(
        model=model,
        messages=tuple(_decode_messages(raw_messages, model)),
        system=system,
        tools=tuple(_decode_tool(t) for t in body.get("tools") or ()),
        max_tokens=max_tokens,
        temperature=temperature,
        stream=body.get("stream", True) is not False,
        provider_options=wrap_own(extra),
    )


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
    extras = _own(reply.provider_data)
    body: dict[str, Any] = {}
    if reply.model is not None:
        body["model"] = reply.model
    if "created_at" in extras:
        body["created_at"] = extras.pop("created_at")
    body["message"] = _encode_assistant(reply.message, "reply", _names(request), None,
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


def stream_decoder(*, request: Request | None = None) -> StreamDecoder:
    return StreamDecoder(_names(request))


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


