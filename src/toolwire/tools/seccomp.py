"""A seccomp filter for commands: the system calls Landlock and dropped capabilities leave open.

Owns `program` (the filter as the kernel's classic BPF, built in the parent), `Loader` (a
child loads it on itself before ``exec``), `pipe_for_bwrap` (the same program handed to
bubblewrap's ``--add-seccomp-fd``) and `problem` (why no filter can be loaded here, or None;
``TOOLWIRE_SECCOMP=off`` makes it report one).
The filter is written out here rather than through libseccomp: it is some sixty instructions,
needs no shared library, and nothing has to be allocated in the child between ``fork`` and
``exec``. A call it refuses fails with ``EPERM`` (``ENOSYS`` for io_uring); everything else is
let through. Refused:

- ``ioctl`` ``TIOCSTI`` and ``TIOCLINUX``: typing into, or reading from, another terminal;
- ``socket`` of the packet family, and raw and packet sockets of IPv4 and IPv6;
- without network: ``socket`` of protocol ``IPPROTO_MPTCP`` (multipath TCP, which Landlock's
  TCP rules do not see), and ``sendto``, ``sendmsg`` and ``sendmmsg`` with ``MSG_FASTOPEN``
  (a TCP connection opened by its first write, which Landlock's connect rule does not see);
- ``prlimit64``, ``sched_setparam``, ``sched_setscheduler``, ``sched_setaffinity`` and
  ``sched_setattr`` for any process but the caller's own, and ``setpriority`` and
  ``ioprio_set`` for anything but the caller's own process or process group. A filter sees
  only the numbers a call is given, so "own" means the number 0 (as ``getrlimit``,
  ``setrlimit``, ``nice`` and ``ionice`` without ``-p`` pass): a process that names itself by
  its PID is refused too;
- ``sethostname`` and ``setdomainname``;
- ``mknod`` and ``mknodat`` of a character or block device (FIFOs, sockets and files stay
  allowed);
- io_uring (``io_uring_setup``, ``_enter`` and ``_register``), which would carry out sockets
  and sends without these system calls;
- every call of another ABI (32-bit x86 or arm, x32), whose numbers the filter does not check.

Must not import codecs, the transport or the loop.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import platform
import struct
import subprocess
from dataclasses import dataclass

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_RET_ALLOW = 0x7FFF_0000
_RET_ERRNO = 0x0005_0000
_X32_BIT = 0x4000_0000

_LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_AND = 0x54  # BPF_ALU | BPF_AND | BPF_K
_RET = 0x06  # BPF_RET | BPF_K

TIOCSTI, TIOCLINUX = 0x5412, 0x541C
AF_INET, AF_INET6, AF_PACKET = 2, 10, 17
SOCK_RAW, SOCK_PACKET = 3, 10
IPPROTO_MPTCP = 262
MSG_FASTOPEN = 0x2000_0000
PRIO_USER, IOPRIO_WHO_USER = 2, 3
S_IFMT, S_IFCHR, S_IFBLK = 0o170000, 0o020000, 0o060000


@dataclass(frozen=True, slots=True)
class _Arch:
    audit: int
    x32: bool
    calls: dict[str, int]


_SHARED = {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427}
ARCHES = {
    "x86_64": _Arch(0xC000_003E, True, {
        "ioctl": 16, "socket": 41, "sendto": 44, "sendmsg": 46, "sendmmsg": 307,
        "prlimit64": 302, "setpriority": 141, "ioprio_set": 251, "sched_setparam": 142,
        "sched_setscheduler": 144, "sched_setaffinity": 203, "sched_setattr": 314,
        "sethostname": 170, "setdomainname": 171, "mknod": 133, "mknodat": 259, **_SHARED}),
    "aarch64": _Arch(0xC000_00B7, False, {
        "ioctl": 29, "socket": 198, "sendto": 206, "sendmsg": 211, "sendmmsg": 269,
        "prlimit64": 261, "setpriority": 140, "ioprio_set": 30, "sched_setparam": 118,
        "sched_setscheduler": 119, "sched_setaffinity": 122, "sched_setattr": 274,
        "sethostname": 161, "setdomainname": 162, "mknodat": 33, **_SHARED}),
}
ARCHES["arm64"] = ARCHES["aarch64"]


def _arg(index: int) -> int:
    """Offset of the low 32 bits of argument ``index`` in ``struct seccomp_data``."""
    return 16 + 8 * index


class _Assembler:
    """Classic BPF with named jump targets, resolved when the program is finished."""

    def __init__(self) -> None:
        self.code: list[tuple[int, object, object, int]] = []
        self.labels: dict[str, int] = {}

    def op(self, code: int, k: int = 0, jt: object = 0, jf: object = 0) -> None:
        self.code.append((code, jt, jf, k))

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def bytes(self) -> bytes:
        out = bytearray()
        for at, (code, jt, jf, k) in enumerate(self.code):
            offsets = [self.labels[j] - at - 1 if isinstance(j, str) else int(j)  # type: ignore[call-overload]
                       for j in (jt, jf)]
            assert all(0 <= o < 256 for o in offsets), "a jump too far for classic BPF"
            out += struct.pack("<HBBI", code, offsets[0], offsets[1], k)
        return bytes(out)


def program(*, network: bool, machine: str | None = None) -> bytes:
    """The filter for this machine (``platform.machine()``), as ``struct sock_filter``s."""
    arch = ARCHES[machine or platform.machine()]
    calls = arch.calls
    a = _Assembler()
    a.op(_LD_ABS, 4)  # arch
    a.op(_JEQ, arch.audit, 0, "nosys")
    a.op(_LD_ABS, 0)  # nr
    if arch.x32:
        a.op(_JGE, _X32_BIT, "nosys", 0)
    rules: list[tuple[str, str]] = [("ioctl", "ioctl"), ("socket", "socket"),
                                    ("sethostname", "deny"), ("setdomainname", "deny"),
                                    ("prlimit64", "own0"), ("sched_setparam", "own0"),
                                    ("sched_setscheduler", "own0"),
                                    ("sched_setaffinity", "own0"), ("sched_setattr", "own0"),
                                    ("setpriority", "prio"), ("ioprio_set", "ioprio"),
                                    ("mknod", "mknod"), ("mknodat", "mknodat"),
                                    ("io_uring_setup", "nosys"), ("io_uring_enter", "nosys"),
                                    ("io_uring_register", "nosys")]
    if not network:
        rules += [("sendto", "fastopen3"), ("sendmsg", "fastopen2"), ("sendmmsg", "fastopen3")]
    for name, target in rules:
        if name in calls:
            a.op(_JEQ, calls[name], target, 0)
    a.op(_RET, _RET_ALLOW)
    a.label("ioctl")
    a.op(_LD_ABS, _arg(1))
    a.op(_JEQ, TIOCSTI, "deny", 0)
    a.op(_JEQ, TIOCLINUX, "deny", "allow")
    a.label("socket")
    if not network:
        a.op(_LD_ABS, _arg(2))
        a.op(_JEQ, IPPROTO_MPTCP, "deny", 0)
    a.op(_LD_ABS, _arg(0))
    a.op(_JEQ, AF_PACKET, "deny", 0)
    a.op(_JEQ, AF_INET, "socket_type", 0)
    a.op(_JEQ, AF_INET6, "socket_type", "allow")
    a.label("socket_type")
    a.op(_LD_ABS, _arg(1))
    a.op(_AND, 0xF)
    a.op(_JEQ, SOCK_RAW, "deny", 0)
    a.op(_JEQ, SOCK_PACKET, "deny", "allow")
    a.label("own0")
    a.op(_LD_ABS, _arg(0))
    a.op(_JEQ, 0, "allow", "deny")
    for label, everyone in (("prio", PRIO_USER), ("ioprio", IOPRIO_WHO_USER)):
        a.label(label)
        a.op(_LD_ABS, _arg(0))
        a.op(_JEQ, everyone, "deny", 0)
        a.op(_LD_ABS, _arg(1))
        a.op(_JEQ, 0, "allow", "deny")
    for label, mode_arg in (("mknod", 1), ("mknodat", 2)):
        a.label(label)
        a.op(_LD_ABS, _arg(mode_arg))
        a.op(_AND, S_IFMT)
        a.op(_JEQ, S_IFCHR, "deny", 0)
        a.op(_JEQ, S_IFBLK, "deny", "allow")
    for label, flags_arg in (("fastopen3", 3), ("fastopen2", 2)):
        a.label(label)
        a.op(_LD_ABS, _arg(flags_arg))
        a.op(_JSET, MSG_FASTOPEN, "deny", "allow")
    a.label("allow")
    a.op(_RET, _RET_ALLOW)
    a.label("deny")
    a.op(_RET, _RET_ERRNO | errno.EPERM)
    a.label("nosys")
    a.op(_RET, _RET_ERRNO | errno.ENOSYS)
    return a.bytes()


class _Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_libc: ctypes.CDLL | None
try:
    _libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
except OSError:
    _libc = None


class Loader:
    """A program made ready in the parent (its buffer and header allocated), for `install`
    in a child, which then only makes two ``prctl`` calls."""

    def __init__(self, code: bytes) -> None:
        self.buffer = ctypes.create_string_buffer(code, len(code))
        self.fprog = _Fprog(len(code) // 8, ctypes.addressof(self.buffer))

    def install(self) -> None:
        """In the child, before ``exec``: load the filter, for good (no_new_privs first)."""
        if _libc is None:
            raise OSError(errno.ENOSYS, "no C library to load a seccomp filter with")
        if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "no_new_privs could not be set")
        if _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(self.fprog),
                       0, 0) != 0:
            code = ctypes.get_errno()
            raise OSError(code, f"the seccomp filter could not be loaded: {os.strerror(code)}")


_problem: list[str | None] = []


def problem() -> str | None:
    """None when this machine can load the filter into a command, else why not (tried once,
    on ``/bin/sh``, which every command runs under)."""
    if os.environ.get("TOOLWIRE_SECCOMP", "").lower() in ("off", "0", "no"):
        return "the seccomp filter was turned off (TOOLWIRE_SECCOMP=off)"
    if not _problem:
        machine = platform.machine()
        if platform.system() != "Linux":
            why: str | None = f"seccomp is a Linux feature, and this is {platform.system()}"
        elif machine not in ARCHES:
            why = f"toolwire's seccomp filter is written for x86_64 and aarch64, not {machine}"
        else:
            loader = Loader(program(network=False))
            try:
                subprocess.run(["/bin/sh", "-c", ":"], check=True, timeout=30, close_fds=True,
                               stdin=subprocess.DEVNULL, preexec_fn=loader.install)
                why = None
            except (OSError, subprocess.SubprocessError) as exc:
                why = f"a seccomp filter cannot be loaded here ({exc})"
        _problem.append(why)
    return _problem[0]


def pipe_for_bwrap(code: bytes) -> int:
    """A pipe's read end holding ``code``, for ``bwrap --add-seccomp-fd`` (close it once
    bwrap has started)."""
    read, write = os.pipe()
    try:
        os.write(write, code)  # a few hundred bytes: the pipe's buffer holds them
    finally:
        os.close(write)
    return read


__all__ = ["ARCHES", "Loader", "pipe_for_bwrap", "problem", "program"]
