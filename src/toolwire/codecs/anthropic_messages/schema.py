"""Anthropic Messages: tool definitions, and their input schemas as the API accepts them.

Owns how a tool is written and read (``name``, ``description``, ``input_schema``, ``strict``,
other per-tool settings and server tools kept in their places) and the rules for
``input_schema``: the root must say ``"type": "object"``, and a tool sent with ``strict: true``
needs ``"additionalProperties": false`` on every object and may not use numeric or length
constraints (those are moved into the description, where the model can still read them) nor
``oneOf`` (sent as ``anyOf``). Never changes the caller's schema; reports every change as a
note. Imports only `toolwire.transcript`, `toolwire.errors`, `toolwire.codecs.base` and this
wire's ``parts``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from toolwire.codecs.anthropic_messages.parts import WIRE, ToolNames
from toolwire.codecs.base import Note
from toolwire.errors import WireFormatError
from toolwire.transcript import ToolChoice, ToolSpec

# Keywords the strict-mode grammar compiler does not take; kept for the model as text.
_MOVED = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "maxItems",
    "minProperties",
    "maxProperties",
)
_CHILD_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_CHILD_LISTS = ("anyOf", "allOf", "oneOf", "prefixItems")
_CHILD_ONE = ("items", "not", "if", "then", "else", "contains", "propertyNames")


def _is_object(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "object" or (isinstance(kind, list) and "object" in kind):
        return True
    return kind is None and "properties" in schema


def _strict(schema: dict[str, Any], path: str, changes: list[str]) -> None:
    here = path or "/"
    if "oneOf" in schema and "anyOf" not in schema:
        schema["anyOf"] = schema.pop("oneOf")
        changes.append(f"oneOf sent as anyOf at {here}")
    if _is_object(schema) and schema.get("additionalProperties") is not False:
        was = "added" if "additionalProperties" not in schema else "forced"
        schema["additionalProperties"] = False
        changes.append(f"{was} additionalProperties: false at {here}")
    moved = {k: schema.pop(k) for k in _MOVED if k in schema}
    min_items = schema.get("minItems")
    if isinstance(min_items, int) and min_items > 1:
        moved["minItems"] = schema.pop("minItems")
    if moved:
        hint = "{" + ", ".join(f"{k}: {json.dumps(v)}" for k, v in moved.items()) + "}"
        text = schema.get("description")
        schema["description"] = f"{text}\n\n{hint}" if isinstance(text, str) and text else hint
        changes.append(f"moved {', '.join(moved)} into the description at {here}")
    for key in _CHILD_MAPS:
        children = schema.get(key)
        if isinstance(children, dict):
            for name, child in children.items():
                if isinstance(child, dict):
                    _strict(child, f"{path}/{key}/{name}", changes)
    for key in _CHILD_LISTS:
        children = schema.get(key)
        if isinstance(children, list):
            for i, child in enumerate(children):
                if isinstance(child, dict):
                    _strict(child, f"{path}/{key}/{i}", changes)
    for key in _CHILD_ONE:
        child = schema.get(key)
        if isinstance(child, dict):
            _strict(child, f"{path}/{key}", changes)
        elif key == "items" and isinstance(child, list):
            for i, item in enumerate(child):
                if isinstance(item, dict):
                    _strict(item, f"{path}/items/{i}", changes)


def input_schema(name: str, schema: Mapping[str, Any], *, strict: bool,
                 notes: list[Note]) -> dict[str, Any]:
    """The schema to send for tool ``name``: the original when it fits, else a fixed copy."""
    if not strict and "type" in schema:
        return schema if type(schema) is dict else copy.deepcopy(dict(schema))
    out = copy.deepcopy(dict(schema))
    changes: list[str] = []
    if "type" not in out:
        out = {"type": "object", **out}
        changes.append('added "type": "object" at the root')
    if strict:
        _strict(out, "", changes)
    if changes:
        notes.append(Note(kind="schema_rewritten", subject=name, detail="; ".join(changes)))
    return out


# --------------------------------------------------------------------------- tool definitions

_TOOL_KEYS = frozenset({"name", "description", "input_schema", "strict", "allowed_callers",
                        "defer_loading", "input_examples"})

CODE_EXECUTION = "code_execution"
"""The name of Anthropic's code execution tool, whose code calls the tools that allow it."""


SEARCH_TOOL = {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
"""Anthropic's server-side tool search, added to a request that has deferred tools."""


def _has_search(stored: Any) -> bool:
    return isinstance(stored, list) and any(
        isinstance(t, Mapping) and str(t.get("type", "")).startswith("tool_search_tool")
        for t in stored)


def _add_code_execution(tools: Sequence[ToolSpec], stored: Any, encoded: list[dict[str, Any]],
                        notes: list[Note]) -> None:
    """A tool that code may call needs the code execution tool in the list: added, in the
    version its ``allowed_callers`` names, when the request has none (``tools``: those that
    name allowed callers)."""
    wanted = next((c for s in tools for c in s.allowed_callers
                   if c.startswith(CODE_EXECUTION)), None)
    if wanted is None or (isinstance(stored, list) and any(
            isinstance(t, Mapping) and str(t.get("type", "")).startswith(CODE_EXECUTION)
            for t in stored)):
        return
    encoded.append({"type": wanted, "name": CODE_EXECUTION})
    notes.append(Note(kind="code_execution_added", subject="tools", detail=(
        f"a tool allows calls from {wanted}, so the {CODE_EXECUTION} tool was added")))


def encode_tools(tools: Sequence[ToolSpec], stored: Any, *, nm: ToolNames,
                  notes: list[Note]) -> list[dict[str, Any]]:
    encoded: list[dict[str, Any]] = []
    fit = nm.fit
    deferred = False
    called: list[ToolSpec] = []  # tools that name callers other than the model
    for spec in tools:
        name, schema = spec.name, spec.input_schema
        if spec.strict or type(schema) is not dict or "type" not in schema:
            schema = input_schema(name, schema, strict=spec.strict, notes=notes)
        tool: dict[str, Any] = (
            {"name": name if name in fit else nm.wire(name), "description": spec.description,
             "input_schema": schema}
            if spec.description else
            {"name": name if name in fit else nm.wire(name), "input_schema": schema})
        if spec.strict:
            tool["strict"] = True
        if spec.deferred:
            tool["defer_loading"] = deferred = True
        if spec.examples:
            tool["input_examples"] = [copy.deepcopy(dict(e)) for e in spec.examples]
        if spec.allowed_callers:
            tool["allowed_callers"] = list(spec.allowed_callers)
            called.append(spec)
        encoded.append(tool)
    if called:
        _add_code_execution(called, stored, encoded, notes)
    if deferred and not _has_search(stored):
        encoded.append(dict(SEARCH_TOOL))
        notes.append(Note(kind="tool_search", subject="tools", detail=(
            "deferred tools are sent with defer_loading and found by the server's "
            f"{SEARCH_TOOL['name']} tool")))
    if not isinstance(stored, list):
        return encoded
    # The body this request was decoded from had server tools or per-tool settings
    # (cache_control, defer_loading...): keep them, in their places.
    out: list[dict[str, Any]] = []
    for entry in stored:
        if not isinstance(entry, Mapping):
            continue
        if entry.get("type") in (None, "custom"):
            match = next((t for t in encoded if t["name"] == entry.get("name")), None)
            if match is not None:
                encoded.remove(match)
                extra = {k: copy.deepcopy(v) for k, v in entry.items() if k not in _TOOL_KEYS}
                out.append({**match, **extra})
        else:
            out.append(copy.deepcopy(dict(entry)))
    return out + encoded


def _callers(raw: Any) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(c, str) for c in raw):
        raise WireFormatError(f"{WIRE}: a tool's 'allowed_callers' must be a list of strings")
    return tuple(raw)


def decode_tools(raw: Any) -> tuple[list[ToolSpec], bool]:
    """The custom tools as specs, and whether the list held more than specs can say."""
    if raw is None:
        return [], False
    if not isinstance(raw, list):
        raise WireFormatError(f"{WIRE}: 'tools' must be a list")
    specs: list[ToolSpec] = []
    keep = False
    for tool in raw:
        if not isinstance(tool, Mapping):
            raise WireFormatError(f"{WIRE}: every tool must be an object")
        if tool.get("type") not in (None, "custom"):
            keep = True
            continue
        extra = {k for k, v in tool.items() if k not in _TOOL_KEYS and v is not None}
        keep = keep or bool(extra - {"type"})
        schema = tool.get("input_schema")
        specs.append(ToolSpec(
            name=str(tool.get("name") or ""),
            description=str(tool.get("description") or ""),
            input_schema=dict(schema) if isinstance(schema, Mapping) else {"type": "object"},
            strict=bool(tool.get("strict")),
            allowed_callers=_callers(tool.get("allowed_callers")),
            deferred=tool.get("defer_loading") is True,
            examples=tuple(e for e in tool.get("input_examples") or () if isinstance(e, Mapping)),
        ))
    return specs, keep


# --------------------------------------------------------------------------- tool choice


def encode_choice(choice: ToolChoice, *, nm: ToolNames, notes: list[Note]) -> dict[str, Any]:
    out: dict[str, Any]
    if choice.mode == "tool" and choice.name:
        out = {"type": "tool", "name": nm.wire(choice.name)}
    elif choice.mode == "tool":
        notes.append(Note(kind="choice_changed", subject="tool_choice",
                          detail="mode 'tool' without a name sent as 'any'"))
        out = {"type": "any"}
    elif choice.mode == "required":
        out = {"type": "any"}
    else:
        out = {"type": choice.mode}
    if choice.parallel is not None:
        if choice.mode == "none":
            notes.append(Note(kind="choice_changed", subject="tool_choice",
                              detail="'none' takes no parallel setting; dropped"))
        else:
            out["disable_parallel_tool_use"] = not choice.parallel
    return out


_CHOICES: dict[Any, Any] = {"auto": "auto", "any": "required", "tool": "tool"}


def decode_choice(raw: Any) -> ToolChoice | None:
    if not isinstance(raw, Mapping):
        return None
    kind = raw.get("type")
    flag = raw.get("disable_parallel_tool_use")
    parallel = None if not isinstance(flag, bool) else not flag
    if kind == "none":
        return ToolChoice(mode="none")
    mode = _CHOICES.get(kind) if isinstance(kind, str) else None
    if mode is None:
        return None
    return ToolChoice(mode=mode, name=str(raw.get("name") or "") if mode == "tool" else None,
                      parallel=parallel)
