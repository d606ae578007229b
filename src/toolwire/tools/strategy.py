"""The ways a command can run, each a small strategy with the same methods, and what they share.

Owns `Strategy` (the methods every way has: `Strategy.describe`, `Strategy.run`), `Bounds`
(a command's limits: a cgroup of its own where one can be made, else per-process limits, all
lowered to the hard limits already in force), `clean_env`, and two of the strategies:
`Landlocked` (the command restricts itself with Landlock, drops every capability and loads a
seccomp filter before it starts) and `Unconfined`. The third, `toolwire.tools.bwrap.Bubblewrap`,
lives with the rest of what bubblewrap needs. `toolwire.tools.sandbox.Sandbox` picks one.

Must not import codecs, the transport or the loop.
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from toolwire.secrets import is_secret_name
from toolwire.tools import capabilities, landlock, seccomp
from toolwire.tools.cgroup import Groups, join
from toolwire.tools.process import (
    Finished,
    Limits,
    Rlimits,
    clamped,
    run_bounded,
    shell_argv,
    user_process_limit,
)

Kind = Literal["bubblewrap", "landlock"] | None

ENV_ALLOW = ("PATH", "LANG", "LANGUAGE", "TERM", "TZ", "VIRTUAL_ENV", "PYTHONPATH",
             "CONDA_PREFIX", "SOURCE_DATE_EPOCH")
"""Variables a command gets from toolwire's environment (besides ``LC_*``), unless their name
looks like a secret."""


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


@dataclass(frozen=True, slots=True)
class Bound:
    """One command's limits: its resource limits, and its cgroup's ``cgroup.procs`` to join
    and how to empty it (None without a cgroup)."""

    rlimits: Rlimits
    procs: str | None
    kill: Callable[[], None] | None

    def confine(self, then: Callable[[], None] | None = None) -> Callable[[], None] | None:
        """What the child does before ``exec``: join the cgroup, then ``then``."""
        procs = self.procs
        if procs is None:
            return then

        def child() -> None:
            join(procs)
            if then is not None:
                then()

        return child


class Bounds:
    """The limits of a sandbox's commands (`Limits`), and whether they bound each command as
    a whole (a cgroup) or each of its processes."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.groups = Groups()

    @contextlib.contextmanager
    def command(self) -> Iterator[Bound]:
        group = self.groups.make(self.limits)
        try:
            nproc = None if group is not None else user_process_limit(self.limits.processes)
            yield Bound(clamped(self.limits, nproc=nproc),
                        None if group is None else group.procs,
                        None if group is None else group.kill)
        finally:
            if group is not None:
                group.close()

    def describe(self) -> str:
        if self.groups.base is not None:
            return (f"memory ({self.limits.memory_bytes >> 20} MiB) and processes "
                    f"({self.limits.processes}) are limited for each command as a whole, in a "
                    "cgroup of its own")
        procs = ("the number of processes is not limited (root is not held to a process "
                 "limit)" if os.getuid() == 0 else "the number of processes is limited "
                 f"through your user's process limit ({self.limits.processes} more)")
        return (f"memory is limited per process, not for a command as a whole, and {procs} "
                f"(no cgroup: {self.groups.why_not})")


class Strategy(Protocol):
    """One way to run commands."""

    kind: Kind

    def describe(self, network: bool) -> str:
        """One sentence on what confines commands."""
        ...

    def run(self, root: Path, command: str, timeout: float, *, network: bool,
            bounds: Bounds) -> Finished:
        """Run ``command`` in workspace ``root`` to its end."""
        ...


class Unconfined:
    """The command runs as the user, in its own session, with a cleaned environment (mode
    ``off``: the whole environment)."""

    kind: Kind = None

    def __init__(self, passed: Mapping[str, str], *, whole_env: bool, why: str) -> None:
        self.passed, self.whole_env, self.why = passed, whole_env, why

    def env(self) -> dict[str, str]:
        if self.whole_env:
            return {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **self.passed}
        return clean_env(self.passed)

    def describe(self, network: bool) -> str:
        env = "the whole environment" if self.whole_env else "a cleaned environment"
        return (f"commands are NOT confined ({self.why}): they run as you, can read and "
                f"write anywhere you can and reach the network, with {env}")

    def run(self, root: Path, command: str, timeout: float, *, network: bool,
            bounds: Bounds) -> Finished:
        with bounds.command() as bound:
            return run_bounded(shell_argv(command), cwd=str(root), env=self.env(),
                               timeout=timeout, limits=bounds.limits, rlimits=bound.rlimits,
                               confine=bound.confine(), on_parent_death=signal.SIGTERM,
                               kill=bound.kill)


class Landlocked:
    """The command restricts itself before it starts: Landlock (the workspace and a private
    temporary folder writable, no device nodes made, no TCP without network), every
    capability dropped, and the `toolwire.tools.seccomp` filter."""

    kind: Kind = "landlock"

    def __init__(self, abi: int, passed: Mapping[str, str], why_not_bwrap: str | None, *,
                 hardened: bool = True) -> None:
        """``hardened=False`` leaves out the dropped capabilities and the filter, only to
        measure what they cost (``bench/sandbox.py``)."""
        self.abi, self.passed, self.why_not_bwrap = abi, passed, why_not_bwrap
        self.hardened = hardened
        self.programs = {net: seccomp.program(network=net) for net in (False, True)}

    def describe(self, network: bool) -> str:
        net = ("the network is allowed" if network else "no TCP or MPTCP connections"
               if self.abi >= 4 else "the network is NOT restricted (Landlock "
               f"ABI {self.abi} has no network rules)")
        why = f" ({self.why_not_bwrap})" if self.why_not_bwrap else ""
        if self.abi < 6:
            net += (f", and signals and abstract UNIX sockets reach your other processes "
                    f"(ABI {self.abi} cannot scope them)")
        return (f"commands run under Landlock (ABI {self.abi}), weaker than the bubblewrap "
                f"sandbox{why}: the system is read-only, only the workspace and a private "
                f"temporary folder are writable, {net}, every capability is dropped and a "
                "seccomp filter refuses raw sockets, terminal injection and changes to other "
                "processes, and the environment is cleaned of keys and tokens; nothing is "
                "hidden from reading and a process that leaves its session can outlive its "
                "command")

    def run(self, root: Path, command: str, timeout: float, *, network: bool,
            bounds: Bounds) -> Finished:
        """The command in a child that restricts itself before ``exec``, with a private
        temporary folder (its ``TMPDIR`` and ``HOME``) removed afterwards."""
        with tempfile.TemporaryDirectory(prefix="toolwire-cmd-",
                                         ignore_cleanup_errors=True) as tmp:
            os.mkdir(f"{tmp}/home")
            rules = landlock.Ruleset(self.abi, [root, tmp], network=network)
            drop = capabilities.Dropper()
            loader = seccomp.Loader(self.programs[network])

            def restrict() -> None:
                rules.enforce()
                if self.hardened:
                    drop()
                    loader.install()  # last: it allows what the steps before needed

            try:
                with bounds.command() as bound:
                    return run_bounded(shell_argv(command), cwd=str(root),
                                       env=clean_env(self.passed, home=f"{tmp}/home", tmp=tmp),
                                       timeout=timeout, limits=bounds.limits,
                                       rlimits=bound.rlimits, confine=bound.confine(restrict),
                                       on_parent_death=signal.SIGTERM, kill=bound.kill)
            finally:
                rules.close()


__all__ = ["ENV_ALLOW", "Bound", "Bounds", "Kind", "Landlocked", "Strategy", "Unconfined",
           "clean_env"]
