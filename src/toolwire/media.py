"""Building media parts: `Image`, `Document` and `Audio`, from a file, bytes, a URL or a file id.

Owns the constructors people use to put media into a transcript, the guessing of a media type
from a file name or the first bytes, `image_size` (the width and height an image's own header
gives), and `media_content`: what a tool returned, as result parts when it holds media (a
Pillow image is recognised only when Pillow is already imported).
Imports only `transcript` and `errors` (no image library: the bytes are kept as they are).
"""

from __future__ import annotations

import io
import mimetypes
import struct
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from toolwire.errors import TranscriptError
from toolwire.transcript import MediaKind, MediaPart, ResultPart, TextPart

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"%PDF-", "application/pdf"),
    (b"ID3", "audio/mpeg"),
    (b"fLaC", "audio/flac"),
    (b"OggS", "audio/ogg"),
)


def sniff_media_type(data: bytes, name: str | None = None) -> str | None:
    """The media type of some bytes, from their first bytes, else from the file name."""
    for magic, media_type in _MAGIC:
        if data.startswith(magic):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "audio/wav"
    if name is not None:
        guessed, _ = mimetypes.guess_type(name)
        return guessed
    return None


def image_size(data: bytes) -> tuple[int, int] | None:
    """The width and height a PNG, GIF, JPEG or WebP says in its header; None when the bytes
    are none of them or too short to say."""
    try:
        if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR":
            return struct.unpack(">II", data[16:24])
        if data[:6] in (b"GIF87a", b"GIF89a"):
            return struct.unpack("<HH", data[6:10])
        if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
            return _webp_size(data)
        if data[:2] == b"\xff\xd8":
            return _jpeg_size(data)
    except struct.error:
        return None
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8X":
        return (int.from_bytes(data[24:27], "little") + 1,
                int.from_bytes(data[27:30], "little") + 1)
    if chunk == b"VP8L":
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    at = 2
    while at + 9 <= len(data):
        if data[at] != 0xFF:
            return None
        marker_byte = data[at + 1]
        if marker_byte in (0xD8, 0x01) or 0xD0 <= marker_byte <= 0xD7:
            at += 2
            continue
        length = int.from_bytes(data[at + 2:at + 4], "big")
        if 0xC0 <= marker_byte <= 0xCF and marker_byte not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[at + 5:at + 9])
            return width, height
        at += 2 + length
    return None


class _Media:
    kind: ClassVar[MediaKind]
    default_type: ClassVar[str]

    @classmethod
    def from_bytes(cls, data: bytes, media_type: str | None = None, *,
                   name: str | None = None) -> MediaPart:
        """A part holding ``data``; the media type is guessed from the bytes when not given."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TranscriptError(f"{cls.__name__}.from_bytes takes bytes, got "
                                  f"{type(data).__name__}")
        data = bytes(data)
        kind_type = media_type or sniff_media_type(data, name) or cls.default_type
        return MediaPart(kind=cls.kind, media_type=kind_type, data=data, name=name)

    @classmethod
    def from_path(cls, path: str | Path, media_type: str | None = None) -> MediaPart:
        """A part holding the bytes of the file at ``path`` (its name is kept)."""
        file = Path(path)
        try:
            data = file.read_bytes()
        except OSError as exc:
            raise TranscriptError(f"cannot read {cls.__name__.lower()} file {str(file)!r}: "
                                  f"{exc.strerror or exc}; check the path") from None
        return cls.from_bytes(data, media_type, name=file.name)

    @classmethod
    def from_url(cls, url: str, media_type: str | None = None, *,
                 name: str | None = None) -> MediaPart:
        """A part pointing at ``url`` (https, or a provider's own file URI)."""
        guessed = media_type or mimetypes.guess_type(url)[0] or cls.default_type
        return MediaPart(kind=cls.kind, media_type=guessed, url=url, name=name)

    @classmethod
    def from_file_id(cls, wire: str, file_id: str, media_type: str | None = None, *,
                     name: str | None = None) -> MediaPart:
        """A part naming a file uploaded to one provider (its file id on ``wire``)."""
        return MediaPart(kind=cls.kind, media_type=media_type or cls.default_type,
                         file_ids={wire: file_id}, name=name)


class Image(_Media):
    """Build image parts: ``Image.from_path("chart.png")``, ``Image.from_bytes(png)``."""

    kind = "image"
    default_type = "image/png"


class Document(_Media):
    """Build document parts (PDF or plain text): ``Document.from_path("report.pdf")``."""

    kind = "document"
    default_type = "application/pdf"

    @classmethod
    def from_text(cls, text: str, *, name: str | None = None) -> MediaPart:
        """A plain-text document."""
        return MediaPart(kind="document", media_type="text/plain", data=text.encode(), name=name)


class Audio(_Media):
    """Build audio parts: ``Audio.from_path("question.wav")``."""

    kind = "audio"
    default_type = "audio/wav"


def _kind_for(media_type: str) -> type[_Media]:
    if media_type.startswith("image/"):
        return Image
    if media_type.startswith("audio/"):
        return Audio
    return Document


def _one(value: Any) -> MediaPart | None:
    """``value`` as a media part when it is one: a part, a ``(bytes, media_type)`` pair, or a
    Pillow image (recognised only when Pillow is already imported)."""
    if isinstance(value, MediaPart):
        return value
    if (isinstance(value, tuple) and len(value) == 2
            and isinstance(value[0], (bytes, bytearray)) and isinstance(value[1], str)
            and "/" in value[1]):
        return _kind_for(value[1]).from_bytes(bytes(value[0]), value[1])
    pil = sys.modules.get("PIL.Image")
    if pil is not None and isinstance(value, pil.Image):
        buffer = io.BytesIO()
        value.save(buffer, format="PNG")
        return MediaPart(kind="image", media_type="image/png", data=buffer.getvalue())
    return None


NEVER_MEDIA = frozenset({str, int, float, bool, dict, type(None)})
"""The types of a tool's value that never hold media (`media_content` gives None at once)."""


def media_content(value: Any, render: Callable[[Any], str]) -> tuple[ResultPart, ...] | None:
    """A tool's return value as result parts when it holds media (a media value, or a list
    mixing text and media); None for any other value. ``render`` writes the other items of a
    list as text."""
    if type(value) in NEVER_MEDIA:
        return None  # the usual value: text, a number, an object
    one = _one(value)
    if one is not None:
        return (one,)
    if not isinstance(value, list):
        return None
    parts = [_one(item) for item in value]
    if not any(p is not None for p in parts):
        return None
    out: list[ResultPart] = []
    for item, part in zip(value, parts, strict=True):
        out.append(part if part is not None else TextPart(
            text=item if isinstance(item, str) else render(item)))
    return tuple(out)
