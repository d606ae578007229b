"""What OpenAI's two wires (openai-chat, openai-responses) share: strict schemas, error bodies.

Owns `encode_error` (the error body both APIs send) and `strict_schema`: the rewrite OpenAI's strict
function calling (Chat Completions and Responses) asks for. In that mode every object must close
itself (``additionalProperties: false``) and list every property as required; a property that was
optional stays optional in meaning by also accepting ``null``. Keywords the mode does not take are
removed, ``oneOf`` becomes ``anyOf``, ``allOf`` is merged, OpenAPI's ``nullable`` becomes a ``null``
type, and a ``$ref`` with sibling keywords is inlined. Each change is described in a short sentence
so codecs can put it in a `Note`. The ``schema`` module of each OpenAI wire (openai-chat,
openai-responses) decides when to call it and how to report what it changed.

Pure functions over plain JSON values. Must not import any other toolwire module.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

__all__ = [
    "STRICT_FORMATS",
    "STRICT_KEYWORDS",
    "TOOL_PLACES",
    "StrictSchemaError",
    "encode_error",
    "keep_others",
    "put_others",
    "strict_schema",
]

TOOL_PLACES = "_tool_places"
"""Kept in the provider options: where in a body's ``tools`` the tools kept as they came (built-in
ones, namespaces) stood, when not all last, so that the same wire gets each back in place."""


def keep_others(raw: Any, others: list[Any], options: dict[str, Any]) -> None:
    """Put ``others`` (the entries of the ``tools`` list ``raw`` kept as they came, in order) in
    ``options``, with their places in ``raw`` when not all of them come last."""
    if not others:
        return
    options["tools"] = others
    places, n = [], 0
    for index, tool in enumerate(raw if isinstance(raw, list) else ()):
        if n < len(others) and (tool is others[n] or tool == others[n]):
            places.append(index)
            n += 1
    if n == len(others) and places[0] != len(raw) - len(others):
        options[TOOL_PLACES] = places


def put_others(tools: list[Any], others: list[Any], places: Any) -> None:
    """Add ``others`` to ``tools`` (as encoded), each at its kept place (`keep_others`) when
    the places fit, else at the end."""
    if isinstance(places, list) and len(places) == len(others) and all(
            isinstance(p, int) and 0 <= p <= len(tools) + n for n, p in enumerate(places)):
        for place, tool in zip(places, others, strict=True):
            tools.insert(place, tool)
    else:
        tools.extend(others)


_ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error",
                404: "invalid_request_error", 429: "rate_limit_exceeded", 500: "server_error",
                503: "server_error"}


def encode_error(status: int, message: str) -> dict[str, Any]:
    """An error body as OpenAI's servers send it for ``status``."""
    return {"error": {"message": message, "type": _ERROR_TYPES.get(status, "server_error"),
                      "param": None, "code": "rate_limit_exceeded" if status == 429 else None}}

STRICT_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "enum", "const",
    "anyOf", "$ref", "$defs", "definitions", "description", "title",
    "pattern", "format",
    "multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "minItems", "maxItems",
})
"""Keywords kept in a strict schema; any other keyword is removed (and reported)."""

STRICT_FORMATS = frozenset({
    "date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid",
})
"""String ``format`` values strict mode accepts."""

_ANNOTATIONS = frozenset({"description", "title"})


class StrictSchemaError(ValueError):
    """The schema cannot be made strict (its root is not a plain object schema)."""


def strict_schema(schema: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Return a strict-mode copy of ``schema`` and one sentence per change made.

    The input is never modified. Running the function on its own output changes nothing.
    Raises `StrictSchemaError` when the root is not an object schema (strict mode needs one).
    """
    root: dict[str, Any] = copy.deepcopy(dict(schema))
    changes: list[str] = []
    if "anyOf" in root or "oneOf" in root:
        raise StrictSchemaError(
            "the root schema is a union (anyOf/oneOf); strict mode needs an object"
        )
    kind = root.get("type")
    if kind is None:
        root["type"] = "object"
        changes.append('#: added "type": "object" at the root')
    elif kind != "object":
        raise StrictSchemaError(f"the root schema has type {kind!r}; strict mode needs an object")
    _Rewriter(root, changes).fix(root, "#")
    return root, changes


class _Rewriter:
    __slots__ = ("changes", "root")

    def __init__(self, root: dict[str, Any], changes: list[str]) -> None:
        self.root = root
        self.changes = changes

    def note(self, path: str, text: str) -> None:
        self.changes.append(f"{path}: {text}")

    # ------------------------------------------------------------------ one schema node

    def fix(self, node: dict[str, Any], path: str) -> None:
        """Rewrite ``node`` in place."""
        self._inline_ref(node, path)
        self._nullable(node, path)
        self._one_of(node, path)
        self._all_of(node, path)
        self._drop_keywords(node, path)
        if _is_object(node):
            if "type" not in node:
                node["type"] = "object"
                self.note(path, 'added "type": "object" to a schema with properties')
            self._close_object(node, path)
        items = node.get("items")
        if isinstance(items, dict):
            self.fix(items, f"{path}/items")
        elif items is not None:
            del node["items"]
            self.note(path, "removed a tuple-style 'items' list (not supported)")
        branches = node.get("anyOf")
        if isinstance(branches, list):
            for i, branch in enumerate(branches):
                if isinstance(branch, dict):
                    self.fix(branch, f"{path}/anyOf/{i}")
        for key in ("$defs", "definitions"):
            defs = node.get(key)
            if isinstance(defs, dict):
                for name, sub in defs.items():
                    if isinstance(sub, dict):
                        self.fix(sub, f"{path}/{key}/{_escape(name)}")

    # ------------------------------------------------------------------ steps

    def _inline_ref(self, node: dict[str, Any], path: str) -> None:
        ref = node.get("$ref")
        if not isinstance(ref, str) or len(node) == 1:
            return
        target = _resolve(self.root, ref)
        siblings = sorted(k for k in node if k != "$ref")
        if target is None or target is node:
            for key in siblings:
                del node[key]
            self.note(path, f"removed {', '.join(siblings)} next to a $ref that cannot be inlined")
            return
        merged = {**copy.deepcopy(target), **{k: node[k] for k in siblings}}
        node.clear()
        node.update(merged)
        listed = ", ".join(siblings)
        self.note(path, f"inlined $ref {ref!r} because it had sibling keywords ({listed})")

    def _nullable(self, node: dict[str, Any], path: str) -> None:
        if "nullable" not in node:
            return
        flag = node.pop("nullable")
        if flag is True:
            _add_null(node)
            self.note(path, "turned 'nullable: true' into a null type")
        else:
            self.note(path, "removed 'nullable'")

    def _one_of(self, node: dict[str, Any], path: str) -> None:
        one_of = node.pop("oneOf", None)
        if one_of is None:
            return
        if isinstance(one_of, list):
            existing = node.get("anyOf")
            node["anyOf"] = (existing if isinstance(existing, list) else []) + one_of
            self.note(path, "changed oneOf to anyOf (oneOf is not supported)")
        else:
            self.note(path, "removed a malformed oneOf")

    def _all_of(self, node: dict[str, Any], path: str) -> None:
        parts = node.pop("allOf", None)
        if parts is None:
            return
        if not isinstance(parts, list):
            self.note(path, "removed a malformed allOf")
            return
        for part in parts:
            if not isinstance(part, dict):
                continue
            sub = part
            ref = part.get("$ref")
            if isinstance(ref, str) and len(part) == 1:
                sub = copy.deepcopy(_resolve(self.root, ref) or part)
            for key, value in sub.items():
                if key == "properties" and isinstance(value, dict):
                    node.setdefault("properties", {})
                    if isinstance(node["properties"], dict):
                        for name, prop in value.items():
                            node["properties"].setdefault(name, prop)
                elif key == "required" and isinstance(value, list):
                    have = node.setdefault("required", [])
                    if isinstance(have, list):
                        have.extend(v for v in value if v not in have)
                elif key not in node:
                    node[key] = value
        self.note(
            path, f"merged allOf ({len(parts)} schemas) into one schema (allOf is not supported)"
        )

    def _drop_keywords(self, node: dict[str, Any], path: str) -> None:
        for key in [k for k in node if k not in STRICT_KEYWORDS]:
            del node[key]
            self.note(path, f"removed unsupported keyword {key!r}")
        fmt = node.get("format")
        if fmt is not None and fmt not in STRICT_FORMATS:
            del node["format"]
            self.note(path, f"removed unsupported format {fmt!r}")

    def _close_object(self, node: dict[str, Any], path: str) -> None:
        props = node.get("properties")
        if not isinstance(props, dict):
            if props is not None:
                self.note(path, "replaced malformed 'properties' with an empty object")
            props = node["properties"] = {}
        extra = node.get("additionalProperties")
        if extra is not False:
            if extra is None:
                self.note(path, "set additionalProperties to false")
            else:
                self.note(
                    path, "set additionalProperties to false (extra keys were allowed before)"
                )
            node["additionalProperties"] = False
        required = node.get("required")
        listed = [r for r in required if r in props] if isinstance(required, list) else []
        if isinstance(required, list) and len(listed) != len(required):
            unknown = [r for r in required if r not in props]
            self.note(path, f"dropped required names with no property: {unknown!r}")
        for name, sub in props.items():
            sub_path = f"{path}/properties/{_escape(name)}"
            if isinstance(sub, dict):
                self.fix(sub, sub_path)
                if name not in listed and not _accepts_null(sub):
                    props[name] = _with_null(sub)
                    self.note(sub_path, "optional property made required and nullable")
                elif name not in listed:
                    self.note(sub_path, "optional property made required (it already accepts null)")
        node["required"] = list(props)


# ---------------------------------------------------------------------- helpers


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def _is_object(node: Mapping[str, Any]) -> bool:
    kind = node.get("type")
    if kind == "object":
        return True
    if isinstance(kind, list):
        return "object" in kind
    return kind is None and "properties" in node


def _resolve(root: dict[str, Any], ref: str) -> dict[str, Any] | None:
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return None
    cur: Any = root
    for raw in ref[2:].split("/"):
        key = raw.replace("~1", "/").replace("~0", "~")
        if not isinstance(cur, dict) or key not in cur:
            return None
        cur = cur[key]
    return cur if isinstance(cur, dict) else None


def _accepts_null(node: Mapping[str, Any]) -> bool:
    """True when the node plainly admits ``null`` (or constrains nothing at all)."""
    kind = node.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    branches = node.get("anyOf")
    if isinstance(branches, list):
        return any(isinstance(b, dict) and _accepts_null(b) for b in branches)
    if kind is None and "$ref" not in node and "enum" not in node and "const" not in node:
        return all(k in _ANNOTATIONS for k in node)
    return False


def _add_null(node: dict[str, Any]) -> None:
    """Make ``node`` accept null in place (used for OpenAPI ``nullable``)."""
    if _accepts_null(node):
        return
    replacement = _with_null(node)
    node.clear()
    node.update(replacement)


def _with_null(node: dict[str, Any]) -> dict[str, Any]:
    """A schema accepting what ``node`` accepts, and null."""
    kind = node.get("type")
    if isinstance(kind, str) and "$ref" not in node and "const" not in node:
        out = dict(node)
        out["type"] = [kind, "null"]
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        return out
    if isinstance(kind, list) and "$ref" not in node and "const" not in node:
        out = dict(node)
        out["type"] = [*kind, "null"]
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        return out
    if kind is None and isinstance(node.get("anyOf"), list):
        out = dict(node)
        out["anyOf"] = [*node["anyOf"], {"type": "null"}]
        return out
    if kind is None and isinstance(node.get("enum"), list) and len(node) == len(
        {"enum"} | (_ANNOTATIONS & node.keys())
    ):
        out = dict(node)
        out["enum"] = [*node["enum"], None]
        return out
    outer = {k: node[k] for k in node if k in _ANNOTATIONS}
    inner = {k: v for k, v in node.items() if k not in _ANNOTATIONS}
    return {**outer, "anyOf": [inner, {"type": "null"}]}
