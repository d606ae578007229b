"""What the loop and the dispatcher say of a reply's calls, apart from running them.

Owns `unusable` (why a reply is refused before anything of it runs), `repeated_ids`,
`call_digest` (exactly what a call asks for, which a decision given on it names), `cut_off`
and `error_result` (results for calls that did not run), `render_result` (a tool's return
value as result text) and `cap_text`. Must not import the loop, the dispatcher, codecs or
transport: it works on canonical values.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import pydantic_core

from toolwire.protocol import holds_nothing
from toolwire.transcript import Reply, ToolCallPart, ToolResultPart

_JSON = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode
"""``json.dumps(value, ensure_ascii=False, allow_nan=False)``, with its encoder made once."""


def render_result(value: Any) -> str:
    """A tool's return value as result text: a string as it is, anything else as JSON.

    Pydantic models, dataclasses and dates are written as Pydantic writes them; NaN and
    infinities become ``null``. Raises ``TypeError`` when the value cannot be written as JSON.
    """
    if isinstance(value, str):
        return value
    try:
        return _JSON(value)
    except (TypeError, ValueError):
        pass
    try:  # pydantic models, dataclasses, dates, ...
        return pydantic_core.to_json(value, inf_nan_mode="null").decode("utf-8")
    except pydantic_core.PydanticSerializationError as exc:
        raise TypeError(str(exc)) from None


def cap_text(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters (head and tail kept), saying how much was cut."""
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    head = limit * 3 // 4
    tail = limit - head
    note = f"\n[... {cut} of {len(text)} characters cut here ...]\n"
    return text[:head] + note + (text[-tail:] if tail else "")


def call_digest(call: ToolCallPart) -> str:
    """A digest of exactly what a call asks for: its id, its tool and its arguments (as
    canonical JSON: keys sorted, no spaces; the raw text when it did not parse)."""
    args: Any = call.arguments if call.parse_error is None else call.raw_arguments
    text = json.dumps([call.id, call.name, args], sort_keys=True, ensure_ascii=False,
                      separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def repeated_ids(calls: Sequence[ToolCallPart]) -> list[str]:
    """The call ids that more than one of ``calls`` carries, each once, in order."""
    seen: set[str] = set()
    repeated: list[str] = []
    for call in calls:
        if call.id in seen and call.id not in repeated:
            repeated.append(call.id)
        seen.add(call.id)
    return repeated


def unusable(reply: Reply, calls: Sequence[ToolCallPart] | None = None) -> str | None:
    """Why a reply is refused before anything of it runs: it holds nothing, or two of its calls
    share an id (one result could not answer each, nor one decision). ``calls`` are the
    reply's calls when the caller has them already."""
    if calls is None:
        calls = reply.tool_calls
    if len(calls) == 1:  # the usual turn: a call is something, and one id cannot repeat
        return None
    if holds_nothing(reply):
        return (f"the model's reply holds no text and no tool call (stop {reply.stop!r}); it "
                "is not an answer and was not added")
    if repeated := repeated_ids(calls):
        return (f"the model's reply gives more than one tool call the id "
                f"{', '.join(map(repr, repeated))}; none of its calls was run and it was not "
                "added")
    return None


def cut_off(call: ToolCallPart) -> ToolResultPart:
    """The result of a call whose reply was cut off while the call was being written."""
    return error_result(call, "Not run: the reply was cut off by the output token limit while this "
                  "call was being written, so its arguments may be incomplete.")


def error_result(call: ToolCallPart, text: str) -> ToolResultPart:
    """A result saying ``text`` of ``call``, as an error the model reads."""
    return ToolResultPart(call_id=call.id, content=text, is_error=True, name=call.name)


__all__ = ["call_digest", "cap_text", "cut_off", "error_result", "render_result",
           "repeated_ids", "unusable"]
