"""gemini-interactions tool declarations and the tool choice, both ways.

Owns: `encode_tools` (each `ToolSpec` as a ``{"type": "function", ...}`` tool, its JSON Schema
sent unchanged as ``parameters``: this API takes JSON Schema as it is), `decode_tools` (the
function tools of a body back as specs, every other tool kept whole for the provider options),
and `encode_choice` / `decode_choice` (`ToolChoice` <-> ``generation_config.tool_choice``).
Must not import the other modules of this wire, transport, client or any vendor SDK.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolwire.codecs.base import NameMap, Note
from toolwire.codecs.base import wrong_shape as wrong
from toolwire.codecs.gemini_interactions import as_list
from toolwire.codecs.gemini_interactions.parts import WIRE
from toolwire.transcript import ToolChoice, ToolSpec

_FUNCTION_KEYS = ("type", "name", "description", "parameters")


def encode_tools(tools: Sequence[ToolSpec], names: NameMap, notes: list[Note]) -> list[Any]:
    """The request's tools as function tools."""
    out: list[Any] = []
    for spec in tools:
        tool: dict[str, Any] = {"type": "function", "name": names.wire(spec.name)}
        if spec.description:
            tool["description"] = spec.description
        tool["parameters"] = dict(spec.input_schema)
        if spec.deferred:
            tool["defer_loading"] = True
        if spec.strict:
            notes.append(Note(kind="field_dropped", subject=spec.name, detail=(
                f"{WIRE} has no strict mode for a function; its schema is sent as it is")))
        out.append(tool)
    return out


def decode_tools(value: Any, where: str) -> tuple[list[ToolSpec], list[Any]]:
    """A body's tools: function tools as specs, the others (the server's own tools) as given."""
    specs: list[ToolSpec] = []
    others: list[Any] = []
    for n, tool in enumerate(as_list(value, where, "a list of tools")):
        at = f"{where}[{n}]"
        if not isinstance(tool, Mapping):
            raise wrong(at, "an object (a tool)", tool)
        if tool.get("type") != "function" or set(tool) - {*_FUNCTION_KEYS, "defer_loading"}:
            others.append(tool)
            continue
        name = tool.get("name")
        if not isinstance(name, str) or not name:
            raise wrong(f"{at}.name", "a tool name", name)
        schema = tool.get("parameters")
        if schema is not None and not isinstance(schema, Mapping):
            raise wrong(f"{at}.parameters", "an object (a JSON Schema)", schema)
        description = tool.get("description")
        specs.append(ToolSpec(
            name=name, description=description if isinstance(description, str) else "",
            input_schema=dict(schema) if schema is not None else {"type": "object",
                                                                  "properties": {}},
            deferred=tool.get("defer_loading") is True))
    return specs, others


def encode_choice(choice: ToolChoice | None, names: NameMap, notes: list[Note]) -> Any:
    """A tool choice as ``tool_choice`` (None: the API's default, ``auto``)."""
    if choice is None:
        return None
    if choice.parallel is not None:
        notes.append(Note(kind="field_dropped", subject="tool_choice.parallel", detail=(
            f"{WIRE} has no setting for parallel calls; left out")))
    if choice.mode == "tool" and choice.name:
        return {"allowed_tools": {"mode": "any", "tools": [names.wire(choice.name)]}}
    return {"auto": "auto", "required": "any", "none": "none"}.get(choice.mode, "auto")


def decode_choice(value: Any, names: NameMap, where: str) -> ToolChoice | None:
    """``tool_choice`` as a `ToolChoice` (None when absent)."""
    if value is None:
        return None
    if isinstance(value, str):
        mode = {"auto": "auto", "any": "required", "validated": "required",
                "none": "none"}.get(value)
        if mode is None:
            raise wrong(where, "'auto', 'any', 'none' or 'validated'", value)
        return ToolChoice(mode=mode)  # type: ignore[arg-type]
    if not isinstance(value, Mapping):
        raise wrong(where, "a string or an object", value)
    allowed = value.get("allowed_tools")
    if not isinstance(allowed, Mapping):
        return ToolChoice()
    tools = allowed.get("tools")
    if isinstance(tools, list) and len(tools) == 1 and isinstance(tools[0], str) \
            and allowed.get("mode") in ("any", "validated"):
        return ToolChoice(mode="tool", name=names.user(tools[0]))
    return ToolChoice(mode="required" if allowed.get("mode") == "any" else "auto")
