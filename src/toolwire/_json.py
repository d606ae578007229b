"""Reading JSON fast, with the standard library's results and errors.

Owns `loads`. msgspec's parser (the transcript's values are msgspec Structs, so it is loaded
already) reads JSON several times faster than `json.loads` and keeps integers of any size
exact. Whatever it refuses (NaN and Infinity, numbers out of float range, lone surrogates, very
deep nesting, broken text) goes to `json.loads`, so the values and the error messages are those
of the standard parser.
"""

from __future__ import annotations

import json
from typing import Any

from msgspec.json import Decoder

_decode = Decoder().decode


def loads(text: str | bytes) -> Any:
    """The value of JSON ``text``; raises `json.JSONDecodeError` as `json.loads` would."""
    try:
        return _decode(text)
    except (ValueError, TypeError, RecursionError):
        return json.loads(text)
