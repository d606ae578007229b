"""A cgroup v2 per command: memory and process limits on the command as a whole.

Owns `Groups`: where toolwire can make cgroups (`Groups.base`) or why it cannot
(`Groups.why_not`), and `Groups.make`, one cgroup per command with ``memory.max``,
``memory.swap.max`` (0) and ``pids.max`` set, which the command's child joins before ``exec``
(`Group.procs`, written by the child) and which is emptied (``cgroup.kill``) and removed when
the command ends: nothing the command started outlives it, whatever session it is in.

A cgroup can be made beneath toolwire's own cgroup when that one is writable (root, or a
cgroup delegated to the user, as ``systemd-run --user --scope -p Delegate=yes`` makes) and
offers the ``memory`` and ``pids`` controllers. Processes may not sit in a cgroup that hands
controllers to its children, so when toolwire is alone in its cgroup it first moves itself into
a child of its own (``toolwire``); when it shares the cgroup with other processes, or the
hierarchy is cgroup v1, no cgroup is made and `why_not` says so.

Must not import codecs, the transport or the loop.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from pathlib import Path

from toolwire.tools.process import Limits

_NEEDED = ("memory", "pids")


def _own() -> tuple[Path | None, str | None]:
    """This process's cgroup v2 folder, or None and why there is none."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None, "there are no cgroups here (no /proc/self/cgroup)"
    rel = next((line[3:] for line in lines if line.startswith("0::")), None)
    if rel is None:
        return None, "there is no cgroup v2 hierarchy here"
    try:
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None, "the cgroup v2 hierarchy cannot be found (no /proc/self/mountinfo)"
    for line in mounts:
        left, _, right = line.partition(" - ")
        fields = left.split()
        if right.split()[:1] == ["cgroup2"] and len(fields) >= 5:
            root, point = fields[3], fields[4]
            if rel == root or rel.startswith(root.rstrip("/") + "/"):
                return Path(point, rel[len(root):].lstrip("/")), None
    return None, "the cgroup v2 hierarchy is not mounted here"


def _words(path: Path) -> set[str]:
    try:
        return set(path.read_text().split())
    except OSError:
        return set()


def _find() -> tuple[Path | None, str | None]:
    own, why = _own()
    if own is None:
        return None, why
    offered = _words(own / "cgroup.controllers")
    missing = [c for c in _NEEDED if c not in offered]
    if missing:
        return None, f"toolwire's cgroup ({own}) offers no {' and no '.join(missing)} controller"
    if not os.access(own, os.W_OK) or not os.access(own / "cgroup.subtree_control", os.W_OK):
        return None, f"toolwire's cgroup ({own}) is not writable by its user (not delegated)"
    if all(c in _words(own / "cgroup.subtree_control") for c in _NEEDED):
        return own, None
    procs = _words(own / "cgroup.procs")
    is_root = not (own / "cgroup.type").exists()
    if not is_root and procs - {str(os.getpid())}:
        return None, (f"toolwire shares its cgroup ({own}) with other processes, so none can "
                      "be made beneath it (run it in a cgroup of its own, as "
                      "systemd-run --user --scope -p Delegate=yes does)")
    try:
        if not is_root and procs:
            (own / "toolwire").mkdir(exist_ok=True)
            (own / "toolwire" / "cgroup.procs").write_text(str(os.getpid()))
        (own / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in _NEEDED))
    except OSError as exc:
        return None, f"no cgroup can be made beneath toolwire's ({own}): {exc.strerror}"
    return own, None


class Group:
    """One command's cgroup: join it from the child (`procs`), `close` it after."""

    def __init__(self, base: Path, limits: Limits) -> None:
        self.path = base / f"toolwire-cmd-{uuid.uuid4().hex[:12]}"
        self.path.mkdir()
        try:
            (self.path / "memory.max").write_text(str(limits.memory_bytes))
            if (self.path / "memory.swap.max").exists():
                (self.path / "memory.swap.max").write_text("0")
            (self.path / "pids.max").write_text(str(limits.processes))
        except OSError:
            self.close()
            raise
        self.procs = str(self.path / "cgroup.procs")

    def kill(self) -> None:
        """Kill every process in the cgroup."""
        try:
            (self.path / "cgroup.kill").write_text("1")
            return
        except OSError:  # before Linux 5.14: one by one
            pass
        for pid in _words(self.path / "cgroup.procs"):
            with contextlib.suppress(OSError, ValueError):
                os.kill(int(pid), signal.SIGKILL)

    def close(self) -> None:
        for _ in range(200):  # the killed processes leave it within moments
            self.kill()
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.01)


class Groups:
    """Where this machine lets toolwire make a cgroup per command (found once)."""

    _found: tuple[Path | None, str | None] | None = None

    def __init__(self) -> None:
        if Groups._found is None:
            Groups._found = _find()
        self.base, self.why_not = Groups._found

    def make(self, limits: Limits) -> Group | None:
        return None if self.base is None else Group(self.base, limits)


def join(procs: str) -> None:
    """In the child, before ``exec``: move this process into the cgroup whose ``cgroup.procs``
    is ``procs``."""
    fd = os.open(procs, os.O_WRONLY)
    try:
        os.write(fd, b"0")
    finally:
        os.close(fd)


__all__ = ["Group", "Groups", "join"]
