"""Bedrock Converse: a canonical `Request` as a ``POST /model/{modelId}/converse`` body.

Owns `encode` of the ``bedrock-converse`` wire (reading a body back and checking a raw one are
`inbound`'s). The model
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
from toolwire.codecs.bedrock_converse.parts import (
    CACHE_POINT,
    LIMITS,
    WIRE,
    IdRewriter,
    Names,
    cache_point_of,
    call_block,
    dropped,
    media_block,
    name_map,
    opaque_block,
    part_subject,
    reasoning_block,
    result_block,
    text_block,
)
from toolwire.codecs.bedrock_converse.schema import encode_tool_config
from toolwire.codecs.caching import MAX_BREAKPOINTS
from toolwire.codecs.media import check_limits
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

TOP_KEYS = frozenset({"messages", "system", "inferenceConfig", "toolConfig", "modelId"})
ROLES = ("user", "assistant")

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
    if isinstance(stored, list) and joined_system(stored) == (text or ""):
        return copy.deepcopy(stored)  # its cache points and guard blocks in their places
    return None if text is None else [{"text": text}]


def joined_system(blocks: list[Any]) -> str:
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


# ------------------------------------------------------------------------ what the provider refuses
