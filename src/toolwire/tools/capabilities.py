"""Dropping every capability in a child before it runs its command.

Owns `drop_all`: the bounding set emptied (where the process may: it needs ``CAP_SETPCAP``,
which root has), the ambient set cleared, and the effective, permitted and inheritable sets set
to nothing. With the bounding set empty and no_new_privs set, nothing the command runs can gain
a capability back, not a set-user-ID program, not a file with capabilities, not root's own
``exec``. For an ordinary user the bounding set stays as it was, but holds nothing the user's
processes have or can get.

Must not import codecs, the transport or the loop.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
from pathlib import Path

_PR_CAPBSET_DROP = 24
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_CAPABILITY_VERSION_3 = 0x2008_0522


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


_libc: ctypes.CDLL | None
try:
    _libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
except OSError:
    _libc = None


def last_cap() -> int:
    """The highest capability number this kernel knows."""
    try:
        return int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    except (OSError, ValueError):
        return 63


class Dropper:
    """Made in the parent (the structures allocated), called in the child before ``exec``."""

    def __init__(self) -> None:
        self.last = last_cap()
        self.header = _Header(_CAPABILITY_VERSION_3, 0)
        self.data = (_Data * 2)()

    def __call__(self) -> None:
        if _libc is None:
            raise OSError(errno.ENOSYS, "no C library to drop capabilities with")
        for cap in range(self.last + 1):
            if _libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
                if ctypes.get_errno() == errno.EPERM:
                    break  # no CAP_SETPCAP: an ordinary user, whose sets are empty anyway
                raise OSError(ctypes.get_errno(), f"capability {cap} could not be dropped")
        if _libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 and \
                ctypes.get_errno() != errno.EINVAL:  # EINVAL: a kernel before ambient sets
            raise OSError(ctypes.get_errno(), "the ambient capabilities could not be cleared")
        if _libc.capset(ctypes.byref(self.header), ctypes.byref(self.data)) != 0:
            raise OSError(ctypes.get_errno(), "the capabilities could not be dropped")


__all__ = ["Dropper", "last_cap"]
