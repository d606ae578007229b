"""Checking a model's tool-call arguments, and the messages that tell it how to fix them.

Owns: parsing argument text, the validator compiled once per tool (the fast path asks only
``is_valid``; the errors are built only when a call fails, at most `schema.report.MAX_EXAMINED`
of them and only the first for arguments holding more than `LIST_ALL_UP_TO` values, so a
failing call costs time linear in its size) and
the text of the unknown-tool, invalid-JSON, not-an-object and too-deep errors (schema problems
are `schema.report`'s). Arguments nested deeper than `MAX_ARGUMENT_DEPTH` are refused before the
validator sees them when the schema recurses (its recursion is native code: far too deep a
value would crash the process rather than raise); a failing call is always measured.
A value a codec already parsed is checked as it is (`Checker.check_parsed`): the text is read
again only when it must be, to say where it holds NaN, an infinity or a number out of range.
Must not import `schema.tool`, the transcript, codecs, transport or the loop.

Argument text is parsed with pydantic-core's parser: nearly as fast as orjson, always installed,
and exact for integers beyond 64 bits (orjson reads them as floats, changing the value). A
failed parse is repeated with the standard library to report where the text broke.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from itertools import islice
from typing import Any

import jsonschema_rs
from pydantic_core import from_json

from toolwire.errors import ToolCallError, ToolDefinitionError
from toolwire.schema.names import closest, got, quote_all
from toolwire.schema.report import MAX_EXAMINED, schema_error
from toolwire.schema.text import example, quote, show
from toolwire.schema.walk import MAX_SCHEMA_DEPTH, JSONSchema, may_recurse, nested_deeper
from toolwire.transcript import broken_arguments

MAX_ARGUMENT_DEPTH = 100
"""Arguments may nest objects and arrays this many levels deep at most; a deeper call gets an
error result naming the limit, and is never given to the validator."""


def _too_deep(value: dict[str, Any] | list[Any]) -> bool:
    """Whether parsed arguments nest dicts and lists deeper than `MAX_ARGUMENT_DEPTH`: level by
    level, without recursion (the fast path's shape of `walk.nested_deeper`, for JSON values)."""
    level: list[Any] = [value]
    depth = 0
    while level:
        depth += 1
        if depth > MAX_ARGUMENT_DEPTH:
            return True
        below = []
        for node in level:
            for item in node.values() if type(node) is dict else node:
                kind = type(item)
                if kind is dict or kind is list:
                    below.append(item)
        level = below
    return False


LIST_ALL_UP_TO = 2_000
"""Arguments holding at most this many values (objects, arrays and scalars together) have their
problems listed (the first `schema.report.MAX_EXAMINED`); larger ones get their first problem
only. The validator builds every error of a call before giving the first, at a cost that grows
faster than their number: with this bound a failing call costs time linear in its size."""


def _holds_more_than(value: Any, limit: int) -> bool:
    """Whether ``value`` holds more than ``limit`` values, counted level by level until then."""
    level: list[Any] = [value]
    seen = 0
    while level:
        seen += len(level)
        if seen > limit:
            return True
        below: list[Any] = []
        for node in level:
            kind = type(node)
            if kind is dict:
                below.extend(node.values())
            elif kind is list:
                below.extend(node)
            if len(below) > limit:
                return True
        level = below
    return False


def _first_error(validator: Any, value: Any) -> Any:
    """The validator's first error for ``value``, which it finds without building the rest."""
    try:
        validator.validate(value)
    except jsonschema_rs.ValidationError as error:
        return error
    raise ValueError("the value passed the full validation but not the fast check")


_SURELY_SHALLOW = 2 * MAX_ARGUMENT_DEPTH
"""Argument text this short cannot nest deeper than `MAX_ARGUMENT_DEPTH`: each level takes two
brackets."""


def _deep(value: dict[str, Any], text: str | None) -> bool:
    """Whether arguments parsed from ``text`` (None: given as a value) nest deeper than
    `MAX_ARGUMENT_DEPTH`; text with too few brackets for that is not walked."""
    if text is not None and text.count("{") + text.count("[") <= MAX_ARGUMENT_DEPTH:
        return False
    return _too_deep(value)


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"the number {text} is too large for JSON")
    return value


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


# An exponent of three digits or more: ``[eE]\+?\d{3}``, as two searches for a literal letter
# (each much faster than one search for a class of letters).
_LONG_EXPONENT = re.compile(r"e\+?\d{3}")
_LONG_EXPONENT_UPPER = re.compile(r"E\+?\d{3}")


def _may_not_be_finite(text: str) -> bool:
    """Cheap test on the text: could the parse hold NaN or an infinity? (no false negatives)"""
    return (
        "NaN" in text
        or "Infinity" in text
        or len(text) > 200  # 1e308 needs 309 digits counting a two-digit exponent
        or _LONG_EXPONENT.search(text) is not None
        or ("E" in text and _LONG_EXPONENT_UPPER.search(text) is not None)
    )


_LONG_DIGITS = re.compile(r"\d{300}")


def _unsure(head: str) -> bool:
    """Whether the text before a break could hold a number `_parse_slowly` refuses on the way
    (there the standard parser's break is not the one it reports). ``NaN`` and the infinities
    need no look: `read_arguments` refuses them where it meets them, and keeps no break after
    one."""
    return (
        _LONG_DIGITS.search(head) is not None
        or _LONG_EXPONENT.search(head) is not None
        or ("E" in head and _LONG_EXPONENT_UPPER.search(head) is not None)
    )


def _not_finite(value: Any) -> bool:
    """Whether a parsed value holds NaN or infinity (read from ``NaN`` or ``1e400``)."""
    if type(value) is float:
        return not math.isfinite(value)
    if type(value) is dict:
        return any(_not_finite(v) for v in value.values())
    if type(value) is list:
        return any(_not_finite(v) for v in value)
    return False


Check = Callable[[object], dict[str, Any]]
CheckParsed = Callable[[object, "str | None"], dict[str, Any]]

__all__ = ["Checker", "closest", "quote", "unknown_tool"]


def unknown_tool(name: object, available: Sequence[str]) -> ToolCallError:
    name = name if isinstance(name, str) else str(name)
    if not available:
        message = f"Unknown tool {quote(name)}. No tools are available."
    else:
        guess = closest(name, available)
        hint = f" Did you mean {quote(guess)}?" if guess else ""
        message = f"Unknown tool {quote(name)}.{hint} Available tools: {quote_all(available)}."
    return ToolCallError(message, kind="unknown_tool", tool=name, problems=(message,))


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


class Checker:
    """One tool's compiled argument check, built once when the tool is defined."""

    __slots__ = ("cache", "check", "check_parsed", "example", "schema", "tool", "validator")

    def __init__(self, tool: str, schema: JSONSchema) -> None:
        if nested_deeper(schema, MAX_SCHEMA_DEPTH):
            raise ToolDefinitionError(
                f"tool {tool!r}: input_schema nests deeper than {MAX_SCHEMA_DEPTH} levels, the "
                "most toolwire reads; put recursive or repeated parts in $defs and reach them "
                "with $ref"
            )
        try:
            validator = jsonschema_rs.validator_for(schema, validate_formats=True, offline=True)
        except Exception as exc:  # the Rust side raises ValidationError or ReferencingError
            first = str(exc).strip().partition("\n")[0]
            raise ToolDefinitionError(
                f"tool {tool!r}: input_schema is not a valid JSON Schema: {first}"
            ) from None
        self.tool = tool
        self.schema = schema
        self.validator = validator
        self.cache: dict[Any, Any] = {}
        self.example = show(example(schema, schema), limit=600)
        self.check: Check
        """The arguments as a model sent them (text, bytes, an object or None), checked."""
        self.check_parsed: CheckParsed
        """A value already parsed from the given text (or None), checked without parsing again:
        the text is read again only to say where it holds a number JSON cannot carry."""
        self.check, self.check_parsed = self._make_check()

    def _make_check(self) -> tuple[Check, CheckParsed]:
        is_valid = self.validator.is_valid
        loads = from_json
        slow_parse = self._parse_slowly
        refused = self._refused
        # A schema without recursion bounds how deep the validator goes, whatever the value;
        # with one, a value is measured first unless its text is too short to be deep.
        shallow = _SURELY_SHALLOW if may_recurse(self.schema) else None

        def check_parsed(value: object, text: str | None) -> dict[str, Any]:
            if type(value) is dict and (
                shallow is None
                or (text is not None and len(text) <= shallow)
                or not _deep(value, text)
            ):
                try:
                    if is_valid(value):
                        return value
                except ValueError:
                    pass
            return refused(value, text)

        def check(arguments: object) -> dict[str, Any]:
            # check_parsed's fast path written out again: a call less on every valid call
            text: str | None = None
            if type(arguments) is str:
                text = arguments
                if arguments:
                    try:
                        value = loads(arguments)
                    except ValueError:
                        value = slow_parse(arguments)
                else:
                    value = {}
            else:
                value = {} if arguments is None else arguments
            if type(value) is dict and (
                shallow is None
                or (text is not None and len(text) <= shallow)
                or not _deep(value, text)
            ):
                try:
                    if is_valid(value):
                        return value
                except ValueError:
                    pass
            return refused(value, text)

        return check, check_parsed

    # -- failures (not the hot path) ------------------------------------------------------------

    def check_broken(self, text: str) -> None:
        """Raise the error `_parse_slowly` would for ``text``, arguments a step before found
        broken (`toolwire.transcript.read_arguments`), from that failure, without reading the
        text again; return when there is none to reuse (the check then reads it)."""
        known = broken_arguments(text)
        if known is None or not text.strip() or _unsure(text[: known.pos + 1]):
            return
        raise self._invalid_json(_where(text, known))

    def _parse_slowly(self, text: str) -> Any:
        if not text.strip():
            return {}
        try:
            return json.loads(text, parse_float=_finite, parse_constant=_not_json)
        except json.JSONDecodeError as exc:
            detail = _where(text, exc)
        except (ValueError, RecursionError) as exc:
            detail = str(exc)
        raise self._invalid_json(detail) from None  # not chained to the fast parser's error

    def _invalid_json(self, detail: str) -> ToolCallError:
        message = (
            f"Arguments for tool {quote(self.tool)} are not valid JSON: {detail}. "
            f"Send a JSON object like {self.example}."
        )
        return ToolCallError(message, kind="invalid_json", tool=self.tool, problems=(detail,))

    def _refused(self, value: Any, text: str | None) -> dict[str, Any]:
        """What the fast check refused: raise the error for the model (or check a conversion)."""
        short = text is not None and len(text) <= _SURELY_SHALLOW  # too short to be deep
        if not short and type(value) in (dict, list) and _too_deep(value):
            raise self._too_deep_error()
        if text is not None and _may_not_be_finite(text) and _not_finite(value):
            self._parse_slowly(text)  # NaN, Infinity or 1e400: not JSON numbers; raises
        if type(value) is not dict:
            return self._convert(value)
        # each value takes a character and a comma: shorter text cannot hold more than the bound
        partial = not short and (text is None or len(text) >= 2 * LIST_ALL_UP_TO) and \
            _holds_more_than(value, LIST_ALL_UP_TO)
        try:
            if partial:  # the first error alone: the validator stops there
                errors = [_first_error(self.validator, value)]
            else:  # the first errors only: building each costs, and a few say what to fix
                errors = list(islice(self.validator.iter_errors(value), MAX_EXAMINED + 1))
        except ValueError as exc:  # a key or value of a Python type JSON does not have
            detail = f"they hold a value JSON cannot carry ({exc})"
            raise ToolCallError(
                f"Invalid arguments for tool {quote(self.tool)}: {detail}.",
                kind="schema",
                tool=self.tool,
                problems=(detail,),
            ) from None
        raise schema_error(self.tool, self.schema, self.cache, errors,
                           partial=LIST_ALL_UP_TO if partial else None)

    def _too_deep_error(self) -> ToolCallError:
        detail = (f"they nest objects and arrays deeper than {MAX_ARGUMENT_DEPTH} levels, the "
                  "most toolwire checks")
        return ToolCallError(
            f"Arguments for tool {quote(self.tool)} are refused: {detail}. "
            f"Send a flatter JSON object like {self.example}.",
            kind="too_deep", tool=self.tool, problems=(detail,),
        )

    def _convert(self, value: Any) -> dict[str, Any]:
        """Bytes are checked as text and other mappings as dicts; anything else is refused."""
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
        if isinstance(value, Mapping):
            return self.check(dict(value))
        raise self._not_an_object(value)

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
