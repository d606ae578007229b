"""Anthropic Messages: tool definitions, and their input schemas as the API accepts them.

Owns how a tool is written and read (``name``, ``description``, ``input_schema``, ``strict``,
other per-tool settings and server tools kept in their places) and the rules for
``input_schema``: the root must say ``"type": "object"``, and a tool sent with ``strict: true``
needs ``"additionalProperties": false`` on every object and may not use numeric or length
constraints (those are moved into the description, where the model can still read them) nor
``oneOf`` (sent as ``anyOf``). Never changes the caller's schema; reports every change as a
note. Imports only `toolwire.transcript`, `toolwire.errors`, `toolwire.codecs.base` and this
wire's ``parts``. Tools added mid-conversation: a ``role: "system"`` message's ``tool_addition``
blocks each make a tool available from there on, naming a ``tools`` entry (``tool_reference``,
under the ``mid-conversation-tool-changes-2026-07-01`` beta) or carrying its definition
(``tool_definition``, ``inline-tools-2026-09-15``). Read, they are the canonical tools-added
message (a system message whose ``tools`` are the tools added); written, each added tool is a
reference to a ``tools`` entry sent with ``defer_loading``, which keeps it out of the prompt
until the addition, so the tool list and the cached prompt before it stay as they were.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

import msgspec

from toolwire.codecs.anthropic_messages.parts import WIRE, ToolNames
from toolwire.codecs.base import Note
from toolwire.codecs.traits import traits
from toolwire.errors import WireFormatError
from toolwire.transcript import Message, Part, Request, TextPart, ToolChoice, ToolSpec

# Keywords the strict-mode grammar compiler does not take; kept for the model as text.
_MOVED = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "maxItems",
    "minProperties",
    "maxProperties",
)
_CHILD_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_CHILD_LISTS = ("anyOf", "allOf", "oneOf", "prefixItems")
_CHILD_ONE = ("items", "not", "if", "then", "else", "contains", "propertyNames")


def _is_object(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "object" or (isinstance(kind, list) and "object" in kind):
        return True
    return kind is None and "properties" in schema


def _strict(schema: dict[str, Any], path: str, changes: list[str]) -> None:
    here = path or "/"
    if "oneOf" in schema and "anyOf" not in schema:
        schema["anyOf"] = schema.pop("oneOf")
        changes.append(f"oneOf sent as anyOf at {here}")
    if _is_object(schema) and schema.get("additionalProperties") is not False:
        was = "added" if "additionalProperties" not in schema else "forced"
        schema["additionalProperties"] = False
        changes.append(f"{was} additionalProperties: false at {here}")
    moved = {k: schema.pop(k) for k in _MOVED if k in schema}
    min_items = schema.get("minItems")
    if isinstance(min_items, int) and min_items > 1:
        moved["minItems"] = schema.pop("minItems")
    if moved:
        hint = "{" + ", ".join(f"{k}: {json.dumps(v)}" for k, v in moved.items()) + "}"
        text = schema.get("description")
        schema["description"] = f"{text}\n\n{hint}" if isinstance(text, str) and text else hint
        changes.append(f"moved {', '.join(moved)} into the description at {here}")
    for key in _CHILD_MAPS:
        children = schema.get(key)
        if isinstance(children, dict):
            for name, child in children.items():
                if isinstance(child, dict):
                    _strict(child, f"{path}/{key}/{name}", changes)
    for key in _CHILD_LISTS:
        children = schema.get(key)
        if isinstance(children, list):
            for i, child in enumerate(children):
                if isinstance(child, dict):
                    _strict(child, f"{path}/{key}/{i}", changes)
    for key in _CHILD_ONE:
        child = schema.get(key)
        if isinstance(child, dict):
            _strict(child, f"{path}/{key}", changes)
        elif key == "items" and isinstance(child, list):
            for i, item in enumerate(child):
                if isinstance(item, dict):
                    _strict(item, f"{path}/items/{i}", changes)


def input_schema(name: str, schema: Mapping[str, Any], *, strict: bool,
                 notes: list[Note]) -> dict[str, Any]:
    """The schema to send for tool ``name``: the original when it fits, else a fixed copy."""
    if not strict and "type" in schema:
        return schema if type(schema) is dict else copy.deepcopy(dict(schema))
    out = copy.deepcopy(dict(schema))
    changes: list[str] = []
    if "type" not in out:
        out = {"type": "object", **out}
        changes.append('added "type": "object" at the root')
    if strict:
        _strict(out, "", changes)
    if changes:
        notes.append(Note(kind="schema_rewritten", subject=name, detail="; ".join(changes)))
    return out


# --------------------------------------------------------------------------- tool definitions

_TOOL_KEYS = frozenset({"name", "description", "input_schema", "strict", "allowed_callers",
                        "defer_loading", "input_examples"})

CODE_EXECUTION = "code_execution"
"""The name of Anthropic's code execution tool, whose code calls the tools that allow it."""


SEARCH_TOOL = {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
"""Anthropic's server-side tool search, added to a request that has deferred tools."""


def _has_search(stored: Any) -> bool:
    return isinstance(stored, list) and any(
        isinstance(t, Mapping) and str(t.get("type", "")).startswith("tool_search_tool")
        for t in stored)


def _add_code_execution(tools: Sequence[ToolSpec], stored: Any, encoded: list[dict[str, Any]],
                        notes: list[Note]) -> None:
    """A tool that code may call needs the code execution tool in the list: added, in the
    version its ``allowed_callers`` names, when the request has none (``tools``: those that
    name allowed callers)."""
    wanted = next((c for s in tools for c in s.allowed_callers
                   if c.startswith(CODE_EXECUTION)), None)
    if wanted is None or (isinstance(stored, list) and any(
            isinstance(t, Mapping) and str(t.get("type", "")).startswith(CODE_EXECUTION)
            for t in stored)):
        return
    encoded.append({"type": wanted, "name": CODE_EXECUTION})
    notes.append(Note(kind="code_execution_added", subject="tools", detail=(
        f"a tool allows calls from {wanted}, so the {CODE_EXECUTION} tool was added")))


def encode_tools(tools: Sequence[ToolSpec], stored: Any, *, nm: ToolNames,
                  notes: list[Note]) -> list[dict[str, Any]]:
    encoded: list[dict[str, Any]] = []
    fit = nm.fit
    deferred = False
    called: list[ToolSpec] = []  # tools that name callers other than the model
    for spec in tools:
        name, schema = spec.name, spec.input_schema
        if spec.strict or type(schema) is not dict or "type" not in schema:
            schema = input_schema(name, schema, strict=spec.strict, notes=notes)
        tool: dict[str, Any] = (
            {"name": name if name in fit else nm.wire(name), "description": spec.description,
             "input_schema": schema}
            if spec.description else
            {"name": name if name in fit else nm.wire(name), "input_schema": schema})
        if spec.strict:
            tool["strict"] = True
        if spec.deferred:
            tool["defer_loading"] = deferred = True
        if spec.examples:
            tool["input_examples"] = [copy.deepcopy(dict(e)) for e in spec.examples]
        if spec.allowed_callers:
            tool["allowed_callers"] = list(spec.allowed_callers)
            called.append(spec)
        encoded.append(tool)
    if called:
        _add_code_execution(called, stored, encoded, notes)
    if deferred and not isinstance(stored, list):  # a body's own list, searched its own way
        encoded.append(dict(SEARCH_TOOL))
        notes.append(Note(kind="tool_search", subject="tools", detail=(
            "deferred tools are sent with defer_loading and found by the server's "
            f"{SEARCH_TOOL['name']} tool")))
    if not isinstance(stored, list):
        return encoded
    # The body this request was decoded from had server tools or per-tool settings
    # (cache_control, defer_loading...): keep them, in their places.
    out: list[dict[str, Any]] = []
    for entry in stored:
        if not isinstance(entry, Mapping):
            continue
        if entry.get("type") in (None, "custom"):
            match = next((t for t in encoded if t["name"] == entry.get("name")), None)
            if match is not None:
                encoded.remove(match)
                extra = {k: copy.deepcopy(v) for k, v in entry.items() if k not in _TOOL_KEYS}
                out.append({**match, **extra})
        else:
            out.append(copy.deepcopy(dict(entry)))
    return out + encoded


def _callers(raw: Any) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(c, str) for c in raw):
        raise WireFormatError(f"{WIRE}: a tool's 'allowed_callers' must be a list of strings")
    return tuple(raw)


def decode_tools(raw: Any) -> tuple[list[ToolSpec], bool]:
    """The custom tools as specs, and whether the list held more than specs can say."""
    if raw is None:
        return [], False
    if not isinstance(raw, list):
        raise WireFormatError(f"{WIRE}: 'tools' must be a list")
    specs: list[ToolSpec] = []
    keep = False
    for tool in raw:
        if not isinstance(tool, Mapping):
            raise WireFormatError(f"{WIRE}: every tool must be an object")
        if tool.get("type") not in (None, "custom"):
            keep = True
            continue
        extra = {k for k, v in tool.items() if k not in _TOOL_KEYS and v is not None}
        keep = keep or bool(extra - {"type"})
        schema = tool.get("input_schema")
        specs.append(ToolSpec(
            name=str(tool.get("name") or ""),
            description=str(tool.get("description") or ""),
            input_schema=dict(schema) if isinstance(schema, Mapping) else {"type": "object"},
            strict=bool(tool.get("strict")),
            allowed_callers=_callers(tool.get("allowed_callers")),
            deferred=tool.get("defer_loading") is True,
            examples=tuple(e for e in tool.get("input_examples") or () if isinstance(e, Mapping)),
        ))  # deferred tools with no search tool (the client searches them): kept so
    return specs, keep or (any(s.deferred for s in specs) and not _has_search(raw))


# --------------------------------------------------------------------------- tool choice


def encode_choice(choice: ToolChoice, *, nm: ToolNames, notes: list[Note]) -> dict[str, Any]:
    out: dict[str, Any]
    if choice.mode == "tool" and choice.name:
        out = {"type": "tool", "name": nm.wire(choice.name)}
    elif choice.mode == "tool":
        notes.append(Note(kind="choice_changed", subject="tool_choice",
                          detail="mode 'tool' without a name sent as 'any'"))
        out = {"type": "any"}
    elif choice.mode == "required":
        out = {"type": "any"}
    else:
        out = {"type": choice.mode}
    if choice.parallel is not None:
        if choice.mode == "none":
            notes.append(Note(kind="choice_changed", subject="tool_choice",
                              detail="'none' takes no parallel setting; dropped"))
        else:
            out["disable_parallel_tool_use"] = not choice.parallel
    return out


_CHOICES: dict[Any, Any] = {"auto": "auto", "any": "required", "tool": "tool"}


def decode_choice(raw: Any) -> ToolChoice | None:
    if not isinstance(raw, Mapping):
        return None
    kind = raw.get("type")
    flag = raw.get("disable_parallel_tool_use")
    parallel = None if not isinstance(flag, bool) else not flag
    if kind == "none":
        return ToolChoice(mode="none")
    mode = _CHOICES.get(kind) if isinstance(kind, str) else None
    if mode is None:
        return None
    return ToolChoice(mode=mode, name=str(raw.get("name") or "") if mode == "tool" else None,
                      parallel=parallel)


# ------------------------------------------------- tools added mid-conversation (tool_addition)

CHANGES_BETA: Final = "mid-conversation-tool-changes-2026-07-01"
"""The beta under which a system message's ``tool_addition`` names a tool of ``tools``."""
INLINE_BETA: Final = "inline-tools-2026-09-15"
"""The beta under which a ``tool_addition`` carries a tool's definition."""
STORED: Final = "_content"
"""Kept on a system message read with tool additions: its content as it came."""
IN_USER: Final = "_in_user"
"""Kept on a system message read from the tool additions of a user's turn, to go back there."""


def in_user_turn(message: Message) -> bool:
    data = message.provider_data.get(WIRE) if message.provider_data is not None else None
    return isinstance(data, Mapping) and data.get(IN_USER) is True


def added_spec(block: Mapping[str, Any], declared: Mapping[str, ToolSpec]) -> ToolSpec | None:
    """The tool a ``tool_addition`` block adds, when it is one toolwire can offer: a tool of
    the request's own (``declared``) or a custom tool's definition; None for the others (an
    MCP toolset, a server tool), which stay opaque."""
    tool = block.get("tool")
    if not isinstance(tool, Mapping):
        return None
    if tool.get("type") == "tool_reference":
        spec = declared.get(str(tool.get("name")))  # offered from here: no longer deferred
        return None if spec is None else msgspec.structs.replace(spec, deferred=False)
    definition = tool.get("definition")
    if tool.get("type") == "tool_definition" and isinstance(definition, Mapping):
        specs, _ = decode_tools([definition])
        return specs[0] if specs else None
    return None


def read_system(blocks: Sequence[Mapping[str, Any]], parts: list[Part],
                declared: Mapping[str, ToolSpec]) -> tuple[list[Part], list[ToolSpec]]:
    """A system message's parts (read by the caller, ``parts``) with its tool additions taken
    out as the tools they add."""
    tools: list[ToolSpec] = []
    kept: list[Part] = []
    for block, part in zip(blocks, parts, strict=True):
        spec = added_spec(block, declared) if block.get("type") == "tool_addition" else None
        if spec is None:
            kept.append(part)
        else:
            tools.append(spec)
    return kept, tools


def stored_content(message: Message) -> Any:
    if message.provider_data is None:
        return None
    data = message.provider_data.get(WIRE)
    return data.get(STORED) if type(data) is dict or isinstance(data, Mapping) else None


def addition_blocks(message: Message, text_blocks: list[dict[str, Any]],
                    nm: ToolNames, declared: Mapping[str, ToolSpec]) -> list[dict[str, Any]]:
    """A system message's content: as it came when its text and tools are still those it was
    read with, else its text then one ``tool_addition`` per tool, naming the ``tools`` entry."""
    stored = stored_content(message)
    if isinstance(stored, list):
        texts = [b.get("text") for b in stored if isinstance(b, Mapping)
                 and b.get("type") == "text"]
        added = [added_spec(b, declared) for b in stored if isinstance(b, Mapping)
                 and b.get("type") == "tool_addition"]
        if texts == [p.text for p in message.parts if isinstance(p, TextPart)] and \
                [a for a in added if a is not None] == list(message.tools):
            return copy.deepcopy(stored)
    return [*text_blocks, *({"type": "tool_addition",
                             "tool": {"type": "tool_reference", "name": nm.wire(t.name)}}
                            for t in message.tools)]


def deferred_additions(messages: Sequence[Message],
                       tools: Sequence[ToolSpec]) -> tuple[ToolSpec, ...]:
    """The tools messages add that the request's ``tools`` lack: each goes at the end of the
    list with ``defer_loading``, which leaves it out of the prompt until its addition."""
    if not any(m.tools for m in messages):  # the usual request: no message adds a tool
        return ()
    known = {t.name for t in tools}
    out: list[ToolSpec] = []
    for message in messages:
        stored = stored_content(message)  # tools it defines in place need no entry
        known |= {str(b["tool"]["definition"].get("name")) for b in stored
                  if isinstance(b, Mapping) and b.get("type") == "tool_addition"
                  and isinstance(b.get("tool"), Mapping) and isinstance(
                      b["tool"].get("definition"), Mapping)} if isinstance(stored, list) else set()
        for spec in message.tools:
            if spec.name not in known:
                known.add(spec.name)
                out.append(msgspec.structs.replace(spec, deferred=False))
    return tuple(out)


def addition_betas(body: Mapping[str, Any]) -> list[str]:
    """The betas the tool additions of ``body``'s messages need."""
    found: list[str] = []
    for message in body.get("messages") or ():
        content = message.get("content") if type(message) is dict or isinstance(
            message, Mapping) else None
        if type(content) is not list and not isinstance(content, list):
            continue  # a plain string, the usual user turn
        for block in content:
            if (type(block) is dict or isinstance(block, Mapping)) and \
                    block.get("type") == "tool_addition":
                tool = block.get("tool")
                beta = INLINE_BETA if isinstance(tool, Mapping) and tool.get(
                    "type") == "tool_definition" else CHANGES_BETA
                if beta not in found:
                    found.append(beta)
    return found


def leading_additions(request: Request, notes: list[Note]) -> Request:
    """``request`` with the tools of the system messages before the conversation (which join
    the system prompt) offered from the start, with a note."""
    if not traits(request).added:
        return request  # the usual request: no message adds a tool
    lead = next((n for n, m in enumerate(request.messages) if m.role != "system"),
                len(request.messages))
    if not any(m.tools for m in request.messages[:lead]):
        return request
    tools = list(request.tools)
    messages = list(request.messages)
    for n in range(lead):
        if messages[n].tools:
            tools += deferred_additions(messages[n:n + 1], tools)
            notes.append(Note(kind="tools_moved", subject=f"messages[{n}]", detail=(
                "tools added before the conversation are offered from the start")))
            data = messages[n].provider_data or {}
            mine = {k: v for k, v in (data.get(WIRE) or {}).items() if k != STORED}
            messages[n] = msgspec.structs.replace(messages[n], tools=(), provider_data={
                **data, WIRE: mine} if mine else {k: v for k, v in data.items() if k != WIRE}
                or None)
    return msgspec.structs.replace(request, tools=tuple(tools), messages=tuple(
        m for n, m in enumerate(messages) if n >= lead or m.parts))  # nothing left: none


def with_addition_betas(headers: dict[str, str] | None, body: Mapping[str, Any],
                        request: Request | None = None) -> dict[str, str] | None:
    """``headers`` with the betas the tool additions of ``body`` need joined to its list
    (``body`` encoded from ``request``: looked for only when a message of it adds tools or it
    holds blocks in the wire's own words, `toolwire.codecs.traits`)."""
    if request is not None:
        found = traits(request)
        if not found.added and not found.verbatim:
            return headers
    betas = addition_betas(body)
    if not betas:
        return headers
    given = headers.get("anthropic-beta") if headers else None
    return {**(headers or {}),
            "anthropic-beta": ",".join([*(given.split(",") if given else ()), *betas])}


def first_addition(blocks: Sequence[Mapping[str, Any]], declared: Mapping[str, ToolSpec]) -> int:
    """Where the tool additions of a user's turn start (a model that takes no system message
    has them there), or the number of blocks when it has none."""
    return next((n for n, b in enumerate(blocks) if b.get("type") == "tool_addition"
                 and added_spec(b, declared) is not None), len(blocks))


def system_message(blocks: Sequence[Mapping[str, Any]], parts: list[Part],
                   declared: Mapping[str, ToolSpec], extras: dict[str, Any]) -> Message:
    """A system message read from its ``blocks`` (``parts``: each block read), its tool
    additions as the tools it adds and its content kept as it came while it adds any."""
    parts, added = read_system(blocks, parts, declared)
    own = {**extras, STORED: copy.deepcopy(list(blocks))} if added else extras
    return Message(role="system", parts=tuple(parts), provider_data={WIRE: own} if own else None,
                   tools=tuple(added))
