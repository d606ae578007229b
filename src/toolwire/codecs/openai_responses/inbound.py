"""OpenAI Responses: a body a client sent, read back into a canonical `Request`
(`decode_request`; a body of the wrong shape raises `WireFormatError` naming the field), and
the first rule a raw body breaks, worded as the API words it (`check_body`, which knows the
header Codex's lighter requests carry).

Assistant-side items in a row read as one assistant message, ``function_call_output`` items in
a row as one tool message. Pure: imports the transcript, the shared codec modules and this
wire's ``parts``, ``schema`` and ``request``; never the wire's reply or stream.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

from toolwire.codecs.base import (
    NameMap,
    tools_lack_schemas,
    wrong_shape,
)
from toolwire.codecs.model_checks import explicit_cache_problem
from toolwire.codecs.openai_media import (
    RESPONSES_ITEMS,
    responses_media,
    responses_result,
)
from toolwire.codecs.openai_responses import (
    media_problem,
    read_entries,
)
from toolwire.codecs.openai_responses.parts import (
    WIRE,
    Item,
    check_item,
    content_seed,
    part_from_item,
    result_from_item,
    typed,
)
from toolwire.codecs.openai_responses.request import (
    ADDED,
    BLOCKS,
    KNOWN_KEYS,
    NO_TOOLS,
    readable_tool,
    tool_leaves,
)
from toolwire.codecs.openai_responses.schema import (
    decode_choice,
    decode_tool,
    decode_tools,
)
from toolwire.codecs.openai_shared import keep_others
from toolwire.transcript import (
    Message,
    OpaquePart,
    Part,
    Request,
    TextPart,
    ToolCallPart,
)


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
    options: dict[str, Any] = {k: v for k, v in body.items() if k not in KNOWN_KEYS}
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

def _tools_message(item: Item, where: str) -> Message:
    """An ``additional_tools`` item as a system message adding its function tools; the list
    as it came goes back to this wire, and the tools no other wire can read are named."""
    leaves = tool_leaves(item.get("tools"))
    specs = [decode_tool(t, f"{where}.tools") for t in leaves if readable_tool(t)]
    kept = {k: v for k, v in item.items() if k != "tools"}
    kept[ADDED] = item.get("tools")
    unread = [f"{t.get('type')} {t.get('name') or ''}".strip() for t in leaves
              if isinstance(t, dict) and not readable_tool(t)]
    if unread:
        kept["unread_tools"] = unread
    return Message(role="system", tools=tuple(specs), provider_data={WIRE: kept})

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
