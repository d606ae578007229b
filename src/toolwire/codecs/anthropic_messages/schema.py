"""Anthropic Messages: tool input schemas rewritten to what the API accepts, on copies.

Owns the rules for ``input_schema``: the root must say ``"type": "object"``, and a tool sent
with ``strict: true`` needs ``"additionalProperties": false`` on every object and may not use
numeric or length constraints (those are moved into the description, where the model can
still read them) nor ``oneOf`` (sent as ``anyOf``). Never changes the caller's schema; reports
every change. Imports nothing from toolwire but `toolwire.codecs.base`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from toolwire.codecs.base import Note

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
