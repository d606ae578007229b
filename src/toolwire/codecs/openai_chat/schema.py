"""OpenAI Chat Completions: tool definitions and the tool choice, both ways.

Owns how this wire writes and reads a tool (``{"type": "function", "function": {"name",
"description", "parameters", "strict"}}``) and the ``tool_choice`` / ``parallel_tool_calls``
pair. A tool marked strict gets the strict-mode rewrite of `toolwire.codecs.openai_shared`, made
on a copy and reported as a ``schema_rewritten`` note; a schema strict mode cannot take is sent
without ``strict``, with a note saying why. A schema needing no change goes out as the very
object given, and a decoded schema is the body's own object: bodies are never changed. A tool
with no ``parameters`` decodes with an empty object schema; a custom tool is a freeform tool
(`toolwire.codecs.openai_custom`); any other tool is kept for the options, as it came.

Pure functions over JSON; imports only the transcript, `toolwire.codecs.base`,
`toolwire.codecs.openai_shared`, `toolwire.codecs.openai_custom` and the chat `parts`; must
not import the wire's request, reply or stream modules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolwire.codecs import openai_custom as custom
from toolwire.codecs.base import Note
from toolwire.codecs.openai_chat.parts import Names, plain
from toolwire.codecs.openai_shared import StrictSchemaError, strict_schema
from toolwire.transcript import ToolChoice, ToolSpec

_DEFAULT_SCHEMA = {"type": "object", "properties": {}}
_USUAL_TOOL_KEYS = frozenset({"type", "function"})
_USUAL_FUNCTION_KEYS = frozenset({"name", "description", "parameters"})


# --------------------------------------------------------------------------- encode


def encode_tool(spec: ToolSpec, names: Names, notes: list[Note]) -> dict[str, Any]:
    """One tool as a function tool (a freeform one as a custom tool); a strict one
    rewritten for strict mode, on a copy."""
    if spec.freeform:
        return custom.encode_tool(spec, names.wire(spec.name))
    fn: dict[str, Any] = {"name": names.wire(spec.name)}
    if spec.description:
        fn["description"] = spec.description
    schema: Any = spec.input_schema
    if type(schema) is not dict:  # a dict goes out as it is: bodies are never changed
        schema = plain(schema)
    if spec.strict:
        try:
            schema, changes = strict_schema(schema)
        except StrictSchemaError as exc:
            notes.append(Note(kind="schema_rewritten", subject=spec.name,
                              detail=f"sent without strict mode: {exc}"))
        else:
            fn["strict"] = True
            if changes:
                notes.append(Note(kind="schema_rewritten", subject=spec.name,
                                  detail="; ".join(changes)))
    fn["parameters"] = schema
    return {"type": "function", "function": fn}


def encode_choice(
    choice: ToolChoice, names: Names, notes: list[Note], body: dict[str, Any],
    freeform: frozenset[str] = frozenset(),
) -> None:
    """Put ``tool_choice`` (and ``parallel_tool_calls`` when set) in ``body``; ``freeform``
    names the custom tools (a choice of one names it as a custom tool)."""
    if choice.mode == "tool" and choice.name:
        kind = "custom" if choice.name in freeform else "function"
        body["tool_choice"] = {"type": kind, kind: {"name": names.wire(choice.name)}}
    elif choice.mode == "tool":
        body["tool_choice"] = "required"
        notes.append(Note(kind="choice_changed", subject="tool_choice",
                          detail="a named choice without a name was sent as 'required'"))
    else:
        body["tool_choice"] = choice.mode
    if choice.parallel is not None:
        body["parallel_tool_calls"] = choice.parallel


# --------------------------------------------------------------------------- decode


TOOL_FIELDS = "_tool_fields"
"""Kept in the provider options: a function tool's fields of its own, by tool name."""


def encode_tools(specs: Any, names: Names, notes: list[Note],
                 options: dict[str, Any]) -> list[dict[str, Any]]:
    """The specs as tools, each with the fields of its own it came with (`TOOL_FIELDS`)."""
    tools = [encode_tool(t, names, notes) for t in specs]
    text = options.pop(custom.TEXT_FORMAT, None)
    for tool in tools if isinstance(text, list) else ():
        if tool["type"] == "custom" and tool["custom"]["name"] in text \
                and "format" not in tool["custom"]:
            tool["custom"]["format"] = {"type": "text"}
    kept = options.pop(TOOL_FIELDS, None)
    for tool in tools if kept is not None and isinstance(kept, Mapping) else ():
        for key, value in (kept.get(tool[tool["type"]]["name"]) or {}).items():
            inner, _, field = key.partition(".")
            (tool[inner] if field else tool)[field or inner] = plain(value)
    return tools


def _fields(raw: Mapping[str, Any]) -> dict[str, Any]:
    fn = raw.get("function")
    found = {k: plain(v) for k, v in raw.items() if k not in _USUAL_TOOL_KEYS}
    found.update({f"function.{k}": plain(v) for k, v in fn.items()
                  if k not in _USUAL_FUNCTION_KEYS and k != "strict"}
                 if isinstance(fn, Mapping) else {})
    return found


def decode_tools(raw_tools: Any, rest: dict[str, Any] | None = None
                 ) -> tuple[list[ToolSpec], list[Any]]:
    """The function tools of a ``tools`` list, and copies of the entries that are not one;
    a function tool's fields of its own go to ``rest`` (`TOOL_FIELDS`)."""
    tools: list[ToolSpec] = []
    others: list[Any] = []
    for raw in raw_tools if isinstance(raw_tools, list) else ():
        if type(raw) is dict and len(raw) == 2:  # the usual tool, read directly: a value of
            fn = raw.get("function")  # the type asked for is a key there, so sizes say the rest
            if type(fn) is dict and len(fn) == 3 and raw.get("type") == "function":
                name, description, schema = fn.get("name"), fn.get("description"), fn.get(
                    "parameters")
                if type(name) is str and type(description) is str and type(schema) is dict:
                    tools.append(ToolSpec(name=name, description=description,
                                          input_schema=schema))
                    continue
        mapped = type(raw) is dict or isinstance(raw, Mapping)
        made = custom.decode_tool(raw) if mapped and raw.get("type") == "custom" else None
        spec = made[0] if made else decode_tool(raw) if mapped else None
        if spec is None:
            others.append(plain(raw))
        else:
            tools.append(spec)
            own = made[1] if made else _fields(raw)
            if made and rest is not None and raw["custom"].get("format") == {"type": "text"}:
                rest.setdefault(custom.TEXT_FORMAT, []).append(spec.name)
            if own and rest is not None:
                rest.setdefault(TOOL_FIELDS, {})[spec.name] = own
    return tools, others


def decode_tool(raw: Mapping[str, Any]) -> ToolSpec | None:
    """One entry of ``tools`` as a `ToolSpec`, or None when it is not a function tool."""
    fn = raw.get("function")
    if type(fn) is not dict and not isinstance(fn, Mapping):
        return None
    if raw.get("type", "function") != "function":
        return None
    name = fn.get("name")
    if not isinstance(name, str):
        return None
    schema = fn.get("parameters")
    description = fn.get("description")
    if type(schema) is not dict:  # a dict is kept as it is: request values are never changed
        schema = plain(schema) if isinstance(schema, Mapping) else dict(_DEFAULT_SCHEMA)
    return ToolSpec(
        name=name,
        description=description if isinstance(description, str) else "",
        input_schema=schema,
        strict=fn.get("strict") is True,
    )


def decode_choice(body: Mapping[str, Any], rest: dict[str, Any]) -> ToolChoice | None:
    """The body's tool choice; what cannot be read as one is kept in ``rest`` as it came."""
    if "tool_choice" not in body and "parallel_tool_calls" not in body:
        return None
    choice = _choice(body.get("tool_choice"), body.get("parallel_tool_calls"))
    if choice is None:
        for key in ("tool_choice", "parallel_tool_calls"):
            if key in body:
                rest[key] = plain(body[key])
    elif "tool_choice" in body and body["tool_choice"] is None:
        rest["tool_choice"] = None
    return choice


def _choice(raw: Any, parallel: Any) -> ToolChoice | None:
    par = parallel if isinstance(parallel, bool) else None
    if raw in ("auto", "required", "none"):
        return ToolChoice(mode=raw, parallel=par)
    if raw is not None and isinstance(raw, Mapping) and raw.get("type") == "function":
        fn = raw.get("function")
        if isinstance(fn, Mapping) and isinstance(fn.get("name"), str):
            return ToolChoice(mode="tool", name=fn["name"], parallel=par)
    if (name := custom.choice_name(raw)) is not None:
        return ToolChoice(mode="tool", name=name, parallel=par)
    if raw is None and par is not None:
        return ToolChoice(mode="auto", parallel=par)
    return None


MAX_TOKENS_FIELD = "max_tokens_field"
"""Kept in the options when a body used the older ``max_tokens``, so encode sends it back."""


def _is_int(value: Any) -> bool:
    return type(value) is int or (isinstance(value, int) and not isinstance(value, bool))


def decode_max_tokens(body: Mapping[str, Any], rest: dict[str, Any]) -> int | None:
    """The token limit of a body (``max_completion_tokens``, else ``max_tokens``); a value that
    is not an integer stays in ``rest``."""
    limit: Any = body.get("max_completion_tokens")
    if type(limit) is int and "max_tokens" not in body:  # the usual body
        return limit
    legacy: Any = body.get("max_tokens")
    if _is_int(limit):
        if "max_tokens" in body:
            rest["max_tokens"] = plain(legacy)
        return int(limit)
    if "max_completion_tokens" in body:
        rest["max_completion_tokens"] = plain(limit)
    if _is_int(legacy):
        rest[MAX_TOKENS_FIELD] = "max_tokens"
        return int(legacy)
    if "max_tokens" in body:
        rest["max_tokens"] = plain(legacy)
    return None
