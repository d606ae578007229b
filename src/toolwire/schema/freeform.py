"""Freeform tools: a `Tool` that takes free text in place of JSON arguments.

Owns `FreeformTool`. On a wire with such tools (OpenAI's custom tools, on Chat Completions and
the Responses API) the model is shown a custom tool, with a Lark or regex grammar when one is
given, and its call carries the text itself; every other wire shows a function tool whose one
string argument ``input`` holds the text. Either way ``fn`` is called with the text alone.
Imports only the transcript and `toolwire.schema.tool`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

import msgspec

from toolwire.errors import ToolDefinitionError
from toolwire.schema.tool import Tool
from toolwire.transcript import Grammar, ToolCallPart

__all__ = ["FreeformTool"]

_INPUT: Final = {"type": "object", "properties": {"input": {"type": "string"}},
                 "required": ["input"]}


class FreeformTool(Tool):
    """A tool the model calls with free text, passed to ``fn`` as its one argument.

    ``grammar`` (a `Grammar`: ``syntax`` ``"lark"`` or ``"regex"`` and its ``definition``)
    constrains the text on the wires that take one; elsewhere it is left out, with a note.
    ``FreeformTool(name="apply_patch", fn=apply, grammar=Grammar(syntax="lark",
    definition=...))``.
    """

    __slots__ = ()

    def __init__(
        self,
        *,
        name: str,
        description: str = "",
        fn: Callable[[str], Any] | None = None,
        grammar: Grammar | None = None,
        idempotent: bool = False,
        timeout: float | None = None,
        read_only: bool = False,
    ) -> None:
        if grammar is not None and not isinstance(grammar, Grammar):
            raise ToolDefinitionError(f"tool {name!r}: grammar must be a Grammar, got "
                                      f"{grammar!r}")
        super().__init__(name=name, description=description, input_schema=_INPUT, fn=fn,
                         idempotent=idempotent, timeout=timeout, read_only=read_only)
        spec = msgspec.structs.replace(self.spec, freeform=True, grammar=grammar)
        object.__setattr__(self, "spec", spec)

    def validate_part(self, call: ToolCallPart) -> dict[str, Any]:
        """The call's text as ``{"input": text}``: a freeform call's own text, or the
        ``input`` argument of the function call a wire without freeform calls sent."""
        if call.freeform:
            raw = call.raw_arguments
            return {"input": raw if raw is not None else str(call.arguments or "")}
        return super().validate_part(call)

    def bind(self, arguments: Mapping[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """``fn`` takes the text alone."""
        return (arguments["input"],), {}
