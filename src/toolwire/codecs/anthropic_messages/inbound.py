"""Anthropic Messages: a ``POST /v1/messages`` body a client sent, read back into a canonical
`Request` (`decode_request`), and the first rule a raw body breaks (`check_body`).

Thinking and server-tool blocks, and body keys the canonical request has no field for, are
kept so that `request.encode` gives them back as they came; a body of the wrong shape raises
`WireFormatError` naming the field. Pure: imports the transcript, the shared codec modules and
this wire's ``parts``, ``schema`` and ``request``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from toolwire.codecs import anthropic_messages as folder
from toolwire.codecs import managed
from toolwire.codecs.anthropic_messages.parts import (
    ID_PATTERN,
    MEDIA_TYPES,
    TEXT_KEYS,
    WIRE,
    ToolNames,
    code_caller,
    has_extras,
    media_from_block,
    part_from_block,
    result_from_block,
    text_from_block,
)
from toolwire.codecs.anthropic_messages.request import TOP_KEYS, content_blocks, joined_system
from toolwire.codecs.anthropic_messages.schema import (
    IN_USER,
    decode_choice,
    decode_tools,
    first_addition,
    system_message,
)
from toolwire.codecs.base import role_problem, tools_lack_schemas
from toolwire.errors import WireFormatError
from toolwire.transcript import (
    Message,
    OpaquePart,
    Part,
    Request,
    TextPart,
    ToolCallPart,
    ToolSpec,
)


def _user_parts(blocks: Sequence[Mapping[str, Any]], where: str) -> list[Part]:
    parts: list[Part] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            parts.append(text_from_block(block))
        elif kind in MEDIA_TYPES and (media := media_from_block(block, where)) is not None:
            parts.append(media)
        else:
            parts.append(OpaquePart(wire=WIRE, kind=str(block.get("type")), payload=dict(block)))
    return parts

def _decode_messages(raw: Any, declared: Mapping[str, ToolSpec]) -> list[Message]:
    if not isinstance(raw, list):
        raise WireFormatError(f"{WIRE}: 'messages' must be a list")
    nm = ToolNames(None)
    out: list[Message] = []
    names: dict[str, str] = {}
    for i, wm in enumerate(raw):
        where = f"messages[{i}]"
        if not isinstance(wm, Mapping):
            raise WireFormatError(f"{WIRE}: {where} must be an object")
        role, blocks = wm.get("role"), content_blocks(wm.get("content"), where)
        extras = {k: copy.deepcopy(v) for k, v in wm.items() if k not in ("role", "content")}
        own = {WIRE: extras} if extras else None  # output_config, clear_at...: as they came
        if role == "assistant":
            parts: list[Part] = []
            for block in blocks:
                ordinal = sum(isinstance(p, ToolCallPart) for p in parts)
                part = part_from_block(block, nm=nm, seed=where, ordinal=ordinal)
                if isinstance(part, ToolCallPart):
                    names[part.id] = part.name
                parts.append(part)
            out.append(Message(role="assistant", parts=tuple(parts), provider_data=own))
        elif role == "user":
            results = [result_from_block(b, names) for b in blocks
                       if b.get("type") == "tool_result"]
            others = [b for b in blocks if b.get("type") != "tool_result"]
            cut = first_addition(others, declared)  # tools added in the user's turn
            rest = _user_parts(others[:cut], f"{WIRE}: {where}.content")
            if results:
                out.append(Message(role="tool", parts=tuple(results), provider_data=own))
            if rest or not (results or cut < len(others)):
                out.append(Message(role="user", parts=tuple(rest),
                                   provider_data=None if results else own))
            if cut < len(others):
                out.append(system_message(others[cut:], _user_parts(others[cut:], where),
                                          declared, {IN_USER: True}))
        elif role == "system":
            out.append(system_message(blocks, _user_parts(blocks, f"{WIRE}: {where}.content"),
                                      declared, extras))
        else:
            raise WireFormatError(f"{WIRE}: {where} has unknown role {role!r}")
    return out

_USUAL = frozenset({"model", "max_tokens", "messages", "stream", "system"})
_ROLES = frozenset({"user", "assistant"})


def _usual(body: Mapping[str, Any], model: str | None, stream: bool | None) -> Request | None:
    """The request of a body in its usual shape (a model, a number of tokens, a system
    prompt as text, and messages of a user or the assistant, each its text alone), read in
    one pass: what `decode_general` reads it as. None for a body of any other shape."""
    if type(body) is not dict or not body.keys() <= _USUAL:
        return None
    name, system, raw = body.get("model"), body.get("system"), body.get("messages", [])
    if name is None:
        name = model
    if type(name) is not str or not (system is None or type(system) is str) or \
            type(raw) is not list:
        return None
    messages = []
    for wm in raw:
        if type(wm) is not dict or len(wm) != 2 or wm.get("role") not in _ROLES or \
                type(text := wm.get("content")) is not str:
            return None
        messages.append(Message(role=wm["role"], parts=(TextPart(text=text),)))
    max_tokens, streams = body.get("max_tokens"), body.get("stream")
    return Request(model=name, messages=tuple(messages), system=system,
                   max_tokens=max_tokens if isinstance(max_tokens, int) else None,
                   stream=streams is True if streams is not None or stream is None else stream)


def decode_request(
    body: Mapping[str, Any], *, model: str | None = None, stream: bool | None = None
) -> Request:
    """A ``/v1/messages`` body as a `Request`; body keys it does not model go to provider_options.

    ``model`` and ``stream`` are what a URL said: ``model`` is used when the body names none,
    ``stream`` when the body has no ``stream`` key (the API's default is not to stream). A body
    in its usual shape is read in one pass (`_usual`), the same request.
    """
    found = _usual(body, model, stream)
    return found if found is not None else decode_general(body, model=model, stream=stream)


def decode_general(
    body: Mapping[str, Any], *, model: str | None = None, stream: bool | None = None
) -> Request:
    """`decode_request`'s reading of a body of any shape."""
    if not isinstance(body, Mapping):
        raise WireFormatError(f"{WIRE}: a request body must be a JSON object")
    name = body.get("model")
    if name is None:
        name = model
    if not isinstance(name, str):
        raise WireFormatError(f"{WIRE}: 'model' must be a string")
    streams = body.get("stream")
    opts: dict[str, Any] = {k: copy.deepcopy(v) for k, v in body.items() if k not in TOP_KEYS}
    system = body.get("system")
    system_text: str | None
    if system is None or isinstance(system, str):
        system_text = system
    elif isinstance(system, list):
        system_text = joined_system(system)
        plain = len(system) == 1 and isinstance(system[0], Mapping) and \
            system[0].get("type") == "text" and not has_extras(system[0], TEXT_KEYS)
        if not plain:
            opts["system"] = copy.deepcopy(system)
    else:
        raise WireFormatError(f"{WIRE}: 'system' must be a string or a list of text blocks")
    tools, keep_tools = decode_tools(body.get("tools"))
    if keep_tools:
        opts["tools"] = copy.deepcopy(body["tools"])
    choice = decode_choice(body.get("tool_choice"))
    if choice is None and body.get("tool_choice") is not None:
        opts["tool_choice"] = copy.deepcopy(body["tool_choice"])
    max_tokens = body.get("max_tokens")
    cm = folder.read_edits(opts)
    messages = _decode_messages(body.get("messages", []), {t.name: t for t in tools})
    added = {t.name for m in messages for t in m.tools}  # offered where messages add them
    return Request(
        model=name,
        messages=tuple(messages),
        system=system_text,
        tools=tuple(t for t in tools if not (t.deferred and t.name in added)),
        tool_choice=choice,
        max_tokens=max_tokens if isinstance(max_tokens, int) else None,
        stream=streams is True if streams is not None or stream is None else stream,
        provider_options={WIRE: opts} if opts else None,
        context_management=cm,
    )

def check_body(body: dict[str, Any]) -> str | None:
    """The first rule the raw ``body`` breaks, worded as the provider words it, or None."""
    if "max_tokens" not in body:
        return "max_tokens: Field required"
    problem = role_problem(body.get("messages"), ("user", "assistant", "system")) or \
        tools_lack_schemas(body.get("tools"), "input_schema") or \
        managed.code_call_problem(body, code_caller)  # where system is taken: model_checks
    if problem:
        return problem
    for i, m in enumerate(body["messages"]):
        content = m.get("content")
        if not isinstance(content, list):
            continue
        seen_other = False
        for j, block in enumerate(content):
            kind = block.get("type")
            if kind == "text" and not block.get("text"):
                return f"messages.{i}.content.{j}: text content blocks must be non-empty"
            for key in ("id", "tool_use_id"):
                if kind in ("tool_use", "tool_result") and key in block \
                        and not ID_PATTERN.match(str(block[key])):
                    return (f"messages.{i}.content.{j}.{kind}.{key}: String should match "
                            f"pattern '{ID_PATTERN.pattern}'")
            if kind == "tool_result" and seen_other:
                return (f"messages.{i}.content.{j}: tool_result blocks must come first in the "
                        "user message, before any other content")
            if kind != "tool_result":
                seen_other = True
    return folder.media_problem(body)
