"""Ollama native chat: tool definitions, and the JSON Schema subset the server keeps.

Owns how a tool definition is written (`encode_tool`, with notes) and read (`decode_tool`), and
`rewrite_schema`: on a copy, cut a tool's schema down to what ``/api/chat`` passes on to the
model, and describe every change in a short phrase for the codec's `Note`. The server keeps,
at the top level, ``type, $defs, items, required, properties``, and for each property ``anyOf,
type, items, description, enum, properties, required``; everything else is dropped without a
word, so it is removed here where it can be reported. Local ``$ref``s are inlined (once per
reference chain, so recursive schemas end), ``oneOf`` is sent as ``anyOf`` and ``const`` as a
one-value ``enum``, keeping their meaning. ``items`` and ``$defs`` are sent as written: the
server keeps those subtrees whole.

Pure functions over plain JSON; imports only the transcript, the codec base and this wire's
``parts``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolwire.codecs.base import (
    NameMap,
    Note,
)
from toolwire.codecs.base import wrong_shape as wrong
from toolwire.codecs.ollama_chat.parts import (
    mapping,
    text_of,
)
from toolwire.transcript import (
    ToolSpec,
)

_TOP_KEEP = frozenset({"type", "$defs", "items", "required", "properties"})

_PROP_KEEP = frozenset({"anyOf", "type", "items", "description", "enum", "properties",
                        "required"})


# --------------------------------------------------------------------------- tool definitions


def encode_tool(tool: ToolSpec, names: NameMap, notes: list[Note]) -> dict[str, Any]:
    parameters, changes = rewrite_schema(tool.input_schema)
    if changes:
        notes.append(Note(kind="schema_rewritten", subject=tool.name,
                          detail="the server ignores other keywords: " + "; ".join(changes)))
    if tool.strict:
        notes.append(Note(kind="field_dropped", subject=tool.name,
                          detail="strict mode does not exist on this wire; calls are not forced "
                                 "to follow the schema"))
    return {"type": "function", "function": {
        "name": names.wire(tool.name), "description": tool.description, "parameters": parameters}}


def decode_tool(raw: Any, where: str) -> ToolSpec:
    tool = mapping(raw, where)
    if "function" in tool:
        where = f"{where}.function"
    function = mapping(tool.get("function", tool), where)
    name = text_of(function.get("name"), f"{where}.name")
    if not name:
        raise wrong(f"{where}.name", "a non-empty string", function.get("name"))
    description = text_of(function.get("description"), f"{where}.description")
    parameters = function.get("parameters")
    if parameters is None:
        return ToolSpec(name=name, description=description)
    return ToolSpec(name=name, description=description,
                    input_schema=dict(mapping(parameters, f"{where}.parameters")))


# --------------------------------------------------------------------------- the schema subset


def rewrite_schema(schema: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The schema as the server will see it, and the changes made (empty when none).

    The input is never changed; a schema that needs no change is returned as it is.
    """
    if isinstance(schema, dict) and _kept(schema):  # the usual schema, told at a look
        return schema, []
    rewrite = _SchemaRewrite(schema)
    out = rewrite.run()
    if not rewrite.changes and isinstance(schema, dict):
        return schema, []
    return out, rewrite.changes


def _kept(schema: dict[str, Any]) -> bool:
    """Whether the server keeps all of ``schema`` (so `_SchemaRewrite` would change nothing):
    a ``type``, only keywords kept at the top and, through ``properties`` and ``anyOf``, at
    each property."""
    if "type" not in schema or not _TOP_KEEP.issuperset(schema):
        return False
    properties = schema.get("properties")
    return not isinstance(properties, Mapping) or all(map(_kept_property,
                                                          properties.values()))


def _kept_property(node: Any) -> bool:
    if not isinstance(node, dict):
        return True
    if not _PROP_KEEP.issuperset(node):
        return False
    choices, properties = node.get("anyOf"), node.get("properties")
    return (not isinstance(choices, list) or all(map(_kept_property, choices))) and (
        not isinstance(properties, Mapping) or all(map(_kept_property, properties.values())))


class _SchemaRewrite:
    """Cuts one tool schema down to what the server keeps, recording every change.

    New objects are built for every level it walks; values it keeps are shared with the input
    (nothing here changes them).
    """

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.source = schema
        self.changes: list[str] = []

    def run(self) -> dict[str, Any]:
        node = self._inline(self.source, "/", ())
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "properties" and (type(value) is dict or isinstance(value, Mapping)):
                out[key] = {k: self._prop(v, f"/properties/{k}", ()) for k, v in value.items()}
            elif key in _TOP_KEEP:
                out[key] = value
            else:
                self.changes.append(f"removed {key} at /")
        if "type" not in out:
            out = {"type": "object", **out}
            self.changes.append("added type 'object' at /")
        return out

    def _inline(self, node: Mapping[str, Any], path: str, stack: tuple[str, ...]
                ) -> Mapping[str, Any]:
        ref = node.get("$ref")
        if not isinstance(ref, str):
            return node
        rest = {k: v for k, v in node.items() if k != "$ref"}
        target: Any = None
        for prefix, where in (("#/$defs/", "$defs"), ("#/definitions/", "definitions")):
            defs = self.source.get(where)
            if ref.startswith(prefix) and isinstance(defs, Mapping):
                target = defs.get(ref[len(prefix):])
        if not isinstance(target, Mapping) or ref in stack:
            self.changes.append(f"removed $ref {ref} at {path} (cannot be inlined)")
            return rest
        self.changes.append(f"inlined $ref {ref} at {path}")
        merged = {**target, **rest}
        return self._inline(merged, path, (*stack, ref))

    def _prop(self, node: Any, path: str, stack: tuple[str, ...]) -> Any:
        if not isinstance(node, dict):
            return node
        if isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            node = self._inline(node, path, stack)
            stack = (*stack, ref)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("anyOf", "oneOf") and isinstance(value, list):
                if key == "oneOf":
                    if "anyOf" in node:
                        self.changes.append(f"removed oneOf at {path}")
                        continue
                    self.changes.append(f"sent oneOf as anyOf at {path}")
                out["anyOf"] = [self._prop(v, f"{path}/{key}/{i}", stack)
                                for i, v in enumerate(value)]
            elif key == "const" and "enum" not in node:
                out["enum"] = [value]
                self.changes.append(f"sent const as enum at {path}")
            elif key == "properties" and isinstance(value, Mapping):
                out[key] = {k: self._prop(v, f"{path}/properties/{k}", stack)
                            for k, v in value.items()}
            elif key in _PROP_KEEP:
                out[key] = value
            else:
                self.changes.append(f"removed {key} at {path}")
        return out
