"""OpenAI Responses: request bodies, both ways, and what the provider refuses in one.

Owns `encode` (a canonical `Request` as the body the API documents: ``instructions``, ``input``
items, tools and ``tool_choice``, with a `Note` for every change made to fit), `decode_request`
(any such body back to a `Request`; a body of the wrong shape raises `WireFormatError` naming
the field) and `check_body` (the first rule a raw body breaks, worded as the API words it).
Assistant-side items in a row read as one assistant message, ``function_call_output`` items in
a row as one tool message. With the codec setting ``"_continue": true`` (`CONTINUE`, for a
server that takes one input item only) a request continues the last response the history
kept the id of: ``previous_response_id`` and only the messages after that reply as
``input``, with ``store: true``. Pure; imports only the transcript, `toolwire.codecs.base` and the
Responses `parts` and `schema`; must not import the wire's reply or stream modules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

from toolwire.codecs.base import (
    Encoded,
    NameMap,
    Note,
    own_options,
    tools_lack_schemas,
    wrong_shape,
)
from toolwire.codecs.media import check_limits
from toolwire.codecs.model_checks import explicit_cache_problem
from toolwire.codecs.openai_custom import is_responses_custom
from toolwire.codecs.openai_media import (
    LIMITS,
    RESPONSES_ITEMS,
    responses_item,
    responses_media,
    responses_output,
    responses_result,
)
from toolwire.codecs.openai_responses import (
    cache_fields,
    context_entries,
    media_problem,
    read_entries,
)
from toolwire.codecs.openai_responses.parts import (
    CONTINUE,
    RESPONSE,
    WIRE,
    Item,
    check_item,
    content_seed,
    name_map,
    own,
    part_from_item,
    render_part,
    render_result,
    result_from_item,
    typed,
)
from toolwire.codecs.openai_responses.schema import (
    add_search,
    decode_choice,
    decode_tool,
    decode_tools,
    encode_choice,
    encode_tool,
    encode_tools,
)
from toolwire.codecs.openai_shared import TOOL_PLACES, keep_others, put_others
from toolwire.transcript import (
    MediaPart,
    Message,
    OpaquePart,
    Part,
    ReasoningPart,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

ADDED: Final = "_tools"
"""Kept on a system message read from an ``additional_tools`` item: its tool list as it came."""
NO_TOOLS: Final = "_no_tools"
"""Kept in the provider options when a body with an ``additional_tools`` item had no ``tools``
(encode otherwise sends an empty list there), so that the same wire gets it back so."""
BLOCKS: Final = "_blocks"
"""Kept on a message read from a list of content blocks holding one text."""

_KNOWN_KEYS: Final = frozenset({
    "model", "instructions", "input", "tools", "tool_choice", "parallel_tool_calls",
    "max_output_tokens", "temperature", "stream",
})

# --------------------------------------------------------------------------- encode


def stored_from(messages: Sequence[Message]) -> tuple[int, str] | None:
    """The last assistant message that kept the id of the response it came from, and that
    id."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        entry = own(message.provider_data) if message.role == "assistant" else None
        if isinstance(entry, dict) and isinstance(entry.get(RESPONSE), str) and entry[RESPONSE]:
            return index, entry[RESPONSE]
    return None


def encode(request: Request) -> Encoded:
    """The request body the API documents, and a note for every change made to fit it."""
    check_limits(request, WIRE, LIMITS)
    notes: list[Note] = []
    names = name_map(request.tools)
    notes.extend(names.notes())
    body: dict[str, Any] = {"model": request.model}
    if request.system is not None:
        body["instructions"] = request.system
    extra = own_options(request.provider_options, WIRE, notes)
    messages = request.messages
    if extra.pop(CONTINUE, False) is True:  # the server keeps the history: only newer items
        extra.setdefault("store", True)
        stored = stored_from(messages)
        if stored is not None and "previous_response_id" not in extra:
            body["previous_response_id"] = stored[1]
            messages = messages[stored[0] + 1:]
    earlier = request.messages[:len(request.messages) - len(messages)]  # kept by the server
    body["input"] = _encode_input(messages, names, notes, freeform={
        c.id for m in earlier for c in m.tool_calls if c.freeform})
    tools = encode_tools(request.tools, names, notes, extra)
    more_tools = extra.pop("tools", None)
    places = extra.pop(TOOL_PLACES, None)
    if isinstance(more_tools, list):
        put_others(tools, more_tools, places)
    elif more_tools is not None:
        notes.append(Note(kind="field_dropped", subject=f"provider_options[{WIRE!r}]",
                          detail="'tools' is not a list of tools; not sent"))
    add_search(tools, notes)
    added = any(m.tools for m in request.messages)  # tools that come mid-conversation
    if tools or (added and not extra.pop(NO_TOOLS, False)):
        body["tools"] = tools
    choice = request.tool_choice
    if choice is not None:
        if tools or added:
            body["tool_choice"] = encode_choice(choice, names, frozenset(
                t.name for t in (*request.tools, *(t for m in request.messages for t in m.tools))
                if t.freeform))
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
    if request.context_management is not None:
        entries = context_entries(request.context_management, notes, WIRE)
        if entries:
            body["context_management"] = entries
    body.update(extra)
    if request.cache is not None:
        notes.extend(cache_fields(body, request.cache))
    return Encoded(body=body, notes=tuple(notes))


def _encode_input(messages: Sequence[Message], names: NameMap, notes: list[Note], *,
                  freeform: set[str]) -> list[Item]:
    """The ``input`` items of ``messages``; ``freeform`` holds the freeform calls of earlier
    messages (their results are ``custom_tool_call_output`` items), and gains this list's."""
    items: list[Item] = []
    for m_index, message in enumerate(messages):
        role = message.role
        if role == "user" or role == "system":
            if message.parts or not message.tools:
                items.append(_encode_text_message(message, m_index, notes))
            if message.tools:
                items.append(_added_item(message, names, notes))
            continue
        for p_index, part in enumerate(message.parts):
            if role == "tool":
                if isinstance(part, ToolResultPart):
                    result = render_result(part)
                    if part.call_id in freeform:
                        result = {"type": "custom_tool_call_output",
                                  **{k: v for k, v in result.items() if k != "type"}}
                    if not isinstance(part.content, str):
                        result["output"] = responses_output(
                            part, subject=f"messages[{m_index}].parts[{p_index}]", notes=notes)
                    items.append(result)
                else:
                    _dropped(part, m_index, p_index, "tool", notes)
                continue
            if isinstance(part, ToolCallPart) and part.freeform:
                freeform.add(part.id)
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
    extras = {k: v for k, v in data.items() if k not in ("role", BLOCKS)} \
        if isinstance(data, dict) else {}  # the item's id, type and status, as they came
    if len(parts) == 1 and type(parts[0]) is TextPart and not (data or {}).get(BLOCKS) \
            and not isinstance(own(parts[0].provider_data), dict):
        return {**extras, "role": role, "content": parts[0].text}
    blocks: list[Any] = []
    for p_index, part in enumerate(parts):
        if isinstance(part, TextPart):
            kept = own(part.provider_data)  # a block with fields of its own, as it came
            blocks.append(dict(kept) if isinstance(kept, dict) and kept.get("text") == part.text
                          else {"type": "input_text", "text": part.text})
        elif isinstance(part, OpaquePart) and part.wire == WIRE:
            blocks.append(part.payload)
        elif isinstance(part, MediaPart):
            blocks.append(responses_item(part, subject=f"messages[{m_index}].parts[{p_index}]",
                                     notes=notes))
        else:
            _dropped(part, m_index, p_index, message.role, notes)
    return {**extras, "role": role, "content": blocks}



# --------------------------------------------------------------------------- decode

def decode_request(
    body: Mapping[str, Any], *, model: str | None = None, stream: bool | None = None
) -> Request:
    """Read a request body back; keys this codec does not model go to provider_options.

    ``model`` and ``stream`` (what a URL said) count only when the body names no model or has
    no ``stream`` key. Raises `WireFormatError` naming the field when the body does not have
    the API's shape.
    """
    if not isinstance(body, (dict, Mapping)):
        raise wrong_shape("request body", "an object", body)
    options: dict[str, Any] = {k: v for k, v in body.items() if k not in _KNOWN_KEYS}
    raw_tools = typed(body, "tools", list, "a list of tools")
    if raw_tools is None and isinstance(body.get("input"), list) and any(
            isinstance(i, dict) and i.get("type") == "additional_tools" for i in body["input"]):
        options[NO_TOOLS] = True
    tools, other_tools = decode_tools(raw_tools, options)
    keep_others(raw_tools, other_tools, options)
    choice = decode_choice(body.get("tool_choice"),
                           typed(body, "parallel_tool_calls", bool, "true or false"), options)
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
    name = typed(body, "model", str, "a string")
    streams = typed(body, "stream", bool, "true or false")
    return Request(
        model=name or model or "",
        messages=tuple(messages),
        system=instructions,
        tools=tuple(tools),
        tool_choice=choice,
        max_tokens=max_tokens,
        temperature=temperature,
        stream=streams is True if streams is not None or stream is None else stream,
        context_management=read_entries(options),
        provider_options={WIRE: options} if options else None,
    )


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _decode_input(items: list[Any]) -> list[Message]:
    """Input items as messages: assistant-side items in a row make one assistant message,
    ``function_call_output`` items in a row make one tool message."""
    names = NameMap()
    kinds = [check_item(item, f"input[{i}]") for i, item in enumerate(items)]
    seed = content_seed(items)
    messages: list[Message] = []
    group: list[Part] = []
    group_role: Literal["assistant", "tool"] | None = None
    call_names: dict[str, str] = {}
    calls = 0
    for n, (item, kind) in enumerate(zip(items, kinds, strict=True)):
        if kind == "message" and item.get("role") not in ("user", "system", "developer",
                                                          "assistant"):
            raise wrong_shape(f"input[{n}].role", "'user', 'system', 'developer' or "
                              "'assistant'", item.get("role"))
        if kind == "additional_tools":  # tools offered from here on
            if group_role is not None:
                messages.append(Message(role=group_role, parts=tuple(group)))
            group, group_role, calls = [], None, 0
            messages.append(_tools_message(item, f"input[{n}]"))
            continue
        is_text = kind == "message" and item.get("role") in ("user", "system", "developer")
        role: Literal["assistant", "tool"] | None = (
            None if is_text else "tool" if kind in ("function_call_output",
                                                    "custom_tool_call_output") else "assistant"
        )
        if role != group_role and group_role is not None:
            messages.append(Message(role=group_role, parts=tuple(group)))
            group, calls = [], 0
        group_role = role
        if is_text:
            messages.append(_decode_text_message(item))
        elif role == "tool":
            call_id = str(item.get("call_id") or "")
            group.append(responses_result(item, call_names.get(call_id), f"input[{len(messages)}]")
                         or result_from_item(item, call_names.get(call_id)))
        else:
            part = part_from_item(item, names, None, seed=seed, call_index=calls)
            if isinstance(part, ToolCallPart):
                call_names[part.id] = part.name
                calls += 1
            group.append(part)
    if group_role is not None:
        messages.append(Message(role=group_role, parts=tuple(group)))
    return messages


def _leaves(tools: Any) -> list[Any]:
    """A tool list with its namespaces opened."""
    out: list[Any] = []
    for tool in tools if isinstance(tools, list) else ():
        inner = tool.get("tools") if isinstance(tool, dict) and tool.get("type") == "namespace" \
            else None
        out.extend(_leaves(inner) if isinstance(inner, list) else [tool])
    return out


def _readable(tool: Any) -> bool:
    """Whether a tool of an ``additional_tools`` item is read as a canonical one."""
    return (isinstance(tool, dict) and tool.get("type") == "function") or is_responses_custom(tool)


def _tools_message(item: Item, where: str) -> Message:
    """An ``additional_tools`` item as a system message adding its function tools; the list
    as it came goes back to this wire, and the tools no other wire can read are named."""
    leaves = _leaves(item.get("tools"))
    specs = [decode_tool(t, f"{where}.tools") for t in leaves if _readable(t)]
    kept = {k: v for k, v in item.items() if k != "tools"}
    kept[ADDED] = item.get("tools")
    unread = [f"{t.get('type')} {t.get('name') or ''}".strip() for t in leaves
              if isinstance(t, dict) and not _readable(t)]
    if unread:
        kept["unread_tools"] = unread
    return Message(role="system", tools=tuple(specs), provider_data={WIRE: kept})


def _added_item(message: Message, names: NameMap, notes: list[Note]) -> Item:
    data = own(message.provider_data)
    data = data if isinstance(data, dict) else {}
    stored = data.get(ADDED)
    same = isinstance(stored, list) and [
        decode_tool(t, "tools") for t in _leaves(stored) if _readable(t)] == list(message.tools)
    item = {k: v for k, v in data.items() if k not in (ADDED, "unread_tools")}
    item.setdefault("type", "additional_tools")
    item.setdefault("role", "developer")
    item["tools"] = stored if same else [encode_tool(t, names, notes) for t in message.tools]
    return item


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
                more = block.keys() - {"type", "text"} or block.get("type") != "input_text"
                parts.append(TextPart(text=block["text"],
                                      provider_data={WIRE: dict(block)} if more else None))
            elif block.get("type") in RESPONSES_ITEMS:
                parts.append(responses_media(block, "input.content"))
            else:
                parts.append(OpaquePart(wire=WIRE, kind=str(block.get("type")), payload=block))
    kept = {k: v for k, v in item.items() if k not in ("role", "content")}
    if isinstance(content, list) and len(parts) == 1:
        kept[BLOCKS] = True  # one text sent as a list of blocks goes back so
    if role == "developer":
        kept["role"] = "developer"
    return Message(role="user" if role == "user" else "system", parts=tuple(parts),
                   provider_data={WIRE: kept} if kept else None)

# ------------------------------------------------------------------------ what the provider refuses


LITE_HEADER: Final = "x-openai-internal-codex-responses-lite"
"""The header of Codex's own request shape, whose tools ride in an ``additional_tools`` input
item (with ``tools`` empty) and whose ``tool_choice`` is taken with them."""


def _added_tools(body: Mapping[str, Any]) -> bool:
    items = body.get("input")
    return isinstance(items, list) and any(
        isinstance(i, Mapping) and i.get("type") == "additional_tools" and i.get("tools")
        for i in items)


def check_body(body: dict[str, Any], headers: Mapping[str, str] | None = None) -> str | None:
    """The first rule the raw ``body`` breaks, worded as the provider words it, or None.
    ``headers`` may name a request shape with rules of its own (`LITE_HEADER`)."""
    lite = headers is not None and any(k.lower() == LITE_HEADER for k in headers)
    if not body.get("tools") and "tool_choice" in body and not (lite and _added_tools(body)):
        return "'tool_choice' is only allowed when 'tools' are specified"
    items = body.get("input")
    if isinstance(items, str):
        return None
    return tools_lack_schemas(body.get("tools"), "parameters") or (
        None if isinstance(items, list) and items else "input: at least one item is required"
    ) or media_problem(body) or explicit_cache_problem(body, WIRE)
