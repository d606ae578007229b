"""Building values from stream fragments in time linear in what arrived.

Owns `Joins` (text fields of objects being built, their fragments joined once when read) and
`WholeObject` (whether JSON text arriving in pieces is, so far, exactly one object), and the
other way, `text_pieces`: a text cut into the deltas a streamed reply written by a codec sends;
and a value built from pieces each put at a JSON path (`path_steps`, `put_at`, `value_at`: a
call's arguments as Vertex AI streams them).
A stream decoder meets a hostile stream here as much as a framer does: a text or an argument
string sent in 100,000 one-character deltas must not cost 100,000 copies of what came before,
nor a parse of the whole text per delta. Pure; imports only `toolwire._json` and errors.
"""

from __future__ import annotations

import re
from typing import Any

from toolwire import _json
from toolwire.errors import StreamError


class Joins:
    """Text fields of dicts being built from stream fragments, joined once when read.

    Adding each fragment to a growing string copies the text so far every time: a long text in
    many small deltas costs time quadratic in its length. Here the fragments of each
    (dict, field) wait in a list, and `flush` writes every field once. Until then a field holds
    the text it had when its first fragment came (its type is what readers may look at).
    """

    __slots__ = ("_open",)

    def __init__(self) -> None:
        self._open: dict[tuple[int, str], tuple[dict[str, Any], str, list[str]]] = {}

    def add(self, target: dict[str, Any], key: str, piece: str) -> None:
        """``piece`` goes after ``target[key]`` (which counts as empty when it is no text)."""
        found = self._open.get((id(target), key))
        if found is not None:
            found[2].append(piece)
            return
        before = target.get(key)
        if not isinstance(before, str):
            target[key] = before = ""
        # the dict is kept here too, so its id names it until the flush
        self._open[(id(target), key)] = (target, key, [before, piece])

    def drop(self, target: dict[str, Any], key: str) -> None:
        """Forget the fragments waiting for ``target[key]`` (the field was given a new value)."""
        self._open.pop((id(target), key), None)

    def flush(self) -> None:
        """Write every field that has fragments waiting."""
        for target, key, pieces in self._open.values():
            target[key] = "".join(pieces)
        self._open.clear()


_NOT_BLANK = re.compile(r"[^ \t\r\n]")
_OUTSIDE = re.compile(r'["{}\[\]]')
_INSIDE = re.compile(r'["\\]')
_LEAD, _OPEN, _CLOSED, _DEAD = range(4)


class WholeObject:
    """Whether JSON text that arrives in pieces is, so far, exactly one object.

    `whole` takes the list of pieces the text is made of (appended to between calls, never
    changed otherwise) and looks only at the pieces it has not seen: brackets and strings are
    followed across pieces, and the text is parsed once, when its outer object closes. Asking
    after every piece therefore costs time linear in the text. Once the object has closed, any
    text after it but blanks means the pieces are no whole object, whatever comes later.
    """

    __slots__ = ("_depth", "_escape", "_in_string", "_seen", "_state", "_valid")

    def __init__(self) -> None:
        self._seen = 0
        self._state = _LEAD
        self._depth = 0
        self._in_string = False
        self._escape = False
        self._valid: bool | None = None

    def whole(self, pieces: list[str]) -> bool:
        for piece in pieces[self._seen:]:
            self._scan(piece)
        self._seen = len(pieces)
        if self._state == _CLOSED and self._valid is None:
            try:
                self._valid = isinstance(_json.loads("".join(pieces)), dict)
            except ValueError:  # JSONTextError, which names a broken text
                self._valid = False
        return self._state == _CLOSED and self._valid is True

    def _scan(self, piece: str) -> None:
        at, end = 0, len(piece)
        while at < end and self._state != _DEAD:
            if self._state == _LEAD or self._state == _CLOSED:
                found = _NOT_BLANK.search(piece, at)
                if found is None:
                    return
                at = found.end()
                if self._state == _CLOSED or found.group() != "{":
                    self._state = _DEAD
                else:
                    self._state, self._depth = _OPEN, 1
            elif self._escape:
                self._escape = False
                at += 1
            else:
                found = (_INSIDE if self._in_string else _OUTSIDE).search(piece, at)
                if found is None:
                    return
                at = found.end()
                mark = found.group()
                if mark == "\\":
                    self._escape = True
                elif mark == '"':
                    self._in_string = not self._in_string
                elif mark in "{[":
                    self._depth += 1
                else:
                    self._depth -= 1
                    if self._depth == 0:
                        self._state = _CLOSED


def text_pieces(text: str, n: int = 3, *, keep_empty: bool = False) -> list[str]:
    """``text`` in up to ``n`` consecutive pieces of similar length, as a server streams it
    (never an empty piece: none for empty text, or one with ``keep_empty``)."""
    if len(text) <= 1:
        return [text] if text or keep_empty else []
    size = -(-len(text) // n)
    return [text[i:i + size] for i in range(0, len(text), size)]


# --------------------------------------------------------------------------- values at JSON paths

MAX_LIST_INDEX = 10_000
"""The largest list index a path may name (indexes come from the wire)."""


def path_steps(path: str, wire: str) -> list[str | int]:
    """``$.a.b[0]['c d']`` as ``["a", "b", 0, "c d"]``; a path of another form is an error."""
    if not path.startswith("$"):
        raise StreamError(f"a partial argument's jsonPath {path[:100]!r} does not start at $",
                          wire=wire)
    steps: list[str | int] = []
    i, n = 1, len(path)
    while i < n:
        if path[i] == ".":
            j = i + 1
            while j < n and path[j] not in ".[":
                j += 1
            steps.append(path[i + 1:j])
            i = j
        elif path.startswith("['", i) or path.startswith('["', i):
            end = path.find(path[i + 1] + "]", i + 2)
            if end < 0:
                break
            steps.append(path[i + 2:end])
            i = end + 2
        elif path[i] == "[":
            end = path.find("]", i)
            if end < 0 or not path[i + 1:end].isdigit():
                break
            steps.append(int(path[i + 1:end]))
            i = end + 1
        else:
            break
    else:
        if steps:
            return steps
    raise StreamError(f"a partial argument's jsonPath {path[:100]!r} cannot be read", wire=wire)


def value_at(root: Any, steps: list[str | int]) -> Any:
    """The value at ``steps`` under ``root``; None where there is none."""
    for step in steps:
        if isinstance(step, int) and isinstance(root, list) and step < len(root):
            root = root[step]
        elif isinstance(step, str) and isinstance(root, dict):
            root = root.get(step)
        else:
            return None
    return root


def put_at(root: dict[str, Any], steps: list[str | int], value: Any, path: str, wire: str
           ) -> None:
    """Put ``value`` at ``steps`` (``path``, as the wire wrote it) under ``root``, making the
    objects and lists on the way; a `StreamError` for a path that cannot be followed."""
    here: Any = root
    for step, after in zip(steps, [*steps[1:], None], strict=True):
        if isinstance(step, int) and step > MAX_LIST_INDEX:
            raise StreamError(f"a partial argument's jsonPath {path[:100]!r} names list index "
                              f"{step}, over the limit of {MAX_LIST_INDEX}", wire=wire)
        empty: Any = value if after is None else [] if isinstance(after, int) else {}
        if isinstance(step, int):
            if not isinstance(here, list):
                raise StreamError(f"jsonPath {path[:100]!r} indexes something not a list",
                                  wire=wire)
            while len(here) <= step:
                here.append(None)
            if after is None or not isinstance(here[step], list | dict):
                here[step] = empty
            here = here[step]
        else:
            if not isinstance(here, dict):
                raise StreamError(f"jsonPath {path[:100]!r} names a field of something not an "
                                  "object", wire=wire)
            if after is None or not isinstance(here.get(step), list | dict):
                here[step] = empty
            here = here[step]


__all__ = ["MAX_LIST_INDEX", "Joins", "WholeObject", "path_steps", "put_at", "text_pieces",
           "value_at"]
