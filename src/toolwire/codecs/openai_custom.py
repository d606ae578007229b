"""Custom tools (freeform tools) on OpenAI's two wires, and their calls.

Owns how each OpenAI wire writes and reads a custom tool as a freeform `ToolSpec` (its format
free text or a Lark or regex grammar): Chat Completions' ``{"type": "custom", "custom": {"name",
"description", "format"}}`` and the Responses API's flat ``{"type": "custom", "name",
"description", "format"}``; Chat Completions' custom tool calls (``{"id", "type": "custom",
"custom": {"name", "input"}}``) as freeform `ToolCallPart` values holding the text input, and
its ``tool_choice`` naming one (``{"type": "custom", "custom": {"name"}}``). A tool or call of a
shape not documented here is left to the caller to keep as it came; fields of a tool's or a
call's own go back in place. A format said out loud as free text (the default) is remembered
under `TEXT_FORMAT` so that the same wire gets it back.

Pure functions over JSON; imports only the transcript and `toolwire.codecs.base`; the OpenAI wires'
``parts`` and ``schema`` modules call it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from toolwire.codecs.base import plain
from toolwire.transcript import Grammar, ToolCallPart, ToolSpec

WIRE: Final = "openai-chat"
TEXT_FORMAT: Final = "_text_format"
"""Kept in the provider options: the custom tools whose body said ``format: {"type": "text"}``
(the default, which encode leaves out), so that the same wire gets it back."""

_TOOL_KEYS: Final = frozenset({"type", "custom"})
_CUSTOM_KEYS: Final = frozenset({"name", "description", "format"})
_CALL_KEYS: Final = frozenset({"id", "type", "custom", "index"})
_INPUT_KEYS: Final = frozenset({"name", "input"})


def read_grammar(fmt: Any) -> tuple[bool, Grammar | None]:
    """Whether ``fmt`` (a custom tool's ``format``) is one this wire documents, and its
    grammar (None for free text)."""
    if fmt is None or fmt == {"type": "text"}:
        return True, None
    if isinstance(fmt, Mapping) and fmt.keys() == {"type", "grammar"} \
            and fmt["type"] == "grammar":
        inner = fmt["grammar"]
        if isinstance(inner, Mapping) and inner.keys() == {"definition", "syntax"} and all(
                isinstance(inner[k], str) for k in inner):
            return True, Grammar(syntax=inner["syntax"], definition=inner["definition"])
    return False, None


def decode_tool(raw: Mapping[str, Any]) -> tuple[ToolSpec, dict[str, Any]] | None:
    """A custom tool as a freeform `ToolSpec` and its fields of its own (``custom.x`` for one
    inside ``custom``), or None when it is not a custom tool of the documented shape."""
    custom = raw.get("custom")
    if raw.get("type") != "custom" or not isinstance(custom, Mapping):
        return None
    name, description = custom.get("name"), custom.get("description", "")
    known, grammar = read_grammar(custom.get("format"))
    if not (isinstance(name, str) and name and isinstance(description, str) and known):
        return None
    own = {k: plain(v) for k, v in raw.items() if k not in _TOOL_KEYS}
    own.update({f"custom.{k}": plain(v) for k, v in custom.items() if k not in _CUSTOM_KEYS})
    return ToolSpec(name=name, description=description, freeform=True, grammar=grammar), own


def encode_tool(spec: ToolSpec, wire_name: str, text_format: bool = False) -> dict[str, Any]:
    """A freeform tool as a custom tool; ``text_format`` says the free-text format out loud."""
    custom: dict[str, Any] = {"name": wire_name}
    if spec.description:
        custom["description"] = spec.description
    if spec.grammar is not None:
        custom["format"] = {"type": "grammar", "grammar": {
            "definition": spec.grammar.definition, "syntax": spec.grammar.syntax}}
    elif text_format:
        custom["format"] = {"type": "text"}
    return {"type": "custom", "custom": custom}


def decode_call(call: Mapping[str, Any], call_id: str, names: Any) -> ToolCallPart | None:
    """A custom tool call as a freeform call (``names`` maps the wire name back, when given),
    or None when its ``custom`` is not a name and a text input."""
    custom = call.get("custom")
    if not isinstance(custom, Mapping):
        return None
    name, text = custom.get("name"), custom.get("input", "")
    if not isinstance(name, str) or not isinstance(text, str):
        return None
    extras: dict[str, Any] = {k: plain(v) for k, v in call.items() if k not in _CALL_KEYS}
    inner = {k: plain(v) for k, v in custom.items() if k not in _INPUT_KEYS}
    if inner:
        extras["custom"] = inner
    return ToolCallPart(id=call_id, name=names.user(name) if names is not None else name,
                        arguments=text, raw_arguments=text, freeform=True,
                        provider_data={WIRE: extras} if extras else None)


def encode_call(call: ToolCallPart, wire_name: str, extras: Mapping[str, Any] | None
                ) -> dict[str, Any]:
    """A freeform call as a custom tool call, with the fields of its own it came with."""
    text = call.raw_arguments if call.raw_arguments is not None else str(call.arguments or "")
    out: dict[str, Any] = {"id": call.id, "type": "custom",
                           "custom": {"name": wire_name, "input": text}}
    for key, value in (extras or {}).items():
        if key == "custom" and isinstance(value, Mapping):
            out["custom"].update(plain(value))
        else:
            out[key] = plain(value)
    return out


def choice_name(raw: Any) -> str | None:
    """The tool a ``tool_choice`` naming a custom tool names, else None."""
    if isinstance(raw, Mapping) and raw.get("type") == "custom" and raw.keys() == {
            "type", "custom"}:
        inner = raw["custom"]
        if isinstance(inner, Mapping) and inner.keys() == {"name"} and isinstance(
                inner["name"], str):
            return str(inner["name"])
    return None


# --------------------------------------------------------------------------- Responses


def responses_grammar(fmt: Any) -> Grammar | None:
    """The grammar of a Responses custom tool's ``format`` (None for free text)."""
    if isinstance(fmt, Mapping) and fmt.get("type") == "grammar":
        return Grammar(syntax=str(fmt["syntax"]), definition=str(fmt["definition"]))
    return None


def is_responses_custom(tool: Any) -> bool:
    """Whether ``tool`` is a Responses custom tool of the documented shape (free text or a
    grammar)."""
    if not (isinstance(tool, Mapping) and tool.get("type") == "custom"
            and isinstance(tool.get("name"), str) and isinstance(tool.get("description", ""), str)):
        return False
    fmt = tool.get("format")
    return fmt is None or fmt == {"type": "text"} or (
        isinstance(fmt, Mapping) and fmt.keys() == {"type", "syntax", "definition"}
        and fmt["type"] == "grammar" and all(isinstance(fmt[k], str)
                                             for k in ("syntax", "definition")))


def encode_responses_tool(tool: ToolSpec, wire_name: str) -> dict[str, Any]:
    """A freeform tool as a Responses custom tool (free text unless it has a grammar)."""
    out: dict[str, Any] = {"type": "custom", "name": wire_name}
    if tool.description:
        out["description"] = tool.description
    if tool.grammar is not None:
        out["format"] = {"type": "grammar", "syntax": tool.grammar.syntax,
                         "definition": tool.grammar.definition}
    return out
