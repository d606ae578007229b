"""Checking a model's tool-call arguments, and the messages that tell it how to fix them.

Owns: parsing argument text, the validator compiled once per tool (the fast path asks only
``is_valid``; the full error list is built only when a call fails) and the text of every
`ToolCallError`. Must not import `schema`, codecs, transport or the loop.

Argument text is parsed with orjson when it is installed, else with pydantic-core's parser;
a failed parse is repeated with the standard library to report where the text broke.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import jsonschema_rs

from ._schema_walk import JSONSchema, at_path, describe, example, one_of_values, quote, show
from .errors import ToolCallError, ToolDefinitionError


def _pick_loads() -> tuple[Callable[[str], Any], bool]:
    """The fastest parser at hand, and whether it may read a huge number as infinity."""
    try:
        import orjson
    except ImportError:
        import functools

        import pydantic_core

        return functools.partial(pydantic_core.from_json, allow_inf_nan=False), True
    return orjson.loads, False


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"the number {text} is too large for JSON")
    return value


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


_fast_loads, _MAY_READ_INFINITY = _pick_loads()


def _has_infinity(value: Any) -> bool:
    if type(value) is float:
        return math.isinf(value)
    if type(value) is dict:
        return any(_has_infinity(v) for v in value.values())
    if type(value) is list:
        return any(_has_infinity(v) for v in value)
    return False

MAX_PROBLEMS = 10
"""At most this many schema problems are listed in one message; the rest are counted."""

Check = Callable[[object], dict[str, Any]]

__all__ = ["Checker", "closest", "quote", "unknown_tool"]


def quote_all(names: Iterable[str], limit: int = 30) -> str:
    listed = list(names)
    text = ", ".join(quote(n) for n in listed[:limit])
    return text + (f" and {len(listed) - limit} more" if len(listed) > limit else "")


_SEPARATORS = str.maketrans("", "", "_-. ")


def _squash(name: str) -> str:
    return name.lower().translate(_SEPARATORS)


def _distance(a: str, b: str, limit: int) -> int:
    """Edit distance with transpositions; any value above ``limit`` means "too far"."""
    start = 0  # a shared start and end never change the distance: trim them first
    while start < len(a) and start < len(b) and a[start] == b[start]:
        start += 1
    end = 0
    while end < len(a) - start and end < len(b) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    a, b = a[start : len(a) - end], b[start : len(b) - end]
    if not a or not b:
        return len(a) + len(b)
    older: list[int] = []
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        ca = a[i - 1]
        current = [i]
        smallest = i
        for j in range(1, len(b) + 1):
            cb = b[j - 1]
            best = row[j - 1] + (ca != cb)
            if row[j] + 1 < best:
                best = row[j] + 1
            if current[j - 1] + 1 < best:
                best = current[j - 1] + 1
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb and older[j - 2] + 1 < best:
                best = older[j - 2] + 1
            current.append(best)
            if best < smallest:
                smallest = best
        if smallest > limit:
            return limit + 1
        older, row = row, current
    return row[-1]


Squashed = tuple[str, str, frozenset[str]]
"""(name lowered without ``_-. ``, the name, its letters): a candidate prepared once."""


def squashed(names: Iterable[str]) -> list[Squashed]:
    out = []
    for name in names:
        key = _squash(name)
        out.append((key, name, frozenset(key)))
    return out


def closest(word: str, candidates: Sequence[str]) -> str | None:
    """The candidate a misspelt or re-cased ``word`` most likely meant, or None.

    In order: the same name up to case and ``_-.``; a few typos away; one containing the
    other (``old_str`` -> ``old``, ``file`` -> ``file_path``).
    """
    return _closest(word, squashed(candidates))


def _closest(word: str, candidates: Sequence[Squashed]) -> str | None:
    target = _squash(word)
    if not target:
        return None
    for key, name, _ in candidates:
        if key == target:
            return name
    size = len(target)
    limit = max(1, size // 3)
    letters = set(target)
    best: tuple[int, str] | None = None
    for key, name, key_letters in candidates:
        if abs(len(key) - size) > limit or len(letters - key_letters) > limit:
            continue  # each cheap bound alone already needs more than `limit` edits
        d = _distance(target, key, limit)
        if d <= limit and d < min(size, len(key)) and (best is None or d < best[0]):
            best = (d, name)
    if best is not None:
        return best[1]
    inside = [
        (abs(len(key) - size), name)
        for key, name, _ in candidates
        if min(len(key), size) >= 3 and (key in target or target in key)
    ]
    return min(inside)[1] if inside else None


def unknown_tool(name: object, available: Sequence[str]) -> ToolCallError:
    name = name if isinstance(name, str) else str(name)
    if not available:
        message = f"Unknown tool {quote(name)}. No tools are available."
    else:
        guess = closest(name, available)
        hint = f" Did you mean {quote(guess)}?" if guess else ""
        message = f"Unknown tool {quote(name)}.{hint} Available tools: {quote_all(available)}."
    return ToolCallError(message, kind="unknown_tool", tool=name, problems=(message,))


def got(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list | tuple):
        return "an array"
    return show(value)


def _where(text: str, error: json.JSONDecodeError) -> str:
    what = error.msg[:1].lower() + error.msg[1:]
    what = what.removesuffix(" at")
    if what.startswith("unterminated string"):
        what = "a string is not closed; it starts"
    if error.pos >= len(text.rstrip()):
        return (
            f"{what} at the end (line {error.lineno}, column {error.colno}): the text stops early"
        )
    if error.pos == 0:
        return f"{what} at line 1, column 1"
    before = text[max(0, error.pos - 30) : error.pos]
    cut = "…" if error.pos > 30 else ""
    return f"{what} at line {error.lineno}, column {error.colno}, just after `{cut}{before}`"


def _json_path(path: Sequence[str | int]) -> str:
    if len(path) == 1 and type(path[0]) is str:
        return quote(path[0])
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
    return quote(out) if out else "arguments"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


class Checker:
    """One tool's compiled argument check, built once when the tool is defined."""

    __slots__ = ("cache", "check", "example", "schema", "tool", "validator")

    def __init__(self, tool: str, schema: JSONSchema) -> None:
        try:
            validator = jsonschema_rs.validator_for(schema, validate_formats=True, offline=True)
        except Exception as exc:  # the Rust side raises ValidationError or ReferencingError
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ToolDefinitionError(
                f"tool {tool!r}: input_schema is not a valid JSON Schema: {first}"
            ) from None
        self.tool = tool
        self.schema = schema
        self.validator = validator
        self.cache: dict[Any, Any] = {}
        self.example = show(example(schema, schema), limit=4000)
        self.check: Check = self._make_check()

    def _make_check(self) -> Check:
        is_valid = self.validator.is_valid
        loads = _fast_loads
        slow_parse = self._parse_slowly
        fail = self._fail

        def check(arguments: object) -> dict[str, Any]:
            if type(arguments) is str:
                if arguments:
                    try:
                        value = loads(arguments)
                    except ValueError:
                        value = slow_parse(arguments)
                else:
                    value = {}
            elif arguments is None:
                value = {}
            else:
                value = arguments
            if type(value) is dict:
                try:
                    if is_valid(value):
                        return value
                except ValueError:
                    pass
            if _MAY_READ_INFINITY and type(arguments) is str and _has_infinity(value):
                slow_parse(arguments)  # raises the same error as a parser that refuses it
            return fail(value)

        return check

    # -- failures (not the hot path) ------------------------------------------------------------

    def _parse_slowly(self, text: str) -> Any:
        if not text.strip():
            return {}
        try:
            return json.loads(text, parse_float=_finite, parse_constant=_not_json)
        except json.JSONDecodeError as exc:
            detail = _where(text, exc)
        except (ValueError, RecursionError) as exc:
            detail = str(exc)
        message = (
            f"Arguments for tool {quote(self.tool)} are not valid JSON: {detail}. "
            f"Send a JSON object like {self.example}."
        )
        raise ToolCallError(message, kind="invalid_json", tool=self.tool, problems=(detail,))

    def _fail(self, value: Any) -> dict[str, Any]:
        if isinstance(value, bytes | bytearray):
            try:
                return self.check(bytes(value).decode("utf-8"))
            except UnicodeDecodeError:
                detail = "the bytes are not UTF-8 text"
                raise ToolCallError(
                    f"Arguments for tool {quote(self.tool)} are not valid JSON: {detail}. "
                    f"Send a JSON object like {self.example}.",
                    kind="invalid_json",
                    tool=self.tool,
                    problems=(detail,),
                ) from None
        if isinstance(value, Mapping) and type(value) is not dict:
            return self.check(dict(value))
        if not isinstance(value, dict):
            raise self._not_an_object(value)
        try:
            errors = list(self.validator.iter_errors(value))
        except ValueError as exc:
            detail = f"they hold a value JSON cannot carry ({exc})"
            raise ToolCallError(
                f"Invalid arguments for tool {quote(self.tool)}: {detail}.",
                kind="schema",
                tool=self.tool,
                problems=(detail,),
            ) from None
        if not errors:
            return value
        raise self._schema_error(value, errors)

    def _not_an_object(self, value: Any) -> ToolCallError:
        what = got(value)
        if isinstance(value, str):
            try:
                inner = json.loads(value)
            except ValueError:
                inner = None
            if isinstance(inner, dict):
                what = "a string holding JSON (send the object itself, not a string)"
            else:
                what = f"the string {what}"
        detail = f"must be a JSON object, got {what}"
        message = (
            f"Arguments for tool {quote(self.tool)} {detail}. "
            f"Send a JSON object like {self.example}."
        )
        return ToolCallError(message, kind="not_an_object", tool=self.tool, problems=(detail,))

    def _schema_error(self, value: dict[str, Any], errors: list[Any]) -> ToolCallError:
        report = _Report(self.schema, self.cache)
        for error in errors:
            report.explain(error)
        report.problems.sort(key=lambda p: p[0])
        lines = [text for _, text in report.problems]
        shown = lines[:MAX_PROBLEMS]
        if len(lines) > MAX_PROBLEMS:
            shown.append(f"… and {_count(len(lines) - MAX_PROBLEMS, 'more problem')}")
        body = "\n".join(f"- {line}" for line in shown)
        allowed = "".join(f"\n{line}" for _, line in sorted(report.allowed.items()))
        kind = "unknown_field" if report.only_unknown else "schema"
        message = f"Invalid arguments for tool {quote(self.tool)}:\n{body}{allowed}"
        return ToolCallError(message, kind=kind, tool=self.tool, problems=tuple(lines))


_TYPE_MISMATCH = frozenset({"Type", "Enum", "Constant", "FalseSchema"})
_BOUNDS = {
    "Minimum": ">=",
    "Maximum": "<=",
    "ExclusiveMinimum": ">",
    "ExclusiveMaximum": "<",
}


class _Report:
    """Turns a validator's errors into one line per problem.

    What a schema location wants (``want a string``, the allowed fields of an object) does not
    depend on the call, so it is worked out once per location and kept in ``cache``.
    """

    def __init__(self, schema: JSONSchema, cache: dict[Any, Any]) -> None:
        self.schema = schema
        self.cache = cache
        self.problems: list[tuple[str, str]] = []
        self.allowed: dict[str, str] = {}
        self.only_unknown = True

    def add(self, path: Sequence[str | int], text: str, *, unknown: bool = False) -> None:
        shown = _json_path(path)
        self.problems.append((shown, f"{shown}: {text}"))
        self.only_unknown = self.only_unknown and unknown

    def node(self, error: Any) -> Any:
        """The schema holding the keyword that failed."""
        return at_path(self.schema, error.schema_path[:-1])

    def want(self, error: Any) -> str:
        """``describe`` of the schema holding the failed keyword, once per location."""
        key = ("want", *error.schema_path)
        found = self.cache.get(key)
        if found is None:
            found = self.cache[key] = describe(self.node(error), self.schema)
        return str(found)

    def explain(self, error: Any) -> None:
        kind = error.kind
        name = type(kind).__name__
        path = error.instance_path
        value = error.instance
        if name in ("AnyOf", "OneOfNotValid"):
            fitting = self._fitting(path, kind.context)
            if len(fitting) > 1 and self._discriminated(fitting):
                return
            if fitting:
                for sub in min(fitting, key=len):
                    self.explain(sub)
                return
            self.add(path, f"got {got(value)}, want {self.want(error)}")
        elif name == "Type":
            self.add(path, f"got {got(value)}, want {self.want(error)}")
        elif name == "Required":
            self._missing(path, kind.property, error)
        elif name in ("AdditionalProperties", "UnevaluatedProperties"):
            self._unknown(path, kind.unexpected, error, value)
        elif name == "Enum":
            self.add(path, f"got {got(value)}, want {one_of_values(list(kind.options))}")
        elif name == "Constant":
            self.add(path, f"got {got(value)}, want exactly {show(kind.expected_value)}")
        elif name in _BOUNDS:
            node = self.node(error)
            noun = (
                "an integer"
                if isinstance(node, dict) and node.get("type") == "integer"
                else "a number"
            )
            self.add(path, f"got {show(value)}, want {noun} {_BOUNDS[name]} {show(kind.limit)}")
        else:
            self.add(path, self._other(name, kind, value, error))

    def _other(self, name: str, kind: Any, value: Any, error: Any) -> str:
        if name == "MultipleOf":
            return f"got {show(value)}, want a multiple of {show(kind.multiple_of)}"
        if name in ("MinLength", "MaxLength"):
            bound = "at least" if name == "MinLength" else "at most"
            size = _count(len(value), "character")
            return f"got {show(value)} ({size}), want {bound} {_count(kind.limit, 'character')}"
        if name in ("MinItems", "MaxItems"):
            bound = "at least" if name == "MinItems" else "at most"
            return f"got {_count(len(value), 'item')}, want {bound} {kind.limit}"
        if name in ("MinProperties", "MaxProperties"):
            bound = "at least" if name == "MinProperties" else "at most"
            return f"got {_count(len(value), 'field')}, want {bound} {kind.limit}"
        if name == "Pattern":
            return f"got {show(value)}, want a string matching {kind.pattern}"
        if name == "Format":
            return f"got {show(value)}, want a {kind.format} string"
        if name == "UniqueItems":
            return "got repeated items, want each item once"
        if name == "Contains":
            node = self.node(error)
            wanted = node.get("contains") if isinstance(node, dict) else None
            return f"want at least one item that is {describe(wanted, self.schema)}"
        if name == "FalseSchema":
            return "not allowed here"
        if name == "Not":
            return f"got {got(value)}, which is not allowed here"
        if name == "OneOfMultipleValid":
            return f"got {got(value)}, which fits more than one of: {self.want(error)}; want one"
        if name == "PropertyNames":
            inner = kind.error
            return f"field name {show(inner.instance)} is not allowed: {inner.message}"
        message: str = error.message
        return message

    def _fitting(self, path: list[str | int], context: Sequence[Sequence[Any]]) -> list[Any]:
        """The branches of a union whose type the value has (only their details can help)."""
        return [
            branch
            for branch in context
            if not any(
                type(e.kind).__name__ in _TYPE_MISMATCH and e.instance_path == path for e in branch
            )
        ]

    def _discriminated(self, branches: list[Any]) -> bool:
        """Report a union told apart by one field's fixed value (``"kind": "circle"``).

        When every branch refuses the same field for not being its constant, the useful
        message is that field's allowed values, not the rest of one arbitrary branch.
        """

        def fixed(branch: Any) -> dict[tuple[str | int, ...], Any]:
            return {
                tuple(e.instance_path): e
                for e in branch
                if type(e.kind).__name__ in ("Constant", "Enum")
            }

        per_branch = [fixed(branch) for branch in branches]
        for where in per_branch[0]:
            if all(where in found for found in per_branch):
                values: dict[str, Any] = {}
                for found in per_branch:
                    kind = found[where].kind
                    options = (
                        [kind.expected_value]
                        if type(kind).__name__ == "Constant"
                        else list(kind.options)
                    )
                    values.update((show(v), v) for v in options)
                value = per_branch[0][where].instance
                self.add(
                    list(where), f"got {got(value)}, want {one_of_values(list(values.values()))}"
                )
                return True
        return False

    def _missing(self, path: list[str | int], prop: str, error: Any) -> None:
        key = ("missing", prop, *error.schema_path)
        text = self.cache.get(key)
        if text is None:
            node = self.node(error)
            props = node.get("properties") if isinstance(node, dict) else None
            sub = props.get(prop) if isinstance(props, dict) else None
            text = "missing" if sub is None else f"missing, want {describe(sub, self.schema)}"
            self.cache[key] = text
        self.add([*path, prop], text)

    def _fields(self, error: Any) -> tuple[list[Squashed], str]:
        """((squashed name, name) per allowed field, the quoted list) of an object schema."""
        key = ("fields", *error.schema_path)
        found = self.cache.get(key)
        if found is None:
            node = self.node(error)
            props = node.get("properties") if isinstance(node, dict) else None
            allowed = list(props) if isinstance(props, dict) else []
            found = self.cache[key] = (squashed(allowed), quote_all(allowed))
        return found  # type: ignore[no-any-return]

    def _unknown(self, path: list[str | int], names: list[str], error: Any, value: Any) -> None:
        allowed, listed = self._fields(error)
        sent = value if isinstance(value, dict) else {}
        free = [field for field in allowed if field[1] not in sent]
        for name in names:
            guess = _closest(name, free)
            hint = f"; did you mean {quote(guess)}?" if guess else ""
            self.add([*path, name], f"unknown field{hint}", unknown=True)
        where = _json_path(path)
        key = where if path else ""
        if key in self.allowed:
            return
        if allowed:
            line = f"Allowed fields in {where}: {listed}." if path else f"Allowed fields: {listed}."
        elif path:
            line = f"{where} takes no fields: send {{}}."
        else:
            line = "This tool takes no arguments: send {}."
        self.allowed[key] = line
