"""Anthropic Messages: what requests, replies and streams share (content blocks and names).

Owns the block-level rules of the ``anthropic-messages`` wire: the wire name, how each block
type becomes a canonical part and back, the tool-name rule (`ToolNames`, built on `NameMap`
only once a name needs it) and the id rule (`IdRewriter`), and the seed generated call ids
come from. Pure functions over JSON values. Imports only `toolwire.transcript`,
`toolwire.errors` and `toolwire.codecs.base`; never HTTP, never a vendor SDK, never this
wire's other modules.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from toolwire.codecs import renames
from toolwire.codecs.anthropic_messages import ID_PATTERN as ID_PATTERN
from toolwire.codecs.anthropic_messages import NAME_PATTERN
from toolwire.codecs.base import NameMap, Note, call_id_for, dumps
from toolwire.codecs.media import MB, Limits, b64, check_media, placeholder, unb64
from toolwire.codecs.renames import request_names
from toolwire.errors import ConfigError, WireFormatError
from toolwire.transcript import (
    JSON,
    MediaKind,
    MediaPart,
    OpaquePart,
    Part,
    ReasoningPart,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    read_arguments,
)

WIRE = "anthropic-messages"

NAME_MAX = 128

REASONING_TYPES = ("thinking", "redacted_thinking")
TEXT_KEYS = frozenset({"type", "text"})
CALL_KEYS = frozenset({"type", "id", "name", "input"})
RESULT_KEYS = frozenset({"type", "tool_use_id", "content", "is_error"})
MEDIA_KEYS = frozenset({"type", "source", "title"})
MEDIA_TYPES = ("image", "document")
IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
DOCUMENT_TYPES = frozenset({"application/pdf", "text/plain"})
IMAGE_MAX = 5 * MB
"""An image's base64 text at most (the API counts the text, not the bytes)."""
DOCUMENT_MAX = 32 * MB
LIMITS = Limits(images=100, inline_bytes=32 * MB, side=8000, crowd=20, crowded=2000)
"""A request: at most 100 images, a 32 MB body, 8000 pixels a side (2000 past 20 images)."""

# --------------------------------------------------------------------------- names and ids


def full_name_map(request: Request | None) -> NameMap:
    """The tool-name mapping for a request: its tools first, then names only seen in history."""
    return request_names(request, pattern=NAME_PATTERN, max_len=NAME_MAX)


class ToolNames(renames.ToolNames):
    """`full_name_map` of a request, built only once a name that needs mapping turns up (see
    `toolwire.codecs.renames.ToolNames`)."""

    __slots__ = ()
    PATTERN = NAME_PATTERN
    MAX_LEN = NAME_MAX


def name_map(request: Request | None) -> ToolNames:
    """The tool names of a request as the wire sees them (see `ToolNames`)."""
    return ToolNames(request)


def wire_id(call_id: str) -> str:
    """``call_id`` if the API accepts it, else a deterministic rewrite that it accepts."""
    if ID_PATTERN.match(call_id):
        return call_id
    digest = hashlib.sha256(call_id.encode()).hexdigest()[:10]
    clean = re.sub(r"[^a-zA-Z0-9_-]+", "_", call_id).strip("_")
    return f"{clean}_{digest}" if clean else f"toolu_{digest}"


class IdRewriter(renames.IdRewriter):
    """Rewrites ids the API would reject (`wire_id`), noting each once (see
    `toolwire.codecs.renames.IdRewriter`)."""

    __slots__ = ()

    def __init__(self, notes: list[Note] | None) -> None:
        super().__init__(notes, rewrite=wire_id, pattern=ID_PATTERN)


def reply_seed(body: Mapping[str, Any]) -> str:
    """What generated call ids are derived from: the reply id, else a hash of its content."""
    rid = body.get("id")
    if isinstance(rid, str) and rid:
        return rid
    return hashlib.sha256(dumps(body.get("content")).encode()).hexdigest()


# --------------------------------------------------------------------------- block -> part


def has_extras(block: Mapping[str, Any], known: frozenset[str]) -> bool:
    if block.keys() <= known:
        return False
    for key, value in block.items():  # noqa: SIM110 (a loop: any() over a generator is slower)
        if value is not None and key not in known:
            return True
    return False


def own_data(provider_data: Mapping[str, JSON] | None) -> Any:
    """This wire's entry of a part's provider_data (None when there is none)."""
    return provider_data.get(WIRE) if provider_data is not None else None


def extras_of(data: JSON, known: frozenset[str]) -> dict[str, Any]:
    """The keys of a stored block beyond the ones a part carries itself.

    Values are shared, not copied: bodies are only ever serialised.
    """
    if data is None or not isinstance(data, Mapping):
        return {}
    return {k: v for k, v in data.items() if k not in known}


def _keep(block: Mapping[str, Any], known: frozenset[str]) -> dict[str, JSON] | None:
    return {WIRE: dict(block)} if has_extras(block, known) else None


def _text(value: Any) -> str:
    return value if type(value) is str else str(value or "")


def text_from_block(block: Mapping[str, Any]) -> TextPart:
    return TextPart(text=_text(block.get("text")), provider_data=_keep(block, TEXT_KEYS))


def call_from_block(
    block: Mapping[str, Any], *, nm: ToolNames, seed: str, ordinal: int
) -> ToolCallPart:
    """A ``tool_use`` block as a call; the input may be an object or (leniently) JSON text."""
    call_id = block.get("id")
    if type(call_id) is not str or not call_id:
        call_id = call_id if isinstance(call_id, str) and call_id else call_id_for(seed, ordinal)
    name = block.get("name")
    name = nm.user(name if type(name) is str else _text(name))
    pd = {WIRE: dict(block)} if not block.keys() <= CALL_KEYS and has_extras(block, CALL_KEYS) \
        else None
    caller = code_caller(block)
    value = block.get("input")
    if type(value) is dict:
        pass
    elif isinstance(value, str):
        if not value.strip():
            value = {}
        else:
            try:
                value = read_arguments(value)
            except json.JSONDecodeError:  # not read again by from_raw
                return ToolCallPart.from_raw(id=call_id, name=name, raw_arguments=value,
                                             provider_data=pd, caller=caller)
    elif value is None:
        value = {}
    return ToolCallPart(id=call_id, name=name, arguments=value, provider_data=pd, caller=caller)


def code_caller(block: Mapping[str, Any]) -> str | None:
    """The type of the server tool whose code made a ``tool_use`` block's call (its
    ``caller``), or None when the model made it directly."""
    caller = block.get("caller")
    kind = caller.get("type") if isinstance(caller, Mapping) else None
    return kind if isinstance(kind, str) and kind and kind != "direct" else None


def part_from_block(block: Mapping[str, Any], *, nm: ToolNames, seed: str, ordinal: int) -> Part:
    """One assistant-side block as a part. Unknown and server-tool blocks stay opaque."""
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return TextPart(text=text if type(text) is str else _text(text),
                        provider_data=None if block.keys() <= TEXT_KEYS
                        else _keep(block, TEXT_KEYS))
    if kind == "tool_use":
        return call_from_block(block, nm=nm, seed=seed, ordinal=ordinal)
    if kind in REASONING_TYPES:
        text = block.get("thinking") if kind == "thinking" else ""
        return ReasoningPart(text=str(text or ""), provider_data={WIRE: dict(block)})
    return OpaquePart(wire=WIRE, kind=str(kind), payload=dict(block))


def parts_from_blocks(blocks: Sequence[Any], *, nm: ToolNames, seed: str) -> list[Part]:
    parts: list[Part] = []
    ordinal = 0
    for block in blocks:
        if type(block) is not dict and not isinstance(block, Mapping):
            raise WireFormatError(f"{WIRE}: a content block must be an object, got {block!r}")
        kind = block.get("type")
        if kind == "tool_use":
            call_id, name, value = block.get("id"), block.get("name"), block.get("input")
            if (type(call_id) is str and call_id and type(name) is str and type(value) is dict
                    and block.keys() <= CALL_KEYS):  # the usual block, read directly
                parts.append(ToolCallPart(id=call_id, name=nm.user(name), arguments=value))
            else:
                parts.append(call_from_block(block, nm=nm, seed=seed, ordinal=ordinal))
            ordinal += 1
        elif kind == "text" and block.keys() <= TEXT_KEYS and type(block.get("text")) is str:
            parts.append(TextPart(text=block["text"]))
        else:
            parts.append(part_from_block(block, nm=nm, seed=seed, ordinal=ordinal))
    return parts


def media_from_block(block: Mapping[str, Any], where: str) -> MediaPart | None:
    """An ``image`` or ``document`` block as a media part; None for a source kind it does not
    model (``content`` documents), which the caller keeps as it came."""
    kind: MediaKind = "image" if block.get("type") == "image" else "document"
    source = block.get("source")
    if not isinstance(source, Mapping):
        raise WireFormatError(f"{where}.source: a {kind} block needs a source object")
    stype = source.get("type")
    media_type = source.get("media_type")
    default = "image/png" if kind == "image" else "application/pdf"
    data: bytes | None = None
    url: str | None = None
    file_ids: dict[str, str] | None = None
    if stype == "base64":
        data = unb64(source.get("data"), f"{where}.source.data")
    elif stype == "text":
        text = source.get("data")
        if not isinstance(text, str):
            raise WireFormatError(f"{where}.source.data: a text source holds a string")
        data, media_type = text.encode(), "text/plain"
    elif stype == "url" and isinstance(source.get("url"), str) and source["url"]:
        url = source["url"]
    elif stype == "file" and isinstance(source.get("file_id"), str) and source["file_id"]:
        file_ids = {WIRE: source["file_id"]}
    else:
        return None
    title = block.get("title")
    extras = {k: v for k, v in block.items() if k not in MEDIA_KEYS}
    return MediaPart(kind=kind, media_type=media_type if isinstance(media_type, str) else default,
                     data=data, url=url, file_ids=file_ids,
                     name=title if isinstance(title, str) else None,
                     provider_data={WIRE: extras} if extras else None)


def media_block(part: MediaPart, *, subject: str, notes: list[Note] | None) -> dict[str, Any]:
    """A media part as an ``image`` or ``document`` block (audio: a placeholder text and a note).

    Media this wire refuses (types, sizes) raise `ConfigError` before anything is sent."""
    if part.kind == "audio":
        if notes is not None:
            notes.append(Note(kind="media_dropped", subject=subject,
                              detail=f"{WIRE} takes no audio; a placeholder text went instead"))
        return {"type": "text", "text": placeholder(part)}
    image = part.kind == "image"
    file_id = (part.file_ids or {}).get(WIRE)
    source: dict[str, Any]
    if file_id:
        source = {"type": "file", "file_id": file_id}
    elif part.data is not None:
        check_media(part, wire=WIRE, subject=subject,
                    types=IMAGE_TYPES if image else DOCUMENT_TYPES,
                    max_bytes=IMAGE_MAX if image else DOCUMENT_MAX, encoded=image)
        if part.media_type == "text/plain":
            source = {"type": "text", "media_type": "text/plain",
                      "data": part.data.decode("utf-8", "replace")}
        else:
            source = {"type": "base64", "media_type": part.media_type, "data": b64(part.data)}
    elif part.url is not None:
        source = {"type": "url", "url": part.url}
    else:
        raise ConfigError(
            f"{subject}: the {part.kind} is only a file id of {', '.join(part.file_ids or ())}, "
            f"which {WIRE} cannot read; attach its bytes or a URL instead")
    block: dict[str, Any] = {"type": part.kind, "source": source}
    if part.name is not None and not image:
        block["title"] = part.name
    if part.provider_data is not None:
        block.update(extras_of(own_data(part.provider_data), MEDIA_KEYS))
    return block


def result_content(content: Any, where: str) -> tuple[str | tuple[TextPart | MediaPart, ...], bool]:
    """A ``tool_result`` content as canonical content, and whether it says everything it held.

    Content with images or documents becomes a sequence of parts; other content, text."""
    if isinstance(content, list) and any(
            isinstance(b, Mapping) and b.get("type") in MEDIA_TYPES for b in content):
        parts: list[TextPart | MediaPart] = []
        exact = True
        for n, b in enumerate(content):
            if not isinstance(b, Mapping):
                raise WireFormatError(f"{where}.content.{n}: a content block must be an object")
            media = media_from_block(b, f"{where}.content.{n}") if (
                b.get("type") in MEDIA_TYPES) else None
            if media is not None:
                parts.append(media)
            elif b.get("type") == "text" and not has_extras(b, TEXT_KEYS):
                parts.append(TextPart(text=_text(b.get("text"))))
            else:
                exact = False
        return tuple(parts), exact
    return result_text(content)


def result_text(content: Any) -> tuple[str, bool]:
    """A ``tool_result`` content as text, and whether that text says everything it held."""
    if content is None:
        return "", True
    if isinstance(content, str):
        return content, True
    if not isinstance(content, list):
        return dumps(content), False
    texts = [str(b.get("text") or "") for b in content
             if isinstance(b, Mapping) and b.get("type") == "text"]
    exact = len(content) == 1 and len(texts) == 1 and not has_extras(content[0], TEXT_KEYS)
    return "\n".join(texts), exact


def result_from_block(block: Mapping[str, Any], names: Mapping[str, str]) -> ToolResultPart:
    call_id = str(block.get("tool_use_id") or "")
    content, exact = result_content(block.get("content"), "tool_result")
    keep = not exact or has_extras(block, RESULT_KEYS) or block.get("is_error") is False
    return ToolResultPart(
        call_id=call_id,
        content=content,
        is_error=bool(block.get("is_error")),
        name=names.get(call_id),
        provider_data={WIRE: dict(block)} if keep else None,
    )


# --------------------------------------------------------------------------- part -> block


def as_dict(value: Mapping[str, Any]) -> dict[str, Any]:
    """A stored block to send: the same dict (bodies are only serialised), else a copy."""
    return value if type(value) is dict else copy.deepcopy(dict(value))


def reasoning_block(part: ReasoningPart) -> dict[str, Any] | None:
    """This wire's own reasoning block, verbatim, or None when the part holds none."""
    data = own_data(part.provider_data)
    if isinstance(data, Mapping) and data.get("type") in REASONING_TYPES:
        return dict(data)  # its own dict (the fields are strings), never the stored one
    return None


def text_block(part: TextPart) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": part.text}
    if part.provider_data is not None:
        block.update(extras_of(own_data(part.provider_data), TEXT_KEYS))
    return block


def call_block(part: ToolCallPart, *, nm: ToolNames, ids: IdRewriter,
               notes: list[Note] | None) -> dict[str, Any]:
    args = part.arguments
    if type(args) is not dict or part.parse_error is not None:
        if not isinstance(args, Mapping) or part.parse_error is not None:
            if notes is not None:
                why = "did not parse" if part.parse_error or args is None else "are not an object"
                notes.append(Note(
                    kind="arguments_replaced", subject=part.id,
                    detail=f"arguments {why}; sent as {{}} (input must be an object)"))
            args = {}
        else:
            args = as_dict(args)
    block: dict[str, Any] = {"type": "tool_use", "id": ids(part.id), "name": nm.wire(part.name),
                             "input": args}
    if part.provider_data is not None:
        block.update(extras_of(own_data(part.provider_data), CALL_KEYS))
    if part.caller is not None and "caller" not in block:  # made by code on another wire
        digest = hashlib.sha256(part.id.encode()).hexdigest()[:24]
        block["caller"] = {"type": part.caller, "tool_id": f"srvtoolu_{digest}"}
    return block


def result_block(part: ToolResultPart, *, ids: IdRewriter, subject: str = "tool result",
                 notes: list[Note] | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": ids(part.call_id)}
    if not isinstance(part.content, str):
        block["content"] = [
            media_block(p, subject=f"{subject}.content[{n}]", notes=notes)
            if isinstance(p, MediaPart) else text_block(p)
            for n, p in enumerate(part.content) if not isinstance(p, TextPart) or p.text]
        if part.is_error:
            block["is_error"] = True
        block.update(extras_of(own_data(part.provider_data), RESULT_KEYS))
        return block
    stored = own_data(part.provider_data)
    if stored is None:
        if part.content:
            block["content"] = part.content
        if part.is_error:
            block["is_error"] = True
        return block
    original = stored.get("content") if isinstance(stored, Mapping) else None
    if isinstance(original, list) and result_text(original)[0] == part.content:
        block["content"] = original
    elif part.content:
        block["content"] = part.content
    if part.is_error or stored.get("is_error") is False:  # an explicit false as it came
        block["is_error"] = part.is_error
    block.update(extras_of(stored, RESULT_KEYS))
    return {k: block[k] for k in (*stored, *block) if k in block}  # in the order it came


def compaction_part(summary: str) -> OpaquePart:
    """The block the server's compaction starts a reply with (its summary of what came
    before), as the reply's part; it goes back as it came."""
    return OpaquePart(wire=WIRE, kind="compaction",
                      payload={"type": "compaction", "content": summary})
