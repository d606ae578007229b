"""Building values from stream fragments in time linear in what arrived.

Owns `Joins` (text fields of objects being built, their fragments joined once when read) and
`WholeObject` (whether JSON text arriving in pieces is, so far, exactly one object), and the
other way, `text_pieces`: a text cut into the deltas a streamed reply written by a codec sends.
A stream decoder meets a hostile stream here as much as a framer does: a text or an argument
string sent in 100,000 one-character deltas must not cost 100,000 copies of what came before,
nor a parse of the whole text per delta. Pure; imports only `toolwire._json`.
"""

from __future__ import annotations

import re
from typing import Any

from toolwire import _json


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


__all__ = ["Joins", "WholeObject", "text_pieces"]
