"""Gemini's OpenAPI-subset ``Schema`` (the ``parameters`` field of a function declaration).

Owns: `to_openapi`, which rewrites an ordinary JSON Schema into the subset Gemini's
``parameters`` accepts (on a copy, listing every change), and `from_openapi`, which reads such a
schema back as JSON Schema. Used only by the gemini-generate codec. Imports nothing from toolwire
but the transcript's JSON alias; no HTTP, no vendor SDK.

The subset: upper-case ``type`` names (one type per node, ``nullable`` for null), string
``enum`` values only, ``anyOf`` rather than ``oneOf``, inclusive bounds only, no
``additionalProperties``, ``$schema``, ``$ref`` or ``const``. Anything else makes the server
reject the whole request, so it is rewritten or dropped here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from toolwire.transcript import JSON

# Keywords copied as they are (after their sub-schemas are rewritten).
_PLAIN = (
    "title",
    "description",
    "pattern",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "minProperties",
    "maxProperties",
    "propertyOrdering",
    "default",
    "example",
    "required",
)
_FORMATS = {
    "STRING": {"enum", "date-time"},
    "NUMBER": {"float", "double"},
    "INTEGER": {"int32", "int64"},
}
_META = ("$schema", "$id", "$comment", "$defs", "definitions", "$anchor")


def _where(path: str) -> str:
    return path or "(root)"


def _enum_text(value: JSON) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class _Rewriter:
    def __init__(self, root: Mapping[str, JSON]) -> None:
        self.root = root
        self.changes: list[str] = []
        self.upper_cased = False
        self._active: list[str] = []

    def note(self, path: str, what: str) -> None:
        self.changes.append(f"{_where(path)}: {what}")

    def resolve(self, ref: str) -> JSON:
        if not ref.startswith("#"):
            return None
        node: JSON = self.root
        for raw in ref[1:].split("/"):
            if not raw:
                continue
            key = raw.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, Mapping) or key not in node:
                return None
            node = node[key]
        return node

    def node(self, schema: JSON, path: str) -> dict[str, Any]:
        if not isinstance(schema, Mapping):
            if schema is not True:
                self.note(path, "a schema that is not an object was replaced by an open one")
            return {}
        rest = dict(schema)
        ref = rest.pop("$ref", None)
        if isinstance(ref, str):
            return self._ref(ref, rest, path)
        for key in _META:
            if key in rest:
                rest.pop(key)
                self.note(path, f"dropped {key!r}")
        out: dict[str, Any] = {}
        nullable = rest.pop("nullable", None) is True
        variants: list[dict[str, Any]] = []
        nullable = self._type(rest.pop("type", None), out, variants, path) or nullable
        if "const" in rest:
            const = rest.pop("const")
            if const is None:
                nullable = True
                self.note(path, "const null turned into nullable")
            else:
                rest.setdefault("enum", [const])
                self.note(path, "const turned into a one-value enum")
        if "enum" in rest:
            nullable = self._enum(rest.pop("enum"), out, path) or nullable
        if "oneOf" in rest:
            rest.setdefault("anyOf", rest.pop("oneOf"))
            self.note(path, "oneOf turned into anyOf")
        if "allOf" in rest:
            self._all_of(rest, path)
        nullable = self._any_of(rest.pop("anyOf", None), out, variants, path) or nullable
        self._bounds(rest, path)
        if "examples" in rest:
            examples = rest.pop("examples")
            if isinstance(examples, list) and examples and "example" not in rest:
                rest["example"] = examples[0]
            self.note(path, "examples turned into a single example")
        if "properties" in rest:
            props = rest.pop("properties")
            if isinstance(props, Mapping) and props:
                out["properties"] = {
                    k: self.node(v, f"{path}/properties/{k}") for k, v in props.items()
                }
            else:
                self.note(path, "empty properties dropped")
        if "items" in rest:
            items = rest.pop("items")
            if isinstance(items, list):
                self.note(path, "tuple items reduced to the first item schema")
                items = items[0] if items else {}
            out["items"] = self.node(items, f"{path}/items")
        if "additionalProperties" in rest:
            rest.pop("additionalProperties")
            self.note(path, "dropped 'additionalProperties'")
        fmt = rest.pop("format", None)
        if fmt is not None:
            if isinstance(fmt, str) and fmt in _FORMATS.get(str(out.get("type")), set()):
                out["format"] = fmt
            else:
                self.note(path, f"dropped format {fmt!r}")
        for key in _PLAIN:
            if key in rest:
                out[key] = rest.pop(key)
        for key in sorted(rest):
            self.note(path, f"dropped unsupported keyword {key!r}")
        if nullable:
            out["nullable"] = True
        return out

    def _ref(self, ref: str, siblings: dict[str, Any], path: str) -> dict[str, Any]:
        target = self.resolve(ref)
        base: dict[str, Any]
        if target is None:
            self.note(path, f"$ref {ref!r} could not be resolved and was dropped")
            base = {}
        elif ref in self._active:
            self.note(path, f"recursive $ref {ref!r} replaced by a plain object")
            base = {"type": "OBJECT"}
        else:
            self._active.append(ref)
            base = self.node(target, path)
            self._active.pop()
            self.note(path, f"$ref {ref!r} inlined")
        if siblings:
            base.update(self.node(siblings, path))
        return base

    def _type(
        self, raw: JSON, out: dict[str, Any], variants: list[dict[str, Any]], path: str
    ) -> bool:
        if isinstance(raw, str):
            out["type"] = raw.upper()
            self.upper_cased = self.upper_cased or raw != raw.upper()
            return False
        if not isinstance(raw, list):
            return False
        names = [t for t in raw if isinstance(t, str) and t != "null"]
        nullable = "null" in raw
        if len(names) == 1:
            out["type"] = names[0].upper()
            with_null = " with nullable" if nullable else ""
            self.note(path, f"type list turned into one type{with_null}")
        elif names:
            variants.extend({"type": t.upper()} for t in names)
            self.note(path, "type list turned into anyOf")
        elif nullable:
            out["type"] = "NULL"
            self.note(path, "type list turned into one type")
        return nullable

    def _enum(self, raw: JSON, out: dict[str, Any], path: str) -> bool:
        if not isinstance(raw, list):
            self.note(path, "dropped an enum that is not a list")
            return False
        nullable = None in raw
        values = [v for v in raw if v is not None]
        if nullable:
            self.note(path, "null removed from enum, nullable set instead")
        if any(not isinstance(v, str) for v in values):
            self.note(path, "enum values turned into strings")
        out["enum"] = [_enum_text(v) for v in values]
        if out.get("type") != "STRING":
            if "type" in out:
                self.note(path, f"type {out['type']} changed to STRING to carry the enum")
            out["type"] = "STRING"
        return nullable

    def _all_of(self, rest: dict[str, Any], path: str) -> None:
        parts = rest.pop("allOf")
        if not isinstance(parts, list):
            return
        for part in parts:
            if not isinstance(part, Mapping):
                continue
            for key, value in part.items():
                if key == "properties" and isinstance(value, Mapping):
                    merged = dict(rest.get("properties") or {})
                    merged.update(value)
                    rest["properties"] = merged
                elif key == "required" and isinstance(value, list):
                    rest["required"] = [*rest.get("required", []), *value]
                else:
                    rest.setdefault(key, value)
        self.note(path, "allOf merged into one schema")

    def _any_of(
        self, raw: JSON, out: dict[str, Any], variants: list[dict[str, Any]], path: str
    ) -> bool:
        nullable = False
        if isinstance(raw, list):
            for i, sub in enumerate(raw):
                if isinstance(sub, Mapping) and sub.get("type") == "null" and len(sub) == 1:
                    nullable = True
                    self.note(path, "null variant of anyOf turned into nullable")
                    continue
                variants.append(self.node(sub, f"{path}/anyOf/{i}"))
        if len(variants) == 1 and nullable:
            only = variants.pop()
            for key, value in only.items():
                out.setdefault(key, value)
        elif variants:
            out["anyOf"] = variants
        return nullable

    def _bounds(self, rest: dict[str, Any], path: str) -> None:
        pairs = (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum"))
        for exclusive, inclusive in pairs:
            if exclusive not in rest:
                continue
            value = rest.pop(exclusive)
            if isinstance(value, bool):
                self.note(path, f"dropped {exclusive!r} (the bound is now inclusive)")
            elif isinstance(value, int | float) and inclusive not in rest:
                rest[inclusive] = value
                self.note(path, f"{exclusive} turned into {inclusive} (the bound is now inclusive)")
            else:
                self.note(path, f"dropped {exclusive!r}")


def to_openapi(schema: Mapping[str, JSON]) -> tuple[dict[str, Any] | None, list[str]]:
    """The ``parameters`` value for a tool's JSON Schema, and the list of changes made.

    Returns ``None`` for the schema when the tool takes no arguments: Gemini rejects an
    ``OBJECT`` whose ``properties`` is empty, so the key is left out.
    """
    rewriter = _Rewriter(schema)
    out = rewriter.node(schema, "")
    changes = list(rewriter.changes)
    if rewriter.upper_cased:
        changes.insert(0, "type names written in upper case")
    if out.get("type", "OBJECT") == "OBJECT" and not out.get("properties"):
        changes.append("no parameters, so 'parameters' is left out")
        return None, changes
    return out, changes


def from_openapi(schema: JSON) -> JSON:
    """Read a Gemini ``parameters`` schema back as JSON Schema (lower-case types, null types)."""
    if isinstance(schema, list):
        return [from_openapi(s) for s in schema]
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            out["type"] = value.lower()
        elif key == "properties" and isinstance(value, Mapping):
            out[key] = {k: from_openapi(v) for k, v in value.items()}
        elif key in ("items", "anyOf", "additionalProperties"):
            out[key] = from_openapi(value)
        elif key != "nullable":
            out[key] = value
    if schema.get("nullable") is True:
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
        elif isinstance(out.get("anyOf"), list):
            out["anyOf"] = [*out["anyOf"], {"type": "null"}]
    return out
