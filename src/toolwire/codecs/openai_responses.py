"""The OpenAI Responses API wire (``POST /v1/responses``): requests, replies, streams, errors.

Owns: request bodies in both directions (``instructions``, ``input`` items, flat function
tools with ``strict`` always sent, ``tool_choice``) and error bodies; replies and streams live
in the private ``_openai_responses_*`` modules and are re-exported here. The canonical call id
is the item's ``call_id``; the item id (``fc_...``), ``status``, ``phase`` and reasoning items
with ``encrypted_content`` ride in ``provider_data`` and go back unchanged, in their original
order. Pure: must not import transport, client or any vendor SDK.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

from ..errors import ProviderError
from ..transcript import (
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
from ._base import Encoded, NameMap, Note, loads_or_none, provider_error, retry_after_from
from ._openai_responses_items import (
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
from ._openai_responses_reply import STOP_REASONS, decode_response, encode_response
from ._openai_responses_stream import decode_stream, encode_stream, stream_decoder

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
    options = own(request.provider_options)
    extra: dict[str, Any] = copy.deepcopy(dict(options)) if isinstance(options, Mapping) else {}
    tools = [encode_tool(tool, names, notes) for tool in request.tools]
    more_tools = extra.pop("tools", None)
    if isinstance(more_tools, list):
        tools.extend(more_tools)
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
        if message.role in ("user", "system"):
            items.append(_encode_text_message(message, m_index, notes))
            continue
        for p_index, part in enumerate(message.parts):
            where = f"messages[{m_index}].parts[{p_index}]"
            if message.role == "tool":
                if isinstance(part, ToolResultPart):
                    items.append(render_result(part))
                else:
                    notes.append(Note(kind="field_dropped", subject=where,
                                      detail=f"a {type(part).__name__} in a tool message"))
                continue
            item = None if isinstance(part, ToolResultPart) else render_part(part, names, None)
            if item is not None:
                items.append(item)
            elif isinstance(part, ReasoningPart):
                notes.append(Note(kind="reasoning_dropped", subject=where,
                                  detail="reasoning with no Responses item to send back"))
            elif isinstance(part, OpaquePart):
                notes.append(Note(kind="opaque_dropped", subject=where,
                                  detail=f"{part.kind} block of {part.wire}"))
            else:
                notes.append(Note(kind="field_dropped", subject=where,
                                  detail=f"a {type(part).__name__} in an assistant message"))
    return items


def _encode_text_message(message: Message, m_index: int, notes: list[Note]) -> Item:
    role: str = message.role
    data = own(message.provider_data)
    if message.role == "system" and isinstance(data, dict) and data.get("role") == "developer":
        role = "developer"
    blocks: list[Any] = []
    for p_index, part in enumerate(message.parts):
        if isinstance(part, TextPart):
            blocks.append({"type": "input_text", "text": part.text})
        elif isinstance(part, OpaquePart) and part.wire == WIRE:
            blocks.append(copy.deepcopy(part.payload))
        else:
            kind = "opaque_dropped" if isinstance(part, OpaquePart) else "field_dropped"
            notes.append(Note(kind=kind, subject=f"messages[{m_index}].parts[{p_index}]",
                              detail=f"a {type(part).__name__} in a {message.role} message"))
    content: Any = blocks
    if len(message.parts) == 1 and isinstance(message.parts[0], TextPart):
        content = message.parts[0].text
    return {"role": role, "content": content}


# --------------------------------------------------------------------------- decode


def decode_request(body: Mapping[str, Any]) -> Request:
    """Read a request body back; keys this codec does not model go to provider_options."""
    options: dict[str, Any] = {k: v for k, v in body.items() if k not in _KNOWN_KEYS}
    tools: list[ToolSpec] = []
    other_tools: list[Any] = []
    for tool in body.get("tools") or ():
        if isinstance(tool, dict) and tool.get("type") == "function" and tool.get("name"):
            params = tool.get("parameters")
            tools.append(ToolSpec(
                name=str(tool["name"]),
                description=str(tool.get("description") or ""),
                input_schema=params if isinstance(params, dict) else dict(_EMPTY_SCHEMA),
                strict=tool.get("strict") is True,
            ))
        else:
            other_tools.append(tool)
    if other_tools:
        options["tools"] = other_tools
    choice = _decode_choice(body.get("tool_choice"), body.get("parallel_tool_calls"), options)
    raw_input = body.get("input")
    if isinstance(raw_input, str):
        messages: list[Message] = [Message.user(raw_input)]
    else:
        messages = _decode_input(raw_input if isinstance(raw_input, list) else [])
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        options["instructions"] = instructions
        instructions = None
    max_tokens = body.get("max_output_tokens")
    temperature = body.get("temperature")
    return Request(
        model=str(body.get("model") or ""),
        messages=tuple(messages),
        system=instructions,
        tools=tuple(tools),
        tool_choice=choice,
        max_tokens=max_tokens if _number(max_tokens) and isinstance(max_tokens, int) else None,
        temperature=temperature if _number(temperature) else None,
        stream=body.get("stream") is True,
        provider_options={WIRE: options} if options else None,
    )


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _decode_choice(raw: Any, parallel: Any, options: dict[str, Any]) -> ToolChoice | None:
    par = parallel if isinstance(parallel, bool) else None
    if raw is None:
        return ToolChoice(parallel=par) if par is not None else None
    if raw in ("auto", "required", "none"):
        return ToolChoice(mode=raw, parallel=par)
    if isinstance(raw, dict) and raw.get("type") == "function" and isinstance(raw.get("name"), str):
        return ToolChoice(mode="tool", name=raw["name"], parallel=par)
    options["tool_choice"] = raw
    mode = raw.get("mode") if isinstance(raw, dict) else None
    if isinstance(raw, dict) and raw.get("type") == "allowed_tools" and mode == "required":
        return ToolChoice(mode="required", parallel=par)
    if isinstance(raw, dict) and raw.get("type") != "allowed_tools":
        return ToolChoice(mode="required", parallel=par)
    return ToolChoice(mode="auto", parallel=par)


def _decode_input(items: list[Any]) -> list[Message]:
    """Input items as messages: assistant-side items in a row make one assistant message,
    ``function_call_output`` items in a row make one tool message."""
    names = NameMap()
    seed = content_seed(items)
    messages: list[Message] = []
    group: list[Part] = []
    group_role: Literal["assistant", "tool"] | None = None
    call_names: dict[str, str] = {}
    for item in items:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        is_text = kind == "message" and item.get("role") in ("user", "system", "developer")
        role: Literal["assistant", "tool"] | None = (
            None if is_text else "tool" if kind == "function_call_output" else "assistant"
        )
        if role != group_role and group_role is not None:
            messages.append(Message(role=group_role, parts=tuple(group)))
            group = []
        group_role = role
        if is_text:
            messages.append(_decode_text_message(item))
        elif role == "tool":
            call_id = str(item.get("call_id") or "")
            group.append(result_from_item(item, call_names.get(call_id)))
        else:
            calls = sum(isinstance(p, ToolCallPart) for p in group)
            part = part_from_item(item, names, None, seed=seed, call_index=calls)
            if isinstance(part, ToolCallPart):
                call_names[part.id] = part.name
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
            if not isinstance(block, dict):
                continue
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
