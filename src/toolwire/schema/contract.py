"""One tool: `Tool`, what a model is shown of it (name, description, closed schema) and how a
call of it runs (its arguments validated, bound to the function's parameters, awaited).

Built from a raw JSON Schema, a function's signature and docstring, or a Pydantic model; the
collection of tools and the `tool` decorator are in `toolwire.schema.tool`, which re-exports
`Tool`. Imports no codec, transport or loop.

Closed: an object schema listing ``properties`` and silent on extra fields gets
``"additionalProperties": false`` (shown and checked alike); one without stays an open map.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

import msgspec
from pydantic import BaseModel, ValidationError

from toolwire.errors import ToolCallError, ToolDefinitionError
from toolwire.schema import derive
from toolwire.schema.validate import Checker, quote
from toolwire.schema.walk import JSONSchema, as_object_schema, close_objects
from toolwire.transcript import ToolCallPart, ToolSpec

__all__ = ["Tool"]

_Mode = Literal["kwargs", "signature", "model"]
_Injected = tuple[tuple[str, Callable[[], Any]], ...]  # (parameter, provider) per call


def _checked_name(name: object) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ToolDefinitionError(f"a tool needs a non-empty name, got {name!r}")
    return name


def _is_async(fn: Callable[..., Any] | None) -> bool:
    if fn is None:
        return False
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - an object whose __call__ is async
    )


class Tool:
    """A tool a model may call: what it is shown (name, description, schema) and what runs.

    Build one from a raw JSON Schema with ``Tool(name=..., input_schema=..., fn=...)``, from a
    function with `Tool.from_function` or the `tool` decorator, or from a Pydantic model with
    `Tool.from_model`. ``fn=None`` makes a definition only (the model may call it; something
    else answers). Tools are immutable.

    How `call` passes the validated arguments to ``fn``:

    - raw schema: as keyword arguments, ``fn(**arguments)``;
    - from a function: as that function's parameters, each converted to its annotated type
      (nested Pydantic models, dataclasses, enums, TypedDicts...);
    - from a Pydantic model: one positional argument, the validated model instance.
    """

    __slots__ = (
        "_checker",
        "_fields",
        "_injected",
        "_mode",
        "_model",
        "description",
        "fn",
        "idempotent",
        "input_schema",
        "is_async",
        "name",
        "read_only",
        "spec",
        "strict",
        "timeout",
    )

    name: str
    description: str
    input_schema: JSONSchema
    """The closed schema exactly as shown to the model. Treat it as read-only."""
    fn: Callable[..., Any] | None
    idempotent: bool
    """True when calling twice with the same arguments is as safe as calling once."""
    read_only: bool
    """True when a call changes nothing (it only reads): a streamed reply may start it as soon
    as its block closes, before the rest of the reply has arrived (`Agent(eager_tools=...)`)."""
    timeout: float | None
    """Seconds a call may take, or None for no limit of the tool's own."""
    strict: bool
    is_async: bool
    spec: ToolSpec
    _checker: Checker
    _mode: _Mode
    _model: type[BaseModel] | None
    _fields: tuple[tuple[str, str, bool], ...]
    _injected: _Injected

    def __init__(
        self,
        *,
        name: str,
        description: str = "",
        input_schema: Mapping[str, Any] | None = None,
        fn: Callable[..., Any] | None = None,
        idempotent: bool = False,
        timeout: float | None = None,
        strict: bool = False,
        read_only: bool = False,
        examples: Iterable[Mapping[str, Any]] = (),
        allowed_callers: Iterable[str] = (),
    ) -> None:
        name = _checked_name(name)
        raw = {"type": "object", "properties": {}} if input_schema is None else input_schema
        schema = close_objects(as_object_schema(name, raw))
        self._setup(name, description, schema, fn, idempotent, timeout, strict, "kwargs", None, ())
        self._extras(read_only, examples, allowed_callers)

    def _extras(self, read_only: bool, examples: Iterable[Mapping[str, Any]],
                allowed_callers: Iterable[str] = ()) -> None:
        """Set ``read_only``; give the spec ``examples``, each checked against the tool's
        schema, and ``allowed_callers`` (strings)."""
        object.__setattr__(self, "read_only", bool(read_only))
        callers = tuple(allowed_callers)
        if not all(isinstance(c, str) and c for c in callers):
            raise ToolDefinitionError(f"tool {self.name!r}: allowed_callers must be non-empty "
                                      f"strings, got {callers!r}")
        if callers:
            spec = msgspec.structs.replace(self.spec, allowed_callers=callers)
            object.__setattr__(self, "spec", spec)
        kept = []
        for at, example in enumerate(examples, 1):
            try:
                kept.append(self._checker.check(dict(example)))
            except (ToolCallError, TypeError, ValueError) as exc:
                raise ToolDefinitionError(
                    f"tool {self.name!r}: example {at} ({example!r}) does not fit the tool's "
                    f"schema: {exc}; fix the example or the schema") from None
        if kept:
            spec = msgspec.structs.replace(self.spec, examples=tuple(kept))
            object.__setattr__(self, "spec", spec)

    def _setup(self, name: str, description: str | None, schema: JSONSchema,
               fn: Callable[..., Any] | None, idempotent: bool, timeout: float | None,
               strict: bool, mode: _Mode, model: type[BaseModel] | None,
               fields: tuple[tuple[str, str, bool], ...], injected: _Injected = ()) -> None:
        if description is not None and not isinstance(description, str):
            raise ToolDefinitionError(f"tool {name!r}: description must be a string")
        if fn is not None and not callable(fn):
            raise ToolDefinitionError(f"tool {name!r}: fn must be callable, got {fn!r}")
        if timeout is not None and not timeout > 0:
            raise ToolDefinitionError(f"tool {name!r}: timeout must be positive, got {timeout!r}")
        checker = Checker(name, schema)
        set_ = object.__setattr__
        set_(self, "name", name)
        set_(self, "description", description or "")
        set_(self, "input_schema", schema)
        set_(self, "fn", fn)
        set_(self, "idempotent", bool(idempotent))
        set_(self, "read_only", False)
        set_(self, "timeout", timeout)
        set_(self, "strict", bool(strict))
        set_(self, "is_async", _is_async(fn))
        set_(self, "spec", ToolSpec(name=name, description=description or "", input_schema=schema,
                                    strict=bool(strict)))  # fmt: skip
        set_(self, "_checker", checker)
        set_(self, "_mode", mode)
        set_(self, "_model", model)
        set_(self, "_fields", fields)
        set_(self, "_injected", injected)

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError(f"Tool is immutable (cannot set {key!r})")

    def __repr__(self) -> str:
        fn = getattr(self.fn, "__qualname__", None) if self.fn is not None else None
        return f"Tool(name={self.name!r}, fn={fn})"

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        idempotent: bool = False,
        timeout: float | None = None,
        strict: bool = False,
        read_only: bool = False,
        examples: Iterable[Mapping[str, Any]] | None = None,
        allowed_callers: Iterable[str] = (),
    ) -> Tool:
        """A tool whose schema comes from ``fn``'s signature and docstring.

        The docstring's text before its first section is the description; an ``Args:``
        section (or NumPy ``Parameters``, or Sphinx ``:param x:``) gives each parameter's, and
        the JSON objects of an ``Examples:`` section, one a line, are the tool's ``examples``
        (unless they are given). Parameters without a default are required; every object in
        the schema is closed.
        """
        if not callable(fn):
            raise ToolDefinitionError(f"Tool.from_function needs a callable, got {fn!r}")
        if name is None and not getattr(fn, "__name__", None):
            raise ToolDefinitionError(f"cannot name a tool after {fn!r}: pass name=...")
        tool_name = _checked_name(name if name is not None else fn.__name__)
        made = derive.from_function(tool_name, fn)
        return cls._derived(
            tool_name, made, description, fn, idempotent, timeout, strict, "signature",
            made.model, read_only,
            derive.docstring_examples(tool_name, inspect.getdoc(fn)) if examples is None
            else examples, allowed_callers)

    @classmethod
    def from_model(
        cls,
        model: type[BaseModel],
        fn: Callable[[Any], Any] | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
        idempotent: bool = False,
        timeout: float | None = None,
        strict: bool = False,
        read_only: bool = False,
    ) -> Tool:
        """A tool whose input is one Pydantic model; ``fn`` receives the validated instance.

        The name defaults to the model's class name and the description to its docstring.
        """
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise ToolDefinitionError(
                f"Tool.from_model needs a Pydantic model class, got {model!r}"
            )
        tool_name = _checked_name(name if name is not None else model.__name__)
        made = derive.from_model(tool_name, model)
        return cls._derived(tool_name, made, description, fn, idempotent, timeout, strict,
                            "model", model, read_only)

    @classmethod
    def _derived(cls, name: str, made: derive.Derived, description: str | None,
                 fn: Callable[..., Any] | None, idempotent: bool, timeout: float | None,
                 strict: bool, mode: _Mode, model: type[BaseModel] | None, read_only: bool,
                 examples: Iterable[Mapping[str, Any]] = (),
                 allowed_callers: Iterable[str] = ()) -> Tool:
        """A tool from what `derive` made of a function or a model: its description unless one
        is given, its schema, its fields and injected parameters."""
        self = cls.__new__(cls)
        self._setup(name, made.description if description is None else description, made.schema,
                    fn, idempotent, timeout, strict, mode, model, made.fields, made.injected)
        self._extras(read_only, examples, allowed_callers)
        return self

    def validate(self, arguments: object) -> dict[str, Any]:
        """The validated arguments of a call to this tool (see `validate_call`)."""
        return self._checker.check(arguments)

    def validate_part(self, call: ToolCallPart) -> dict[str, Any]:
        """The validated arguments of ``call``, a call to this tool, read once: a call made from
        text (`ToolCallPart.from_raw`) holds the parsed value, checked as it is, and text that
        did not parse is not read again."""
        raw = call.raw_arguments
        if raw is None or call.arguments is None:
            if raw is not None and call.parse_error is not None:
                self._checker.check_broken(raw)  # the failure found before, reused: raises
            return self._checker.check(call.arguments if raw is None else raw)  # wire_arguments
        return self._checker.check_parsed(call.arguments, raw)

    def bind(self, arguments: Mapping[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The positional and keyword arguments `call` gives ``fn`` for validated ``arguments``.

        Raises `ToolCallError` (kind ``schema``) when a value fits the schema but not the
        Python type it converts to (a model's own validators, for instance).
        """
        if self._mode == "kwargs":
            return (), dict(arguments)
        assert self._model is not None
        try:
            instance = self._model.model_validate(arguments)
        except ValidationError as exc:
            raise self._conversion_error(exc) from None
        if self._mode == "model":
            return (instance,), {}
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for field, param, positional in self._fields:
            if positional:
                args.append(getattr(instance, field))
            elif field in instance.model_fields_set:
                kwargs[param] = getattr(instance, field)
            # else: not sent, so the function's own default applies
        kwargs.update((param, provide()) for param, provide in self._injected)
        return tuple(args), kwargs

    def _conversion_error(self, exc: ValidationError) -> ToolCallError:
        problems = []
        for error in exc.errors(include_url=False):
            where = ".".join(str(p) for p in error["loc"]) or "arguments"
            problems.append(f"{quote(where)}: {error['msg']}")
        body = "\n".join(f"- {p}" for p in problems)
        return ToolCallError(
            f"Invalid arguments for tool {quote(self.name)}:\n{body}",
            kind="schema",
            tool=self.name,
            problems=tuple(problems),
        )

    def call(self, arguments: Mapping[str, Any]) -> Any:
        """Run ``fn`` with already validated ``arguments`` (an awaitable if ``fn`` is async)."""
        if self.fn is None:
            raise TypeError(f"tool {self.name!r} is a definition only (fn=None)")
        args, kwargs = self.bind(arguments)
        return self.fn(*args, **kwargs)

    async def acall(self, arguments: Mapping[str, Any]) -> Any:
        """Run ``fn`` with validated ``arguments`` and await it.

        An async ``fn`` runs on the current event loop; a plain one runs in a worker thread
        (``asyncio.to_thread``) so it does not block other calls.
        """
        if self.is_async:
            return await self.call(arguments)
        result = await asyncio.to_thread(self.call, arguments)
        if inspect.isawaitable(result):
            result = await result
        return result

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call ``fn`` directly, as if the tool were the function it wraps."""
        if self.fn is None:
            raise TypeError(f"tool {self.name!r} is a definition only (fn=None)")
        return self.fn(*args, **kwargs)
