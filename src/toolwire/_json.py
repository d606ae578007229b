"""Reading JSON fast, with the standard library's results and errors.

Owns `loads`. pydantic-core's parser (pydantic is a dependency already) reads JSON several times
faster than `json.loads` and keeps integers of any size exact; it is imported on first use, so
`import toolwire` stays light. Whatever it refuses (lone surrogates, very deep nesting, broken
text) goes to `json.loads`, so the values and the error messages are those of the standard
parser.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any


@functools.cache
def _parser() -> Callable[[str | bytes], Any]:
    from pydantic_core import from_json

    return from_json


def loads(text: str | bytes) -> Any:
    """The value of JSON ``text``; raises `json.JSONDecodeError` as `json.loads` would."""
    try:
        return _parser()(text)
    except (ValueError, TypeError):
        return json.loads(text)
