"""File tools confined to a workspace folder: read, list, edit and write.

Owns the file tool functions; paths are opened by `toolwire.tools.paths.Workspace`, one
directory descriptor at a time, so a path cannot lead out of the workspace even while another
process swaps folders for symlinks. Every read is bounded in bytes (a file of one endless line
costs no more than a page); an image or a PDF, known by its first bytes whatever its name, is
read whole as a media part up to a size cap; other binary files are reported as such; a file
with more than one hard link is never written (the other names may be outside the workspace).
Problems come back as a `ToolError` whose message goes to the model. Imports `toolwire.media`
for the media parts; must not import codecs or the loop.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import PurePosixPath

from toolwire.errors import ToolError
from toolwire.media import Document, Image, sniff_media_type
from toolwire.records import write_all
from toolwire.tools.paths import HIDDEN, Opened, PathError, Workspace
from toolwire.transcript import MediaPart

SKIP_DIRS = frozenset({".git", "__pycache__", HIDDEN, ".venv", "node_modules",
                       ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis"})
MAX_READ_LINES = 2000
MAX_READ_BYTES = 100_000
"""At most this many bytes of lines go into one ``read_file`` result."""
MAX_LINE_BYTES = 4_000
MAX_EDIT_BYTES = 10 << 20
COUNT_LINES_UP_TO = 8 << 20
"""Files up to this size are read to the end to say how many lines follow a window."""
MAX_LIST = 500
MAX_MEDIA_BYTES = 5 << 20
"""The largest image or PDF ``read_file`` returns by default (5 MiB, what most providers take
inline); `toolwire.tools.coding.coding_tools` takes another as ``max_media_bytes``."""
MEDIA_READ = ("image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf")
"""The media types ``read_file`` returns as media, recognised by a file's first bytes."""
CHUNK = 65_536
_READ = os.O_RDONLY | os.O_NONBLOCK

__all__ = ["MAX_MEDIA_BYTES", "MAX_READ_BYTES", "SKIP_DIRS", "Workspace", "edit_file",
           "list_files", "read_file", "write_file"]


def _regular(path: str, opened: Opened, *, writing: bool = False) -> None:
    mode = opened.info.st_mode
    if stat.S_ISDIR(mode):
        raise ToolError(f"{path!r} is a folder; use list_files to see what it holds")
    if not stat.S_ISREG(mode):
        raise ToolError(f"{path!r} is not a regular file (a device, pipe or socket)")
    if writing and opened.info.st_nlink > 1:
        raise ToolError(
            f"{path!r} has {opened.info.st_nlink} hard links: writing it would also change "
            "the same file under its other names, which may be outside the workspace; it is "
            "not changed")


def _binary(path: str, size: int) -> ToolError:
    return ToolError(f"{path!r} is a binary file ({size} bytes), not UTF-8 text; the file "
                     "tools read and edit text files only")


def _text(path: str, data: bytes, size: int) -> str:
    if b"\0" in data:
        raise _binary(path, size)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _binary(path, size) from None


def _whole(path: str, opened: Opened, cap: int, limit: str) -> bytes:
    """The file's bytes from where it is read; a `ToolError` when they pass ``cap`` (it grew
    while being read), ``limit`` naming the cap."""
    data = bytearray()
    while chunk := os.read(opened.fd, CHUNK):
        data += chunk
        if len(data) > cap:
            raise ToolError(f"{path!r} grew past {limit.format(cap=cap)} while being read")
    return bytes(data)


def _media(path: str, opened: Opened, media_type: str, cap: int) -> list[str | MediaPart]:
    """The whole file as a media part after a line naming it; a `ToolError` over ``cap``."""
    size = opened.info.st_size
    what = "a PDF" if media_type == "application/pdf" else f"an image ({media_type})"
    if size > cap:
        raise ToolError(f"{path!r} is {what} of {size} bytes, over the {cap}-byte cap on media "
                        "read_file returns; it was not read (make a smaller copy with "
                        "run_command, or raise the cap)")
    data = _whole(path, opened, cap, "the {cap}-byte cap on media")
    name = PurePosixPath(path).name
    build = Document if media_type == "application/pdf" else Image
    return [f"{path}: {what}, {len(data)} bytes",
            build.from_bytes(data, media_type, name=name)]


def read_file(ws: Workspace, path: str, offset: int = 1, limit: int = MAX_READ_LINES, *,
              max_media_bytes: int = MAX_MEDIA_BYTES) -> str | list[str | MediaPart]:
    """The numbered lines of a text file (a window of them); an image or a PDF, known by its
    first bytes, as a line naming it and its media part, up to ``max_media_bytes``."""
    if offset < 1:
        raise ToolError(f"offset must be 1 or more (the first line is 1), got {offset}")
    limit = max(1, limit)
    with ws.open(path, _READ) as opened:
        _regular(path, opened)
        size = opened.info.st_size
        media_type = sniff_media_type(os.pread(opened.fd, 16, 0))
        if media_type is not None and media_type in MEDIA_READ:
            return _media(path, opened, media_type, max_media_bytes)
        lines: list[str] = []
        kept = 0
        number = 1  # the line the next byte belongs to
        line = bytearray()
        line_total = 0
        stopped = None  # why the window ended early
        first = True
        while stopped is None:
            chunk = os.read(opened.fd, CHUNK)
            if first and b"\0" in chunk[:8192]:
                raise _binary(path, size)
            first = False
            if not chunk:
                break
            start = 0
            while start < len(chunk) and stopped is None:
                end = chunk.find(b"\n", start)
                piece = chunk[start:] if end < 0 else chunk[start:end]
                if number >= offset:
                    room = MAX_LINE_BYTES - len(line)
                    if room > 0:
                        line += piece[:room]
                    line_total += len(piece)
                if end < 0:
                    break
                start = end + 1
                if number >= offset:
                    lines.append(_line(path, line, line_total, size))
                    kept += len(line)
                    line, line_total = bytearray(), 0
                    if len(lines) >= limit:
                        stopped = "limit"
                    elif kept >= MAX_READ_BYTES:
                        stopped = "bytes"
                number += 1
            if stopped is not None:
                rest = chunk[start:]
        if stopped is None and line_total:
            lines.append(_line(path, line, line_total, size))
            number += 1
        if not lines:
            if number == 1 and not line_total:
                return "(empty file)"
            raise ToolError(f"offset {offset} is past the end of {path!r}, which has "
                            f"{number - 1} line(s)")
        width = len(str(offset + len(lines) - 1))
        body = "\n".join(f"{n:>{width}}\t{text}" for n, text in enumerate(lines, offset))
        if stopped is not None:
            body += _more(opened, rest, offset + len(lines), size, stopped)
        return body


def _line(path: str, data: bytearray, total: int, size: int) -> str:
    if b"\0" in data:
        raise _binary(path, size)
    if total <= len(data):
        try:
            return data.decode("utf-8").rstrip("\r")
        except UnicodeDecodeError:
            raise _binary(path, size) from None
    text = bytes(data).decode("utf-8", "ignore")
    return f"{text}[... line cut: {total - len(data)} more bytes ...]"


def _more(opened: Opened, rest: bytes, next_line: int, size: int, why: str) -> str:
    """The note after a window: how many lines follow (counted if the file is small)."""
    if size <= COUNT_LINES_UP_TO:
        count = rest.count(b"\n")
        tail = rest
        while chunk := os.read(opened.fd, CHUNK):
            count += chunk.count(b"\n")
            tail = chunk
        if tail and not tail.endswith(b"\n"):
            count += 1
        if count == 0:
            return ""
        what = f"{count} more line(s)"
    else:
        what = f"more lines follow (the file is {size} bytes)"
    if why == "bytes":
        what += f"; this window stopped at {MAX_READ_BYTES} bytes"
    return f"\n... {what}; read on with offset={next_line}"


def list_files(ws: Workspace, path: str = ".") -> str:
    with ws.open(path, os.O_RDONLY | os.O_DIRECTORY) as opened:
        found: list[str] = []
        prefix = "" if opened.rel == "." else opened.rel + "/"
        full = _walk(opened.fd, prefix, found)
    listing = "\n".join(found) if found else "(no files)"
    return listing + (f"\n... stopped at {MAX_LIST} files; list a subfolder" if full else "")


def _walk(dir_fd: int, prefix: str, found: list[str]) -> bool:
    """Add the files under ``dir_fd`` to ``found``, sorted; True when the list is full."""
    with os.scandir(dir_fd) as entries:
        items = sorted((e.name, e.is_dir(follow_symlinks=False)) for e in entries)
    for name, is_dir in sorted(items, key=lambda item: (item[1], item[0])):
        if is_dir:
            if name in SKIP_DIRS:
                continue
            try:
                fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
            except OSError:
                continue  # gone or replaced since it was listed
            try:
                if _walk(fd, f"{prefix}{name}/", found):
                    return True
            finally:
                os.close(fd)
        else:
            found.append(prefix + name)
            if len(found) >= MAX_LIST:
                return True
    return False


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _utf8(text: str, what: str) -> bytes:
    """``text`` as UTF-8 bytes; a lone surrogate (no character, so no UTF-8: a caller's own
    string, never JSON read by toolwire) is a tool error naming where it is."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolError(f"{what} holds a lone surrogate ({text[exc.start]!r} at character "
                        f"{exc.start}), which is no character and cannot be written as UTF-8; "
                        "send the text without it") from None


SHOWN_LINES = 10
"""How many lines holding the old text an edit_file error names at most."""


def _where(text: str, old: str) -> str:
    """``lines 3, 9, 40`` for the lines where ``old`` occurs (each once, at most
    `SHOWN_LINES` of them, then ``and more``), found in one pass over ``text``."""
    lines: list[int] = []
    line, seen, start = 1, 0, text.find(old)
    while start >= 0 and len(lines) <= SHOWN_LINES:
        line += text.count("\n", seen, start)
        seen = start
        if not lines or lines[-1] != line:
            lines.append(line)
        start = text.find(old, start + 1)
    shown = ", ".join(map(str, lines[:SHOWN_LINES]))
    if len(lines) > SHOWN_LINES:
        return f"lines {shown} and more"
    return f"line {shown}" if len(lines) == 1 else f"lines {shown}"


def edit_file(ws: Workspace, path: str, old: str, new: str) -> str:
    if not old:
        raise ToolError("old is empty: give the exact text to replace, copied from read_file")
    try:
        opened = ws.open(path, os.O_RDWR | os.O_NONBLOCK)
    except PathError as exc:
        if exc.errno == errno.ENOENT:
            raise ToolError(f"{path!r} does not exist; use write_file to create a file") from None
        raise
    with opened:
        _regular(path, opened, writing=True)
        size = opened.info.st_size
        if size > MAX_EDIT_BYTES:
            raise ToolError(f"{path!r} is {size} bytes, more than the {MAX_EDIT_BYTES} that "
                            "edit_file changes; use run_command for such files")
        text = _text(path, _whole(path, opened, MAX_EDIT_BYTES, "{cap} bytes"), size)
        count = text.count(old)
        if count == 0:
            raise ToolError(
                f"old text was found 0 times in {path!r}; copy it exactly from read_file "
                "(without the line numbers), including spaces and indentation"
            )
        if count > 1:
            raise ToolError(
                f"old text was found {count} times in {path!r}, at {_where(text, old)}; "
                "include more surrounding lines so that it occurs exactly once"
            )
        at = text.index(old)
    ws.replace(opened.rel, _utf8(text.replace(old, new, 1), "new"), opened.info.st_mode)
    return f"replaced 1 occurrence in {path} at line {_line_of(text, at)}"


def write_file(ws: Workspace, path: str, content: str) -> str:
    """A new file is written where it is made; an existing one is replaced in one step
    (`Workspace.replace`), so nothing reading it meets it cut short."""
    data = _utf8(content, "content")
    try:
        opened = ws.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_CREAT | os.O_EXCL,
                         create_dirs=True)
    except PathError as exc:
        if exc.errno not in (errno.EEXIST, errno.EISDIR):
            raise
        if exc.errno == errno.EISDIR:
            raise ToolError(f"{path!r} is a folder") from None
        with ws.open(path, os.O_WRONLY | os.O_NONBLOCK) as opened:  # writable, not changed
            _regular(path, opened, writing=True)
        ws.replace(opened.rel, data, opened.info.st_mode)
        return f"overwrote {path} ({len(data)} bytes)"
    with opened:
        _regular(path, opened, writing=True)
        write_all(opened.fd, data)
    return f"created {path} ({len(data)} bytes)"
