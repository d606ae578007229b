"""Gemini ``Part`` objects <-> canonical parts, shared by requests, replies and streams.

Owns: the wire name (the tool-name rule and its `NameMap` are the Gemini wires' shared ones,
`toolwire.codecs.google_shared`), the ids made up for calls that came without one, the
two directions of part conversion (`decode_parts`, `PartEncoder`), and `as_object`, the shape
check the request, reply and schema modules share (a request's parts are checked field by
field in ``request``). Used only by the modules of the
gemini-generate wire. Must not import the other modules of this wire, transport, client or any
vendor SDK.

What rides in ``provider_data["gemini-generate"]``:

- `TextPart`, `ToolCallPart`, `ToolResultPart`: the part's keys other than its main one
  (``thoughtSignature`` above all), kept exactly, sent back on the same part. A call or result
  whose id was made up here (Gemini sent none) also has ``"_generated_id": true``; such ids are
  never sent to Gemini.
- `ReasoningPart`: the whole part as received: a ``thought: true`` text part, or an empty text
  part that only carries a ``thoughtSignature``.
- `MediaPart` (in user turns and function responses): the part's keys other than
  ``inlineData`` / ``fileData`` (``mediaResolution``, ``videoMetadata``...), sent back on it.
- `OpaquePart`: any other part (``executableCode``, a model turn's ``inlineData``...), whole.

Media in a tool result go inside ``functionResponse.parts`` for the model families that take
them (``toolwire.codecs.gemini_generate.RESULT_PARTS_MODELS``, or the ``_result_parts``
setting); for every other model they follow the function responses in the same turn, each
result's media opened by a text naming its call (`toolwire.codecs.media.marker`), and a
``media_moved`` note says so.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolwire.codecs import google_shared as shared
from toolwire.codecs.base import NameMap, Note, call_id_for, dumps
from toolwire.codecs.base import wrong_shape as wrong
from toolwire.codecs.google_shared import as_list, wire_name
from toolwire.codecs.google_shared import name_map as name_map  # the old import path
from toolwire.codecs.google_shared import request_names as request_names
from toolwire.codecs.media import MB, Limits, b64, check_media, marker
from toolwire.errors import ConfigError
from toolwire.transcript import (
    JSON,
    MediaPart,
    OpaquePart,
    Part,
    ProviderData,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

WIRE = "gemini-generate"
INLINE_MAX = 20 * MB
"""The inline bytes of a whole request the API has long taken; larger media go by file."""
LIMITS = Limits(inline_bytes=INLINE_MAX)
GENERATED = "_generated_id"
RESULT_PART_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "application/pdf",
                               "text/plain"})
"""The media types a function response's parts take; a result holding others has its media
sent after the function responses instead."""
FILE_URI = ("https://generativelanguage.googleapis.com/", "gs://")
"""How the URI of a file Gemini holds starts (read back as a file id, not a URL)."""


def own(data: ProviderData | None) -> dict[str, Any] | None:
    """This wire's entry of a provider_data mapping, if it is an object."""
    return shared.own(data, WIRE)


def _pd(extras: Mapping[str, JSON]) -> ProviderData | None:
    return shared.entry(extras, WIRE)


# --------------------------------------------------------------------------- shape checks


def as_object(value: Any, where: str) -> Mapping[str, Any] | None:
    if value is None or isinstance(value, Mapping):
        return value
    raise wrong(where, "an object", value)


# --------------------------------------------------------------------------- parts


def call_seed(base: str, call: Mapping[str, JSON]) -> str:
    """A seed for made-up ids: the reply (or turn) and the call's own content."""
    args = call.get("args")  # a call sent without args is the same call as one with {}
    text = json.dumps([call.get("name"), {} if args is None else args], sort_keys=True,
                      ensure_ascii=False, default=str)
    return f"{base}:{hashlib.sha256(text.encode()).hexdigest()[:16]}"


def decode_call(part: Mapping[str, JSON], *, names: NameMap, seed: str, index: int) -> ToolCallPart:
    """One ``functionCall`` part as a canonical call (the ``index``-th call of its content)."""
    fc = part.get("functionCall")
    fc = fc if isinstance(fc, (dict, Mapping)) else {}
    extras = {k: v for k, v in part.items() if k != "functionCall"}
    wire_id = fc.get("id")
    if isinstance(wire_id, str) and wire_id:
        call_id = wire_id
    else:
        call_id = call_id_for(call_seed(seed, fc), index)
        extras[GENERATED] = True
    name = names.user(str(fc.get("name") or ""))
    args = fc.get("args")
    if isinstance(args, str):
        return ToolCallPart.from_raw(id=call_id, name=name, raw_arguments=args,
                                     provider_data=_pd(extras))
    return ToolCallPart(id=call_id, name=name, arguments={} if args is None else args,
                        provider_data=_pd(extras))


def _result_content(response: JSON) -> tuple[str, bool, bool]:
    """The result's text, whether it is an error, and whether the response was the usual
    ``{"output": ...}`` or ``{"error": ...}`` (or a string)."""
    if isinstance(response, Mapping) and len(response) == 1:
        ((key, value),) = response.items()
        if key in ("output", "error"):
            return (value if isinstance(value, str) else dumps(value)), key == "error", True
    if isinstance(response, str):
        return response, False, True
    return dumps(response), False, False


@dataclass
class _Calls:
    """The calls of the previous model turn, for matching results that carry no id."""

    calls: Sequence[ToolCallPart]
    used: set[int] = field(default_factory=set)

    def match(self, name: str, position: int) -> ToolCallPart | None:
        for i, call in enumerate(self.calls):
            if i not in self.used and call.name == name:
                self.used.add(i)
                return call
        if position < len(self.calls) and position not in self.used:
            self.used.add(position)
            return self.calls[position]
        return None


def decode_parts(
    parts: JSON,
    *,
    names: NameMap,
    seed: str,
    previous_calls: Sequence[ToolCallPart] = (),
    media: bool = False,
) -> list[Part]:
    """A content's ``parts`` as canonical parts, in order.

    Empty text parts that carry nothing else are skipped. ``previous_calls`` are the calls
    that ``functionResponse`` parts without an id are matched against (by name, then position).
    ``media``: ``inlineData`` and ``fileData`` parts are read as media (a user turn), not kept
    whole.
    """
    out: list[Part] = []
    if not isinstance(parts, list):
        return out
    calls = _Calls(previous_calls)
    call_index = result_index = 0
    for raw in parts:
        if not isinstance(raw, (dict, Mapping)):
            continue
        if "functionCall" in raw:
            out.append(decode_call(raw, names=names, seed=seed, index=call_index))
            call_index += 1
        elif "functionResponse" in raw:
            out.append(_decode_result(raw, names=names, seed=seed, index=result_index, calls=calls))
            result_index += 1
        elif media and ("inlineData" in raw or "fileData" in raw):
            out.append(decode_media(raw, f"{seed}.parts[{len(out)}]"))
        elif raw.get("thought") is True:
            text = raw.get("text")
            out.append(ReasoningPart(text=text if isinstance(text, str) else "",
                                     provider_data={WIRE: dict(raw)}))
        elif "text" in raw:
            text = raw["text"] if isinstance(raw["text"], str) else ""
            extras = {k: v for k, v in raw.items() if k != "text"}
            if text:
                out.append(TextPart(text=text, provider_data=_pd(extras)))
            elif extras:
                out.append(ReasoningPart(text="", provider_data={WIRE: dict(raw)}))
        else:
            kind = next((k for k in raw if k != "thoughtSignature"), "part")
            out.append(OpaquePart(wire=WIRE, kind=kind, payload=dict(raw)))
    return out


def _decode_result(
    raw: Mapping[str, JSON], *, names: NameMap, seed: str, index: int, calls: _Calls
) -> ToolResultPart:
    fr = raw.get("functionResponse")
    fr = fr if isinstance(fr, (dict, Mapping)) else {}
    extras = {k: v for k, v in raw.items() if k != "functionResponse"}
    text, is_error, usual = _result_content(fr.get("response"))
    inner = {k: v for k, v in fr.items() if k not in ("name", "id", "parts")
             and (k != "response" or not usual)}  # an unusual response goes back as it came
    if inner:
        extras["functionResponse"] = inner
    name = names.user(str(fr.get("name") or ""))
    wire_id = fr.get("id")
    if isinstance(wire_id, str) and wire_id:
        call_id = wire_id
        for i, call in enumerate(calls.calls):
            if call.id == wire_id:
                calls.used.add(i)
    else:
        extras[GENERATED] = True
        matched = calls.match(name, index)
        call_id = matched.id if matched is not None else call_id_for(f"{seed}:result", index)
    content: str | tuple[TextPart | MediaPart, ...] = text
    inner_parts = as_list(fr.get("parts"), f"{seed}.functionResponse.parts", "a list of parts")
    if inner_parts:
        media = tuple(decode_media(p, f"{seed}.functionResponse.parts[{n}]")
                      for n, p in enumerate(inner_parts))
        content = ((TextPart(text=text),) if text else ()) + media
    return ToolResultPart(call_id=call_id, content=content, is_error=is_error,
                          name=name or None, provider_data=_pd(extras))


def decode_media(raw: Any, where: str) -> MediaPart:
    """An ``inlineData`` or ``fileData`` part as a media part (a Gemini file's URI is its file
    id; any other URI a URL)."""
    if not isinstance(raw, Mapping):
        raise wrong(where, "an object (a part)", raw)
    key = "inlineData" if "inlineData" in raw else "fileData"
    value = raw.get(key)
    if not isinstance(value, Mapping):
        raise wrong(f"{where}.{key}", "an object", value)
    return shared.read_media(
        value.get("mimeType"), data=value.get("data"), uri=value.get("fileUri"),
        has_data=key == "inlineData", where=f"{where}.{key}", wire=WIRE, file_uris=FILE_URI,
        keys=("mimeType", "data", "fileUri"), extras={k: v for k, v in raw.items() if k != key})


@dataclass
class PartEncoder:
    """Canonical parts -> Gemini parts, collecting a `Note` for everything changed or dropped.

    ``for_reply`` renders a reply (the emulator's side): a call whose arguments did not parse
    is sent as its raw text, as a cut-off model reply would carry it. ``fill_signature``, when
    set, goes on the first call of a model turn whose calls carry no signature (history that
    Gemini did not produce). Calls are remembered as they are encoded, so that the results
    after them find their names and know whether their ids were made up.
    """

    names: NameMap
    tool_names: Sequence[str]
    notes: list[Note] = field(default_factory=list)
    for_reply: bool = False
    fill_signature: str | None = None
    result_parts: bool = False
    _generated: set[str] = field(default_factory=set)
    _call_names: dict[str, str] = field(default_factory=dict)
    _wire_names: dict[str, str] = field(default_factory=dict)

    def content(
        self, parts: Sequence[Part], m_index: int | None, *, model: bool
    ) -> list[dict[str, Any]]:
        """The Gemini parts of one message (``m_index`` in the request; None for a reply)."""
        out: list[dict[str, Any]] = []
        for p_index, part in enumerate(parts):
            encoded = self.part(part, m_index, p_index)
            if encoded is not None:
                out.append(encoded)
        if model and self.fill_signature:
            first = next((p for p in out if "functionCall" in p), None)
            if first is not None and "thoughtSignature" not in first:
                first["thoughtSignature"] = self.fill_signature
        return out

    def part(self, part: Part, m_index: int | None, p_index: int) -> dict[str, Any] | None:
        if isinstance(part, TextPart):
            data = part.provider_data
            return {"text": part.text, **(own(data) or {})} if data else {"text": part.text}
        if isinstance(part, ToolCallPart):
            return self._call(part, own(part.provider_data) if part.provider_data else None)
        if isinstance(part, ToolResultPart):
            return self._result(part, own(part.provider_data) if part.provider_data else None)
        if isinstance(part, ReasoningPart):
            entry = part.provider_data.get(WIRE) if part.provider_data else None
            if isinstance(entry, Mapping) and entry:
                return entry if isinstance(entry, dict) else dict(entry)
            self.notes.append(Note(kind="reasoning_dropped", subject=_where(m_index, p_index),
                                   detail="reasoning from another wire cannot be sent to Gemini"))
            return None
        if isinstance(part, OpaquePart):
            if part.wire == WIRE and isinstance(part.payload, Mapping):
                return dict(part.payload)
            self.notes.append(Note(
                kind="opaque_dropped", subject=_where(m_index, p_index),
                detail=f"{part.kind} block of {part.wire} cannot be sent to Gemini"))
            return None
        if isinstance(part, MediaPart):
            return self.media(part, _where(m_index, p_index))
        raise TypeError(f"not a part: {part!r}")  # pragma: no cover

    def _wire_name(self, name: str) -> str:
        known = self._wire_names.get(name)
        if known is None:
            known = self._wire_names[name] = wire_name(self.names, name, self.tool_names)
        return known

    def _call(self, call: ToolCallPart, extras: dict[str, Any] | None) -> dict[str, Any]:
        generated = bool(extras.pop(GENERATED, False)) if extras else False
        if generated:
            self._generated.add(call.id)
        self._call_names[call.id] = call.name
        args: JSON = call.arguments
        if isinstance(args, dict):
            pass
        elif isinstance(args, Mapping):
            args = dict(args)
        elif self.for_reply and call.raw_arguments is not None:
            args = call.raw_arguments
        else:
            args = {}
            if call.arguments is not None or call.parse_error is not None:
                self.notes.append(Note(
                    kind="arguments_replaced", subject=call.id,
                    detail="Gemini carries arguments as an object; sent {} instead of "
                           f"{call.arguments_text[:60]!r}"))
        fc: dict[str, Any] = {"name": self._wire_name(call.name), "args": args}
        if not generated:
            fc["id"] = call.id
        return {"functionCall": fc, **extras} if extras else {"functionCall": fc}

    def _result(self, result: ToolResultPart, extras: dict[str, Any] | None) -> dict[str, Any]:
        inner = None
        generated = result.call_id in self._generated
        if extras:
            read_without = bool(extras.pop(GENERATED, False))
            if result.call_id not in self._call_names:  # its call is not in this request
                generated = read_without or generated
            inner = extras.pop("functionResponse", None)
        name = result.name or self._call_names.get(result.call_id)
        if not name:
            name = "tool"
            self.notes.append(Note(kind="field_dropped", subject=result.call_id,
                                   detail="result has no tool name; sent as 'tool'"))
        fr: dict[str, Any] = {"name": self._wire_name(name)}
        if not generated:
            fr["id"] = result.call_id
        text = result.content if type(result.content) is str else result.text
        fr["response"] = {"error" if result.is_error else "output": text}
        kept = None if inner is None or not isinstance(inner, Mapping) else inner.get("response")
        if kept is not None and not result.is_error and dumps(kept) == text:
            fr["response"] = kept
        if type(result.content) is not str and self._inside(result):  # a string holds no media
            fr["parts"] = [self.media(m, f"result {result.call_id}.media[{n}]", inner=True)
                           for n, m in enumerate(result.media)]
        if inner is not None and isinstance(inner, Mapping):
            fr.update({k: v for k, v in inner.items() if k not in fr})
        return {"functionResponse": fr, **extras} if extras else {"functionResponse": fr}

    def media(self, part: MediaPart, subject: str, *, inner: bool = False) -> dict[str, Any]:
        """`media_part`, with a note when the part's name cannot go (Gemini sends none)."""
        if part.name:
            self.notes.append(Note(kind="field_dropped", subject=subject,
                                   detail=f"the name {part.name!r} of the {part.kind} is not "
                                          "sent: Gemini media parts carry none"))
        return media_part(part, subject, inner=inner)

    def moved_media(self, results: Sequence[Part], m_index: int | None) -> list[dict[str, Any]]:
        """The media of a message's tool results, for a model that takes none inside a
        function response: parts after the function responses, each result's opened by a text
        naming its call, with a note for each result that had some (none with result parts)."""
        out: list[dict[str, Any]] = []
        for p_index, part in enumerate(results):
            if isinstance(part, ToolResultPart) and type(part.content) is not str and (
                    part.media and not self._inside(part)):
                where = _where(m_index, p_index)
                key = part.call_id
                if key in self._generated or GENERATED in (own(part.provider_data) or {}):
                    key = part.name or self._call_names.get(part.call_id) or key
                out.append({"text": marker(key)})
                out.extend(self.media(m, f"{where}.media[{n}]")
                           for n, m in enumerate(part.media))
                why = ("function responses take only " + ", ".join(sorted(RESULT_PART_TYPES))
                       if self.result_parts else "this model takes none inside one; the "
                       "_result_parts setting says otherwise")
                self.notes.append(Note(
                    kind="media_moved", subject=part.call_id,
                    detail=f"{len(part.media)} media part(s) of the result went after the "
                           f"function responses ({why})"))
        return out

    def _inside(self, result: ToolResultPart) -> bool:
        """Whether ``result``'s media go inside its function response."""
        media = result.media
        return (self.result_parts and bool(media)
                and all(m.media_type in RESULT_PART_TYPES for m in media))


def media_part(part: MediaPart, subject: str, *, inner: bool = False) -> dict[str, Any]:
    """A media part as an ``inlineData`` or ``fileData`` part (bytes, else a URI or file);
    ``inner``: as a ``functionResponse.parts`` entry, which carries nothing else."""
    if part.data is not None:
        check_media(part, wire=WIRE, subject=subject, types=(part.media_type,),
                    max_bytes=INLINE_MAX)
        out: dict[str, Any] = {"inlineData": {"mimeType": part.media_type,
                                              "data": b64(part.data)}}
    else:
        uri = (part.file_ids or {}).get(WIRE) or part.url
        if uri is None:
            raise ConfigError(f"{subject}: the {part.kind} is only a file id of "
                              f"{', '.join(part.file_ids or ())}, which {WIRE} cannot read; "
                              "attach its bytes or a URL instead")
        out = {"fileData": {"mimeType": part.media_type, "fileUri": uri}}
    extras = own(part.provider_data) if part.provider_data and not inner else None
    return {**out, **{k: v for k, v in extras.items() if k not in out}} if extras else out


def _where(m_index: int | None, p_index: int) -> str:
    """The subject of a note about one part: ``messages[i].parts[j]`` (``reply.parts[j]``)."""
    return f"reply.parts[{p_index}]" if m_index is None else f"messages[{m_index}].parts[{p_index}]"
