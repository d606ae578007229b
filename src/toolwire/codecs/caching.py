"""Prompt-cache breakpoints placed in a body, for the wires that cache only where marked.

Owns `place_breakpoints`, `MAX_BREAKPOINTS`, `cap_markers` and `cache_key_fields`; a decoded
body's own breakpoints moved between Anthropic's and Converse's words for a conversion are
`toolwire.codecs.cache_carry`'s. A breakpoint
(``cache_control``) on a block asks the provider to cache the prompt up to and including that
block. The placement keeps the longest stable prefix cached from turn to turn, with at most
`MAX_BREAKPOINTS` markers in the whole body (markers a request already carries count too: beyond
the limit the earliest are dropped, with a note, so the latest stable prefix wins):

1. the fixed prefix: the last system block, or the last tool when there is no system prompt;
2. the latest message, so the next request reads everything sent now;
3. the end of the previous request (the message before the latest assistant reply), which is
   exactly where the last request wrote its cache entry: the read lands there whatever number
   of blocks were added since (Anthropic looks back only about 20 blocks from a breakpoint).

Text content is always written as a list of blocks when caching (the form a marked block
needs), so a message is sent in the same bytes whether it carries a marker this turn or not;
marked blocks are copied (the body shares the rest with the request). Used by Anthropic
Messages and, for OpenRouter's breakpoint models, by OpenAI chat (text parts only);
`cache_key_fields` writes the OpenAI wires' cache key and retention, and for the models with
OpenAI's explicit breakpoints (the per-model rules, `toolwire.codecs.model_rules`) places
``prompt_cache_breakpoint`` markers the same way (`Marking` says how a wire marks a block;
each OpenAI wire's own ``cache_fields`` and marking live in its folder's ``__init__``).
A decoded body keeps its markers where they were (in the parts' provider data), like any
field the caller wrote. Imports only `toolwire.codecs.base`, the transcript and the rule
table; no wire module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from toolwire.codecs.base import Note
from toolwire.codecs.model_rules import applies
from toolwire.transcript import Cache

MAX_BREAKPOINTS = 4
"""The most cache breakpoints a request may carry (Anthropic refuses more)."""

Markable = Callable[[dict[str, Any]], bool]
"""Whether a content block may carry a breakpoint."""


def _marker(cache: Cache) -> dict[str, Any]:
    marker: dict[str, Any] = {"type": "ephemeral"}
    if cache.ttl is not None:
        marker["ttl"] = cache.ttl
    return marker


@dataclass(frozen=True, slots=True)
class Marking:
    """How a wire marks a breakpoint: the block ``key`` holding the ``marker``, the block
    ``text`` type a string content becomes, and the body's list of ``items``."""

    key: str = "cache_control"
    marker: Mapping[str, Any] | None = None
    text: str = "text"
    items: str = "messages"
    fields: tuple[str, ...] = ("content",)
    """The fields of an item holding its blocks (or a string), the last present one marked."""
    skip_role: str | None = None
    """A role whose string content stays a string (Responses' assistant items, whose blocks
    are of another type)."""


def _mark_content(content: Any, marker: dict[str, Any], markable: Markable,
                  how: Marking) -> Any:
    """``content`` (a string or a list of blocks) with ``marker`` on its last markable block,
    or None when no block takes one."""
    if isinstance(content, str):
        return [{"type": how.text, "text": content, how.key: marker}] if content else None
    if not isinstance(content, list):
        return None
    for n in range(len(content) - 1, -1, -1):
        block = content[n]
        if isinstance(block, dict) and markable(block):
            if how.key in block:
                return None  # already marked by the caller
            marked = list(content)
            marked[n] = {**block, how.key: marker}
            return marked
    return None


def _as_blocks(message: Any, how: Marking) -> Any:
    """A message whose text content is written as one text block, the form a marked message
    takes: every message keeps one form from turn to turn, marked or not."""
    if not isinstance(message, dict) or message.get("role") == how.skip_role:
        return message
    for field in how.fields:
        text = message.get(field)
        if isinstance(text, str) and text:
            return {**message, field: [{"type": how.text, "text": text}]}
    return message


def _mark_message(messages: list[Any], start: int, stop: int, marker: dict[str, Any],
                  markable: Markable, how: Marking) -> int | None:
    """Mark the last markable block of the messages from ``start`` back to ``stop``
    (exclusive); the index of the message marked, or None."""
    for i in range(start, stop, -1):
        message = messages[i]
        if not isinstance(message, dict):
            continue
        field = next((f for f in how.fields if f in message), how.fields[0])
        content = _mark_content(message.get(field), marker, markable, how)
        if content is not None:
            messages[i] = {**message, field: content}
            return i
    return None


def _is_reply(item: Any) -> bool:
    return isinstance(item, dict) and (item.get("role") == "assistant"
                                       or item.get("type") == "function_call")


def place_breakpoints(
    body: dict[str, Any],
    cache: Cache,
    *,
    markable: Markable,
    system_in_messages: bool = False,
    tools_take_markers: bool = True,
    how: Marking = Marking(),
) -> list[Note]:
    """Put cache breakpoints into ``body`` (changed in place: ``system``, ``tools`` and
    the items are replaced by marked copies) and say where they went.

    ``system_in_messages``: the system prompt is the body's first message (OpenAI chat), not a
    ``system`` field. ``tools_take_markers``: a tool definition may carry a breakpoint.
    ``how``: the wire's marker (Anthropic's ``cache_control`` by default).
    """
    marker = dict(how.marker) if how.marker is not None else _marker(cache)
    messages = [_as_blocks(m, how) for m in body.get(how.items) or ()]
    if isinstance(body.get("system"), str) and body["system"]:
        body["system"] = [{"type": "text", "text": body["system"]}]
    placed: list[str] = []
    last = len(messages) - 1
    latest = _mark_message(messages, last, -1, marker, markable, how)
    if latest is not None:
        placed.append("the latest message")
        reply = next((i for i in range(latest - 1, -1, -1) if _is_reply(messages[i])), None)
        if reply is not None and reply > 0:
            floor = 0 if system_in_messages and messages[0].get("role") == "system" else -1
            if _mark_message(messages, reply - 1, floor, marker, markable, how) is not None:
                placed.append("the end of the previous request")
    system = body.get("system")
    if system_in_messages:
        first = messages[0] if messages else None
        if (isinstance(first, dict) and first.get("role") == "system"
                and _mark_message(messages, 0, -1, marker, markable, how) is not None):
            placed.insert(0, "the system prompt")
    elif system:
        marked = _mark_content(system, marker, markable, how)
        if marked is not None:
            body["system"] = marked
            placed.insert(0, "the system prompt")
    elif tools_take_markers and body.get("tools"):
        tools = list(body["tools"])
        if isinstance(tools[-1], dict) and how.key not in tools[-1]:
            tools[-1] = {**tools[-1], how.key: marker}
            body["tools"] = tools
            placed.insert(0, "the last tool")
    if messages:
        body[how.items] = messages
    ttl = marker.get("ttl")
    detail = ("breakpoints on " + ", ".join(placed) + (f" (ttl {ttl})" if ttl else "")
              ) if placed else "no block could carry a breakpoint"
    return [Note(kind="cache_breakpoints", subject=how.key, detail=detail),
            *cap_markers(body, MAX_BREAKPOINTS, how.key)]


def _blocks(items: Any, path: str) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """The places a breakpoint can sit, in the order the prompt is read: each item of a
    section (a tool, a system block, a message), each block of its ``content``, and each block
    inside a tool result's ``content``; never inside values (a schema, a call's input)."""
    if type(items) is not list:
        return
    for n, item in enumerate(items):
        yield (path, n), item
        content = item.get("content") if type(item) is dict else None
        if type(content) is list:
            for m, block in enumerate(content):
                yield (path, n, m), block
                inner = block.get("content") if type(block) is dict else None
                if type(inner) is list:
                    for k, part in enumerate(inner):
                        yield (path, n, m, k), part


def _path(where: tuple[Any, ...]) -> str:
    """``("messages", 3, 1)`` as ``messages[3].content[1]``."""
    return f"{where[0]}[{where[1]}]" + "".join(f".content[{i}]" for i in where[2:])


def _count(items: Any, key: str) -> int:
    """How many of the places `_blocks` reads hold ``key`` (the same walk, without paths:
    a body within the limit, the usual one, pays only this)."""
    found = 0
    if type(items) is not list:
        return 0
    for item in items:
        if type(item) is not dict:
            continue
        if key in item:
            found += 1
        content = item.get("content")
        if type(content) is list:
            for block in content:
                if type(block) is not dict:
                    continue
                if key in block:
                    found += 1
                inner = block.get("content")
                if type(inner) is list:
                    found += sum(1 for part in inner if type(part) is dict and key in part)
    return found


def _marked(body: dict[str, Any], sections: list[str], key: str
            ) -> list[tuple[tuple[Any, ...], Any]]:
    """Every place of ``sections`` holding ``key``, with its path."""
    return [(path, holder) for section in sections
            for path, holder in _blocks(body[section], section)
            if type(holder) is dict and key in holder]


def cap_markers(body: dict[str, Any], limit: int = MAX_BREAKPOINTS,
                key: str = "cache_control") -> list[Note]:
    """Leave at most ``limit`` breakpoints (``key`` markers) in ``body``: the latest ones in
    the order the provider reads the prompt (tools, system, messages) stay, as the longest
    prefix; each one dropped is left out of a copy of its block, with a note."""
    order = ("tools", "system", "messages", "input")
    sections = [k for k in order if k in body]
    if sum(_count(body[k], key) for k in sections) <= limit:
        return []
    found = _marked(body, sections, key)
    if len(found) <= limit:
        return []
    dropped = {id(holder): _path(where) for where, holder in found[:len(found) - limit]}

    def without(value: Any) -> Any:
        if isinstance(value, dict):
            kept = {k: without(v) for k, v in value.items()}
            if id(value) in dropped:
                del kept[key]
            return kept
        if isinstance(value, list):
            return [without(v) for v in value]
        return value

    for k in sections:
        body[k] = without(body[k])
    return [Note(kind="cache_breakpoint_dropped", subject=path, detail=(
        f"a request takes at most {limit} {key} markers and this one had {len(found)}; the "
        f"latest {limit} (the longest prefix) stay")) for path in dropped.values()]


OPENAI_TTLS = ("30m", "12h")
"""The lifetimes an OpenAI explicit breakpoint may ask for."""


def cache_key_fields(body: dict[str, Any], cache: Cache, *, wire: str,
                     how: Marking | None = None, markable: Markable | None = None,
                     system_in_messages: bool = False) -> list[Note]:
    """The OpenAI wires' cache fields: ``prompt_cache_key`` (requests with the same key go to
    the same cache) and ``prompt_cache_retention``; a value the body already has is kept.

    For a model with explicit cache breakpoints (`toolwire.codecs.model_rules`,
    ``explicit_breakpoints``) automatic caching marks the prompt with
    ``prompt_cache_breakpoint`` the way ``how`` says, and never sends
    ``prompt_cache_retention`` with them (deprecated for those models; ``retention="24h"``
    becomes breakpoints living ``"12h"``): a body whose caller set a retention gets no
    breakpoints.
    """
    notes: list[Note] = []
    if cache.key is not None and "prompt_cache_key" not in body:
        body["prompt_cache_key"] = cache.key
        notes.append(Note(kind="cache_key", subject="prompt_cache_key",
                          detail=f"requests share the cache key {cache.key!r}"))
    model = body.get("model")
    explicit = how is not None and markable is not None and applies(
        "explicit_breakpoints", wire, model if isinstance(model, str) else None)
    if cache.retention is not None and "prompt_cache_retention" not in body:
        if not explicit:
            body["prompt_cache_retention"] = cache.retention
        else:
            notes.append(Note(kind="field_dropped", subject="prompt_cache_retention", detail=(
                f"{model} takes explicit cache breakpoints, with which prompt_cache_retention "
                "is not sent (deprecated for these models)" + (
                    "; its breakpoints live 12 hours instead" if cache.retention == "24h"
                    else ""))))
    if explicit and how is not None and markable is not None and (
            "prompt_cache_retention" not in body):
        ttl = cache.ttl if cache.ttl in OPENAI_TTLS else (
            "12h" if cache.retention == "24h" else None)
        marker = {"mode": "explicit", **({"ttl": ttl} if ttl else {})}
        notes += place_breakpoints(
            body, cache, markable=markable, system_in_messages=system_in_messages,
            tools_take_markers=False,
            how=replace(how, marker=marker))
    return notes


__all__ = [
    "MAX_BREAKPOINTS", "OPENAI_TTLS", "Markable", "Marking", "cache_key_fields", "cap_markers",
    "place_breakpoints",
]
