"""Tool schemas derived from Python: a function's signature and docstring, or a Pydantic model.

Owns: reading a docstring's description and per-parameter text (Google ``Args:``, NumPy
``Parameters`` and Sphinx ``:param x:`` styles), building the Pydantic model that both yields
the JSON Schema shown to the model and turns validated JSON into the Python values a function
receives, and tidying that schema (local refs inlined, titles dropped, every object closed).
Imports only `errors` and `schema.walk`; must not import `schema.tool`, `schema.validate`,
codecs, transport or the loop.
"""

from __future__ import annotations

import inspect
import json
import re
import sys
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import typing_extensions
from pydantic import BaseModel, ConfigDict, Field, PydanticUserError, create_model
from pydantic.fields import FieldInfo

from toolwire.errors import ToolDefinitionError
from toolwire.schema.walk import JSONSchema, close_objects, inline_refs, strip_titles

_ARG_SECTIONS = frozenset(
    {"args", "arguments", "parameters", "params", "keyword args", "keyword arguments", "kwargs"}
)
_SECTIONS = _ARG_SECTIONS | {
    "returns", "return", "yields", "yield", "raises", "exceptions", "examples", "example",
    "note", "notes", "attributes", "see also", "warning", "warnings", "todo", "references",
    "other parameters",
}  # fmt: skip
_HEADER = re.compile(r"^([A-Za-z][A-Za-z ]*):\s*$")
_GOOGLE_ENTRY = re.compile(r"^\*{0,2}([A-Za-z_]\w*)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_ENTRY = re.compile(r"^\*{0,2}([A-Za-z_]\w*)\s*(?::.*)?$")
_SPHINX_PARAM = re.compile(r"^:param\s+(?:[^:]*\s)?\*{0,2}([A-Za-z_]\w*)\s*:\s*(.*)$")
_SPHINX_FIELD = re.compile(r"^:\w+(\s[^:]*)?:")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _entries(block: list[str], entry: re.Pattern[str], numpy: bool) -> dict[str, str]:
    """Parameter name -> description from a section body (entries at its smallest indent)."""
    found: dict[str, list[str]] = {}
    filled = [line for line in block if line.strip()]
    base = min((_indent(line) for line in filled), default=0)
    current: list[str] | None = None
    for line in filled:
        match = entry.match(line.strip()) if _indent(line) == base else None
        if match:
            current = found.setdefault(match.group(1), [])
            if not numpy and match.group(2).strip():
                current.append(match.group(2).strip())
        elif current is not None:
            current.append(line.strip())
    return {name: " ".join(parts) for name, parts in found.items()}


def _numpy_header(lines: list[str], i: int) -> bool:
    """A NumPy section starts with a known title underlined by dashes."""
    return (
        i + 1 < len(lines)
        and lines[i].strip().lower() in _SECTIONS
        and re.fullmatch(r"-{3,}", lines[i + 1].strip()) is not None
    )


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """(description, parameter name -> description) read from a docstring.

    The description is the text before the first section (``Args:``, ``Returns:``...);
    Sphinx ``:param:`` and other field lines are left out of it.
    """
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    described: list[str] = []
    params: dict[str, str] = {}
    in_description = True
    i = 0
    while i < len(lines):
        text = lines[i].strip()
        header = _HEADER.match(text)
        numpy = _numpy_header(lines, i)
        if numpy or (header is not None and header.group(1).lower() in _SECTIONS):
            in_description = False
            name = text.lower() if numpy or header is None else header.group(1).lower()
            base = _indent(lines[i])
            i += 2 if numpy else 1
            block: list[str] = []
            while i < len(lines) and (
                (numpy and not _numpy_header(lines, i))
                or (not numpy and (not lines[i].strip() or _indent(lines[i]) > base))
            ):
                block.append(lines[i])
                i += 1
            if name in _ARG_SECTIONS or name == "other parameters":
                params.update(_entries(block, _NUMPY_ENTRY if numpy else _GOOGLE_ENTRY, numpy))
            continue
        sphinx = _SPHINX_PARAM.match(text)
        if sphinx:
            in_description = False
            parts = [sphinx.group(2).strip()]
            i += 1
            while i < len(lines) and lines[i].strip() and _indent(lines[i]) > 0:
                parts.append(lines[i].strip())
                i += 1
            params[sphinx.group(1)] = " ".join(p for p in parts if p)
            continue
        if _SPHINX_FIELD.match(text):
            in_description = False
        elif in_description:
            described.append(lines[i])
        i += 1
    return "\n".join(described).strip(), params


def docstring_examples(tool: str, doc: str | None) -> list[dict[str, Any]]:
    """The JSON objects of a docstring's ``Examples:`` (or ``Example:``) section, one a line;
    its other lines (prose, ``>>>`` sessions) are left alone. A line that opens an object but is
    not one is an error naming it."""
    lines = inspect.cleandoc(doc or "").splitlines()
    found: list[dict[str, Any]] = []
    inside, base = False, 0
    for line in lines:
        header = _HEADER.match(line.strip())
        if header is not None and _indent(line) <= base:
            inside, base = header.group(1).lower() in ("examples", "example"), _indent(line)
            continue
        text = line.strip()
        if not (inside and text.startswith("{")):
            continue
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise ToolDefinitionError(
                f"tool {tool!r}: the docstring example {text!r} is not JSON ({exc})") from None
        if not isinstance(value, dict):
            raise ToolDefinitionError(f"tool {tool!r}: the docstring example {text!r} is not "
                                      "a JSON object")
        found.append(value)
    return found


def tidy(schema: JSONSchema) -> JSONSchema:
    """A generated schema as shown to a model: refs inlined, no titles, every object closed."""
    return close_objects(strip_titles(inline_refs(schema)))


# -- Python 3.11: Pydantic reads only typing_extensions.TypedDict there ---------------------------

_portable_cache: dict[Any, Any] = {}


def _portable(tp: Any) -> Any:
    """``tp`` with every ``typing.TypedDict`` class rebuilt on typing_extensions (Python < 3.12)."""
    if sys.version_info >= (3, 12):  # pragma: no cover - depends on the interpreter
        return tp
    if isinstance(tp, type) and typing.is_typeddict(tp) and type(tp).__module__ == "typing":
        if tp not in _portable_cache:
            _portable_cache[tp] = tp  # a recursive TypedDict is left to Pydantic's own message
            hints = typing.get_type_hints(tp, include_extras=True)
            fields: dict[str, Any] = {}
            for key, hint in hints.items():
                while typing.get_origin(hint) in (typing.Required, typing.NotRequired):
                    hint = typing.get_args(hint)[0]
                hint = _portable(hint)
                required = key in tp.__required_keys__  # type: ignore[attr-defined]
                fields[key] = (
                    typing_extensions.Required[hint]
                    if required
                    else (typing_extensions.NotRequired[hint])
                )
            make: Any = typing_extensions.TypedDict
            rebuilt: Any = make(tp.__name__, fields)
            rebuilt.__doc__ = tp.__doc__
            rebuilt.__module__ = tp.__module__
            _portable_cache[tp] = rebuilt
        return _portable_cache[tp]
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is None or not args or origin is typing.Literal:
        return tp
    new_args = tuple(_portable(a) for a in args)
    if new_args == args:
        return tp
    if origin is Annotated:
        return Annotated[(new_args[0], *tp.__metadata__)]  # type: ignore[attr-defined]
    if origin in (typing.Union, types.UnionType):
        return typing.Union[new_args]  # noqa: UP007
    if isinstance(tp, types.GenericAlias):
        return types.GenericAlias(origin, new_args)
    return tp.copy_with(new_args)


# -- functions -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Derived:
    """What a function or model tool is built from."""

    schema: JSONSchema
    description: str
    model: type[BaseModel]
    fields: tuple[tuple[str, str, bool], ...] = ()
    """(model field name, parameter name, positional-only) per parameter, in order."""
    injected: tuple[tuple[str, Callable[[], Any]], ...] = ()
    """(parameter name, provider) per parameter filled in at call time, not by the model."""


def _has_description(annotation: Any) -> bool:
    if typing.get_origin(annotation) is not Annotated:
        return False
    return any(isinstance(m, FieldInfo) and m.description for m in annotation.__metadata__)


def _json_schema(tool: str, model: type[BaseModel]) -> JSONSchema:
    try:
        return model.model_json_schema()
    except (PydanticUserError, TypeError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0]
        raise ToolDefinitionError(
            f"tool {tool!r}: cannot describe its parameters: {first}"
        ) from None


def from_function(tool: str, fn: Callable[..., Any]) -> Derived:
    """The schema, description and argument model of a function's parameters."""
    try:
        signature = inspect.signature(fn, eval_str=True)
    except (NameError, TypeError, ValueError) as exc:
        raise ToolDefinitionError(f"tool {tool!r}: cannot read the signature: {exc}") from None
    description, docs = parse_docstring(inspect.getdoc(fn))
    definitions: dict[str, Any] = {}
    fields: list[tuple[str, str, bool]] = []
    injected: list[tuple[str, Callable[[], Any]]] = []
    for index, param in enumerate(signature.parameters.values()):
        provider = injected_provider(param.annotation)
        if provider is not None and param.kind is not param.POSITIONAL_ONLY:
            injected.append((param.name, provider))
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            star = "*" if param.kind is param.VAR_POSITIONAL else "**"
            raise ToolDefinitionError(
                f"tool {tool!r}: parameter {star}{param.name} cannot be a JSON field; "
                "give the tool named parameters"
            )
        annotation = Any if param.annotation is param.empty else _portable(param.annotation)
        default = ... if param.default is param.empty else param.default
        field_name = f"p{index}"
        extra: dict[str, Any] = {}
        if param.name in docs and docs[param.name] and not _has_description(annotation):
            extra["description"] = docs[param.name]
        if isinstance(default, FieldInfo):
            annotation = Annotated[annotation, default]
            default = ...
        definitions[field_name] = (annotation, Field(default, alias=param.name, **extra))
        fields.append((field_name, param.name, param.kind is param.POSITIONAL_ONLY))
    try:
        model = create_model(  # type: ignore[call-overload]
            "Arguments",
            __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=False),
            **definitions,
        )
    except (PydanticUserError, TypeError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0]
        raise ToolDefinitionError(
            f"tool {tool!r}: cannot describe its parameters: {first}"
        ) from None
    schema = tidy(_json_schema(tool, model))
    schema.pop("description", None)
    return Derived(schema=schema, description=description, model=model, fields=tuple(fields),
                   injected=tuple(injected))


def injected_provider(annotation: Any) -> Callable[[], Any] | None:
    """The provider of a parameter the caller fills in rather than the model: its annotation
    (or the one type besides None in an optional one) has a ``__toolwire_inject__`` class
    method returning the value for the call in progress. None for an ordinary parameter."""
    candidates = [annotation]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        candidates = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
    if len(candidates) != 1 or not isinstance(candidates[0], type):
        return None
    provider = getattr(candidates[0], "__toolwire_inject__", None)
    return provider if callable(provider) else None


def from_model(tool: str, model: type[BaseModel]) -> Derived:
    """The schema and description of a Pydantic model used as a tool's whole input."""
    schema = tidy(_json_schema(tool, model))
    own_doc = model.__dict__.get("__doc__")
    description, _ = parse_docstring(own_doc if isinstance(own_doc, str) else None)
    schema.pop("description", None)
    return Derived(schema=schema, description=description, model=model)
