"""An MCP server's elicitation requests, put to the user as ``ask_user`` questions.

Owns `Asker` (the SDK's elicitation callback for one connection), `DECLINE` and `CANCEL`. The
user is reached through the same `toolwire.tools.ask_user.Answerer` the ``ask_user`` tool
uses: a form asks one question per field (its title, description, type, and its allowed
values as choices), each answer is read as the field's type and checked against the field's
part of the requested schema (a wrong answer is asked again, at most `TRIES` times). The
user declines by answering `DECLINE` or by the answerer raising `toolwire.errors.ToolError`,
and cancels by answering `CANCEL` or ending the input; with no answerer (a run nobody
watches) every request is declined, saying why. What came of each request is reported with
``report`` (the connection makes it a `toolwire.events.ToolAsked` event of the run). Must not
import the loop, codecs or the transport.
"""

from __future__ import annotations

import asyncio
import inspect
import math
from collections.abc import Callable, Sequence
from typing import Any

from mcp.client.session import ClientRequestContext
from mcp_types import ElicitRequestFormParams, ElicitRequestParams, ElicitResult

from toolwire.errors import ToolCallError, ToolDefinitionError, ToolError
from toolwire.schema.validate import Checker
from toolwire.tools.ask_user import Answerer

__all__ = ["CANCEL", "DECLINE", "NOT_INTERACTIVE", "TRIES", "Asker"]

DECLINE = "/decline"
"""The answer that declines a server's request (the spec's ``decline`` action)."""
CANCEL = "/cancel"
"""The answer that dismisses a server's request without a choice (``cancel``)."""
TRIES = 3
"""How many times a field is asked when its answers do not fit its schema."""
NOT_INTERACTIVE = "no user is available to answer in this run (it is not interactive)"

Report = Callable[[str, str, str], None]
"""Told the question, the action taken and the reason (empty when the user chose)."""

_YES = {"y", "yes", "true", "1", "on"}
_NO = {"n", "no", "false", "0", "off"}


class _Stop(Exception):
    def __init__(self, action: str, reason: str) -> None:
        super().__init__(reason)
        self.action = action
        self.reason = reason


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _values(schema: dict[str, Any], options: str) -> list[Any]:
    """The values a schema allows: its ``enum``, or the ``const`` of each of its options."""
    return _listed(schema.get("enum")) or [o.get("const") for o in _listed(schema.get(options))
                                           if isinstance(o, dict)]


def _choices(prop: dict[str, Any]) -> list[str] | None:
    if prop.get("type") == "boolean":
        return ["yes", "no"]
    values = _values(prop, "oneOf")
    if prop.get("type") == "array" and isinstance(prop.get("items"), dict):
        values = _values(prop["items"], "anyOf")
    return [str(v) for v in values] or None


def _answerable(value: Any) -> bool:
    """Whether ``value`` is what an elicitation answer may hold: text, a finite number, yes or
    no, or a list of texts (a server's ``default`` that is anything else is not sent)."""
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, str | int | bool) or (
        isinstance(value, list) and all(isinstance(item, str) for item in value))


def _read(text: str, prop: dict[str, Any]) -> Any:
    """``text`` as the value a field of schema ``prop`` holds; ValueError saying why not."""
    kind = prop.get("type")
    if kind == "boolean":
        word = text.strip().lower()
        if word in _YES | _NO:
            return word in _YES
        raise ValueError(f"{text!r} is not yes or no")
    if kind == "integer":
        try:
            return int(text.strip())
        except ValueError:
            raise ValueError(f"{text!r} is not a whole number") from None
    if kind == "number":
        try:
            number = float(text.strip())
        except ValueError:
            raise ValueError(f"{text!r} is not a number") from None
        if not math.isfinite(number):
            raise ValueError(f"{text!r} is not a finite number")
        return number
    if kind == "array":
        return [item.strip() for item in text.split(",") if item.strip()]
    return text


class Asker:
    """The elicitation callback of the connection to server ``server``."""

    def __init__(self, answer: Answerer | None, server: str, report: Report) -> None:
        self.answer = answer
        self.server = server
        self.report = report

    async def __call__(self, context: ClientRequestContext,
                       params: ElicitRequestParams) -> ElicitResult:
        question = params.message
        if self.answer is None:
            self.report(question, "decline", NOT_INTERACTIVE)
            return ElicitResult(action="decline")
        try:
            if isinstance(params, ElicitRequestFormParams):
                content = await self._form(params.message, params.requested_schema)
            else:
                await self._ask(f"{params.message}\nOpen {params.url} and answer once done "
                                f"({DECLINE} to refuse, {CANCEL} to dismiss).", None)
                content = None
        except _Stop as stop:
            self.report(question, stop.action, stop.reason)
            return ElicitResult(action=stop.action)  # type: ignore[arg-type]
        self.report(question, "accept", "")
        return ElicitResult(action="accept", content=content)

    async def _ask(self, question: str, choices: Sequence[str] | None) -> str:
        assert self.answer is not None
        try:
            if inspect.iscoroutinefunction(self.answer):
                given = await self.answer(question, choices)
            else:
                given = await asyncio.to_thread(self.answer, question, choices)
                if inspect.isawaitable(given):
                    given = await given
        except ToolError as exc:
            raise _Stop("decline", f"the user declined: {exc}") from None
        except EOFError:
            raise _Stop("cancel", "the input ended") from None
        text = str(given).strip()
        if text == DECLINE:
            raise _Stop("decline", "the user declined")
        if text == CANCEL:
            raise _Stop("cancel", "the user dismissed the request")
        return text

    async def _form(self, message: str, schema: dict[str, Any]) -> dict[str, Any]:
        props = schema.get("properties") if isinstance(schema, dict) else None
        if not isinstance(props, dict):
            raise _Stop("decline", "the requested form has no fields")
        required = {str(r) for r in _listed(schema.get("required"))}
        content: dict[str, Any] = {}
        header = f"The MCP server {self.server!r} asks: {message}"
        for name, prop in props.items():
            prop = prop if isinstance(prop, dict) else {}
            try:
                checker = Checker(name, {"type": "object", "properties": {name: prop}})
            except ToolDefinitionError:
                raise _Stop("decline", f"the form's field {name!r} has no usable schema") from None
            value = await self._field(header, name, prop, name in required, checker)
            if value is not None:
                content[name] = value
        return content

    async def _field(self, header: str, name: str, prop: dict[str, Any], required: bool,
                     checker: Checker) -> Any:
        title = prop.get("title") or name
        about = f": {prop['description']}" if prop.get("description") else ""
        kind = prop.get("type", "text")
        optional = "" if required else ", optional: leave empty to skip"
        hint = f"({kind}{optional}; {DECLINE} to refuse, {CANCEL} to dismiss)"
        problem = ""
        for _ in range(TRIES):
            text = await self._ask(f"{header}\n{problem}{title}{about} {hint}", _choices(prop))
            if not text:
                if not required:
                    default = prop.get("default")
                    return default if _answerable(default) else None
                problem = f"{title} is required. "
                continue
            try:
                value = _read(text, prop)
                checker.check({name: value})
            except ValueError as exc:
                problem = f"That answer does not fit: {exc}. "
                continue
            except ToolCallError as exc:
                lines = str(exc).splitlines()[1:] or [str(exc)]
                problem = f"That answer does not fit: {'; '.join(x[2:] for x in lines)}. "
                continue
            return value
        raise _Stop("cancel", f"no answer for {title!r} fitted the requested form after "
                              f"{TRIES} tries")
