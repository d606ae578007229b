"""Schemas put into words for a model: a small valid example and what a schema accepts.

Owns: `example` (the ``send JSON like {...}`` value), `describe` (``a string or null``),
`show` and `quote` (values and names as compact JSON text). Pure functions over schema dicts.
Must not import anything from toolwire except `schema.walk`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from toolwire.schema.walk import JSONSchema, resolve


def _deref(node: Any, root: JSONSchema) -> Any:
    for _ in range(8):
        if isinstance(node, dict) and isinstance(node.get("$ref"), str):
            target = resolve(root, node["$ref"])
            if target is None:
                return node
            node = target
        else:
            break
    return node


_STRING_FORMATS = {
    "date-time": "2024-01-01T00:00:00Z",
    "date": "2024-01-01",
    "time": "12:00:00Z",
    "email": "user@example.com",
    "uri": "https://example.com",
    "url": "https://example.com",
    "uuid": "00000000-0000-0000-0000-000000000000",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
    "hostname": "example.com",
}


def _number_example(node: JSONSchema, integer: bool) -> int | float:
    low = node.get("minimum")
    if low is None and isinstance(node.get("exclusiveMinimum"), int | float):
        low = node["exclusiveMinimum"] + 1
    high = node.get("maximum")
    if high is None and isinstance(node.get("exclusiveMaximum"), int | float):
        high = node["exclusiveMaximum"] - 1
    value: int | float = 0
    if isinstance(low, int | float) and value < low:
        value = low
    if isinstance(high, int | float) and value > high:
        value = high
    if integer:
        return int(value)
    return value


def example(node: Any, root: JSONSchema, depth: int = 0) -> Any:
    """A small value of the shape ``node`` asks for (required fields only, where it can)."""
    node = _deref(node, root)
    if not isinstance(node, dict) or depth > 6:
        return "..."
    if isinstance(node.get("examples"), list) and node["examples"]:
        return node["examples"][0]
    if "const" in node:
        return node["const"]
    if isinstance(node.get("enum"), list) and node["enum"]:
        return node["enum"][0]
    if "default" in node and node["default"] is not None:
        return node["default"]
    for key in ("anyOf", "oneOf"):
        branches = node.get(key)
        if isinstance(branches, list) and branches:
            not_null = [
                b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")
            ]
            return example((not_null or branches)[0], root, depth + 1)
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), kind[0] if kind else None)
    if kind is None and ("properties" in node or "required" in node):
        kind = "object"
    if kind == "object":
        return _object_example(node, root, depth)
    if kind == "array":
        prefix = node.get("prefixItems")
        if isinstance(prefix, list):
            return [example(sub, root, depth + 1) for sub in prefix]
        items = node.get("items")
        if not isinstance(items, dict):
            return []
        return [example(items, root, depth + 1)] * max(1, int(node.get("minItems", 1)))
    if kind == "integer":
        return _number_example(node, integer=True)
    if kind == "number":
        return _number_example(node, integer=False)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    fmt = node.get("format")
    if kind == "string" and isinstance(fmt, str) and fmt in _STRING_FORMATS:
        return _STRING_FORMATS[fmt]
    low, high = node.get("minLength", 0), node.get("maxLength", 3)
    if not isinstance(low, int) or not isinstance(high, int):
        return "..."
    return "..."[:high] + "." * max(0, low - 3)


def _object_example(node: JSONSchema, root: JSONSchema, depth: int) -> dict[str, Any]:
    props = node.get("properties") or {}
    required = [name for name in node.get("required") or () if isinstance(name, str)]
    names = required or list(props)[:3]
    out: dict[str, Any] = {}
    for name in names:
        value = example(props.get(name, {}), root, depth + 1)
        if value is not None or name in required:
            out[name] = value
    return out


_NOUNS = {
    "string": ("a string", "strings"),
    "integer": ("an integer", "integers"),
    "number": ("a number", "numbers"),
    "boolean": ("a boolean", "booleans"),
    "null": ("null", "nulls"),
    "array": ("an array", "arrays"),
    "object": ("an object", "objects"),
}


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": "))
quote: Callable[[str], str] = json.encoder.encode_basestring  # type: ignore[attr-defined]
"""A string as a JSON string literal, non-ASCII kept as it is."""


def show(value: Any, limit: int = 40) -> str:
    """A value as compact JSON, cut to about ``limit`` characters."""
    kind = type(value)
    if kind is str:
        text = quote(value)
    elif kind is int:
        text = str(value)
    elif kind is bool or value is None:
        text = "null" if value is None else ("true" if value else "false")
    else:
        try:
            text = _ENCODER.encode(value)
        except (TypeError, ValueError):
            text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def type_noun(kind: str) -> str:
    return _NOUNS.get(kind, (kind, kind))[0]


def _join_or(phrases: list[str]) -> str:
    unique = list(dict.fromkeys(phrases))
    if len(unique) <= 2:
        return " or ".join(unique)
    return ", ".join(unique[:-1]) + " or " + unique[-1]


def one_of_values(values: Sequence[Any]) -> str:
    shown = ", ".join(show(v) for v in values[:10])
    more = ", …" if len(values) > 10 else ""
    return f"one of {shown}{more}" if len(values) > 1 else f"exactly {shown}"


def describe(node: Any, root: JSONSchema, depth: int = 0) -> str:
    """What a schema accepts, in a few words: ``a string``, ``an integer or null``..."""
    node = _deref(node, root)
    if node is False:
        return "nothing (not allowed)"
    if not isinstance(node, dict) or depth > 4:
        return "any value"
    if "const" in node:
        return f"exactly {show(node['const'])}"
    if isinstance(node.get("enum"), list) and node["enum"]:
        return one_of_values(node["enum"])
    for key in ("anyOf", "oneOf"):
        branches = node.get(key)
        if isinstance(branches, list) and branches:
            return _join_or([describe(b, root, depth + 1) for b in branches])
    kind = node.get("type")
    if isinstance(kind, list) and kind:
        return _join_or([type_noun(k) for k in kind if isinstance(k, str)])
    if kind == "array" and isinstance(node.get("items"), dict):
        items = _deref(node["items"], root)
        item_kind = items.get("type") if isinstance(items, dict) else None
        if isinstance(item_kind, str) and item_kind in _NOUNS:
            return f"an array of {_NOUNS[item_kind][1]}"
    if isinstance(kind, str):
        return type_noun(kind)
    if "properties" in node:
        return "an object"
    if isinstance(node.get("allOf"), list) and node["allOf"]:
        return describe(node["allOf"][0], root, depth + 1)
    return "any value"
