"""OpenAI Responses items <-> canonical parts, shared by the request, reply and stream code.

Owns: the wire name, the tool-name rule, the made-up item ids of the emulated wire, and the
conversion of one ``input`` or ``output`` item to one canonical part and back. An item that
carries more than its canonical part can say (server ids, ``status``, ``phase``, annotations,
``encrypted_content``) keeps that in ``provider_data[WIRE]``, so it goes back unchanged and in
its original position. Must not import transport, client or any vendor SDK.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from toolwire.codecs.base import NameMap, Note, call_id_for, dumps
from toolwire.codecs.strict import StrictSchemaError, strict_schema
from toolwire.transcript import (
    JSON,
    OpaquePart,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
    ToolSpec,
)

WIRE: Final = "openai-responses"

NAME_PATTERN: Final = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""Function names the Responses API accepts."""

CALL_KEYS: Final = frozenset({"type", "call_id", "name", "arguments"})
"""The keys of a ``function_call`` item that the canonical call itself carries."""

ERROR_PREFIX: Final = "Error: "
EMPTY_OUTPUT: Final = "(no output)"

Item = dict[str, Any]


def name_map(tools: Sequence[ToolSpec]) -> NameMap:
    """The name map for a tool list, the same on every turn (empty when every name fits)."""
    names = [t.name for t in tools]
    if all(map(NAME_PATTERN.match, names)):
        return NameMap()
    return NameMap.build(names, pattern=NAME_PATTERN)


def made_id(prefix: str, index: int, key: str) -> str:
    """The id this codec gives an item it renders itself (a reply with no server ids)."""
    digest = hashlib.sha256(f"{prefix}\x00{index}\x00{key}".encode()).hexdigest()[:32]
    return f"{prefix}_{digest}"


def own(data: Mapping[str, JSON] | None) -> Any:
    """This wire's entry of a provider_data mapping, or None."""
    if not data:
        return None
    return data.get(WIRE)


def content_seed(value: JSON) -> str:
    """A stable seed for made-up call ids when a reply has no id."""
    return hashlib.sha256(dumps(value).encode()).hexdigest()[:16]


# --------------------------------------------------------------------------- tools


def encode_tool(tool: ToolSpec, names: NameMap, notes: list[Note] | None = None) -> dict[str, Any]:
    """A flat function tool; ``strict`` is always sent, strict schemas rewritten on a copy.

    A schema that needs no rewrite is sent as the very object given (bodies are only
    serialised, never changed).
    """
    given = tool.input_schema
    schema: dict[str, Any] = given if isinstance(given, dict) else dict(given)
    strict = tool.strict
    said: list[Note] = []
    if strict:
        try:
            schema, changes = strict_schema(schema)
        except StrictSchemaError as exc:
            strict = False
            said.append(Note(kind="schema_rewritten", subject=tool.name,
                             detail=f"sent with strict false: {exc}"))
        else:
            if changes:
                said.append(Note(kind="schema_rewritten", subject=tool.name,
                                 detail="strict mode: " + "; ".join(changes)))
    if notes is not None:
        notes.extend(said)
    out: dict[str, Any] = {"type": "function", "name": names.wire(tool.name)}
    if tool.description:
        out["description"] = tool.description
    out["parameters"] = schema
    out["strict"] = strict
    return out


def encode_choice(choice: ToolChoice, names: NameMap) -> Any:
    if choice.mode == "tool":
        if choice.name:
            return {"type": "function", "name": names.wire(choice.name)}
        return "required"
    return choice.mode


# --------------------------------------------------------------------------- text of items


def message_text(item: Mapping[str, Any]) -> str:
    """The text of a message item: its string content or its text/refusal parts joined."""
    content = item.get("content")
    if isinstance(content, str):
        return content
    out: list[str] = []
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        if block.get("type") == "refusal" and isinstance(block.get("refusal"), str):
            out.append(block["refusal"])
        elif isinstance(block.get("text"), str):
            out.append(block["text"])
    return "".join(out)


def has_refusal(item: Mapping[str, Any]) -> bool:
    content = item.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "refusal" for b in content
    )


def reasoning_text(item: Mapping[str, Any]) -> str:
    """Readable reasoning: the summary texts (blank line between them), else the raw text."""
    summary = [
        s["text"]
        for s in item.get("summary") or ()
        if isinstance(s, dict) and isinstance(s.get("text"), str)
    ]
    if summary:
        return "\n\n".join(summary)
    return "".join(
        c["text"]
        for c in item.get("content") or ()
        if isinstance(c, dict) and isinstance(c.get("text"), str)
    )


def output_text(text: str) -> Item:
    return {"type": "output_text", "text": text, "annotations": []}


# --------------------------------------------------------------------------- parts -> items


def render_part(part: Part, names: NameMap, index: int | None) -> Item | None:
    """One assistant-side part as an item; None when this wire cannot carry it.

    ``index`` is the item's position in a reply's ``output``; None renders request ``input``
    items, where parts with no provider data take their plain form (no ids).
    """
    if isinstance(part, TextPart):
        return _render_text(part, index)
    if isinstance(part, ToolCallPart):
        return render_call(part, names, index)
    if isinstance(part, ReasoningPart):
        data = own(part.provider_data)
        if isinstance(data, dict):
            return data
        if index is None:
            return None
        summary = [{"type": "summary_text", "text": part.text}] if part.text else []
        return {"type": "reasoning", "id": made_id("rs", index, part.text), "summary": summary}
    if isinstance(part, OpaquePart):
        if part.wire == WIRE and isinstance(part.payload, dict):
            return part.payload
        return None
    return None


def _render_text(part: TextPart, index: int | None) -> Item:
    data = own(part.provider_data)
    if isinstance(data, dict) and message_text(data) == part.text:
        return data
    phase = data.get("phase") if isinstance(data, dict) else None
    item: Item
    if index is None:
        item = {"role": "assistant", "content": part.text}
    else:
        item = {
            "type": "message",
            "id": made_id("msg", index, part.text),
            "role": "assistant",
            "status": "completed",
            "content": [output_text(part.text)],
        }
    if phase is not None:
        item["phase"] = phase
    return item


def render_call(call: ToolCallPart, names: NameMap, index: int | None) -> Item:
    data = own(call.provider_data)
    item: Item
    if isinstance(data, dict):
        item = {k: v for k, v in data.items() if k not in CALL_KEYS}
    elif index is not None:
        item = {"id": made_id("fc", index, call.id),
                "status": "incomplete" if call.parse_error else "completed"}
    else:
        item = {}
    item["type"] = "function_call"
    item["call_id"] = call.id
    item["name"] = names.wire(call.name)
    item["arguments"] = call.arguments_text
    return item


def render_result(result: ToolResultPart) -> Item:
    """A tool result as a ``function_call_output`` item (text; errors start with "Error: ")."""
    text = result.content or EMPTY_OUTPUT
    if result.is_error and not text.startswith("Error:"):
        text = ERROR_PREFIX + text
    item: Item = {"type": "function_call_output", "call_id": result.call_id, "output": text}
    data = own(result.provider_data)
    if isinstance(data, dict):
        item.update((k, v) for k, v in data.items() if k not in ("type", "call_id"))
    return item


# --------------------------------------------------------------------------- items -> parts


def part_from_item(
    item: Item, names: NameMap, index: int | None, *, seed: str, call_index: int
) -> Part:
    """The canonical part for one assistant-side item (see `render_part` for ``index``)."""
    kind = item.get("type", "message")
    if kind == "message":
        plain = TextPart(text=message_text(item))
        if _may_be_rendered(item, "msg", index) and render_part(plain, names, index) == item:
            return plain
        return TextPart(text=plain.text, provider_data={WIRE: item})
    if kind == "function_call":
        return call_from_item(item, names, index, seed=seed, call_index=call_index)
    if kind == "reasoning":
        bare = ReasoningPart(text=reasoning_text(item))
        if index is not None and _may_be_rendered(item, "rs", index) \
                and render_part(bare, names, index) == item:
            return bare
        return ReasoningPart(text=bare.text, provider_data={WIRE: item})
    return OpaquePart(wire=WIRE, kind=str(kind), payload=item)


def _may_be_rendered(item: Item, prefix: str, index: int | None) -> bool:
    """A quick test before rendering to compare: could this item's id be one `made_id` gives?

    Request items are rendered without ids; server ids have another length than made ones.
    """
    item_id = item.get("id")
    if index is None:
        return item_id is None
    return (isinstance(item_id, str) and len(item_id) == len(prefix) + 33
            and item_id.startswith(prefix))


def call_from_item(
    item: Item, names: NameMap, index: int | None, *, seed: str, call_index: int
) -> ToolCallPart:
    call_id = item.get("call_id")
    if not isinstance(call_id, str) or not call_id:
        call_id = call_id_for(seed, call_index)
    name = names.user(str(item.get("name") or ""))
    args = item.get("arguments")
    call: ToolCallPart
    if isinstance(args, str):
        call = ToolCallPart.from_raw(id=call_id, name=name, raw_arguments=args)
    elif args is None:
        call = ToolCallPart.from_raw(id=call_id, name=name, raw_arguments="")
    else:
        call = ToolCallPart(id=call_id, name=name, arguments=args)
    if _may_be_rendered(item, "fc", index) and render_call(call, names, index) == item:
        return call
    extras = {k: v for k, v in item.items() if k not in CALL_KEYS}
    return ToolCallPart(
        id=call.id, name=call.name, arguments=call.arguments, raw_arguments=call.raw_arguments,
        parse_error=call.parse_error, provider_data={WIRE: extras},
    )


def result_from_item(item: Item, name: str | None) -> ToolResultPart:
    """A ``function_call_output`` item as a canonical result."""
    output = item.get("output")
    extras = {k: v for k, v in item.items() if k not in ("type", "call_id", "output")}
    if isinstance(output, str):
        text = output
    else:
        text = "".join(
            b["text"] for b in output if isinstance(b, dict) and isinstance(b.get("text"), str)
        ) if isinstance(output, list) else dumps(output)
        extras["output"] = output
    is_error = text.startswith(ERROR_PREFIX)
    if is_error:
        text = text[len(ERROR_PREFIX):]
    if text == EMPTY_OUTPUT:
        text = ""
    return ToolResultPart(
        call_id=str(item.get("call_id") or ""), content=text, is_error=is_error, name=name,
        provider_data={WIRE: extras} if extras else None,
    )
