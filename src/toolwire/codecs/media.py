"""Media on the wire, for every codec: base64 and ``data:`` URLs, and the per-wire limits.

Owns the shared handling of `MediaPart` values: encoding their bytes as base64 text, reading
base64 and ``data:`` URLs back (a `WireFormatError` naming the path when they are broken), and
checking a wire's size and type limits before a request is sent (a `ConfigError` that names the
part and the limit), and the marker text that opens the media of one tool result where a wire
moves them out of the result (`marker`, `restore_moved`: putting them back when decoding).
`Limits` and `check_limits` are the limits a wire sets on a whole request (counts, total bytes,
image sides read from the image's own header by `toolwire.media.image_size`), checked before
sending. What every wire's media rules (its folder's ``media_problem``: what its provider
refuses of the media in a raw body) share in reading a body from outside: `list_or_empty`,
`dict_or_empty`, `image_head`, `data_url_type`, `OPENAI_IMAGE_TYPES`. Imports only the
transcript, `toolwire.media` and errors; never a wire's codec.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from toolwire.codecs.traits import media as has_media
from toolwire.errors import ConfigError, WireFormatError
from toolwire.media import image_size
from toolwire.transcript import (
    MediaKind,
    MediaPart,
    Message,
    Part,
    Request,
    TextPart,
    ToolResultPart,
)

MB = 1024 * 1024


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


_URL_SAFE = str.maketrans("-_", "+/")


def unb64(text: Any, where: str, *, proto: bool = False) -> bytes:
    """The bytes of base64 ``text`` found at ``where``, or a `WireFormatError` naming it.

    ``proto``: a bytes field of a protocol-buffer JSON body (Google's APIs), which takes the
    standard or the URL-safe alphabet, with or without padding (the google-genai SDK sends the
    URL-safe one)."""
    if not isinstance(text, str):
        raise WireFormatError(f"{where}: media data must be a base64 string")
    if proto:
        text = text.translate(_URL_SAFE)
        text += "=" * (-len(text) % 4)
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise WireFormatError(f"{where}: media data is not valid base64") from None


def data_url(part: MediaPart) -> str:
    """A ``data:`` URL holding the part's bytes (the part must have data)."""
    return f"data:{part.media_type};base64,{b64(part.data or b'')}"


def parse_data_url(url: str, where: str) -> tuple[str, bytes] | None:
    """The media type and bytes of a base64 ``data:`` URL; None for any other URL."""
    if not url.startswith("data:"):
        return None
    head, sep, payload = url[5:].partition(",")
    if not sep or not head.endswith(";base64"):
        raise WireFormatError(f"{where}: a data: URL must be base64 encoded (data:TYPE;base64,...)")
    return head[: -len(";base64")] or "application/octet-stream", unb64(payload, where)


def kind_of(media_type: str) -> MediaKind:
    """The media kind a media type belongs to."""
    if media_type.startswith("image/"):
        return "image"
    if media_type.startswith("audio/"):
        return "audio"
    return "document"


def b64_size(n: int) -> int:
    """The length of the base64 text of ``n`` bytes."""
    return -(-n // 3) * 4


def check_media(part: MediaPart, *, wire: str, subject: str, types: Collection[str],
                max_bytes: int, encoded: bool = False) -> None:
    """Refuse, before sending, a part ``wire`` would reject: a media type it does not take or
    inline bytes over its size limit (``encoded``: the limit counts the base64 text)."""
    if part.media_type not in types:
        raise ConfigError(
            f"{subject}: {wire} does not take {part.kind} media of type {part.media_type!r} "
            f"(it takes {', '.join(sorted(types))}); convert the file first")
    size = (b64_size(len(part.data)) if encoded else len(part.data)) if part.data else 0
    if size > max_bytes:
        label = f"the {part.kind} {part.name}" if part.name else f"the {part.kind}"
        how = " as base64" if encoded else ""
        raise ConfigError(
            f"{subject}: {label} is {size} bytes{how}, over the {max_bytes // MB} MB {wire} "
            "takes inline; shrink it or send a URL or file id")


def placeholder(part: MediaPart) -> str:
    """The text sent in place of media a wire cannot carry."""
    label = f" {part.name}" if part.name else ""
    return f"[{part.kind}{label} ({part.media_type}) omitted: this model API cannot take it]"


MARKER = re.compile(r"^\[media returned by tool call (.+)\]$")
"""The text that opens the media of one tool result moved out of it (the call id inside)."""


def marker(call_id: str) -> str:
    """The text that opens the media moved out of the result of call ``call_id``."""
    return f"[media returned by tool call {call_id}]"


def with_media(result: ToolResultPart, media: Sequence[MediaPart],
               moved_text: str = "") -> ToolResultPart:
    """``result`` with ``media`` after its text (a text equal to ``moved_text`` dropped)."""
    text = "" if result.text == moved_text else result.text
    head: tuple[TextPart, ...] = (TextPart(text=text),) if text else ()
    return ToolResultPart(call_id=result.call_id, content=(*head, *media),
                          is_error=result.is_error, name=result.name,
                          provider_data=result.provider_data)


def restore_moved(results: list[ToolResultPart], rest: Sequence[Part]) -> list[Part]:
    """Put media moved out of ``results`` back into them and return what else ``rest`` holds.

    ``rest`` is what followed the results in the same turn: groups each opened by `marker`
    text and made of media parts, then anything else (the user's next words). A group whose
    call is not among ``results`` (by id, else by tool name) is left as it came.
    """
    groups: list[tuple[int, list[MediaPart]]] = []
    n = 0
    while n < len(rest):
        head = rest[n]
        found = MARKER.match(head.text) if isinstance(head, TextPart) else None
        target = _target(results, found.group(1)) if found else None
        if target is None:
            break
        media: list[MediaPart] = []
        n += 1
        while n < len(rest):
            item = rest[n]
            if not isinstance(item, MediaPart):
                break
            media.append(item)
            n += 1
        groups.append((target, media))
    for target, media in groups:
        results[target] = with_media(results[target], [*results[target].media, *media])
    return list(rest[n:])


def _target(results: Sequence[ToolResultPart], key: str) -> int | None:
    for i, r in enumerate(results):
        if r.call_id == key:
            return i
    for i, r in enumerate(results):
        if r.name == key:
            return i
    return None


# --------------------------------------------------------------------------- whole-request limits


@dataclass(frozen=True, slots=True)
class Limits:
    """What a wire takes in one request, beyond each part's own type and size.

    ``images``: images in the whole request; ``image_bytes``: their inline bytes together;
    ``inline_bytes``: the base64 text of all inline media together (what a body limit
    counts); ``side``: the longest image side in pixels, and ``crowded`` a smaller side for
    requests with more than ``crowd`` images; ``images_per_message`` and
    ``documents_per_message``: per wire message (a tool message and the user message after it
    count as one when ``merged``).
    """

    images: int | None = None
    image_bytes: int | None = None
    inline_bytes: int | None = None
    side: int | None = None
    crowd: int | None = None
    crowded: int | None = None
    images_per_message: int | None = None
    documents_per_message: int | None = None
    merged: bool = False


def message_media(message: Message) -> list[MediaPart]:
    """The media of a message: its own parts and those inside its tool results."""
    out: list[MediaPart] = []
    for part in message.parts:
        if isinstance(part, MediaPart):
            out.append(part)
        elif isinstance(part, ToolResultPart) and not isinstance(part.content, str):
            out.extend(part.media)
    return out


def check_limits(request: Request, wire: str, limits: Limits) -> None:
    """Refuse, before sending, a request ``wire`` would answer 400 for: too many images or
    documents, too many bytes, or an image too large in pixels (a `ConfigError` naming the
    limit and what to do). A request without media pays only one look for media
    (`toolwire.codecs.traits`: what its one pass found when it was made)."""
    if not has_media(request):
        return
    messages = request.messages
    groups: list[list[MediaPart]] = []
    previous: str | None = None
    for message in messages:
        media = message_media(message) if message.role != "assistant" else []
        if limits.merged and previous == "tool" and message.role == "user" and groups:
            groups[-1].extend(media)
        else:
            groups.append(media)
        previous = message.role
    every = [m for group in groups for m in group]
    if not every:
        return
    images = [m for m in every if m.kind == "image"]
    _at_most(len(images), limits.images, f"{wire} takes at most {limits.images} images in a "
             "request; this one has {n}: send fewer (or older ones as text)")
    _at_most(sum(m.size for m in images), limits.image_bytes,
             f"{wire} takes at most {(limits.image_bytes or 0) // MB} MB of images in a "
             "request; these are {n} bytes: shrink them or send fewer")
    _at_most(sum(b64_size(m.size) for m in every), limits.inline_bytes,
             f"{wire} takes at most {(limits.inline_bytes or 0) // MB} MB of inline media in a "
             "request; these are {n} bytes as base64: send large files by URL or file id")
    for n, group in enumerate(groups):
        where = f"messages[{n}]" if not limits.merged else f"wire message {n}"
        _at_most(sum(m.kind == "image" for m in group), limits.images_per_message,
                 f"{where}: {wire} takes at most {limits.images_per_message} images in one "
                 "message; this one has {n}: spread them over turns")
        _at_most(sum(m.kind == "document" for m in group), limits.documents_per_message,
                 f"{where}: {wire} takes at most {limits.documents_per_message} documents in "
                 "one message; this one has {n}: spread them over turns")
    side = limits.side
    if limits.crowd is not None and len(images) > limits.crowd:
        side = limits.crowded
    if side is None:
        return
    for image in images:
        size = image_size(image.data) if image.data is not None else None
        if size is not None and max(size) > side:
            crowded = (f" (with more than {limits.crowd} images in a request)"
                       if side == limits.crowded else "")
            label = f"the image {image.name}" if image.name else "an image"
            raise ConfigError(
                f"{label} is {size[0]}x{size[1]} pixels; {wire} takes "
                f"at most {side}x{side}{crowded}: downscale it first")


def _at_most(n: int, limit: int | None, wording: str) -> None:
    if limit is not None and n > limit:
        raise ConfigError(wording.replace("{n}", str(n)))


# --------------------------------------------------------------------------- raw bodies
# What the wires' media rules (each wire's ``media_problem``, in its folder) share.

OPENAI_IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")
"""The image types both OpenAI wires take in a ``data:`` URL."""


def list_or_empty(value: Any) -> list[Any]:
    """``value`` when it is a list, else an empty one."""
    return value if isinstance(value, list) else []


def dict_or_empty(value: Any) -> dict[str, Any]:
    """``value`` when it is an object, else an empty one."""
    return value if isinstance(value, dict) else {}


def image_head(text: str) -> bytes:
    """Enough of the bytes of base64 ``text`` to read an image's header from (empty when it is
    not base64: another check names that)."""
    try:
        return base64.b64decode(text[:4096], validate=True)
    except (binascii.Error, ValueError):
        return b""


def data_url_type(url: Any) -> str | None:
    """The media type of a ``data:`` URL; None for any other URL."""
    if not isinstance(url, str) or not url.startswith("data:"):
        return None
    return url[5:].partition(";")[0].partition(",")[0]
