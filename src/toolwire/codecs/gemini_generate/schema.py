"""How a gemini-generate tool definition carries its JSON Schema, both directions.

Owns: the ``FunctionDeclaration`` of a tool (`encode_declaration`) and the tools of a request
body read back (`decode_tools`), the choice between ``parametersJsonSchema`` (the schema sent
unchanged) and ``parameters``, and for the latter Gemini's OpenAPI-subset ``Schema``:
`to_openapi` rewrites an ordinary JSON Schema into it (on a copy, listing every change, which
becomes one ``schema_rewritten`` note per tool), `from_openapi` reads it back as JSON Schema.
Must not import the other modules of this wire but ``parts``, transport, client or any vendor
SDK.

The subset: upper-case ``type`` names (one type per node, ``nullable`` for null), string
``enum`` values only, ``anyOf`` rather than ``oneOf``, inclusive bounds only, no
``additionalProperties``, ``$schema``, ``$ref`` or ``const``. Anything else makes the server
reject the whole request, so it is rewritten or dropped here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from toolwire.codecs.base import NameMap, Note
from toolwire.codecs.base import wrong_shape as wrong
from toolwire.codecs.gemini_generate.parts import as_object
from toolwire.codecs.google_shared import as_list
from toolwire.transcript import JSON, ToolSpec

SCHEMA_FIELDS = ("parametersJsonSchema", "parameters")
"""The two fields a declaration may carry its schema in; the ``_schema_field`` setting."""
_DECLARED = ("name", "description", "parameters", "parametersJsonSchema")

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


# --------------------------------------------------------------------------- declarations


def encode_declaration(
    tool: ToolSpec, names: NameMap, schema_field: str, declared: Mapping[str, JSON],
    notes: list[Note],
) -> dict[str, Any]:
    """The ``FunctionDeclaration`` for ``tool``, its schema in ``schema_field``; ``declared``
    holds extra fields by wire name (the ``_declarations`` setting)."""
    name = names.wire(tool.name)
    out: dict[str, Any] = {"name": name}
    if tool.description:
        out["description"] = tool.description
    if schema_field == "parameters":
        params, changes = to_openapi(tool.input_schema)
        if params is not None:
            out["parameters"] = params
        if changes:
            notes.append(Note(kind="schema_rewritten", subject=tool.name,
                              detail="; ".join(changes)))
    else:
        schema = tool.input_schema
        out["parametersJsonSchema"] = schema if isinstance(schema, dict) else dict(schema)
    if tool.strict:
        notes.append(Note(kind="field_dropped", subject=tool.name,
                          detail="Gemini has no per-tool strict mode; strict not sent"))
    extra = declared.get(name) if declared else None
    if extra is not None and isinstance(extra, Mapping):
        out.update((k, v) for k, v in extra.items() if k not in out)
    return out


def decode_tools(tools: list[Any], options: dict[str, Any]) -> list[ToolSpec]:
    """A body's ``tools`` as specs; what a spec cannot hold goes to ``options`` (other tool
    entries under ``tools``, extra declaration fields under ``_declarations``, and
    ``_schema_field`` when the body used ``parameters``)."""
    specs: list[ToolSpec] = []
    other: list[Any] = []
    declared: dict[str, Any] = {}
    for i, entry in enumerate(tools):
        if not isinstance(entry, Mapping):
            raise wrong(f"tools[{i}]", "an object (a tool)", entry)
        key = "function_declarations" if "function_declarations" in entry and \
            "functionDeclarations" not in entry else "functionDeclarations"
        declarations = as_list(entry.get(key), f"tools[{i}].{key}", "a list of declarations")
        rest = {k: v for k, v in entry.items()
                if k not in ("functionDeclarations", "function_declarations")}
        if rest:
            other.append(rest)
        for j, decl in enumerate(declarations):
            specs.append(_decode_declaration(decl, f"tools[{i}].{key}[{j}]", declared, options))
    if other:
        options["tools"] = other
    if declared:
        options["_declarations"] = declared
    return specs


def _decode_declaration(
    decl: Any, where: str, declared: dict[str, Any], options: dict[str, Any]
) -> ToolSpec:
    if not isinstance(decl, Mapping):
        raise wrong(where, "an object (a function declaration)", decl)
    name = decl.get("name")
    if not isinstance(name, str) or not name:
        raise wrong(f"{where}.name", "a non-empty string", name)
    description = decl.get("description")
    if description is not None and not isinstance(description, str):
        raise wrong(f"{where}.description", "a string", description)
    kwargs: dict[str, Any] = {"name": name, "description": description or ""}
    json_schema = as_object(decl.get("parametersJsonSchema"), f"{where}.parametersJsonSchema")
    parameters = as_object(decl.get("parameters"), f"{where}.parameters")
    if json_schema is not None:
        kwargs["input_schema"] = json_schema
    elif parameters is not None:
        kwargs["input_schema"] = from_openapi(parameters)
        options["_schema_field"] = "parameters"
    elif "parameters" in decl:
        options["_schema_field"] = "parameters"
    extra = {k: v for k, v in decl.items() if k not in _DECLARED}
    if extra:
        declared[name] = extra
    return ToolSpec(**kwargs)
