"""Interactions ``steps`` and ``content`` <-> canonical parts, shared by requests, replies and
streams.

Owns: the wire name, the tool-name rule and `NameMap` for this wire, content blocks both ways
(`encode_content`, `decode_content`), the steps of one turn both ways (`StepEncoder`,
`decode_output`); the shape checks that make a wrong-shaped body a `WireFormatError` naming the
field are the folder's (`as_list`, `as_step`). Used only by the modules of the
gemini-interactions wire. Must not import the other modules of this wire beside the folder's
``__init__``, transport, client or any vendor SDK.

What rides in ``provider_data["gemini-interactions"]``:

- `ReasoningPart`: the whole ``thought`` step as received (its ``signature`` and ``summary``),
  sent back unchanged; its text is the summary's text.
- `TextPart`, `ToolCallPart`, `ToolResultPart`, `MediaPart`: the block's or step's keys other
  than the ones read (``annotations``, ``resolution``, ...), sent back on it.
- `OpaquePart`: a step of the server's own tools (``google_search_call``,
  ``code_execution_result``, ...) or a content block the model made (an image), whole.
- A reply's `Message`: ``{"interaction": id}``, the id of the interaction that produced it, so
  that a later request can continue from a stored interaction (``previous_interaction_id``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolwire.codecs import google_shared as shared
from toolwire.codecs.base import NameMap, Note, call_id_for, dumps
from toolwire.codecs.base import wrong_shape as wrong
from toolwire.codecs.gemini_interactions import NAME, as_list, as_step
from toolwire.codecs.google_shared import name_map as name_map  # the old import path
from toolwire.codecs.google_shared import request_names as request_names
from toolwire.codecs.google_shared import wire_name
from toolwire.codecs.media import b64
from toolwire.errors import JSONTextError
from toolwire.transcript import (
    JSON,
    MediaPart,
    Message,
    OpaquePart,
    Part,
    ProviderData,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    read_arguments,
)

WIRE = NAME
MEDIA_BLOCKS = frozenset({"image", "document", "audio", "video"})
"""The content blocks that hold media (by ``data`` or ``uri``)."""
TURN_STEPS = frozenset({"user_input", "function_result"})
"""The steps the client sends; every other step is the model's (or its server tools')."""
INTERACTION = "interaction"
"""The key of a reply message's provider data that holds its interaction's id."""

Step = dict[str, Any]
Content = TextPart | MediaPart | OpaquePart


def own(data: ProviderData | None) -> dict[str, Any] | None:
    """This wire's entry of a provider_data mapping, if it is an object."""
    return shared.own(data, WIRE)


def pd(extras: Mapping[str, JSON]) -> ProviderData | None:
    return shared.entry(extras, WIRE)


# --------------------------------------------------------------------------- content


def encode_media(part: MediaPart, notes: list[Note], subject: str) -> dict[str, Any] | None:
    """A media part as a content block (inline data, a URL or a file this API holds); a name
    has no place in one (a note says it was left out). None, with a note, for a part that is
    only a file another provider holds."""
    if part.data is None and part.url is None and not (part.file_ids or {}).get(WIRE):
        notes.append(Note(kind="media_dropped", subject=subject, detail=(
            f"the {part.kind} is a file another provider holds; {WIRE} cannot reach it")))
        return None
    if part.name:
        notes.append(Note(kind="field_dropped", subject=subject, detail=(
            f"{WIRE} has no field for a file's name; {part.name!r} was left out")))
    block: dict[str, Any] = {**(own(part.provider_data) or {}), "type": part.kind,
                             "mime_type": part.media_type}
    if part.data is not None:
        block["data"] = b64(part.data)
    elif part.url is not None:
        block["uri"] = part.url
    elif part.file_ids and part.file_ids.get(WIRE):
        block["uri"] = part.file_ids[WIRE]
    return block


def encode_content(parts: Sequence[Part], notes: list[Note], subject: str) -> list[Any]:
    """Text, media and this wire's own blocks as content blocks; anything else with a note."""
    out: list[Any] = []
    for n, part in enumerate(parts):
        if isinstance(part, TextPart):
            out.append({**(own(part.provider_data) or {}), "type": "text", "text": part.text})
        elif isinstance(part, MediaPart):
            block = encode_media(part, notes, f"{subject}.parts[{n}]")
            if block is not None:
                out.append(block)
        elif isinstance(part, OpaquePart) and part.wire == WIRE and part.kind in MEDIA_BLOCKS:
            out.append(part.payload)
        else:
            notes.append(Note(kind="opaque_dropped" if isinstance(part, OpaquePart)
                              else "field_dropped", subject=subject,
                              detail=f"a {type(part).__name__} has no place here on {WIRE}; "
                                     "left out"))
    return out


FILE_URI = ("https://generativelanguage.googleapis.com/", "files/")
"""How the URI of a file this API holds starts (read back as a file id, not a URL)."""


def decode_media(block: Mapping[str, Any], where: str) -> MediaPart:
    """A media block as a media part (a URI is a URL, or a file id for a file this API holds)."""
    return shared.read_media(
        block.get("mime_type"), data=block.get("data"), uri=block.get("uri"),
        has_data="data" in block, where=where, wire=WIRE, file_uris=FILE_URI,
        keys=("mime_type", "data", "uri"),
        extras={k: v for k, v in block.items() if k not in ("type", "mime_type", "data", "uri")})


def decode_content(value: Any, where: str, *, media: bool = True) -> list[Content]:
    """Content (a string, one block or a list of blocks) as parts; ``media`` False keeps media
    blocks whole (the model's own images are not input for the next turn)."""
    if isinstance(value, str):
        return [TextPart(text=value)] if value else []
    blocks = [value] if isinstance(value, Mapping) else as_list(value, where, "a list of content")
    out: list[Content] = []
    for n, raw in enumerate(blocks):
        at = f"{where}[{n}]" if not isinstance(value, Mapping) else where
        block = as_step(raw, at)
        kind = block["type"]
        if kind == "text":
            text = block.get("text")
            if not isinstance(text, str):
                raise wrong(f"{at}.text", "a string", text)
            extras = {k: v for k, v in block.items() if k not in ("type", "text")}
            out.append(TextPart(text=text, provider_data=pd(extras)))
        elif media and kind in ("image", "document", "audio"):
            out.append(decode_media(block, at))
        else:
            out.append(OpaquePart(wire=WIRE, kind=kind, payload=dict(block)))
    return out


# --------------------------------------------------------------------------- steps out


class StepEncoder:
    """Canonical messages as steps, with a note for everything that does not fit."""

    def __init__(self, names: NameMap, tool_names: Sequence[str], notes: list[Note]) -> None:
        self.names = names
        self.tool_names = tool_names
        self.notes = notes

    def wire_name(self, name: str) -> str:
        """A name for the wire, including names in the history no longer among the tools."""
        return wire_name(self.names, name, self.tool_names)

    def message(self, message: Message, index: int) -> list[Step]:
        subject = f"messages[{index}]"
        if message.role == "assistant":
            return self.model_steps(message, subject)
        if message.role == "tool":
            steps = [self.result(p) for p in message.parts if isinstance(p, ToolResultPart)]
            rest = [p for p in message.parts if not isinstance(p, ToolResultPart)]
            if rest:
                steps.append({"type": "user_input",
                              "content": encode_content(rest, self.notes, subject)})
            return steps
        if message.role == "system":
            self.notes.append(Note(kind="role_changed", subject=subject, detail=(
                f"{WIRE} takes one system instruction; a later system message was sent as "
                "user input")))
        return [{"type": "user_input", "content": encode_content(message.parts, self.notes,
                                                                  subject)}]

    def model_steps(self, message: Message, subject: str) -> list[Step]:
        steps: list[Step] = []
        text: list[Part] = []

        def flush() -> None:
            if text:
                steps.append({"type": "model_output",
                              "content": encode_content(text, self.notes, subject)})
                text.clear()

        for part in message.parts:
            if isinstance(part, TextPart | MediaPart):
                text.append(part)
                continue
            if isinstance(part, OpaquePart) and part.wire == WIRE and part.kind in MEDIA_BLOCKS:
                text.append(part)
                continue
            flush()
            if isinstance(part, ToolCallPart):
                steps.append(self.call(part))
            elif isinstance(part, ReasoningPart):
                step = own(part.provider_data)
                if step is not None and step.get("type") == "thought":
                    steps.append(step)
                else:
                    self.notes.append(Note(kind="reasoning_dropped", subject=subject, detail=(
                        f"reasoning made on another wire cannot be sent to {WIRE}; left out")))
            elif isinstance(part, OpaquePart) and part.wire == WIRE:
                steps.append(dict(part.payload) if isinstance(part.payload, Mapping)
                             else {"type": part.kind})
            else:
                kind, wire = ((part.kind, part.wire) if isinstance(part, OpaquePart)
                              else (type(part).__name__, "another wire"))
                self.notes.append(Note(kind="opaque_dropped", subject=subject, detail=(
                    f"a {kind} block of {wire} has no place on {WIRE}; left out")))
        flush()
        return steps

    def call(self, call: ToolCallPart) -> Step:
        arguments = call.arguments
        if not isinstance(arguments, dict):
            try:
                parsed = read_arguments(call.raw_arguments) if call.raw_arguments else None
            except JSONTextError:
                parsed = None
            arguments = parsed if isinstance(parsed, dict) else {}
            if call.arguments is not None or call.raw_arguments:
                self.notes.append(Note(kind="arguments_replaced", subject=call.id, detail=(
                    f"{WIRE} takes a call's arguments as an object; they were not one and "
                    "were sent as {}")))
        extras = own(call.provider_data) or {}
        return {**extras, "type": "function_call", "id": call.id,
                "name": self.wire_name(call.name), "arguments": arguments}

    def result(self, result: ToolResultPart) -> Step:
        step: Step = {**(own(result.provider_data) or {}), "type": "function_result",
                      "call_id": result.call_id}
        if result.name:
            step["name"] = self.wire_name(result.name)
        if isinstance(result.content, str):
            step["result"] = result.content
        else:
            step["result"] = encode_content(result.content, self.notes,
                                            f"result of {result.call_id}")
        if result.is_error:
            step["is_error"] = True
        return step


# --------------------------------------------------------------------------- steps in


def decode_call(step: Mapping[str, Any], names: NameMap, seed: str, index: int) -> ToolCallPart:
    """A ``function_call`` step as a call (an id made up when the step has none)."""
    extras = {k: v for k, v in step.items() if k not in ("type", "id", "name", "arguments")}
    call_id = step.get("id")
    if not isinstance(call_id, str) or not call_id:
        call_id = call_id_for(seed, index)
    name = names.user(str(step.get("name") or ""))
    arguments = step.get("arguments")
    if isinstance(arguments, str):
        return ToolCallPart.from_raw(id=call_id, name=name, raw_arguments=arguments,
                                     provider_data=pd(extras))
    return ToolCallPart(id=call_id, name=name, arguments={} if arguments is None else arguments,
                        provider_data=pd(extras))


def thought_text(step: Mapping[str, Any]) -> str:
    """The text of a thought step's summary."""
    summary = step.get("summary")
    if not isinstance(summary, list):
        return ""
    return "".join(str(b.get("text") or "") for b in summary
                   if isinstance(b, Mapping) and b.get("type") == "text")


def decode_output(steps: Sequence[Any], where: str, names: NameMap, seed: str) -> list[Part]:
    """The model's steps of one turn as the parts of one assistant message."""
    out: list[Part] = []
    calls = 0
    for n, raw in enumerate(steps):
        at = f"{where}[{n}]"
        step = as_step(raw, at)
        kind = step["type"]
        if kind == "thought":
            out.append(ReasoningPart(text=thought_text(step), provider_data={WIRE: dict(step)}))
        elif kind == "model_output":
            out.extend(decode_content(step.get("content") or [], f"{at}.content", media=False))
        elif kind == "function_call":
            if not isinstance(step.get("name"), str):
                raise wrong(f"{at}.name", "a string", step.get("name"))
            out.append(decode_call(step, names, seed, calls))
            calls += 1
        else:
            out.append(OpaquePart(wire=WIRE, kind=kind, payload=dict(step)))
    return out


def decode_result(step: Mapping[str, Any], where: str, names: NameMap,
                  index: int) -> ToolResultPart:
    """A ``function_result`` step as a result."""
    call_id = step.get("call_id")
    if not isinstance(call_id, str) or not call_id:
        call_id = call_id_for(f"{where}:result", index)
    extras = {k: v for k, v in step.items()
              if k not in ("type", "call_id", "name", "result", "is_error")}
    value = step.get("result")
    content: str | tuple[TextPart | MediaPart, ...]
    if isinstance(value, str):
        content = value
    elif isinstance(value, list):
        parts = decode_content(value, f"{where}.result")
        content = tuple(p for p in parts if isinstance(p, TextPart | MediaPart))
    else:
        content = dumps(value)
    name = step.get("name")
    return ToolResultPart(call_id=call_id, content=content, is_error=step.get("is_error") is True,
                          name=names.user(name) if isinstance(name, str) and name else None,
                          provider_data=pd(extras))
