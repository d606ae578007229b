"""Reading and writing JSON fast, with the standard library's results and errors.

Owns `loads` and `dumps`. msgspec's parser (the transcript's values are msgspec Structs, so it
is loaded already) reads JSON several times faster than `json.loads` and keeps integers of any
size exact. Whatever it refuses (NaN and Infinity, numbers out of float range, lone surrogates,
very deep nesting, broken text) goes to `json.loads`, so the values and the error messages are
those of the standard parser. msgspec's encoder writes request bodies: compact UTF-8 JSON in
key order, floats in their shortest form (``1e-7`` where `json.dumps` writes ``1e-07``: the same
value), NaN and infinities as ``null`` (which no API accepts as numbers anyway).
"""

from __future__ import annotations

import json
from typing import Any

from msgspec.json import Decoder, Encoder

parse = Decoder().decode
"""The fast parser alone: raises ``ValueError``, ``TypeError`` or ``RecursionError`` on whatever it
refuses, where a caller on a hot path falls back to `loads` for the standard value or error."""


def loads(text: str | bytes) -> Any:
    """The value of JSON ``text``; raises `json.JSONDecodeError` as `json.loads` would."""
    try:
        return parse(text)
    except (ValueError, TypeError, RecursionError):
        return json.loads(text)


_encode = Encoder().encode


def dumps(value: Any) -> bytes:
    """``value`` as UTF-8 JSON bytes; what msgspec cannot write goes to `json.dumps`."""
    try:
        return _encode(value)
    except TypeError:
        return json.dumps(value, ensure_ascii=False).encode()
