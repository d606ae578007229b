"""What `toolwire.mcp.server` adds to a served tool: its output schema, and ``ask_user`` put to
the client's user as an elicitation.

Owns `output_schema` (an MCP output schema from a tool function's return annotation, and whether
its value is wrapped as ``{"result": value}``), `structured` (a result's text as the structured
content that schema describes) and `Asking` (the served ``ask_user`` tool: on protocol versions
from 2026-07-28 a call is answered with an ``InputRequiredResult`` holding a form of one field,
and the client's retry carries the user's answer; on older versions the server sends an
``elicitation/create`` request during the call). Must not import the loop, codecs or the
transport.
"""

from __future__ import annotations

import contextvars
import json
import typing
from collections.abc import Mapping
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp_types import (
    CallToolRequestParams,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import TypeAdapter

from toolwire.errors import ToolError
from toolwire.schema.tool import Tool
from toolwire.tools.ask_user import NO_USER, ask_user
from toolwire.transcript import MediaPart

__all__ = ["KEY", "Asking", "output_schema", "structured"]

KEY = "answer"
"""The key of the served ``ask_user``'s one input request, and the field of its form."""

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


_CALL: contextvars.ContextVar[tuple[ServerRequestContext[Any], ElicitResult | None]] = (
    contextvars.ContextVar("toolwire_mcp_asking"))


class Asking:
    """The served ``ask_user`` tool, whose questions go to the MCP client's user."""

    def __init__(self, name: str = "ask_user") -> None:
        self.tool = ask_user(self._answer, name=name)

    def form(self, arguments: Mapping[str, Any] | None) -> ElicitRequestFormParams:
        """The form asking the question of a call's ``arguments``."""
        args = arguments or {}
        question = str(args.get("question", ""))
        choices = args.get("choices")
        about = "Your answer"
        if isinstance(choices, list) and choices:
            about += f" (for example: {' / '.join(str(c) for c in choices)})"
        schema = {"type": "object", "properties": {KEY: {"type": "string", "title": "Answer",
                                                         "description": about}},
                  "required": [KEY]}
        return ElicitRequestFormParams(message=question, requested_schema=schema)

    def before(self, ctx: ServerRequestContext[Any], params: CallToolRequestParams
               ) -> InputRequiredResult | None:
        """On a newer protocol: the input request for a first call (None: run the call, with
        the answer its retry carries)."""
        answered = (params.input_responses or {}).get(KEY)
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        if modern and not isinstance(answered, ElicitResult):
            request = ElicitRequest(params=self.form(params.arguments))
            return InputRequiredResult(input_requests={KEY: request})
        _CALL.set((ctx, answered if isinstance(answered, ElicitResult) else None))
        return None

    async def _answer(self, question: str, choices: Any) -> str:
        found = _CALL.get(None)
        if found is None:
            raise ToolError(NO_USER)
        ctx, answered = found
        if answered is None:
            form = self.form({"question": question, "choices": list(choices or ())})
            try:
                answered = await ctx.session.elicit_form(form.message, form.requested_schema,
                                                         related_request_id=ctx.request_id)
            except Exception as exc:
                raise ToolError(f"{NO_USER} (the MCP client could not be asked: "
                                f"{type(exc).__name__}: {exc})") from None
        if answered.action == "accept":
            return str((answered.content or {}).get(KEY, ""))
        done = "declined to answer" if answered.action == "decline" else "dismissed the question"
        raise ToolError(f"The user {done}. Go on with your best judgement and say what you "
                        "assumed.")
