"""Paths inside a workspace, resolved without races: one directory descriptor at a time.

Owns `Workspace` and `Opened`. The workspace folder is opened once; every path a model gives is
walked from that descriptor one component at a time with ``O_NOFOLLOW``, so nothing another
process swaps in between a check and a use (a folder replaced by a symlink, say) can lead out:
there is no check separate from the use. A symlink met on the way is read and resolved by the
walk itself, and allowed only while it stays inside. ``..`` goes back up the walk, never above
the workspace. No component may be ``.toolwire`` (the run logs). Paths with a NUL, over-long
paths or names, loops of symlinks and the like are refused with a `ToolError` naming the path
and the reason.

Must not import codecs or the loop.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from toolwire.errors import ToolError
from toolwire.records import write_all

HIDDEN = ".toolwire"
MAX_PATH = 4096
MAX_NAME = 255
MAX_LINKS = 40
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(slots=True)
class Opened:
    """An open file of the workspace: its descriptor, its stat and its path from the root."""

    fd: int
    info: os.stat_result
    rel: str

    def close(self) -> None:
        os.close(self.fd)

    def __enter__(self) -> Opened:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class PathError(ToolError):
    """A path that cannot be opened; ``errno`` says why when the system said so."""

    def __init__(self, message: str, errno: int | None = None) -> None:
        super().__init__(message)
        self.errno = errno


def _refuse(path: str, why: str, code: int | None = None) -> PathError:
    return PathError(f"{path!r}: {why}", code)


class Workspace:
    """A folder the file tools may not leave, held open while the tools live."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise ToolError(f"workspace {self.root} is not a folder")
        self.fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)

    def __del__(self) -> None:
        fd = getattr(self, "fd", None)
        if fd is not None:
            os.close(fd)

    def parts(self, path: str) -> list[str]:
        """``path`` as names below the root, checked but not yet walked."""
        if not isinstance(path, str) or not path.strip():
            raise ToolError("path is empty: give a path relative to the workspace, like 'src/a.py'")
        if "\0" in path:
            raise _refuse(path, "the path holds a NUL character, which no file name can")
        if len(path.encode("utf-8", "surrogateescape")) > MAX_PATH:
            raise ToolError(f"the path is longer than {MAX_PATH} bytes ({path[:60]!r}...); "
                            "give a shorter one")
        if path.startswith("/"):
            root = self.root.as_posix().rstrip("/") + "/"
            if path.rstrip("/") == root.rstrip("/"):
                return []
            if not path.startswith(root):
                raise self._outside(path, "a path")
            path = path[len(root):]
        return [p for p in path.split("/") if p not in ("", ".")]

    def _outside(self, path: str, how: str) -> ToolError:
        return ToolError(f"{path!r} is {how} outside the workspace; only paths inside it are "
                         "allowed (use a path relative to the workspace, like 'src/a.py')")

    def walk(self, path: str, *, create_dirs: bool = False,
             asked: str | None = None) -> tuple[int, str, list[str]]:
        """Open the folder that holds ``path``'s last name: (its descriptor, the last name, the
        names from the root to it). The caller closes the descriptor. ``path`` naming the
        workspace itself gives the name ``.``. A refusal names ``asked``, the path as the
        caller was given it, when ``path`` is where a symlink of it led."""
        todo = self.parts(path)
        path = asked or path
        done: list[str] = []
        fds = [os.dup(self.fd)]
        links = 0
        try:
            while todo:
                name = todo.pop(0)
                if name == "..":
                    if not done:
                        raise self._outside(path, "a path")
                    done.pop()
                    os.close(fds.pop())
                    continue
                self._check_name(path, name)
                if not todo:  # the last name: the caller opens it
                    return fds.pop(), name, done
                try:
                    fd = os.open(name, _DIR_FLAGS, dir_fd=fds[-1])
                except OSError as exc:
                    if exc.errno == errno.ENOENT and create_dirs:
                        try:
                            os.mkdir(name, 0o777, dir_fd=fds[-1])
                        except FileExistsError:
                            pass  # made meanwhile: open it on the next round
                        except OSError as made:
                            raise self._os_error(path, "/".join([*done, name]), made) from None
                        todo.insert(0, name)
                        continue
                    links += 1
                    target = self._link(path, fds[-1], name, done, exc, links)
                    todo[:0], done, fds = self._follow(path, target, done, fds)
                    continue
                fds.append(fd)
                done.append(name)
            return fds.pop(), ".", done
        finally:
            for fd in fds:
                os.close(fd)

    def _check_name(self, path: str, name: str) -> None:
        if name == HIDDEN:
            raise _refuse(path, f"{HIDDEN}/ holds toolwire's own run logs; no tool may "
                                "read or change it")
        if len(name.encode("utf-8", "surrogateescape")) > MAX_NAME:
            raise _refuse(path, f"a name in it is longer than {MAX_NAME} bytes")

    def _link(self, path: str, dir_fd: int, name: str, done: list[str], failed: OSError,
              links: int) -> str:
        """The target of symlink ``name``, which an open refused with ``failed``; when it is
        no symlink, the error that ``failed`` means."""
        try:
            target = os.readlink(name, dir_fd=dir_fd)
        except OSError:
            raise self._os_error(path, "/".join([*done, name]), failed) from None
        if links > MAX_LINKS:
            raise _refuse(path, f"more than {MAX_LINKS} symlinks on the way: a loop of symlinks")
        return target

    def _follow(self, path: str, target: str, done: list[str],
                fds: list[int]) -> tuple[list[str], list[str], list[int]]:
        """Where a symlink in folder ``done`` leads, as names still to walk from a folder
        already open: from the root for an absolute target, else from ``done``."""
        if target.startswith("/"):
            root = self.root.as_posix().rstrip("/")
            if target.rstrip("/") != root and not target.startswith(root + "/"):
                raise self._outside(path, "a symlink that leads")
            for fd in fds[1:]:
                os.close(fd)
            return [p for p in target[len(root):].split("/") if p not in ("", ".")], [], fds[:1]
        return [p for p in target.split("/") if p not in ("", ".")], done, fds

    def _os_error(self, path: str, where: str, exc: OSError) -> PathError:
        reasons = {errno.ENOENT: f"{where!r} does not exist; use list_files to see what does",
                   errno.ENOTDIR: f"{where!r} is not a folder",
                   errno.EISDIR: f"{where!r} is a folder",
                   errno.EEXIST: f"{where!r} already exists",
                   errno.ENXIO: f"{where!r} is not a regular file (a device, pipe or socket)",
                   errno.ELOOP: f"{where!r} is a symlink that cannot be followed",
                   errno.ENAMETOOLONG: "the path or a name in it is too long",
                   errno.EACCES: f"permission denied for {where!r}"}
        return _refuse(path, reasons.get(exc.errno or 0, f"{exc.strerror} at {where!r}"),
                       exc.errno)

    def open(self, path: str, flags: int = os.O_RDONLY, *, create_dirs: bool = False,
             mode: int = 0o666) -> Opened:
        """Open ``path`` (a file or folder) inside the workspace with ``flags``, following
        only the symlinks that stay inside."""
        links = 0
        current = path
        while True:
            dir_fd, name, done = self.walk(current, create_dirs=create_dirs, asked=path)
            try:
                if name == ".":
                    fd = os.dup(dir_fd)
                else:
                    try:
                        fd = os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode,
                                     dir_fd=dir_fd)
                    except OSError as exc:
                        links += 1
                        target = self._link(path, dir_fd, name, done, exc, links)
                        current = self._joined(path, target, done)
                        continue
                    done = [*done, name]
            finally:
                os.close(dir_fd)
            return Opened(fd, os.fstat(fd), "/".join(done) or ".")

    def replace(self, rel: str, data: bytes, mode: int) -> None:
        """Put ``data`` in place of the existing file ``rel`` (a path from the root with no
        symlink left in it, as `Opened.rel` gives) in one step: written to a new file beside
        it, with ``mode``'s permissions, then renamed over it. A reader sees the old content
        or the new, never part of either, and a write cut short leaves the old file as it
        was."""
        dir_fd, name, done = self.walk(rel)
        temp = f".{name[:40]}.{secrets.token_hex(6)}.tmp"
        written = False
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                         | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
            written = True
            try:
                write_all(fd, data)
                os.fchmod(fd, stat.S_IMODE(mode))
            finally:
                os.close(fd)
            os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            written = False
        except OSError as exc:
            raise self._os_error(rel, "/".join([*done, name]), exc) from None
        finally:
            if written:  # the rename did not happen: the half-made file goes
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=dir_fd)
            os.close(dir_fd)

    def _joined(self, path: str, target: str, done: list[str]) -> str:
        """A symlink's target as a path for another walk from the root."""
        if target.startswith("/"):
            root = self.root.as_posix().rstrip("/")
            if target.rstrip("/") != root and not target.startswith(root + "/"):
                raise self._outside(path, "a symlink that leads")
            return target
        return "/".join([*done, target]) or "."

    def is_dir(self, opened: Opened) -> bool:
        return stat.S_ISDIR(opened.info.st_mode)

__all__ = ["HIDDEN", "MAX_LINKS", "MAX_NAME", "MAX_PATH", "Opened", "PathError", "Workspace"]
