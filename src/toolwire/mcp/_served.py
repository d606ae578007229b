"""What `toolwire.mcp.server` adds to a served tool: its output schema, and ``ask_user`` put to
the client's user as an elicitation.

Owns `output_schema` (an MCP output schema from a tool function's return annotation, and whether
its value is wrapped as ``{"result": value}``), `structured` (a result's text as the structured
content that schema describes) and `Asking` (the served ``ask_user`` tool, asking a form of one
field through the call's `toolwire.mcp.context.Context`: an input request on protocol versions
from 2026-07-28, an ``elicitation/create`` request during the call on older ones). Must not
import the loop, codecs or the transport.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Sequence
from typing import Any

from pydantic import TypeAdapter

from toolwire.errors import ToolError
from toolwire.mcp.context import Context
from toolwire.schema.tool import Tool
from toolwire.tools.ask_user import NO_USER, ask_user
from toolwire.transcript import MediaPart

__all__ = ["KEY", "Asking", "output_schema", "structured"]

KEY = "answer"
"""The one field of the served ``ask_user``'s form."""

_NOT_STRUCTURED = (str, bytes, type(None), typing.Any)


def output_schema(tool: Tool) -> tuple[dict[str, Any] | None, bool]:
    """The MCP output schema of ``tool`` (None when its function declares no return type, or
    one that is text, media or anything), and whether values are wrapped in ``result``."""
    fn = tool.fn
    if fn is None:
        return None, False
    try:
        returned = typing.get_type_hints(fn).get("return")
    except Exception:  # annotations that do not resolve: no schema
        return None, False
    if returned is None or returned in _NOT_STRUCTURED or _is_media(returned):
        return None, False
    try:
        schema = TypeAdapter(returned).json_schema()
    except Exception:  # a type pydantic cannot describe
        return None, False
    if schema.get("type") == "object":
        return schema, False
    defs = schema.pop("$defs", None)
    wrapped: dict[str, Any] = {"type": "object", "properties": {"result": schema},
                               "required": ["result"]}
    if defs:
        wrapped["$defs"] = defs
    return wrapped, True


def _is_media(returned: Any) -> bool:
    """Whether a return type may hold media (a part, bytes with their type, or anything)."""
    if returned is typing.Any or (isinstance(returned, type)
                                  and issubclass(returned, MediaPart | bytes)):
        return True
    return any(_is_media(arg) for arg in typing.get_args(returned))


def structured(text: str, wrapped: bool) -> Any:
    """A result's text (JSON, as `toolwire.agent.dispatch.render_result` writes a value) as
    structured content; None when it is not JSON (cut to fit, say)."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if wrapped:
        return {"result": value}
    return value if isinstance(value, dict) else None


class Asking:
    """The served ``ask_user`` tool, whose questions go to the MCP client's user through the
    call's `toolwire.mcp.context.Context` (a form of one field, its choices as examples)."""

    def __init__(self, name: str = "ask_user") -> None:
        self.tool = ask_user(self._answer, name=name)

    @staticmethod
    def form(question: str, choices: Sequence[str] | None) -> dict[str, Any]:
        """The requested schema of the form asking ``question``."""
        about = "Your answer"
        if choices:
            about += f" (for example: {' / '.join(str(c) for c in choices)})"
        return {"type": "object", "properties": {KEY: {"type": "string", "title": "Answer",
                                                       "description": about}},
                "required": [KEY]}

    async def _answer(self, question: str, choices: Sequence[str] | None) -> str:
        ctx = Context.__toolwire_inject__()
        if not ctx.served:
            raise ToolError(NO_USER)
        try:
            answered = await ctx.elicit(question, self.form(question, choices))
        except ToolError as exc:
            if ctx.pending:  # 2026-07-28: the call ends with the question, and comes back
                raise
            raise ToolError(f"{NO_USER} ({exc})") from None
        if answered.action == "accept":
            return str((answered.content or {}).get(KEY, ""))
        done = "declined to answer" if answered.action == "decline" else "dismissed the question"
        raise ToolError(f"The user {done}. Go on with your best judgement and say what you "
                        "assumed.")
