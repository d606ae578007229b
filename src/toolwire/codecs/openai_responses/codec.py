"""The OpenAI Responses API wire (``POST /v1/responses``): requests, replies, streams, errors.

Owns: request bodies in both directions (``instructions``, ``input`` items, flat function
tools with ``strict`` always sent, ``tool_choice``) and error bodies; replies and streams live
in the private ``_openai_responses_*`` modules and are re-exported here. The canonical call id
is the item's ``call_id``; the item id (``fc_...``), ``status``, ``phase`` and reasoning items
with ``encrypted_content`` ride in ``provider_data`` and go back unchanged, in their original
order. Options for other wires are not sent (a ``field_dropped`` note per key); values given in
the request go into the body as they are, not copied. A body of the wrong shape raises
`WireFormatError` naming the field. Pure: must not import transport, client or any vendor SDK.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

from toolwire.codecs.base import (
    Encoded,
    NameMap,
    Note,
    loads_or_none,
    own_options,
    provider_error,
    retry_after_from,
    tools_lack_schemas,
    wrong_shape,
)
from toolwire.codecs.openai_responses.parts import (
    WIRE,
    Item,
    content_seed,
    encode_choice,
    encode_tool,
    name_map,
    own,
    part_from_item,
    render_part,
    render_result,
    result_from_item,
)
from toolwire.codecs.openai_responses.reply import STOP_REASONS, decode_response, encode_response
from toolwire.codecs.openai_responses.stream import (
    ResponsesStreamDecoder,
    decode_stream,
    encode_stream,
    stream_decoder,
)
from toolwire.errors import ProviderError
from toolwire.transcript import (
    Message,
    OpaquePart,
    Part,
    ReasoningPart,
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

_KNOWN_KEYS: Final = frozenset({
    "model", "instructions", "input", "tools", "tool_choice", "parallel_tool_calls",
    "max_output_tokens", "temperature", "stream",
})
_EMPTY_SCHEMA: Final = {"type": "object", "properties": {}}

# --------------------------------------------------------------------------- encode


def encode(request: Request) -> Encoded:
    """The request body the API documents, and a note for every change made to fit it."""
    notes: list[Note] = []
    names = name_map(request.tools)
    notes.extend(names.notes())
    body: dict[str, Any] = {"model": request.model}
    if request.system is not None:
        body["instructions"] = request.system
    body["input"] = _encode_input(request.messages, names, notes)
    extra = own_options(request.provider_options, WIRE, notes)
    tools = [encode_tool(tool, names, notes) for tool in request.tools]
    more_tools = extra.pop("tools", None)
    if isinstance(more_tools, list):
        tools.extend(more_tools)
    elif more_tools is not None:
        notes.append(Note(kind="field_dropped", subject=f"provider_options[{WIRE!r}]",
                          detail="'tools' is not a list of tools; not sent"))
    if tools:
        body["tools"] = tools
    choice = request.tool_choice
    if choice is not None:
        if tools:
            body["tool_choice"] = encode_choice(choice, names)
            if choice.parallel is not None:
                body["parallel_tool_calls"] = choice.parallel
        else:
            notes.append(Note(kind="choice_changed", subject="tool_choice",
                              detail="dropped: the request has no tools and the API refuses "
                                     "tool_choice without them"))
    if request.max_tokens is not None:
        body["max_output_tokens"] = request.max_tokens
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.stream:
        body["stream"] = True
    body.update(extra)
    return Encoded(body=body, notes=tuple(notes))


def encode_request(request: Request) -> dict[str, Any]:
    return encode(request).body


def _encode_input(messages: Sequence[Message], names: NameMap, notes: list[Note]) -> list[Item]:
    items: list[Item] = []
    for m_index, message in enumerate(messages):
        role = message.role
        if role == "user" or role == "system":
            items.append(_encode_text_message(message, m_index, notes))
            continue
        for p_index, part in enumerate(message.parts):
            if role == "tool":
                if isinstance(part, ToolResultPart):
                    items.append(render_result(part))
                else:
                    _dropped(part, m_index, p_index, "tool", notes)
                continue
            item = None if isinstance(part, ToolResultPart) else render_part(part, names, None)
            if item is not None:
                items.append(item)
            else:
                _dropped(part, m_index, p_index, role, notes)
    return items


def _dropped(part: Part, m_index: int, p_index: int, role: str, notes: list[Note]) -> None:
    """The note for a part this wire cannot send, subject ``messages[i].parts[j]``."""
    where = f"messages[{m_index}].parts[{p_index}]"
    if isinstance(part, ReasoningPart):
        notes.append(Note(kind="reasoning_dropped", subject=where,
                          detail=f"reasoning with no Responses item to send back ({role} "
                                 "message)"))
    elif isinstance(part, OpaquePart):
        notes.append(Note(kind="opaque_dropped", subject=where,
                          detail=f"{part.kind} block of {part.wire} ({role} message)"))
    else:
        notes.append(Note(kind="field_dropped", subject=where,
                          detail=f"a {type(part).__name__} in a {role} message"))


def _encode_text_message(message: Message, m_index: int, notes: list[Note]) -> Item:
    role: str = message.role
    parts = message.parts
    data = own(message.provider_data)
    if role == "system" and isinstance(data, dict) and data.get("role") == "developer":
        role = "developer"
    if len(parts) == 1 and isinstance(parts[0], TextPart):
        return {"role": role, "content": parts[0].text}
    blocks: list[Any] = []
    for p_index, part in enumerate(parts):
        if isinstance(part, TextPart):
            blocks.append({"type": "input_text", "text": part.text})
        elif isinstance(part, OpaquePart) and part.wire == WIRE:
            blocks.append(part.payload)
        else:
            _dropped(part, m_index, p_index, message.role, notes)
    return {"role": role, "content": blocks}


# --------------------------------------------------------------------------- decode


def decode_request(body: Mapping[str, Any]) -> Request:
    """Read a request body back; keys this codec does not model go to provider_options.

    Raises `WireFormatError` naming the field when the body does not have the API's shape.
    """
    if not isinstance(body, (dict, Mapping)):
        raise wrong_shape("request body", "an object", body)
    options: dict[str, Any] = {k: v for k, v in body.items() if k not in _KNOWN_KEYS}
    tools: list[ToolSpec] = []
    other_tools: list[Any] = []
    raw_tools = _typed(body, "tools", list, "a list of tools")
    for t_index, tool in enumerate(raw_tools or ()):
        if not isinstance(tool, dict):
            raise wrong_shape(f"tools[{t_index}]", "an object", tool)
        if tool.get("type") == "function":
            tools.append(_decode_tool(tool, f"tools[{t_index}]"))
        else:
            other_tools.append(tool)
    if other_tools:
        options["tools"] = other_tools
    choice = _decode_choice(body.get("tool_choice"),
                            _typed(body, "parallel_tool_calls", bool, "true or false"), options)
    raw_input = body.get("input")
    if isinstance(raw_input, str):
        messages: list[Message] = [Message.user(raw_input)]
    elif isinstance(raw_input, list):
        messages = _decode_input(raw_input)
    elif raw_input is None:
        messages = []
    else:
        raise wrong_shape("input", "a string or a list of items", raw_input)
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        options["instructions"] = instructions
        instructions = None
    max_tokens = body.get("max_output_tokens")
    if max_tokens is not None and (not isinstance(max_tokens, int) or isinstance(max_tokens, bool)):
        raise wrong_shape("max_output_tokens", "an integer", max_tokens)
    temperature = body.get("temperature")
    if temperature is not None and not _number(temperature):
        raise wrong_shape("temperature", "a number", temperature)
    return Request(
        model=_typed(body, "model", str, "a string") or "",
        messages=tuple(messages),
        system=instructions,
        tools=tuple(tools),
        tool_choice=choice,
        max_tokens=max_tokens,
        temperature=temperature,
        stream=_typed(body, "stream", bool, "true or false") is True,
        provider_options={WIRE: options} if options else None,
    )


def _typed(obj: Mapping[str, Any], key: str, kind: type, expected: str, where: str = "") -> Any:
    """``obj[key]`` when it is absent, null or of type ``kind``; else a `WireFormatError`."""
    value = obj.get(key)
    if value is None or (isinstance(value, kind) and (kind is bool or not isinstance(value, bool))):
        return value
    raise wrong_shape(f"{where}{key}", expected, value)


def _decode_tool(tool: Item, where: str) -> ToolSpec:
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise wrong_shape(f"{where}.name", "a non-empty string", name)
    params = _typed(tool, "parameters", dict, "an object (a JSON Schema)", f"{where}.")
    return ToolSpec(
        name=name,
        description=_typed(tool, "description", str, "a string", f"{where}.") or "",
        input_schema=params if params is not None else dict(_EMPTY_SCHEMA),
        strict=tool.get("strict") is True,
    )


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _decode_choice(raw: Any, parallel: bool | None, options: dict[str, Any]) -> ToolChoice | None:
    par = parallel
    if raw is None:
        return ToolChoice(parallel=par) if par is not None else None
    if raw in ("auto", "required", "none"):
        return ToolChoice(mode=raw, parallel=par)
    if not isinstance(raw, (str, dict)):
        raise wrong_shape("tool_choice", "a string or an object", raw)
    if isinstance(raw, dict) and raw.get("type") == "function" and isinstance(raw.get("name"), str):
        return ToolChoice(mode="tool", name=raw["name"], parallel=par)
    options["tool_choice"] = raw
    mode = raw.get("mode") if isinstance(raw, dict) else None
    if isinstance(raw, dict) and raw.get("type") == "allowed_tools" and mode == "required":
        return ToolChoice(mode="required", parallel=par)
    if isinstance(raw, dict) and raw.get("type") != "allowed_tools":
        return ToolChoice(mode="required", parallel=par)
    return ToolChoice(mode="auto", parallel=par)


def _check_item(item: Any, where: str) -> str:
    """The item's type after checking the fields this codec reads; `WireFormatError` if wrong."""
    if not isinstance(item, dict):
        raise wrong_shape(where, "an object (an input item)", item)
    kind = item.get("type", "message")
    if not isinstance(kind, str):
        raise wrong_shape(f"{where}.type", "a string", kind)
    if kind == "message":
        _typed(item, "role", str, "a string", f"{where}.")
        content = item.get("content")
        if isinstance(content, list):
            for c_index, block in enumerate(content):
                if not isinstance(block, dict):
                    raise wrong_shape(f"{where}.content[{c_index}]", "an object", block)
        elif content is not None and not isinstance(content, str):
            raise wrong_shape(f"{where}.content", "a string or a list of content parts", content)
    elif kind == "function_call":
        _typed(item, "call_id", str, "a string", f"{where}.")
        name = item.get("name")
        if not isinstance(name, str):
            raise wrong_shape(f"{where}.name", "a string", name)
        args = item.get("arguments")
        if args is not None and not isinstance(args, (str, dict)):
            raise wrong_shape(f"{where}.arguments", "a string or an object", args)
    elif kind == "function_call_output":
        call_id = item.get("call_id")
        if not isinstance(call_id, str):
            raise wrong_shape(f"{where}.call_id", "a string", call_id)
    return kind


def _decode_input(items: list[Any]) -> list[Message]:
    """Input items as messages: assistant-side items in a row make one assistant message,
    ``function_call_output`` items in a row make one tool message."""
    names = NameMap()
    kinds = [_check_item(item, f"input[{i}]") for i, item in enumerate(items)]
    seed = content_seed(items)
    messages: list[Message] = []
    group: list[Part] = []
    group_role: Literal["assistant", "tool"] | None = None
    call_names: dict[str, str] = {}
    calls = 0
    for item, kind in zip(items, kinds, strict=True):
        is_text = kind == "message" and item.get("role") in ("user", "system", "developer")
        role: Literal["assistant", "tool"] | None = (
            None if is_text else "tool" if kind == "function_call_output" else "assistant"
        )
        if role != group_role and group_role is not None:
            messages.append(Message(role=group_role, parts=tuple(group)))
            group, calls = [], 0
        group_role = role
        if is_text:
            messages.append(_decode_text_message(item))
        elif role == "tool":
            call_id = str(item.get("call_id") or "")
            group.append(result_from_item(item, call_names.get(call_id)))
        else:
            part = part_from_item(item, names, None, seed=seed, call_index=calls)
            if isinstance(part, ToolCallPart):
                call_names[part.id] = part.name
                calls += 1
            group.append(part)
    if group_role is not None:
        messages.append(Message(role=group_role, parts=tuple(group)))
    return messages


def _decode_text_message(item: Item) -> Message:
    role = item.get("role")
    content = item.get("content")
    parts: list[Part] = []
    if isinstance(content, str):
        parts.append(TextPart(text=content))
    elif isinstance(content, list):
        for block in content:
            if block.get("type") in ("input_text", "output_text") and isinstance(
                block.get("text"), str
            ):
                parts.append(TextPart(text=block["text"]))
            else:
                parts.append(OpaquePart(wire=WIRE, kind=str(block.get("type")), payload=block))
    if role == "user":
        return Message(role="user", parts=tuple(parts))
    data = {WIRE: {"role": "developer"}} if role == "developer" else None
    return Message(role="system", parts=tuple(parts), provider_data=data)


# --------------------------------------------------------------------------- errors


def decode_error(
    status: int, body: Any, headers: Mapping[str, str] | None = None
) -> ProviderError:
    """The typed error for an HTTP error reply ``{"error": {message, type, param, code}}``."""
    text = ""
    parsed: Any = body
    if isinstance(body, (bytes, bytearray)):
        body = bytes(body).decode("utf-8", "replace")
    if isinstance(body, str):
        text = body.strip()
        parsed = loads_or_none(text) if text else None
    err = parsed.get("error") if isinstance(parsed, dict) else None
    if not isinstance(err, dict):
        err = parsed if isinstance(parsed, dict) and "message" in parsed else {"message": err}
    message = err.get("message")
    if not isinstance(message, str) or not message:
        message = text or f"HTTP {status} with no error message"
    kind, code = err.get("type"), err.get("code")
    error_type = kind if isinstance(kind, str) and kind else code if isinstance(code, str) else None
    if isinstance(code, str) and "context_length" in code:
        error_type = code
    return provider_error(status, message, wire=WIRE, error_type=error_type,
                          body=parsed if parsed is not None else text,
                          retry_after=retry_after_from(headers))

StreamDecoder = ResponsesStreamDecoder


# ------------------------------------------------------------------------ what the provider refuses


def check_body(body: dict[str, Any]) -> str | None:
    """The first rule the raw ``body`` breaks, worded as the provider words it, or None."""
    if not body.get("tools") and "tool_choice" in body:
        return "'tool_choice' is only allowed when 'tools' are specified"
    items = body.get("input")
    if isinstance(items, str):
        return None
    return tools_lack_schemas(body.get("tools"), "parameters") or (
        None if isinstance(items, list) and items else "input: at least one item is required")


_ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error",
                404: "invalid_request_error", 429: "rate_limit_exceeded", 500: "server_error",
                503: "server_error"}


def encode_error(status: int, message: str) -> dict[str, Any]:
    """An error body as this wire's server sends it for ``status``."""
    return {"error": {"message": message, "type": _ERROR_TYPES.get(status, "server_error"),
                      "param": None, "code": "rate_limit_exceeded" if status == 429 else None}}
