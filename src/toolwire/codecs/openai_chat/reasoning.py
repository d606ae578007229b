"""OpenAI Chat Completions: the reasoning that servers of this wire send beside the answer.

Owns the message-level fields (``reasoning``, ``reasoning_content``, and OpenRouter's
``reasoning_details``, a list of entries merged by their ``index``) and Mistral's ``thinking``
items in ``content``: reading them as a `ReasoningPart` that keeps them exactly, writing them
back, cutting them into the fragments a stream carries (`thinking_chunks`, `detail_fragments`)
and joining streamed fragments again (`join_thinking`). Pure functions over JSON; imports only
the transcript, `toolwire.codecs.base` and `toolwire.codecs.assembly`; every other module of
the wire may import it, and it imports none of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolwire.codecs.assembly import Joins, text_pieces
from toolwire.codecs.base import plain
from toolwire.codecs.openai_chat import NAME as WIRE
from toolwire.transcript import JSON, Part, ReasoningPart

REASONING_KEYS = ("reasoning", "reasoning_content", "reasoning_details")
"""The message-level fields that hold reasoning."""

DETAIL_TEXTS = ("text", "summary", "data")
"""The fields of a ``reasoning_details`` entry whose streamed fragments are joined as text."""

# Reasoning that came as an item of ``content`` (Mistral's ``{"type": "thinking", "thinking":
# [{"type": "text", "text": ...}]}``) goes back as that item, in its place among the others,
# not as a message-level field.
CONTENT_ITEM = "content_item"


def _entry(provider_data: Mapping[str, JSON] | None) -> dict[str, Any] | None:
    """A copy of this wire's entry of a provider_data mapping, when it is an object."""
    entry = provider_data.get(WIRE) if provider_data is not None else None
    return dict(entry) if isinstance(entry, Mapping) else None


# --------------------------------------------------------------------------- reading


def reasoning_part(message: Mapping[str, Any]) -> ReasoningPart | None:
    """The reasoning fields of an assistant message, kept exactly, as one part."""
    payload: dict[str, Any] | None = None
    for key in REASONING_KEYS:
        if key in message:
            value = message[key]
            if value is not None and value != "" and value != []:
                if payload is None:
                    payload = {}
                payload[key] = plain(value)
    if payload is None:
        return None
    return ReasoningPart(text=reasoning_text(payload), provider_data={WIRE: payload})


def reasoning_text(payload: Mapping[str, Any]) -> str:
    for key in ("reasoning", "reasoning_content"):
        if isinstance(payload.get(key), str):
            return str(payload[key])
    return details_text(payload.get("reasoning_details"))


def details_text(details: Any) -> str:
    if not isinstance(details, list):
        return ""
    out: list[str] = []
    for item in details:
        if isinstance(item, Mapping):
            for key in ("text", "summary"):
                if isinstance(item.get(key), str):
                    out.append(item[key])
    return "".join(out)


def thinking_part(item: Mapping[str, Any]) -> ReasoningPart:
    """A ``thinking`` content item as reasoning, the item kept exactly to go back."""
    return ReasoningPart(text=thinking_text(item.get("thinking")),
                         provider_data={WIRE: {CONTENT_ITEM: plain(item)}})


def thinking_text(value: Any) -> str:
    """The readable text of a thinking item's ``thinking`` (a string, or a list of chunks)."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        return ""
    return "".join(chunk["text"] for chunk in value
                   if isinstance(chunk, Mapping) and isinstance(chunk.get("text"), str))


# --------------------------------------------------------------------------- writing


def merge_reasoning(target: dict[str, Any], payload: Mapping[str, Any]) -> None:
    """Put one reasoning payload on a message, joining it with what is already there."""
    for key, value in payload.items():
        have = target.get(key)
        if isinstance(have, str) and isinstance(value, str):
            target[key] = have + value
        elif isinstance(have, list) and isinstance(value, list):
            target[key] = have + plain(value)
        else:
            target[key] = plain(value)


def reasoning_payload(part: ReasoningPart) -> dict[str, Any] | None:
    """The message-level reasoning fields a part carries (None for a content item's)."""
    payload = _entry(part.provider_data)
    return None if payload is not None and CONTENT_ITEM in payload else payload


def content_item(part: Part) -> dict[str, Any] | None:
    """The content item a reasoning part came as, if it came as one."""
    if not isinstance(part, ReasoningPart):
        return None
    payload = _entry(part.provider_data)
    item = payload.get(CONTENT_ITEM) if payload is not None else None
    return plain(item) if isinstance(item, Mapping) else None


# --------------------------------------------------------------------------- in a stream


def join_thinking(have: dict[str, Any], more: Mapping[str, Any], joins: Joins) -> None:
    """Append a streamed thinking chunk to the thinking item it continues (texts via ``joins``)."""
    before, after = have.get("thinking"), more.get("thinking")
    if isinstance(before, str) and isinstance(after, str):
        joins.add(have, "thinking", after)
    elif isinstance(before, list) and isinstance(after, list):
        for chunk in after:
            last = before[-1] if before else None
            if (isinstance(last, dict) and isinstance(chunk, Mapping) and last.get("type") == "text"
                    and chunk.get("type") == "text" and isinstance(chunk.get("text"), str)
                    and isinstance(last.get("text"), str) and chunk.keys() <= {"type", "text"}):
                joins.add(last, "text", chunk["text"])
            else:
                before.append(plain(chunk))
    for key, value in more.items():
        if key not in ("type", "thinking"):
            have[key] = plain(value)


def merge_detail(details: dict[tuple[int, int], dict[str, Any]], latest: dict[int, int],
                 joins: Joins, item: Mapping[str, Any]) -> str:
    """Merge one streamed ``reasoning_details`` fragment into ``details`` (entries by their
    index and, for an entry of another type under a taken index, its number there, the newest
    of which ``latest`` keeps); return the readable text it added."""
    index = item.get("index")
    at = index if isinstance(index, int) and not isinstance(index, bool) else -1 - len(details)
    n = latest.get(at, 0)
    key = (at, n)
    have = details.get(key)
    kind = item.get("type")
    if have is not None and kind is not None and have.get("type") != kind:
        key, have = (at, n + 1), None  # another entry under the same index
        latest[at] = n + 1
    if have is None:
        details[key] = plain(item)
    else:
        for name, value in item.items():
            if name in DETAIL_TEXTS and isinstance(value, str):
                joins.add(have, name, value)
            elif value is not None or name not in have:
                joins.drop(have, name)
                have[name] = plain(value)
    return "".join(item[k] for k in ("text", "summary") if isinstance(item.get(k), str))


def thinking_chunks(item: Any) -> list[Any]:
    """One content item as the chunks a stream carries (joined back by `join_thinking`)."""
    if not isinstance(item, Mapping):
        return [item]
    if item.get("type") == "text" and item.keys() == {"type", "text"}:
        return [{"type": "text", "text": p}
                for p in text_pieces(str(item["text"]), keep_empty=True)] or [item]
    thinking = item.get("thinking")
    if item.get("type") == "thinking" and isinstance(thinking, list) and len(thinking) == 1:
        chunk = thinking[0]
        if isinstance(chunk, Mapping) and chunk.keys() == {"type", "text"}:
            pieces = text_pieces(str(chunk["text"]), keep_empty=True) or [""]
            first = {**item, "thinking": [{"type": "text", "text": pieces[0]}]}
            return [first, *({"type": "thinking", "thinking": [{"type": "text", "text": p}]}
                             for p in pieces[1:])]
    return [item]


def detail_fragments(item: Any) -> list[Any]:
    """One reasoning_details item as the fragments a stream carries (merged back by index)."""
    if not isinstance(item, Mapping) or not isinstance(item.get("index"), int):
        return [item]
    field = next((k for k in DETAIL_TEXTS if isinstance(item.get(k), str) and len(item[k]) > 1),
                 None)
    if field is None:
        return [item]
    pieces = text_pieces(item[field])
    first = dict(item)
    first[field] = pieces[0]
    same = {k: item[k] for k in ("type", "index") if k in item}
    rest = [{**same, field: p} for p in pieces[1:]]
    return [first, *rest]
