"""Media kept once by content hash in a folder next to the file that refers to them.

Owns `MediaFiles` (the folder ``<file>.media/``: each media's bytes in ``<sha256>.<ext>``,
written once however often they are referred to, read back only when their hash matches),
`INLINE_MAX` (media up to this size stay inline where they are), and the folding of saved
transcript JSON (`toolwire.transcript_json` form) used by the run log: `fold_fields` replaces
the base64 ``data`` of each large media part of an event's ``message``, ``reply``, ``result``
or ``messages`` by a ``file`` naming it in the folder, and `unfold_fields` puts the data back.
Cassettes fold the bodies they record with the same folder (`toolwire.http.cassette`).
A file name read from a log or a cassette is checked before it is opened (a hash and an
extension, nothing else), so a hostile file cannot lead out of the folder, and only a regular
file of at most `READ_MAX` bytes is read (`toolwire.records`: no link, device or FIFO). Imports
only `errors` and `records`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import mimetypes
import os
import re
import stat
from pathlib import Path
from typing import Any

from toolwire import records
from toolwire.errors import TranscriptError

INLINE_MAX = 4096
"""Media of at most this many bytes stay inline (base64 in the line); larger ones go to the
folder."""

READ_MAX = 256 * 1024 * 1024
"""The largest media file read back from a folder (far above what any provider takes)."""

_NAME = re.compile(r"[0-9a-f]{64}\.[a-z0-9]{1,8}")
_EXTENSIONS = {"image/jpeg": "jpg", "audio/mpeg": "mp3", "text/plain": "txt",
               "audio/wav": "wav", "image/webp": "webp"}


def extension(media_type: str | None) -> str:
    """The file extension media of ``media_type`` are kept under (``bin`` when unknown)."""
    if media_type is None:
        return "bin"
    found = _EXTENSIONS.get(media_type) or (mimetypes.guess_extension(media_type) or "")[1:]
    return found if re.fullmatch(r"[a-z0-9]{1,8}", found) else "bin"


def media_name(data: bytes, media_type: str | None) -> str:
    """The file name media are kept under: the sha256 of their bytes and an extension."""
    return f"{hashlib.sha256(data).hexdigest()}.{extension(media_type)}"


class MediaFiles:
    """The media folder of ``owner`` (a run log or a cassette): ``<owner>.media/``.

    Nothing is created until the first `put`.
    """

    def __init__(self, owner: str | os.PathLike[str]) -> None:
        self.folder = Path(f"{os.fspath(owner)}.media")
        self.written = 0
        """How many files this object wrote (media already there are not written again)."""

    def put(self, data: bytes, media_type: str | None) -> str:
        """Keep ``data`` in the folder (once) and return its file name there. The folder is
        opened without following a link and the file is written under a new random name,
        created exclusively, then renamed into place: nothing planted in the folder (a link
        at a temporary or a final name) leads a write anywhere else."""
        name = media_name(data, media_type)
        try:
            folder = records.open_folder(self.folder, create=True)
        except OSError as exc:
            raise TranscriptError(f"the media folder {self.folder} cannot be used "
                                  f"({exc.strerror or exc}); it must be a folder, not a link"
                                  ) from None
        try:
            try:
                kept = os.stat(name, dir_fd=folder, follow_symlinks=False)
            except FileNotFoundError:
                kept = None
            if kept is None or not stat.S_ISREG(kept.st_mode) or kept.st_size != len(data):
                records.replace_in(folder, name, data, 0o644)
                self.written += 1
        finally:
            os.close(folder)
        return name

    def get(self, name: Any, where: str) -> bytes:
        """The bytes kept as ``name``; a `TranscriptError` naming ``where`` when the name is
        not one `put` gives, the file is missing, not a regular file (a link, a device, a
        FIFO), over `READ_MAX` bytes, or its bytes no longer match its hash."""
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise TranscriptError(f"{where}: {name!r} is not a media file name (a sha256 hash "
                                  "and an extension)")
        path = self.folder / name
        try:
            folder = records.open_folder(self.folder)
            try:
                data = records.read_in(folder, name, READ_MAX)
            finally:
                os.close(folder)
        except OSError as exc:
            raise TranscriptError(
                f"{where}: the media file {path} cannot be read ({exc.strerror or exc}); keep "
                f"the folder {self.folder.name} next to {self.folder.name[:-6]}") from None
        except TranscriptError as exc:
            raise TranscriptError(f"{where}: the media file {path} is not read: {exc}"
                                  ) from None
        if hashlib.sha256(data).hexdigest() != name.split(".", 1)[0]:
            raise TranscriptError(f"{where}: the media file {path} was changed: its bytes no "
                                  "longer match the hash in its name")
        return data


# ------------------------------------------------------------------ saved transcript JSON

_HOLDERS = ("message", "reply", "result", "messages")
"""The fields of a run-log event that hold saved transcript values."""


def media_dicts(value: Any) -> list[dict[str, Any]]:
    """The saved media parts inside a saved message, reply, tool result or list of messages."""
    if isinstance(value, list):
        return [d for item in value for d in media_dicts(item)]
    if not isinstance(value, dict):
        return []
    kind = value.get("type")
    if kind == "media":
        return [value]
    if kind == "reply":
        return media_dicts(value.get("message"))
    if kind == "message":
        return media_dicts(value.get("parts"))
    if kind == "tool_result" and isinstance(value.get("content"), list):
        return media_dicts(value["content"])
    return []


def fold_fields(fields: dict[str, Any], files: MediaFiles) -> None:
    """Move the data of every media part over `INLINE_MAX` bytes in ``fields`` to ``files``,
    leaving ``file`` (its name there) and ``size`` in its place. Changes ``fields``."""
    for key in _HOLDERS:
        for media in media_dicts(fields.get(key)):
            data = media.get("data")
            if not isinstance(data, str) or len(data) <= INLINE_MAX:
                continue
            raw = base64.b64decode(data)
            if len(raw) > INLINE_MAX:
                media["file"] = files.put(raw, media.get("media_type"))
                media["size"] = len(raw)
                del media["data"]


def unfold_fields(event: dict[str, Any], files: MediaFiles, where: str) -> None:
    """Put back the data of every media part of ``event`` kept in ``files``. Changes
    ``event``."""
    for key in _HOLDERS:
        for media in media_dicts(event.get(key)):
            if "file" in media and "data" not in media:
                media["data"] = base64.b64encode(files.get(media.pop("file"), where)).decode()
                media.pop("size", None)


def b64_bytes(text: str) -> bytes | None:
    """The bytes of ``text`` when it is base64 written the one way `base64.b64encode` writes
    it (so the bytes give back exactly this text); else None."""
    if len(text) % 4:
        return None
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw if base64.b64encode(raw).decode("ascii") == text else None


__all__ = ["INLINE_MAX", "READ_MAX", "MediaFiles", "b64_bytes", "extension", "fold_fields",
           "media_dicts", "media_name", "unfold_fields"]
