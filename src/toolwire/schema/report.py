"""The message for arguments that do not fit a tool's schema: one line per problem.

Owns: turning a validator's errors into ``"path": got ..., want ...`` lines, choosing the branch
of a union the model was aiming at, unknown fields with the nearest allowed one, and the whole
`ToolCallError` text. What a schema location wants does not depend on the call, so it is
worked out once per location and cached. Must not import
`schema.tool`, `schema.contract`, `schema.validate`, codecs or the loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolwire.errors import ToolCallError
from toolwire.schema.names import (
    Squashed,
    closest_among,
    count,
    got,
    json_path,
    quote_all,
    squashed,
)
from toolwire.schema.text import describe, one_of_values, quote, show
from toolwire.schema.walk import JSONSchema, at_path

MAX_PROBLEMS = 10
"""At most this many problems are listed in one message; the rest are counted."""

MAX_EXAMINED = 100
"""At most this many of a call's errors are read from the validator (one more tells whether
there were others): the cost of a failing call stays linear in its size however many of its
parts are wrong, and the message says the count is a lower bound."""


def schema_error(
    tool: str, schema: JSONSchema, cache: dict[Any, Any], errors: list[Any],
    *, partial: int | None = None,
) -> ToolCallError:
    """The error for arguments that parsed as an object but broke the schema.

    ``errors`` holds at most `MAX_EXAMINED` of them, or one more to say there were others;
    ``partial`` is the number of values beyond which only the first error was looked for."""
    report = _Report(schema, cache)
    explain = report.explain
    for error in errors[:MAX_EXAMINED]:
        explain(error)
    problems = report.problems
    problems.sort()
    lines = [text for _, text in problems]
    if partial is not None:
        shown = lines[:MAX_PROBLEMS]
        shown.append(f"… and maybe more problems: the arguments hold more than {partial} "
                     "values, so the check stopped at the first")
        body = "\n- ".join(shown)
    elif len(errors) > MAX_EXAMINED:
        more = count(max(len(lines) - MAX_PROBLEMS, 1), "more problem")
        shown = lines[:MAX_PROBLEMS]
        shown.append(f"… and at least {more} (the check stops after {MAX_EXAMINED})")
        body = "\n- ".join(shown)
    elif len(lines) > MAX_PROBLEMS:
        shown = lines[:MAX_PROBLEMS]
        shown.append(f"… and {count(len(lines) - MAX_PROBLEMS, 'more problem')}")
        body = "\n- ".join(shown)
    else:
        body = "\n- ".join(lines)
    head = cache.get(_HEAD)
    if head is None:
        head = cache[_HEAD] = f"Invalid arguments for tool {quote(tool)}:\n- "
    allowed = report.allowed
    if allowed:
        if len(allowed) == 1:
            body = f"{body}\n{next(iter(allowed.values()))}"
        else:
            body = "\n".join([body, *[line for _, line in sorted(allowed.items())]])
    kind = "unknown_field" if report.only_unknown else "schema"
    return ToolCallError(head + body, kind=kind, tool=tool, problems=tuple(lines))


_HEAD = ("head",)
"""The cache key of the message's first line (the cache belongs to one tool)."""

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

    __slots__ = ("allowed", "cache", "only_unknown", "problems", "schema")

    def __init__(self, schema: JSONSchema, cache: dict[Any, Any]) -> None:
        self.schema = schema
        self.cache = cache
        self.problems: list[tuple[str, str]] = []
        self.allowed: dict[str, str] = {}
        self.only_unknown = True

    def add(self, path: Sequence[str | int], text: str, *, unknown: bool = False) -> None:
        shown = json_path(path)
        self.problems.append((shown, f"{shown}: {text}"))
        if not unknown:
            self.only_unknown = False

    def node(self, error: Any) -> Any:
        """The schema holding the keyword that failed."""
        return at_path(self.schema, error.schema_path[:-1])

    def want(self, error: Any) -> str:
        """``describe`` of the schema holding the failed keyword, once per location."""
        key = ("want", *error.schema_path)
        found = self.cache.get(key)
        if found is None:
            found = self.cache[key] = describe(self.node(error), self.schema)
        return found  # type: ignore[no-any-return]

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
            noun = "an integer" if self.node(error).get("type") == "integer" else "a number"
            self.add(path, f"got {show(value)}, want {noun} {_BOUNDS[name]} {show(kind.limit)}")
        else:
            self.add(path, self._other(name, kind, value, error))

    def _other(self, name: str, kind: Any, value: Any, error: Any) -> str:
        if name == "MultipleOf":
            return f"got {show(value)}, want a multiple of {show(kind.multiple_of)}"
        if name in ("MinLength", "MaxLength"):
            bound = "at least" if name == "MinLength" else "at most"
            size = count(len(value), "character")
            return f"got {show(value)} ({size}), want {bound} {count(kind.limit, 'character')}"
        if name in ("MinItems", "MaxItems"):
            bound = "at least" if name == "MinItems" else "at most"
            return f"got {count(len(value), 'item')}, want {bound} {kind.limit}"
        if name in ("MinProperties", "MaxProperties"):
            bound = "at least" if name == "MinProperties" else "at most"
            return f"got {count(len(value), 'field')}, want {bound} {kind.limit}"
        if name == "Pattern":
            return f"got {show(value)}, want a string matching {kind.pattern}"
        if name == "Format":
            return f"got {show(value)}, want a {kind.format} string"
        if name == "UniqueItems":
            return "got repeated items, want each item once"
        if name == "Contains":
            node = self.node(error)
            wanted = node.get("contains")  # node: the schema holding the keyword, a dict
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
        fitting = []
        for branch in context:
            for e in branch:
                if e.instance_path == path and type(e.kind).__name__ in _TYPE_MISMATCH:
                    break
            else:
                fitting.append(branch)
        return fitting

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
        found = self.cache.get(key)
        if found is None:
            props = self.node(error).get("properties")  # the node holding a keyword is a dict
            sub = props.get(prop) if isinstance(props, dict) else None
            text = "missing" if sub is None else f"missing, want {describe(sub, self.schema)}"
            shown = quote(prop)
            found = self.cache[key] = (text, (shown, f"{shown}: {text}"))
        if path:
            self.add([*path, prop], found[0])
        else:  # a top-level field: its whole line does not depend on the call
            self.problems.append(found[1])
            self.only_unknown = False

    def _fields(self, error: Any) -> tuple[list[Squashed], str, str]:
        """An object schema's allowed fields, prepared once: (candidates, list, root line)."""
        key = ("fields", *error.schema_path)
        found = self.cache.get(key)
        if found is None:
            props = self.node(error).get("properties")  # the node holding a keyword is a dict
            allowed = list(props) if isinstance(props, dict) else []
            listed = quote_all(allowed)
            root_line = (
                f"Allowed fields: {listed}."
                if allowed
                else "This tool takes no arguments: send {}."
            )
            found = self.cache[key] = (squashed(allowed), listed, root_line)
        return found  # type: ignore[no-any-return]

    def _unknown(self, path: list[str | int], names: list[str], error: Any, value: Any) -> None:
        allowed, listed, root_line = self._fields(error)
        problems = self.problems
        for name in names:
            guess = closest_among(name, allowed, value)
            shown = json_path([*path, name])
            if guess is None:
                problems.append((shown, f"{shown}: unknown field"))
            else:
                problems.append((shown, f"{shown}: unknown field; did you mean {quote(guess)}?"))
        if not path:
            self.allowed.setdefault("", root_line)
            return
        where = json_path(path)
        if where not in self.allowed:
            self.allowed[where] = (
                f"Allowed fields in {where}: {listed}."
                if allowed
                else f"{where} takes no fields: send {{}}."
            )
