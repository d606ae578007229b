"""OpenAI Responses: tool definitions and the tool choice, both ways.

Owns how this wire writes and reads a tool: a flat function tool (``{"type": "function", "name",
"description", "parameters", "strict"}``) with ``strict`` always sent, and ``defer_loading`` for
a deferred tool, which the hosted ``tool_search`` tool (`add_search`) then finds. A strict tool
gets the strict-mode rewrite of `toolwire.codecs.openai_shared`, made on a copy and reported as
a ``schema_rewritten`` note; a schema strict mode cannot take goes out with ``strict: false``,
with a note saying why. A schema needing no change goes out as the very object given. On the way
in, a custom tool is a freeform tool (`toolwire.codecs.openai_custom`), other tools that are
not function tools (built-in ones) are handed back for the options as they came, a tool with
no ``parameters`` gets an empty object schema, and a field of the wrong shape raises
`WireFormatError` naming it. Also the ``tool_choice`` both ways: a choice the canonical
form cannot say exactly (``allowed_tools``, a built-in tool) is kept as it came.

Pure functions over JSON; imports only the transcript, `toolwire.codecs.base`,
`toolwire.codecs.openai_shared`, `toolwire.codecs.openai_custom` and the Responses `parts`;
must not import the wire's request, reply or stream modules.
"""

from __future__ import annotations

from typing import Any, Final

from toolwire.codecs.base import NameMap, Note, wrong_shape
from toolwire.codecs.openai_custom import (
    TEXT_FORMAT,
    encode_responses_tool,
    is_responses_custom,
    responses_grammar,
)
from toolwire.codecs.openai_responses.parts import Item, typed
from toolwire.codecs.openai_shared import StrictSchemaError, strict_schema
from toolwire.transcript import ToolChoice, ToolSpec

_EMPTY_SCHEMA: Final = {"type": "object", "properties": {}}


# --------------------------------------------------------------------------- encode


def encode_tool(tool: ToolSpec, names: NameMap, notes: list[Note] | None = None) -> dict[str, Any]:
    """A flat function tool; ``strict`` is always sent, strict schemas rewritten on a copy.

    A schema that needs no rewrite is sent as the very object given (bodies are only
    serialised, never changed). A freeform tool goes as a custom tool.
    """
    if tool.freeform:
        return encode_responses_tool(tool, names.wire(tool.name))
    given = tool.input_schema
    schema: dict[str, Any] = given if isinstance(given, dict) else dict(given)
    strict = tool.strict
    said: list[Note] = []
    if strict:
        try:
            schema, changes = strict_schema(schema)
        except StrictSchemaError as exc:
            strict = False
            said.append(Note(kind="schema_rewritten", subject=tool.name,
                             detail=f"sent with strict false: {exc}"))
        else:
            if changes:
                said.append(Note(kind="schema_rewritten", subject=tool.name,
                                 detail="strict mode: " + "; ".join(changes)))
    if notes is not None:
        notes.extend(said)
    out: dict[str, Any] = {"type": "function", "name": names.wire(tool.name)}
    if tool.description:
        out["description"] = tool.description
    out["strict"] = strict  # before the schema, as the API's own clients write it
    out["parameters"] = schema
    if tool.deferred:
        out["defer_loading"] = True
    return out


SEARCH_TOOL: Final = {"type": "tool_search"}
"""The API's hosted tool search, added to a request that has deferred tools."""


def add_search(tools: list[Any], notes: list[Note]) -> None:
    """``tools`` (as sent) with the hosted tool search at the end when a function tool is
    deferred and no tool search is there yet."""
    kinds = {t.get("type") for t in tools if isinstance(t, dict)}
    if "tool_search" in kinds or not any(
            isinstance(t, dict) and t.get("defer_loading") is True for t in tools):
        return
    tools.append(dict(SEARCH_TOOL))
    notes.append(Note(kind="tool_search", subject="tools", detail=(
        "deferred tools are sent with defer_loading and found by the API's tool_search tool")))


def encode_choice(choice: ToolChoice, names: NameMap,
                  freeform: frozenset[str] = frozenset()) -> Any:
    """The ``tool_choice`` value for a canonical choice (a nameless named choice: required);
    ``freeform`` names the custom tools."""
    if choice.mode == "tool":
        if choice.name:
            return {"type": "custom" if choice.name in freeform else "function",
                    "name": names.wire(choice.name)}
        return "required"
    return choice.mode


# --------------------------------------------------------------------------- decode


TOOL_FIELDS: Final = "_tool_fields"
"""Kept in the provider options: a function tool's fields of its own, by tool name."""
_TOOL_KEYS: Final = frozenset({"type", "name", "description", "parameters", "strict",
                               "defer_loading"})


def decode_tools(raw_tools: list[Any] | None, options: dict[str, Any] | None = None
                 ) -> tuple[list[ToolSpec], list[Any]]:
    """The function tools of a ``tools`` list, and the other (built-in) tools as they came;
    a function tool's fields of its own go to ``options`` (`TOOL_FIELDS`)."""
    tools: list[ToolSpec] = []
    others: list[Any] = []
    for t_index, tool in enumerate(raw_tools or ()):
        if not isinstance(tool, dict):
            raise wrong_shape(f"tools[{t_index}]", "an object", tool)
        if tool.get("type") == "function" or is_responses_custom(tool):
            tools.append(decode_tool(tool, f"tools[{t_index}]"))
            own = {k: v for k, v in tool.items() if k not in (
                _CUSTOM_KEYS if tools[-1].freeform else _TOOL_KEYS)}
            if tools[-1].freeform and tool.get("format") == {"type": "text"} and options:
                options.setdefault(TEXT_FORMAT, []).append(tools[-1].name)
            if own and options is not None:
                options.setdefault(TOOL_FIELDS, {})[tools[-1].name] = own
        else:
            others.append(tool)
    return tools, others


def encode_tools(specs: Any, names: NameMap, notes: list[Note],
                 options: dict[str, Any]) -> list[dict[str, Any]]:
    """The specs as tools, each with the fields of its own it came with (`TOOL_FIELDS`)."""
    tools = [encode_tool(t, names, notes) for t in specs]
    text = options.pop(TEXT_FORMAT, None)
    for tool in tools if isinstance(text, list) else ():
        if tool["type"] == "custom" and tool["name"] in text and "format" not in tool:
            tool["format"] = {"type": "text"}
    kept = options.pop(TOOL_FIELDS, None)
    for tool in tools if isinstance(kept, dict) else ():
        tool.update(kept.get(tool["name"]) or {})
    return tools


_CUSTOM_KEYS: Final = frozenset({"type", "name", "description", "format"})


def decode_tool(tool: Item, where: str) -> ToolSpec:
    """A function tool (or a custom one, as a freeform tool) as a `ToolSpec`; ``where`` names
    it in errors (``tools[2]``)."""
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise wrong_shape(f"{where}.name", "a non-empty string", name)
    if tool.get("type") == "custom":
        return ToolSpec(name=name, freeform=True, grammar=responses_grammar(tool.get("format")),
                        description=typed(tool, "description", str, "a string", f"{where}.") or "")
    params = typed(tool, "parameters", dict, "an object (a JSON Schema)", f"{where}.")
    return ToolSpec(
        name=name,
        description=typed(tool, "description", str, "a string", f"{where}.") or "",
        input_schema=params if params is not None else dict(_EMPTY_SCHEMA),
        strict=tool.get("strict") is True,
        deferred=tool.get("defer_loading") is True,
    )


def decode_choice(
    raw: Any, parallel: bool | None, options: dict[str, Any]
) -> ToolChoice | None:
    """The canonical choice; a raw choice it cannot say exactly is kept in ``options``."""
    par = parallel
    if raw is None:
        return ToolChoice(parallel=par) if par is not None else None
    if raw in ("auto", "required", "none"):
        return ToolChoice(mode=raw, parallel=par)
    if not isinstance(raw, (str, dict)):
        raise wrong_shape("tool_choice", "a string or an object", raw)
    if isinstance(raw, dict) and raw.get("type") in ("function", "custom") \
            and isinstance(raw.get("name"), str):
        return ToolChoice(mode="tool", name=raw["name"], parallel=par)
    options["tool_choice"] = raw
    mode = raw.get("mode") if isinstance(raw, dict) else None
    if isinstance(raw, dict) and raw.get("type") == "allowed_tools" and mode == "required":
        return ToolChoice(mode="required", parallel=par)
    if isinstance(raw, dict) and raw.get("type") != "allowed_tools":
        return ToolChoice(mode="required", parallel=par)
    return ToolChoice(mode="auto", parallel=par)
