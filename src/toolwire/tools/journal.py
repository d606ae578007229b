"""What the built-in file tools found in the files they touched, and putting changes back.

Owns `FileJournal`. Before ``read_file``, ``edit_file`` or ``write_file`` touches a path, the
journal is told (`before`): the first time in its life it reports the SHA-256 of the file's
content (None: no file there) as a `toolwire.events.FileSeen` event, which the run log keeps, so
a replay can tell a file that was different at the start from a tool that now behaves
differently; and the first time in the current step (a chat turn: `mark` starts one) before a
change it keeps the file's bytes. `seal` notes what a step left in each file it changed, and
`undo` puts back what the changed files held when the last step began (a file that was not
there is removed) but leaves alone, and names, a file changed since the step left it (by a
person or another program) unless told to put it back too. What ``run_command`` did is not
known to it and is never reverted. Must not import codecs or the loop.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat

from toolwire.errors import ToolError
from toolwire.events import FileSeen, emit
from toolwire.records import write_all
from toolwire.tools.paths import Workspace

MAX_KEPT_BYTES = 10 << 20
"""A file larger than this is hashed but not kept, so a change to it cannot be undone."""
_ABSENT = b"\0absent"  # what a step keeps for a file that did not exist


class FileJournal:
    """The files of one workspace the file tools touched: first hashes, and per step the
    content before the step's first change of each."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.seen: dict[str, str | None] = {}
        self.steps: list[dict[str, bytes]] = [{}]
        self.left: list[dict[str, str | None] | None] = [None]  # per step, once sealed
        self.too_large: set[str] = set()

    def _read(self, path: str) -> tuple[str, str | None, bytes | None] | None:
        """The path as the workspace names it, the SHA-256 of its bytes and the bytes (None,
        None: no file; bytes None: too large to keep); None when the path is not a file the
        tool could read (the tool will say why)."""
        try:
            opened = self.ws.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except ToolError as exc:
            if getattr(exc, "errno", None) != errno.ENOENT:
                return None
            rel = self._absent(path)
            return None if rel is None else (rel, None, None)
        with opened:
            if not stat.S_ISREG(opened.info.st_mode):
                return None
            digest, kept = hashlib.sha256(), bytearray()
            while chunk := os.read(opened.fd, 1 << 16):
                digest.update(chunk)
                if len(kept) <= MAX_KEPT_BYTES:
                    kept += chunk
            data = bytes(kept) if len(kept) <= MAX_KEPT_BYTES else None
            return opened.rel, digest.hexdigest(), data

    def _absent(self, path: str) -> str | None:
        """The workspace's name for a file that is not there, its folders perhaps not either
        (``write_file`` makes them): the deepest folder there is, then the names after it."""
        try:
            names = self.ws.parts(path)
        except ToolError:
            return None
        for cut in range(len(names) - 1, -1, -1):
            rest = names[cut:]
            if ".." in rest:
                return None
            try:
                dir_fd, _, done = self.ws.walk("/".join([*names[:cut], "-"]))
            except (ToolError, OSError):
                continue
            os.close(dir_fd)
            return "/".join([*done, *rest])
        return None

    def before(self, path: str, *, changes: bool) -> None:
        """``path`` is about to be read (or changed, ``changes``) by a file tool."""
        found = self._read(path)
        if found is None:
            return
        rel, digest, data = found
        if rel not in self.seen:
            self.seen[rel] = digest
            emit(FileSeen(path=rel, sha256=digest))
        step = self.steps[-1]
        if changes and rel not in step:
            if digest is not None and data is None:
                self.too_large.add(rel)
            else:
                step[rel] = _ABSENT if digest is None else (data or b"")

    def mark(self) -> None:
        """A new step begins (a new chat turn): `undo` goes back to here."""
        self.steps.append({})
        self.left.append(None)

    def _digest(self, rel: str) -> str | None:
        found = self._read(rel)
        return "unreadable" if found is None else found[1]

    def seal(self) -> None:
        """The current step has ended: note what it left in each file it changed."""
        self.left[-1] = {rel: self._digest(rel) for rel in self.steps[-1]}

    def changed_since(self) -> list[str]:
        """The files the last step changed that differ now from what it left (none when the
        step was not sealed)."""
        left = self.left[-1] or {}
        return sorted(rel for rel, digest in left.items() if self._digest(rel) != digest)

    def undo(self, *, changed_too: bool = False) -> list[str]:
        """Put back what the files the last step changed held when it began, and forget the
        step; a file changed since the step left it is put back only with ``changed_too``.
        Returns the paths put back."""
        skipped = set() if changed_too else set(self.changed_since())
        step = {rel: data for rel, data in self.steps.pop().items() if rel not in skipped}
        self.left.pop()
        if not self.steps:
            self.steps.append({})
            self.left.append(None)
        for rel, data in step.items():
            if data == _ABSENT:
                with contextlib.suppress(ToolError, OSError):
                    dir_fd, name, _ = self.ws.walk(rel)
                    try:
                        os.unlink(name, dir_fd=dir_fd)
                    finally:
                        os.close(dir_fd)
                continue
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
            with self.ws.open(rel, flags, create_dirs=True) as opened:
                write_all(opened.fd, data)
        return sorted(step)


__all__ = ["MAX_KEPT_BYTES", "FileJournal"]
