"""Media on the wire, for every codec: base64 and ``data:`` URLs, and the per-wire limits.

Owns the shared handling of `MediaPart` values: encoding their bytes as base64 text, reading
base64 and ``data:`` URLs back (a `WireFormatError` naming the path when they are broken), and
checking a wire's size and type limits before a request is sent (a `ConfigError` that names the
part and the limit), and the marker text that opens the media of one tool result where a wire
moves them out of the result (`marker`, `restore_moved`: putting them back when decoding).
Imports only the transcript and errors; never a wire's codec.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Collection, Sequence
from typing import Any

from toolwire.errors import ConfigError, WireFormatError
from toolwire.transcript import MediaKind, MediaPart, Part, TextPart, ToolResultPart

MB = 1024 * 1024


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unb64(text: Any, where: str) -> bytes:
    """The bytes of base64 ``text`` found at ``where``, or a `WireFormatError` naming it."""
    if not isinstance(text, str):
        raise WireFormatError(f"{where}: media data must be a base64 string")
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


def check_media(part: MediaPart, *, wire: str, subject: str, types: Collection[str],
                max_bytes: int) -> None:
    """Refuse, before sending, a part ``wire`` would reject: a media type it does not take or
    inline bytes over its size limit."""
    if part.media_type not in types:
        raise ConfigError(
            f"{subject}: {wire} does not take {part.kind} media of type {part.media_type!r} "
            f"(it takes {', '.join(sorted(types))}); convert the file first")
    if part.data is not None and len(part.data) > max_bytes:
        raise ConfigError(
            f"{subject}: the {part.kind} {part.name or ''} is {len(part.data)} bytes, over the "
            f"{max_bytes // MB} MB {wire} takes inline; shrink it or send a URL or file id")


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
