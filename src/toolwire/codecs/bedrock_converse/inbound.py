"""Bedrock Converse: a ``/model/{modelId}/converse`` body a client sent, read back into a
canonical `Request` (`decode_request`; the model and streaming come from the URL), and the
first rule a raw body breaks (`check_body`).

Reasoning, cache points and blocks this wire alone has are kept on the parts, and body keys
the canonical request has no field for go to ``provider_options["bedrock-converse"]``, so that
`request.encode` gives them back as they came. Pure: imports the transcript, the shared codec
modules and this wire's ``parts``, ``schema`` and ``request``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from toolwire.codecs.bedrock_converse import media_problem, violation
from toolwire.codecs.bedrock_converse.parts import (
    CACHE_POINT,
    ID_PATTERN,
    WIRE,
    Names,
    media_from_block,
    obj,
    part_from_block,
    result_from_block,
    seq,
    text_of,
    where,
    with_cache_point,
)
from toolwire.codecs.bedrock_converse.request import ROLES, TOP_KEYS, joined_system
from toolwire.codecs.bedrock_converse.schema import decode_choice, decode_tools
from toolwire.errors import WireFormatError
from toolwire.transcript import (
    Message,
    OpaquePart,
    Part,
    Request,
    TextPart,
    ToolCallPart,
)


def _decode_messages(raw: Any) -> list[Message]:
    nm = Names(None)
    out: list[Message] = []
    names: dict[str, str] = {}
    for i, wm in enumerate(seq(raw, "messages")):
        wm = obj(wm, "messages", i)
        role = wm.get("role")
        blocks = seq(wm.get("content"), "messages", i, "content")
        if role == "assistant":
            parts: list[Part] = []
            for n, block in enumerate(blocks):
                if _attached(block, parts):
                    continue
                ordinal = sum(isinstance(p, ToolCallPart) for p in parts)
                part = part_from_block(block, nm=nm, seed=f"messages[{i}]", ordinal=ordinal,
                                       path=("messages", i, "content", n))
                if isinstance(part, ToolCallPart):
                    names[part.id] = part.name
                parts.append(part)
            out.append(Message(role="assistant", parts=tuple(parts)))
        elif role in ("user", "system"):
            results: list[Part] = []
            rest: list[Part] = []
            last = rest
            for n, block in enumerate(blocks):
                path = ("messages", i, "content", n)
                block = obj(block, *path)
                if _attached(block, last):
                    continue
                if len(block) == 1 and "toolResult" in block:
                    value = obj(block["toolResult"], *path, "toolResult")
                    results.append(result_from_block(value, names, (*path, "toolResult")))
                    last = results
                    continue
                last = rest
                media = media_from_block(block, path)
                if media is not None:
                    rest.append(media)
                elif len(block) == 1 and "text" in block:
                    rest.append(TextPart(text=text_of(block["text"], *path, "text")))
                else:
                    kind = next(iter(block), "empty")
                    rest.append(OpaquePart(wire=WIRE, kind=str(kind), payload=dict(block)))
            if results:
                out.append(Message(role="tool", parts=tuple(results)))
            if rest or not results:
                out.append(Message(role="user", parts=tuple(rest)))
        else:
            raise WireFormatError(f"{where('messages', i, 'role')}: expected 'user' or "
                                  f"'assistant', got {role!r}")
    return out

def _attached(block: Any, parts: list[Part]) -> bool:
    """Whether ``block`` is a cache point now carried by the part before it."""
    if not (isinstance(block, Mapping) and len(block) == 1 and CACHE_POINT in block and parts):
        return False
    carrying = with_cache_point(parts[-1], block[CACHE_POINT])
    if carrying is None:
        return False
    parts[-1] = carrying
    return True

def _or_empty(value: Any) -> Any:
    return {} if value is None else value

def decode_request(
    body: Mapping[str, Any], *, model: str | None = None, stream: bool | None = None
) -> Request:
    """A Converse body as a `Request`. ``model`` and ``stream`` are what the URL said
    (``/model/{model}/converse`` or ``/converse-stream``); the body names neither."""
    body = obj(body, "the body")
    name = body.get("modelId", model)  # the URL's, or a boto-style body's own
    if name is None:
        name = ""
    if not isinstance(name, str):
        raise WireFormatError(f"{where('modelId')}: expected a string, got {name!r}")
    opts: dict[str, Any] = {k: copy.deepcopy(v) for k, v in body.items() if k not in TOP_KEYS}
    system_raw = seq(body.get("system"), "system")
    system: str | None = None
    if system_raw:
        system = joined_system(system_raw)
        if not (len(system_raw) == 1 and isinstance(system_raw[0], Mapping)
                and set(system_raw[0]) == {"text"}):
            opts["system"] = copy.deepcopy(system_raw)
    config = dict(obj(_or_empty(body.get("inferenceConfig")), "inferenceConfig"))
    max_tokens = config.pop("maxTokens", None)
    temperature = config.pop("temperature", None)
    if config:
        opts["inferenceConfig"] = copy.deepcopy(config)
    tool_config = obj(_or_empty(body.get("toolConfig")), "toolConfig")
    tools, keep = decode_tools(tool_config.get("tools"))
    choice = decode_choice(tool_config.get("toolChoice"))
    extra_config = {k: v for k, v in tool_config.items() if k not in ("tools", "toolChoice")}
    if keep or extra_config or (choice is None and "toolChoice" in tool_config):
        opts["toolConfig"] = copy.deepcopy(dict(tool_config))
    return Request(
        model=name,
        messages=tuple(_decode_messages(body.get("messages"))),
        system=system,
        tools=tuple(tools),
        tool_choice=choice,
        max_tokens=max_tokens if type(max_tokens) is int else None,
        temperature=float(temperature) if isinstance(temperature, int | float)
        and not isinstance(temperature, bool) else None,
        stream=bool(stream),
        provider_options={WIRE: opts} if opts else None,
    )

def check_body(body: dict[str, Any]) -> str | None:
    """The first rule the raw ``body`` breaks, worded as Bedrock's ValidationException is."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "A conversation must start with a user message. Try again with a conversation " \
               "that starts with a user message."
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, dict) else None
        if role not in ROLES:
            return violation(f"messages.{i + 1}.member.role",
                              "Member must satisfy enum value set: [user, assistant]")
        content = m.get("content")
        if not isinstance(content, list) or not content:
            return violation(f"messages.{i + 1}.member.content",
                              "Member must have length greater than or equal to 1")
        for j, block in enumerate(content):
            for kind in ("toolUse", "toolResult"):
                value = block.get(kind) if isinstance(block, dict) else None
                if isinstance(value, dict) and not ID_PATTERN.match(str(value.get("toolUseId"))):
                    return violation(
                        f"messages.{i + 1}.member.content.{j + 1}.member.{kind}.toolUseId",
                        f"Member must satisfy regular expression pattern: {ID_PATTERN.pattern}")
    if messages[0].get("role") != "user":
        return "A conversation must start with a user message. Try again with a conversation " \
               "that starts with a user message."
    for i in range(1, len(messages)):
        if messages[i].get("role") == messages[i - 1].get("role"):
            return "A conversation must alternate between user and assistant roles. Make sure " \
                   "the conversation alternates between user and assistant roles and try again."
    tool_config = body.get("toolConfig")
    if isinstance(tool_config, dict):
        for n, tool in enumerate(tool_config.get("tools") or ()):
            spec = tool.get("toolSpec") if isinstance(tool, dict) else None
            if isinstance(spec, dict) and ("name" not in spec or "inputSchema" not in spec):
                return violation(f"toolConfig.tools.{n + 1}.member.toolSpec",
                                  "Member must have a name and an inputSchema")
    return media_problem(body)
