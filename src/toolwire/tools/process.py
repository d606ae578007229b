"""Running one child process to its end: resource limits, a deadline, and bounded output.

Owns `Limits` (CPU time, memory, file size and kept output), `Finished` and `run_bounded`. The
child's stdout and stderr share one pipe that is read in chunks into `BoundedOutput`, which keeps
the first and last bytes and counts the rest: a command that prints gigabytes costs no more
memory than one that prints a page. On the deadline the child's whole process group is killed
(a sandboxed command's group is its PID namespace, so nothing it started survives); when the
child ends on its own, what is left in its group is killed too. The child gets a parent-death
signal, so it ends when the thread that started it ends, even if toolwire is killed; and when the
program's main thread ends while a command runs in another thread (Ctrl-C in the middle of a
command, whose run was cancelled), the command is stopped within a quarter of a second rather
than waited for.

Must not import codecs, the transport or the loop.
"""

from __future__ import annotations

import concurrent.futures.thread  # noqa: F401  (its exit hook goes first: see _ending)
import contextlib
import ctypes
import ctypes.util
import os
import resource
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

PR_SET_PDEATHSIG = 1
_libc: ctypes.CDLL | None = None
try:
    _libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
except OSError:  # not a C library we can reach (unusual platforms): no parent-death signal
    _libc = None

CHUNK = 65_536
GRACE = 1.0
"""Seconds to drain output after the child ended, before what still holds its pipe is left."""


@dataclass(frozen=True, slots=True)
class Limits:
    """What one command may use: CPU seconds, memory, bytes per written file, processes, and
    how many bytes of its output are kept (three quarters from the start, the rest from the
    end). Memory bounds each process's address space, and the whole command's memory where it
    has a cgroup; processes bound the whole command in a cgroup, else (not for root) the user's
    processes through ``RLIMIT_NPROC``."""

    cpu_seconds: int = 600
    memory_bytes: int = 8 << 30
    file_bytes: int = 4 << 30
    output_bytes: int = 20_000
    processes: int = 512


@dataclass(frozen=True, slots=True)
class Finished:
    """How a command ended: its exit code (negative: killed by that signal), its kept output,
    and whether the deadline stopped it."""

    returncode: int
    output: str
    timed_out: bool


class BoundedOutput:
    """The first ``head`` and last ``tail`` bytes of a stream, and how many came in between."""

    def __init__(self, limit: int) -> None:
        self.head_size = limit * 3 // 4
        self.tail_size = limit - self.head_size
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_size - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk and self.tail_size:
            self.tail += chunk
            if len(self.tail) > 2 * self.tail_size:
                del self.tail[:-self.tail_size]

    def text(self) -> str:
        tail = bytes(self.tail[-self.tail_size:]) if self.tail_size else b""
        cut = self.total - len(self.head) - len(tail)
        head_text = self.head.decode("utf-8", "replace")
        if cut <= 0:
            return (head_text + tail.decode("utf-8", "replace")).rstrip("\n")
        note = f"\n[... {cut} of {self.total} bytes of output cut here ...]\n"
        return head_text + note + tail.decode("utf-8", "replace").rstrip("\n")


def parent_death_signal(sig: int = signal.SIGKILL) -> None:
    """In a child before exec: be sent ``sig`` when the thread that started us ends."""
    if _libc is not None:
        _libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)


REAPING_SHELL = 'trap "kill -KILL 0" TERM; /bin/sh -c "$1" & wait $!'
"""A shell that runs its first argument as a command and, sent SIGTERM (the parent death
signal `shell_argv` asks for), kills its whole process group: without a sandbox's PID
namespace, that is how the command and what it started end with the program, even when the
program is killed outright. (A command that leaves the group with ``setsid`` escapes it; the
sandbox's namespace catches those.)"""


def shell_argv(command: str) -> list[str]:
    """``/bin/sh`` running ``command`` under `REAPING_SHELL` (use with ``on_parent_death=
    signal.SIGTERM``)."""
    return ["/bin/sh", "-c", REAPING_SHELL, "toolwire-command", command]


Rlimits = tuple[tuple[int, tuple[int, int]], ...]


def clamped(limits: Limits, *, nproc: int | None = None) -> Rlimits:
    """The resource limits a command gets for ``limits`` (``nproc``: a process limit too),
    each lowered to the limits already in force (soft to soft, hard to hard), so that a command
    starts under whatever limits the user has (``ulimit -v`` in a CI container) instead of
    failing to start."""
    wanted = [(resource.RLIMIT_CORE, 0, 0),
              (resource.RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 5),
              (resource.RLIMIT_AS, limits.memory_bytes, limits.memory_bytes),
              (resource.RLIMIT_FSIZE, limits.file_bytes, limits.file_bytes)]
    if nproc is not None:
        wanted.append((resource.RLIMIT_NPROC, nproc, nproc))
    out = []
    for which, soft, hard in wanted:
        held_soft, held_hard = resource.getrlimit(which)
        if held_hard != resource.RLIM_INFINITY:
            hard = min(hard, held_hard)
        if held_soft != resource.RLIM_INFINITY:
            soft = min(soft, held_soft)
        out.append((which, (min(soft, hard), hard)))
    return tuple(out)


def user_process_limit(processes: int) -> int | None:
    """``RLIMIT_NPROC`` that lets a command start ``processes`` more processes (threads count)
    than its user runs now; None for root, whom the kernel does not hold to it."""
    uid = os.getuid()
    if uid == 0:
        return None
    running = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            with contextlib.suppress(OSError):
                task = os.stat(f"/proc/{pid}/task")  # its link count is 2 + its threads
                if task.st_uid == uid:
                    running += max(task.st_nlink - 2, 1)
    return running + processes


def _child_setup(rlimits: Rlimits, confine: Callable[[], None] | None = None,
                 on_parent_death: int = signal.SIGKILL) -> Callable[[], None]:
    def setup() -> None:
        parent_death_signal(on_parent_death)
        for which, pair in rlimits:
            resource.setrlimit(which, pair)
        if confine is not None:
            confine()  # last: what raises here keeps the command from running at all

    return setup


def _kill_group(proc: subprocess.Popen[bytes], kill: Callable[[], None] | None = None) -> None:
    if kill is not None:
        kill()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


_ending = threading.Event()
"""Set when the program starts to exit: a command still running in another thread (a tool
thread, whose run was cancelled by Ctrl-C) is then stopped instead of being waited for."""


def _program_ending() -> bool:
    return _ending.is_set()


# At exit Python waits for the threads still running a tool: toolwire's own tool threads in
# its final join of every thread, after all these hooks; the threads of a concurrent.futures
# pool (an approver's, asyncio.to_thread's) in that module's hook, and hooks run last-added
# first, so ours, added after it, lets their commands end before either wait.
_register_exit = getattr(threading, "_register_atexit", None)
if callable(_register_exit):
    _register_exit(_ending.set)


def run_bounded(argv: Sequence[str], *, cwd: str, env: Mapping[str, str], timeout: float,
                limits: Limits, rlimits: Rlimits | None = None,
                confine: Callable[[], None] | None = None,
                on_parent_death: int = signal.SIGKILL, pass_fds: Sequence[int] = (),
                kill: Callable[[], None] | None = None) -> Finished:
    """Run ``argv`` in a new session with ``rlimits`` (`clamped` ``limits`` by default); keep
    its output bounded to ``limits``; stop it at ``timeout`` seconds. ``confine`` runs in the
    child just before ``exec`` (joining a cgroup, a Landlock ruleset enforcing itself);
    ``on_parent_death`` is the signal it gets if this thread ends first (`shell_argv` wants
    SIGTERM); ``kill`` ends what the command started beyond its process group (its cgroup).
    Raises ``OSError`` when it cannot be started, or ``subprocess.SubprocessError`` when
    ``confine`` failed in the child."""
    proc = subprocess.Popen(
        list(argv), cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, start_new_session=True, close_fds=True, pass_fds=pass_fds,
        preexec_fn=_child_setup(clamped(limits) if rlimits is None else rlimits, confine,
                                on_parent_death),
    )
    assert proc.stdout is not None
    out = BoundedOutput(limits.output_bytes)
    deadline = time.monotonic() + timeout
    ended_at: float | None = None
    timed_out = False
    with selectors.DefaultSelector() as selector:
        fd = proc.stdout.fileno()
        selector.register(fd, selectors.EVENT_READ)
        try:
            while True:
                now = time.monotonic()
                if ended_at is None and proc.poll() is not None:
                    ended_at = now
                    _kill_group(proc, kill)  # whatever it left behind in its group
                if ended_at is not None and now - ended_at > GRACE:
                    break
                if ended_at is None and (now >= deadline or _program_ending()):
                    timed_out = now >= deadline
                    _kill_group(proc, kill)
                    ended_at = now
                    continue
                wait = min(deadline - now, 0.25) if ended_at is None else 0.05
                if not selector.select(max(wait, 0.0)):
                    continue
                chunk = os.read(fd, CHUNK)
                if not chunk:
                    break
                out.add(chunk)
        finally:
            _kill_group(proc, kill)
            proc.wait()
            proc.stdout.close()
    return Finished(proc.returncode, out.text(), timed_out)


__all__ = ["BoundedOutput", "Finished", "Limits", "Rlimits", "clamped", "parent_death_signal",
           "run_bounded"]
