"""Ollama native chat: what requests, replies and streams share (messages and names).

Owns the wire's name, the tool-name map (`name_map`, `names_for`), the id rules (made when
missing by `Seeder`; ids in that generated form are never sent back), the shape checks the
readers share (`mapping`, `text_of`, `list_of`), an assistant message both ways (thinking,
text, whole tool calls with object arguments), a message's ``images`` (raw base64 strings, on
user and tool messages; documents and audio become a placeholder text) and the notes for parts
this wire cannot carry. Pure: no HTTP, no vendor SDK; imports only the transcript, the media
constructors' type sniffing, the error tree and the codec base (and its media helpers), never
this wire's other modules.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from toolwire.codecs.base import (
    PORTABLE_NAME,
    NameMap,
    Note,
    call_id_for,
)
from toolwire.codecs.base import wrong_shape as wrong
from toolwire.codecs.media import MB, b64, check_media, placeholder, unb64
from toolwire.errors import ConfigError, WireFormatError
from toolwire.media import sniff_media_type
from toolwire.transcript import (
    JSON,
    MediaPart,
    Message,
    OpaquePart,
    Part,
    ReasoningPart,
    Request,
    TextPart,
    ToolCallPart,
    ToolSpec,
)

WIRE = "ollama-chat"

MESSAGE_KEYS = frozenset({"role", "content", "thinking", "tool_calls", "tool_name",
                           "tool_call_id"})

_GENERATED_ID = re.compile(r"\Acall_[0-9a-f]{24}\Z")

_NOTHING: Mapping[str, Any] = MappingProxyType({})


# --------------------------------------------------------------------------- names, ids and shapes


def name_map(tools: Sequence[ToolSpec]) -> NameMap:
    """The tool-name map for a tool list (empty, and quick, when every name fits)."""
    names = [t.name for t in tools]
    if all(map(PORTABLE_NAME.match, names)):
        return NameMap()
    return NameMap.build(names, pattern=PORTABLE_NAME)


def names_for(request: Request | None) -> NameMap:
    return name_map(request.tools) if request is not None else NameMap()


def own(data: Mapping[str, JSON] | None) -> Mapping[str, Any]:
    """This wire's entry of a provider_data mapping when it is an object (not copied)."""
    if not data:
        return _NOTHING
    value = data.get(WIRE)
    if isinstance(value, dict):
        return value
    return value if isinstance(value, Mapping) else _NOTHING


def is_generated(call_id: str) -> bool:
    return len(call_id) == 29 and bool(_GENERATED_ID.match(call_id))


class Seeder:
    """Deterministic ids for calls that came without one: model, created_at and the calls so far.

    Every call is added in order; the hashing is done only when an id must be made up.
    """

    def __init__(self, model: Any, created_at: Any) -> None:
        self._base = f"{model}\x00{created_at}"
        self._hash: Any = None
        self._pending: list[tuple[str, Any]] = []
        self._count = 0

    def add(self, wire_name: str, wire_args: Any) -> None:
        self._pending.append((wire_name, wire_args))
        self._count += 1

    def fold(self) -> None:
        """Hash the calls added so far (done before their values can change hands)."""
        if self._hash is None:
            self._hash = hashlib.sha256(self._base.encode())
        for wire_name, wire_args in self._pending:
            self._hash.update(
                f"\x00{wire_name}\x00{json.dumps(wire_args, sort_keys=True)}".encode())
        self._pending.clear()

    def made_id(self) -> str:
        """The id for the call added last."""
        self.fold()
        return call_id_for(self._hash.hexdigest(), self._count - 1)


def mapping(value: Any, what: str) -> Mapping[str, Any]:
    if isinstance(value, dict):
        return value
    if not isinstance(value, Mapping):
        raise wrong(what, "an object", value)
    return value


def text_of(value: Any, what: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise wrong(what, "a string", value)
    return value


def list_of(value: Any, what: str, items: str) -> list[Any]:
    """A list field (absent or null reads as empty)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise wrong(what, f"a list of {items}", value)
    return value


def unknown_keys(obj: Mapping[str, Any], known: frozenset[str]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in known}


def wrap_own(extras: Mapping[str, Any]) -> dict[str, JSON] | None:
    return {WIRE: dict(extras)} if extras else None


# --------------------------------------------------------------------------- message -> parts


def decode_call(raw: Any, seeder: Seeder, names: NameMap, where: str) -> ToolCallPart:
    """One call; arguments are an object (a string is accepted and kept as raw text)."""
    call = mapping(raw, where)
    function = mapping(call.get("function", call), f"{where}.function")
    wire_name = text_of(function.get("name"), f"{where}.function.name")
    args = function.get("arguments")
    if args is not None and not isinstance(args, (dict, str)):
        raise wrong(f"{where}.function.arguments", "an object or a string", args)
    seeder.add(wire_name, args)
    given = call.get("id")
    call_id = given if isinstance(given, str) and given else seeder.made_id()
    name = names.user(wire_name)
    if isinstance(args, str):
        return ToolCallPart.from_raw(id=call_id, name=name, raw_arguments=args)
    return ToolCallPart(id=call_id, name=name, arguments={} if args is None else args)


def decode_assistant(raw: Any, seeder: Seeder, names: NameMap, where: str = "message"
                     ) -> Message:
    msg = mapping(raw, where)
    parts: list[Any] = []
    thinking = text_of(msg.get("thinking"), f"{where}.thinking")
    if thinking:
        parts.append(ReasoningPart(text=thinking, provider_data={WIRE: thinking}))
    content = text_of(msg.get("content"), f"{where}.content")
    if content:
        parts.append(TextPart(text=content))
    calls = list_of(msg.get("tool_calls"), f"{where}.tool_calls", "tool calls")
    parts.extend(decode_call(c, seeder, names, f"{where}.tool_calls[{i}]")
                 for i, c in enumerate(calls))
    return Message(role="assistant", parts=tuple(parts),
                   provider_data=wrap_own(unknown_keys(msg, MESSAGE_KEYS)))


# --------------------------------------------------------------------------- parts -> message


def encode_call(call: ToolCallPart, index: int, names: NameMap, notes: list[Note] | None,
                 *, keep_generated_id: bool) -> dict[str, Any]:
    args: Any = call.arguments
    if call.parse_error is not None or not isinstance(args, dict):
        if call.parse_error is None and isinstance(args, Mapping):
            args = dict(args)
        else:
            if notes is not None and (call.parse_error is not None or args is not None):
                why = (f"did not parse as JSON ({call.parse_error})"
                       if call.parse_error is not None else "are not a JSON object")
                notes.append(Note(kind="arguments_replaced", subject=call.id,
                                  detail=f"arguments {why}; sent {{}} because this wire only "
                                         "carries argument objects"))
            args = {}
    function = {"index": index, "name": names.wire(call.name), "arguments": args}
    if keep_generated_id or not is_generated(call.id):
        return {"id": call.id, "function": function}
    return {"function": function}


def _thinking_of(part: ReasoningPart) -> str | None:
    """The thinking text to send for a reasoning part, or None when it belongs to another wire."""
    data = part.provider_data
    if not data:
        return part.text
    if WIRE in data:
        own = data[WIRE]
        return own if isinstance(own, str) else part.text
    return None


def part_subject(m_index: int, p_index: int) -> str:
    return f"messages[{m_index}].parts[{p_index}]"


def encode_assistant(msg: Message, m_index: int | None, names: NameMap,
                      notes: list[Note] | None, *, keep_generated_id: bool,
                      call_names: dict[str, str] | None = None) -> dict[str, Any]:
    """An assistant message; ``m_index`` None (with ``notes`` None) renders a reply."""
    texts: list[str] = []
    thinking: list[str] = []
    calls: list[dict[str, Any]] = []
    for p_index, part in enumerate(msg.parts):
        if isinstance(part, TextPart):
            texts.append(part.text)
        elif isinstance(part, ToolCallPart):
            if call_names is not None:
                call_names[part.id] = part.name
            calls.append(encode_call(part, len(calls), names, notes,
                                      keep_generated_id=keep_generated_id))
        elif isinstance(part, ReasoningPart):
            text = _thinking_of(part)
            if text is not None:
                thinking.append(text)
            elif notes is not None and m_index is not None:
                note_dropped(part, part_subject(m_index, p_index), notes)
        elif notes is not None and m_index is not None:
            note_dropped(part, part_subject(m_index, p_index), notes)
    out: dict[str, Any] = {"role": "assistant", "content": "".join(texts)}
    if thinking:
        out["thinking"] = "".join(thinking)
    if calls:
        out["tool_calls"] = calls
    return with_extras(out, own(msg.provider_data))


def note_dropped(part: Part, subject: str, notes: list[Note]) -> None:
    if isinstance(part, OpaquePart):
        notes.append(Note(kind="opaque_dropped", subject=subject,
                          detail=f"{part.kind} block from {part.wire} has no form on this wire"))
    elif isinstance(part, ReasoningPart):
        wires = ", ".join(sorted(part.provider_data or {}))
        notes.append(Note(kind="reasoning_dropped", subject=subject,
                          detail=f"reasoning from {wires} cannot be sent to this wire" if wires
                          else "reasoning outside an assistant message cannot be sent"))
    else:
        notes.append(Note(kind="part_dropped", subject=subject,
                          detail=f"{type(part).__name__} cannot appear in this message here"))


def with_extras(out: dict[str, Any], extras: Mapping[str, Any]) -> dict[str, Any]:
    if extras:
        for key, value in extras.items():
            out.setdefault(key, value)
    return out


# --------------------------------------------------------------------------- images
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"})
IMAGE_MAX = 20 * MB


def encode_media(media: Sequence[tuple[str, MediaPart]],
                 notes: list[Note]) -> tuple[list[str], list[str]]:
    """The ``images`` strings of ``(subject, part)`` pairs, and placeholder texts for the
    media this wire cannot carry."""
    images: list[str] = []
    texts: list[str] = []
    for subject, part in media:
        if part.kind != "image":
            notes.append(Note(kind="media_dropped", subject=subject,
                              detail=f"{WIRE} takes images only; a placeholder text went for "
                                     f"the {part.kind}"))
            texts.append(placeholder(part))
            continue
        if part.data is None:
            raise ConfigError(f"{subject}: {WIRE} takes images as bytes only (no URL or file "
                              "id); attach the image's bytes")
        check_media(part, wire=WIRE, subject=subject, types=IMAGE_TYPES, max_bytes=IMAGE_MAX)
        images.append(b64(part.data))
    return images, texts


def decode_images(raw: Any, where: str) -> list[MediaPart]:
    """A message's ``images`` list as image parts."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise WireFormatError(f"{where}.images: expected a list of base64 strings")
    out: list[MediaPart] = []
    for n, item in enumerate(raw):
        data = unb64(item, f"{where}.images.{n}")
        out.append(MediaPart(kind="image", media_type=sniff_media_type(data) or "image/png",
                             data=data))
    return out
