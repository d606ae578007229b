"""Landlock (Linux 5.13+): a process that restricts itself, and everything it then starts, to
the files and ports it was given, with no namespace and no privilege needed.

Owns `abi` (the version the kernel offers, or why none), `Ruleset` (read-only everywhere,
read-write beneath the folders given but for making device nodes, a few devices writable, and with
ABI 4 or later no TCP ``bind`` or ``connect`` unless allowed; with ABI 6 or later no signals
to, and no abstract UNIX sockets of, processes outside) and `Ruleset.enforce`, which the child
calls on itself between ``fork`` and ``exec``. The three Landlock system calls are made through
``ctypes`` by number (444, 445, 446: the same on x86_64 and aarch64, the only machines this
module uses them on).

Landlock only adds restrictions: reading stays open everywhere, a folder beneath a writable one
cannot be made read-only, UDP and UNIX sockets are not covered, and a process that leaves its
session outlives its command (there is no PID namespace). ``TOOLWIRE_LANDLOCK=off`` makes `abi`
report Landlock as unavailable.

Must not import codecs, the transport or the loop.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import platform
from collections.abc import Iterable
from pathlib import Path

_SYSCALLS = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446), "arm64": (444, 445, 446)}
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

# file system rights, by the ABI that brought them
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_ABI1_FS = (1 << 13) - 1  # EXECUTE .. MAKE_SYM
MAKE_CHAR, MAKE_BLOCK = 1 << 6, 1 << 11
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5
READ = EXECUTE | READ_FILE | READ_DIR
DEVICE_FILES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
"""Devices a command may write to (what its shell redirects to), where they exist."""
_NET_TCP = (1 << 0) | (1 << 1)  # BIND_TCP, CONNECT_TCP: ABI 4
_SCOPES = (1 << 0) | (1 << 1)  # ABSTRACT_UNIX_SOCKET, SIGNAL: ABI 6


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64),
                ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc: ctypes.CDLL | None
try:
    _libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    _libc.syscall.restype = ctypes.c_long
except OSError:  # no C library to reach: Landlock is reported unavailable
    _libc = None


def _calls() -> tuple[int, int, int] | None:
    return _SYSCALLS.get(platform.machine())


def abi() -> tuple[int | None, str | None]:
    """The Landlock ABI version this kernel offers, or None and why it cannot be used."""
    if os.environ.get("TOOLWIRE_LANDLOCK", "").lower() in ("off", "0", "no"):
        return None, "Landlock was turned off (TOOLWIRE_LANDLOCK=off)"
    if platform.system() != "Linux":
        return None, f"Landlock is a Linux feature, and this is {platform.system()}"
    calls = _calls()
    if calls is None or _libc is None:
        return None, f"toolwire uses Landlock only on x86_64 and aarch64, not {platform.machine()}"
    version = _libc.syscall(calls[0], None, ctypes.c_size_t(0),
                            ctypes.c_uint32(_CREATE_RULESET_VERSION))
    if version >= 1:
        return int(version), None
    return None, why_not(ctypes.get_errno())


def why_not(code: int) -> str:
    """Why Landlock is unavailable, from the error its version query gave."""
    if code == errno.ENOSYS:
        return f"this kernel ({platform.release()}) has no Landlock (it came with Linux 5.13)"
    if code == errno.EOPNOTSUPP:
        return ("Landlock is built into this kernel but not enabled (add landlock to the lsm= "
                "boot parameter)")
    if code == errno.EPERM:
        return "the Landlock system calls are forbidden here (a seccomp filter, as in containers)"
    return f"the Landlock version query failed: {os.strerror(code)}"


def _fs_rights(version: int) -> int:
    rights = _ABI1_FS
    if version >= 2:
        rights |= REFER
    if version >= 3:
        rights |= TRUNCATE
    if version >= 5:
        rights |= IOCTL_DEV  # granted on the DEVICE_FILES only: isatty() on /dev/null works
    return rights


class Ruleset:
    """A Landlock ruleset made in the parent, to be enforced by a child on itself (`enforce`).

    Reading and running are allowed everywhere; everything beneath ``writable`` folders; writing
    to the `DEVICE_FILES`; TCP only when ``network``. Close it when the child has started."""

    def __init__(self, version: int, writable: Iterable[str | os.PathLike[str]], *,
                 network: bool) -> None:
        calls = _calls()
        if calls is None or _libc is None:
            raise OSError(errno.ENOSYS, "Landlock is not available on this machine")
        self.version = version
        self._add_rule, self._restrict = calls[1], calls[2]
        fs = _fs_rights(version)
        attr = _RulesetAttr(fs, 0 if network or version < 4 else _NET_TCP,
                            _SCOPES if version >= 6 else 0)
        size = 8 if version < 4 else 16 if version < 6 else 24
        fd = _libc.syscall(calls[0], ctypes.byref(attr), ctypes.c_size_t(size),
                           ctypes.c_uint32(0))
        if fd < 0:
            code = ctypes.get_errno()
            raise OSError(code, f"Landlock refused the ruleset: {os.strerror(code)}")
        self.fd: int | None = int(fd)
        try:
            self._allow("/", READ)
            for folder in writable:  # never a device node: those are handled, not granted
                self._allow(folder, fs & ~(MAKE_CHAR | MAKE_BLOCK))
            file_rights = WRITE_FILE | READ_FILE | (fs & (TRUNCATE | IOCTL_DEV))
            for device in DEVICE_FILES:
                if Path(device).exists():
                    self._allow(device, file_rights)
        except BaseException:
            self.close()
            raise

    def _allow(self, path: str | os.PathLike[str], rights: int) -> None:
        assert _libc is not None and self.fd is not None
        target = os.open(path, os.O_PATH | os.O_CLOEXEC)
        try:
            rule = _PathBeneath(rights, target)
            if _libc.syscall(self._add_rule, ctypes.c_int(self.fd),
                             ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule),
                             ctypes.c_uint32(0)) < 0:
                code = ctypes.get_errno()
                raise OSError(code, f"Landlock refused a rule for {os.fspath(path)}: "
                                    f"{os.strerror(code)}")
        finally:
            os.close(target)

    def enforce(self) -> None:
        """In the child, before ``exec``: restrict this process, for good. Raises ``OSError``
        when it cannot (the child must then not run its command)."""
        assert _libc is not None and self.fd is not None
        if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "no_new_privs could not be set")
        if _libc.syscall(self._restrict, ctypes.c_int(self.fd), ctypes.c_uint32(0)) != 0:
            code = ctypes.get_errno()
            raise OSError(code, f"Landlock could not restrict the command: {os.strerror(code)}")

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


__all__ = ["DEVICE_FILES", "Ruleset", "abi", "why_not"]
