"""Tools as contracts: the `tool` decorator, `Toolset` (tools by name, duplicates refused;
`check_call` finds a call's tool and checks its arguments in one lookup) and `validate_call`,
whose `ToolCallError` tells the model how to fix its next call.

`Tool` itself (from a raw JSON Schema, a function's signature and docstring, or a Pydantic
model) is in `toolwire.schema.contract` and re-exported here. Imports no codec, transport or
loop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypedDict, Unpack, overload

from toolwire.errors import ToolDefinitionError
from toolwire.schema.contract import Tool
from toolwire.schema.validate import unknown_tool
from toolwire.transcript import ToolCallPart, ToolSpec

__all__ = ["Tool", "Toolset", "tool", "validate_call"]


class ToolOptions(TypedDict, total=False):
    """What `tool` takes beside the function: the keywords of `Tool.from_function`."""

    name: str | None
    description: str | None
    idempotent: bool
    timeout: float | None
    strict: bool
    read_only: bool


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@overload
def tool(**options: Unpack[ToolOptions]) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(fn: Callable[..., Any] | None = None, /, **options: Unpack[ToolOptions]
         ) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a function a `Tool` (see `Tool.from_function`); use bare or with options
    (``name``, ``description``, ``idempotent``, ``timeout``, ``strict``, ``read_only``).

    The result is still callable like the function it wraps.
    """

    unknown = sorted(set(options) - set(ToolOptions.__annotations__))
    if unknown:
        raise TypeError(f"tool() got an unexpected keyword argument {unknown[0]!r}; it takes "
                        f"{', '.join(ToolOptions.__annotations__)}")

    def make(f: Callable[..., Any]) -> Tool:
        return Tool.from_function(f, **options)

    return make if fn is None else make(fn)


class Toolset(Mapping[str, Tool]):
    """Tools indexed by name, built once: duplicate names are refused here.

    Accepts tools, plain functions (made tools with `Tool.from_function`) or a mapping of
    name -> tool. Iterating gives names, in the order given; `specs` is what a request sends.
    """

    __slots__ = ("_checks", "_index", "specs")

    def __init__(self, tools: Iterable[Tool | Callable[..., Any]] | Mapping[str, Tool] = ()
                 ) -> None:
        index: dict[str, Tool] = {}
        if isinstance(tools, Tool) or callable(tools):  # one tool where a list was meant
            name = getattr(tools, "name", None) or getattr(tools, "__name__", "f")
            raise ToolDefinitionError(f"tools= takes a list of tools; write tools=[{name}]")
        if isinstance(tools, Mapping):
            for key, value in tools.items():
                if not isinstance(value, Tool):
                    raise ToolDefinitionError(f"{key!r} maps to {value!r}, which is not a Tool")
                if key != value.name:
                    raise ToolDefinitionError(f"{key!r} maps to a tool named {value.name!r}")
        items: Iterable[Tool | Callable[..., Any]] = (
            tools.values() if isinstance(tools, Mapping) else tools)
        for item in items:
            made = item if isinstance(item, Tool) else Tool.from_function(item)
            if (name := made.name) in index:
                raise ToolDefinitionError(f"two tools are named {name!r}; names must be unique")
            index[name] = made
        self._index = index
        self._checks = {name: t._checker.check for name, t in index.items()}
        self.specs: tuple[ToolSpec, ...] = tuple(t.spec for t in index.values())

    def __getitem__(self, name: str) -> Tool:
        return self._index[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)

    def __repr__(self) -> str:
        return f"Toolset({list(self._index)!r})"

    def check_call(self, call: ToolCallPart) -> tuple[Tool, dict[str, Any]]:
        """The tool ``call`` names and the call's validated arguments, in one lookup.

        Raises `ToolCallError` like `validate_call`; argument text a codec already parsed is not
        parsed again (`Tool.validate_part`).
        """
        try:  # `_find`, without a call of its own: this runs for every call a model makes
            found = self._index.get(call.name)
        except TypeError:
            found = None
        if found is None:
            raise unknown_tool(call.name, list(self._index))
        return found, found.validate_part(call)

    def validate(self, name: str, arguments: object) -> dict[str, Any]:
        """`validate_call` on this toolset."""
        return self._find(name)._checker.check(arguments)

    def _find(self, name: str) -> Tool:
        try:
            found = self._index.get(name)
        except TypeError:  # a name a model sent as a list or an object names no tool
            found = None
        if found is None:
            raise unknown_tool(name, list(self._index))
        return found


def _hashable(value: object) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def validate_call(
    tools: Toolset | Mapping[str, Tool] | Iterable[Tool], name: str, arguments: object
) -> dict[str, Any]:
    """Check a model's call of tool ``name`` and return its arguments as a dict.

    ``arguments`` may be the JSON text the model sent, an already parsed object, or ``""``
    or None (both mean no arguments). Raises `ToolCallError` whose ``str()`` tells the model
    what was wrong and how to fix it; its ``kind`` is ``unknown_tool``, ``invalid_json``,
    ``not_an_object``, ``too_deep`` (nested deeper than `validate.MAX_ARGUMENT_DEPTH`),
    ``unknown_field`` (only unknown fields) or ``schema``. Whatever the arguments, the check
    ends with a value or a `ToolCallError`, in time linear in their size. Given a list,
    the tools are indexed (and checked for duplicate names) on each call; a `Toolset` or a
    mapping is faster.
    """
    if type(tools) is not Toolset and not isinstance(tools, Mapping):
        tools = Toolset(tools)
    try:  # an unhashable name (a list, an object) names no tool: TypeError
        if type(tools) is Toolset:
            check = tools._checks.get(name)
            if check is not None:
                return check(arguments)
            found = None
        else:
            found = tools.get(name)
    except TypeError:
        if _hashable(name):  # not the name's doing: a bug, shown as it is
            raise
        found = None
    if found is None:
        raise unknown_tool(name, list(tools))
    return found._checker.check(arguments)
