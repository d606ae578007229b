"""OpenAI Responses items <-> canonical parts, shared by the request, reply and stream code.

Owns: the wire name, the tool-name rule (`NameMap` use), the made-up item ids of the emulated
wire, the conversion of one ``input`` or ``output`` item to one canonical part and back, and the
shape checks of the fields the codec reads (`typed`, `check_item`: a `WireFormatError` naming
the field). An item that carries more than its canonical part can say (server ids, ``status``,
``phase``, annotations, ``encrypted_content``) keeps that in ``provider_data[WIRE]``, so it goes
back unchanged and in its original position. Imports only the transcript and
`toolwire.codecs.base`; must not import the wire's other modules, transport, client or any
vendor SDK.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, Final

import msgspec

from toolwire.codecs.base import NameMap, call_id_for, dumps, list_at, wrong_shape
from toolwire.codecs.openai_responses import NAME_PATTERN
from toolwire.transcript import (
    JSON,
    OpaquePart,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)

WIRE: Final = "openai-responses"

"""Function names the Responses API accepts."""

CALL_KEYS: Final = frozenset({"type", "call_id", "name", "arguments"})
"""The keys of a ``function_call`` item that the canonical call itself carries."""
CUSTOM_KEYS: Final = frozenset({"type", "call_id", "name", "input"})
"""The keys of a ``custom_tool_call`` item (a freeform call) that the canonical call carries."""

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


CONTINUE: Final = "_continue"
"""The codec setting (``provider_options["openai-responses"]``) that continues the last
stored response of the history: ``previous_response_id`` with only the newer items as
``input``, and ``store: true``; a reply decoded for such a request keeps its id."""
RESPONSE: Final = "response"
"""The key of a reply message's provider data that holds its response's id (kept when the
request asked for `CONTINUE`)."""


def continues(options: Mapping[str, Any] | None) -> bool:
    """Whether a request's provider options ask the codec for `CONTINUE`."""
    entry = own(options)
    return isinstance(entry, Mapping) and entry.get(CONTINUE) is True


def content_seed(value: JSON) -> str:
    """A stable seed for made-up call ids when a reply has no id."""
    return hashlib.sha256(dumps(value).encode()).hexdigest()[:16]


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


def reasoning_text(item: Mapping[str, Any], where: str = "a reasoning item") -> str:
    """Readable reasoning: the summary texts (blank line between them), else the raw text."""
    summary = [
        s["text"]
        for s in list_at(item.get("summary"), f"{where}.summary")
        if isinstance(s, dict) and isinstance(s.get("text"), str)
    ]
    if summary:
        return "\n\n".join(summary)
    return "".join(
        c["text"]
        for c in list_at(item.get("content"), f"{where}.content")
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
    keys = CUSTOM_KEYS if call.freeform else CALL_KEYS
    if isinstance(data, dict):
        item = {"type": None, **{k: v for k, v in data.items() if k not in keys}}
    elif index is not None:
        item = {"type": None, "id": made_id("ctc" if call.freeform else "fc", index, call.id),
                "status": "incomplete" if call.parse_error else "completed"}
    else:
        item = {"type": None}
    item["call_id"] = call.id
    item["name"] = names.wire(call.name)
    if call.freeform:  # a custom tool's call: its text input as it came
        item["type"] = "custom_tool_call"
        raw, args = call.raw_arguments, call.arguments
        item["input"] = raw if raw is not None else args if isinstance(args, str) \
            else call.arguments_text
    else:
        item["type"] = "function_call"
        item["arguments"] = call.arguments_text
    return item


KEYS = "_keys"
"""Kept with a result item's own fields: its keys in the order they came, when not the usual."""


def render_result(result: ToolResultPart) -> Item:
    """A tool result as a ``function_call_output`` item (text; errors start with "Error: ")."""
    text = result.text or EMPTY_OUTPUT
    if result.is_error and not text.startswith("Error:"):
        text = ERROR_PREFIX + text
    item: Item = {"type": "function_call_output", "call_id": result.call_id, "output": text}
    data = own(result.provider_data)
    if isinstance(data, dict):
        item.update((k, v) for k, v in data.items() if k not in ("type", "call_id", KEYS))
        if isinstance(order := data.get(KEYS), list):  # the item's keys in the order they came
            return {k: item[k] for k in (*order, *item) if k in item}
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
    if kind == "custom_tool_call":
        return custom_call_from_item(item, names, index, seed=seed, call_index=call_index)
    if kind == "reasoning":
        bare = ReasoningPart(text=reasoning_text(item, f"output[{index}]"))
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


def custom_call_from_item(
    item: Item, names: NameMap, index: int | None, *, seed: str, call_index: int
) -> ToolCallPart:
    """A ``custom_tool_call`` item as a freeform call: its text input, its other fields (item
    id, status, namespace, caller) kept to go back as they came."""
    call_id = item.get("call_id")
    if not isinstance(call_id, str) or not call_id:
        call_id = call_id_for(seed, call_index)
    text = item.get("input")
    text = text if isinstance(text, str) else ""
    call = ToolCallPart(id=call_id, name=names.user(str(item.get("name") or "")), arguments=text,
                        raw_arguments=text, freeform=True)
    if _may_be_rendered(item, "ctc", index) and render_call(call, names, index) == item:
        return call
    extras = {k: v for k, v in item.items() if k not in CUSTOM_KEYS}
    return msgspec.structs.replace(call, provider_data={WIRE: extras})


def result_from_item(item: Item, name: str | None) -> ToolResultPart:
    """A ``function_call_output`` item as a canonical result."""
    output = item.get("output")
    extras = {k: v for k, v in item.items() if k not in ("type", "call_id", "output")}
    if extras and list(item)[:3] != ["type", "call_id", "output"]:
        extras[KEYS] = list(item)
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


# --------------------------------------------------------------------------- shape checks


def typed(obj: Mapping[str, Any], key: str, kind: type, expected: str, where: str = "") -> Any:
    """``obj[key]`` when it is absent, null or of type ``kind``; else a `WireFormatError`."""
    value = obj.get(key)
    if value is None or (isinstance(value, kind) and (kind is bool or not isinstance(value, bool))):
        return value
    raise wrong_shape(f"{where}{key}", expected, value)


def check_item(item: Any, where: str) -> str:
    """The item's type after checking the fields this codec reads; `WireFormatError` if wrong."""
    if not isinstance(item, dict):
        raise wrong_shape(where, "an object (an input item)", item)
    kind = item.get("type", "message")
    if not isinstance(kind, str):
        raise wrong_shape(f"{where}.type", "a string", kind)
    if kind == "message":
        typed(item, "role", str, "a string", f"{where}.")
        content = item.get("content")
        if isinstance(content, list):
            for c_index, block in enumerate(content):
                if not isinstance(block, dict):
                    raise wrong_shape(f"{where}.content[{c_index}]", "an object", block)
        elif content is not None and not isinstance(content, str):
            raise wrong_shape(f"{where}.content", "a string or a list of content parts", content)
    elif kind == "function_call":
        typed(item, "call_id", str, "a string", f"{where}.")
        name = item.get("name")
        if not isinstance(name, str):
            raise wrong_shape(f"{where}.name", "a string", name)
        args = item.get("arguments")
        if args is not None and not isinstance(args, (str, dict)):
            raise wrong_shape(f"{where}.arguments", "a string or an object", args)
    elif kind == "custom_tool_call":
        typed(item, "call_id", str, "a string", f"{where}.")
        typed(item, "name", str, "a string", f"{where}.")
        typed(item, "input", str, "a string", f"{where}.")
    elif kind in ("function_call_output", "custom_tool_call_output"):
        call_id = item.get("call_id")
        if not isinstance(call_id, str):
            raise wrong_shape(f"{where}.call_id", "a string", call_id)
    return kind


def compaction_part(summary: str) -> OpaquePart:
    """The item the API's compaction puts in a reply (its summary of what came before, sealed
    in ``encrypted_content``), as the reply's part; it goes back as it came."""
    sealed = base64.b64encode(summary.encode()).decode()
    digest = hashlib.sha256(sealed.encode()).hexdigest()[:24]
    return OpaquePart(wire=WIRE, kind="compaction", payload={
        "type": "compaction", "id": f"cmp_{digest}", "encrypted_content": sealed})
