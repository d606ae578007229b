"""Bedrock Converse: tool definitions, their input schemas as the API takes them, and the tool
choice (both in ``toolConfig``).

Owns how a tool is written and read: ``{"toolSpec": {"name", "description", "inputSchema":
{"json": schema}, "strict"?}}``, with ``cachePoint`` and ``systemTool`` entries of a decoded
body kept in their places. The schema's root must say ``"type": "object"``; one that does not
is sent as a fixed copy with a note. Never changes the caller's schema. Imports only
`toolwire.transcript`, `toolwire.errors`, `toolwire.codecs.base` and this wire's ``parts``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from toolwire.codecs.base import Note
from toolwire.codecs.bedrock_converse.parts import Names, obj, seq, text_of
from toolwire.transcript import Request, ToolChoice, ToolSpec

_SPEC_KEYS = frozenset({"name", "description", "inputSchema", "strict"})


def input_schema(name: str, schema: Mapping[str, Any], notes: list[Note]) -> dict[str, Any]:
    """The schema to send for tool ``name``: the original when it fits, else a fixed copy."""
    if schema.get("type") == "object":
        return dict(schema)
    notes.append(Note(kind="schema_rewritten", subject=name,
                      detail='added "type": "object" at the root'))
    return {**copy.deepcopy(dict(schema)), "type": "object"}


def tool_spec(spec: ToolSpec, *, nm: Names, notes: list[Note]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": nm.wire(spec.name)}
    if spec.description:
        out["description"] = spec.description
    out["inputSchema"] = {"json": input_schema(spec.name, spec.input_schema, notes)}
    if spec.strict:
        out["strict"] = True
    return {"toolSpec": out}


def encode_tools(tools: Sequence[ToolSpec], stored: Any, *, nm: Names,
                 notes: list[Note]) -> list[dict[str, Any]]:
    encoded = [tool_spec(t, nm=nm, notes=notes) for t in tools]
    stored_tools = stored.get("tools") if isinstance(stored, Mapping) else None
    if not isinstance(stored_tools, list):
        return encoded
    # The body this request came from had cache points, system tools or per-tool settings:
    # keep them in their places around the tools that are still offered.
    by_name = {t["toolSpec"]["name"]: t for t in encoded}
    out: list[dict[str, Any]] = []
    for entry in stored_tools:
        if not isinstance(entry, Mapping):
            continue
        spec = entry.get("toolSpec")
        if isinstance(spec, Mapping):
            match = by_name.pop(str(spec.get("name")), None)
            if match is not None:
                extra = {k: copy.deepcopy(v) for k, v in spec.items() if k not in _SPEC_KEYS}
                out.append({"toolSpec": {**match["toolSpec"], **extra}})
        else:
            out.append(copy.deepcopy(dict(entry)))
    return out + list(by_name.values())


def decode_tools(raw: Any) -> tuple[list[ToolSpec], bool]:
    """The tool specs, and whether the list held more than specs can say."""
    specs: list[ToolSpec] = []
    keep = False
    for n, tool in enumerate(seq(raw, "toolConfig", "tools")):
        tool = obj(tool, "toolConfig", "tools", n)
        spec = tool.get("toolSpec")
        if not isinstance(spec, Mapping):
            keep = True  # a cache point or a system tool
            continue
        path = ("toolConfig", "tools", n, "toolSpec")
        given = spec.get("inputSchema")
        schema = obj({} if given is None else given, *path, "inputSchema").get("json")
        keep = keep or not spec.keys() <= _SPEC_KEYS
        specs.append(ToolSpec(
            name=text_of(spec.get("name"), *path, "name"),
            description=text_of(spec.get("description"), *path, "description"),
            input_schema=dict(schema) if isinstance(schema, Mapping) else {"type": "object"},
            strict=spec.get("strict") is True,
        ))
    return specs, keep


# --------------------------------------------------------------------------- the tool choice


def encode_tool_config(request: Request, stored: Any, *, nm: Names,
                       notes: list[Note]) -> dict[str, Any] | None:
    """``toolConfig``: the tools (with what ``stored``, the decoded body's own, kept around
    them) and the tool choice; None when no tool is offered (a choice then is noted)."""
    if not (request.tools or stored):
        if request.tool_choice is not None and request.tool_choice.mode != "none":
            notes.append(Note(kind="choice_changed", subject="tool_choice",
                              detail="no tools are offered, so no tool choice is sent"))
        return None
    config: dict[str, Any] = {"tools": encode_tools(request.tools, stored, nm=nm, notes=notes)}
    choice = request.tool_choice
    wire_choice = encode_choice(choice, nm=nm, notes=notes) if choice else None
    if wire_choice is not None:
        config["toolChoice"] = wire_choice
    return config


def encode_choice(choice: ToolChoice, *, nm: Names, notes: list[Note]) -> dict[str, Any] | None:
    if choice.parallel is not None:
        notes.append(Note(kind="choice_changed", subject="tool_choice",
                          detail="Converse has no parallel setting; dropped"))
    if choice.mode == "tool" and choice.name:
        return {"tool": {"name": nm.wire(choice.name)}}
    if choice.mode in ("required", "tool"):
        return {"any": {}}
    if choice.mode == "none":
        notes.append(Note(kind="choice_changed", subject="tool_choice",
                          detail="Converse has no 'none' choice; the tools are offered with "
                                 "no choice set"))
        return None
    return {"auto": {}}


def decode_choice(raw: Any) -> ToolChoice | None:
    if not isinstance(raw, Mapping):
        return None
    if "auto" in raw:
        return ToolChoice(mode="auto")
    if "any" in raw:
        return ToolChoice(mode="required")
    tool = raw.get("tool")
    if isinstance(tool, Mapping) and isinstance(tool.get("name"), str):
        return ToolChoice(mode="tool", name=tool["name"])
    return None
