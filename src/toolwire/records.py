"""Records toolwire keeps (run logs, cassettes, their media folders): where they live, how they
are signed, and how they are written and read back without following anything a command could
have planted.

Owns:

- `state_dir`: the user's toolwire state directory (``TOOLWIRE_STATE_DIR``, else
  ``$XDG_STATE_HOME/toolwire``, else ``~/.local/state/toolwire``), made with mode 0700. Run logs
  go to ``runs/`` in it by default (`runs_folder`); the record key lives in it.
- `record_key`: the per-user key that signs records, made on first use (32 random bytes, mode
  0600, written whole under a random name and linked into place, so two processes starting
  at once agree on one key).
- `write_new`, `replace_in` and `read_inside`: file operations relative to an open folder
  descriptor, never through a path a command could have turned into a link:
  ``O_CREAT | O_EXCL | O_NOFOLLOW`` for every new file (temporary ones get a random name), a
  folder opened with ``O_NOFOLLOW``, and reading only regular files, up to a size cap.

Imports only `errors`.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import stat
import sys
from collections.abc import Mapping
from pathlib import Path

from toolwire.errors import ConfigError, TranscriptError

STATE_VAR = "TOOLWIRE_STATE_DIR"
"""The environment variable that puts toolwire's state directory somewhere else."""

KEY_FILE = "record.key"
KEY_BYTES = 32

_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def state_dir(env: Mapping[str, str] | None = None, *, create: bool = True) -> Path:
    """The user's toolwire state directory, made (mode 0700) when missing and ``create``."""
    folder = _state_path(os.environ if env is None else env)
    if create and not os.path.isdir(folder):
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(
                f"toolwire's state directory {folder} cannot be made ({exc.strerror or exc}); "
                f"set {STATE_VAR} to a folder of yours") from None
    return folder


_STATE_PATHS: dict[tuple[str | None, ...], tuple[Path, str]] = {}
"""`_state_place`'s answers, by what they were made of."""

_SETTINGS = (STATE_VAR, "XDG_STATE_HOME", "HOME")
"""The variables the state directory's place is made of."""
_SETTINGS_AS_BYTES = tuple(map(os.fsencode, _SETTINGS))
_FS_ENCODING = sys.getfilesystemencoding()


def _settings(env: Mapping[str, str]) -> tuple[str | None, ...]:
    """The values of `_SETTINGS` in ``env`` (None: not set). The process environment is read
    from the bytes it keeps, as `os.environ` reads them, but without the `KeyError` that
    `os.environ.get` raises and catches for a name that is not set (most of these)."""
    data = getattr(env, "_data", None) if env is os.environ and os.name == "posix" else None
    if data is None:
        return tuple(map(env.get, _SETTINGS))
    return tuple(None if (value := data.get(name)) is None else
                 value.decode(_FS_ENCODING, "surrogateescape") for name in _SETTINGS_AS_BYTES)


def _state_place(env: Mapping[str, str]) -> tuple[Path, str]:
    """Where the state directory is for ``env`` (and the current folder, for a relative
    one), and the record key's path in it; worked out once for each such setting in a
    process."""
    settled = (*_settings(env), os.getcwd())
    found = _STATE_PATHS.get(settled)
    if found is not None:
        return found
    given, xdg, home = settled[:3]
    if given:
        folder = Path(given).expanduser()
    else:
        base = xdg or os.path.join(home or Path.home(), ".local", "state")
        folder = Path(base, "toolwire")
    folder = folder.absolute()
    found = _STATE_PATHS[settled] = (folder, os.path.join(folder, KEY_FILE))
    return found


def _state_path(env: Mapping[str, str]) -> Path:
    """Where the state directory is for ``env`` (see `_state_place`)."""
    return _state_place(env)[0]


def runs_folder(workdir: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> Path:
    """Where the run logs of the project in ``workdir`` go by default: a folder of the state
    directory named after the project's folder and a hash of its full path."""
    where = Path(workdir).resolve()
    digest = hashlib.sha256(os.fsencode(where)).hexdigest()[:12]
    name = re.sub(r"[^A-Za-z0-9._-]", "_", where.name)[:40] or "root"
    return state_dir(env) / "runs" / f"{name}-{digest}"


def _exposed_mark(folder: Path, env: Mapping[str, str] | None) -> Path:
    digest = hashlib.sha256(os.fsencode(folder)).hexdigest()
    return state_dir(env, create=False) / "exposed" / digest


def mark_exposed(workdir: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> None:
    """Note that commands ran in ``workdir`` where they could read the record key (under
    Landlock, whose reading is open everywhere, or unconfined): a record found beneath it is
    never taken for the user's own (`exposed`)."""
    mark = _exposed_mark(Path(workdir).resolve(), env)
    with contextlib.suppress(OSError, ConfigError):  # a state directory not this user's own
        if not mark.exists():
            state_dir(env)  # made with its own mode first
            mark.parent.mkdir(mode=0o700, exist_ok=True)
            mark.touch()


def exposed(path: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> Path | None:
    """The folder, if any, at or above ``path`` in which commands ran that could read the
    record key (`mark_exposed`)."""
    for folder in Path(path).resolve().parents:
        if _exposed_mark(folder, env).exists():
            return folder
    return None


def inside(path: str | os.PathLike[str], folder: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is ``folder`` or lies beneath it, links resolved."""
    path, folder = Path(path).resolve(), Path(folder).resolve()
    return path == folder or folder in path.parents


# ------------------------------------------------------------------ the key


def record_key(env: Mapping[str, str] | None = None) -> bytes:
    """This user's record key, made on first use (mode 0600 in the state directory).

    A key read once is kept for the process, by its file's path and what `os.stat` says of
    that file (device, inode, size, change times): every later call looks at the file again
    and reads it again only when it is no longer the one read."""
    where = _state_place(os.environ if env is None else env)[1]
    kept = _KEYS.get(where)
    if kept is not None:
        try:
            if _stamp(os.stat(where, follow_symlinks=False)) == kept[0]:
                return kept[1]
        except OSError:
            pass
    folder = state_dir(env)
    try:
        fd = os.open(folder, _OPEN_DIR)
    except OSError as exc:
        raise ConfigError(f"toolwire's state directory {folder} cannot be opened "
                          f"({exc.strerror or exc}); set {STATE_VAR} to a folder of yours"
                          ) from None
    try:
        try:  # the stamp before reading: a file replaced after it will not match it
            before = _stamp(os.stat(KEY_FILE, dir_fd=fd, follow_symlinks=False))
        except OSError:
            before = ()  # none yet: kept from the next call on
        key = _own_key(fd, folder)
        if before:
            _KEYS[where] = (before, key)
        return key
    finally:
        os.close(fd)


_KEYS: dict[str, tuple[tuple[int, ...], bytes]] = {}
"""The record keys read in this process: key file path -> (its `_stamp` then, the key)."""


def _stamp(info: os.stat_result) -> tuple[int, ...]:
    """What tells one key file from another at the same path (a regular file only)."""
    if not stat.S_ISREG(info.st_mode):
        return ()
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _own_key(fd: int, folder: Path) -> bytes:
    """The key in the state directory ``fd`` (``folder``), made there when missing."""
    try:
        return _read_key(fd, folder)
    except FileNotFoundError:
        pass
    key = secrets.token_bytes(KEY_BYTES)
    tmp = f".{KEY_FILE}.{secrets.token_hex(8)}.tmp"
    write_new(fd, tmp, key)
    try:  # a link appears whole: a second process either makes it or reads this one
        os.link(tmp, KEY_FILE, src_dir_fd=fd, dst_dir_fd=fd, follow_symlinks=False)
    except FileExistsError:
        return _read_key(fd, folder)
    finally:
        os.unlink(tmp, dir_fd=fd)
    return key


def _read_key(fd: int, folder: Path) -> bytes:
    try:
        key = read_in(fd, KEY_FILE, KEY_BYTES + 1)
    except FileNotFoundError:
        raise
    except (OSError, TranscriptError) as exc:
        where = folder / KEY_FILE
        raise ConfigError(f"the record key {where} cannot be read ({exc}); remove it to make a "
                          "new one (records signed with it will then read as not yours)"
                          ) from None
    if len(key) != KEY_BYTES:
        where = folder / KEY_FILE
        raise ConfigError(f"the record key {where} is not {KEY_BYTES} bytes long; remove it to "
                          "make a new one (records signed with it will then read as not yours)")
    return key


# ------------------------------------------------------------------ files, by descriptor


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` (a write may take only part of it)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def open_folder(folder: str | os.PathLike[str], *, create: bool = False) -> int:
    """A descriptor of ``folder`` opened without following a link in its last component
    (made, mode 0700, when missing and ``create``); an `OSError` when it is a link."""
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder, 0o700)
    return os.open(folder, _OPEN_DIR)


def write_new(dir_fd: int, name: str, data: bytes, mode: int = 0o600) -> None:
    """Create ``name`` in the folder ``dir_fd`` (never one that exists, never through a
    link) and write ``data`` to it."""
    fd = os.open(name, _NEW_FILE, mode, dir_fd=dir_fd)
    try:
        write_all(fd, data)
    finally:
        os.close(fd)


def replace_in(dir_fd: int, name: str, data: bytes, mode: int = 0o600) -> None:
    """Put ``data`` at ``name`` in the folder ``dir_fd`` in one step: written to a new file of
    a random name there (created exclusively, no link followed), then renamed over ``name``
    (a link at ``name`` is replaced, not followed)."""
    tmp = f".{name}.{secrets.token_hex(8)}.tmp"
    write_new(dir_fd, tmp, data, mode)
    try:
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except OSError:
        os.unlink(tmp, dir_fd=dir_fd)
        raise


def read_in(dir_fd: int, name: str, limit: int) -> bytes:
    """The bytes of the regular file ``name`` in the folder ``dir_fd``, at most ``limit``
    (a link is not followed, a device or FIFO not read: `TranscriptError`)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK,
                     dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise TranscriptError(f"{name} is a link, which is not followed") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise TranscriptError(f"{name} is not a regular file")
        if info.st_size > limit:
            raise TranscriptError(f"{name} is {info.st_size:,} bytes, over the "
                                  f"{limit:,}-byte limit")
        chunks, size = [], 0
        while chunk := os.read(fd, min(1 << 20, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise TranscriptError(f"{name} grew past the {limit:,}-byte limit")
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_inside(folder: str | os.PathLike[str], relative: str, limit: int) -> bytes:
    """The bytes of the regular file ``relative`` beneath ``folder``, each component opened
    without following a link, at most ``limit`` bytes. Raises `TranscriptError` saying why
    for a path that leaves the folder, a link, a device, a FIFO or a file over the limit, and
    `OSError` when it cannot be opened."""
    parts = [p for p in relative.split("/") if p not in ("", ".")]
    if not parts or ".." in parts or relative.startswith("/"):
        raise TranscriptError(f"{relative!r} is not a path inside {folder}")
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            inner = os.open(part, _OPEN_DIR, dir_fd=fd)
            os.close(fd)
            fd = inner
        return read_in(fd, parts[-1], limit)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):  # a link, or a file for a folder
            raise TranscriptError(f"{relative!r} leads through a link or a file, which is "
                                  "not followed") from None
        raise
    finally:
        os.close(fd)


__all__ = ["KEY_FILE", "STATE_VAR", "exposed", "inside", "mark_exposed", "open_folder",
           "read_in", "read_inside", "record_key", "replace_in", "runs_folder", "state_dir",
           "write_all", "write_new"]
