"""Bedrock Converse: canonical `Request` <-> ``POST /model/{modelId}/converse`` body, and what
the API refuses.

Owns `encode`, `decode_request` and `check_body` of the ``bedrock-converse`` wire. The model
and streaming are in the URL (``/converse`` or ``/converse-stream``), never in the body. The
system prompt is a list of blocks, settings live in ``inferenceConfig``, tools and the tool
choice in ``toolConfig``; tool results travel in a user message with ``status``, and this
wire's own reasoning, cache points and other blocks go back verbatim; `Request.cache` adds
``cachePoint`` blocks where the prompt should be cached. Body keys the canonical
request has no field for ride in ``Request.provider_options["bedrock-converse"]`` and are
merged back on encode. Imports only `toolwire.transcript`, `toolwire.errors`,
`toolwire.codecs.base` and this wire's ``parts`` and ``schema``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from toolwire.codecs.base import Encoded, Note, own_options
from toolwire.codecs.bedrock_converse import media_problem, violation
from toolwire.codecs.bedrock_converse.parts import (
    CACHE_POINT,
    ID_PATTERN,
    LIMITS,
    WIRE,
    IdRewriter,
    Names,
    cache_point_of,
    call_block,
    dropped,
    media_block,
    media_from_block,
    name_map,
    obj,
    opaque_block,
    part_from_block,
    part_subject,
    reasoning_block,
    result_block,
    result_from_block,
    seq,
    text_block,
    text_of,
    where,
    with_cache_point,
)
from toolwire.codecs.bedrock_converse.schema import decode_choice, decode_tools, encode_tool_config
from toolwire.codecs.caching import MAX_BREAKPOINTS
from toolwire.codecs.media import check_limits
from toolwire.errors import WireFormatError
from toolwire.transcript import (
    Cache,
    MediaPart,
    Message,
    OpaquePart,
    Part,
    ReasoningPart,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

_TOP_KEYS = frozenset({"messages", "system", "inferenceConfig", "toolConfig", "modelId"})
_ROLES = ("user", "assistant")

# --------------------------------------------------------------------------- encode


def _note_dropped(notes: list[Note], index: int, n: int, part: Part) -> None:
    kind = "reasoning_dropped" if isinstance(part, ReasoningPart) else (
        "opaque_dropped" if isinstance(part, OpaquePart) else "part_dropped")
    notes.append(Note(kind=kind, subject=part_subject(index, n), detail=dropped(part)))


def _assistant_blocks(parts: Sequence[Part], *, index: int, nm: Names, ids: IdRewriter,
                      notes: list[Note]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for n, part in enumerate(parts):
        block: dict[str, Any] | None = None
        if type(part) is TextPart and part.provider_data is None:
            blocks.append({"text": part.text})  # the usual text, read directly
            continue
        if type(part) is ToolCallPart:
            blocks.append(call_block(part, nm=nm, ids=ids, notes=notes))
            if part.provider_data is not None:
                _keep_cache_point(part, blocks)
            continue
        if isinstance(part, TextPart):
            block = text_block(part)
        elif isinstance(part, ReasoningPart):
            block = reasoning_block(part)
        elif isinstance(part, OpaquePart):
            block = opaque_block(part)
        if block is None:
            _note_dropped(notes, index, n, part)
        else:
            blocks.append(block)
            _keep_cache_point(part, blocks)
    return blocks


def _keep_cache_point(part: Part, blocks: list[dict[str, Any]]) -> None:
    point = cache_point_of(part)
    if point is not None:
        blocks.append({CACHE_POINT: point})


def _user_blocks(parts: Sequence[Part], *, index: int, ids: IdRewriter,
                 notes: list[Note]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for n, part in enumerate(parts):
        block: dict[str, Any] | None = None
        if type(part) is ToolResultPart and part.provider_data is None:
            blocks.append(result_block(part, ids=ids, notes=notes))  # the usual result
            continue
        if isinstance(part, TextPart):
            block = {"text": part.text}
        elif isinstance(part, ToolResultPart):
            block = result_block(part, ids=ids, notes=notes)
        elif isinstance(part, MediaPart):
            block = media_block(part, part_subject(index, n), notes)
        elif isinstance(part, OpaquePart):
            block = opaque_block(part)
        if block is None:
            _note_dropped(notes, index, n, part)
        else:
            blocks.append(block)
            _keep_cache_point(part, blocks)
    return blocks


def _encode_messages(messages: Sequence[Message], *, nm: Names,
                     notes: list[Note], start: int = 0) -> list[dict[str, Any]]:
    ids = IdRewriter(notes)
    out: list[dict[str, Any]] = []
    i = start
    while i < len(messages):
        m = messages[i]
        if m.role == "assistant":
            out.append({"role": "assistant", "content": _assistant_blocks(
                m.parts, index=i, nm=nm, ids=ids, notes=notes)})
        elif m.role == "tool":
            parts = m.parts
            if not all(type(p) is ToolResultPart for p in parts):  # results first
                parts = tuple(sorted(parts, key=lambda p: not isinstance(p, ToolResultPart)))
            blocks = _user_blocks(parts, index=i, ids=ids, notes=notes)
            if i + 1 < len(messages) and messages[i + 1].role == "user":
                i += 1  # results and the user's next words are one user message
                blocks += _user_blocks(messages[i].parts, index=i, ids=ids, notes=notes)
            out.append({"role": "user", "content": _with_text(blocks, i, notes)})
        else:
            if m.role == "system":
                notes.append(Note(kind="role_changed", subject=f"messages[{i}]",
                                  detail="Converse has no system turns; sent as a user turn"))
            out.append({"role": "user", "content": _with_text(
                _user_blocks(m.parts, index=i, ids=ids, notes=notes), i, notes)})
        i += 1
    return _alternating(out, notes)


def _alternating(out: list[dict[str, Any]], notes: list[Note]) -> list[dict[str, Any]]:
    """The turns as Converse takes them: none empty, and user and assistant in turn (two
    turns of one role in a row are joined, with a note)."""
    turns: list[dict[str, Any]] = []
    for n, turn in enumerate(out):
        if not turn["content"]:
            notes.append(Note(kind="part_dropped", subject=f"turns[{n}]",
                              detail=f"{WIRE} refuses a turn with no content; left out"))
        elif turns and turns[-1]["role"] == turn["role"]:
            notes.append(Note(kind="role_changed", subject=f"turns[{n}]",
                              detail=f"{WIRE} refuses two {turn['role']} turns in a row; "
                                     "joined to the one before"))
            turns[-1]["content"] = turns[-1]["content"] + turn["content"]
        else:
            turns.append(turn)
    return turns


def _with_text(blocks: list[dict[str, Any]], index: int,
               notes: list[Note]) -> list[dict[str, Any]]:
    """``blocks`` with a text block added when they hold a document and no text (Converse
    refuses a message with a document and no text)."""
    if any("text" in b for b in blocks) or not any("document" in b for b in blocks):
        return blocks
    names = [b["document"].get("name") for b in blocks if "document" in b]
    notes.append(Note(kind="text_added", subject=f"messages[{index}]",
                      detail=f"{WIRE} takes a document only in a message with text; "
                             "a text naming it went with it"))
    return [*blocks, {"text": "Attached: " + ", ".join(str(n) for n in names)}]


def _system(text: str | None, stored: Any) -> list[Any] | None:
    if isinstance(stored, list) and _system_text(stored) == (text or ""):
        return copy.deepcopy(stored)  # its cache points and guard blocks in their places
    return None if text is None else [{"text": text}]


def _system_text(blocks: list[Any]) -> str:
    return "\n".join(b["text"] for b in blocks if isinstance(b, Mapping)
                     and isinstance(b.get("text"), str))


def encode(request: Request) -> Encoded:
    check_limits(request, WIRE, LIMITS)
    notes: list[Note] = []
    nm = name_map(request)
    opts = own_options(request.provider_options, WIRE, notes)
    lead = next((n for n, m in enumerate(request.messages) if m.role != "system"),
                len(request.messages))  # system messages first: the system prompt's end
    texts = [request.system] if request.system is not None else []
    texts += [m.text for m in request.messages[:lead] if m.text]
    body: dict[str, Any] = {"messages": _encode_messages(request.messages, nm=nm, notes=notes,
                                                         start=lead)}
    system = _system("\n\n".join(texts) if texts else None, opts.pop("system", None))
    if system is not None:
        body["system"] = system
    config = dict(opts.pop("inferenceConfig", None) or {})
    if request.max_tokens is not None:
        config["maxTokens"] = request.max_tokens
    if request.temperature is not None:
        config["temperature"] = request.temperature
    if config:
        body["inferenceConfig"] = config
    tool_config = encode_tool_config(request, opts.pop("toolConfig", None), nm=nm, notes=notes)
    if tool_config is not None:
        body["toolConfig"] = tool_config
    body.update(opts)  # streaming is the URL's (/converse-stream), never the body's
    if request.cache is not None:
        notes.append(_cache_points(body, request.cache))
    notes[:0] = nm.notes()
    return Encoded(body=body, notes=tuple(notes))


def _cache_points(body: dict[str, Any], cache: Cache) -> Note:
    """``cachePoint`` blocks after the latest message, after the previous request's last
    message and after the system prompt (or the tools), within the limit of four."""
    point: dict[str, Any] = {"type": "default"}
    if cache.ttl is not None:
        point["ttl"] = cache.ttl
    messages = body["messages"]
    tool_list = body.get("toolConfig", {}).get("tools") or []
    budget = MAX_BREAKPOINTS - sum(
        1 for block in (*(b for m in messages for b in m["content"]), *body.get("system", ()),
                        *tool_list) if isinstance(block, Mapping) and CACHE_POINT in block)
    placed: list[str] = []
    reply = next((i for i in range(len(messages) - 2, -1, -1)
                  if messages[i]["role"] == "assistant"), None)
    for index, what in ((len(messages) - 1, "the latest message"),
                        (reply - 1 if reply else -1, "the end of the previous request")):
        content = messages[index]["content"] if index >= 0 else []
        if budget > 0 and content and CACHE_POINT not in content[-1]:
            messages[index] = {**messages[index],
                               "content": [*messages[index]["content"], {"cachePoint": point}]}
            budget -= 1
            placed.append(what)
    for key, what in (("system", "the system prompt"), ("toolConfig", "the tools")):
        blocks = body.get("system") if key == "system" else tool_list
        if budget > 0 and blocks:
            last = blocks[-1]
            if isinstance(last, Mapping) and CACHE_POINT in last:
                break  # it has one there already
            if key == "system":
                body["system"] = [*body["system"], {"cachePoint": point}]
            else:
                body["toolConfig"] = {**body["toolConfig"], "tools": [
                    *body["toolConfig"]["tools"], {"cachePoint": point}]}
            placed.insert(0, what)
            break
    ttl = f" (ttl {cache.ttl})" if cache.ttl else ""
    return Note(kind="cache_breakpoints", subject="cachePoint",
                detail=("cache points after " + ", ".join(placed) + ttl) if placed
                else "no new place to mark; the request's own cache points stay")


# --------------------------------------------------------------------------- decode


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
    opts: dict[str, Any] = {k: copy.deepcopy(v) for k, v in body.items() if k not in _TOP_KEYS}
    system_raw = seq(body.get("system"), "system")
    system: str | None = None
    if system_raw:
        system = _system_text(system_raw)
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


# ------------------------------------------------------------------------ what the provider refuses


def check_body(body: dict[str, Any]) -> str | None:
    """The first rule the raw ``body`` breaks, worded as Bedrock's ValidationException is."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "A conversation must start with a user message. Try again with a conversation " \
               "that starts with a user message."
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, dict) else None
        if role not in _ROLES:
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
