"""Reading and writing JSON fast, with one policy for text from outside.

Owns `loads`, `parse`, `read_arguments` (a call's arguments: text that broke is read once),
`dumps`, `one_line`, `walk_limit` and the limits `MAX_DEPTH` and `SHALLOW`. Imports only
`toolwire.errors` (for `JSONTextError`); everything that reads JSON from a server, a model or a
file reads it here, so the policy below holds everywhere at once:

- **Depth.** JSON nested deeper than `MAX_DEPTH` levels is refused with a `JSONTextError` naming
  the limit and the path where it was passed, long before the interpreter's recursion limit.
  A reader that keeps only some values of what it reads may hold just those to the limit
  instead (``loads(..., check_depth=False)``): the decoders' guards do so for a reply's body,
  which costs the size of what a reply keeps rather than of every byte it came in.
- **Numbers.** ``NaN``, ``Infinity`` and ``-Infinity`` are not JSON and are refused, and so is a
  number too large for a float (``1e400``): every number read is finite. Integers of any size
  stay exact.
- **Text that is not Unicode.** A lone surrogate escape (``"\\udcff"``) is valid JSON but no
  character; it is read as U+FFFD (the replacement character), as are bytes that are not UTF-8.
  So nothing read here can fail to encode later (the next request, the run log, a page).
- **Size.** No limit beyond memory: a body with megabytes of base64 reads as fast as the parser
  goes.

msgspec's parser (the transcript's values are msgspec Structs, so it is loaded already) reads
JSON several times faster than `json.loads` and refuses everything the policy above handles;
only then does the standard parser take over, and its value is cleaned in one walk. msgspec's
encoder writes request bodies: compact UTF-8 JSON in key order, floats in their shortest form
(``1e-7`` where `json.dumps` writes ``1e-07``: the same value), NaN and infinities as ``null``;
a lone surrogate that reached a value some other way is written as its ``\\u`` escape.
"""

from __future__ import annotations

import contextlib
import json
import math
from typing import Any

from msgspec.json import Decoder, Encoder

from toolwire.errors import JSONTextError

MAX_DEPTH = 500
"""How deep JSON read from outside may nest (objects and arrays, counted from the top)."""

parse = Decoder().decode
"""The fast parser alone: raises ``ValueError``, ``TypeError`` or ``RecursionError`` on whatever it
refuses, where a caller on a hot path falls back to `loads` for the policy's value or error."""

_REPLACEMENT = "\ufffd"


def _in(what: str) -> str:
    return f"{what}: " if what else ""


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _where(path: list[str | int]) -> str:
    """`` at choices[0].message`` for a path, nothing for the top."""
    out = ""
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    if len(out) > 120:  # hundreds of levels deep: the two ends say enough
        out = f"{out[:60]}...{out[-40:]}"
    return f" at {out}" if out else ""


def _text_of(text: str | bytes | bytearray | memoryview) -> str:
    if isinstance(text, str):
        return text
    return bytes(text).decode("utf-8", "replace")


def _fix_text(value: str) -> str:
    """``value`` with every lone surrogate replaced by U+FFFD."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return value


def walk_limit(value: Any, *, clean: bool = False, what: str = "") -> Any:
    """Check ``value`` (a JSON value already read) against the policy, without recursion.

    Raises `JSONTextError` for nesting deeper than `MAX_DEPTH` or a number that is not finite.
    With ``clean``, lone surrogates in strings and keys are replaced in place (the value is the
    caller's own, fresh from a parser) and the cleaned value is returned.
    """
    if isinstance(value, str):
        return _fix_text(value) if clean else value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise JSONTextError(f"{_in(what)}a number out of range ({value!r})")
        return value
    if not isinstance(value, dict | list):
        return value
    # (container, depth, path of the container) for every container still to look at
    todo: list[tuple[Any, int, list[str | int]]] = [(value, 1, [])]
    while todo:
        node, depth, path = todo.pop()
        if depth > MAX_DEPTH:
            raise JSONTextError(f"{_in(what)}nested deeper than {MAX_DEPTH} levels{_where(path)}")
        items = node.items() if isinstance(node, dict) else enumerate(node)
        renamed: list[tuple[str, str]] = []
        for key, item in items:
            if isinstance(item, dict | list):
                todo.append((item, depth + 1, [*path, key]))
            elif isinstance(item, str):
                if clean:
                    fixed = _fix_text(item)
                    if fixed is not item:
                        node[key] = fixed
            elif isinstance(item, float) and not math.isfinite(item):
                raise JSONTextError(
                    f"{_in(what)}a number out of range ({item!r}){_where([*path, key])}")
            if clean and isinstance(key, str) and _fix_text(key) is not key:
                renamed.append((key, _fix_text(key)))
        for old, new in renamed:
            node[new] = node.pop(old)
    return value


SHALLOW = 2 * MAX_DEPTH
"""JSON text no longer than this cannot nest deeper than `MAX_DEPTH`: `parse` alone reads it
under the policy (it refuses what the policy refuses)."""


def _may_be_deep(text: str | bytes | bytearray | memoryview) -> bool:
    """Whether ``text`` (longer than `SHALLOW`) has enough brackets to nest past the limit.

    Bytes (what a server sends) are looked at in one pass: the text with its brackets taken out
    is shorter by their number (two counts would read every byte twice).
    """
    if isinstance(text, str):
        return text.count("[") + text.count("{") > MAX_DEPTH
    raw = text if type(text) is bytes else bytes(text)
    return len(raw) - len(raw.translate(None, b"[{")) > MAX_DEPTH


def loads(
    text: str | bytes | bytearray | memoryview, *, what: str = "", check_depth: bool = True
) -> Any:
    """The value of JSON ``text`` under the policy above.

    Raises `toolwire.errors.JSONTextError` (also a `json.JSONDecodeError`) for broken text, for
    nesting deeper than `MAX_DEPTH` and for numbers that are not finite; ``what`` names the text
    in front of that error's message.

    With ``check_depth=False`` a text longer than `SHALLOW` is not held to `MAX_DEPTH` here (the
    parser's own guard still refuses nesting near the interpreter's recursion limit): for a
    caller that holds every value it keeps to the limit itself, as the decoders' guards do
    (`toolwire.codecs.guards.hold_reply`).
    """
    try:
        value = parse(text)
    except RecursionError:
        raise JSONTextError(f"{_in(what)}nested deeper than {MAX_DEPTH} levels") from None
    except (ValueError, TypeError):
        return _slow_loads(text, what)
    if check_depth and len(text) > SHALLOW and _may_be_deep(text):
        walk_limit(value, what=what)
    return value


def _slow_loads(text: str | bytes | bytearray | memoryview, what: str) -> Any:
    """What msgspec refused, read by the standard parser and cleaned by the policy."""
    if not isinstance(text, str | bytes | bytearray | memoryview):
        raise JSONTextError(f"{_in(what)}expected JSON text, got {type(text).__name__}")
    doc = _text_of(text)
    try:
        value = json.loads(doc, parse_constant=_refuse_constant)
    except RecursionError:
        raise JSONTextError(f"{_in(what)}nested deeper than {MAX_DEPTH} levels") from None
    except json.JSONDecodeError as exc:
        raise JSONTextError(f"{_in(what)}{exc.msg}", exc.doc, exc.pos) from None
    except ValueError as exc:  # a constant refused, an integer past the digit limit
        raise JSONTextError(f"{_in(what)}{exc}") from None
    return walk_limit(value, clean=True, what=what)


# --------------------------------------------------------------------------- a call's arguments

_BROKEN: dict[str, tuple[str, str, int]] = {}
"""The last argument texts `read_arguments` found broken, with the error (message, text,
position): a text read once is not read again by the steps after (a stream decoder, the wire's
parts, ``ToolCallPart.from_raw``, the argument check)."""
_BROKEN_KEPT = 32


def read_arguments(text: str) -> Any:
    """``text``, the arguments a model sent as text, read as JSON under toolwire's policy.

    Text that does not parse raises `JSONTextError` (a `json.JSONDecodeError`)
    saying where; it is remembered (the last few), so that the steps a reply goes through after
    the one that read it get the same error without reading the text again.
    """
    known = _BROKEN.get(text)
    if known is not None:
        raise JSONTextError(*known)
    try:
        return loads(text)
    except json.JSONDecodeError as exc:
        if len(_BROKEN) >= _BROKEN_KEPT:
            # the oldest goes (another thread may have changed the dict meanwhile)
            with contextlib.suppress(StopIteration, KeyError, RuntimeError):
                del _BROKEN[next(iter(_BROKEN))]
        _BROKEN[text] = (exc.msg, exc.doc, exc.pos)
        raise JSONTextError(exc.msg, exc.doc, exc.pos) from None


def broken_arguments(text: str) -> json.JSONDecodeError | None:
    """Where ``text`` broke, when `read_arguments` found it broken lately and it was the
    text's own syntax (not a limit or a number), without reading it again; else None."""
    known = _BROKEN.get(text)
    if known is None or known[1] != text:
        return None
    return json.JSONDecodeError(*known)


_encode = Encoder().encode


def dumps(value: Any) -> bytes:
    """``value`` as UTF-8 JSON bytes; what msgspec cannot write goes to `json.dumps`.

    A lone surrogate in a string is written as its ``\\u`` escape, so the bytes are always valid
    UTF-8.
    """
    try:
        return _encode(value)
    except TypeError:
        text = json.dumps(value, ensure_ascii=False)
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True).encode()
    try:
        return text.encode()
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True).encode()


_SEPARATORS = ((b"\xe2\x80\xa8", b"\\u2028"), (b"\xe2\x80\xa9", b"\\u2029"),
               (b"\xc2\x85", b"\\u0085"))


def one_line(data: bytes) -> bytes:
    """UTF-8 JSON ``data`` with U+2028, U+2029 and U+0085 written as ``\\u`` escapes.

    JSON may hold these as they are, but line readers such as Python's ``splitlines`` take them
    for line ends, which would cut a JSON line in two. They occur only inside strings, where the
    escape stands for the same character.
    """
    if not data.isascii() and (data.find(b"\xe2\x80") >= 0 or data.find(b"\xc2\x85") >= 0):
        for raw, escaped in _SEPARATORS:
            data = data.replace(raw, escaped)
    return data
