"""OpenAI Responses: a canonical `Request` as a request body.

Owns `encode` (a canonical `Request` as the body the API documents: ``instructions``, ``input``
items, tools and ``tool_choice``, with a `Note` for every change made to fit); reading a body
back and checking a raw one are `inbound`'s. With the codec setting ``"_continue": true``
(`CONTINUE`, for a server that takes one input item only) a request continues the last response
the history kept the id of: ``previous_response_id`` and only the messages after that reply as
``input``, with ``store: true``. Pure; imports only the transcript, `toolwire.codecs.base` and
the Responses `parts` and `schema`; must not import the wire's reply or stream modules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from toolwire.codecs.base import (
    Encoded,
    NameMap,
    Note,
    own_options,
)
from toolwire.codecs.media import check_limits
from toolwire.codecs.openai_custom import is_responses_custom
from toolwire.codecs.openai_media import (
    LIMITS,
    responses_item,
    responses_output,
)
from toolwire.codecs.openai_responses import (
    cache_fields,
    context_entries,
)
from toolwire.codecs.openai_responses.parts import (
    CONTINUE,
    EMPTY_OUTPUT,
    ERROR_PREFIX,
    RESPONSE,
    WIRE,
    Item,
    name_map,
    own,
    render_part,
    render_result,
)
from toolwire.codecs.openai_responses.schema import (
    add_search,
    decode_tool,
    encode_choice,
    encode_tool,
    encode_tools,
)
from toolwire.codecs.openai_shared import TOOL_PLACES, put_others
from toolwire.codecs.traits import known
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

KNOWN_KEYS: Final = frozenset({
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
    names = name_map(request.tools)
    found = known(request)  # EVERY while the general path is checked against this one
    plain = _plain_input(request.messages, names.to_wire) if request.provider_options is None \
        and (found is None or not found.verbatim) else None
    if plain is None:  # a request with no media is never refused; plain ones hold none
        check_limits(request, WIRE, LIMITS)
    notes: list[Note] = []
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
    if plain is not None:
        body["input"] = plain
    else:
        earlier = request.messages[:len(request.messages) - len(messages)]  # the server's
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
    added = plain is None and any(m.tools for m in request.messages)  # mid-conversation
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


def _plain_input(messages: Sequence[Message], to_wire: Mapping[str, str]) -> list[Item] | None:
    """The ``input`` items of messages holding only the usual (one text per user or system
    message, texts and function calls from the assistant, text results), none with provider
    data or tools of its own: what `_encode_input` gives them, written directly; None for
    anything else, which takes the general path."""
    items: list[Item] = []
    append = items.append
    part: Any  # told apart by its exact type, the cheapest test
    for message in messages:
        if message.provider_data is not None or message.tools:
            return None
        role = message.role
        parts = message.parts
        if role == "tool":
            for part in parts:
                if type(part) is not ToolResultPart or part.provider_data is not None:
                    return None
                text = part.content
                if type(text) is not str:
                    return None
                text = text or EMPTY_OUTPUT
                if part.is_error and not text.startswith("Error:"):
                    text = ERROR_PREFIX + text
                append({"type": "function_call_output", "call_id": part.call_id,
                        "output": text})
        elif role == "assistant":
            for part in parts:
                kind = type(part)
                if (kind is not TextPart and kind is not ToolCallPart) \
                        or part.provider_data is not None:
                    return None
                if kind is TextPart:
                    append({"role": "assistant", "content": part.text})
                elif not part.freeform:
                    name = part.name
                    raw = part.raw_arguments
                    append({"type": "function_call", "call_id": part.id,
                            "name": to_wire.get(name, name) if to_wire else name,
                            "arguments": raw if raw is not None else part.arguments_text})
                else:
                    return None
        elif (role == "user" or role == "system") and len(parts) == 1:
            part = parts[0]
            if type(part) is not TextPart or part.provider_data is not None:
                return None
            append({"role": role, "content": part.text})
        else:
            return None
    return items


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


def tool_leaves(tools: Any) -> list[Any]:
    """A tool list with its namespaces opened."""
    out: list[Any] = []
    for tool in tools if isinstance(tools, list) else ():
        inner = tool.get("tools") if isinstance(tool, dict) and tool.get("type") == "namespace" \
            else None
        out.extend(tool_leaves(inner) if isinstance(inner, list) else [tool])
    return out


def readable_tool(tool: Any) -> bool:
    """Whether a tool of an ``additional_tools`` item is read as a canonical one."""
    return (isinstance(tool, dict) and tool.get("type") == "function") or is_responses_custom(tool)


def _added_item(message: Message, names: NameMap, notes: list[Note]) -> Item:
    data = own(message.provider_data)
    data = data if isinstance(data, dict) else {}
    stored = data.get(ADDED)
    same = isinstance(stored, list) and [
        decode_tool(t, "tools") for t in tool_leaves(stored) if readable_tool(t)
    ] == list(message.tools)
    item = {k: v for k, v in data.items() if k not in (ADDED, "unread_tools")}
    item.setdefault("type", "additional_tools")
    item.setdefault("role", "developer")
    item["tools"] = stored if same else [encode_tool(t, names, notes) for t in message.tools]
    return item


# ------------------------------------------------------------------------ what the provider refuses
