"""OpenAI Chat Completions: the pieces shared by requests, replies and streams.

Owns: the wire name, the tool-name rule and name mapping (`NameMap` use, in both directions),
reading and writing one assistant message (content, refusal, tool calls; its reasoning fields
through `toolwire.codecs.openai_chat.reasoning`), reading one ``tool`` message as a result (with
the ``Error: `` and ``(no output)`` conventions), the notes for parts this wire cannot carry,
and small JSON helpers. Pure functions over JSON; imports only the transcript,
`toolwire._json`, `toolwire.codecs.base`, the wire's ``reasoning``, `toolwire.codecs.openai_media`
and `toolwire.codecs.openai_custom` (custom tool calls); must not import the wire's request,
reply or stream modules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from toolwire._json import SHALLOW
from toolwire._json import parse as parse_json
from toolwire.codecs import openai_custom as custom
from toolwire.codecs.base import NameMap, Note, call_id_for, wrong_shape
from toolwire.codecs.base import plain as plain
from toolwire.codecs.openai_chat import NAME_PATTERN as NAME_RULE
from toolwire.codecs.openai_chat.reasoning import reasoning_part, thinking_part
from toolwire.codecs.openai_media import CHAT_ITEMS, chat_media
from toolwire.transcript import (
    JSON,
    OpaquePart,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)

WIRE = "openai-chat"

"""Function names this wire accepts."""

REFUSAL: Mapping[str, JSON] = {WIRE: {"type": "refusal"}}
"""``provider_data`` of a `TextPart` that holds a refusal."""


# --------------------------------------------------------------------------- small helpers


def extras_of(value: Mapping[str, Any], known: frozenset[str]) -> dict[str, Any] | None:
    """Copies of the keys of ``value`` outside ``known``, or None when it has none."""
    for key in value:
        if key not in known:
            return {k: plain(v, k) for k, v in value.items() if k not in known}
    return None


def real_id(value: Any) -> str | None:
    """An id worth keeping: a non-empty string that is not a placeholder."""
    if isinstance(value, str) and value and value != "null":
        return value
    return None


def mapping(value: Any) -> Mapping[str, Any]:
    """``value`` when it is an object, else an empty one."""
    return value if isinstance(value, Mapping) else {}


def string(value: Any, default: str = "") -> str:
    """``value`` when it is a string, else ``default``."""
    return value if isinstance(value, str) else default

def wire_data(provider_data: Mapping[str, JSON] | None) -> dict[str, Any] | None:
    """This wire's entry of a provider_data mapping, when it is an object."""
    if provider_data is None:
        return None
    entry = provider_data.get(WIRE)
    return dict(entry) if isinstance(entry, Mapping) else None


def is_refusal(part: TextPart) -> bool:
    data = wire_data(part.provider_data)
    return data is not None and data.get("type") == "refusal"


def reply_seed(body: Mapping[str, Any]) -> str:
    """What synthetic call ids derive from: the reply id, else its model and creation time."""
    rid = real_id(body.get("id"))
    if rid is not None:
        return rid
    return f"{body.get('model') or ''}:{body.get('created') or ''}"


def name_map(tools: Sequence[ToolSpec]) -> NameMap:
    return NameMap.build([t.name for t in tools], pattern=NAME_RULE)


class NameReader(Protocol):
    """What reading a reply needs of a name map: the user's name for a wire name."""

    def user(self, name: str) -> str: ...


class ReplyNames:
    """`name_map` of the tools, built only for a name that is not one of the tools' own.

    A tool's own name is never chosen as the wire name of another (wire names all fit the
    rule, and are picked among names no fitting tool has), so it maps back to itself.
    """

    __slots__ = ("_map", "_names", "_tools")

    def __init__(self, tools: Sequence[ToolSpec]) -> None:
        self._tools = tools
        self._names: set[str] | None = None
        self._map: NameMap | None = None

    def user(self, name: str) -> str:
        if self._map is None:
            names = self._names
            if names is None:
                names = self._names = {t.name for t in self._tools}
            if name in names:
                return name
            self._map = name_map(self._tools)
        return self._map.user(name)


class Names:
    """Tool names as sent: the tool list's map, plus a map for names only the history uses.

    A name the wire accepts is never mapped, so the history is read for names (``history``,
    called at most once) only when a name that needs mapping turns up outside the tool list.
    """

    __slots__ = ("_history", "_specs", "_stray", "tools")

    def __init__(self, tools: Sequence[ToolSpec], history: Callable[[], Iterable[str]]) -> None:
        self.tools = name_map(tools)
        self._specs = tools
        self._history = history
        self._stray: NameMap | None = None

    def _strays(self) -> NameMap:
        if self._stray is None:
            known = {t.name for t in self._specs}
            extra = list(dict.fromkeys(n for n in self._history() if n not in known))
            self._stray = NameMap.build(extra, pattern=NAME_RULE)
        return self._stray

    def wire(self, name: str) -> str:
        mapped = self.tools.to_wire.get(name)
        if mapped is not None:
            return mapped
        if NAME_RULE.match(name):
            return name
        return self._strays().wire(name)

    def notes(self) -> list[Note]:
        return self.tools.notes() + (self._stray.notes() if self._stray is not None else [])


# --------------------------------------------------------------------------- reading messages


_TEXT_ITEM_KEYS = frozenset({"type", "text"})


def content_parts(content: Any, *, keep_empty: bool) -> list[Part]:
    """Text and other content items of a message (non-text items kept as opaque parts)."""
    if isinstance(content, str):
        return [TextPart(text=content)] if content or keep_empty else []
    parts: list[Part] = []
    if not isinstance(content, list):
        return parts
    for item in content:
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type")
        text = item.get("text")
        if kind == "text" and isinstance(text, str):
            extras = extras_of(item, _TEXT_ITEM_KEYS)
            parts.append(TextPart(text=text, provider_data={WIRE: extras} if extras else None))
        elif kind == "refusal" and isinstance(item.get("refusal"), str):
            parts.append(TextPart(text=item["refusal"], provider_data=REFUSAL))
        elif kind == "thinking":
            parts.append(thinking_part(item))
        elif kind in CHAT_ITEMS and (media := chat_media(item, "content")) is not None:
            parts.append(media)
        else:
            parts.append(OpaquePart(wire=WIRE, kind=str(kind or "content"), payload=plain(item)))
    return parts


_CALL_KEYS = frozenset({"id", "type", "function", "index", "custom"})
_PLAIN_CALL_KEYS = frozenset({"id", "type", "function", "index"})


def plain_calls(calls: list[Any], names: NameReader | None) -> list[ToolCallPart] | None:
    """Every call of a ``tool_calls`` list, when all have the usual shape; else None.

    The usual shape: an id, a function name and argument text, and no other keys. Anything
    else (a missing id, arguments as an object, extra keys) goes through `decode_call`.
    """
    out: list[ToolCallPart] = []
    for call in calls:
        if type(call) is not dict:
            return None
        # a value of the type asked for is a key there, so the sizes tell the keys apart
        call_id, fn = call.get("id"), call.get("function")
        if (type(fn) is not dict or len(fn) != 2 or type(call_id) is not str or not call_id
                or call_id == "null"):
            return None
        name, raw = fn.get("name"), fn.get("arguments")
        if type(name) is not str or type(raw) is not str:
            return None
        if (len(call) != 3 or call.get("type") != "function") and (
                not call.keys() <= _PLAIN_CALL_KEYS or call.get("type", "function") != "function"):
            return None
        if names is not None:
            name = names.user(name)
        if len(raw) > SHALLOW:  # long enough to nest past the limit: the general reading checks
            out.append(ToolCallPart.from_raw(id=call_id, name=name, raw_arguments=raw))
            continue
        try:
            out.append(ToolCallPart(id=call_id, name=name, arguments=parse_json(raw),
                                    raw_arguments=raw))
        except (ValueError, TypeError, RecursionError):  # empty or broken: the general reading
            out.append(ToolCallPart.from_raw(id=call_id, name=name, raw_arguments=raw))
    return out


def plain_call(call: Any, names: NameReader | None) -> ToolCallPart | None:
    """One entry of ``tool_calls`` when it has the usual shape (`plain_calls`), else None."""
    found = plain_calls([call], names)
    return found[0] if found else None


def decode_call(
    call: Mapping[str, Any], position: int, seed: str, names: NameReader | None,
    where: str = "a tool call",
) -> ToolCallPart | OpaquePart:
    """One entry of ``tool_calls``; ``position`` is its place in the message (for missing ids);
    ``where`` is its path in the body, for the error when it is of the wrong shape."""
    usual = plain_call(call, names)
    if usual is not None:
        return usual
    fn = call.get("function")
    if call.get("type") == "custom" or (fn is None and isinstance(call.get("custom"), Mapping)):
        part = custom.decode_call(call, real_id(call.get("id")) or call_id_for(seed, position),
                                  names)  # a custom tool's call: its text input
        return part or OpaquePart(wire=WIRE, kind="custom_tool_call", payload=plain(call, where))
    if type(fn) is not dict and not isinstance(fn, Mapping):
        if fn is not None:
            raise wrong_shape(f"{where}.function", "an object (the function called)", fn)
        fn = {}
    name = fn.get("name")
    if not isinstance(name, str):
        name = ""
    if names is not None:
        name = names.user(name)
    call_id = real_id(call.get("id")) or call_id_for(seed, position)
    extras = extras_of(call, _CALL_KEYS)
    data = {WIRE: extras} if extras else None
    args = fn.get("arguments")
    if args is None or isinstance(args, str):
        return ToolCallPart.from_raw(id=call_id, name=name, raw_arguments=args or "",
                                     provider_data=data)
    return ToolCallPart(id=call_id, name=name, arguments=plain(args), provider_data=data)


def assistant_parts(
    message: Mapping[str, Any], *, seed: str, names: NameReader | None,
    made_ids: list[str] | None = None, where: str = "the message",
) -> list[Part]:
    """Canonical parts of an assistant message: reasoning, text, refusal, then calls.

    ``made_ids`` (when given) receives the ids made up for calls that came without one;
    ``where`` is the message's path in the body, named by a shape error.
    """
    parts: list[Part] = []
    if "reasoning" in message or "reasoning_content" in message or (
            "reasoning_details" in message):
        reasoning = reasoning_part(message)
        if reasoning is not None:
            parts.append(reasoning)
    content = message.get("content")
    if isinstance(content, str):
        if content:
            parts.append(TextPart(text=content))
    else:
        parts.extend(content_parts(content, keep_empty=False))
    refusal = message.get("refusal")
    if isinstance(refusal, str) and refusal:
        parts.append(TextPart(text=refusal, provider_data=REFUSAL))
    calls = message.get("tool_calls")
    if type(calls) is list and calls:
        usual = plain_calls(calls, names)
        if usual is not None:
            parts += usual
            return parts
        for i, call in enumerate(calls):
            if type(call) is not dict and not isinstance(call, Mapping):
                raise wrong_shape(f"{where}.tool_calls[{i}]", "an object (a tool call)", call)
            part = decode_call(call, i, seed, names, f"{where}.tool_calls[{i}]")
            parts.append(part)
            if (made_ids is not None and type(part) is ToolCallPart
                    and part.id != call.get("id")):
                made_ids.append(part.id)
    elif calls is not None and type(calls) is not list:
        raise wrong_shape(f"{where}.tool_calls", "a list of tool calls", calls)
    elif "function_call" in message and string(mapping(message["function_call"]).get("name")):
        # the legacy single-function shape, still sent by a few servers
        parts.append(decode_call({"function": message["function_call"]}, 0, seed, names))
    return parts


# --------------------------------------------------------------------------- writing messages


def encode_call(call: ToolCallPart, wire_name: str) -> dict[str, Any]:
    if call.freeform:
        return custom.encode_call(call, wire_name, wire_data(call.provider_data))
    out: dict[str, Any] = {
        "id": call.id,
        "type": "function",
        "function": {"name": wire_name, "arguments": call.raw_arguments
                     if call.raw_arguments is not None else call.arguments_text},
    }
    if call.provider_data is not None:
        extras = wire_data(call.provider_data)
        if extras:
            out.update(plain(extras))
    return out


def part_subject(message: int, part: int) -> str:
    """How notes name one part of one canonical message."""
    return f"messages[{message}].parts[{part}]"


def dropped_note(subject: str, part: Part) -> Note:
    """The note for a part left out of the body: this wire has no place for it there."""
    if isinstance(part, ReasoningPart):
        return Note(kind="reasoning_dropped", subject=subject,
                    detail="reasoning from another wire cannot be sent to openai-chat")
    if isinstance(part, OpaquePart):
        return Note(kind="opaque_dropped", subject=subject,
                    detail=f"{part.kind} block belongs to {part.wire}")
    return Note(kind="field_dropped", subject=subject,
                detail=f"a {type(part).__name__} has no place in this message")


# --------------------------------------------------------------------------- tool results

ERROR_PREFIX = "Error: "
EMPTY_RESULT = "(no output)"
RESULT_KEYS = frozenset({"role", "tool_call_id", "content"})
"""The keys of the usual ``tool`` message."""


def decode_result(
    message: Mapping[str, Any], call_id: str, names: Mapping[str, str]
) -> ToolResultPart:
    """A ``tool`` message as a result; ``names`` gives the name of the call it answers."""
    content = message.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = "".join(p.text for p in content_parts(content, keep_empty=True)
                       if isinstance(p, TextPart))
    else:
        text = ""
    is_error = text.startswith(ERROR_PREFIX)
    if is_error:
        text = text[len(ERROR_PREFIX):]
    elif text == EMPTY_RESULT:
        text = ""
    extras = None if message.keys() <= RESULT_KEYS else extras_of(message, RESULT_KEYS)
    return ToolResultPart(call_id=call_id, content=text, is_error=is_error,
                          name=names.get(call_id), provider_data={WIRE: extras} if extras else None)
