"""The media of both OpenAI wires: Chat Completions content parts and Responses items.

Owns, for ``openai-chat``, the ``image_url``, ``file`` and ``input_audio`` content parts both
ways and the rule for media in a tool result: tool messages carry text only, so the media go in
one user message right after the tool messages, each group opened by a marker text naming its
call, and a decoder reading that message puts them back into their results. For
``openai-responses``, ``input_image`` and ``input_file`` items in message content and in a
``function_call_output``'s output list (the content union has no audio item: a placeholder text
and a note). Imports only the transcript, errors, `toolwire.codecs.media` and
`toolwire.codecs.base`; never a wire's own modules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolwire.codecs.base import Note
from toolwire.codecs.media import (
    MARKER,
    MB,
    Limits,
    b64,
    check_media,
    data_url,
    marker,
    parse_data_url,
    placeholder,
    unb64,
    with_media,
)
from toolwire.errors import ConfigError, WireFormatError
from toolwire.transcript import MediaPart, TextPart, ToolResultPart

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"})
IMAGE_MAX = 20 * MB
FILE_MAX = 50 * MB
LIMITS = Limits(images=500, image_bytes=50 * MB)
"""Both OpenAI wires: at most 500 images and 50 MB of image bytes in a request."""
_ERROR_PREFIX = "Error: "
"""How a Responses function output says it is an error (as the wire's own codec writes it)."""

# --------------------------------------------------------------------------- Chat Completions

CHAT = "openai-chat"
AUDIO_FORMATS = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3"}
CHAT_ITEMS = ("image_url", "file", "input_audio")
"""Media content item types (a tuple: a type from the wire may be any value, even a dict)."""
MOVED_TEXT = "(media returned: in the next user message)"

def chat_item(part: MediaPart, *, subject: str) -> dict[str, Any]:
    """A media part as a user content part; media this wire refuses raise `ConfigError`."""
    file_id = (part.file_ids or {}).get(CHAT)
    if part.kind == "image":
        if part.data is not None:
            check_media(part, wire=CHAT, subject=subject, types=IMAGE_TYPES, max_bytes=IMAGE_MAX)
            url = data_url(part)
        elif part.url is not None:
            url = part.url
        else:
            raise ConfigError(f"{subject}: {CHAT} takes images as data or a URL, not a file id; "
                              "attach the image's bytes")
        image: dict[str, Any] = {"url": url}
        detail = (part.provider_data or {}).get(CHAT)
        if isinstance(detail, Mapping) and detail.get("detail") in ("auto", "low", "high"):
            image["detail"] = detail["detail"]
        return {"type": "image_url", "image_url": image}
    if part.kind == "audio":
        fmt = AUDIO_FORMATS.get(part.media_type)
        if part.data is None or fmt is None:
            raise ConfigError(f"{subject}: {CHAT} takes audio as wav or mp3 bytes only; this is "
                              f"{part.media_type} {'bytes' if part.data else 'by reference'}")
        return {"type": "input_audio", "input_audio": {"data": b64(part.data), "format": fmt}}
    if file_id:
        return {"type": "file", "file": {"file_id": file_id}}
    if part.data is None:
        raise ConfigError(f"{subject}: {CHAT} takes documents as bytes or an uploaded file id, "
                          "not a URL; attach the document's bytes")
    check_media(part, wire=CHAT, subject=subject, types=(part.media_type,), max_bytes=FILE_MAX)
    name = part.name or ("document.pdf" if part.media_type == "application/pdf" else "document")
    return {"type": "file", "file": {"filename": name, "file_data": data_url(part)}}


def chat_media(item: Mapping[str, Any], where: str) -> MediaPart | None:
    """An ``image_url``, ``file`` or ``input_audio`` content part as media (None: not one)."""
    kind = item.get("type")
    if kind == "image_url":
        image = item.get("image_url")
        url = image.get("url") if isinstance(image, Mapping) else None
        if not isinstance(url, str) or not url:
            raise WireFormatError(f"{where}.image_url.url: an image part needs a URL string")
        assert isinstance(image, Mapping)
        extra = {"detail": image["detail"]} if isinstance(image.get("detail"), str) else None
        pd = {CHAT: extra} if extra else None
        inline = parse_data_url(url, f"{where}.image_url.url")
        if inline is not None:
            return MediaPart(kind="image", media_type=inline[0], data=inline[1], provider_data=pd)
        return MediaPart(kind="image", media_type="image/png", url=url, provider_data=pd)
    if kind == "input_audio":
        audio = item.get("input_audio")
        if not isinstance(audio, Mapping):
            raise WireFormatError(f"{where}.input_audio: must be an object")
        fmt = audio.get("format")
        return MediaPart(kind="audio", media_type="audio/mpeg" if fmt == "mp3" else "audio/wav",
                         data=unb64(audio.get("data"), f"{where}.input_audio.data"))
    if kind == "file":
        file = item.get("file")
        if not isinstance(file, Mapping):
            raise WireFormatError(f"{where}.file: must be an object")
        name = file.get("filename") if isinstance(file.get("filename"), str) else None
        if isinstance(file.get("file_id"), str) and file["file_id"]:
            return MediaPart(kind="document", media_type="application/pdf",
                             file_ids={CHAT: file["file_id"]}, name=name)
        raw = file.get("file_data")
        inline = parse_data_url(raw, f"{where}.file.file_data") if isinstance(raw, str) else None
        if inline is None:
            raise WireFormatError(f"{where}.file: a file part needs file_id or a data: URL")
        return MediaPart(kind="document", media_type=inline[0], data=inline[1], name=name)
    return None


def moved_media(results: Sequence[ToolResultPart], *, index: int,
                notes: list[Note]) -> dict[str, Any] | None:
    """The user message carrying the media of ``results`` (None when they hold none)."""
    items: list[dict[str, Any]] = []
    for part in results:
        media = part.media
        if not media:
            continue
        items.append({"type": "text", "text": marker(part.call_id)})
        for n, m in enumerate(media):
            items.append(chat_item(m, subject=f"messages[{index}] result {part.call_id} "
                                               f"media[{n}]"))
        notes.append(Note(kind="media_moved", subject=part.call_id,
                          detail=f"{CHAT} tool messages take text only; {len(media)} media "
                                 "part(s) went in a user message right after the tool messages"))
    return {"role": "user", "content": items} if items else None


def restore_media(results: list[ToolResultPart], content: Any) -> bool:
    """Put media moved out of tool messages back into ``results``; say whether ``content`` (a
    user message right after them) was such a message."""
    if not isinstance(content, list) or not content:
        return False
    groups: dict[str, list[Any]] = {}
    current: list[Any] | None = None
    for n, item in enumerate(content):
        if not isinstance(item, Mapping):
            return False
        found = MARKER.match(item.get("text") or "") if item.get("type") == "text" else None
        if found is not None:
            current = groups.setdefault(found.group(1), [])
        elif current is None or item.get("type") not in CHAT_ITEMS:
            return False
        else:
            current.append(chat_media(item, f"content.{n}"))
    by_id = {r.call_id: i for i, r in enumerate(results)}
    if not groups or not set(groups) <= set(by_id):
        return False
    for call_id, media in groups.items():
        i = by_id[call_id]
        results[i] = with_media(results[i], media, MOVED_TEXT)
    return True


# --------------------------------------------------------------------------- Responses

RESPONSES = "openai-responses"
RESPONSES_ITEMS = ("input_image", "input_file")


def responses_item(part: MediaPart, *, subject: str, notes: list[Note]) -> dict[str, Any]:
    """A media part as an ``input_image`` / ``input_file`` item (audio: placeholder text)."""
    if part.kind == "audio":
        notes.append(Note(kind="media_dropped", subject=subject,
                          detail=f"{RESPONSES} has no audio input item; a placeholder text went"))
        return {"type": "input_text", "text": placeholder(part)}
    file_id = (part.file_ids or {}).get(RESPONSES)
    if part.kind == "image":
        item: dict[str, Any] = {"type": "input_image"}
        if file_id:
            item["file_id"] = file_id
        elif part.data is not None:
            check_media(part, wire=RESPONSES, subject=subject, types=IMAGE_TYPES,
                        max_bytes=IMAGE_MAX)
            item["image_url"] = data_url(part)
        elif part.url is not None:
            item["image_url"] = part.url
        else:
            raise _foreign_id(part, subject)
        data = (part.provider_data or {}).get(RESPONSES)
        detail = data.get("detail") if isinstance(data, Mapping) else None
        item["detail"] = detail if isinstance(detail, str) else "auto"
        return item
    item = {"type": "input_file"}
    if file_id:
        item["file_id"] = file_id
    elif part.data is not None:
        check_media(part, wire=RESPONSES, subject=subject, types=(part.media_type,),
                    max_bytes=FILE_MAX)
        item["filename"] = part.name or (
            "document.pdf" if part.media_type == "application/pdf" else "document.txt")
        item["file_data"] = data_url(part)
    elif part.url is not None:
        item["file_url"] = part.url
    else:
        raise _foreign_id(part, subject)
    return item


def _foreign_id(part: MediaPart, subject: str) -> ConfigError:
    return ConfigError(f"{subject}: the {part.kind} is only a file id of "
                       f"{', '.join(part.file_ids or ())}, which {RESPONSES} cannot read; "
                       "attach its bytes or a URL instead")


def responses_media(item: Mapping[str, Any], where: str) -> MediaPart:
    """An ``input_image`` or ``input_file`` item as a media part."""
    name = item.get("filename") if isinstance(item.get("filename"), str) else None
    file_id = item.get("file_id")
    ids = {RESPONSES: file_id} if isinstance(file_id, str) and file_id else None
    if item.get("type") == "input_image":
        detail = item.get("detail")
        pd = ({RESPONSES: {"detail": detail}} if isinstance(detail, str) and detail != "auto"
              else None)
        url = item.get("image_url")
        inline = parse_data_url(url, f"{where}.image_url") if isinstance(url, str) else None
        if inline is not None:
            return MediaPart(kind="image", media_type=inline[0], data=inline[1], provider_data=pd)
        if not ids and not (isinstance(url, str) and url):
            raise WireFormatError(f"{where}: an input_image needs image_url or file_id")
        return MediaPart(kind="image", media_type="image/png", file_ids=ids,
                         url=url if isinstance(url, str) and url else None, provider_data=pd)
    raw, url = item.get("file_data"), item.get("file_url")
    inline = parse_data_url(raw, f"{where}.file_data") if isinstance(raw, str) else None
    if inline is not None:
        return MediaPart(kind="document", media_type=inline[0], data=inline[1], name=name)
    if not ids and not (isinstance(url, str) and url):
        raise WireFormatError(f"{where}: an input_file needs file_data, file_url or file_id")
    return MediaPart(kind="document", media_type="application/pdf", file_ids=ids,
                     url=url if isinstance(url, str) and url else None, name=name)


def responses_output(part: ToolResultPart, *, subject: str, notes: list[Note]) -> list[Any]:
    """A result made of parts as a ``function_call_output`` output list."""
    out: list[Any] = []
    content = () if isinstance(part.content, str) else part.content
    for n, p in enumerate(content):
        if isinstance(p, MediaPart):
            out.append(responses_item(p, subject=f"{subject}.content[{n}]", notes=notes))
        elif p.text:
            out.append({"type": "input_text", "text": p.text})
    if part.is_error:
        if out and out[0]["type"] == "input_text":
            out[0] = {"type": "input_text", "text": _ERROR_PREFIX + out[0]["text"]}
        else:
            out.insert(0, {"type": "input_text", "text": _ERROR_PREFIX})
    return out


def responses_result(item: Mapping[str, Any], name: str | None,
                      where: str) -> ToolResultPart | None:
    """A ``function_call_output`` whose output list holds media, as a result made of parts;
    None for any other output."""
    output = item.get("output")
    if not isinstance(output, list) or not any(
            isinstance(o, Mapping) and o.get("type") in RESPONSES_ITEMS for o in output):
        return None
    parts: list[TextPart | MediaPart] = []
    for n, o in enumerate(output):
        if not isinstance(o, Mapping):
            raise WireFormatError(f"{where}.output.{n}: an output item must be an object")
        if o.get("type") in RESPONSES_ITEMS:
            parts.append(responses_media(o, f"{where}.output.{n}"))
        elif o.get("type") == "input_text" and isinstance(o.get("text"), str):
            parts.append(TextPart(text=o["text"]))
        else:
            raise WireFormatError(f"{where}.output.{n}: expected input_text, input_image or "
                                  "input_file")
    is_error = bool(parts) and isinstance(parts[0], TextPart) and parts[0].text.startswith(
        _ERROR_PREFIX)
    if is_error:
        first = parts[0]
        assert isinstance(first, TextPart)
        rest = first.text[len(_ERROR_PREFIX):]
        parts = [TextPart(text=rest), *parts[1:]] if rest else parts[1:]
    extras = {k: v for k, v in item.items() if k not in ("type", "call_id", "output")}
    return ToolResultPart(call_id=str(item.get("call_id") or ""), content=tuple(parts),
                          is_error=is_error, name=name,
                          provider_data={RESPONSES: extras} if extras else None)
