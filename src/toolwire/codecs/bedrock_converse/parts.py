"""Bedrock Converse: what requests, replies and streams share (content blocks, names, ids).

Owns the block-level rules of the ``bedrock-converse`` wire: the wire name, how each content
block (a union: exactly one key) becomes a canonical part and back, the tool-name rule
(``[a-zA-Z0-9_-]{1,64}``, mapped with `NameMap`) and the id rule (``[a-zA-Z0-9_.:-]{1,64}``,
rewritten by `IdRewriter`), and the seed generated call ids come from. ``reasoningContent``
blocks are kept whole and go back exactly as they came; ``cachePoint`` and every block this
wire has no part for stay `OpaquePart`. Pure functions over JSON. Imports only
`toolwire.transcript`, `toolwire.errors` and `toolwire.codecs.base`; never HTTP, never a
vendor SDK, never this wire's other modules.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from toolwire.codecs import renames
from toolwire.codecs.base import Note, call_id_for, dumps, wrong_shape
from toolwire.codecs.bedrock_converse import ID_PATTERN as ID_PATTERN
from toolwire.codecs.bedrock_converse import NAME_PATTERN
from toolwire.codecs.media import Limits, b64, check_media, placeholder, unb64
from toolwire.errors import ConfigError, WireFormatError
from toolwire.transcript import (
    JSON,
    MediaPart,
    OpaquePart,
    Part,
    ReasoningPart,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    replace,
)

WIRE = "bedrock-converse"

CALL_KEYS = frozenset({"toolUseId", "name", "input"})
RESULT_KEYS = frozenset({"toolUseId", "content", "status"})
CACHE_POINT = "cachePoint"
"""The key, in a part's own provider data, of the cache point that followed its block."""


def where(*path: Any) -> str:
    """``("messages", 0, "content")`` as ``messages[0].content``, for error messages."""
    out = ""
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return f"{WIRE}: {out}"


def obj(value: Any, *path: Any) -> Mapping[str, Any]:
    """``value`` when it is a JSON object, else a `WireFormatError` naming the path."""
    if not isinstance(value, Mapping):
        raise wrong_shape(where(*path), "an object", value)
    return value


def seq(value: Any, *path: Any) -> list[Any]:
    """``value`` when it is a JSON array (None reads as empty), else a `WireFormatError`."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise wrong_shape(where(*path), "a list", value)
    return value


def text_of(value: Any, *path: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise wrong_shape(where(*path), "a string", value)
    return value


# --------------------------------------------------------------------------- names and ids


class Names(renames.ToolNames):
    """A request's tool names as the wire takes them. The whole mapping (`NameMap`, over the
    tools and the history) is made only when a name needs it: a name that fits the wire's rule
    is never mapped, and a mapped name is never one the user gave."""

    __slots__ = ()
    PATTERN = NAME_PATTERN
    MAX_LEN = 64


def name_map(request: Request | None) -> Names:
    """Tool names as the wire takes them: the request's tools, then names only in history."""
    return Names(request)


def wire_id(call_id: str) -> str:
    """``call_id`` if the API accepts it, else a deterministic rewrite that it accepts."""
    if ID_PATTERN.match(call_id):
        return call_id
    digest = hashlib.sha256(call_id.encode()).hexdigest()[:12]
    clean = re.sub(r"[^a-zA-Z0-9_.:-]+", "_", call_id).strip("_")[:50]
    return f"{clean}_{digest}" if clean else f"tooluse_{digest}"


class IdRewriter(renames.IdRewriter):
    """Rewrites ids the API would refuse (`wire_id`), the same way for calls and results,
    noting each once."""

    __slots__ = ()

    def __init__(self, notes: list[Note] | None) -> None:
        super().__init__(notes, rewrite=wire_id, pattern=ID_PATTERN)


def content_seed(content: Any) -> str:
    """What generated call ids come from: a hash of the content (Converse replies have no id)."""
    return hashlib.sha256(dumps(content).encode()).hexdigest()[:24]


# --------------------------------------------------------------------------- block -> part


def _kind(block: Mapping[str, Any]) -> str:
    """The union member a block holds (its one key); ``""`` for an empty block."""
    for key in block:
        return str(key)
    return ""


CITED = "citationsContent"


def _server_side(value: Any) -> bool:
    """Whether a ``toolUse`` block is a call the provider ran itself (Nova's code
    interpreter: ``type: server_tool_use``), not one for the client to run."""
    return isinstance(value, Mapping) and value.get("type") == "server_tool_use"


def cited_text(value: Any, path: tuple[Any, ...]) -> str:
    """The text of a ``citationsContent`` block: its generated pieces joined."""
    pieces = seq(obj(value, *path).get("content") or [], *path, "content")
    return "".join(text_of(obj(p, *path, "content", n).get("text", ""), *path, "content", n,
                           "text") for n, p in enumerate(pieces))


def text_block(part: TextPart) -> dict[str, Any]:
    """A text part as its block: a cited text goes back as the ``citationsContent`` block it
    came in while its text is unchanged."""
    data = own(part.provider_data)
    cited = data.get(CITED) if isinstance(data, Mapping) else None
    if cited is not None:
        try:
            if cited_text(cited, (CITED,)) == part.text:
                return {CITED: cited}
        except WireFormatError:
            pass
    return {"text": part.text}


def call_from_block(value: Mapping[str, Any], *, nm: Names, seed: str,
                    ordinal: int, path: tuple[Any, ...]) -> ToolCallPart:
    call_id = value.get("toolUseId")
    if not isinstance(call_id, str) or not call_id:
        call_id = call_id_for(seed, ordinal)
    name = nm.user(text_of(value.get("name"), *path, "name"))
    extras = {k: v for k, v in value.items() if k not in CALL_KEYS}
    pd = {WIRE: extras} if extras else None
    args = value.get("input")
    if isinstance(args, str):  # a stream's text, cut off or whole
        return ToolCallPart.from_raw(id=call_id, name=name, raw_arguments=args, provider_data=pd)
    return ToolCallPart(id=call_id, name=name, arguments={} if args is None else args,
                        provider_data=pd)


def part_from_block(block: Any, *, nm: Names, seed: str, ordinal: int,
                    path: tuple[Any, ...]) -> Part:
    """One content block of an assistant message as a part."""
    block = obj(block, *path)
    kind = _kind(block)
    if len(block) == 1 and kind == "text":
        return TextPart(text=text_of(block["text"], *path, "text"))
    if len(block) == 1 and kind == "toolUse" and not _server_side(block[kind]):
        return call_from_block(obj(block[kind], *path, kind), nm=nm, seed=seed,
                               ordinal=ordinal, path=(*path, kind))
    if len(block) == 1 and kind == "reasoningContent":
        value = obj(block[kind], *path, kind)
        readable = value.get("reasoningText")
        text = ""
        if isinstance(readable, Mapping):
            text = text_of(readable.get("text"), *path, kind, "reasoningText", "text")
        return ReasoningPart(text=text, provider_data={WIRE: dict(value)})
    if len(block) == 1 and kind == CITED:
        return TextPart(text=cited_text(block[kind], (*path, kind)),
                        provider_data={WIRE: {CITED: block[kind]}})
    return OpaquePart(wire=WIRE, kind=kind or "empty", payload=dict(block))


def parts_from_blocks(blocks: Any, *, nm: Names, seed: str,
                      path: tuple[Any, ...]) -> list[Part]:
    parts: list[Part] = []
    ordinal = 0
    for n, block in enumerate(seq(blocks, *path)):
        part = part_from_block(block, nm=nm, seed=seed, ordinal=ordinal, path=(*path, n))
        if isinstance(part, ToolCallPart):
            ordinal += 1
        parts.append(part)
    return parts


def result_text(content: Any, path: tuple[Any, ...]) -> tuple[str, bool]:
    """A ``toolResult``'s content as text, and whether that text says all it held."""
    blocks = seq(content, *path)
    texts: list[str] = []
    exact = len(blocks) <= 1
    for n, block in enumerate(blocks):
        block = obj(block, *path, n)
        if "text" in block:
            texts.append(text_of(block["text"], *path, n, "text"))
            exact = exact and len(block) == 1
        elif "json" in block:
            texts.append(dumps(block["json"]))
            exact = False
        else:
            exact = False
    return "\n".join(texts), exact


MEDIA_KEYS = ("image", "document")


def media_from_block(block: Mapping[str, Any], path: tuple[Any, ...]) -> MediaPart | None:
    """An ``image`` or ``document`` block with ``source.bytes`` as a media part (a document's
    name gets its format back as an extension); None for any other block."""
    if len(block) != 1 or _kind(block) not in MEDIA_KEYS:
        return None
    kind = _kind(block)
    value = obj(block[kind], *path, kind)
    source = obj(value.get("source"), *path, kind, "source")
    if "bytes" not in source:
        return None  # an S3 location or a text document: kept as the block it is
    fmt = value.get("format")
    table = IMAGE_FORMATS if kind == "image" else DOCUMENT_FORMATS
    media_type = next((t for t, f in table.items() if f == fmt), None)
    if media_type is None:
        raise WireFormatError(f"{where(*path, kind, 'format')}: expected one of "
                              f"{', '.join(table.values())}, got {fmt!r}")
    data = unb64(source["bytes"], where(*path, kind, "source", "bytes"))
    name = value.get("name")
    if kind == "document":
        name = f"{text_of(name, *path, kind, 'name')}.{fmt}" if name else None
        return MediaPart(kind="document", media_type=media_type, data=data, name=name)
    return MediaPart(kind="image", media_type=media_type, data=data)


def _result_parts(content: Any, path: tuple[Any, ...]) -> tuple[TextPart | MediaPart, ...] | None:
    """A ``toolResult``'s content as text and media, when it holds media and only text and
    media besides; None otherwise (the text reading is used then)."""
    blocks = seq(content, *path)
    parts: list[TextPart | MediaPart] = []
    for n, block in enumerate(blocks):
        block = obj(block, *path, n)
        media = media_from_block(block, (*path, n))
        if media is not None:
            parts.append(media)
        elif len(block) == 1 and "text" in block:
            parts.append(TextPart(text=text_of(block["text"], *path, n, "text")))
        else:
            return None
    return tuple(parts) if any(isinstance(p, MediaPart) for p in parts) else None


def result_from_block(value: Mapping[str, Any], names: Mapping[str, str],
                      path: tuple[Any, ...]) -> ToolResultPart:
    call_id = text_of(value.get("toolUseId"), *path, "toolUseId")
    status = value.get("status")
    parts = _result_parts(value.get("content"), (*path, "content"))
    if parts is not None and value.keys() <= RESULT_KEYS and status in (None, "success",
                                                                          "error"):
        return ToolResultPart(call_id=call_id, content=parts, is_error=status == "error",
                              name=names.get(call_id))
    content, exact = result_text(value.get("content"), (*path, "content"))
    keep = not exact or not value.keys() <= RESULT_KEYS or status not in (None, "success",
                                                                          "error")
    return ToolResultPart(call_id=call_id, content=content, is_error=status == "error",
                          name=names.get(call_id),
                          provider_data={WIRE: dict(value)} if keep else None)


# --------------------------------------------------------------------------- part -> block


def own(provider_data: Mapping[str, JSON] | None) -> Any:
    return provider_data.get(WIRE) if provider_data is not None else None


def reasoning_block(part: ReasoningPart) -> dict[str, Any] | None:
    """This wire's own ``reasoningContent`` block, exactly as it came; None for others'."""
    data = own(part.provider_data)
    if isinstance(data, Mapping) and ("reasoningText" in data or "redactedContent" in data):
        return {"reasoningContent": {k: v for k, v in data.items() if k != CACHE_POINT}}
    return None


def cache_point_of(part: Part) -> Any:
    """The cache point that followed this part's block when it was decoded, or None."""
    if isinstance(part, OpaquePart) or part.provider_data is None:
        return None  # the usual part: nothing kept
    data = own(part.provider_data)
    return data.get(CACHE_POINT) if isinstance(data, Mapping) else None


def with_cache_point(part: Part, point: Any) -> Part | None:
    """``part`` carrying the cache point that followed its block (None for an opaque part,
    which keeps the cache point as a block of its own)."""
    if isinstance(part, OpaquePart):
        return None
    data = own(part.provider_data)
    mine = {**(dict(data) if isinstance(data, Mapping) else {}), CACHE_POINT: point}
    return replace(part, provider_data={**(part.provider_data or {}), WIRE: mine})


def call_block(part: ToolCallPart, *, nm: Names, ids: IdRewriter,
               notes: list[Note] | None) -> dict[str, Any]:
    args = part.arguments
    if (type(args) is not dict and not isinstance(args, Mapping)) or part.parse_error is not None:
        if notes is not None:
            why = "did not parse" if part.parse_error or args is None else "are not an object"
            notes.append(Note(kind="arguments_replaced", subject=part.id,
                              detail=f"arguments {why}; sent as {{}} (input must be an object)"))
        args = {}
    value: dict[str, Any] = {"toolUseId": ids(part.id), "name": nm.wire(part.name),
                             "input": args}
    if part.provider_data is None:
        return {"toolUse": value}
    extras = own(part.provider_data)
    if isinstance(extras, Mapping):
        value.update({k: v for k, v in extras.items() if k not in CALL_KEYS
                      and k != CACHE_POINT})
    return {"toolUse": value}


IMAGE_FORMATS = {"image/png": "png", "image/jpeg": "jpeg", "image/gif": "gif",
                 "image/webp": "webp"}
DOCUMENT_FORMATS = {"application/pdf": "pdf", "text/plain": "txt", "text/csv": "csv",
                    "text/html": "html", "text/markdown": "md"}
IMAGE_MAX = 3750 * 1024
DOCUMENT_MAX = 4500 * 1024
LIMITS = Limits(images_per_message=20, documents_per_message=5, side=8000, merged=True)
"""Per message: at most 20 images and 5 documents; images at most 8000 pixels a side."""


def media_block(part: MediaPart, subject: str, notes: list[Note]) -> dict[str, Any]:
    """A media part as an ``image`` or ``document`` block (bytes only; audio: placeholder)."""
    formats = IMAGE_FORMATS if part.kind == "image" else DOCUMENT_FORMATS
    if part.kind == "audio":
        notes.append(Note(kind="media_dropped", subject=subject,
                          detail=f"{WIRE} takes no audio in a message; a placeholder text went"))
        return {"text": placeholder(part)}
    if part.data is None:
        raise ConfigError(f"{subject}: {WIRE} takes media as bytes only (no URL or file id); "
                          f"attach the {part.kind}'s bytes")
    check_media(part, wire=WIRE, subject=subject, types=formats,
                max_bytes=IMAGE_MAX if part.kind == "image" else DOCUMENT_MAX)
    value: dict[str, Any] = {"format": formats[part.media_type],
                             "source": {"bytes": b64(part.data)}}
    if part.kind == "document":
        value = {"format": value["format"], "name": _doc_name(part.name), **value}
    return {part.kind: value}


def _doc_name(name: str | None) -> str:
    """A document name as the API takes it (letters, digits, spaces, hyphens, brackets)."""
    cleaned = re.sub(r"[^A-Za-z0-9 ()\[\]-]+", " ", (name or "document").rsplit(".", 1)[0])
    return " ".join(cleaned.split())[:200].strip() or "document"


def result_block(part: ToolResultPart, *, ids: IdRewriter,
                 notes: list[Note] | None = None) -> dict[str, Any]:
    if not isinstance(part.content, str):
        content = [media_block(p, f"result {part.call_id}.content[{n}]", notes
                               if notes is not None else [])
                   if isinstance(p, MediaPart) else {"text": p.text}
                   for n, p in enumerate(part.content)
                   if isinstance(p, MediaPart) or p.text]
        return {"toolResult": {"toolUseId": ids(part.call_id), "content": content,
                               "status": "error" if part.is_error else "success"}}
    if part.provider_data is None:  # the usual result: its text and status
        return {"toolResult": {"toolUseId": ids(part.call_id),
                               "content": [{"text": part.content}] if part.content else [],
                               "status": "error" if part.is_error else "success"}}
    value: dict[str, Any] = {"toolUseId": ids(part.call_id)}
    stored = own(part.provider_data)
    original = stored.get("content") if isinstance(stored, Mapping) else None
    if isinstance(original, list) and _same_text(original, part.text):
        value["content"] = original
    else:
        value["content"] = [{"text": part.content}] if part.content else []
    value["status"] = "error" if part.is_error else "success"
    if isinstance(stored, Mapping):
        value.update({k: v for k, v in stored.items() if k not in RESULT_KEYS
                      and k != CACHE_POINT})
    return {"toolResult": value}


def _same_text(content: list[Any], text: str) -> bool:
    try:
        return result_text(content, ("content",))[0] == text
    except WireFormatError:
        return False


def opaque_block(part: OpaquePart) -> dict[str, Any] | None:
    if part.wire == WIRE and isinstance(part.payload, Mapping):
        return dict(part.payload)
    return None


def dropped(part: Part) -> str:
    """Why a part of another wire is not sent, for its note."""
    if isinstance(part, ReasoningPart):
        return "reasoning without this wire's own block cannot be sent back; dropped"
    if isinstance(part, OpaquePart):
        return f"a {part.wire} {part.kind} block means nothing to {WIRE}; dropped"
    return "this part has no place here; dropped"


def part_subject(message: int, part: int) -> str:
    return f"messages[{message}].parts[{part}]"
