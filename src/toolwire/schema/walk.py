"""JSON Schema plumbing for tools, on plain dicts and always on copies.

Owns: rebuilding a schema subschema by subschema, closing objects that list ``properties``,
stripping generated titles, inlining local ``$ref``\\s, checking a raw ``input_schema`` is an
object schema no deeper than `MAX_SCHEMA_DEPTH`, measuring nesting without recursion
(`nested_deeper`), and resolving references and validator schema paths. Must not import anything
from toolwire except `errors`, and never pydantic or a validator.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from toolwire.errors import ToolDefinitionError

JSONSchema = dict[str, Any]

MAX_SCHEMA_DEPTH = 256
"""A tool's ``input_schema`` may nest JSON objects and arrays this many levels deep at most (a
schema with a hundred levels of nested properties is about two hundred); deeper is refused
when the tool is defined, long before the validator or the interpreter would give up. Recursive
and repeated parts belong in ``$defs``, reached by ``$ref``."""


def nested_deeper(value: Any, limit: int) -> bool:
    """Whether ``value`` nests mappings and lists more than ``limit`` levels deep (a scalar is
    0 deep, ``{}`` and ``[]`` 1). Level by level, without recursion, stopping at the first level
    past ``limit``: safe and linear on any value."""
    level = [value] if isinstance(value, Mapping | list | tuple) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        below: list[Any] = []
        for node in level:
            children = node.values() if isinstance(node, Mapping) else node
            below.extend(c for c in children if isinstance(c, Mapping | list | tuple))
        level = below
    return False


# Keywords whose value is a map of name -> subschema.
_SCHEMA_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
# Keywords whose value is one subschema (``items`` may also be a list in drafts before 2020-12).
_SCHEMA_ONE = frozenset(
    {
        "additionalProperties",
        "unevaluatedProperties",
        "items",
        "additionalItems",
        "unevaluatedItems",
        "contains",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
    }
)
# Keywords whose value is a list of subschemas.
_SCHEMA_LISTS = frozenset({"anyOf", "allOf", "oneOf", "prefixItems"})
# Keywords next to ``properties`` that may let more fields in: closing such an object could
# reject arguments the schema's author meant to accept, so it is left as written.
_COMPOSITION = ("allOf", "anyOf", "oneOf", "$ref", "$dynamicRef", "if", "dependentSchemas")

Visit = Callable[[JSONSchema, "str | None"], Any]


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON value (dicts, lists and scalars)."""
    if isinstance(value, dict):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_json(v) for v in value]
    return value


def rebuild(node: Any, visit: Visit, keyword: str | None = None) -> Any:
    """Copy ``node``, rebuilding every subschema bottom-up with ``visit(copy, parent_keyword)``.

    Data keywords (``enum``, ``const``, ``default``, ``examples``, ``required``...) are copied
    as they are; only schema positions are visited.
    """
    if not isinstance(node, dict):
        return node
    out: JSONSchema = {}
    for key, value in node.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: rebuild(sub, visit, key) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [rebuild(sub, visit, key) for sub in value]
        elif key in _SCHEMA_ONE:
            if isinstance(value, list):
                out[key] = [rebuild(sub, visit, key) for sub in value]
            else:
                out[key] = rebuild(value, visit, key)
        else:
            out[key] = copy_json(value)
    return visit(out, keyword)


def _close(node: JSONSchema, keyword: str | None) -> JSONSchema:
    if (
        "properties" in node
        and "additionalProperties" not in node
        and "unevaluatedProperties" not in node
        and keyword != "allOf"
        and not any(k in node for k in _COMPOSITION)
    ):
        node["additionalProperties"] = False
    return node


def close_objects(schema: JSONSchema) -> JSONSchema:
    """A copy where every object listing ``properties`` and silent on extra fields is closed.

    An object without ``properties`` is a free-form map and stays open. Objects directly under
    ``allOf`` or next to composition keywords are left as written, since closing them would
    reject fields another branch allows.
    """
    result: JSONSchema = rebuild(schema, _close)
    return result


def _strip_title(node: JSONSchema, keyword: str | None) -> JSONSchema:
    node.pop("title", None)
    return node


def strip_titles(schema: JSONSchema) -> JSONSchema:
    """A copy without ``title`` keywords (generated noise in a schema a model reads)."""
    result: JSONSchema = rebuild(schema, _strip_title)
    return result


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _local_def(ref: Any) -> tuple[str, str] | None:
    """``#/$defs/Name`` -> (``$defs``, ``Name``); None for any other reference."""
    if not isinstance(ref, str):
        return None
    for section in ("$defs", "definitions"):
        prefix = f"#/{section}/"
        if ref.startswith(prefix) and "/" not in ref[len(prefix) :]:
            return section, _unescape(ref[len(prefix) :])
    return None


def _refs_in(node: Any) -> set[tuple[str, str]]:
    """The local definitions ``node`` references."""
    return {t for ref in _any_refs(node, []) if (t := _local_def(ref)) is not None}


def _definitions(schema: JSONSchema) -> dict[tuple[str, str], Any]:
    defs: dict[tuple[str, str], Any] = {}
    for section in ("$defs", "definitions"):
        for name, body in (schema.get(section) or {}).items():
            defs[section, name] = body
    return defs


def _recursive(defs: dict[tuple[str, str], Any]) -> set[tuple[str, str]]:
    """The definitions that reach themselves through local references."""
    edges = {key: _refs_in(body) for key, body in defs.items()}

    def reaches_itself(start: tuple[str, str]) -> bool:
        seen: set[tuple[str, str]] = set()
        todo = list(edges[start])
        while todo:
            key = todo.pop()
            if key == start:
                return True
            if key in seen or key not in edges:
                continue
            seen.add(key)
            todo.extend(edges[key])
        return False

    return {key for key in defs if reaches_itself(key)}


_REF_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")


def _any_refs(node: Any, found: list[Any]) -> list[Any]:
    if isinstance(node, dict):
        found.extend(node[k] for k in _REF_KEYWORDS if k in node)
        for value in node.values():
            _any_refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _any_refs(value, found)
    return found


def may_recurse(schema: JSONSchema) -> bool:
    """Whether a value fitting ``schema`` may nest without bound: the schema holds a reference
    that is not to a definition of its own that never reaches itself. Without one, a validator
    descends no deeper into a value than the schema goes."""
    refs = _any_refs(schema, [])
    if not refs:
        return False
    targets = [_local_def(ref) for ref in refs]
    if None in targets:
        return True
    recursive = _recursive(_definitions(schema))
    return any(target in recursive for target in targets)


def inline_refs(schema: JSONSchema) -> JSONSchema:
    """A copy with every local ``$ref`` to a non-recursive definition replaced by its body.

    Recursive definitions (a model that contains itself) stay in ``$defs`` and are referenced.
    """
    defs = _definitions(schema)
    if not defs:
        plain: JSONSchema = copy_json(schema)
        return plain
    recursive = _recursive(defs)
    inlined: dict[tuple[str, str], Any] = {}

    def visit(node: JSONSchema, keyword: str | None) -> Any:
        target = _local_def(node.get("$ref"))
        if target is None or target in recursive or target not in defs:
            return node
        if target not in inlined:
            inlined[target] = rebuild(defs[target], visit)
        body = copy_json(inlined[target])
        if not isinstance(body, dict):
            return body if len(node) == 1 else node
        body.update((k, v) for k, v in node.items() if k != "$ref")
        return body

    out: JSONSchema = rebuild(schema, visit)
    for section in ("$defs", "definitions"):
        kept = {
            name: body
            for name, body in (out.get(section) or {}).items()
            if (section, name) in recursive
        }
        if kept:
            out[section] = kept
        else:
            out.pop(section, None)
    return out


def as_object_schema(tool: str, schema: Any) -> JSONSchema:
    """Check a raw ``input_schema`` is a JSON object schema and return a plain-JSON copy."""
    if not isinstance(schema, Mapping):
        raise ToolDefinitionError(
            f"tool {tool!r}: input_schema must be a JSON Schema object (a dict), "
            f"got {type(schema).__name__}"
        )
    if nested_deeper(schema, MAX_SCHEMA_DEPTH):
        raise ToolDefinitionError(
            f"tool {tool!r}: input_schema nests deeper than {MAX_SCHEMA_DEPTH} levels, the most "
            "toolwire reads; put recursive or repeated parts in $defs and reach them with $ref"
        )
    try:
        plain = json.loads(json.dumps(schema))
    except (TypeError, ValueError) as exc:
        raise ToolDefinitionError(
            f"tool {tool!r}: input_schema must hold only JSON values: {exc}"
        ) from None
    kind = plain.get("type", "object")
    if kind != "object":
        raise ToolDefinitionError(
            f'tool {tool!r}: input_schema must describe an object ("type": "object"), '
            f"got {json.dumps({'type': kind})}"
        )
    result: JSONSchema = plain if "type" in plain else {"type": "object", **plain}
    return result


def resolve(root: JSONSchema, ref: str) -> Any:
    """The subschema a local reference (``#``, ``#/$defs/X``, any JSON pointer) points at."""
    if not ref.startswith("#"):
        return None
    node: Any = root
    for token in ref[1:].split("/")[1:]:
        key = _unescape(token)
        if isinstance(node, dict):
            node = node.get(key)
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return None
    return node


def at_path(root: JSONSchema, path: Sequence[str | int]) -> Any:
    """The subschema at a validator's schema path (following ``$ref`` segments)."""
    node: Any = root
    for step in path:
        if isinstance(node, dict):
            node = node.get(step) if isinstance(step, str) else None
            if step == "$ref" and isinstance(node, str):
                node = resolve(root, node)
        elif isinstance(node, list) and isinstance(step, int) and step < len(node):
            node = node[step]
        else:
            return None
    return node
