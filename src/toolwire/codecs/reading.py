"""Reading bodies from outside: typed readers that name the path.

Owns the shape errors (`wrong_shape`, `first_problem`, `not_json`), the typed readers the wires
use on bodies (`list_at`, `text_at`, `token_count`, `plain` for values kept whole, `error_body`
for error replies), `path_text`, a provider's refusals of a raw body every wire words alike
(`role_problem`, `tools_lack_schemas`), and the `StreamDecoder` and `ResumableDecoder`
protocols. The
guards `Codec` puts around every decoder are `toolwire.codecs.guards`'. Imports the JSON
reader, errors, events and the transcript; must not import `toolwire.codecs.base` or any wire.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from toolwire._json import MAX_DEPTH, loads
from toolwire.errors import (
    JSONTextError,
    WireFormatError,
)
from toolwire.events import StreamEvent
from toolwire.transcript import (
    JSON,
    Reply,
)


class StreamDecoder(Protocol):
    """An incremental decoder: feed it bytes as they arrive, then finish."""

    def feed(self, data: bytes) -> list[StreamEvent]: ...

    def finish(self) -> Reply: ...


class ResumableDecoder(StreamDecoder, Protocol):
    """The stream decoder of a wire whose server serves a broken stream again from an event
    (the wire's record says ``resumable``): it says where the stream is to be taken up, and
    skips any event it has read already."""

    @property
    def resume_point(self) -> tuple[str, str] | None:
        """The reply's id and the last event read, once there are both."""
        ...

    def drop_partial(self) -> None:
        """Forget the bytes of an event cut off by a break (it comes again whole)."""
        ...


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return {dict: "an object", list: "a list", str: "a string", int: "an integer",
            float: "a number"}.get(type(value), type(value).__name__)


def wrong_shape(where: str, expected: str, value: Any) -> WireFormatError:
    """The error for a body field of the wrong shape: where, what was expected, what came."""
    return WireFormatError(f"{where}: expected {expected}, got {_json_kind(value)}")


# --------------------------------------------------------------------------- reading bodies

_SCALARS = frozenset({str, int, bool, type(None)})


class _NotJSON(Exception):
    """Raised inside `plain` when a value is not JSON; `plain` finds where and says so."""


def _copy(value: Any, depth: int) -> JSON:
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is float:
        if value - value == 0.0:  # finite (inf - inf and nan - nan are nan)
            return value
        raise _NotJSON
    if depth >= MAX_DEPTH:
        raise _NotJSON
    if kind is dict or isinstance(value, Mapping):
        return {k if type(k) is str else _key(k): _copy(v, depth + 1) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [_copy(v, depth + 1) for v in value]
    if isinstance(value, str | int):  # subclasses of the scalars
        return value
    raise _NotJSON


def _key(key: Any) -> str:
    if isinstance(key, str | int) and not isinstance(key, bool):
        return str(key)
    raise _NotJSON


def plain(value: Any, where: str | tuple[Any, ...] = "a value") -> JSON:
    """A deep copy made only of dict, list and JSON scalars (Mappings and tuples converted).

    Only for values that are kept or handed on; what is only read is read in place. Refuses
    with a `WireFormatError` naming the place (``where`` and the path inside the value) what
    JSON cannot hold: nesting deeper than `toolwire._json.MAX_DEPTH`, numbers that are not
    finite, keys that are not text, objects of any other type.
    """
    try:
        try:
            return _copy(value, 0)
        except RecursionError:  # deep, yet maybe within the limit: the same rules, in a loop
            return _copy_in_a_loop(value)
    except _NotJSON:
        raise not_json(path_text(where), value) from None


def _copy_in_a_loop(value: Any) -> JSON:
    """`_copy` without recursion, for values nested deeper than the stack has room for."""
    top: list[Any] = [None]
    todo: list[tuple[Any, Any, Any, int]] = [(value, top, 0, 0)]
    while todo:
        node, into, key, depth = todo.pop()
        kind = type(node)
        if kind is dict or kind is list or kind is tuple or isinstance(node, Mapping):
            if depth >= MAX_DEPTH:
                raise _NotJSON
            if kind is list or kind is tuple:
                into[key] = items = [None] * len(node)
                todo.extend((item, items, n, depth + 1) for n, item in enumerate(node))
                continue
            fields: dict[str, Any] = {}
            into[key] = fields
            for name, item in node.items():
                name = name if type(name) is str else _key(name)
                fields[name] = None  # the keys keep their order; values come in later
                todo.append((item, fields, name, depth + 1))
        else:
            into[key] = _copy(node, depth)  # a scalar: no recursion
    return top[0]


def path_text(where: str | tuple[Any, ...]) -> str:
    """``("choices", 0, "message")`` as ``choices[0].message``; a string as it is."""
    if isinstance(where, str):
        return where
    out = ""
    for key in where:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return out


def not_json(where: str, value: Any) -> WireFormatError:
    """The error for the first part of ``value`` that JSON cannot hold."""
    return first_problem(where, value) or WireFormatError(f"{where}: not a JSON value")


def first_problem(where: str, value: Any) -> WireFormatError | None:
    """The first part of ``value`` that no JSON text holds, named by its path after ``where``,
    found without recursion; None when ``value`` is plain JSON."""
    todo: list[tuple[Any, str, int]] = [(value, "", 0)]
    while todo:
        node, at, depth = todo.pop()
        problem: str | None = None
        if isinstance(node, str):
            if not is_unicode(node):
                problem = ("text holding a lone surrogate, which is no character (JSON read by "
                           "toolwire has U+FFFD there)")
        elif isinstance(node, float) and node - node != 0.0:
            problem = f"expected a finite number, got {node!r}"
        elif isinstance(node, int | float) or node is None:
            pass
        elif depth >= MAX_DEPTH:
            problem = f"nested deeper than {MAX_DEPTH} levels"
        elif isinstance(node, Mapping):
            for key, item in node.items():
                if isinstance(key, bool) or not isinstance(key, str | int):
                    problem = f"expected text keys, got {key!r}"
                    break
                todo.append((item, f"{at}.{key}" if at else str(key), depth + 1))
        elif isinstance(node, list | tuple):
            todo.extend((item, f"{at}[{n}]", depth + 1) for n, item in enumerate(node))
        else:
            problem = f"expected a JSON value, got {_json_kind(node)}"
        if problem is not None:
            if len(at) > 120:  # a path hundreds of levels deep: its two ends say enough
                at = f"{at[:60]}...{at[-40:]}"
            return WireFormatError(f"{where}: {at or 'the value'}: {problem}")
    return None


def is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def list_at(value: Any, where: str | tuple[Any, ...]) -> list[Any]:
    """``value`` when it is a list; ``[]`` for a missing one (None); else a `WireFormatError`
    naming ``where`` (a path such as ``("output", 2, "summary")``) and what came instead."""
    if type(value) is list:
        return value
    if value is None:
        return []
    raise wrong_shape(path_text(where), "a list", value)


def objects_at(value: Any, where: str, what: str) -> list[Any]:
    """`list_at`, each item of which must be an object (``what`` names one, for the error)."""
    items = list_at(value, where)
    for n, item in enumerate(items):
        if type(item) is not dict and not isinstance(item, Mapping):
            raise wrong_shape(f"{where}[{n}]", f"an object ({what})", item)
    return items


def token_count(value: Any) -> int:
    """A token count a reply reports: an int (not a bool), else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def text_at(value: Any, where: str | tuple[Any, ...]) -> str:
    """``value`` when it is text; ``""`` for a missing one (None); else a `WireFormatError`."""
    if type(value) is str:
        return value
    if value is None:
        return ""
    raise wrong_shape(path_text(where), "text", value)


def error_body(body: Any) -> tuple[Any, str]:
    """An error reply's body as JSON when it is JSON, and its text (``""`` for a value).

    Bytes are read as UTF-8 (broken bytes as U+FFFD); text that is not JSON stays text, so a
    plain-text error page becomes the message.
    """
    if isinstance(body, bytes | bytearray | memoryview):
        body = bytes(body).decode("utf-8", "replace")
    if isinstance(body, str):
        try:
            return loads(body, what="the error body"), body
        except JSONTextError:
            return body, body
    return plain(body, "the error body"), ""


# ------------------------------------------------------------------------- what providers refuse


def tools_lack_schemas(tools: Any, key: str) -> str | None:
    """A provider's refusal of a tool list whose tools lack a name or the ``key`` schema field
    (a built-in tool, of another type, may have neither)."""
    if tools is None:
        return None
    if not isinstance(tools, list):
        return "tools: expected an array"
    for n, tool in enumerate(tools):
        kind = tool.get("type") if isinstance(tool, dict) else None
        fn = tool.get("function", tool.get("custom", tool)) if isinstance(tool, dict) else None
        own = isinstance(tool, dict) and kind in (None, "custom", "function")
        if not isinstance(fn, dict) or (own and not fn.get("name")):
            return f"tools.{n}: a tool needs a name"
        grammar = kind == "custom" and key != "input_schema"  # OpenAI's: a grammar, no schema
        if key and key not in fn and own and not grammar:
            return f"tools.{n}.{key}: Field required"
    return None


def role_problem(messages: Any, allowed: tuple[str, ...], field: str = "messages") -> str | None:
    """A provider's refusal of an empty message list or of a role it does not take."""
    if not isinstance(messages, list) or not messages:
        return f"{field}: at least one message is required"
    for n, m in enumerate(messages):
        if not isinstance(m, dict):
            return f"{field}.{n}: Input should be a valid dictionary or object"
        role = m.get("role")
        if role is not None and role not in allowed:
            return (f"{field}.{n}.role: Input should be " + " or ".join(repr(r) for r in allowed)
                    + f", got {role!r}")
    return None
